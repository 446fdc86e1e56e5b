// Force-included (nvcc -include) into the NVFP4 translation unit of the "host path on Hopper" build
// only. It redirects CUTLASS's driver entry-point lookups to driver_stand_in.cpp, which performs the
// real lookup (so CUPTI sees and counts the same cudaGetDriverEntryPoint[ByVersion] calls) and, for
// cuTensorMapEncodeTiled, hands back a wrapper that encodes FP4 descriptors through a byte-layout
// stand-in the sm_90 driver accepts. Nothing else in CUTLASS or the code changes.
// Measurement only: no tensor-core math ever runs in this build.
#pragma once

#include <cuda_runtime_api.h>

extern "C" cudaError_t co_stand_in_get_driver_entry_point(char const* symbol, void** fn, unsigned long long flags,
                                                          cudaDriverEntryPointQueryResult* status);
extern "C" cudaError_t co_stand_in_get_driver_entry_point_by_version(char const* symbol, void** fn,
                                                                     unsigned int cuda_version,
                                                                     unsigned long long flags,
                                                                     cudaDriverEntryPointQueryResult* status);

#define cudaGetDriverEntryPoint co_stand_in_get_driver_entry_point
#define cudaGetDriverEntryPointByVersion co_stand_in_get_driver_entry_point_by_version
