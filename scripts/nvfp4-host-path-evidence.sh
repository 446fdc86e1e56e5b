#!/usr/bin/env bash
# Issue 9's evidence on one Hopper GPU box, end to end: the NVFP4 host path on Hopper (measurement only,
# no tensor-core math) for all configs x epilogues, original and patched, against the nvidia-cutlass
# 4.2.0 wheel and a CUTLASS v4.3.5 checkout; the SM90 twin's capture cost; the doctor's reference
# reading; the GPU tests. Usage:
#   scripts/nvfp4-host-path-evidence.sh OUT_DIR [CUTLASS_435_DIR]
# Env: PREBUILT_420 / PREBUILT_435 = build dirs that already hold the co_doctor_* binaries and
# libco_trace.so (skips those builds); SKIP_PYTEST=1 skips the package build and the tests.
set -uo pipefail
OUT=${1:?usage: $0 OUT_DIR [CUTLASS_435_DIR]}
C435=${2:-}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"
PY=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc)}

stamp() {
  {
    echo "date: $(date -u +%FT%TZ)"
    # COMMIT overrides (a copied tree inside another checkout would report that checkout's commit).
    echo "commit: ${COMMIT:-$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (dirty)')}"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1 | sed 's/^/gpu, driver: /'
    nvcc --version | tail -2 | head -1 | sed 's/^/nvcc: /'
    for s in "$ROOT"/patch/series-v4.2.0 "$ROOT"/patch/series-v4.3.5; do
      echo "series $(basename "$s"): $(sha256sum "$s" | cut -c1-12); patches: $(cat $(sed 's|^|'"$ROOT"'/patch/|' "$s" | grep -v '^#') | sha256sum | cut -c1-12)"
    done
    echo "label: host path on Hopper, no tensor-core math (never a Blackwell number)"
  } > "$OUT/stamp.txt"
}

build_doctors() {  # build_doctors DIR CUTLASS_DIR EXPERIMENTS
  local dir=$1 cutlass=$2 exp=$3
  local nb; nb=$($PY -m nanobind --cmake_dir)
  cmake -S "$ROOT" -B "$dir" -G Ninja -DSKBUILD_PROJECT_NAME=cutlass_overhead -DCMAKE_BUILD_TYPE=Release \
    -DPython_EXECUTABLE="$(command -v $PY)" -Dnanobind_DIR="$nb" -DCO_CUDA_ARCHS=90a -DCO_BUILD_EXPERIMENTS=$exp \
    -DCO_NVFP4_ALL_CONFIGS=ON -DCO_NVFP4_HOST_PATH_ON_HOPPER=ON -DCO_BUILD_DOCTOR_BINARIES=ON \
    ${cutlass:+-DCUTLASS_DIR=$cutlass} >/dev/null || return 1
  local targets="co_doctor_nvfp4_hopper_original co_doctor_nvfp4_hopper_patched co_doctor_sm90_original co_doctor_sm90_patched"
  [ "$exp" = ON ] && targets="$targets co_doctor_sm90_O0 co_doctor_nvfp4_hopper_O0"
  cmake --build "$dir" -j "$JOBS" --target $targets
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
if [ -z "${PREBUILT_420:-}" ]; then build_doctors "$B420" "" ON 2>&1 | tail -5 > "$OUT/build-420.log"; fi
measure "$B420" v4.2.0 2>&1 | tee "$OUT/matrix-v4.2.0.log"
# The doctor's reference reading at the issue's shape and at a host-bound one.
"$B420/co_doctor_sm90_original" 128 4096 4096 --json "$OUT/doctor-sm90-128x4096x4096.json" 2>&1 | tee "$OUT/doctor-sm90.log"
"$B420/co_doctor_nvfp4_hopper_original" 128 4096 4096 --quick --json "$OUT/doctor-nvfp4-hopper-128x4096x4096.json" 2>&1 | tee "$OUT/doctor-nvfp4-hopper.log"

if [ -n "$C435" ] || [ -n "${PREBUILT_435:-}" ]; then
  B435=${PREBUILT_435:-$ROOT/build/evidence-435}
  if [ -z "${PREBUILT_435:-}" ]; then build_doctors "$B435" "$C435" OFF 2>&1 | tail -5 > "$OUT/build-435.log"; fi
  measure "$B435" v4.3.5 2>&1 | tee "$OUT/matrix-v4.3.5.log"
fi

if [ -z "${SKIP_PYTEST:-}" ]; then
  CO_CUDA_ARCHS=90a CO_NVFP4_HOST_PATH_ON_HOPPER=ON CO_BUILD_EXPERIMENTS=OFF \
    $PY -m pip install --no-build-isolation --no-deps -q "$ROOT" -Cbuild-dir="$ROOT/build/evidence-pkg" > "$OUT/pip.log" 2>&1
  (cd /tmp && $PY -m pytest -q -rs "$ROOT/tests/test_nvfp4_hopper.py" "$ROOT/tests/test_doctor.py" -p no:cacheprovider) 2>&1 | tee "$OUT/pytest.log"
fi
echo "done: $OUT"
