// Operands that change every call, as a framework's allocator hands them out: `count` distinct device
// buffers of one operand, cycled through by call index. Slot 0 is the caller's own buffer; slots 1..count-1
// are copies of it that this object allocates and frees (RAII), so every slot holds the same values.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_handles.h"

namespace co {

struct CudaFree {
  void operator()(void* p) const noexcept { cudaFree(p); }  // status ignored: a deleter cannot report it
};
using DeviceBuffer = std::unique_ptr<void, CudaFree>;

inline DeviceBuffer device_buffer(std::size_t bytes) {
  void* p = nullptr;
  cuda_check(cudaMalloc(&p, bytes), "cudaMalloc (a benchmark buffer)");
  return DeviceBuffer(p);
}

// A zero-filled device buffer (weights and activations of the layer benchmark: their values do not
// change what the host does, and zeros are never NaN). The fill may still run when this returns: the caller
// synchronizes once its buffers are made.
inline DeviceBuffer zeroed_buffer(std::size_t bytes) {
  DeviceBuffer b = device_buffer(bytes);
  cuda_check(cudaMemset(b.get(), 0, bytes), "cudaMemset (a benchmark buffer)");
  return b;
}

class Rotation {
 public:
  // `base` may be null only with count == 1 (nothing is copied then).
  Rotation(void const* base, std::size_t bytes, int count) : base_(const_cast<void*>(base)) {
    if (count < 1) throw std::invalid_argument("rotation must be >= 1, got " + std::to_string(count));
    for (int i = 1; i < count; ++i) {
      copies_.push_back(device_buffer(bytes));
      cuda_check(cudaMemcpy(copies_.back().get(), base, bytes, cudaMemcpyDeviceToDevice),
                 "cudaMemcpy (a rotated operand)");
    }
    // A device-to-device cudaMemcpy returns before it completes, and the benchmark's stream does not
    // synchronize with the legacy stream: wait here, outside any timed loop.
    if (count > 1) cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after copying operands");
  }
  int count() const { return static_cast<int>(copies_.size()) + 1; }
  void* at(long long call) const {
    int slot = static_cast<int>(call % count());
    return slot == 0 ? base_ : copies_[slot - 1].get();
  }

 private:
  void* base_;
  std::vector<DeviceBuffer> copies_;
};

}  // namespace co
