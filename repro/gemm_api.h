// The plain C++ interface of one compiled GEMM variant (no CUTLASS types), shared by the Python
// module and the standalone probe. Every function throws std::exception subclasses on failure.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "co_trace.h"

namespace co {

// How a benchmark calls the GEMM.
enum class Mode : int {
  kSeed = 0,        // the seed's pattern every call: Gemm, args, workspace, can_implement, initialize, run(args)
  kInitializeRun,   // the same, but gemm.run(stream) instead of gemm.run(args, ...): one initialize per call
  kFloor,           // CUTLASS's own floor: initialize once, then gemm.run(stream) per call
  kGraph,           // the floor's launch captured once into a CUDA graph, cudaGraphLaunch per call
  kBareLaunch,      // an empty kernel with a parameter block of sizeof(Gemm::Params): the launch floor
};

struct BenchOptions {
  Mode mode = Mode::kSeed;
  int iterations = 1000;
  int warmup = 20;
  bool sync_each_call = false;  // cudaStreamSynchronize after every call (a call that synchronizes)
  // Drain the stream before each call, outside the timed span: host time per call is then the call's
  // own, whatever the kernel's length (the launch queue never fills). host_ns_per_call sums only calls.
  bool drain_between_calls = false;
  // Record each call into a CUDA graph that is destroyed unlaunched: the host path runs, no kernel does.
  // Forced on in the "host path on Hopper" build; on the SM90 twin it measures what the capture changes.
  bool capture_each_call = false;
  cudaStream_t stream = nullptr;
};

struct BenchResult {
  int iterations = 0;
  double host_ns_per_call = 0;  // loop start to the last call's return, nothing waited for
  double loop_ns_per_iter = 0;  // loop start to the stream drained
  double gpu_ns_per_iter = 0;   // cudaEvent span of the loop on the stream
  std::array<double, static_cast<int>(Phase::kCount)> phase_ns_per_call{};
};

// The GEMM's own kernel and the dynamic shared memory its adapter sets with cudaFuncSetAttribute.
struct KernelHandle {
  void const* function = nullptr;
  int smem_bytes = 0;
};

// One TMA descriptor found inside an initialized Params (host path on Hopper; see nvfp4_gemm.cu).
struct Descriptor {
  std::size_t offset = 0;
  std::array<unsigned char, 128> bytes{};
};

class CutlassError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace sm90 {
// D(M,N) = alpha * A(M,K) @ B(N,K)^T + beta * C(M,N); bf16, A/C/D row-major, B column-major (K-major).
struct Operands {
  void const* a = nullptr;
  void const* b = nullptr;
  void const* c = nullptr;
  void* d = nullptr;
  float alpha = 1.f;
  float beta = 0.f;
  int m = 0, n = 0, k = 0;
};
void run_seed(Operands const& ops, cudaStream_t stream);
BenchResult bench(Operands const& ops, BenchOptions const& options);
std::size_t params_bytes();
std::size_t workspace_bytes(Operands const& ops);
KernelHandle kernel(Operands const& ops);
char const* cutlass_version();
bool host_path_on_hopper();
}  // namespace sm90

namespace nvfp4 {
// out(M,N) = alpha * dequant(A(M,K)) @ dequant(B(N,K))^T [+ bias(N)] [then SiLU]; A/B packed e2m1,
// scale factors ue4m3 per 16 elements in CUTLASS's Sm1xx block-scaled layout, out bf16.
struct Operands {
  void* out = nullptr;
  void const* a = nullptr;
  void const* b = nullptr;
  void const* scales_a = nullptr;
  void const* scales_b = nullptr;
  void const* bias = nullptr;
  float alpha = 1.f;
  int m = 0, n = 0, k = 0;
  bool silu = false;
};
// Which seed config the M-based dispatch picks, and whether this build instantiated it.
char const* config_name(int m);
bool config_built(int m, bool silu, bool bias);
void run_seed(Operands const& ops, cudaStream_t stream);
BenchResult bench(Operands const& ops, BenchOptions const& options);
std::size_t params_bytes(int m);
std::size_t workspace_bytes(Operands const& ops);
KernelHandle kernel(Operands const& ops);
char const* cutlass_version();
// True in the measurement-only "host path on Hopper, no tensor-core math" build: every call ends in a
// captured, never-launched graph and FP4 descriptors are encoded through a byte-layout stand-in.
bool host_path_on_hopper();
std::vector<Descriptor> params_descriptors(Operands const& ops, cudaStream_t stream);
}  // namespace nvfp4

}  // namespace co
