// Host cost of single CUDA API calls in isolation: what each call on the issue's path costs by itself,
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

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}

// Each probe makes one call and returns its status; every status is checked (one compare per call).
using Probe = std::function<cudaError_t()>;

double mean_ns(int iterations, Probe const& f, char const* what) {
  for (int i = 0; i < 16; ++i) check(f(), what);  // first calls pay lazy loading
  cudaError_t first_error = cudaSuccess;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) {
    cudaError_t e = f();
    if (e != cudaSuccess && first_error == cudaSuccess) first_error = e;
  }
  auto t1 = std::chrono::steady_clock::now();
  check(first_error, what);
  return std::chrono::duration<double, std::nano>(t1 - t0).count() / iterations;
}

template <class Pfn>
Pfn driver_entry(char const* symbol) {
  void* p = nullptr;
  cudaDriverEntryPointQueryResult q{};
  check(cudaGetDriverEntryPointByVersion(symbol, &p, 12000, cudaEnableDefault, &q), symbol);
  if (q != cudaDriverEntryPointSuccess || p == nullptr) throw std::runtime_error(std::string("no driver symbol ") + symbol);
  return reinterpret_cast<Pfn>(p);
}

cudaError_t entry_point_status(cudaError_t e, cudaDriverEntryPointQueryResult q) {
  return e != cudaSuccess ? e : q == cudaDriverEntryPointSuccess ? cudaSuccess : cudaErrorSymbolNotFound;
}

std::map<std::string, Probe> const& probes() {
  static std::map<std::string, Probe> const table = [] {
    std::map<std::string, Probe> t;
    t["cudaGetDriverEntryPointByVersion"] = [] {
      void* p = nullptr;
      cudaDriverEntryPointQueryResult q{};
      cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
      return entry_point_status(e, q);
    };
#pragma nv_diag_suppress 1444  // deprecated in CUDA 13, still what CUTLASS calls when built with nvcc 12
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    t["cudaGetDriverEntryPoint"] = [] {
      void* p = nullptr;
      cudaDriverEntryPointQueryResult q{};
      cudaError_t e = cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &p, cudaEnableDefault, &q);
      return entry_point_status(e, q);
    };
#pragma GCC diagnostic pop
    t["cudaDriverGetVersion"] = [] {
      int v = 0;
      return cudaDriverGetVersion(&v);
    };
    t["cuDriverGetVersion"] = [] {
      static auto fn = driver_entry<PFN_cuDriverGetVersion_v2020>("cuDriverGetVersion");
      int v = 0;
      return fn(&v) == CUDA_SUCCESS ? cudaSuccess : cudaErrorUnknown;
    };
    t["cudaGetDevice"] = [] {
      int d = 0;
      return cudaGetDevice(&d);
    };
    t["cudaGetLastError"] = [] { return cudaGetLastError(); };
    t["cudaFuncSetAttribute(MaxDynamicSharedMemorySize)"] = [] {
      return cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 << 10);
    };
    t["cudaFuncSetAttribute(NonPortableClusterSizeAllowed)"] = [] {
      return cudaFuncSetAttribute(empty_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    };
    t["cudaMalloc(0)"] = [] {
      void* p = nullptr;
      return cudaMalloc(&p, 0);
    };
    t["cudaMalloc(4KiB)+cudaFree"] = [] {
      void* p = nullptr;
      cudaError_t e = cudaMalloc(&p, 4096);
      return e != cudaSuccess ? e : cudaFree(p);
    };
    // <<<>>> returns nothing: its status is the sticky/launch error cudaPeekAtLastError reads afterwards,
    // checked once after the loop (see unit_cost_ns) so the probe stays one launch per call.
    t["kernel launch (<<<>>>, empty kernel)"] = [] {
      empty_kernel<<<1, 32>>>();
      return cudaSuccess;
    };
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
  if (iterations < 1) throw std::invalid_argument("iterations must be >= 1");
  check(cudaFree(nullptr), "cudaFree(nullptr) to create the context");
  double ns = mean_ns(iterations, it->second, name.c_str());
  check(cudaGetLastError(), name.c_str());  // the launch probe's errors (see probes())
  check(cudaDeviceSynchronize(), name.c_str());
  return ns;
}

double encode_cost_ns(EncodeInputs const& in, int iterations) {
  if (iterations < 1) throw std::invalid_argument("iterations must be >= 1");
  static auto encode = driver_entry<PFN_cuTensorMapEncodeTiled_v12000>("cuTensorMapEncodeTiled");
  CUtensorMap map;
  CUresult last = CUDA_SUCCESS;
  Probe probe = [&] {
    last = encode(&map, static_cast<CUtensorMapDataType>(in.data_type), in.rank, reinterpret_cast<void*>(in.address),
                  in.dims, in.strides, in.box, in.element_strides, static_cast<CUtensorMapInterleave>(in.interleave),
                  static_cast<CUtensorMapSwizzle>(in.swizzle), static_cast<CUtensorMapL2promotion>(in.l2_promotion),
                  static_cast<CUtensorMapFloatOOBfill>(in.oob_fill));
    return last == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
  };
  try {
    return mean_ns(iterations, probe, "cuTensorMapEncodeTiled");
  } catch (std::runtime_error const&) {
    throw std::runtime_error("cuTensorMapEncodeTiled failed on the captured inputs (CUresult " +
                             std::to_string(static_cast<int>(last)) + ")");
  }
}

double func_attribute_ns(void const* function, int attribute, int value, int iterations) {
  if (iterations < 1) throw std::invalid_argument("iterations must be >= 1");
  check(cudaFree(nullptr), "cudaFree(nullptr) to create the context");
  void const* target = function ? function : reinterpret_cast<void const*>(&empty_kernel);
  auto attr = static_cast<cudaFuncAttribute>(attribute);
  return mean_ns(iterations, [&] { return cudaFuncSetAttribute(target, attr, value); }, "cudaFuncSetAttribute");
}

}  // namespace co::trace
