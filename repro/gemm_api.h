// The plain C++ interface of one compiled GEMM variant (no CUTLASS types), called by its Python
// module. Every function throws std::exception subclasses on failure.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bench.h"

namespace co {

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
void run_issue_pattern(Operands const& ops, cudaStream_t stream);
BenchResult bench(Operands const& ops, BenchOptions const& options);
std::size_t params_bytes();
std::size_t workspace_bytes(Operands const& ops);
KernelHandle kernel(Operands const& ops);
inline bool mode_supported(Mode) { return true; }  // every benchmark mode (bench.h) runs the SM90 stand-in

// The pieces of GemmUniversalAdapter::initialize() (and of the calls the issue's code makes around it) that
// initialize_part_ns times one at a time: where the host time of an initialize() goes.
inline constexpr char const* kInitializeParts[] = {
    "get_workspace_size", "can_implement", "to_underlying_arguments", "initialize_workspace", "initialize"};
// Mean host ns of one call of `part` (one of kInitializeParts) with the issue's Arguments for `ops`, timed
// in a loop of `iterations` calls after the adapter's first initialize() (first-call costs excluded).
double initialize_part_ns(Operands const& ops, char const* part, int iterations);

// The GEMMs of one transformer layer (Llama-3-8B-like: hidden 4096, 32+8+8 heads of 128, MLP 14336),
// D(M,N) = A(M,K) @ W(N,K)^T, in the order a forward pass calls them. Attention itself is not a GEMM here.
struct LayerGemm {
  char const* name;
  int n, k;
};
inline constexpr LayerGemm kLayerGemms[] = {
    {"qkv", 6144, 4096}, {"out_proj", 4096, 4096}, {"gate_up", 28672, 4096}, {"down", 4096, 14336}};
// One call = the layer's GEMMs once, each in o.mode (issue_pattern, initialize_run, update_run, kept_gemm) at M = m.
// Weights and activations are allocated (zero-filled) and freed here; with o.rotation = r, call i takes
// its A and D buffers from slot i % r of r per GEMM, as a caching allocator hands out activations.
BenchResult bench_layer(int m, BenchOptions const& options);
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
// Bytes of one operand's scale factors in CUTLASS's Sm1xx block-scaled layout: one ue4m3 per 16
// elements of K, stored in tiles of 128 rows x 4 scale columns (rows and K/16 padded up to those).
// The one statement of this formula: the modules check with it, Python allocates with it
// (cutlass_overhead._device.nvfp4_scale_bytes).
constexpr int64_t scale_bytes(int64_t rows, int64_t k) {
  return (rows + 127) / 128 * 128 * ((k / 16 + 3) / 4 * 4);
}
// Which config of the issue's code the M-based dispatch picks, and whether this build instantiated it.
char const* config_name(int m);
bool config_built(int m, bool silu, bool bias);
void run_issue_pattern(Operands const& ops, cudaStream_t stream);
BenchResult bench(Operands const& ops, BenchOptions const& options);
std::size_t params_bytes(int m);
std::size_t workspace_bytes(Operands const& ops);
KernelHandle kernel(Operands const& ops);
// True in the measurement-only "host path on Hopper, no tensor-core math" build: every call ends in a
// captured, never-launched graph and FP4 descriptors are encoded through a byte-layout stand-in.
bool host_path_on_hopper();
// Whether bench() runs `mode`: not kKernelLaunch (bench.cuh builds it for SM90 kernels only), and in the host-path
// build not kGraph either (a replay would execute the kernel).
bool mode_supported(Mode mode);
std::vector<Descriptor> params_descriptors(Operands const& ops, cudaStream_t stream);
}  // namespace nvfp4

}  // namespace co
