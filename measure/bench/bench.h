// What a benchmark loop is asked to do and what it returns: the plain types shared by the timing
// loop (bench.cuh), every GEMM variant (repro/) and their callers (the Python modules).
// No CUTLASS types here, so this header compiles in any translation unit.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <stdexcept>

#include "co_trace.h"

namespace co {

// How a benchmark calls the GEMM.
enum class Mode : int {
  kIssuePattern = 0,  // the issue's pattern every call: Gemm, args, workspace, can_implement, initialize, run(args)
  kInitializeRun,   // the same, but gemm.run(stream) instead of gemm.run(args, ...): one initialize per call
  kKeptGemm,        // the Gemm kept: initialize once, then gemm.run(stream) per call
  kGraph,           // the kept Gemm's launch captured once into a CUDA graph, cudaGraphLaunch per call
  kBareLaunch,      // an empty kernel with a parameter block of sizeof(Gemm::Params): the launch floor
  kUpdateRun,       // the caller-side fix when operands change: one Gemm, initialize once; per call
                    // gemm.update(args) (new Params, no attribute call) then gemm.run(stream)
  kBareClusterLaunch,  // kBareLaunch through cudaLaunchKernelEx with the GEMM's static cluster shape (one
                       // cluster): the launch floor of a cluster kernel, as CUTLASS's ClusterLauncher launches
  kKernelLaunch,    // the GEMM's own kernel, device_kernel<GemmKernel>, launched by cudaLaunchKernelEx with the
                    // Params, grid, block, shared memory and cluster of an initialized Gemm: run(stream) without
                    // CUTLASS's host code, the floor kept_gemm's run(stream) is held to (SM90 kernels)
  kCount
};

// The names Python knows the modes by (exported as cutlass_overhead._trace.Mode).
inline char const* mode_name(Mode m) {
  switch (m) {
    case Mode::kIssuePattern: return "issue_pattern";
    case Mode::kInitializeRun: return "initialize_run";
    case Mode::kKeptGemm: return "kept_gemm";
    case Mode::kGraph: return "graph";
    case Mode::kBareLaunch: return "bare_launch";
    case Mode::kUpdateRun: return "update_run";
    case Mode::kBareClusterLaunch: return "bare_cluster_launch";
    case Mode::kKernelLaunch: return "kernel_launch";
    default: return "invalid";
  }
}

struct BenchOptions {
  Mode mode = Mode::kIssuePattern;
  int iterations = 1000;
  int warmup = 20;
  bool sync_each_call = false;  // cudaStreamSynchronize after every call (a call that synchronizes)
  // Drain the stream before each call, outside the timed span: host time per call is then the call's
  // own, whatever the kernel's length (the launch queue never fills). host_ns_per_call sums only calls.
  bool drain_between_calls = false;
  // Record each call into a CUDA graph that is destroyed unlaunched: the host path runs, no kernel does.
  // Forced on in the "host path on Hopper" build; on the SM90 stand-in it measures what the capture changes.
  bool capture_each_call = false;
  // Operands that change every call: call i uses the (i % rotation)-th of `rotation` distinct A and D
  // buffers (the caller's own, plus rotation - 1 copies the benchmark allocates and frees). 1 = unchanged.
  // Only modes that build Arguments per call take it (issue_pattern, initialize_run, update_run).
  int rotation = 1;
  cudaStream_t stream = nullptr;
};

struct BenchResult {
  int iterations = 0;
  double host_ns_per_call = 0;  // loop start to the last call's return, nothing waited for
  double loop_ns_per_iter = 0;  // loop start to the stream drained
  double gpu_ns_per_iter = 0;   // cudaEvent span of the loop on the stream
  std::array<double, static_cast<int>(Phase::kCount)> phase_ns_per_call{};
};

// A CUTLASS call returned a status other than kSuccess.
class CutlassError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A CUDA runtime call failed.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace co
