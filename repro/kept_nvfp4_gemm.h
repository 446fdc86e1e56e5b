// The caller's fix for the runNvfp4Gemm, as docs/workarounds.md shows it (the page includes this file):
// one Gemm kept per config, epilogue and shape. Included by nvfp4_dispatch.inl, which instantiates it, so every
// build of the NVFP4 module compiles the code the page asks a reader to paste.
#pragma once

template <typename T, bool kEnableSilu, bool kEnableBias>
struct KeptNvfp4Gemm {  // one per (config, epilogue, M, N, K); not shared between threads
  typename T::Gemm gemm;
  cutlass::device_memory::allocation<uint8_t> workspace;
  bool initialized = false;

  void operator()(void* output, const void* input_a, const void* input_b, const void* scales_a,
                  const void* scales_b, const void* bias, float alpha, int M, int N, int K,
                  cudaStream_t stream) {
    auto arguments = args_from_options<T, kEnableSilu, kEnableBias>(
        output, input_a, input_b, scales_a, scales_b, bias, alpha, M, N, K);
    if (!initialized) {  // once: size the workspace, check, build Params
      workspace.reset(T::Gemm::get_workspace_size(arguments));
      CUTLASS_CHECK(gemm.can_implement(arguments));
      CUTLASS_CHECK(gemm.initialize(arguments, workspace.get(), stream));
      initialized = true;
    } else {             // new pointers or alpha, same shape: rebuild Params only
      CUTLASS_CHECK(gemm.update(arguments, workspace.get()));
    }
    CUTLASS_CHECK(gemm.run(stream));  // not run(arguments, ...): that initializes again
  }
};
