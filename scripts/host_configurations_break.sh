#!/usr/bin/env bash
# Break check for tests/test_host_configurations.py's QNX-safety case: a patched tree whose direct-call code names a
# cudaTypedefs.h type (as an earlier state of the series did with PFN_cuCtxGetId_v12000) must fail to compile with
# cudaTypedefs.h shadowed, and compile without the shadow. Needs nvcc and the nvidia-cutlass wheel (or CUTLASS_ROOT).
# Usage: scripts/host_configurations_break.sh LOG
set -uo pipefail
log=${1:?usage: scripts/host_configurations_break.sh LOG}
repo=$(cd "$(dirname "$0")/.." && pwd)
root=${CUTLASS_ROOT:-$(python3 -c "import importlib.util, os; print(os.path.join(importlib.util.find_spec('cutlass_library').submodule_search_locations[0], 'source'))")}
work=$(mktemp -d)
version=$(sed -n 's/^#define CUTLASS_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$root/include/cutlass/version.h" | paste -sd.)
series=$repo/patch/series-v$version; [ -f "$series" ] || series=$repo/patch/series
mkdir -p "$work/tree/tools/util" "$work/shadow" && cp -r "$root/include" "$work/tree/" && cp -r "$root/tools/util/include" "$work/tree/tools/util/"
(cd "$work/tree" && git init -q && grep -v '^\s*\(#\|$\)' "$series" | while read -r p; do git apply --include='include/*' --include='tools/util/include/*' "$repo/patch/$p" || exit 1; done) || exit 1
python3 - "$work/tree/include/cutlass/cuda_host_adapter.hpp" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
old = "  if (cuCtxGetId(nullptr, &id) != CUDA_SUCCESS) {"
assert old in s
open(p, "w").write(s.replace(old, "  PFN_cuCtxGetId_v12000 get_id = &cuCtxGetId;\n  if (get_id(nullptr, &id) != CUDA_SUCCESS) {"))
PY
echo "// empty" > "$work/shadow/cudaTypedefs.h"
cc() { nvcc -std=c++17 -arch=sm_90a -c "$@" -I "$work/tree/include" -DCO_EXPECT_ATTRIBUTE_RECORD \
  -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL "$repo/tests/data/host_configurations.cu" -o "$work/out.o" > "$work/cc.log" 2>&1; }
{
  echo "# host_configurations_break.sh: $(date -u +%FT%TZ), $(nvcc --version | tail -1), CUTLASS $version + patch/$(basename "$series"), repository $(git -C "$repo" rev-parse --short=12 HEAD)"
  echo "# the break: current_context_id()'s direct call goes through PFN_cuCtxGetId_v12000 (a cudaTypedefs.h type)"
  cc; echo "without the shadow: rc $?"
  cc -I "$work/shadow"; rc=$?; echo "cudaTypedefs.h shadowed (the QNX safety case): rc $rc"; grep -m2 'error' "$work/cc.log"
  [ $rc -ne 0 ] && echo "## result: PASS (the check fails on the broken tree)" || echo "## result: FAIL (the check did not catch it)"
} | tee "$log"
rm -rf "$work"
