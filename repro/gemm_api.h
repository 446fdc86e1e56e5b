// The plain C++ interface of one compiled GEMM variant (no CUTLASS types), shared by the Python
// module and the standalone probe. Every function throws std::exception subclasses on failure.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

#include "bench.h"

namespace co {

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
}  // namespace nvfp4

}  // namespace co
