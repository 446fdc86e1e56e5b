// Work in flight on another stream while the issue's pattern runs: pinned host-to-device copies back to back, or one
// spinning kernel. Does a busy GPU slow the host side of a call? (The issue's machine ran other streams beside
// the GEMM.) The doctor's copy-load and kernel-load suspects (python/cutlass_overhead/suspects.py).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "co_trace.h"

namespace co::trace {
namespace {

__global__ void spin_kernel(long long cycles) {
  long long start = clock64();
  while (clock64() - start < cycles) {
  }
}

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string("load: ") + what + ": " + cudaGetErrorName(e));
  }
}

}  // namespace

Load::Load(bool copies, std::size_t bytes, double ms) {
  if (!(ms > 0)) throw std::invalid_argument("load: ms must be > 0");
  if (copies && bytes == 0) throw std::invalid_argument("load: bytes must be > 0 for a copy load");
  try {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    if (!copies) {
      int device = 0, khz = 0;
      check(cudaGetDevice(&device), "cudaGetDevice");
      check(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, device), "cudaDeviceGetAttribute");
      spin_kernel<<<1, 32, 0, stream_>>>(static_cast<long long>(ms * (khz > 0 ? khz : 1500000)));
      check(cudaGetLastError(), "spin kernel");
      return;
    }
    check(cudaMallocHost(&host_, bytes), "cudaMallocHost");
    check(cudaMalloc(&device_, bytes), "cudaMalloc");
    std::memset(host_, 1, bytes);
    // One copy timed alone sets how many keep the stream busy for about `ms`.
    auto t0 = std::chrono::steady_clock::now();
    check(cudaMemcpyAsync(device_, host_, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
    copy_ms_ = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    int n = static_cast<int>(std::ceil(ms / std::max(copy_ms_, 0.01)));
    for (int i = 0; i < std::min(n, 100000); ++i) {
      check(cudaMemcpyAsync(device_, host_, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync");
    }
  } catch (...) {
    release();
    throw;
  }
}

Load::~Load() { release(); }

bool Load::in_flight() const { return cudaStreamQuery(stream_) == cudaErrorNotReady; }

// Waits for the load before its buffers go. A destructor cannot report: an error of the copies, if any,
// surfaces at the next checked call.
void Load::release() noexcept {
  if (stream_) (void) cudaStreamSynchronize(stream_);
  if (device_) (void) cudaFree(device_);
  if (host_) (void) cudaFreeHost(host_);
  if (stream_) (void) cudaStreamDestroy(stream_);
  stream_ = nullptr;
  device_ = host_ = nullptr;
}

}  // namespace co::trace
