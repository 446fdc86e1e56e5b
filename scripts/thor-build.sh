#!/usr/bin/env bash
# What a Thor user installs, built the way they would build it: CUDA 13, sm_110a only, the issue's NVFP4
# code (original, patched, and the -O0 host builds pristine and patched) as the package's modules, no GPU
# needed. Proves that it compiles and links for Thor, that each NVFP4 module holds an sm_110a image, and that the installed
# cutlass-overhead-doctor says in one line that there is no GPU; it measures nothing. Thor was sm_101a in CUDA 12.8/12.9
# (CMakeLists.txt picks 101a there); that build needs a CUDA 12.8 toolkit, which this script does not have.
# It builds through pip with the `thor` profile (pyproject.toml) into a persistent build directory and installs
# nothing; the build tools must be in the environment (the README's Development line: nanobind,
# scikit-build-core, cmake, ninja, nvidia-cutlass), as nothing is built in an isolated environment.
# Usage: [CUTLASS_DIR=/path/to/cutlass-v4.3.5] scripts/thor-build.sh LOG [BUILD_DIR]
#   CUTLASS_DIR: a CUTLASS tree (the issue's v4.3.5, say) instead of the nvidia-cutlass 4.2.0 wheel; the build
#   applies patch/series-v<its version>, and the stamp names that series.
set -uo pipefail
log=${1:?usage: scripts/thor-build.sh LOG [BUILD_DIR]}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=${2:-$root/build/thor}
PY=${PYTHON:-python3}
modules="_nvfp4_original _nvfp4_patched _nvfp4_O0 _nvfp4_O0_patched"
site=$(mktemp -d)
cuobjdump=$(command -v cuobjdump || $PY -c 'import nvidia, pathlib; print(next(pathlib.Path(list(nvidia.__path__)[0]).glob("cu*/bin/cuobjdump")))' 2>/dev/null)
wheels=$(mktemp -d)
trap 'rm -rf "$wheels" "$site"' EXIT

if [ -n "${CUTLASS_DIR:-}" ]; then
  version=$(sed -n 's/^#define CUTLASS_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$CUTLASS_DIR/include/cutlass/version.h" | paste -sd.)
  # The series the build applies to that version: the vocabulary's rule (the one CutlassSource.cmake applies).
  series=$("$PY" -c 'import sys, pathlib; sys.path.insert(0, sys.argv[1]); from vocabulary import series_file
print(series_file(pathlib.Path(sys.argv[2]), sys.argv[3]))' "$root/python/cutlass_overhead" "$root/patch" "$version")
  cutlass_label="$version (CUTLASS_DIR)"
else
  series=$root/patch/series-v4.2.0 cutlass_label="4.2.0 (nvidia-cutlass wheel)"
fi
rm -rf "$dir"  # a whole build each time: the time and size it prints are what a first build on the board costs
mkdir -p "$(dirname "$log")" "$dir"
{
  echo "# scripts/thor-build.sh"
  $PY "$root/python/cutlass_overhead/stamp.py" --repo "$root" --series "$series" \
    --cutlass "$cutlass_label" --note "no GPU is needed (nothing runs on one)" || exit 1
  echo "+ ${CUTLASS_DIR:+CUTLASS_DIR=<CUTLASS $version tree> }CO_PROFILE=thor pip wheel --no-build-isolation --no-deps . -Cbuild-dir=${dir#"$root"/}"
  start=$(date +%s)
  # GNU time's peak RSS is that of the largest single process of the build (one compiler), what -j multiplies.
  # The configure lines, then ninja's link steps; the repository's own path is left out of the log.
  CO_PROFILE=thor /usr/bin/time -f "peak memory of one build process: %M KB" -o "$dir.time" \
    "$PY" -m pip wheel -v --no-build-isolation --no-deps --wheel-dir "$wheels" "$root" -Cbuild-dir="$dir" 2>&1 |
    sed -e 's/^ *//' -e "s#$root/##g" | grep -E "^-- cutlass-overhead|^\[[0-9]+/[0-9]+\] Linking|error:|FAILED"
  built=${PIPESTATUS[0]}
  echo "build: $(( $(date +%s) - start )) s on $(nproc) cores; $(cat "$dir.time" 2>/dev/null)"
  echo "disk: build directory $(du -sh "$dir" | cut -f1); configs: M <= 128 only (CO_NVFP4_ALL_CONFIGS=OFF)"
  rc=0
  [ -x "$cuobjdump" ] || { echo "no cuobjdump (CUDA toolkit or the nvidia-cuda-cuobjdump wheel)"; rc=1; }
  [ "$built" = 0 ] || { echo "the build failed (pip: exit $built)"; rc=1; }
  "$PY" -m pip install -q --no-deps --target "$site" "$wheels"/*.whl || { echo "the wheel did not install"; rc=1; }
  for m in $modules; do
    so=$(ls "$site"/cutlass_overhead/"$m".*.so 2>/dev/null | head -1)
    if [ -z "$so" ]; then
      echo "MISSING $m"; rc=1; continue
    fi
    elves=$("$cuobjdump" --list-elf "$so" 2>&1 | grep -o 'sm_[0-9a-z]*' | sort | uniq -c | paste -sd' ')
    echo "$m: cubins: $elves"
    case $elves in *sm_110a*) ;; *) echo "  no sm_110a image"; rc=1 ;; esac
  done
  # On a machine without a GPU the doctor must say so in one line (exit 2), as it would on a Thor whose driver
  # is missing.
  out=$(cd "$site" && PYTHONPATH="$site" "$PY" -m cutlass_overhead.doctor 128 4096 4096 2>&1); code=$?
  echo "cutlass-overhead-doctor without a GPU: exit $code: $out"
  [ "$code" = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] || rc=1
  [ "$rc" = 0 ] && echo "PASS" || echo "FAIL"
  exit $rc
} 2>&1 | tee "$log"
exit "${PIPESTATUS[0]}"
