// The reproducer of NVIDIA/cutlass#3003: the issue's NVFP4 block-scaled GEMM for SM100 / Thor,
// its three KernelConfigs, and runNvfp4Gemm in exactly the issue's call pattern. The only
// additions are the co::PhaseScope markers (measure/bench/phase.hpp), which tell the profiler
// which step runs.
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/epilogue/fusion/operations.hpp"
#include "cutlass/epilogue/thread/activation.h"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/device_memory.h"
#include "cutlass/util/packed_stride.hpp"
#include "params_reuse_opt_in.h"

#include "bench.cuh"
#include "gemm_api.h"

#if defined(CO_NVFP4_HOST_PATH_ON_HOPPER)
// Measurement-only build: the host path on Hopper, no tensor-core math (see host_path_on_hopper/).
#include <cstring>

#include "host_path_on_hopper/driver_stand_in.h"
constexpr bool kHostPathOnHopper = true;
#else
constexpr bool kHostPathOnHopper = false;
#endif

using namespace cute;

// ---- The issue's kernel configurations (verbatim) ----------------------------------------------

template <typename T>
struct KernelConfigM128 {
    using OutputType = T;
    using MmaTileShape = Shape<_128, _256, _256>;
    using ClusterShape = Shape<int, int, _1>;
    using EpilogueTile = Shape<_128, _64>;  // Avoid register spilling
    using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized1Sm;
    using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecialized1SmNvf4Sm100;
    const static dim3 preferred_cluster;
    const static dim3 fallback_cluster;
};
template <typename T>
const dim3 KernelConfigM128<T>::preferred_cluster(1, 4, 1);
template <typename T>
const dim3 KernelConfigM128<T>::fallback_cluster(1, 2, 1);

template <typename T>
struct KernelConfigM256 {
    using OutputType = T;
    using MmaTileShape = Shape<_256, _256, _256>;
    using ClusterShape = Shape<int, int, _1>;
    using EpilogueTile = Shape<_128, _64>;  // Avoid register spilling
    using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized2Sm;
    using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecialized2SmNvf4Sm100;
    const static dim3 preferred_cluster;
    const static dim3 fallback_cluster;
};
template <typename T>
const dim3 KernelConfigM256<T>::preferred_cluster(2, 4, 1);
template <typename T>
const dim3 KernelConfigM256<T>::fallback_cluster(2, 1, 1);

template <typename T>
struct KernelConfigDefault {
    using OutputType = T;
    using MmaTileShape = Shape<_256, _256, _256>;
    using ClusterShape = Shape<int, int, _1>;
    using EpilogueTile = Shape<_128, _64>;  // Avoid register spilling
    using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecialized2Sm;
    using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecialized2SmNvf4Sm100;
    const static dim3 preferred_cluster;
    const static dim3 fallback_cluster;
};
template <typename T>
const dim3 KernelConfigDefault<T>::preferred_cluster(4, 4, 1);
template <typename T>
const dim3 KernelConfigDefault<T>::fallback_cluster(2, 1, 1);

// ---- Type assembly (the issue omits it; this is the common vLLM/TensorRT-LLM shape of it) -----

// D = alpha * acc, optionally + bias per output column (a Linear layer's bias), optionally SiLU.
template <typename ElementD, bool kEnableSilu, bool kEnableBias>
struct Nvfp4Fusion;
template <typename ElementD>
struct Nvfp4Fusion<ElementD, false, false> {
  using type = cutlass::epilogue::fusion::LinearCombination<ElementD, float, void, float>;
};
template <typename ElementD>
struct Nvfp4Fusion<ElementD, true, false> {
  using type = cutlass::epilogue::fusion::LinCombEltAct<cutlass::epilogue::thread::SiLu, ElementD, float, void, float>;
};
template <typename ElementD>
struct Nvfp4Fusion<ElementD, false, true> {
  using type = cutlass::epilogue::fusion::LinCombPerColBias<ElementD, float, ElementD, void, float>;
};
template <typename ElementD>
struct Nvfp4Fusion<ElementD, true, true> {
  using type = cutlass::epilogue::fusion::LinCombPerColBiasEltAct<cutlass::epilogue::thread::SiLu, ElementD, float,
                                                                  ElementD, void, float>;
};

template <typename Config, bool kEnableSilu, bool kEnableBias>
struct Fp4GemmSm100 {
  using ElementA = cutlass::nv_float4_t<cutlass::float_e2m1_t>;
  using LayoutATag = cutlass::layout::RowMajor;
  static constexpr int AlignmentA = 32;
  using ElementB = cutlass::nv_float4_t<cutlass::float_e2m1_t>;
  using LayoutBTag = cutlass::layout::ColumnMajor;
  static constexpr int AlignmentB = 32;
  using ElementD = typename Config::OutputType;
  using ElementC = void;
  using LayoutCTag = cutlass::layout::RowMajor;
  using LayoutDTag = cutlass::layout::RowMajor;
  static constexpr int AlignmentD = 128 / cutlass::sizeof_bits<ElementD>::value;
  static constexpr int AlignmentC = AlignmentD;
  using ElementAccumulator = float;
  using ArchTag = cutlass::arch::Sm100;
  using OperatorClass = cutlass::arch::OpClassBlockScaledTensorOp;

  using CollectiveEpilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
      ArchTag, OperatorClass, typename Config::MmaTileShape, typename Config::ClusterShape,
      typename Config::EpilogueTile, ElementAccumulator, ElementAccumulator, ElementC, LayoutCTag, AlignmentC,
      ElementD, LayoutDTag, AlignmentD, typename Config::EpilogueSchedule,
      typename Nvfp4Fusion<ElementD, kEnableSilu, kEnableBias>::type>::CollectiveOp;

  using CollectiveMainloop = typename cutlass::gemm::collective::CollectiveBuilder<
      ArchTag, OperatorClass, ElementA, LayoutATag, AlignmentA, ElementB, LayoutBTag, AlignmentB,
      ElementAccumulator, typename Config::MmaTileShape, typename Config::ClusterShape,
      cutlass::gemm::collective::StageCountAutoCarveout<
          static_cast<int>(sizeof(typename CollectiveEpilogue::SharedStorage))>,
      typename Config::MainloopSchedule>::CollectiveOp;

  using GemmKernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, CollectiveMainloop,
                                                          CollectiveEpilogue, void>;
  using Gemm = cutlass::gemm::device::GemmUniversalAdapter<GemmKernel>;
  using KernelConfig = Config;
};

template <typename T, bool kEnableSilu, bool kEnableBias>
typename T::Gemm::Arguments args_from_options(void* output, const void* input_a, const void* input_b,
                                              const void* scales_a, const void* scales_b, const void* bias,
                                              float alpha, int M, int N, int K) {
  using Gemm = typename T::Gemm;
  using GemmKernel = typename Gemm::GemmKernel;
  using Sm1xxBlkScaledConfig = typename GemmKernel::CollectiveMainloop::Sm1xxBlkScaledConfig;
  using ElementSF = cutlass::float_ue4m3_t;
  using ElementD = typename T::ElementD;

  auto stride_A = cutlass::make_cute_packed_stride(typename GemmKernel::StrideA{}, {M, K, 1});
  auto stride_B = cutlass::make_cute_packed_stride(typename GemmKernel::StrideB{}, {N, K, 1});
  auto stride_D = cutlass::make_cute_packed_stride(typename GemmKernel::StrideD{}, {M, N, 1});
  auto layout_SFA = Sm1xxBlkScaledConfig::tile_atom_to_shape_SFA(cute::make_shape(M, N, K, 1));
  auto layout_SFB = Sm1xxBlkScaledConfig::tile_atom_to_shape_SFB(cute::make_shape(M, N, K, 1));

  typename Gemm::Arguments arguments{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {M, N, K, 1},
      {static_cast<typename GemmKernel::ElementA const*>(input_a), stride_A,
       static_cast<typename GemmKernel::ElementB const*>(input_b), stride_B,
       static_cast<ElementSF const*>(scales_a), layout_SFA,
       static_cast<ElementSF const*>(scales_b), layout_SFB},
      {{}, nullptr, {}, static_cast<ElementD*>(output), stride_D}};

  auto& fusion_args = arguments.epilogue.thread;
  fusion_args.alpha = alpha;
  if constexpr (kEnableBias) {
    fusion_args.bias_ptr = static_cast<ElementD const*>(bias);
  }
  arguments.hw_info.cluster_shape = T::KernelConfig::preferred_cluster;
  arguments.hw_info.cluster_shape_fallback = T::KernelConfig::fallback_cluster;
  return arguments;
}

// ---- The issue's runNvfp4Gemm (verbatim but for the phase markers) ----------------------------

template <typename T, bool kEnableSilu, bool kEnableBias>
void runNvfp4Gemm(
    void* output,
    const void* input_a,
    const void* input_b,
    const void* scales_a,
    const void* scales_b,
    const void* bias,
    float alpha,
    int M,
    int N,
    int K,
    cudaStream_t stream) {
    co::PhaseScope phase;
    typename T::Gemm gemm;
    phase.enter(co::Phase::kArgs);
    auto arguments = args_from_options<T, kEnableSilu, kEnableBias>(
        output, input_a, input_b, scales_a, scales_b, bias, alpha, M, N, K);

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

// ---- M-based dispatch ------------------------------------------------------------------------
// Built by default: the M <= 128 config with the plain epilogue (the issue's measured case).
// -DCO_NVFP4_ALL_CONFIGS=ON adds the 2SM configs and the SiLU/bias epilogues (~6x compile time).

using OutputType = cutlass::bfloat16_t;
template <bool kSilu, bool kBias>
using GemmM128 = Fp4GemmSm100<KernelConfigM128<OutputType>, kSilu, kBias>;
template <bool kSilu, bool kBias>
using GemmM256 = Fp4GemmSm100<KernelConfigM256<OutputType>, kSilu, kBias>;
template <bool kSilu, bool kBias>
using GemmDefault = Fp4GemmSm100<KernelConfigDefault<OutputType>, kSilu, kBias>;

#if defined(CO_NVFP4_ALL_CONFIGS)
constexpr bool kAllConfigs = true;
#else
constexpr bool kAllConfigs = false;
#endif

namespace co::nvfp4 {
namespace {

// Calls f.template call<GemmType, silu, bias>() for the config the dispatch picks.
template <bool kSilu, bool kBias, class F>
void with_config(int m, F const& f) {
  if (m <= 128) {
    f.template call<GemmM128<kSilu, kBias>, kSilu, kBias>();
  } else if constexpr (kAllConfigs) {
    if (m <= 256) {
      f.template call<GemmM256<kSilu, kBias>, kSilu, kBias>();
    } else {
      f.template call<GemmDefault<kSilu, kBias>, kSilu, kBias>();
    }
  } else {
    throw std::invalid_argument("this build has only the M <= 128 NVFP4 config; rebuild with CO_NVFP4_ALL_CONFIGS=ON");
  }
}

template <class F>
void dispatch(Operands const& o, F const& f) {
  bool bias = o.bias != nullptr;
  if (!o.silu && !bias) return with_config<false, false>(o.m, f);
  if constexpr (kAllConfigs) {
    if (o.silu && !bias) return with_config<true, false>(o.m, f);
    if (!o.silu && bias) return with_config<false, true>(o.m, f);
    return with_config<true, true>(o.m, f);
  }
  throw std::invalid_argument("this build has only the plain epilogue; rebuild with CO_NVFP4_ALL_CONFIGS=ON for SiLU/bias");
}

struct RunSeed {
  Operands const& o;
  cudaStream_t stream;
  template <class T, bool kSilu, bool kBias>
  void call() const {
    runNvfp4Gemm<T, kSilu, kBias>(o.out, o.a, o.b, o.scales_a, o.scales_b, o.bias, o.alpha, o.m, o.n, o.k, stream);
  }
};

struct MakeArgs {
  Operands const& o;
  template <class T, bool kSilu, bool kBias>
  typename T::Gemm::Arguments call() const {
    return args_from_options<T, kSilu, kBias>(o.out, o.a, o.b, o.scales_a, o.scales_b, o.bias, o.alpha, o.m, o.n, o.k);
  }
};

struct Bench {
  Operands const& o;
  BenchOptions const& options;
  BenchResult* result;
  template <class T, bool kSilu, bool kBias>
  void call() const {
    RunSeed seed{o, options.stream};
    MakeArgs make{o};
    *result = bench_gemm<typename T::Gemm>([&] { seed.call<T, kSilu, kBias>(); },
                                           [&] { return make.call<T, kSilu, kBias>(); }, options);
  }
};

struct Kernel {
  void const** function;
  int* smem_bytes;
  template <class T, bool kSilu, bool kBias>
  void call() const {
    using GemmKernel = typename T::Gemm::GemmKernel;
    *function = reinterpret_cast<void const*>(&cutlass::device_kernel<GemmKernel>);
    *smem_bytes = GemmKernel::SharedStorageSize;
  }
};

// The TMA descriptors inside an initialized Params: each 64-byte-aligned 128-byte block that equals a
// descriptor the encode stand-in returned (host path on Hopper only).
struct ParamsDescriptors {
  Operands const& o;
  cudaStream_t stream;
  std::vector<Descriptor>* out;
  template <class T, bool kSilu, bool kBias>
  void call() const {
#if defined(CO_NVFP4_HOST_PATH_ON_HOPPER)
    typename T::Gemm gemm;
    auto args = MakeArgs{o}.call<T, kSilu, kBias>();
    cutlass::device_memory::allocation<uint8_t> workspace(T::Gemm::get_workspace_size(args));
    CUTLASS_CHECK(gemm.initialize(args, workspace.get(), stream));
    auto known = co::hopper::encoded_descriptors();
    auto const* bytes = reinterpret_cast<unsigned char const*>(&gemm.params());
    for (std::size_t at = 0; at + 128 <= sizeof(typename T::Gemm::Params); at += 64) {
      for (auto const& d : known) {
        if (std::memcmp(bytes + at, d.data(), 128) == 0) {
          Descriptor found;
          found.offset = at;
          std::memcpy(found.bytes.data(), bytes + at, 128);
          out->push_back(found);
          break;
        }
      }
    }
#else
    throw std::logic_error("params_descriptors exists only in the host-path-on-Hopper build");
#endif
  }
};

struct Sizes {
  Operands const& o;
  std::size_t* params;
  std::size_t* workspace;
  template <class T, bool kSilu, bool kBias>
  void call() const {
    *params = sizeof(typename T::Gemm::Params);
    *workspace = T::Gemm::get_workspace_size(MakeArgs{o}.call<T, kSilu, kBias>());
  }
};

}  // namespace

char const* config_name(int m) {
  return m <= 128 ? "KernelConfigM128 (1SM 128x256x256, cluster 1x4 / 1x2)"
       : m <= 256 ? "KernelConfigM256 (2SM 256x256x256, cluster 2x4 / 2x1)"
                  : "KernelConfigDefault (2SM 256x256x256, cluster 4x4 / 2x1)";
}

bool config_built(int m, bool silu, bool bias) { return kAllConfigs || (m <= 128 && !silu && !bias); }

void run_seed(Operands const& o, cudaStream_t stream) {
  if constexpr (kHostPathOnHopper) {
    // The kernel has no sm_90 code path: it must never execute, so the call ends at a captured launch.
    call_captured([&] { dispatch(o, RunSeed{o, stream}); }, stream);
  } else {
    dispatch(o, RunSeed{o, stream});
  }
}

BenchResult bench(Operands const& o, BenchOptions const& options) {
  BenchResult result;
  BenchOptions opts = options;
  if constexpr (kHostPathOnHopper) {
    if (opts.mode == Mode::kGraph) {
      throw std::invalid_argument("graph replay would execute the NVFP4 kernel; the host-path-on-Hopper build "
                                  "never runs it");
    }
    opts.capture_each_call = true;
  }
  dispatch(o, Bench{o, opts, &result});
  return result;
}

bool host_path_on_hopper() { return kHostPathOnHopper; }

char const* cutlass_version() {
  static std::string const v = std::to_string(CUTLASS_MAJOR) + "." + std::to_string(CUTLASS_MINOR) + "." +
                               std::to_string(CUTLASS_PATCH);
  return v.c_str();
}

KernelHandle kernel(Operands const& o) {
  KernelHandle k;
  dispatch(o, Kernel{&k.function, &k.smem_bytes});
  return k;
}

std::vector<Descriptor> params_descriptors(Operands const& o, cudaStream_t stream) {
  std::vector<Descriptor> out;
  dispatch(o, ParamsDescriptors{o, stream, &out});
  return out;
}

std::size_t params_bytes(int m) {
  Operands o;
  o.m = m;
  std::size_t params = 0, workspace = 0;
  dispatch(o, Sizes{o, &params, &workspace});
  return params;
}

std::size_t workspace_bytes(Operands const& o) {
  std::size_t params = 0, workspace = 0;
  dispatch(o, Sizes{o, &params, &workspace});
  return workspace;
}

}  // namespace co::nvfp4
