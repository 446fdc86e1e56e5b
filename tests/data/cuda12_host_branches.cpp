// Compiled host-only (g++ -fsyntax-only, never run) by tests/test_host_configurations.py against the patched
// CUTLASS headers and CUDA 12.8's headers, with __CUDACC_VER_MAJOR__=12: the series' CUDA 12.x branches
// (cudaGetDriverEntryPoint without a version, the unversioned PFN_ names), which no CUDA 12 nvcc here compiles.
#include <cuda.h>
#include <cuda_runtime.h>

#include "cutlass/cuda_host_adapter.hpp"
#include "cutlass/detail/kernel_attribute_once.hpp"

struct Tag {};

int main() {
  unsigned long long id = cutlass::detail::current_context_id();
  cudaError_t set = cutlass::detail::KernelAttributeOnce<Tag, 0>::set([] { return cudaSuccess; });
  CUtensorMap map;
  CUresult encode = CUTLASS_CUDA_DRIVER_WRAPPER_CALL(cuTensorMapEncodeTiled)(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, nullptr, nullptr, nullptr, nullptr, nullptr,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return int(id) + int(set) + int(encode);
}
