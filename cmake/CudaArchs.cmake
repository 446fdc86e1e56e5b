# Which CUDA architectures to build, and which of them the found nvcc can build at all.
# co_split_cuda_archs(<nvcc version> <archs>): sets CO_SM90_ARCHS (the SM90 stand-in) and CO_NVFP4_ARCHS (the issue's
# NVFP4 code) in the caller's scope, or stops with one message that names the architecture to use instead.
# Thor is sm_110a from CUDA 13 on (JetPack 7) and was sm_101a in CUDA 12.8/12.9 (DRIVE OS); neither nvcc knows the
# other's name, and nvcc would otherwise fail only at compile time ("Unsupported gpu architecture 'compute_101a'").
function(co_thor_arch nvcc_version out)
  if(nvcc_version VERSION_GREATER_EQUAL 13.0)
    set(${out} 110a PARENT_SCOPE)
  else()
    set(${out} 101a PARENT_SCOPE)
  endif()
endfunction()

function(co_split_cuda_archs nvcc_version archs)
  co_thor_arch("${nvcc_version}" _thor)
  set(_sm90 "")
  set(_nvfp4 "")
  foreach(_a IN LISTS archs)
    if(_a STREQUAL "90a")
      list(APPEND _sm90 ${_a})
    elseif(_a MATCHES "^1(00|01|03|10)a$")
      if((_a STREQUAL "101a" OR _a STREQUAL "110a") AND NOT _a STREQUAL _thor)
        message(FATAL_ERROR "CO_CUDA_ARCHS entry '${_a}': nvcc ${nvcc_version} names Thor sm_${_thor}; "
                            "use CO_CUDA_ARCHS=${_thor} (110a from CUDA 13, 101a with CUDA 12.8/12.9)")
      endif()
      list(APPEND _nvfp4 ${_a})
    else()
      message(FATAL_ERROR "CO_CUDA_ARCHS entry '${_a}': the SM90 stand-in needs 90a, NVFP4 needs 100a/103a/${_thor}")
    endif()
  endforeach()
  set(CO_SM90_ARCHS "${_sm90}" PARENT_SCOPE)
  set(CO_NVFP4_ARCHS "${_nvfp4}" PARENT_SCOPE)
endfunction()

# cmake -DNVCC_VERSION=13.0 -DARCHS=101a -P cmake/CudaArchs.cmake: the check alone (tests/test_cuda_archs.py).
if(CMAKE_SCRIPT_MODE_FILE STREQUAL CMAKE_CURRENT_LIST_FILE)
  co_split_cuda_archs("${NVCC_VERSION}" "${ARCHS}")
  message(STATUS "sm90: ${CO_SM90_ARCHS}; nvfp4: ${CO_NVFP4_ARCHS}")
endif()
