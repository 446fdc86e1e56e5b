// One benchmark loop for every GEMM variant and mode (see Mode in bench.h). Included by the
// variant's .cu (repro/) after its CUTLASS types, so it compiles against the same CUTLASS tree.
#pragma once

#include <chrono>
#include <string>
#include <type_traits>

#include "cutlass/cutlass.h"
#include "cutlass/version.h"
#include "cutlass/util/device_memory.h"

#include "bench.h"
#include "cuda_handles.h"
#include "phase.hpp"
#include "rotation.h"

// The issue's code calls CUTLASS_CHECK; in a library it must throw (examples' version calls exit()).
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

// The GEMM kernel's cluster shape where it is static (the SM90 stand-in's 2x1x1), else 1x1x1.
template <class GemmKernel, class = void>
struct StaticClusterShape {
  static dim3 get() { return dim3(1, 1, 1); }
};

template <class GemmKernel>
struct StaticClusterShape<GemmKernel, std::void_t<typename GemmKernel::ClusterShape>> {
  static dim3 get() {
    using Shape = typename GemmKernel::ClusterShape;
    if constexpr (cute::is_static<Shape>::value) {
      return dim3(cute::size<0>(Shape{}), cute::size<1>(Shape{}), cute::size<2>(Shape{}));
    } else {
      return dim3(1, 1, 1);
    }
  }
};

// The cluster-dimension launch attribute of a cluster shape, as ClusterLauncher sets it.
inline cudaLaunchAttribute cluster_dimension(dim3 cluster) {
  cudaLaunchAttribute attribute{};
  attribute.id = cudaLaunchAttributeClusterDimension;
  attribute.val.clusterDim.x = cluster.x;
  attribute.val.clusterDim.y = cluster.y;
  attribute.val.clusterDim.z = cluster.z;
  return attribute;
}

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
  Clock::duration drained{};  // time spent draining before calls (drain_between_calls), not host time
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

// f(call) where f takes the call's index (a variant whose operands can rotate), else f().
template <class F>
decltype(auto) with_call(F& f, long long call) {
  if constexpr (std::is_invocable_v<F&, long long>) {
    return f(call);
  } else {
    return f();
  }
}

// One GEMM problem called in one of the modes that take this call's Arguments: initialize_run,
// update_run, kept_gemm (which ignores them: its Params were built once, from the first call's). The issue_pattern
// mode is the variant's own function. Setup that happens once (kept_gemm, update_run) runs in the constructor,
// outside any timed loop.
template <class Gemm>
class ModeCall {
 public:
  using Arguments = typename Gemm::Arguments;

  ModeCall(Mode mode, Arguments const& first, cudaStream_t stream) : mode_(mode), stream_(stream) {
    if (mode != Mode::kInitializeRun && mode != Mode::kUpdateRun && mode != Mode::kKeptGemm) {
      throw std::invalid_argument(std::string("ModeCall cannot run mode ") + mode_name(mode));
    }
    if (mode == Mode::kInitializeRun) return;
    workspace_.reset(Gemm::get_workspace_size(first));
    CUTLASS_CHECK(gemm_.can_implement(first));
    CUTLASS_CHECK(gemm_.initialize(first, workspace_.get(), stream));
  }

  // One call; `phase` is the caller's scope (one per timed call: scopes do not nest).
  void operator()(Arguments const& args, PhaseScope& phase) {
    if (mode_ == Mode::kKeptGemm) {
      phase.enter(Phase::kRun);
      CUTLASS_CHECK(gemm_.run(stream_));
      return;
    }
    if (mode_ == Mode::kUpdateRun) {
      phase.enter(Phase::kInitialize);
      CUTLASS_CHECK(gemm_.update(args, workspace_.get()));
      phase.enter(Phase::kRun);
      CUTLASS_CHECK(gemm_.run(stream_));
      return;
    }
    Gemm gemm;  // kInitializeRun: the issue's steps, but run(stream) instead of run(args)
    phase.enter(Phase::kWorkspaceAlloc);
    cutlass::device_memory::allocation<uint8_t> workspace(Gemm::get_workspace_size(args));
    phase.enter(Phase::kInitialize);
    CUTLASS_CHECK(gemm.initialize(args, workspace.get(), stream_));
    phase.enter(Phase::kRun);
    CUTLASS_CHECK(gemm.run(stream_));
    phase.enter(Phase::kWorkspaceFree);
  }

 private:
  Mode mode_;
  cudaStream_t stream_;
  Gemm gemm_;
  cutlass::device_memory::allocation<uint8_t> workspace_;
};

// `pattern(call)` runs the issue's pattern once; `make_args(call)` builds the Arguments the issue's code builds. Both
// get the call's index, which picks the operands when o.rotation > 1; a variant whose functions take no
// index cannot rotate its operands, and asking it to is an error.
template <class Gemm, class Pattern, class MakeArgs>
BenchResult bench_gemm(Pattern&& pattern, MakeArgs&& make_args, BenchOptions const& o) {
  constexpr bool kCanRotate = std::is_invocable_v<Pattern&, long long> && std::is_invocable_v<MakeArgs&, long long>;
  bool per_call_args = o.mode == Mode::kIssuePattern || o.mode == Mode::kInitializeRun || o.mode == Mode::kUpdateRun;
  if (o.rotation != 1) {
    if (o.rotation < 1) throw std::invalid_argument("rotation must be >= 1");
    if (!kCanRotate) throw std::invalid_argument("this variant cannot rotate its operands");
    if (!per_call_args) {
      throw std::invalid_argument(std::string("mode ") + mode_name(o.mode) +
                                  " builds its Params once, so its operands cannot change per call (rotation 1)");
    }
  }
  long long call = 0;
  if (o.mode == Mode::kIssuePattern) {
    return time_loop([&] { with_call(pattern, call++); }, o);
  }
  if (o.mode == Mode::kInitializeRun || o.mode == Mode::kUpdateRun) {
    ModeCall<Gemm> gemm(o.mode, with_call(make_args, 0), o.stream);
    return time_loop([&] {
      PhaseScope phase;
      phase.enter(Phase::kArgs);
      typename Gemm::Arguments args = with_call(make_args, call++);
      gemm(args, phase);
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
  if (o.mode == Mode::kBareClusterLaunch) {
    // What a cluster launch costs without CUTLASS: the empty kernel, one cluster of the GEMM's shape,
    // cudaLaunchKernelEx with the cluster-dimension attribute (ClusterLauncher uses cudaLaunchKernelExC).
    constexpr std::size_t kBytes = sizeof(typename Gemm::Params);
    dim3 const cluster = StaticClusterShape<typename Gemm::GemmKernel>::get();
    cudaLaunchAttribute attribute = cluster_dimension(cluster);
    cudaLaunchConfig_t config{};
    config.gridDim = cluster;
    config.blockDim = dim3(128, 1, 1);
    config.stream = o.stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    ParamBlock<kBytes> const params{};
    return time_loop([&] {
      PhaseScope phase;
      phase.enter(Phase::kRun);
      cuda_check(cudaLaunchKernelEx(&config, empty_kernel<kBytes>, params), "empty kernel cluster launch");
    }, o);
  }
  if (o.mode == Mode::kKernelLaunch) {
    using GemmKernel = typename Gemm::GemmKernel;
    if constexpr (GemmKernel::ArchTag::kMinComputeCapability == 90) {
      // Everything run(stream) launches, set up once by CUTLASS (initialize: Params, smem attribute); per
      // call only the driver's launch of that kernel, as ClusterLauncher makes it, with no CUTLASS code.
      typename Gemm::Arguments args = with_call(make_args, 0);
      Gemm gemm;
      cutlass::device_memory::allocation<uint8_t> workspace(Gemm::get_workspace_size(args));
      CUTLASS_CHECK(gemm.initialize(args, workspace.get(), o.stream));
      typename Gemm::Params params = gemm.params();
      dim3 const cluster = StaticClusterShape<GemmKernel>::get();
      cudaLaunchAttribute attribute = cluster_dimension(cluster);
      cudaLaunchConfig_t config{};
      config.gridDim = Gemm::get_grid_shape(params);
      config.blockDim = GemmKernel::get_block_shape();
      config.dynamicSmemBytes = GemmKernel::SharedStorageSize;
      config.stream = o.stream;
      config.attrs = &attribute;
      config.numAttrs = cluster.x * cluster.y * cluster.z > 1 ? 1 : 0;
      void* kernel_params[] = {&params};
      return time_loop([&] {
        PhaseScope phase;
        phase.enter(Phase::kRun);
        cuda_check(cudaLaunchKernelExC(&config, (void const*) cutlass::device_kernel<GemmKernel>, kernel_params),
                   "GEMM kernel launch");
      }, o);
    } else {
      throw std::invalid_argument("kernel_launch is built for SM90 kernels only");
    }
  }
  if (o.mode != Mode::kKeptGemm && o.mode != Mode::kGraph) {
    throw std::invalid_argument("unknown benchmark mode " + std::to_string(static_cast<int>(o.mode)));
  }
  // kKeptGemm and kGraph: everything but the launch happens once, outside the timed loop.
  typename Gemm::Arguments args = with_call(make_args, 0);
  ModeCall<Gemm> kept(Mode::kKeptGemm, args, o.stream);
  if (o.mode == Mode::kKeptGemm) {
    return time_loop([&] {
      PhaseScope phase;
      kept(args, phase);
    }, o);
  }
  if (o.stream == nullptr) {
    throw std::invalid_argument("graph mode needs a non-default stream to capture on");
  }
  Graph graph;
  {
    CaptureGuard capture(o.stream, cudaStreamCaptureModeThreadLocal);  // ends the capture if the launch throws
    PhaseScope phase;
    kept(args, phase);
    graph = capture.end();
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
