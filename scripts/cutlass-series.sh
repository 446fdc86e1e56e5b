# Sourced by the scripts that apply the patch series to a CUTLASS tree: which series fits the tree.
# The same rule as cmake/CutlassSource.cmake: patch/series-v<CUTLASS version> if present, else patch/series.

# cutlass_version DIR: the version of the CUTLASS tree DIR (from include/cutlass/version.h), e.g. 4.3.5
cutlass_version() {
  sed -n 's/^#define CUTLASS_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\).*/\2/p' "$1/include/cutlass/version.h" | paste -sd.
}

# series_for VERSION PATCH_DIR: the name of the series file for that version
series_for() {
  if [ -f "$2/series-v$1" ]; then echo "series-v$1"; else echo series; fi
}
