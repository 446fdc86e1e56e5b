# Locates the CUTLASS headers and builds the patched copy that the "patched" targets compile against.
#
# Inputs:  CUTLASS_DIR (a checkout; empty = the nvidia-cutlass wheel), Python_EXECUTABLE.
# Outputs: CO_CUTLASS_ROOT, CO_CUTLASS_INCLUDES, CO_CUTLASS_VERSION, CO_CUTLASS_DESCRIBE,
#          CO_PATCHED_ROOT, CO_PATCHED_INCLUDES, CO_PATCH_SERIES_FILE, CO_PATCH_LIST.
#
# Both header trees the build compiles against live at fixed paths: a CUTLASS_DIR checkout where it is, the
# wheel's headers copied into the build directory (pip's isolated build environment is a new temporary
# directory every time; include paths into it would change every compile command and rebuild everything).

if(CUTLASS_DIR)
  set(CO_CUTLASS_ROOT "${CUTLASS_DIR}")
  set(CO_CUTLASS_ORIGIN "CUTLASS_DIR")
else()
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
      # find_spec locates the wheel without importing it (its __init__ pulls in unrelated dependencies).
      "import importlib.util, os; s = importlib.util.find_spec('cutlass_library'); print(os.path.join(s.submodule_search_locations[0], 'source'))"
    OUTPUT_VARIABLE CO_CUTLASS_ROOT OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE _rc ERROR_QUIET)
  if(NOT _rc EQUAL 0 OR NOT EXISTS "${CO_CUTLASS_ROOT}/include/cutlass/cutlass.h")
    message(FATAL_ERROR
      "CUTLASS headers not found. Either `pip install nvidia-cutlass==4.2.0.0` into the build "
      "environment (it is a build requirement) or set CUTLASS_DIR to a CUTLASS checkout.")
  endif()
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c "import importlib.metadata as m; print(m.version('nvidia-cutlass'))"
    OUTPUT_VARIABLE _wheel_version OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  set(CO_CUTLASS_ORIGIN "nvidia-cutlass wheel")
endif()
get_filename_component(CO_CUTLASS_ROOT "${CO_CUTLASS_ROOT}" ABSOLUTE)
if(NOT EXISTS "${CO_CUTLASS_ROOT}/include/cutlass/version.h")
  message(FATAL_ERROR "CUTLASS_DIR=${CO_CUTLASS_ROOT} has no include/cutlass/version.h")
endif()

# The subtrees a header-only consumer needs; the patch series is applied to exactly these.
set(CO_CUTLASS_SUBTREES include tools/util/include)

set(_source_version_h "${CO_CUTLASS_ROOT}/include/cutlass/version.h")  # where a new CUTLASS would show

# The wheel's headers, synced into the build directory: only files whose content changed are rewritten, so
# an unchanged wheel leaves every timestamp (and every object) as it was.
if(NOT CUTLASS_DIR)
  set(_wheel_root "${CO_CUTLASS_ROOT}")
  set(CO_CUTLASS_ROOT "${CMAKE_BINARY_DIR}/cutlass-pristine")
  foreach(_sub IN LISTS CO_CUTLASS_SUBTREES)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_directory_if_different "${_wheel_root}/${_sub}"
                            "${CO_CUTLASS_ROOT}/${_sub}" RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "could not copy the CUTLASS headers from ${_wheel_root} into ${CO_CUTLASS_ROOT}")
    endif()
  endforeach()
endif()
set(CO_CUTLASS_INCLUDES "${CO_CUTLASS_ROOT}/include" "${CO_CUTLASS_ROOT}/tools/util/include")

file(STRINGS "${CO_CUTLASS_ROOT}/include/cutlass/version.h" _ver REGEX "#define CUTLASS_(MAJOR|MINOR|PATCH) ")
string(REGEX REPLACE ".*CUTLASS_MAJOR ([0-9]+).*" "\\1" _major "${_ver}")
string(REGEX REPLACE ".*CUTLASS_MINOR ([0-9]+).*" "\\1" _minor "${_ver}")
string(REGEX REPLACE ".*CUTLASS_PATCH ([0-9]+).*" "\\1" _patch "${_ver}")
set(CO_CUTLASS_VERSION "${_major}.${_minor}.${_patch}")

find_package(Git REQUIRED)
# What exactly was compiled against, in one line: git's description of a checkout, else the wheel's version.
set(CO_CUTLASS_DESCRIBE "")
if(CUTLASS_DIR AND EXISTS "${CO_CUTLASS_ROOT}/.git")
  execute_process(COMMAND "${GIT_EXECUTABLE}" -C "${CO_CUTLASS_ROOT}" describe --tags --always --dirty
    OUTPUT_VARIABLE CO_CUTLASS_DESCRIBE OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
elseif(NOT CUTLASS_DIR AND _wheel_version)
  set(CO_CUTLASS_DESCRIBE "nvidia-cutlass ${_wheel_version} (PyPI wheel)")
endif()
if(NOT CO_CUTLASS_DESCRIBE)
  set(CO_CUTLASS_DESCRIBE "CUTLASS ${_major}.${_minor}.${_patch} at ${CO_CUTLASS_ROOT} (not a git checkout)")
endif()

# One series per CUTLASS release where the upstream text differs (see patch/README.md);
# `series` itself targets CUTLASS main.
set(CO_PATCH_DIR "${PROJECT_SOURCE_DIR}/patch")
if(EXISTS "${CO_PATCH_DIR}/series-v${CO_CUTLASS_VERSION}")
  set(CO_PATCH_SERIES_FILE "${CO_PATCH_DIR}/series-v${CO_CUTLASS_VERSION}")
else()
  set(CO_PATCH_SERIES_FILE "${CO_PATCH_DIR}/series")
endif()
file(STRINGS "${CO_PATCH_SERIES_FILE}" _series_lines)
set(CO_PATCH_LIST "")
foreach(_line IN LISTS _series_lines)
  string(STRIP "${_line}" _line)
  if(_line STREQUAL "" OR _line MATCHES "^#")
    continue()
  endif()
  list(APPEND CO_PATCH_LIST "${_line}")
endforeach()

# Re-run configure (and so re-patch) whenever the series or a patch changes.
file(GLOB_RECURSE _patch_files "${CO_PATCH_DIR}/*.patch" "${CO_PATCH_DIR}/series*")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_patch_files} "${_source_version_h}")

# co_patched_tree(<out_root> <patch>...): the pristine header subtrees with <patch>... (names as in the series
# file, relative to patch/) applied in order, synced into <out_root>. Every call patches a fresh copy (a removed
# patch never lingers), then copies into <out_root> only the files whose content changed, so a re-configure does
# not recompile. Hunks outside the header subtrees (tests, CHANGELOG) are for the upstream PR, not this build.
# Sets <out_root>_CHANGED_BY in the caller's scope: the patches that touched a header subtree (the others, such
# as test-only commits, leave the headers exactly as the patch before them did).
function(co_patched_tree out_root)
  set(_stage "${out_root}-stage")
  file(REMOVE_RECURSE "${_stage}")
  foreach(_sub IN LISTS CO_CUTLASS_SUBTREES)
    get_filename_component(_parent "${_stage}/${_sub}" DIRECTORY)
    file(COPY "${CO_CUTLASS_ROOT}/${_sub}" DESTINATION "${_parent}")
  endforeach()
  # Its own repository, so `git apply` never resolves paths against an enclosing checkout.
  execute_process(COMMAND "${GIT_EXECUTABLE}" init -q WORKING_DIRECTORY "${_stage}")
  set(_include_args "")
  foreach(_sub IN LISTS CO_CUTLASS_SUBTREES)
    list(APPEND _include_args "--include=${_sub}/*")
  endforeach()
  set(_changed_by "")
  foreach(_p IN LISTS ARGN)
    set(_file "${CO_PATCH_DIR}/${_p}")
    if(NOT EXISTS "${_file}")
      message(FATAL_ERROR "${CO_PATCH_SERIES_FILE} lists ${_p}, which is not in patch/")
    endif()
    execute_process(
      COMMAND "${GIT_EXECUTABLE}" apply --numstat ${_include_args} "${_file}"
      WORKING_DIRECTORY "${_stage}" OUTPUT_VARIABLE _numstat ERROR_QUIET)
    if(NOT _numstat STREQUAL "")
      list(APPEND _changed_by "${_p}")
    endif()
    execute_process(
      COMMAND "${GIT_EXECUTABLE}" apply --verbose ${_include_args} "${_file}"
      WORKING_DIRECTORY "${_stage}"
      RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR
        "patch/${_p} does not apply to CUTLASS ${CO_CUTLASS_VERSION} (${CO_CUTLASS_ROOT}).\n"
        "git apply says (file and hunk):\n${_err}${_out}")
    endif()
  endforeach()
  foreach(_sub IN LISTS CO_CUTLASS_SUBTREES)
    execute_process(COMMAND "${CMAKE_COMMAND}" -E copy_directory_if_different "${_stage}/${_sub}" "${out_root}/${_sub}"
                    RESULT_VARIABLE _rc)
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "could not sync the patched CUTLASS tree into ${out_root}")
    endif()
  endforeach()
  set(${out_root}_CHANGED_BY "${_changed_by}" PARENT_SCOPE)
endfunction()

set(CO_PATCHED_ROOT "${CMAKE_BINARY_DIR}/cutlass-patched")
co_patched_tree("${CO_PATCHED_ROOT}" ${CO_PATCH_LIST})
foreach(_p IN LISTS CO_PATCH_LIST)
  message(STATUS "cutlass-overhead: applied patch/${_p}")
endforeach()
set(CO_PATCHED_INCLUDES "${CO_PATCHED_ROOT}/include" "${CO_PATCHED_ROOT}/tools/util/include")
list(LENGTH CO_PATCH_LIST _n)
message(STATUS "cutlass-overhead: CUTLASS ${CO_CUTLASS_VERSION} from ${CO_CUTLASS_ORIGIN}; "
               "${_n} patch(es) from ${CO_PATCH_SERIES_FILE}")
