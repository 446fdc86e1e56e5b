// Standalone probe: the seed's call pattern with CUPTI call counts and host time per phase, no Python.
// Usage: co_probe_<kind>_<variant> [M N K [iterations]]   (defaults: 128 4096 4096 2000)
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "co_trace.h"
#include "gemm_api.h"

namespace {

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

void* device_bytes(size_t n, int fill) {
  void* p = nullptr;
  check(cudaMalloc(&p, n), "cudaMalloc");
  check(cudaMemset(p, fill, n), "cudaMemset");
  return p;
}

}  // namespace

int main(int argc, char** argv) {
  int m = argc > 1 ? std::atoi(argv[1]) : 128;
  int n = argc > 2 ? std::atoi(argv[2]) : 4096;
  int k = argc > 3 ? std::atoi(argv[3]) : 4096;
  int iterations = argc > 4 ? std::atoi(argv[4]) : 2000;

  int device = 0;
  cudaDeviceProp prop{};
  check(cudaGetDevice(&device), "cudaGetDevice (is there a GPU?)");
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::printf("GPU %s (sm_%d%d), driver API %d, runtime %d, variant %s\n", prop.name, prop.major, prop.minor, driver,
              runtime, CO_VARIANT_NAME);

  cudaStream_t stream;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");

#if defined(CO_PROBE_KIND_nvfp4)
  if (prop.major != 10 && prop.major != 11) {
    std::fprintf(stderr, "the NVFP4 kernels need an sm_100 / sm_101 / sm_110 GPU; this is sm_%d%d\n", prop.major,
                 prop.minor);
    return 2;
  }
  co::nvfp4::Operands ops;
  ops.m = m, ops.n = n, ops.k = k;
  ops.a = device_bytes(size_t(m) * k / 2, 0x22);
  ops.b = device_bytes(size_t(n) * k / 2, 0x22);
  ops.scales_a = device_bytes(co::nvfp4::scale_bytes(m, k), 0x38);
  ops.scales_b = device_bytes(co::nvfp4::scale_bytes(n, k), 0x38);
  ops.out = device_bytes(size_t(m) * n * 2, 0);
  std::printf("NVFP4 %s, M=%d N=%d K=%d, Params %zu bytes, workspace %zu bytes\n", co::nvfp4::config_name(m), m, n,
              k, co::nvfp4::params_bytes(m), co::nvfp4::workspace_bytes(ops));
  auto run = [&] { co::nvfp4::run_seed(ops, stream); };
  auto bench = [&](co::BenchOptions const& o) { return co::nvfp4::bench(ops, o); };
#else
  co::sm90::Operands ops;
  ops.m = m, ops.n = n, ops.k = k;
  ops.a = device_bytes(size_t(m) * k * 2, 0x3c);
  ops.b = device_bytes(size_t(n) * k * 2, 0x3c);
  ops.c = device_bytes(size_t(m) * n * 2, 0);
  ops.d = device_bytes(size_t(m) * n * 2, 0);
  std::printf("SM90 bf16 twin, M=%d N=%d K=%d, Params %zu bytes, workspace %zu bytes\n", m, n, k,
              co::sm90::params_bytes(), co::sm90::workspace_bytes(ops));
  auto run = [&] { co::sm90::run_seed(ops, stream); };
  auto bench = [&](co::BenchOptions const& o) { return co::sm90::bench(ops, o); };
#endif

  try {
    for (int i = 0; i < 3; ++i) run();  // first calls pay one-time costs (module load, lookups)
    check(cudaStreamSynchronize(stream), "warm-up");

    co::trace::start_counting();
    run();
    co::trace::stop_counting();
    check(cudaStreamSynchronize(stream), "counted call");
    std::printf("\nCUDA API calls in one steady-state call, by phase (CUPTI callbacks):\n");
    std::printf("  %-20s %-8s %-44s %s\n", "phase", "domain", "api", "count");
    for (auto const& r : co::trace::counts()) {
      std::printf("  %-20s %-8s %-44s %llu\n", r.phase.c_str(), r.domain.c_str(), r.api.c_str(),
                  static_cast<unsigned long long>(r.count));
    }

    struct Row { char const* name; co::Mode mode; };
    Row rows[] = {{"seed pattern", co::Mode::kSeed},
                  {"initialize + run(stream)", co::Mode::kInitializeRun},
                  {"floor: run(stream) only", co::Mode::kFloor},
                  {"CUDA graph replay", co::Mode::kGraph},
                  {"bare launch, same Params size", co::Mode::kBareLaunch}};
    std::printf("\nTimings over %d calls (us):\n  %-32s %10s %10s %10s\n", iterations, "mode", "host/call",
                "loop/iter", "gpu/iter");
    for (Row const& row : rows) {
      co::BenchOptions o;
      o.mode = row.mode;
      o.iterations = iterations;
      o.stream = stream;
      co::BenchResult r = bench(o);
      std::printf("  %-32s %10.2f %10.2f %10.2f\n", row.name, r.host_ns_per_call / 1e3, r.loop_ns_per_iter / 1e3,
                  r.gpu_ns_per_iter / 1e3);
      if (row.mode == co::Mode::kSeed) {
        for (int p = 1; p < static_cast<int>(co::Phase::kCount); ++p) {
          std::printf("      %-28s %10.2f\n", co::phase_name(static_cast<co::Phase>(p)), r.phase_ns_per_call[p] / 1e3);
        }
      }
    }
  } catch (std::exception const& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
