// The two loads (pinned copies, a spinning kernel) and the measurements taken while one is in flight.
#include "load.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "doctor.h"
#include "fail.h"

namespace co::doctor {

Load::Load(bool copies, std::size_t bytes, double ms) {
  check(cudaStreamCreateWithFlags(stream_.out(), cudaStreamNonBlocking), "cudaStreamCreate (load)");
  if (!copies) {
    check(launch_spin(stream_.get(), ms), "spin kernel");
    return;
  }
  check(cudaMallocHost(host_.out(), bytes), "cudaMallocHost (load)");
  void* dev = nullptr;
  check(cudaMalloc(&dev, bytes), "cudaMalloc (load)");
  dev_.reset(dev);
  std::memset(host_.get(), 1, bytes);
  Clock::time_point t0 = Clock::now();
  check(cudaMemcpyAsync(dev, host_.get(), bytes, cudaMemcpyHostToDevice, stream_.get()), "cudaMemcpyAsync (load)");
  check(cudaStreamSynchronize(stream_.get()), "load copy");
  copy_ms_ = us_since(t0) / 1e3;
  int n = static_cast<int>(std::ceil(ms / std::max(copy_ms_, 0.01)));
  for (int i = 0; i < std::min(n, 100000); ++i) {
    check(cudaMemcpyAsync(dev, host_.get(), bytes, cudaMemcpyHostToDevice, stream_.get()), "cudaMemcpyAsync (load)");
  }
}

// A destructor cannot report: the copies' errors, if any, surface at the next checked call on the device.
Load::~Load() { (void) cudaStreamSynchronize(stream_.get()); }

UnderLoad under_load(bool copies, Workload const& w, Options const& o, cudaStream_t s,
                     std::function<void()> const& attr_gemm, std::function<void()> const& launch_empty) {
  UnderLoad u;
  Load load(copies, std::size_t(o.load_mib) << 20, o.load_ms);
  u.copy_ms = load.copy_ms();
  u.seed = bench_mode(w, co::Mode::kSeed, true, o, s);
  u.attr_gemm = per_call(attr_gemm, o.calls, o.rounds, nullptr);
  u.empty_launch = per_call(launch_empty, o.calls, o.rounds, s);
  u.in_flight_after = load.in_flight();
  return u;
}

}  // namespace co::doctor
