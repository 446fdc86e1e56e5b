// Compiled (never run) by tests/test_host_configurations.py against the patched CUTLASS headers, once per
// host configuration CUTLASS supports: the host code the series adds, instantiated where it is a template.
#include <cuda.h>
#include <cuda_runtime.h>
#if defined(CO_SIMULATE_QNX_SAFETY)
// After the CUDA headers, which do not build for QNX on Linux: CUTLASS's own QNX guards see these.
#define __QNX__ 800
#define NV_IS_SAFETY 1
#endif

#include "cutlass/cutlass.h"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/cluster_launch.hpp"
#include "cutlass/cuda_host_adapter.hpp"
#include "cute/tensor.hpp"
#include "cute/atom/copy_traits_sm90_tma.hpp"
#if defined(CO_EXPECT_ATTRIBUTE_RECORD)
#include "cutlass/detail/kernel_attribute_once.hpp"
#endif

struct Tag {};

int main() {
#if defined(CO_EXPECT_ATTRIBUTE_RECORD)
  unsigned long long id = cutlass::detail::current_context_id();
  cudaError_t set = cutlass::detail::KernelAttributeOnce<Tag, 0>::set([] { return cudaSuccess; });
#else
  unsigned long long id = 0;
  cudaError_t set = cudaSuccess;
#endif
  CUtensorMap map;
  CUresult encode = CUTLASS_CUDA_DRIVER_WRAPPER_CALL(cuTensorMapEncodeTiled)(
      &map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, nullptr, nullptr, nullptr, nullptr, nullptr,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_L2_PROMOTION_NONE,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  bool rule = cutlass::ClusterLauncher::is_non_portable_cluster_size(dim3{4, 4, 1});
  return int(id) + int(set) + int(encode) + int(rule);
}
