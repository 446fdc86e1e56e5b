// The driver side of the "host path on Hopper" build (see redirect.h). Compiled without redirect.h.
//
// sm_90's driver rejects the sub-byte TMA data types the NVFP4 mainloop asks for. Their global layout
// is plain packed bytes, so the same tensor is encoded as UINT8 with the innermost extent and box
// converted to bytes; strides are already in bytes. The descriptor describes the same global bytes;
// its shared-memory side differs, which does not matter because the kernel never runs.
#include "driver_stand_in.h"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstring>
#include <mutex>

namespace co::hopper {
namespace {

std::atomic<PFN_cuTensorMapEncodeTiled_v12000> g_real_encode{nullptr};
std::mutex g_mutex;
std::vector<std::array<uint8_t, 128>> g_descriptors;

// Bytes of `elements` packed sub-byte values, or 0 if `type` is not a sub-byte type.
uint64_t packed_bytes(CUtensorMapDataType type, uint64_t elements) {
  switch (type) {
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B:
    case CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN16B: return elements / 2;      // 16 x 4 bit = 8 bytes
    case CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B: return elements * 3 / 4;  // 16 x 6 bit = 12 bytes
    default: return 0;
  }
}

CUresult CUDAAPI encode_stand_in(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, void* address,
                                 cuuint64_t const* dims, cuuint64_t const* strides, cuuint32_t const* box,
                                 cuuint32_t const* element_strides, CUtensorMapInterleave interleave,
                                 CUtensorMapSwizzle swizzle, CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob) {
  cuuint64_t dims_b[5];
  cuuint32_t box_b[5];
  if (packed_bytes(type, dims[0]) != 0 && rank >= 1 && rank <= 5) {
    std::memcpy(dims_b, dims, rank * sizeof(cuuint64_t));
    std::memcpy(box_b, box, rank * sizeof(cuuint32_t));
    dims_b[0] = packed_bytes(type, dims[0]);
    box_b[0] = static_cast<cuuint32_t>(packed_bytes(type, box[0]));
    dims = dims_b;
    box = box_b;
    type = CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  CUresult r = g_real_encode.load()(map, type, rank, address, dims, strides, box, element_strides, interleave,
                                    swizzle, l2, oob);
  if (r == CUDA_SUCCESS) {
    std::lock_guard<std::mutex> lock(g_mutex);
    if (g_descriptors.size() < 1024) {
      std::array<uint8_t, 128> bytes;
      std::memcpy(bytes.data(), map, 128);
      g_descriptors.push_back(bytes);
    }
  }
  return r;
}

void substitute(char const* symbol, void** fn) {
  if (*fn != nullptr && std::strcmp(symbol, "cuTensorMapEncodeTiled") == 0) {
    g_real_encode.store(reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(*fn));
    *fn = reinterpret_cast<void*>(&encode_stand_in);
  }
}

}  // namespace

std::vector<std::array<uint8_t, 128>> encoded_descriptors() {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_descriptors;
}

}  // namespace co::hopper

#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

// The real runtime lookups, so the calls being measured stay the calls CUTLASS makes.
extern "C" cudaError_t co_stand_in_get_driver_entry_point(char const* symbol, void** fn, unsigned long long flags,
                                                          cudaDriverEntryPointQueryResult* status) {
  cudaError_t e = cudaGetDriverEntryPoint(symbol, fn, flags, status);
  if (e == cudaSuccess) co::hopper::substitute(symbol, fn);
  return e;
}

extern "C" cudaError_t co_stand_in_get_driver_entry_point_by_version(char const* symbol, void** fn,
                                                                     unsigned int cuda_version,
                                                                     unsigned long long flags,
                                                                     cudaDriverEntryPointQueryResult* status) {
  cudaError_t e = cudaGetDriverEntryPointByVersion(symbol, fn, cuda_version, flags, status);
  if (e == cudaSuccess) co::hopper::substitute(symbol, fn);
  return e;
}
