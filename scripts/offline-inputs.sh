#!/usr/bin/env bash
# Everything scripts/gpu-evidence.sh needs from the network, packed for a GPU machine that has none, and
# unpacked there. What the committed H200 evidence ran with (docs/results/h200/README.md).
#
#   scripts/offline-inputs.sh pack CUTLASS_GIT GOOGLETEST_GIT OUT_DIR
#       on a machine with network: OUT_DIR/ gets cutlass-v4.3.5.tar.xz (the v4.3.5 headers), cutlass-main.bundle
#       (one commit holding main 7107b0553's include/ tools/ test/ cmake/ examples/common/ and top-level CMake
#       files, tagged base: what cutlass-suites.sh applies patch/series to), googletest.tar.xz (v1.17.0) and
#       wheels/ (nvidia-cutlass 4.2.0 and what the tests and the docs need that a CUDA image may lack).
#   . scripts/offline-inputs.sh unpack IN_DIR
#       on the GPU machine, sourced: installs the wheels, unpacks the trees under /tmp, and exports
#       CUTLASS_435_DIR, CUTLASS_MAIN_DIR, CUTLASS_MAIN_GIT, BASE and GOOGLETEST_DIR for gpu-evidence.sh.
# Env (pack): PYTHON_VERSION (default 3.12), the Python of the GPU machine, for the wheels.
MAIN_COMMIT=7107b0553
WHEELS="nvidia-cutlass==4.2.0.0 pyelftools mkdocs mkdocs-material mkdocs-macros-plugin mkdocs-material-extensions
  mkdocs-get-deps ghp-import mergedeep pyyaml-env-tag watchdog paginate backrefs pymdown-extensions babel
  super-collections hjson termcolor"

pack() {
  set -uo pipefail
  local cutlass=${1:?usage: pack CUTLASS_GIT GOOGLETEST_GIT OUT_DIR} gtest=${2:?} out=${3:?} snap
  mkdir -p "$out/wheels" && out=$(cd "$out" && pwd) || return 1
  git -C "$cutlass" archive --format=tar v4.3.5 include tools/util/include | xz -T0 > "$out/cutlass-v4.3.5.tar.xz" || return 1
  snap=$(mktemp -d)
  git -C "$cutlass" archive --format=tar "$MAIN_COMMIT" include tools test cmake examples/common CMakeLists.txt \
    $(git -C "$cutlass" ls-tree --name-only "$MAIN_COMMIT" | grep -E '\.cmake$|^LICENSE') | tar x -C "$snap" || return 1
  git -C "$snap" init -q && git -C "$snap" add -A &&
    git -C "$snap" -c user.name=snapshot -c user.email=snapshot@localhost commit -q \
      -m "CUTLASS main $MAIN_COMMIT snapshot (include tools test cmake examples/common top-level cmake)" &&
    git -C "$snap" tag base && git -C "$snap" bundle create "$out/cutlass-main.bundle" base HEAD || return 1
  rm -rf "$snap"
  git -C "$gtest" archive --format=tar --prefix=googletest/ v1.17.0 | xz -T0 > "$out/googletest.tar.xz" || return 1
  # shellcheck disable=SC2086
  python3 -m pip download -q --no-deps --only-binary=:all: --python-version "${PYTHON_VERSION:-3.12}" \
    --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform any \
    -d "$out/wheels" $WHEELS || return 1
  du -sh "$out"
}

unpack() {
  local in=${1:?usage: . scripts/offline-inputs.sh unpack IN_DIR}
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir "$in"/wheels/*.whl || return 1
  mkdir -p /tmp/cutlass-v4.3.5 /tmp/googletest-src &&
    tar xJf "$in/cutlass-v4.3.5.tar.xz" -C /tmp/cutlass-v4.3.5 &&
    tar xJf "$in/googletest.tar.xz" -C /tmp/googletest-src || return 1
  [ -d /tmp/cutlass-main/.git ] || git clone -q "$in/cutlass-main.bundle" /tmp/cutlass-main || return 1
  git -C /tmp/cutlass-main checkout -q base && git -C /tmp/cutlass-main tag -f base base > /dev/null
  export CUTLASS_435_DIR=/tmp/cutlass-v4.3.5 CUTLASS_MAIN_DIR=/tmp/cutlass-main CUTLASS_MAIN_GIT=/tmp/cutlass-main
  export BASE=base GOOGLETEST_DIR=/tmp/googletest-src/googletest
}

case "${1:-}" in
  pack) shift; pack "$@" ;;
  unpack) shift; unpack "$@" ;;
  *) echo "usage: scripts/offline-inputs.sh pack CUTLASS_GIT GOOGLETEST_GIT OUT_DIR | . scripts/offline-inputs.sh unpack IN_DIR" >&2
     return 2 2>/dev/null || exit 2 ;;
esac
