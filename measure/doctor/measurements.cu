// Kernels the doctor needs beside the GEMM: an empty kernel (the attribute-call and launch baseline)
// and a spinning kernel (the "long kernel on another stream" load).
#include "doctor.h"

namespace co::doctor {
namespace {

__global__ void empty_kernel() {}

__global__ void spin_kernel(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

}  // namespace

void const* empty_kernel_function() { return reinterpret_cast<void const*>(&empty_kernel); }

cudaError_t launch_empty(cudaStream_t stream) {
  empty_kernel<<<1, 32, 0, stream>>>();
  return cudaGetLastError();
}

cudaError_t launch_spin(cudaStream_t stream, double ms) {
  int khz = 0, device = 0;
  cudaError_t e = cudaGetDevice(&device);
  if (e == cudaSuccess) e = cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device);
  if (e != cudaSuccess) return e;
  if (khz <= 0) khz = 1500000;
  spin_kernel<<<1, 32, 0, stream>>>(static_cast<long long>(ms * khz));
  return cudaGetLastError();
}

}  // namespace co::doctor
