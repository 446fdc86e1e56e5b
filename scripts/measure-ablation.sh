#!/usr/bin/env bash
# The per-commit ablation, operands that change every call, one transformer layer and the in-situ attribute
# cost, on an H200: builds the Hopper twin against every prefix of the patch series (CO_BUILD_ABLATION=ON),
# runs their GPU tests, then the experiments alone (python -m cutlass_overhead.experiments).
# Usage: scripts/measure-ablation.sh OUT_DIR [--quick]
# Writes OUT_DIR/build.log, OUT_DIR/pytest.log, OUT_DIR/experiments.log and OUT_DIR/experiments.json.
# Offline machines: as scripts/gpu-evidence.sh (wheels installed first, no build isolation).
set -uo pipefail
out=${1:?usage: scripts/measure-ablation.sh OUT_DIR [--quick]}
shift
mkdir -p "$out"
export PYTHONUNBUFFERED=1
export CO_CUDA_ARCHS=${CO_CUDA_ARCHS:-90a} CO_BUILD_ABLATION=ON CO_BUILD_EXPERIMENTS=${CO_BUILD_EXPERIMENTS:-OFF}
export CO_GIT_COMMIT=${CO_GIT_COMMIT:-$(git rev-parse HEAD 2>/dev/null || echo unknown)}

status=0
{ time python3 -m pip install --no-build-isolation --no-deps --no-index -v -e . -Cbuild-dir=build/ablation ; } \
  > "$out/build.log" 2>&1 || { echo "build failed; see $out/build.log"; tail -40 "$out/build.log"; exit 1; }
grep "cutlass-overhead: ablation" "$out/build.log"
stamp="# git $CO_GIT_COMMIT | $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
echo "$stamp" > "$out/pytest.log"
python3 -m pytest tests/test_experiments.py tests/test_experiments_gpu.py -rs 2>&1 | tee -a "$out/pytest.log" || status=1
echo "$stamp" > "$out/experiments.log"
python3 -m cutlass_overhead.experiments --out "$out" "$@" 2>&1 | tee -a "$out/experiments.log" || status=1
exit $status
