#!/usr/bin/env bash
# Builds the series' test targets with CUTLASS's own CMake, to show that the CMakeLists.txt hunks of the
# series register them (scripts/cutlass-unit-tests.sh compiles the same sources with nvcc directly).
# Writes OUT_DIR/cutlass-cmake-targets-<label>.log, stamped like cutlass-unit-tests.sh. Needs a
# machine with the CUDA driver (CUTLASS's CMake links the tests against libcuda); RUN=1 also needs its GPU.
#
# Usage: scripts/cutlass-cmake-targets.sh CUTLASS_CHECKOUT OUT_DIR
#   CUTLASS_CHECKOUT  a whole CUTLASS git checkout (CUTLASS's CMake needs the full tree). Never modified:
#                     the series is applied with git am to a temporary worktree of its HEAD.
# Environment: SERIES (default series-v<version> if present, else series), LABEL, JOBS, GOOGLETEST_DIR
#   (default /usr/src/googletest: googletest from the distribution's package, never downloaded),
#   CUDA_ARCHS (default 90a),
#   TARGETS (default: every target the series adds or adds a test to), WORK_DIR, RUN=1 (also run each built
#   binary, on a machine with a GPU; the gtest summary lines go to the log), BUILD_TIMEOUT and RUN_TIMEOUT
#   (seconds: a build stopped there runs what it built; each binary's limit).
set -uo pipefail
src=${1:?usage: scripts/cutlass-cmake-targets.sh CUTLASS_CHECKOUT OUT_DIR}
out=${2:?usage: scripts/cutlass-cmake-targets.sh CUTLASS_CHECKOUT OUT_DIR}
src=$(cd "$src" && pwd) || exit 2
mkdir -p "$out" && out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/cutlass-series.sh"
version=$(cutlass_version "$src")
SERIES=${SERIES:-$(series_for "$version" "$repo/patch")}
label=${LABEL:-$version}
log=$out/cutlass-cmake-targets-$label.log
work=${WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/cutlass-cmake.XXXXXX")}
TARGETS=${TARGETS:-"cutlass_test_unit_cute_hopper_tma_host_encode cutlass_test_unit_cluster_launch cutlass_test_unit_util cutlass_test_unit_gemm_device_universal_adapter_host_sm90 cutlass_test_unit_gemm_device_universal_adapter_device_reset_sm90 cutlass_test_unit_gemm_device_universal_adapter_host_adapter_sm90"}
say() { echo "$*" | tee -a "$log"; }

: > "$log"
say "# cutlass-cmake-targets.sh on $(hostname): $(date -u +%Y-%m-%dT%H:%M:%SZ)"
say "# CUDA: $(nvcc --version | tail -1); $(cmake --version | head -1)"
say "# CUTLASS: $label (version.h $version) at $(git -C "$src" rev-parse --short=12 HEAD), from $src"
say "# series: patch/$SERIES; repository: ${REPO_COMMIT:-$(git -C "$repo" rev-parse --short=12 HEAD)}"
git -C "$src" worktree add -q --detach "$work/tree" HEAD || exit 1
trap 'git -C "$src" worktree remove --force "$work/tree" > /dev/null 2>&1' EXIT
grep -v '^\s*\(#\|$\)' "$repo/patch/$SERIES" | sed "s#^#$repo/patch/#" |
  xargs git -C "$work/tree" -c user.name=t -c user.email=t@localhost am -q || { say "git am failed"; exit 1; }
say ""
say "## configure"
cmake -S "$work/tree" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUTLASS_NVCC_ARCHS="${CUDA_ARCHS:-90a}" \
  -DCUTLASS_ENABLE_TESTS=ON -DCUTLASS_ENABLE_LIBRARY=OFF -DCUTLASS_ENABLE_PROFILER=OFF -DCUTLASS_ENABLE_EXAMPLES=OFF \
  -DCUTLASS_TEST_LEVEL=0 -DGOOGLETEST_DIR="${GOOGLETEST_DIR:-/usr/src/googletest}" \
  > "$work/configure.log" 2>&1 || { tail -30 "$work/configure.log" | tee -a "$log"; say "## result: FAIL (configure)"; exit 1; }
say "configured; targets the series registers:"
ninja -C "$work/build" -t targets all | sed -n 's/^\(cutlass_test_unit_[a-z0-9_]*\): phony$/\1/p' |
  grep -E 'universal_adapter|tma_host_encode' | sed 's/^/  /' | tee -a "$log"
cp "$work/build.log" "$out/cutlass-cmake-build-$label.log" 2>/dev/null
say ""
say "## build: $TARGETS"
start=$(date +%s)
status=0
# BUILD_TIMEOUT (s): stop the build there and run what was built (one short GPU call); -k 0 builds every target it can.
timeout "${BUILD_TIMEOUT:-0}" ninja -C "$work/build" -k 0 -j "${JOBS:-$(nproc)}" $TARGETS > "$work/build.log" 2>&1 || status=1
grep -E '^FAILED|error' "$work/build.log" | head -20 | tee -a "$log"
for t in $TARGETS; do
  bin=$(find "$work/build/test" -type f -name "$t" -perm -u+x | head -1)
  say "$t: $([ -n "$bin" ] && echo "built ($(du -h "$bin" | cut -f1))" || echo "NOT BUILT")"
  [ -n "$bin" ] || status=1
done
say "build: $(( $(date +%s) - start )) s"
if [ "${RUN:-0}" = 1 ]; then
  say ""
  say "## run: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | paste -sd';')"
  for t in $TARGETS; do
    bin=$(find "$work/build/test" -type f -name "$t" -perm -u+x | head -1)
    [ -n "$bin" ] || continue
    out_t=$( (cd "$(dirname "$bin")" && timeout "${RUN_TIMEOUT:-600}" "$bin" --gtest_color=no) 2>&1)
    rc=$?
    echo "$out_t" > "$work/run-$t.log"
    say "$t: rc $rc; $(echo "$out_t" | grep -E '^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ test' | paste -sd' ')"
    [ $rc -eq 0 ] || status=1
  done
fi
say "## result: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
exit $status
