// One benchmark loop for every GEMM variant and mode (see Mode in bench.h). Included by the
// variant's .cu (repro/) after its CUTLASS types, so it compiles against the same CUTLASS tree.
#pragma once

#include <chrono>
#include <string>

#include "cutlass/cutlass.h"
#include "cutlass/version.h"
#include "cutlass/util/device_memory.h"

#include "bench.h"
#include "cuda_handles.h"
#include "phase.hpp"

// The seed calls CUTLASS_CHECK; in a library it must throw (examples' version calls exit()).
#ifndef CUTLASS_CHECK
#define CUTLASS_CHECK(status)                                                              \
  do {                                                                                     \
    cutlass::Status co_status_ = (status);                                                 \
    if (co_status_ != cutlass::Status::kSuccess) {                                         \
      throw co::CutlassError(std::string(#status) + " failed: " +                          \
                             cutlassGetStatusString(co_status_));                          \
    }                                                                                      \
  } while (0)
#endif

namespace co {

template <std::size_t N>
struct ParamBlock {
  alignas(16) unsigned char bytes[N];
};

template <std::size_t N>
__global__ void empty_kernel(__grid_constant__ ParamBlock<N> const) {}

// call() recorded into a graph that is never launched (BenchOptions::capture_each_call). The guard
// ends the capture if call() throws, so the stream is usable again.
template <class Call>
void call_captured(Call&& call, cudaStream_t stream) {
  CaptureGuard capture(stream, cudaStreamCaptureModeRelaxed);
  call();
  capture.end();  // the returned Graph is destroyed here, unlaunched
}

// Times `iterations` calls of `call()`; see BenchResult for what each number means. Every CUDA call is
// checked; events and the phase sink are released on every way out (see cuda_handles.h, phase.hpp).
template <class Call>
BenchResult time_loop(Call&& plain_call, BenchOptions const& o) {
  using Clock = std::chrono::steady_clock;
  auto call = [&] {
    if (o.capture_each_call) {
      call_captured(plain_call, o.stream);
    } else {
      plain_call();
    }
  };
  for (int i = 0; i < o.warmup; ++i) call();
  cuda_check(cudaStreamSynchronize(o.stream), "cudaStreamSynchronize after the warm-up");

  Event start = make_event();
  Event stop = make_event();
  PhaseTimes phases;
  Clock::time_point t0, t1, t2;
  Clock::duration drained{};  // time spent draining before calls, excluded from host time
  {
    PhaseSinkGuard sink(&phases);
    cuda_check(cudaEventRecord(start.get(), o.stream), "cudaEventRecord(start)");
    t0 = Clock::now();
    for (int i = 0; i < o.iterations; ++i) {
      if (o.drain_between_calls) {
        Clock::time_point d0 = Clock::now();
        cuda_check(cudaStreamSynchronize(o.stream), "cudaStreamSynchronize before a call");
        drained += Clock::now() - d0;
      }
      call();
      if (o.sync_each_call) cuda_check(cudaStreamSynchronize(o.stream), "cudaStreamSynchronize after a call");
    }
    t1 = Clock::now();
    cuda_check(cudaEventRecord(stop.get(), o.stream), "cudaEventRecord(stop)");
    cuda_check(cudaEventSynchronize(stop.get()), "cudaEventSynchronize after the timed loop");
    t2 = Clock::now();
  }
  float gpu_ms = 0;
  cuda_check(cudaEventElapsedTime(&gpu_ms, start.get(), stop.get()), "cudaEventElapsedTime");

  BenchResult r;
  r.iterations = o.iterations;
  double n = o.iterations;
  r.host_ns_per_call = std::chrono::duration<double, std::nano>(t1 - t0 - drained).count() / n;
  r.loop_ns_per_iter = std::chrono::duration<double, std::nano>(t2 - t0).count() / n;
  r.gpu_ns_per_iter = gpu_ms * 1e6 / n;
  for (std::size_t p = 0; p < phases.ns.size(); ++p) r.phase_ns_per_call[p] = phases.ns[p] / n;
  return r;
}

// `seed()` runs the seed's pattern once; `make_args()` builds the same Arguments the seed builds.
template <class Gemm, class Seed, class MakeArgs>
BenchResult bench_gemm(Seed&& seed, MakeArgs&& make_args, BenchOptions const& o) {
  if (o.mode == Mode::kSeed) {
    return time_loop([&] { seed(); }, o);
  }
  if (o.mode == Mode::kInitializeRun) {
    return time_loop([&] {
      PhaseScope phase;
      Gemm gemm;
      phase.enter(Phase::kArgs);
      typename Gemm::Arguments args = make_args();
      phase.enter(Phase::kWorkspaceAlloc);
      cutlass::device_memory::allocation<uint8_t> workspace(Gemm::get_workspace_size(args));
      phase.enter(Phase::kInitialize);
      CUTLASS_CHECK(gemm.initialize(args, workspace.get(), o.stream));
      phase.enter(Phase::kRun);
      CUTLASS_CHECK(gemm.run(o.stream));
      phase.enter(Phase::kWorkspaceFree);
    }, o);
  }
  if (o.mode == Mode::kBareLaunch) {
    constexpr std::size_t kBytes = sizeof(typename Gemm::Params);
    BenchResult r = time_loop([&] {
      PhaseScope phase;
      phase.enter(Phase::kRun);
      empty_kernel<kBytes><<<1, 128, 0, o.stream>>>(ParamBlock<kBytes>{});
    }, o);
    // <<<>>> returns nothing; a failed launch is reported here, so the timed loop stays one launch per call.
    cuda_check(cudaGetLastError(), "empty kernel launch");
    return r;
  }
  if (o.mode != Mode::kFloor && o.mode != Mode::kGraph) {
    throw std::invalid_argument("unknown benchmark mode " + std::to_string(static_cast<int>(o.mode)));
  }
  // kFloor and kGraph: everything but the launch happens once, outside the timed loop.
  Gemm gemm;
  typename Gemm::Arguments args = make_args();
  cutlass::device_memory::allocation<uint8_t> workspace(Gemm::get_workspace_size(args));
  CUTLASS_CHECK(gemm.can_implement(args));
  CUTLASS_CHECK(gemm.initialize(args, workspace.get(), o.stream));
  if (o.mode == Mode::kFloor) {
    return time_loop([&] {
      PhaseScope phase;
      phase.enter(Phase::kRun);
      CUTLASS_CHECK(gemm.run(o.stream));
    }, o);
  }
  if (o.stream == nullptr) {
    throw std::invalid_argument("graph mode needs a non-default stream to capture on");
  }
  Graph graph;
  {
    CaptureGuard capture(o.stream, cudaStreamCaptureModeThreadLocal);
    cutlass::Status launched = gemm.run(o.stream);
    graph = capture.end();
    CUTLASS_CHECK(launched);
  }
  GraphExec exec;
  cuda_check(cudaGraphInstantiate(exec.out(), graph.get(), 0), "cudaGraphInstantiate");
  return time_loop([&] {
    PhaseScope phase;
    phase.enter(Phase::kRun);
    cuda_check(cudaGraphLaunch(exec.get(), o.stream), "cudaGraphLaunch");
  }, o);
}

}  // namespace co
