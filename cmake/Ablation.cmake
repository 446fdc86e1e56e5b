# CO_BUILD_ABLATION: the SM90 stand-in compiled against CUTLASS with each prefix of the patch series applied, as
# variants _sm90_prefix<k> (k = patches applied), so the report can price each commit on its own.
#
# Inputs:  CO_PATCH_LIST (read from the series file at configure time, whatever the series is),
#          co_patched_tree (cmake/CutlassSource.cmake), co_add_variant (CMakeLists.txt), CO_SM90_ARCHS.
# Outputs: CO_ABLATION_PY, a Python literal for _build_info.ABLATION: one dict per variant built, in series order;
#          CO_ABLATION_WITHOUT_PY, for _build_info.ABLATION_WITHOUT: the variant CO_ABLATION_WITHOUT adds (below).
#
# A prefix is built only where its last patch changes a header (test-only commits leave the headers as the
# prefix before them did); the full series is the "patched" variant already, so it is not built twice.

set(CO_ABLATION_PY "[]")
set(CO_ABLATION_WITHOUT_PY "[]")
if(NOT CO_BUILD_ABLATION OR NOT CO_SM90_ARCHS)
  return()
endif()

# "[PATCH 3/8] device_memory: no cudaMalloc for ..." -> "device_memory: no cudaMalloc for ...". A long subject is
# folded over several header lines (RFC 2822: continuation lines start with a space); they are joined again.
function(co_patch_subject patch out_var)
  file(READ "${CO_PATCH_DIR}/${patch}" _text LIMIT 4096)
  string(REGEX MATCH "\nSubject: [^\n]*(\n [^\n]*)*" _subject "\n${_text}")
  string(REGEX REPLACE "\n +" " " _subject "${_subject}")
  string(STRIP "${_subject}" _subject)
  string(REGEX REPLACE "^Subject: (\\[[^]]*\\] *)?" "" _subject "${_subject}")
  string(REPLACE "\"" "'" _subject "${_subject}")
  string(REPLACE "\\" "/" _subject "${_subject}")
  string(REPLACE ";" "," _subject "${_subject}")
  set(${out_var} "${_subject}" PARENT_SCOPE)
endfunction()

# Which patches change the headers (asked of git on the fully patched stage: --numstat applies nothing).
set(_changing "")
foreach(_p IN LISTS CO_PATCH_LIST)
  execute_process(
    COMMAND "${GIT_EXECUTABLE}" apply --numstat --include=include/* --include=tools/util/include/*
            "${CO_PATCH_DIR}/${_p}"
    WORKING_DIRECTORY "${CO_PATCHED_ROOT}-stage" OUTPUT_VARIABLE _numstat ERROR_QUIET)
  if(NOT _numstat STREQUAL "")
    list(APPEND _changing "${_p}")
  endif()
endforeach()
list(LENGTH CO_PATCH_LIST _count)
list(LENGTH _changing _n_changing)
if(_n_changing EQUAL 0)
  message(FATAL_ERROR "CO_BUILD_ABLATION: no patch in ${CO_PATCH_SERIES_FILE} changes a CUTLASS header")
endif()
list(GET _changing -1 _final)  # from here on the headers are the full series': the "patched" variant

set(_entries "")
set(_prefix "")
set(_k 0)
set(_built "original")  # the variant whose headers the prefix so far has
foreach(_p IN LISTS CO_PATCH_LIST)
  math(EXPR _k "${_k} + 1")
  list(APPEND _prefix "${_p}")
  set(_built_before_${_k} "${_built}")
  if(NOT _p IN_LIST _changing)
    message(STATUS "cutlass-overhead: ablation skips prefix ${_k} (patch/${_p} changes no header)")
    continue()
  endif()
  set(_built "prefix${_k}")
  co_patch_subject("${_p}" _subject)
  if(_p STREQUAL _final)
    list(APPEND _entries "{\"variant\": \"patched\", \"patches\": ${_count}, \"last\": \"${_p}\", \"subject\": \"${_subject}\"}")
    break()
  endif()
  set(_root "${CMAKE_BINARY_DIR}/cutlass-prefix${_k}")
  co_patched_tree("${_root}" ${_prefix})
  co_add_variant(sm90 prefix${_k} INCLUDES "${_root}/include" "${_root}/tools/util/include" ARCHS ${CO_SM90_ARCHS})
  list(APPEND _entries "{\"variant\": \"prefix${_k}\", \"patches\": ${_k}, \"last\": \"${_p}\", \"subject\": \"${_subject}\"}")
  message(STATUS "cutlass-overhead: ablation variant prefix${_k} = patches 1..${_k} (up to ${_p})")
endforeach()
string(REPLACE ";" ", " _entries "${_entries}")
set(CO_ABLATION_PY "[${_entries}]")

# CO_ABLATION_WITHOUT (a PR folder of the series): one more variant, without_<pr>, that prices the next PR's
# change without this one: the series through the end of the next PR folder, this folder's patches left out (PR 4's
# kernel attribute record without PR 3's entry-point cache: each initialize() then looks cuCtxGetId up). Its
# baseline is the ablation's build before this folder's first patch ("base"). Nothing when the series has no such
# folder or the next PR changes no header.
set(CO_ABLATION_WITHOUT "pr3-entry-points-once" CACHE STRING
    "A PR folder of patch/ that the ablation also leaves out of the next PR's prefix (empty: none)")
set(_kept "")
set(_state before)  # before the folder, in it, in the next PR's folder, done
set(_k 0)
foreach(_p IN LISTS CO_PATCH_LIST)
  math(EXPR _k "${_k} + 1")
  string(REGEX REPLACE "/.*" "" _folder "${_p}")
  if(_state STREQUAL "before" AND _folder STREQUAL CO_ABLATION_WITHOUT)
    set(_state in)
    set(_base "${_built_before_${_k}}")
  elseif(_state STREQUAL "in" AND NOT _folder STREQUAL CO_ABLATION_WITHOUT)
    set(_state next)
    set(_next "${_folder}")
  elseif(_state STREQUAL "next" AND NOT _folder STREQUAL _next)
    break()
  endif()
  if(NOT _state STREQUAL "in")
    list(APPEND _kept "${_p}")
  endif()
  if(_state STREQUAL "next" AND _p IN_LIST _changing)
    set(_last "${_p}")
  endif()
endforeach()
if(_last AND _base)
  string(REGEX REPLACE "-.*" "" _name "${CO_ABLATION_WITHOUT}")
  set(_root "${CMAKE_BINARY_DIR}/cutlass-without-${_name}")
  co_patched_tree("${_root}" ${_kept})
  co_add_variant(sm90 without_${_name} INCLUDES "${_root}/include" "${_root}/tools/util/include" ARCHS ${CO_SM90_ARCHS})
  co_patch_subject("${_last}" _subject)
  set(CO_ABLATION_WITHOUT_PY "[{\"variant\": \"without_${_name}\", \"without\": \"${CO_ABLATION_WITHOUT}\", \"base\": \"${_base}\", \"last\": \"${_last}\", \"subject\": \"${_subject}\"}]")
  message(STATUS "cutlass-overhead: ablation variant without_${_name} = through ${_last}, without patch/${CO_ABLATION_WITHOUT}")
endif()
