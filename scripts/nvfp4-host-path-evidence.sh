#!/usr/bin/env bash
# Issue 9's evidence on one Hopper GPU box, end to end: the NVFP4 host path on Hopper (measurement only,
# no tensor-core math) for all configs x epilogues, original and patched, against the nvidia-cutlass
# 4.2.0 wheel and a CUTLASS v4.3.5 checkout; the SM90 twin's capture cost; the doctor's reference
# reading; the GPU tests. Usage:
#   scripts/nvfp4-host-path-evidence.sh OUT_DIR [CUTLASS_435_DIR]
# Builds through pip with the host-path-on-hopper profile (pyproject.toml), v4.3.5 without the experiments.
# Env: PREBUILT_420 / PREBUILT_435 = build dirs that already hold the co_doctor_* binaries and
# libco_trace.so (skips those builds); SKIP_PYTEST=1 skips the package install and the tests.
set -uo pipefail
OUT=${1:?usage: $0 OUT_DIR [CUTLASS_435_DIR]}
C435=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
PY=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc)}

stamp() {  # the package's stamp writer; COMMIT overrides the commit (a copied tree inside another checkout
  # would report that checkout's)
  CO_GIT_COMMIT=${COMMIT:-${CO_GIT_COMMIT:-}} $PY "$ROOT/python/cutlass_overhead/stamp.py" --repo "$ROOT" \
    --series "$ROOT/patch/series-v4.2.0" --series "$ROOT/patch/series-v4.3.5" \
    --note "label: host path on Hopper, no tensor-core math (never a Blackwell number)" > "$OUT/stamp.txt"
}

build_doctors() {  # build_doctors DIR CUTLASS_DIR [PIP_ARGS...]: the host-path-on-hopper profile through pip
  # into the build directory DIR (it holds the co_doctor_* binaries); installs nothing
  local dir=$1 cutlass=$2 wheels
  shift 2
  wheels=$(mktemp -d)
  CO_PROFILE=host-path-on-hopper CUTLASS_DIR=$cutlass CMAKE_BUILD_PARALLEL_LEVEL=$JOBS \
    $PY -m pip wheel --no-build-isolation --no-deps -v --wheel-dir "$wheels" "$ROOT" -Cbuild-dir="$dir" "$@"
  local rc=$?
  rm -rf "$wheels"
  return $rc
}

measure() {  # measure BUILD_DIR TAG
  local d=$1 tag=$2
  for v in original patched; do
    "$d/co_doctor_nvfp4_hopper_$v" --matrix --n 4096 --k 4096 --json "$OUT/matrix-$tag-nvfp4-hopper-$v.json"
    "$d/co_doctor_sm90_$v" --matrix 128 4096 4096 --json "$OUT/matrix-$tag-sm90-$v.json"
  done
}

stamp
B420=${PREBUILT_420:-$ROOT/build/evidence-420}
if [ -z "${PREBUILT_420:-}" ]; then build_doctors "$B420" "" 2>&1 | tail -5 > "$OUT/build-420.log"; fi
measure "$B420" v4.2.0 2>&1 | tee "$OUT/matrix-v4.2.0.log"
# The doctor's reference reading at the issue's shape and at a host-bound one.
"$B420/co_doctor_sm90_original" 128 4096 4096 --json "$OUT/doctor-sm90-128x4096x4096.json" 2>&1 | tee "$OUT/doctor-sm90.log"
"$B420/co_doctor_nvfp4_hopper_original" 128 4096 4096 --quick --json "$OUT/doctor-nvfp4-hopper-128x4096x4096.json" 2>&1 | tee "$OUT/doctor-nvfp4-hopper.log"

if [ -n "$C435" ] || [ -n "${PREBUILT_435:-}" ]; then
  B435=${PREBUILT_435:-$ROOT/build/evidence-435}
  # v4.3.5 runs original and patched only: no -O0 and direct-call variants to compile.
  if [ -z "${PREBUILT_435:-}" ]; then
    build_doctors "$B435" "$C435" -Ccmake.define.CO_BUILD_EXPERIMENTS=OFF 2>&1 | tail -5 > "$OUT/build-435.log"
  fi
  measure "$B435" v4.3.5 2>&1 | tee "$OUT/matrix-v4.3.5.log"
fi

if [ -z "${SKIP_PYTEST:-}" ]; then
  # The tests run against the 4.2.0 build measured above: the same profile and build directory install it
  # without compiling anything again. With PREBUILT_420 the package that built it must be installed already.
  if [ -z "${PREBUILT_420:-}" ]; then
    CO_PROFILE=host-path-on-hopper $PY -m pip install --no-build-isolation --no-deps -q "$ROOT" -Cbuild-dir="$B420" \
      > "$OUT/pip.log" 2>&1
  fi
  (cd /tmp && $PY -m pytest -q -rs "$ROOT/tests/test_nvfp4_hopper.py" "$ROOT/tests/test_doctor.py" -p no:cacheprovider) 2>&1 | tee "$OUT/pytest.log"
fi
if [ -z "${SKIP_DOCTOR:-}" ]; then  # not SKIP_PYTEST: gpu-evidence.sh sets that and wants these readings
  # The same readings through the one pipeline (cutlass-overhead-doctor, the installed 4.2.0 build): what replaces
  # the C++ doctor's once they are compared and the pages read them (issue 17).
  (cd /tmp && $PY -m cutlass_overhead.doctor 128 4096 4096 --json "$OUT/pipeline-doctor-sm90-128x4096x4096.json") 2>&1 |
    tee "$OUT/pipeline-doctor-sm90.log"
  (cd /tmp && $PY -m cutlass_overhead.doctor 128 4096 4096 --quick --host-path-on-hopper \
    --json "$OUT/pipeline-doctor-nvfp4-hopper-128x4096x4096.json") 2>&1 | tee "$OUT/pipeline-doctor-nvfp4-hopper.log"
  # The issue's CUTLASS version, a full run (not --quick), with its -O0 suspect: the v4.3.5 package SITE_435 holds.
  if [ -d "${SITE_435:-}/cutlass_overhead" ]; then
    (cd /tmp && PYTHONPATH=$SITE_435 $PY -m cutlass_overhead.doctor 128 4096 4096 --host-path-on-hopper \
      --json "$OUT/pipeline-doctor-v4.3.5-nvfp4-hopper-128x4096x4096.json") 2>&1 |
      tee "$OUT/pipeline-doctor-v4.3.5-nvfp4-hopper.log"
  fi
fi
echo "done: $OUT"
