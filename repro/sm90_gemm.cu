// The SM90 stand-in of the issue's GEMM: an SM90 TMA warp-specialized bf16 GEMM (C and D both present)
// called in exactly runNvfp4Gemm's pattern, so the host path can be measured on an H200.
#include <stdexcept>
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/device_memory.h"
#include "cutlass/util/packed_stride.hpp"
#include "params_reuse_opt_in.h"

#include "bench.cuh"
#include "experiments.cuh"
#include "gemm_api.h"

using namespace cute;

struct KernelConfigSm90 {
  using ElementA = cutlass::bfloat16_t;
  using ElementB = cutlass::bfloat16_t;
  using ElementC = cutlass::bfloat16_t;
  using ElementD = cutlass::bfloat16_t;
  using ElementAccumulator = float;
  using LayoutATag = cutlass::layout::RowMajor;
  using LayoutBTag = cutlass::layout::ColumnMajor;
  using LayoutCTag = cutlass::layout::RowMajor;
  using LayoutDTag = cutlass::layout::RowMajor;
  static constexpr int kAlignment = 128 / cutlass::sizeof_bits<ElementA>::value;  // 16-byte TMA rows
  using TileShape = Shape<_128, _128, _64>;
  using ClusterShape = Shape<_2, _1, _1>;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
      cutlass::epilogue::collective::EpilogueTileAuto, ElementAccumulator, ElementAccumulator,
      ElementC, LayoutCTag, kAlignment, ElementD, LayoutDTag, kAlignment,
      cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, ElementA, LayoutATag, kAlignment,
      ElementB, LayoutBTag, kAlignment, ElementAccumulator, TileShape, ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<
          static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;

  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                          CollectiveEpilogue>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
};

template <typename T>
typename T::Gemm::Arguments args_from_options(void* output, void const* input_a, void const* input_b,
                                              void const* input_c, float alpha, float beta, int M, int N,
                                              int K) {
  using GemmKernel = typename T::Gemm::GemmKernel;
  auto stride_A = cutlass::make_cute_packed_stride(typename GemmKernel::StrideA{}, {M, K, 1});
  auto stride_B = cutlass::make_cute_packed_stride(typename GemmKernel::StrideB{}, {N, K, 1});
  auto stride_C = cutlass::make_cute_packed_stride(typename GemmKernel::StrideC{}, {M, N, 1});
  auto stride_D = cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, {M, N, 1});
  typename T::Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {M, N, K, 1},
      {static_cast<typename T::ElementA const*>(input_a), stride_A,
       static_cast<typename T::ElementB const*>(input_b), stride_B},
      {{alpha, beta},
       static_cast<typename T::ElementC const*>(input_c), stride_C,
       static_cast<typename T::ElementD*>(output), stride_D}};
  return arguments;
}

// runNvfp4Gemm's body, unchanged but for the operand list (see nvfp4_gemm.cu).
template <typename T>
void runSm90Gemm(void* output, void const* input_a, void const* input_b, void const* input_c, float alpha,
                 float beta, int M, int N, int K, cudaStream_t stream) {
  co::PhaseScope phase;
  typename T::Gemm gemm;
  phase.enter(co::Phase::kArgs);
  auto arguments = args_from_options<T>(output, input_a, input_b, input_c, alpha, beta, M, N, K);

  phase.enter(co::Phase::kWorkspaceSize);
  size_t workspace_size = T::Gemm::get_workspace_size(arguments);
  phase.enter(co::Phase::kWorkspaceAlloc);
  cutlass::device_memory::allocation<uint8_t> workspace(workspace_size);

  phase.enter(co::Phase::kCanImplement);
  CUTLASS_CHECK(gemm.can_implement(arguments));
  phase.enter(co::Phase::kInitialize);
  CUTLASS_CHECK(gemm.initialize(arguments, workspace.get(), stream));

  phase.enter(co::Phase::kRun);
  CUTLASS_CHECK(gemm.run(arguments, workspace.get(), stream));
  phase.enter(co::Phase::kWorkspaceFree);
}

namespace co::sm90 {

void run_issue_pattern(Operands const& o, cudaStream_t stream) {
  runSm90Gemm<KernelConfigSm90>(o.d, o.a, o.b, o.c, o.alpha, o.beta, o.m, o.n, o.k, stream);
}

BenchResult bench(Operands const& o, BenchOptions const& options) {
  using Gemm = KernelConfigSm90::Gemm;
  std::size_t const elem = sizeof(KernelConfigSm90::ElementA);
  // A and D change every call when options.rotation > 1; C is D when the caller gave none (beta == 0).
  Rotation a(o.a, elem * o.m * o.k, options.rotation);
  Rotation d(o.d, elem * o.m * o.n, options.rotation);
  bool c_is_d = o.c == o.d;
  auto operands = [&](long long call) {
    Operands x = o;
    x.a = a.at(call);
    x.d = d.at(call);
    if (c_is_d) x.c = x.d;
    return x;
  };
  return bench_gemm<Gemm>(
      [&](long long call) { run_issue_pattern(operands(call), options.stream); },
      [&](long long call) {
        Operands x = operands(call);
        return args_from_options<KernelConfigSm90>(x.d, x.a, x.b, x.c, x.alpha, x.beta, x.m, x.n, x.k);
      },
      options);
}

BenchResult bench_layer(int m, BenchOptions const& options) {
  return experiments::bench_layer<KernelConfigSm90::Gemm, Operands>(
      m, sizeof(KernelConfigSm90::ElementA), kLayerGemms, options,
      [&](Operands const& x) { run_issue_pattern(x, options.stream); },
      [](Operands const& x) {
        return args_from_options<KernelConfigSm90>(x.d, x.a, x.b, x.c, x.alpha, x.beta, x.m, x.n, x.k);
      });
}

double initialize_part_ns(Operands const& o, char const* part, int iterations) {
  return experiments::initialize_part_ns<KernelConfigSm90::Gemm>(
      args_from_options<KernelConfigSm90>(o.d, o.a, o.b, o.c, o.alpha, o.beta, o.m, o.n, o.k), part, iterations);
}

std::size_t params_bytes() { return sizeof(KernelConfigSm90::Gemm::Params); }

KernelHandle kernel(Operands const&) {
  using GemmKernel = KernelConfigSm90::Gemm::GemmKernel;
  return {reinterpret_cast<void const*>(&cutlass::device_kernel<GemmKernel>), GemmKernel::SharedStorageSize};
}

std::size_t workspace_bytes(Operands const& o) {
  return KernelConfigSm90::Gemm::get_workspace_size(
      args_from_options<KernelConfigSm90>(o.d, o.a, o.b, o.c, o.alpha, o.beta, o.m, o.n, o.k));
}


}  // namespace co::sm90
