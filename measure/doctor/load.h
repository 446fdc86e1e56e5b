// Load on another stream while the seed runs: does work in flight elsewhere on the GPU slow the host
// side of a call (the machine ran other streams beside the GEMM)?
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <functional>

#include "cuda_handles.h"
#include "modes.h"
#include "options.h"
#include "rotation.h"  // co::DeviceBuffer
#include "stats.h"
#include "workload.h"

namespace co::doctor {

// A stream kept busy for about `ms`: back-to-back pinned host-to-device copies of `bytes`, or one
// spinning kernel. The destructor waits for the load before its buffers go.
class Load {
 public:
  Load(bool copies, std::size_t bytes, double ms);
  ~Load();
  Load(Load const&) = delete;
  Load& operator=(Load const&) = delete;

  bool in_flight() const { return cudaStreamQuery(stream_.get()) == cudaErrorNotReady; }
  double copy_ms() const { return copy_ms_; }  // one copy, timed before the load starts

 private:
  using PinnedBuffer = co::CudaHandle<void*, cudaFreeHost>;
  // Declared in the order they are made; destroyed in reverse: device buffer, pinned buffer, stream.
  co::Stream stream_;
  PinnedBuffer host_;
  co::DeviceBuffer dev_;
  double copy_ms_ = 0;
};

struct UnderLoad {
  ModeResult seed;
  Spread attr_gemm, empty_launch;
  bool in_flight_after = false;  // false: the load ended before the measurements did
  double copy_ms = 0;
};

// The seed (drained), the GEMM's attribute call and an empty launch, with one Load in flight.
UnderLoad under_load(bool copies, Workload const& w, Options const& o, cudaStream_t s,
                     std::function<void()> const& attr_gemm, std::function<void()> const& launch_empty);

}  // namespace co::doctor
