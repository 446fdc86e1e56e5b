#!/usr/bin/env bash
# CUTLASS's own unit tests and the series' tests, built with CUTLASS's own CMake on CUTLASS with the series
# applied (git am), then run; and the break checks: each series test built against a tree that lacks the
# behaviour it names, where it must fail. Writes stamped logs to OUT_DIR.
#
# Usage: scripts/cutlass-suites.sh CUTLASS_GIT OUT_DIR
#   CUTLASS_GIT  a CUTLASS git repository (a clone, or a bundle .carry/cutlass-series.bundle cloned); its commit
#                BASE (default: HEAD) must be pristine: the script applies patch/$SERIES to a clone of it.
# Environment:
#   PHASE        build | run | all (default all). "build" needs no GPU (STUB_LIBCUDA=1 links against a generated
#                stub libcuda.so.1; the GPU machine's driver is loaded at run time) and packs the binaries into
#                OUT_DIR/cutlass-suites-bin.tar.xz; "run" unpacks that file where there is no build.
#   SERIES (default series: a series file under patch/, or PR folders under patch/, e.g. "pr1-portable-clusters" for
#   that PR alone, applied in the order given, or "none" for pristine BASE), BASE, LABEL (default main), JOBS, BUILD_TIMEOUT, RUN_TIMEOUT,
#   SHARDS (default: the number of cores; a suite runs as that many gtest shards at once, since CUTLASS's GEMM
#   testbeds check against a single-threaded host reference), CUDA_ARCHS (default 90a), GOOGLETEST_DIR
#   (default /usr/src/googletest, the distribution's source package), WORK_DIR (default a new temporary one),
#   SUITES (default: the upstream targets below; "" builds none), SERIES_TARGETS (default: the series' targets below; "" builds
#   CUTLASS's suites only), BREAKS=1 (run phase: build the break checks, all at once, each in its own tree, then run
#   them one after the other).
#   One commit at a time: COMMITS=N applies only the first N patches of SERIES (each commit builds and passes its own
#   tests); PARENT_CODE=1 then puts include/ back as the commit before the last had it, so the last commit's tests
#   meet the code without it and must fail (FILTER: its tests; a test file that no longer compiles fails too).
set -uo pipefail
src=${1:?usage: scripts/cutlass-suites.sh CUTLASS_GIT OUT_DIR}
out=${2:?usage: scripts/cutlass-suites.sh CUTLASS_GIT OUT_DIR}
mkdir -p "$out" && out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
SERIES=${SERIES:-series}
label=${LABEL:-main}
phase=${PHASE:-all}
work=${WORK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/cutlass-suites.XXXXXX")}
mkdir -p "$work" && work=$(cd "$work" && pwd)
jobs=${JOBS:-$(nproc)}
log=$out/cutlass-suites-$label-$phase.log

# The series' own test targets (registered by its CMakeLists.txt hunks) and CUTLASS's own suites that run the
# code the series changes: TMA descriptors (cute/hopper), cluster launch, an SM90 GEMM with clusters, stream-K,
# an SM90 implicit-GEMM conv (im2col TMA), util.
SERIES_TARGETS=${SERIES_TARGETS-"cutlass_test_unit_cluster_launch cutlass_test_unit_cute_hopper_tma_host_encode
  cutlass_test_unit_cute_hopper_tma_host_encode_entry_point_cache cutlass_test_unit_cute_hopper_tma_host_encode_direct_driver_call
  cutlass_test_unit_gemm_device_universal_adapter_kernel_attributes_sm90
  cutlass_test_unit_gemm_device_universal_adapter_kernel_attributes_sm90_direct_driver_call
  cutlass_test_unit_gemm_device_universal_adapter_device_reset_sm90
  cutlass_test_unit_gemm_device_universal_adapter_params_reuse_sm90"}
suites_given=${SUITES+yes}  # a run of a packed build runs what it holds unless SUITES names targets
SUITES=${SUITES-"cutlass_test_unit_cute_hopper_tma_load cutlass_test_unit_cute_hopper_tma_store
  cutlass_test_unit_cute_hopper_tma_mcast_load cutlass_test_unit_cute_hopper_bulk_load
  cutlass_test_unit_cute_hopper_bulk_store cutlass_test_unit_gemm_device_tensorop_cluster_multicast_sm90
  cutlass_test_unit_gemm_device_tensorop_sm90_stream_k cutlass_test_unit_conv1d_fprop_device_tensorop_sm90
  cutlass_test_unit_util"}

# Break checks: NAME|TARGET|GTEST_FILTER|FILE|PYTHON-REPLACE (old => new) -- each makes the named behaviour go
# away in an otherwise fully patched tree; the filtered tests must then fail (or fail to report PASSED).
BREAKS_LIST=(
  "launch-config-uninitialised|cutlass_test_unit_cluster_launch|ClusterLauncher.RejectedPreferredClusterLeavesNoIndeterminateAttribute|include/cutlass/cluster_launch.hpp|LaunchConfig cluster_launch_config{};=>LaunchConfig cluster_launch_config;"
  "cluster-attribute-every-launch|cutlass_test_unit_cluster_launch|ClusterLauncher.PortableClusterDoesNotAllowNonPortable|include/cutlass/cluster_launch.hpp|if (is_non_portable_cluster_size(cluster_dims)) {=>if (true) {"
  "fallback-cluster-every-launch|cutlass_test_unit_cluster_launch|ClusterLauncher.FallbackClusterAllowsNonPortableOnlyWhenNeeded|include/cutlass/cluster_launch.hpp|if (is_non_portable_cluster_size(preferred_cluster_dims) ||=>if (true ||"
  "fallback-cluster-ignored|cutlass_test_unit_cluster_launch|ClusterLauncher.FallbackClusterAllowsNonPortableOnlyWhenNeeded|include/cutlass/cluster_launch.hpp|is_non_portable_cluster_size(fallback_cluster_dims)) {=>false) {"
  "cluster-size-wraps|cutlass_test_unit_cluster_launch|ClusterLauncher.NonPortableClusterSizeRule|include/cutlass/cluster_launch.hpp|uint64_t(cluster.x) * cluster.y * cluster.z > uint64_t(MaxPortableClusterSize)=>int(cluster.x * cluster.y * cluster.z) > MaxPortableClusterSize"
  "occupancy-query-without-attribute|cutlass_test_unit_cluster_launch|ClusterLauncher.OccupancyQueryAllowsNonPortableCluster16|include/cutlass/kernel_hardware_info.h|if (ClusterLauncher::is_non_portable_cluster_size(cluster_dims) &&=>if (false &&"
  "driver-version-before-size|cutlass_test_unit_cute_hopper_tma_host_encode|CuTe_TmaHostEncode.Tma_Descriptor_Driver_Version_Only_For_Small_Tensors|include/cute/atom/copy_traits_sm90_tma.hpp|<base>"
  "lookup-every-call|cutlass_test_unit_cute_hopper_tma_host_encode_entry_point_cache|CuTe_TmaHostEncode.Tma_Encode_Driver_Entry_Point_Lookups|include/cutlass/cuda_host_adapter.hpp|void* pfn = slot.load(std::memory_order_acquire);=>void* pfn = nullptr;"
  "no-context-not-recorded|cutlass_test_unit_gemm_device_universal_adapter_kernel_attributes_sm90|*KernelAttributes_ThreadWithoutContext|include/cutlass/detail/kernel_attribute_once.hpp|        record = context != 0 ? record_of_current_device() : nullptr;=>        record = nullptr;"
  "no-context-skipped|cutlass_test_unit_gemm_device_universal_adapter_kernel_attributes_sm90|*KernelAttributes_ThreadWithoutContext|include/cutlass/detail/kernel_attribute_once.hpp|if (record != nullptr && record->load(std::memory_order_acquire) == context) {=>if (context == 0 || (record != nullptr && record->load(std::memory_order_acquire) == context)) {"
  "attribute-every-call|cutlass_test_unit_gemm_device_universal_adapter_kernel_attributes_sm90|*KernelAttributes_SetOncePerContext|include/cutlass/detail/kernel_attribute_once.hpp|record->load(std::memory_order_acquire) == context=>false"
  "record-ignores-context|cutlass_test_unit_gemm_device_universal_adapter_kernel_attributes_sm90|*KernelAttributes_SecondContext:*KernelAttributes_GreenContext:*KernelAttributes_TwoDevices*|include/cutlass/detail/kernel_attribute_once.hpp|record->load(std::memory_order_acquire) == context=>record->load(std::memory_order_acquire) != 0"
  "record-survives-reset|cutlass_test_unit_gemm_device_universal_adapter_device_reset_sm90|*KernelAttributes_After*|include/cutlass/detail/kernel_attribute_once.hpp|record->load(std::memory_order_acquire) == context=>record->load(std::memory_order_acquire) != 0"
  "record-ignores-device|cutlass_test_unit_gemm_device_universal_adapter_kernel_attributes_sm90|*KernelAttributes_TwoDevices*|include/cutlass/detail/kernel_attribute_once.hpp|return &context_of_device[device];=>return &context_of_device[0];"
  "no-params-reuse|cutlass_test_unit_gemm_device_universal_adapter_params_reuse_sm90|*ParamsReuse_SameArguments|include/cutlass/gemm/device/gemm_universal_adapter.h|return valid_ && workspace_ == workspace=>return false && workspace_ == workspace"
  "key-ignores-arguments|cutlass_test_unit_gemm_device_universal_adapter_params_reuse_sm90|*ParamsReuse_ChangedArguments|include/cutlass/gemm/device/gemm_universal_adapter.h|std::memcmp(args_, &args, sizeof(Arguments)) == 0=>true"
)

say() { echo "$*" | tee -a "$log"; }
stamp() {  # the package's stamp writer (REPO_COMMIT, else CO_GIT_COMMIT, else this checkout's commit)
  say "# cutlass-suites.sh ($phase)"
  CO_GIT_COMMIT=${REPO_COMMIT:-${CO_GIT_COMMIT:-}} "${PYTHON:-python3}" "$repo/python/cutlass_overhead/stamp.py" \
    --prefix "# " --repo "$repo" $(for s in $SERIES; do [ "$s" = none ] || printf -- '--series %s ' "$repo/patch/$s"; done) \
    --cutlass "$label at $(git ls-remote "$src" "${BASE:-HEAD}" 2>/dev/null | cut -c1-12 | head -1) (${BASE:-HEAD} of $src)" \
    --note "cmake: $(cmake --version | head -1)" 2>&1 | tee -a "$log"
  return "${PIPESTATUS[0]}"
}

series_patches() {  # the patches SERIES names, in order, one path a line (none: pristine BASE, for comparison)
  if [ "$SERIES" = none ]; then
    return 0
  elif [ -f "$repo/patch/$SERIES" ]; then
    grep -v '^\s*\(#\|$\)' "$repo/patch/$SERIES" | sed "s#^#$repo/patch/#"
  else
    for pr in $SERIES; do ls "$repo/patch/$pr/"*.patch || return 1; done
  fi
}

tree() {  # tree DIR: a clone of BASE with the series (its first COMMITS patches) applied as commits
  rm -rf "$1" && git clone -q "$src" "$1" && git -C "$1" checkout -q --detach "${BASE:-HEAD}" &&
    series_patches | head -n "${COMMITS:-999999}" | xargs -r git -C "$1" -c user.name=t -c user.email=t@localhost am -q &&
    if [ "${PARENT_CODE:-0}" = 1 ]; then git -C "$1" checkout -q HEAD~1 -- include; fi
}

configure() {  # configure SRC BUILD
  local extra=()
  if [ "${STUB_LIBCUDA:-0}" = 1 ]; then
    mkdir -p "$work/stub"
    # Every cu* name cuda.h declares, as a function: enough for the linker; never called.
    local cuda_h
    cuda_h=$(echo '#include <cuda.h>' | nvcc -x cu -E -M - 2>/dev/null | grep -o '[^ ]*/cuda\.h' | head -1)
    grep -ohE '\bcu[A-Z][A-Za-z0-9_]*\b' "$cuda_h" | sort -u |
      sed 's/.*/int &(void) { return 999; }/' > "$work/stub/libcuda.c"
    gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$work/stub/libcuda.so" "$work/stub/libcuda.c" || return 1
    extra+=(-DCUDA_DRIVER_LIBRARY="$work/stub/libcuda.so")
  fi
  cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCUTLASS_NVCC_ARCHS="${CUDA_ARCHS:-90a}" \
    -DCUTLASS_ENABLE_TESTS=ON -DCUTLASS_ENABLE_LIBRARY=OFF -DCUTLASS_ENABLE_PROFILER=OFF \
    -DCUTLASS_ENABLE_EXAMPLES=OFF -DCUTLASS_TEST_LEVEL=0 -DGOOGLETEST_DIR="${GOOGLETEST_DIR:-/usr/src/googletest}" \
    "${extra[@]}" > "$2.configure.log" 2>&1 || { tail -20 "$2.configure.log" | tee -a "$log"; return 1; }
}

binary() {  # binary BUILD TARGET: the built executable, if any
  find "$1/test" -type f -name "$2" -perm -u+x 2>/dev/null | head -1
}

run_binary() {  # run_binary BIN [FILTER]: runs it in SHARDS gtest shards at once, prints the summed summary
  local bin=$1 filter=${2:-*} shards=${SHARDS:-$(nproc)} text rc=0 i pids=() name
  name="$work/run-$(basename "$bin")-$(echo "$filter" | tr -c 'A-Za-z0-9_\n' '_')"
  for ((i = 0; i < shards; i++)); do
    (cd "$(dirname "$bin")" && GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i \
       timeout "${RUN_TIMEOUT:-300}" "$bin" --gtest_color=no --gtest_filter="$filter") > "$name.shard$i.log" 2>&1 &
    pids+=($!)
  done
  local slow=() r
  for i in "${!pids[@]}"; do
    wait "${pids[$i]}"; r=$?
    [ $r -ne 0 ] && rc=$r
    [ $r -eq 124 ] && slow+=("$i")
  done
  text=$(cat "$name".shard*.log)
  echo "$text" > "$name.log"
  # One line, summed over the shards, in gtest's words: "[  PASSED  ] N tests." and, where any, SKIPPED and FAILED.
  echo "rc $rc; $(echo "$text" | awk '/^\[  (PASSED|FAILED|SKIPPED) *\] [0-9]+ test/ { n[$2] += $4 }
    END { for (i = 1; i <= 3; i++) { k = substr("PASSED SKIPPEDFAILED ", 7 * i - 6, 7); sub(/ +$/, "", k)
                                    if (k in n) printf "%s[  %-7s ] %d tests.", (i > 1 ? " " : ""), k, n[k] } }')"
  echo "$text" | grep -E '^\[  FAILED  \] [A-Za-z]|^\[  SKIPPED \] [A-Za-z]|^\[ observed \]' | sed 's/^/    /' | head -20
  # A shard stopped by the time limit: the test it was running then (finished tests are counted above).
  for i in "${slow[@]}"; do
    echo "    shard $i of $shards stopped at ${RUN_TIMEOUT:-300} s while running" \
      "$(awk '/^\[ RUN/ { r = $4 } /^\[       OK/ { r = "" } END { print r }' "$name.shard$i.log")"
  done
  return $rc
}

spawn_breaks() {  # builds every break check's tree in the background (BREAK_JOBS each); sets pids
  pids=()
    for entry in "${BREAKS_LIST[@]}"; do
      IFS='|' read -r name target filter file edit <<< "$entry"
      (
        set -e
        git clone -q "$work/src" "$work/break-$name/src"
        if [ "$edit" = "<base>" ]; then
          git -C "$work/break-$name/src" checkout -q "$(git -C "$src" rev-parse "${BASE:-HEAD}" 2>/dev/null ||
            git ls-remote "$src" "${BASE:-HEAD}" | cut -f1)" -- "$file"
        else
          python3 - "$work/break-$name/src/$file" "$edit" <<'PY'
import sys
path, edit = sys.argv[1], sys.argv[2]
old, new = edit.split("=>")
text = open(path).read()
assert old in text, f"{old!r} not in {path}"
open(path, "w").write(text.replace(old, new))
PY
        fi
        configure "$work/break-$name/src" "$work/break-$name/build"
        ninja -C "$work/break-$name/build" -j "${BREAK_JOBS:-2}" "$target"
      ) > "$work/break-$name.log" 2>&1 &
      pids+=($!)
    done
}

status=0
pids=()
: > "$log"
stamp || { say "## result: FAIL (stamp)"; exit 1; }
[ -n "${COMMITS:-}" ] && say "# applied: the first $COMMITS patches$([ "${PARENT_CODE:-0}" = 1 ] &&
  echo ", then include/ as before the last (its tests, filter ${FILTER:-*}, must fail)")"
all_targets="$SERIES_TARGETS $SUITES"

if [ "$phase" = build ] || [ "$phase" = all ]; then
  say "## build: $(echo $all_targets | wc -w) targets, $jobs jobs"
  tree "$work/src" || { say "git am of patch/$SERIES failed"; exit 1; }
  say "git am: $(git -C "$work/src" log --oneline "${BASE:-HEAD}"..HEAD | wc -l) commits applied"
  # The break checks build alongside the main build; they run after it.
  [ "${BREAKS:-0}" = 1 ] && [ "$phase" = all ] && spawn_breaks
  configure "$work/src" "$work/build" || { say "## result: FAIL (configure)"; exit 1; }
  start=$(date +%s)
  # BUILD_TIMEOUT (s): stop there and run what was built; a target left unbuilt is reported as such.
  timeout "${BUILD_TIMEOUT:-0}" ninja -C "$work/build" -k 0 -j "$jobs" $all_targets > "$work/build.log" 2>&1 ||
    [ "${PARENT_CODE:-0}" = 1 ] || status=1  # without the commit's code a test file may not compile: the run says so
  grep -E '^FAILED|error:' "$work/build.log" | head -20 | tee -a "$log"
  for t in $all_targets; do
    b=$(binary "$work/build" "$t")
    say "$t: $([ -n "$b" ] && echo "built" || echo "NOT BUILT")"
  done
  say "build: $(( $(date +%s) - start )) s"
  if [ "$phase" = build ]; then
    (cd "$work/build" && find test -type f -perm -u+x -name 'cutlass_test_unit_*' | tar cJf "$out/cutlass-suites-bin.tar.xz" -T -)
    say "packed: $(du -h "$out/cutlass-suites-bin.tar.xz" | cut -f1)"
  fi
fi

if [ "$phase" = run ] || [ "$phase" = all ]; then
  if [ ! -d "$work/build/test" ] && [ -f "$out/cutlass-suites-bin.tar.xz" ]; then
    mkdir -p "$work/build" && tar xJf "$out/cutlass-suites-bin.tar.xz" -C "$work/build"
    if [ -z "$suites_given" ]; then
      all_targets="$SERIES_TARGETS $(tar tJf "$out/cutlass-suites-bin.tar.xz" | xargs -n1 basename | sort | paste -sd' ')"
    fi
  fi
  say "## run: ${SHARDS:-$(nproc)} gtest shards at once, ${RUN_TIMEOUT:-300} s per shard"
  for t in $all_targets; do
    b=$(binary "$work/build" "$t")
    if [ "${PARENT_CODE:-0}" = 1 ]; then  # the last commit's tests on the code before it: each must fail
      if [ -z "$b" ]; then say "$t: FAILED as it must (does not compile without the commit's code)"
      elif result=$(run_binary "$b" "${FILTER:-*}"); then say "$t: PASSED without the commit's code ($result)"; status=1
      else say "$t: FAILED as it must ($result)"
      fi
      continue
    fi
    [ -n "$b" ] || { say "$t: not built"; status=1; continue; }
    result=$(run_binary "$b") || status=1
    say "$t: $result"
  done
  if [ "${BREAKS:-0}" = 1 ]; then
    say "## break checks: each must FAIL"
    unverified=0
    for i in "${!BREAKS_LIST[@]}"; do
      IFS='|' read -r name target filter file edit <<< "${BREAKS_LIST[$i]}"
      if ! wait "${pids[$i]}"; then
        say "$name: did not build ($(tail -3 "$work/break-$name.log" | paste -sd' '))"; status=1; continue
      fi
      result=$(run_binary "$(binary "$work/break-$name/build" "$target")" "$filter")
      rc=$?
      if [ $rc -ne 0 ]; then say "$name: FAILED as it must ($result)"
      elif echo "$result" | grep -q 'SKIPPED'; then say "$name: NOT VERIFIED, the tests skipped here ($result)"; unverified=$((unverified + 1))
      else say "$name: PASSED although the behaviour is broken ($result)"; status=1
      fi
    done
  fi
fi
say "## result: $([ $status -eq 0 ] && echo PASS || echo FAIL)${unverified:+ ($unverified break check(s) not verified here: their tests skipped)}"
exit $status
