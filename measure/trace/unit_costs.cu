// Host cost of single CUDA API calls in isolation: what each call on the seed's path costs by itself,
// to multiply by the CUPTI counts and compare with the measured phase times.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>

#include <chrono>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>

#include "co_trace.h"

namespace co::trace {
namespace {

__global__ void empty_kernel() {}

template <class F>
double mean_ns(int iterations, F&& f) {
  for (int i = 0; i < 16; ++i) f();  // first calls pay lazy loading
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) f();
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations;
}

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

template <class Pfn>
Pfn driver_entry(char const* symbol) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  check(cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &q), symbol);
  if (q != cudaDriverEntryPointSuccess || p == nullptr) throw std::runtime_error(std::string("no driver symbol ") + symbol);
  return reinterpret_cast<Pfn>(p);
}

using Probe = std::function<void()>;

std::map<std::string, Probe> const& probes() {
  static std::map<std::string, Probe> const table = [] {
    std::map<std::string, Probe> t;
    t["cudaGetDriverEntryPointByVersion"] = [] {
      void* p = nullptr;
      cudaDriverEntryPointQueryResult q{};
      cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
    };
#pragma nv_diag_suppress 1444  // deprecated in CUDA 13, still what CUTLASS calls when built with nvcc 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    t["cudaGetDriverEntryPoint"] = [] {
      void* p = nullptr;
      cudaDriverEntryPointQueryResult q{};
      cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &q);
    };
#pragma GCC diagnostic pop
    t["cudaDriverGetVersion"] = [] {
      int v = 0;
      cudaDriverGetVersion(&v);
    };
    t["cuDriverGetVersion"] = [] {
      static auto fn = driver_entry<PFN_cuDriverGetVersion_v2020>("cuDriverGetVersion");
      int v = 0;
      fn(&v);
    };
    t["cudaGetDevice"] = [] {
      int d = 0;
      cudaGetDevice(&d);
    };
    t["cudaGetLastError"] = [] { cudaGetLastError(); };
    t["cudaFuncSetAttribute(MaxDynamicSharedMemorySize)"] = [] {
      cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10);
    };
    t["cudaFuncSetAttribute(NonPortableClusterSizeAllowed)"] = [] {
      cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    };
    t["cudaMalloc(0)"] = [] {
      void* p = nullptr;
      cudaMalloc(&p, 0);
    };
    t["cudaMalloc(4KiB)+cudaFree"] = [] {
      void* p = nullptr;
      cudaMalloc(&p, 4096);
      cudaFree(p);
    };
    t["kernel launch (<<<>>>, empty kernel)"] = [] { empty_kernel<<<1, 32>>>(); };
    return t;
  }();
  return table;
}

}  // namespace

std::vector<std::string> unit_cost_names() {
  std::vector<std::string> names;
  for (auto const& kv : probes()) names.push_back(kv.first);
  return names;
}

double unit_cost_ns(std::string const& name, int iterations) {
  auto it = probes().find(name);
  if (it == probes().end()) throw std::invalid_argument("no unit-cost probe named '" + name + "'");
  check(cudaFree(nullptr), "cudaFree(nullptr) to create the context");
  double ns = mean_ns(iterations, it->second);
  check(cudaDeviceSynchronize(), name.c_str());
  return ns;
}

double encode_cost_ns(EncodeInputs const& in, int iterations) {
  static auto encode = driver_entry<PFN_cuTensorMapEncodeTiled_v12000>("cuTensorMapEncodeTiled");
  CUtensorMap map;
  CUresult last = CUDA_SUCCESS;
  double ns = mean_ns(iterations, [&] {
    last = encode(&map, static_cast<CUtensorMapDataType>(in.data_type), in.rank, reinterpret_cast<void*>(in.address),
                  in.dims, in.strides, in.box, in.element_strides, static_cast<CUtensorMapInterleave>(in.interleave),
                  static_cast<CUtensorMapSwizzle>(in.swizzle), static_cast<CUtensorMapL2promotion>(in.l2_promotion),
                  static_cast<CUtensorMapFloatOOBfill>(in.oob_fill));
  });
  if (last != CUDA_SUCCESS) throw std::runtime_error("cuTensorMapEncodeTiled failed on the captured inputs");
  return ns;
}

}  // namespace co::trace
