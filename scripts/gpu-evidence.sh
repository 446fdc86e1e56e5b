#!/usr/bin/env bash
# Every GPU run committed under docs/results/, from one script, in stages. Each stage fits in one call of
# a short-lived GPU machine; later stages reuse what "build" left in build/ (rerun "build" first on a new
# machine: it rebuilds nothing that is up to date). Usage:
#   scripts/gpu-evidence.sh OUT_DIR STAGE...
# Stages (in this order when several are given):
#   build    (pip, with the build profiles of pyproject.toml: evidence, host-path-on-hopper, ablation)
#            the package against the nvidia-cutlass 4.2.0 wheel with every option (the per-commit ablation,
#            the NVFP4 host path on Hopper with all configs, the experiment variants; 90a and 100a, so the
#            Blackwell modules exist and their non-Blackwell guard is tested), and in parallel against the
#            CUTLASS v4.3.5 tree in $CUTLASS_435_DIR (the issue's version) into a directory of its own, and with
#            $CUTLASS_MAIN_DIR (pristine CUTLASS main, the PR target) the SM90 stand-in and its per-PR ablation there.
#   test     the whole test suite with coverage and compute-sanitizer  -> OUT/<gpu>/{build,pytest,memcheck}.log
#   breaks   the GPU tests that name a commit, run against the ablation build without it (they must fail)
#            -> OUT/<gpu>/pytest-break-checks.log
#   report   the full report (timings, CUPTI counts, unit costs, experiments and ablation)
#            -> OUT/<gpu>/ (4.2.0), OUT/<gpu>-cutlass-v4.3.5/ (v4.3.5), OUT/<gpu>-cutlass-main/ (main)
#   asserts  the SM90 stand-in's -O0 variant built with NDEBUG kept (CO_O0_DEVICE_ASSERTS=OFF), a --quick report
#            and the assert calls in each module's machine code: is the -O0 kernel slower for its device-side asserts?
#            -> OUT/<gpu>-o0-without-asserts/
#   nvfp4    cutlass-overhead-doctor --every-config on the SM90 stand-in and on the issue's NVFP4 code's host path on
#            Hopper (measurement only, no tensor-core math), both CUTLASS versions  -> OUT/<gpu>-nvfp4-host-path/
#   cutlass  on CUTLASS main with patch/series applied by git am ($CUTLASS_MAIN_GIT; BASE the pristine commit),
#            built with CUTLASS's CMake: the series' test targets and their break checks, and each PR alone
#            with its targets -> OUT/<gpu>-cutlass-tests/
#   suites   CUTLASS's own suites packed without a GPU, $CUTLASS_SUITES_BINS = "TAR|SERIES|LABEL ..."
#            (scripts/cutlass-suites.sh PHASE=build; SERIES a series file or PR folders joined by commas), run
#            here in a call of their own (with "cutlass" in one call they came within 5 s of its 600 s)
#            -> OUT/<gpu>-cutlass-suites/
#   pipelines  is this pipeline the old one's measurement? The report of an earlier commit ($OLD_TREE, its files, e.g.
#            `git archive`; $OLD_COMMIT, its hash) and of this tree, both built alike (4.2.0 wheel, 90a, experiments),
#            run in alternating processes ($PROCESSES each, default 3; $FIRST, old or new, starts each round) on this
#            machine: old against new, and each against itself (scripts/compare-runs.py --processes)
#            -> OUT/<gpu>-pipelines-<FIRST>-first/
# Both packages are regular (not editable) installs: an editable install's import hook would shadow the
# v4.3.5 package that PYTHONPATH puts first.
# Env: TEST_ARGS (extra pytest arguments), REPORT_435_ARGS (e.g. --quick for the v4.3.5 report), NVFP4_VERSIONS
# (the CUTLASS versions the nvfp4 stage reads, default "4.2.0 4.3.5").
# Offline machines: `. scripts/offline-inputs.sh unpack DIR` first (the wheels, the CUTLASS trees, googletest;
# see there); keep nanobind and scikit-build-core in the environment; nothing is built in an isolated environment.
# Every output directory gets stamp.txt: GPU, driver, CUDA, CUTLASS, patch series, repository commit. <gpu> is the GPU's
# name (h200, h100: a lent machine may be either; stamp.py --gpu-tag), so no run is filed under another GPU's name.
set -uo pipefail
out=${1:?usage: scripts/gpu-evidence.sh OUT_DIR STAGE...}
shift
[ $# -gt 0 ] || set -- build test report nvfp4
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
mkdir -p "$out" && out=$(cd "$out" && pwd)
export PYTHONUNBUFFERED=1
# The commit the stamps name. Pass CO_GIT_COMMIT on a lent machine: it receives the working tree's files with a .git
# whose HEAD may be another commit (2026-12-05: its HEAD was the checkout's commit when the session began). Unset,
# HEAD is used, and a tree that differs from it is stamped dirty.
if [ -z "${CO_GIT_COMMIT:-}" ]; then
  CO_GIT_COMMIT=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] && export CO_GIT_DIRTY=1
fi
export CO_GIT_COMMIT
PY=${PYTHON:-python3}
gpu=$($PY python/cutlass_overhead/stamp.py --gpu-tag)
site435=${SITE_435:-$root/build/site-435}  # the v4.3.5 package, first on PYTHONPATH when used
sitemain=${SITE_MAIN:-$root/build/site-main}  # the CUTLASS main package (CUTLASS_MAIN_DIR), likewise
siteo0=${SITE_O0:-$root/build/site-o0-without-asserts}  # the SM90 stand-in's -O0 variant keeping NDEBUG (CO_O0_DEVICE_ASSERTS=OFF)
status=0

stamp() {  # stamp DIR CUTLASS_LABEL SERIES_FILE: the package's stamp writer (commit: CO_GIT_COMMIT)
  mkdir -p "$1"
  $PY python/cutlass_overhead/stamp.py --cutlass "$2" --series "patch/$3" > "$1/stamp.txt"
}

stage_build() {
  local log=$out/$gpu/build.log log435=$out/$gpu-cutlass-v4.3.5/build.log
  mkdir -p "$out/$gpu" "$out/$gpu-cutlass-v4.3.5"
  if [ -n "${CUTLASS_435_DIR:-}" ]; then
    # The host-path-on-hopper profile, with its -O0 variants: the issue's version's -O0 row (issue 18).
    ( export CUTLASS_DIR=$CUTLASS_435_DIR CO_PROFILE=host-path-on-hopper
      time $PY -m pip install --no-build-isolation --no-deps --no-index -v --upgrade --target "$site435" . \
        -Cbuild-dir=build/v435
    ) > "$log435" 2>&1 &
    pid_435=$!
  fi
  if [ -n "${CUTLASS_MAIN_DIR:-}" ]; then
    # The PR target: the SM90 stand-in against CUTLASS main and each PR's prefix of patch/series (the ablation).
    mkdir -p "$out/$gpu-cutlass-main"
    ( export CUTLASS_DIR=$CUTLASS_MAIN_DIR CO_PROFILE=ablation
      time $PY -m pip install --no-build-isolation --no-deps --no-index -v --upgrade --target "$sitemain" . \
        -Cbuild-dir=build/main
    ) > "$out/$gpu-cutlass-main/build.log" 2>&1 &
    pid_main=$!
  fi
  # The -O0 question (docs/results/h200-o0-without-asserts/): the SM90 stand-in with its -O0 variant keeping NDEBUG.
  mkdir -p "$out/$gpu-o0-without-asserts"
  ( export CO_CUDA_ARCHS=90a CO_BUILD_EXPERIMENTS=ON CO_O0_DEVICE_ASSERTS=OFF
    time $PY -m pip install --no-build-isolation --no-deps --no-index -v --upgrade --target "$siteo0" . \
      -Cbuild-dir=build/o0-without-asserts
  ) > "$out/$gpu-o0-without-asserts/build.log" 2>&1 &
  pid_o0=$!
  ( export CO_PROFILE=evidence
    time $PY -m pip install --no-build-isolation --no-deps --no-index -v . -Cbuild-dir=build/gpu
  ) > "$log" 2>&1 || { echo "build failed; see $log"; tail -40 "$log"; status=1; }
  tail -3 "$log"
  if [ -n "${CUTLASS_435_DIR:-}" ]; then
    wait $pid_435 || { echo "v4.3.5 build failed; see $log435"; tail -40 "$log435"; status=1; }
    tail -3 "$log435"
  fi
  wait $pid_o0 || { echo "-O0 without asserts build failed"; tail -40 "$out/$gpu-o0-without-asserts/build.log"; status=1; }
  if [ -n "${CUTLASS_MAIN_DIR:-}" ]; then
    wait $pid_main || { echo "main build failed"; tail -40 "$out/$gpu-cutlass-main/build.log"; status=1; }
    tail -3 "$out/$gpu-cutlass-main/build.log"
  fi
}

stage_test() {
  local dir=$out/$gpu
  stamp "$dir" "4.2.0 (nvidia-cutlass wheel)" series-v4.2.0
  cp "$dir/stamp.txt" "$dir/pytest.log"
  CO_RESULTS_DIR="$dir" $PY -m pytest tests/ ${TEST_ARGS:-} -rfEs --tb=short --durations=10 --cov=cutlass_overhead --cov-report=term 2>&1 \
    | tee -a "$dir/pytest.log" || status=1
  [ -f "$dir/memcheck.log" ] && sed -i "1r $dir/stamp.txt" "$dir/memcheck.log"
}

stage_breaks() {
  # The GPU tests that name a commit of the series fail on the ablation build without it.
  $PY scripts/pytest_break_checks.py "$out/$gpu/pytest-break-checks.log" || status=1
}

stage_report() {
  stamp "$out/$gpu" "4.2.0 (nvidia-cutlass wheel)" series-v4.2.0
  $PY -m cutlass_overhead --out "$out/$gpu" 2>&1 | tee "$out/$gpu/report.log" || status=1
  if [ -d "$site435/cutlass_overhead" ]; then
    stamp "$out/$gpu-cutlass-v4.3.5" "v4.3.5 ($CUTLASS_435_DIR)" series-v4.3.5
    (cd /tmp && PYTHONPATH=$site435 $PY -m cutlass_overhead --out "$out/$gpu-cutlass-v4.3.5" ${REPORT_435_ARGS:-}) 2>&1 \
      | tee "$out/$gpu-cutlass-v4.3.5/report.log" || status=1
  fi
  if [ -d "$sitemain/cutlass_overhead" ]; then
    stamp "$out/$gpu-cutlass-main" "main $(git -C "$CUTLASS_MAIN_DIR" log -1 --format=%s 2>/dev/null | grep -o '[0-9a-f]\{9\}' | head -1) ($CUTLASS_MAIN_DIR)" series
    (cd /tmp && PYTHONPATH=$sitemain $PY -m cutlass_overhead --out "$out/$gpu-cutlass-main" ${REPORT_MAIN_ARGS:-}) 2>&1 \
      | tee "$out/$gpu-cutlass-main/report.log" || status=1
  fi
}

stage_asserts() {
  # Why the -O0 build's kernel is slower: nvcc's -O is the host level only, so its device code differs from the
  # Release build's by -UNDEBUG alone (device-side asserts). The same stand-in with NDEBUG kept, a short report, and
  # the assert calls in each module's machine code.
  local dir=$out/$gpu-o0-without-asserts
  stamp "$dir" "4.2.0 (nvidia-cutlass wheel)" series-v4.2.0
  (cd /tmp && PYTHONPATH=$siteo0 $PY -m cutlass_overhead --quick --out "$dir") 2>&1 | tee "$dir/report.log" || status=1
  # A device-side assert is a call to __assertfail: an undefined symbol in the module's cubin (no GPU needed).
  local pkg cubins
  pkg=$(cd /tmp && $PY -c 'import cutlass_overhead, os; print(os.path.dirname(cutlass_overhead.__file__))')
  { cat "$dir/stamp.txt"
    for m in "$pkg"/_sm90_original*.so "$pkg"/_sm90_O0*.so "$siteo0"/cutlass_overhead/_sm90_original*.so \
             "$siteo0"/cutlass_overhead/_sm90_O0*.so; do
      cubins=$(mktemp -d) && (cd "$cubins" && cuobjdump -xelf all "$m" > /dev/null)
      echo "$m: $(cat "$cubins"/*.cubin | wc -c) cubin bytes, $(for c in "$cubins"/*.cubin; do readelf -sW "$c"; done |
        grep -c ' __assertfail$') symbols naming __assertfail"
      rm -rf "$cubins"
    done; } | sed "s#$root/##; s#$pkg#<installed package>#" > "$dir/assert-calls.log"
  cat "$dir/assert-calls.log"
}

stage_nvfp4() {
  # The doctor, --every-config, on the SM90 stand-in and on the issue's NVFP4 code built for sm_90a (host path only,
  # the kernel never runs), against the 4.2.0 wheel (the installed package) and the issue's v4.3.5 ($site435).
  local dir=$out/$gpu-nvfp4-host-path kind version flag site
  mkdir -p "$dir"
  $PY python/cutlass_overhead/stamp.py --series patch/series-v4.2.0 --series patch/series-v4.3.5 \
    --note "label: host path on Hopper, no tensor-core math (never a Blackwell number)" > "$dir/stamp.txt"
  for version in ${NVFP4_VERSIONS:-4.2.0 4.3.5}; do
    site=""
    if [ "$version" = 4.3.5 ]; then
      [ -d "$site435/cutlass_overhead" ] || { echo "no v4.3.5 package in $site435: run the build stage with CUTLASS_435_DIR"; status=1; continue; }
      site=$site435
    fi
    for kind in sm90 nvfp4-hopper; do
      flag=""
      [ "$kind" = nvfp4-hopper ] && flag=--host-path-on-hopper
      (cd /tmp && PYTHONPATH=$site $PY -m cutlass_overhead.doctor 128 4096 4096 --every-config $flag \
        --json "$dir/doctor-v$version-$kind-128x4096x4096.json") 2>&1 | tee "$dir/doctor-v$version-$kind.log" || status=1
    done
  done
}

# Each PR with only what it needs, as a maintainer merges them: the PR folders applied to main (PR 1 and PR 2 need
# nothing; PRs 3 and 4 build their tests on PR 2's). The targets run are the last PR's, as its page names them.
ALONE=("pr1-portable-clusters" "pr2-tma-fixup-order" "pr2-tma-fixup-order pr3-entry-points-once"
       "pr2-tma-fixup-order pr4-kernel-attributes-once")

page_targets() {  # page_targets PR_FOLDER: the CUTLASS targets its PR.md names before its results (fill-pr-results.py reads the same)
  sed '/<!-- pr:tests -->/,$d' "patch/$1/PR.md" | grep -o '`cutlass_test_unit_[a-z0-9_]*`' | tr -d '`' | awk '!seen[$0]++'
}

stage_suites() {
  # CUTLASS's own suites packed on a machine without a GPU (PHASE=build scripts/cutlass-suites.sh), run here, each
  # alone on the machine (the GEMM suites check against a host reference on every core), in a call of their own:
  # $CUTLASS_SUITES_BINS = "TAR|SERIES|LABEL[|SETTINGS] ..." (SERIES a series file or PR folders joined by commas, or
  # none; SETTINGS the pack's one-commit settings, e.g. COMMITS=1,PARENT_CODE=1,FILTER=..., as it was built with).
  # The committed runs and their packs: docs/results/h200-cutlass-suites/README.md.
  local dir=$out/$gpu-cutlass-suites src=${CUTLASS_MAIN_GIT:?set CUTLASS_MAIN_GIT (a CUTLASS git repository)} packed tarball prs label
  mkdir -p "$dir"
  for packed in ${CUTLASS_SUITES_BINS:?set CUTLASS_SUITES_BINS}; do
    IFS='|' read -r tarball prs label settings <<< "$packed"
    IFS=',' read -ra settings <<< "$settings"  # as words, never globbed (a FILTER may hold '*')
    mkdir -p "$dir/suites" && cp "$tarball" "$dir/suites/cutlass-suites-bin.tar.xz"
    env ${settings[@]+"${settings[@]}"} PHASE=run SERIES="${prs//,/ }" SERIES_TARGETS="" LABEL=$label REPO_COMMIT=$CO_GIT_COMMIT \
      RUN_TIMEOUT=${SUITES_RUN_TIMEOUT:-200} scripts/cutlass-suites.sh "$src" "$dir/suites" > /dev/null 2>&1 || status=1
    mv "$dir/suites/cutlass-suites-$label-run.log" "$dir/" && rm -rf "$dir/suites"
  done
}

stage_cutlass() {
  # On CUTLASS main ($CUTLASS_MAIN_GIT, BASE pristine): the whole series' targets, CUTLASS's suites
  # ($CUTLASS_DEVICE_SUITES, built here) and every break check; and each PR alone (ALONE).
  local dir=$out/$gpu-cutlass-tests src=${CUTLASS_MAIN_GIT:?set CUTLASS_MAIN_GIT (a CUTLASS git repository)} prs
  mkdir -p "$dir"
  for prs in "${ALONE[@]}"; do
    PHASE=all SERIES="$prs" SERIES_TARGETS="$(page_targets "${prs##* }")" SUITES="" JOBS=4 \
      LABEL="main-$(echo "${prs##* }" | cut -d- -f1)-alone" \
      REPO_COMMIT=$CO_GIT_COMMIT scripts/cutlass-suites.sh "$src" "$dir" > /dev/null 2>&1 &
  done
  PHASE=all SUITES="${CUTLASS_DEVICE_SUITES-cutlass_test_unit_conv1d_fprop_device_tensorop_sm90 cutlass_test_unit_util
    cutlass_test_unit_cute_hopper_tma_mcast_load cutlass_test_unit_cute_hopper_bulk_load cutlass_test_unit_cute_hopper_bulk_store}" \
    BREAKS=1 LABEL=main-series REPO_COMMIT=$CO_GIT_COMMIT scripts/cutlass-suites.sh "$src" "$dir" || status=1
  wait || status=1
  grep -h '^## result' "$dir"/cutlass-suites-main-*-alone-all.log
}

stage_pipelines() {
  # The same options for both (the old commit may predate the build profiles): no profile, the environment's.
  local first=${FIRST:-old} dir=$out/$gpu-pipelines-${FIRST:-old}-first old=${OLD_TREE:?set OLD_TREE (files of the earlier commit)} side i pid pids=()
  : "${OLD_COMMIT:?set OLD_COMMIT (hash of the earlier commit)}"
  mkdir -p "$dir"
  stamp "$dir" "4.2.0 (nvidia-cutlass wheel)" series-v4.2.0
  for side in old new; do
    ( cd "$([ $side = old ] && echo "$old" || echo "$root")" || exit 1
      export CO_PROFILE= CO_CUDA_ARCHS=90a CO_BUILD_EXPERIMENTS=ON CO_NVFP4_HOST_PATH_ON_HOPPER=OFF CO_BUILD_ABLATION=OFF
      time $PY -m pip install --no-build-isolation --no-deps --no-index -v --upgrade --target "$root/build/site-$side" . \
        -Cbuild-dir="$root/build/pipelines-$side"
    ) > "$dir/build-$side.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do
    wait "$pid" || { echo "a pipelines build failed"; tail -20 "$dir"/build-*.log; status=1; return; }
  done
  for i in $(seq "${PROCESSES:-3}"); do  # alternating, so drift over the call hits both alike
    for side in $first $([ "$first" = old ] && echo new || echo old); do
      (cd /tmp && CO_GIT_COMMIT=$([ $side = old ] && echo "$OLD_COMMIT" || echo "$CO_GIT_COMMIT") \
        PYTHONPATH=$root/build/site-$side $PY -m cutlass_overhead --out "$dir/$side-$i") > "$dir/$side-$i.log" 2>&1 || status=1
    done
  done
  $PY scripts/compare-runs.py --processes "$dir" | tee "$dir/compare.log"
}

for s in build test breaks report asserts nvfp4 cutlass suites pipelines; do
  for want in "$@"; do
    if [ "$want" = "$s" ]; then
      echo "== $s ($(date -u +%T))"
      "stage_$s"
    fi
  done
done
exit $status
