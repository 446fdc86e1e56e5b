# The issue's NVFP4 code compiled for sm_90a: a measurement-only build of its host path on Hopper,
# no tensor-core math. Every call ends in a captured, never-launched graph (the kernel has no sm_90
# code path), and the FP4 TMA descriptors are encoded through a byte-layout stand-in that the sm_90
# driver accepts (repro/host_path_on_hopper/). Off by default: it adds two NVFP4 compiles.
# The option itself is declared with the others in CMakeLists.txt.
if(NOT CO_NVFP4_HOST_PATH_ON_HOPPER)
  return()
endif()
if(NOT CO_SM90_ARCHS)
  message(FATAL_ERROR "CO_NVFP4_HOST_PATH_ON_HOPPER needs 90a in CO_CUDA_ARCHS")
endif()
set(_redirect "${PROJECT_SOURCE_DIR}/repro/host_path_on_hopper/redirect.h")
set(_stand_in repro/host_path_on_hopper/driver_stand_in.cpp)
set(_variants original patched)
if(CO_BUILD_EXPERIMENTS)
  list(APPEND _variants O0 O0_patched)  # host code -O0, as a CMake Debug build: the doctor's -O0 suspect
endif()
foreach(_v IN LISTS _variants)
  set(_inc ${CO_CUTLASS_INCLUDES})
  set(_opts "")
  if(_v MATCHES "patched$")
    set(_inc ${CO_PATCHED_INCLUDES})
  endif()
  if(_v MATCHES "^O0")
    set(_opts ${CO_O0_OPTIONS})
  endif()
  co_add_variant(nvfp4 hopper_${_v} INCLUDES ${_inc} ARCHS 90a SOURCES ${_stand_in}
                 DEFINES CO_NVFP4_HOST_PATH_ON_HOPPER=1 ${_defs} OPTIONS -include ${_redirect} ${_opts})
  # The module calls into the stand-in's statistics.
  target_compile_definitions(_nvfp4_hopper_${_v} PRIVATE CO_NVFP4_HOST_PATH_ON_HOPPER=1)
endforeach()
message(STATUS "cutlass-overhead: NVFP4 host path on Hopper (measurement only, no tensor-core math) enabled")
