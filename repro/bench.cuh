// One benchmark loop for every GEMM variant and mode (see Mode in gemm_api.h). Included by the
// variant's .cu after its CUTLASS types, so it compiles against the same CUTLASS tree.
#pragma once

#include <chrono>
#include <string>

#include "cutlass/cutlass.h"
#include "cutlass/version.h"
#include "cutlass/util/device_memory.h"

#include "gemm_api.h"
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

inline void cuda_check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}

template <std::size_t N>
struct ParamBlock {
  alignas(16) unsigned char bytes[N];
};

template <std::size_t N>
__global__ void empty_kernel(__grid_constant__ ParamBlock<N> const) {}

// call() recorded into a graph that is never launched (BenchOptions::capture_each_call).
template <class Call>
void call_captured(Call&& call, cudaStream_t stream) {
  cuda_check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed), "cudaStreamBeginCapture");
  cudaGraph_t graph = nullptr;
  try {
    call();
  } catch (...) {
    cudaStreamEndCapture(stream, &graph);
    if (graph) cudaGraphDestroy(graph);
    throw;
  }
  cuda_check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cuda_check(cudaGraphDestroy(graph), "cudaGraphDestroy");
}

// Times `iterations` calls of `call()`; see BenchResult for what each number means.
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
  cuda_check(cudaStreamSynchronize(o.stream), "cudaStreamSynchronize");

  cudaEvent_t start, stop;
  cuda_check(cudaEventCreate(&start), "cudaEventCreate");
  cuda_check(cudaEventCreate(&stop), "cudaEventCreate");
  PhaseTimes phases;
  phase_sink() = &phases;
  cuda_check(cudaEventRecord(start, o.stream), "cudaEventRecord");
  Clock::time_point t0 = Clock::now();
  Clock::duration drained{};  // time spent draining before calls, excluded from host time
  for (int i = 0; i < o.iterations; ++i) {
    if (o.drain_between_calls) {
      Clock::time_point d0 = Clock::now();
      cudaStreamSynchronize(o.stream);
      drained += Clock::now() - d0;
    }
    call();
    if (o.sync_each_call) cudaStreamSynchronize(o.stream);
  }
  Clock::time_point t1 = Clock::now();
  cudaEventRecord(stop, o.stream);
  cudaError_t sync = cudaEventSynchronize(stop);
  Clock::time_point t2 = Clock::now();
  phase_sink() = nullptr;
  float gpu_ms = 0;
  cudaEventElapsedTime(&gpu_ms, start, stop);
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cuda_check(sync, "cudaEventSynchronize after the timed loop");

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
    return time_loop([&] {
      PhaseScope phase;
      phase.enter(Phase::kRun);
      empty_kernel<kBytes><<<1, 128, 0, o.stream>>>(ParamBlock<kBytes>{});
    }, o);
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
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cuda_check(cudaStreamBeginCapture(o.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  cutlass::Status launched = gemm.run(o.stream);
  cuda_check(cudaStreamEndCapture(o.stream, &graph), "cudaStreamEndCapture");
  CUTLASS_CHECK(launched);
  cuda_check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  BenchResult r = time_loop([&] {
    PhaseScope phase;
    phase.enter(Phase::kRun);
    cudaGraphLaunch(exec, o.stream);
  }, o);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  return r;
}

}  // namespace co
