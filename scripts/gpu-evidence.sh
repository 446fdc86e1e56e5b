#!/usr/bin/env bash
# Produces the GPU evidence committed under docs/results/<name>/: build log, pytest log (with the
# memcheck log), and the full report (results.json + plots). Usage: scripts/gpu-evidence.sh OUT_DIR
# Offline machines: install the wheels first (nvidia-cutlass, nvidia-cuda-cuobjdump) and keep
# nanobind + scikit-build-core in the environment; the build runs without build isolation.
set -uo pipefail
out=${1:?usage: scripts/gpu-evidence.sh OUT_DIR}
mkdir -p "$out"
export PYTHONUNBUFFERED=1
: "${CO_CUDA_ARCHS:=90a;100a}"   # 100a: the NVFP4 modules exist, so the non-Blackwell guard is tested
export CO_CUDA_ARCHS
export CO_GIT_COMMIT=${CO_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}

status=0
{ time python3 -m pip install --no-build-isolation --no-deps --no-index -v -e . -Cbuild-dir=build/gpu ; } \
  > "$out/build.log" 2>&1 || { echo "build failed; see $out/build.log"; tail -40 "$out/build.log"; exit 1; }
tail -3 "$out/build.log"

CO_RESULTS_DIR="$out" python3 -m pytest tests/ -rs --cov=cutlass_overhead --cov-report=term 2>&1 | tee "$out/pytest.log" \
  || status=1
python3 -m cutlass_overhead --out "$out" 2>&1 | tee "$out/report.log" || status=1
exit $status
