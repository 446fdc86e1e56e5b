# co_add_doctor(kind name obj archs): the standalone doctor (measure/doctor/) linked against one
# variant's objects, installed as <package>/bin/co_doctor_<kind>_<name>. No Python at run time.
set(CO_DOCTOR_DIR "${PROJECT_SOURCE_DIR}/measure/doctor")

function(co_add_doctor kind name obj archs)
  set(exe co_doctor_${kind}_${name})
  set(_real "")
  foreach(_a IN LISTS archs)
    list(APPEND _real ${_a}-real)
  endforeach()
  # Every doctor source is compiled per executable: several depend on the variant (variant.h picks
  # `api` from CO_DOCTOR_KIND_<kind>), and each doctor is small enough to keep its own copies.
  set(_sources "")
  foreach(_s IN ITEMS doctor_main.cpp children.cpp device.cpp evidence.cpp fail.cpp json.cpp load.cpp
                      matrix.cpp modes.cpp options.cpp stats.cpp workload.cpp measurements.cu system_info.cpp)
    list(APPEND _sources ${CO_DOCTOR_DIR}/${_s})
  endforeach()
  add_executable(${exe} ${_sources} $<TARGET_OBJECTS:${obj}>)
  target_include_directories(${exe} PRIVATE repro ${CO_DOCTOR_DIR})
  string(REPLACE ";" "," _archs_csv "${archs}")
  target_compile_definitions(${exe} PRIVATE CO_DOCTOR_KIND_${kind} CO_VARIANT_NAME="${kind}/${name}"
                                            CO_DOCTOR_ARCHS="${_archs_csv}")
  if(name MATCHES "^hopper_")
    target_compile_definitions(${exe} PRIVATE CO_NVFP4_HOST_PATH_ON_HOPPER=1)
  endif()
  target_compile_options(${exe} PRIVATE $<$<COMPILE_LANGUAGE:CUDA>:${CO_CUDA_FLAGS}>)
  set_target_properties(${exe} PROPERTIES CUDA_ARCHITECTURES "${_real}")
  # co_bench: bench.h and phase.hpp (measure/bench/); it brings co_trace (measure/trace/) with it.
  target_link_libraries(${exe} PRIVATE co_bench co_trace CUDA::cudart ${CMAKE_DL_LIBS})
  # CUTLASS 4.3.x calls cuDriverGetVersion by name (0002's v4.3.5 variant removes that). Forward it to
  # libcuda at run time instead of linking libcuda, so the doctor still starts (and says there is no
  # driver) on a machine without one.
  if(CO_CUTLASS_VERSION MATCHES "^4\\.3\\." AND NOT name MATCHES "patched$")
    target_sources(${exe} PRIVATE ${CO_DOCTOR_DIR}/driver_forward.cpp)
    target_include_directories(${exe} PRIVATE ${CUDAToolkit_INCLUDE_DIRS})
  endif()
  set_target_properties(${exe} PROPERTIES INSTALL_RPATH "$ORIGIN/..;${CUDAToolkit_LIBRARY_DIR}")
  install(TARGETS ${exe} RUNTIME DESTINATION ${CO_PKG}/bin)
endfunction()
