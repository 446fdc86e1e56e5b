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

# Each log starts with what it was measured on.
stamp=$(python3 - <<'PY'
import subprocess, cutlass_overhead as co, os
info = co.build_info()
smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                     capture_output=True, text=True).stdout.strip()
print(f"# GPU, driver: {smi} | nvcc {info['nvcc_version']} | CUTLASS {info['cutlass_version']} "
      f"({info['cutlass_origin']}) + {info['patch_series']} | {info['build_type']} | "
      f"git {os.environ.get('CO_GIT_COMMIT', 'unknown')}")
PY
)
echo "$stamp" > "$out/pytest.log"
CO_RESULTS_DIR="$out" python3 -m pytest tests/ -rs --cov=cutlass_overhead --cov-report=term 2>&1 | tee -a "$out/pytest.log" \
  || status=1
[ -f "$out/memcheck.log" ] && sed -i "1i $stamp" "$out/memcheck.log"
python3 -m cutlass_overhead --out "$out" 2>&1 | tee "$out/report.log" || status=1
exit $status
