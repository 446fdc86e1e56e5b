// The steps of the runNvfp4Gemm (nvfp4_gemm.cu; sm90_gemm.cu calls its stand-in in the same steps), in
// order. The tracer (measure/trace) attributes every CUDA call to the step the calling thread is in; Python gets
// the names through nanobind (cutlass_overhead.Phase).
#pragma once

namespace co {

enum class Phase : int {
  kOutside = 0,     // everything else: the benchmark loop, the caller
  kArgs,            // args_from_options
  kWorkspaceSize,   // Gemm::get_workspace_size
  kWorkspaceAlloc,  // device_memory::allocation constructor
  kCanImplement,    // gemm.can_implement
  kInitialize,      // gemm.initialize
  kRun,             // gemm.run(args, workspace, stream) -- includes its own initialize()
  kWorkspaceFree,   // device_memory::allocation destructor
  kCount
};

inline char const* phase_name(Phase p) {
  constexpr char const* kNames[] = {"outside",       "args",       "get_workspace_size", "workspace_alloc",
                                    "can_implement", "initialize", "run",                "workspace_free"};
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == static_cast<int>(Phase::kCount), "one name per phase");
  int i = static_cast<int>(p);
  return (i >= 0 && i < static_cast<int>(Phase::kCount)) ? kNames[i] : "invalid";
}

}  // namespace co
