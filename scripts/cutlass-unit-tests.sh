#!/usr/bin/env bash
# Builds and runs CUTLASS unit tests against one CUTLASS tree with this repository's patch series
# applied: the series' own gtests and CUTLASS's test/unit/cute/hopper TMA tests. Then (unless
# BREAK_CHECKS=0) it builds the series' tests again against broken trees -- CUTLASS without the
# series, the series with one change left out or disabled -- and checks that the tests that name
# that change fail there. Writes OUT_DIR/cutlass-unit-tests-<label>.log, stamped with the GPU,
# driver, CUDA, CUTLASS, series (each patch with the sha256 of its diff) and repository commit.
#
# Usage: scripts/cutlass-unit-tests.sh CUTLASS_SRC OUT_DIR
#   CUTLASS_SRC  a CUTLASS checkout, or a copy holding at least include/, tools/util/include/ and
#                test/unit/{test_unit.cpp,common,cute/hopper,cluster_launch,util,gemm/device}
#                (only the CMakeLists.txt of util/ and gemm/device/ are needed). Never modified.
# Environment:
#   SERIES        series file in patch/ (default: series-v<CUTLASS version> if present, else series)
#   LABEL         name of the tree in the log (default: the CUTLASS version)
#   JOBS          parallel compiles (default: nproc)
#   BREAK_CHECKS  1 (default) or 0
#   CUTLASS_TMA_TESTS  1 (default): also build and run CUTLASS's own test/unit/cute/hopper TMA tests
#   PHASE         all (default), build (make the trees and binaries in WORK_DIR and stop) or run
#                 (run the binaries a build phase left in WORK_DIR, e.g. copied to a GPU machine)
#   WORK_DIR      where the trees and binaries go (default: a temporary directory, removed at the end
#                 unless PHASE=build or KEEP_WORK=1)
#   REPO_COMMIT   the repository commit to stamp (default: git rev-parse HEAD)
#   NVCC, CUDA_ARCH (sm_90a), GTEST_INCLUDE (if gtest/gtest.h is not on the default include path),
#   GTEST_LIB (/usr/lib/x86_64-linux-gnu), EXTRA_LDFLAGS (e.g. -L to a stub libcuda.so where the
#   build machine has no driver),
#   CURAND_INCLUDE (directory of curand_kernel.h, if the CUDA toolkit has none), EXTRA_NVCC_FLAGS,
#   STUB_LIBCUDA=1 (build machine without a driver: link against a generated stub libcuda.so.1)
# Stopping one compile (a signal) ends the whole parallel queue: xargs stops on it.
# Exit status: 0 when every test of the patched tree passed (skips allowed) and every expected
# failure of the break checks happened.
set -uo pipefail

src=${1:?usage: scripts/cutlass-unit-tests.sh CUTLASS_SRC OUT_DIR}
out=${2:?usage: scripts/cutlass-unit-tests.sh CUTLASS_SRC OUT_DIR}
src=$(cd "$src" && pwd) || exit 2
mkdir -p "$out" && out=$(cd "$out" && pwd)
repo=$(cd "$(dirname "$0")/.." && pwd)
patch_dir=$repo/patch

NVCC=${NVCC:-nvcc}
CUDA_ARCH=${CUDA_ARCH:-sm_90a}
JOBS=${JOBS:-$(nproc)}
BREAK_CHECKS=${BREAK_CHECKS:-1}
GTEST_INCLUDE=${GTEST_INCLUDE:-}
GTEST_LIB=${GTEST_LIB:-/usr/lib/x86_64-linux-gnu}

. "$repo/scripts/cutlass-series.sh"
version=$(cutlass_version "$src")
[ -n "$version" ] || { echo "no CUTLASS version in $src/include/cutlass/version.h" >&2; exit 2; }
SERIES=${SERIES:-$(series_for "$version" "$repo/patch")}
label=${LABEL:-$version}
log=$out/cutlass-unit-tests-$label.log
PHASE=${PHASE:-all}
if [ -n "${WORK_DIR:-}" ]; then
  mkdir -p "$WORK_DIR" && work=$(cd "$WORK_DIR" && pwd)
else
  work=$(mktemp -d "${TMPDIR:-/tmp}/cutlass-unit-tests.XXXXXX")
fi
mapfile -t patches < <(grep -v '^\s*\(#\|$\)' "$patch_dir/$SERIES")

say() { echo "$*" | tee -a "$log"; }

# sha256 (12 hex) of a patch from its first "diff --git" line on (as the package build stamps it)
diff_sha() {
  python3 -c 'import hashlib,sys; t=open(sys.argv[1],"rb").read(); i=t.find(b"\ndiff --git "); print(hashlib.sha256(t[i:] if i>=0 else t).hexdigest()[:12])' "$1"
}
subject() { sed -n 's/^Subject: \(\[PATCH[^]]*\] \)\{0,1\}//p' "$1" | head -1; }
# Whether a patch only touches test/
tests_only() { ! grep '^diff --git a/' "$1" | grep -qv '^diff --git a/test/'; }

#
# Stamp
#
stamp_machine() {
  local gpus
  gpus=$(nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader 2>/dev/null | paste -sd';')
  say "# $1 on $(hostname): $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  say "# GPU (index, name, driver): ${gpus:-none found}"
  say "# CUDA: $($NVCC --version | tail -1); the driver supports CUDA $(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: \([0-9.]*\).*/\1/p' | head -1)"
}
if [ "$PHASE" != run ]; then
  : > "$log"
  say "# cutlass-unit-tests.sh, PHASE=$PHASE"
  stamp_machine build
  cutlass_rev=""
  [ -d "$src/.git" ] || [ -f "$src/.git" ] && cutlass_rev=" git $(git -C "$src" describe --tags --always --dirty 2>/dev/null)"
  say "# CUTLASS: $label (version.h $version)$cutlass_rev, from $src"
  say "# series: patch/$SERIES"
  for p in "${patches[@]}"; do say "#   $p  diff sha256 $(diff_sha "$patch_dir/$p")"; done
  repo_rev=${REPO_COMMIT:-$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)}
  [ -z "${REPO_COMMIT:-}" ] && [ -n "$(git -C "$repo" status --porcelain -- patch scripts 2>/dev/null)" ] && repo_rev="$repo_rev (patch/ or scripts/ modified)"
  say "# repository: $repo_rev"
  say "# nvcc flags: -std=c++17 -arch=$CUDA_ARCH -O3 -DNDEBUG ${EXTRA_NVCC_FLAGS:-}; jobs $JOBS"
else
  say ""
  stamp_machine run
fi

#
# Trees: a git copy of the needed part of CUTLASS, the series applied with git am.
#
subset=(include tools/util/include test/unit/test_unit.cpp test/unit/common test/unit/cute/hopper
        test/unit/cluster_launch test/unit/util/CMakeLists.txt test/unit/gemm/device/CMakeLists.txt)

# make_tree NAME MODE [ARG]: MODE is series | tests-only | without (ARG: regex on patch subjects)
make_tree() {
  local name=$1 mode=$2 arg=${3:-} dir=$work/$1 p s
  mkdir -p "$dir"
  for s in "${subset[@]}"; do
    [ -e "$src/$s" ] || continue
    mkdir -p "$dir/$(dirname "$s")" && cp -r "$src/$s" "$dir/$(dirname "$s")/"
  done
  git -C "$dir" init -q && git -C "$dir" add -A &&
    git -C "$dir" -c user.name=base -c user.email=base@localhost commit -q -m base || return 1
  for p in "${patches[@]}"; do
    s=$(subject "$patch_dir/$p")
    case $mode in
      tests-only) tests_only "$patch_dir/$p" || continue ;;
      without) [[ $s =~ $arg ]] && continue ;;
    esac
    git -C "$dir" -c user.name=t -c user.email=t@localhost am -q --committer-date-is-author-date "$patch_dir/$p" \
      >> "$work/$name.am.log" 2>&1 || { say "git am failed for $name: $p"; cat "$work/$name.am.log" | tee -a "$log"; return 1; }
  done
}

# break_tree NAME FILE PATTERN REPLACEMENT: disables one piece of a change (a Python regular
# expression substitution on the tree's copy of FILE); fails if the pattern is not there
break_tree() {
  python3 - "$work/$1/$2" "$3" "$4" <<'PY' || { say "break of $1: pattern not found in $2: $3"; return 1; }
import re, sys
path, pattern, replacement = sys.argv[1:4]
text = open(path).read()
new, n = re.subn(pattern, replacement, text)
if n == 0:
    sys.exit(1)
open(path, "w").write(new)
PY
}

#
# Build: every compile of every tree in one parallel batch, then the links.
#
curand_flag=""
[ -n "${CURAND_INCLUDE:-}" ] && curand_flag="-I$CURAND_INCLUDE"
[ -n "$GTEST_INCLUDE" ] && curand_flag="$curand_flag -I$GTEST_INCLUDE"
flags="-std=c++17 -arch=$CUDA_ARCH -O3 -DNDEBUG --expt-relaxed-constexpr -DCUTLASS_TEST_LEVEL=0 \
-DCUTLASS_ENABLE_TENSOR_CORE_MMA=1 -Xcudafe --diag_suppress=20012 $curand_flag ${EXTRA_NVCC_FLAGS:-}"
compiles=$work/compiles.txt
links=$work/links.txt
: > "$compiles"
: > "$links"
binaries=()   # "tree binary"

# add_binary TREE NAME SOURCES... (relative to the tree); BIN_DEFINES (e.g. -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL)
# is added to the compiles of the test sources of this binary, whose objects then get a name of their own
add_binary() {
  local tree=$1 name=$2 dir=$work/$1 objs="" s o tag="" defines=""; shift 2
  for s in "$@"; do [ -f "$dir/$s" ] || { say "note: $tree has no $s; $name skipped"; return 0; }; done
  mkdir -p "$dir/obj" "$dir/bin"
  for s in test/unit/test_unit.cpp test/unit/common/filter_architecture.cpp "$@"; do
    tag="" defines=""
    case $s in test/unit/test_unit.cpp|test/unit/common/*) ;; *) [ -n "${BIN_DEFINES:-}" ] && tag=.$name defines=$BIN_DEFINES ;; esac
    o=$dir/obj/${s//\//_}$tag.o
    objs="$objs $o"
    grep -qF -- "-o $o " "$compiles" && continue
    echo "$NVCC $flags $defines -I$dir/include -I$dir/tools/util/include -I$dir/test/unit/common -c $dir/$s -o $o > $o.log 2>&1 || { echo 'compile failed: $tree/$s'; tail -30 $o.log; }" >> "$compiles"
  done
  echo "$NVCC -arch=$CUDA_ARCH $objs -o $dir/bin/$name -L$GTEST_LIB -lgtest -lcuda -Xcompiler -pthread ${EXTRA_LDFLAGS:-} > $dir/bin/$name.log 2>&1 || { echo 'link failed: $tree/$name'; tail -30 $dir/bin/$name.log; }" >> "$links"
  binaries+=("$tree $name")
}

add_series_binaries() {
  local t=$1 f
  [ "${CUTLASS_TMA_TESTS:-1}" = 1 ] || say "note: CUTLASS_TMA_TESTS=0: CUTLASS's own cute/hopper TMA tests are not built"
  [ "${CUTLASS_TMA_TESTS:-1}" = 1 ] &&
  for f in tma_load tma_store tma_mcast_load bulk_load bulk_store; do
    [ -f "$work/$t/test/unit/cute/hopper/$f.cu" ] && add_binary "$t" "cute_hopper_$f" "test/unit/cute/hopper/$f.cu"
  done
  add_binary "$t" cute_hopper_tma_host_encode test/unit/cute/hopper/tma_host_encode.cu
  BIN_DEFINES=-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
    add_binary "$t" cute_hopper_tma_host_encode_direct test/unit/cute/hopper/tma_host_encode.cu
  add_binary "$t" cluster_launch test/unit/cluster_launch/cluster_launch.cu
  add_binary "$t" util_device_memory test/unit/util/device_memory.cu
  add_binary "$t" gemm_device_universal_adapter_host_sm90 \
    test/unit/gemm/device/sm90_gemm_universal_adapter_params_reuse.cu \
    test/unit/gemm/device/sm90_gemm_universal_adapter_kernel_attributes.cu \
    test/unit/gemm/device/sm90_gemm_universal_adapter_stream_k.cu
  add_binary "$t" gemm_device_universal_adapter_device_reset_sm90 \
    test/unit/gemm/device/sm90_gemm_universal_adapter_device_reset.cu
  add_binary "$t" gemm_device_universal_adapter_host_adapter_sm90 \
    test/unit/gemm/device/sm90_gemm_universal_adapter_host_adapter.cu
}

if [ "$PHASE" != run ]; then
gemm=test/unit/gemm/device
checks=()   # "tree|binary|gtest filter|tests expected to fail (space separated)|what is broken"

make_tree patched series || exit 1
add_series_binaries patched

if [ "$BREAK_CHECKS" = 1 ]; then
  has() { local p; for p in "${patches[@]}"; do [[ $(subject "$patch_dir/$p") =~ $1 ]] && return 0; done; return 1; }
  adapter=include/cutlass/gemm/device/gemm_universal_adapter.h
  host_adapter=include/cutlass/cuda_host_adapter.hpp

  if make_tree pristine tests-only; then
    add_binary pristine util_device_memory test/unit/util/device_memory.cu
    add_binary pristine cluster_launch test/unit/cluster_launch/cluster_launch.cu
    add_binary pristine cute_hopper_tma_host_encode test/unit/cute/hopper/tma_host_encode.cu
    checks+=("pristine|util_device_memory|DeviceMemory.*|DeviceMemory.ZeroSizeAllocation|CUTLASS without the series")
    checks+=("pristine|cluster_launch|SM90_ClusterLaunch.*|SM90_ClusterLaunch.PortableClusterDoesNotAllowNonPortable|CUTLASS without the series")
    checks+=("pristine|cute_hopper_tma_host_encode|SM90_CuTe_Hopper.*||CUTLASS without the series (its per-call lookup binds the context)")
  fi
  if make_tree no_context_retry series && break_tree no_context_retry $host_adapter \
       'if \(result == CUDA_ERROR_INVALID_CONTEXT\) \{' 'if (false) {'; then
    add_binary no_context_retry cute_hopper_tma_host_encode test/unit/cute/hopper/tma_host_encode.cu
    BIN_DEFINES=-DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL \
      add_binary no_context_retry cute_hopper_tma_host_encode_direct test/unit/cute/hopper/tma_host_encode.cu
    checks+=("no_context_retry|cute_hopper_tma_host_encode_direct|SM90_CuTe_Hopper.Tma_Encode_Fresh_Thread|SM90_CuTe_Hopper.Tma_Encode_Fresh_Thread|the driver wrapper does not bind the primary context (CUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL)")
    add_binary no_context_retry gemm_fresh_thread $gemm/sm90_gemm_universal_adapter_params_reuse.cu
    checks+=("no_context_retry|cute_hopper_tma_host_encode|SM90_CuTe_Hopper.Tma_Encode_Fresh_Thread|SM90_CuTe_Hopper.Tma_Encode_Fresh_Thread|the driver wrapper does not bind the primary context")
    checks+=("no_context_retry|gemm_fresh_thread|*FreshThread||the driver wrapper does not bind the primary context")
  fi
  if has 'reuse Params' && make_tree no_reuse without 'reuse Params'; then
    add_binary no_reuse gemm_params_reuse $gemm/sm90_gemm_universal_adapter_params_reuse.cu $gemm/sm90_gemm_universal_adapter_stream_k.cu
    checks+=("no_reuse|gemm_params_reuse|*ParamsReuse_*:*StreamK*|SM90_Device_Gemm_UniversalAdapter_Host.ParamsReuse_SameArguments SM90_Device_Gemm_UniversalAdapter_Host.ParamsReuse_ChangedArguments SM90_Device_Gemm_UniversalAdapter_Host.ParamsReuse_SecondContext SM90_Device_Gemm_UniversalAdapter_Host.ParamsReuse_FreshThread|the series without its Params-reuse commit")
  fi
  if has 'smem attribute once' && make_tree no_attribute_record without 'smem attribute once|reuse Params'; then
    add_binary no_attribute_record gemm_kernel_attributes $gemm/sm90_gemm_universal_adapter_kernel_attributes.cu
    checks+=("no_attribute_record|gemm_kernel_attributes|*KernelAttributes_*|SM90_Device_Gemm_UniversalAdapter_Host.KernelAttributes_SetOncePerContext|the series without its smem-attribute and Params-reuse commits")
  fi
  if has 'reuse Params' && make_tree context_ignored series &&
     break_tree context_ignored $adapter 'cutlass::detail::current_context_id\(&context_id\) && context_id == context_id_' 'true' &&
     break_tree context_ignored $host_adapter 'applied\.context_id == wanted\.context_id &&' ''; then
    add_binary context_ignored gemm_params_reuse $gemm/sm90_gemm_universal_adapter_params_reuse.cu
    add_binary context_ignored gemm_kernel_attributes $gemm/sm90_gemm_universal_adapter_kernel_attributes.cu
    add_binary context_ignored gemm_device_reset $gemm/sm90_gemm_universal_adapter_device_reset.cu
    checks+=("context_ignored|gemm_params_reuse|*ParamsReuse_SecondContext|SM90_Device_Gemm_UniversalAdapter_Host.ParamsReuse_SecondContext|the Params key and the attribute record ignore the context")
    checks+=("context_ignored|gemm_kernel_attributes|*KernelAttributes_SecondContext:*KernelAttributes_TwoDevices|SM90_Device_Gemm_UniversalAdapter_Host.KernelAttributes_SecondContext SM90_Device_Gemm_UniversalAdapter_Host.KernelAttributes_TwoDevices|the Params key and the attribute record ignore the context")
    checks+=("context_ignored|gemm_device_reset|*ParamsReuse_AfterDeviceReset:*KernelAttributes_AfterDeviceReset|SM90_Device_Gemm_UniversalAdapter_Host.ParamsReuse_AfterDeviceReset SM90_Device_Gemm_UniversalAdapter_Host.KernelAttributes_AfterDeviceReset|the Params key and the attribute record ignore the context")
  fi
  if has 'reuse Params' && make_tree arguments_ignored series &&
     break_tree arguments_ignored $adapter 'std::memcmp\(args_, &args, sizeof\(Arguments\)\) == 0 &&' '' &&
     break_tree arguments_ignored $adapter '(params_ no longer holds what the key describes[^\n]*\n)\s*this->params_key_invalidate\(\);\n' '\1'; then
    add_binary arguments_ignored gemm_params_reuse $gemm/sm90_gemm_universal_adapter_params_reuse.cu
    checks+=("arguments_ignored|gemm_params_reuse|*ParamsReuse_ChangedArguments:*ParamsReuse_Update|SM90_Device_Gemm_UniversalAdapter_Host.ParamsReuse_ChangedArguments SM90_Device_Gemm_UniversalAdapter_Host.ParamsReuse_Update|the Params key ignores the Arguments and update() keeps it")
  fi
  if has 'reuse Params' && make_tree host_adapter_reuse series &&
     break_tree host_adapter_reuse $adapter '(      CUTLASS_ASSERT\(cuda_adapter\);\n)(      return Status::kSuccess;)' \
       '\1      this->params_key_save(args, workspace, (void const*) device_kernel<GemmKernel>);\n\2'; then
    add_binary host_adapter_reuse gemm_host_adapter $gemm/sm90_gemm_universal_adapter_host_adapter.cu
    checks+=("host_adapter_reuse|gemm_host_adapter|*|SM90_Device_Gemm_UniversalAdapter_Host.ParamsReuse_NotWithCudaHostAdapter|initialize() saves the Params key with a CudaHostAdapter")
  fi
fi

# Library-local state (host only, no GPU): a shared object that uses every static the series
# adds must export none of them, in particular no STB_GNU_UNIQUE symbol ("u" in nm), which the
# dynamic linker would share with every other library. Built once as the series has it and once
# with CUTLASS_DETAIL_LIBRARY_LOCAL defined empty (default visibility), where the check must fail.
library_local_check() {
  local dir=$work/library_local uses="" exported
  mkdir -p "$dir"
  grep -q 'cached_driver_version' "$work/patched/include/cutlass/cuda_host_adapter.hpp" && uses="-DUSES_DRIVER_VERSION"
  cat > "$dir/library_local.cu" <<'CU'
#include "cutlass/cuda_host_adapter.hpp"
struct LibraryLocalTag {};
__global__ void library_local_kernel() {}
extern "C" int library_local_use() {
  unsigned long long id = 0;
  (void) cutlass::detail::current_context_id(&id);
#if defined(USES_DRIVER_VERSION)
  int version = 0;
  (void) cutlass::detail::cached_driver_version(&version);
#endif
  (void) cutlass::detail::cuda_driver_entry_point_cuTensorMapEncodeTiled_v12000().load();
  return int(cutlass::detail::MaxDynamicSharedMemoryAttribute<LibraryLocalTag>::set(
      (void const*) library_local_kernel, 0));
}
CU
  say ""
  say "## library-local state: exported symbols of a shared object using the series' statics"
  for variant in series default_visibility; do
    local define=""
    [ $variant = default_visibility ] && define="-DCUTLASS_DETAIL_LIBRARY_LOCAL="
    if ! $NVCC -std=c++17 -arch=$CUDA_ARCH -O2 $uses $define -Xcompiler -fPIC -shared -I"$work/patched/include" \
         "$dir/library_local.cu" -o "$dir/$variant.so" > "$dir/$variant.log" 2>&1; then
      say "$variant: build failed"; tail -20 "$dir/$variant.log" | tee -a "$log"; echo FAIL >> "$work/library_local.txt"; continue
    fi
    exported=$(nm -D -C --defined-only "$dir/$variant.so" | grep -E 'cutlass::detail::(current_context_id|cached_driver_version|cuda_driver_entry_point_|MaxDynamicSharedMemoryAttribute)' || true)
    say "$variant: $(echo -n "$exported" | grep -c . ) exported, $(echo -n "$exported" | grep -c ' u ') STB_GNU_UNIQUE"
    [ -n "$exported" ] && echo "$exported" | sed 's/^/    /' >> "$log"
    if [ $variant = series ] && [ -n "$exported" ]; then
      say "=> NOT AS EXPECTED: the series exports its state"; echo FAIL >> "$work/library_local.txt"
    elif [ $variant = default_visibility ] && ! echo "$exported" | grep -q ' u '; then
      say "=> NOT AS EXPECTED: the check sees no shared symbol even with default visibility"; echo FAIL >> "$work/library_local.txt"
    else
      say "=> as expected"
    fi
  done
}
: > "$work/library_local.txt"
command -v nm > /dev/null && library_local_check || say "note: no nm, library-local check skipped"

say ""
say "## build: ${#binaries[@]} binaries, $(wc -l < "$compiles") compiles"
start=$(date +%s)
xargs -d '\n' -P "$JOBS" -I CMD bash -c CMD < "$compiles" 2>&1 | tee -a "$log"
if [ "${STUB_LIBCUDA:-0}" = 1 ]; then
  # A build machine without a driver: link against a stub libcuda.so (SONAME libcuda.so.1) that
  # defines every driver symbol the objects use; the GPU machine's libcuda.so.1 is loaded at run time.
  mkdir -p "$work/stub"
  nm -u "$work"/*/obj/*.o 2>/dev/null | awk '$1 == "U" && $2 ~ /^cu[A-Z]/ {print $2}' | sort -u |
    sed 's/.*/int &(void) { return 999; }/' > "$work/stub/libcuda.c"
  gcc -shared -fPIC -Wl,-soname,libcuda.so.1 -o "$work/stub/libcuda.so" "$work/stub/libcuda.c" &&
    sed -i "s#-lcuda #-L$work/stub -lcuda #" "$links" &&
    say "linked against a stub libcuda.so.1 ($(wc -l < "$work/stub/libcuda.c") driver symbols, STUB_LIBCUDA=1)"
fi
xargs -d '\n' -P "$JOBS" -I CMD bash -c CMD < "$links" 2>&1 | tee -a "$log"
say "build: $(( $(date +%s) - start )) s"
printf '%s\n' "${binaries[@]}" > "$work/binaries.txt"
printf '%s\n' "${checks[@]}" > "$work/checks.txt"
echo "$BREAK_CHECKS" > "$work/break_checks.txt"
fi   # PHASE != run

if [ "$PHASE" = build ]; then
  say "build phase done: $work"
  exit 0
fi
mapfile -t binaries < "$work/binaries.txt"
mapfile -t checks < <(grep -v '^$' "$work/checks.txt")
BREAK_CHECKS=$(cat "$work/break_checks.txt")

#
# Run
#
status=0
# run_binary TREE NAME FILTER [GTEST_ARGS...] -> prints the output, sets $failed and $skipped to the failed and
# the skipped tests and $passed to those that passed in at least one repetition (a test that failed in any
# repetition counts as failed)
run_binary() {
  local tree_dir=$work/$1 bin=$work/$1/bin/$2 filter=$3 output; shift 3
  if [ ! -x "$bin" ]; then failed="(not built)"; skipped=""; passed=""; say "${bin#$work/}: not built"; return 1; fi
  output=$(cd "$tree_dir" && timeout 300 "$bin" --gtest_color=no --gtest_filter="$filter" "$@" 2>&1)
  local rc=$?
  echo "$output" >> "$log"
  failed=$(echo "$output" | sed -n 's/^\[  FAILED  \] \([A-Za-z0-9_]*\.[A-Za-z0-9_]*\).*/\1/p' | sort -u | paste -sd' ')
  skipped=$(echo "$output" | sed -n 's/^\[  SKIPPED \] \([A-Za-z0-9_]*\.[A-Za-z0-9_]*\) (.*/\1/p' | sort -u | paste -sd' ')
  passed=$(echo "$output" | sed -n 's/^\[       OK \] \([A-Za-z0-9_]*\.[A-Za-z0-9_]*\) (.*/\1/p' | sort -u | paste -sd' ')
  return $rc
}

say ""
say "## patched tree: every test"
for b in "${binaries[@]}"; do
  set -- $b
  [ "$1" = patched ] || continue
  say ""
  say "### $2"
  run_binary patched "$2" '*' || status=1
  say "=> $2: $([ -z "$failed" ] && echo 'all passed' || echo "FAILED: $failed")"
  [ -z "$failed" ] || status=1
done

if [ "$BREAK_CHECKS" = 1 ]; then
  say ""
  say "## break checks: the tests that name a change fail without it"
  for c in "${checks[@]}"; do
    IFS='|' read -r tree bin filter expected what <<< "$c"
    say ""
    say "### $tree/$bin ($what), filter $filter"
    # Three repetitions: a test that needs a condition the machine may not give every time (the same
    # allocation addresses after cudaDeviceReset) gets three chances to meet it.
    run_binary "$tree" "$bin" "$filter" --gtest_repeat=3
    missing="" not_run=""
    for t in $expected; do
      [[ " $failed " == *" $t "* ]] && continue
      # Skipped in every repetition: its condition (two GPUs, equal addresses) was not there; it proved nothing.
      if [[ " $skipped " == *" $t "* && " $passed " != *" $t "* ]]; then not_run="$not_run $t"; else missing="$missing $t"; fi
    done
    if [ -z "$expected" ]; then
      say "=> observed only (no failure expected): failed: ${failed:-none}"
    elif [ -n "$missing" ]; then
      say "=> NOT AS EXPECTED: did not fail:$missing (failed: ${failed:-none})"
      status=1
    elif [ -n "$not_run" ]; then
      say "=> as expected where it could run, failed: ${failed:-none}; skipped here, so not shown:$not_run"
    else
      say "=> as expected, failed: $failed"
    fi
  done
fi

if grep -q FAIL "$work/library_local.txt" 2>/dev/null; then
  say ""
  say "library-local check (build phase) failed"
  status=1
fi

say ""
say "## result: $([ $status -eq 0 ] && echo PASS || echo FAIL)"
[ -n "${KEEP_WORK:-}" ] || rm -rf "$work"
exit $status
