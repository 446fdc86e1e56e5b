// Input validation shared by the variant modules: every check runs before CUTLASS sees an operand,
// and each failure is a Python exception that says what to fix.
#pragma once

#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <atomic>
#include <cstdio>
#include <cstdint>
#include <string>

#include "gemm_api.h"

namespace co::py {

namespace nb = nanobind;
using Array = nb::ndarray<>;

inline std::string dtype_name(nb::dlpack::dtype t) {
  char const* kind = "?";
  switch (t.code) {
    case static_cast<uint8_t>(nb::dlpack::dtype_code::Int): kind = "int"; break;
    case static_cast<uint8_t>(nb::dlpack::dtype_code::UInt): kind = "uint"; break;
    case static_cast<uint8_t>(nb::dlpack::dtype_code::Float): kind = "float"; break;
    case static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat): kind = "bfloat"; break;
    case static_cast<uint8_t>(nb::dlpack::dtype_code::Bool): kind = "bool"; break;
    default: kind = "dlpack-code-"; return kind + std::to_string(t.code) + "-" + std::to_string(t.bits) + "bit";
  }
  return kind + std::to_string(t.bits);
}

[[noreturn]] inline void fail_value(std::string const& msg) { throw nb::value_error(msg.c_str()); }
[[noreturn]] inline void fail_type(std::string const& msg) { throw nb::type_error(msg.c_str()); }

inline void expect_bf16(Array const& x, char const* name) {
  nb::dlpack::dtype t = x.dtype();
  if (!(t.code == static_cast<uint8_t>(nb::dlpack::dtype_code::Bfloat) && t.bits == 16 && t.lanes == 1)) {
    fail_type(std::string(name) + " must be bfloat16, got " + dtype_name(t));
  }
}

// Packed FP4 (two e2m1 per byte) and ue4m3 scale factors travel as any 1-byte dtype.
inline void expect_byte_elements(Array const& x, char const* name, char const* what) {
  nb::dlpack::dtype t = x.dtype();
  if (t.bits != 8 || t.lanes != 1) {
    fail_type(std::string(name) + " must have 1-byte elements (" + what + "), got " + dtype_name(t));
  }
}

inline void expect_matrix(Array const& x, char const* name, int64_t rows, int64_t cols) {
  if (x.ndim() != 2) {
    fail_value(std::string(name) + " must be 2-D, got " + std::to_string(x.ndim()) + "-D");
  }
  if (x.shape(0) != static_cast<size_t>(rows) || x.shape(1) != static_cast<size_t>(cols)) {
    fail_value(std::string(name) + " must have shape (" + std::to_string(rows) + ", " + std::to_string(cols) +
               "), got (" + std::to_string(x.shape(0)) + ", " + std::to_string(x.shape(1)) + ")");
  }
}

// Row-major and dense: what CUTLASS's packed strides assume.
inline void expect_contiguous(Array const& x, char const* name) {
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(x.ndim()) - 1; d >= 0; --d) {
    if (x.shape(d) != 1 && x.stride(d) != expected) {
      fail_value(std::string(name) + " must be C-contiguous (row-major, dense); call .contiguous() first");
    }
    expected *= static_cast<int64_t>(x.shape(d));
  }
}

inline void expect_aligned(Array const& x, char const* name, size_t bytes) {
  if (reinterpret_cast<uintptr_t>(x.data()) % bytes != 0) {
    fail_value(std::string(name) + "'s data pointer must be " + std::to_string(bytes) +
               "-byte aligned for TMA; use a fresh allocation rather than an offset view");
  }
}

inline void expect_cuda(Array const& x, char const* name, int32_t* device_id) {
  if (x.device_type() != nb::device::cuda::value) {
    fail_value(std::string(name) + " must be on a CUDA device (DLPack device type " +
               std::to_string(x.device_type()) + " is not CUDA)");
  }
  if (*device_id < 0) {
    *device_id = x.device_id();
  } else if (x.device_id() != *device_id) {
    fail_value(std::string("all operands must be on one GPU; ") + name + " is on cuda:" +
               std::to_string(x.device_id()) + ", others on cuda:" + std::to_string(*device_id));
  }
}

// Throws unless compute capability `cc` (e.g. "90") is in the comma-separated build list ("90a,100a").
inline void expect_built_arch(int device, std::string const& cc, char const* built_archs, char const* what) {
  std::string archs = built_archs;
  // SASS built for sm_XYa runs only on compute capability X.Y exactly.
  size_t pos = 0;
  while (pos <= archs.size()) {
    size_t end = archs.find(',', pos);
    if (end == std::string::npos) end = archs.size();
    std::string a = archs.substr(pos, end - pos);
    if (!a.empty() && a.back() == 'a') a.pop_back();
    if (a == cc) return;
    pos = end + 1;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    std::snprintf(prop.name, sizeof(prop.name), "a device whose properties could not be read");
  }
  throw std::runtime_error(std::string(what) + " in this build runs on sm_" + archs + " only; cuda:" +
                           std::to_string(device) + " is " + prop.name + " (sm_" + cc +
                           "). Rebuild with CO_CUDA_ARCHS including " + cc + "a, or use a matching GPU.");
}

// Devices whose architecture this module has already accepted: a device's compute capability does not
// change, so after the first call only the current-device check (one cudaGetDevice) stays per call.
inline std::atomic<bool>& device_accepted(int device) {
  static std::atomic<bool> accepted[64] = {};
  return accepted[device & 63];
}

// No GPU, wrong GPU, wrong architecture: checked last, so the checks above also run without a GPU.
inline void expect_gpu(int32_t device_id, char const* built_archs, char const* what) {
  bool known = device_id >= 0 && device_id < 64 && device_accepted(device_id).load(std::memory_order_acquire);
  if (!known) {
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
      cudaGetLastError();
      throw std::runtime_error(std::string("no CUDA GPU is visible (cudaGetDeviceCount: ") + cudaGetErrorName(e) +
                               "); " + what + " needs one");
    }
  }
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("cudaGetDevice failed");
  }
  if (device_id != current) {
    fail_value("operands are on cuda:" + std::to_string(device_id) + " but the current device is cuda:" +
               std::to_string(current) + "; call torch.cuda.set_device(" + std::to_string(device_id) + ") first");
  }
  if (known) return;
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, current) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, current) != cudaSuccess) {
    cudaGetLastError();
    throw std::runtime_error("cudaDeviceGetAttribute(compute capability) failed for cuda:" + std::to_string(current));
  }
  expect_built_arch(current, std::to_string(major * 10 + minor), built_archs, what);
  if (current < 64) device_accepted(current).store(true, std::memory_order_release);
}

// The current device, or -1 where there is none (expect_gpu then says why).
inline int32_t current_device() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) {
    cudaGetLastError();
    return -1;
  }
  return device;
}

inline cudaStream_t as_stream(uintptr_t handle) { return reinterpret_cast<cudaStream_t>(handle); }

inline nb::dict to_dict(BenchResult const& r) {
  nb::dict d;
  d["iterations"] = r.iterations;
  d["host_ns_per_call"] = r.host_ns_per_call;
  d["loop_ns_per_iter"] = r.loop_ns_per_iter;
  d["gpu_ns_per_iter"] = r.gpu_ns_per_iter;
  nb::dict phases;
  for (int p = 0; p < static_cast<int>(Phase::kCount); ++p) {
    phases[phase_name(static_cast<Phase>(p))] = r.phase_ns_per_call[p];
  }
  d["phase_ns_per_call"] = phases;
  return d;
}

inline BenchOptions bench_options(int mode, int iterations, int warmup, bool sync_each_call, uintptr_t stream,
                                  int rotation = 1, bool drain_between_calls = false,
                                  bool capture_each_call = false) {
  if (mode < 0 || mode >= static_cast<int>(Mode::kCount)) {
    fail_value("unknown benchmark mode " + std::to_string(mode) + "; use cutlass_overhead.Mode");
  }
  if (iterations < 1 || warmup < 0) fail_value("iterations must be >= 1 and warmup >= 0");
  if (rotation < 1) fail_value("rotation must be >= 1 (1 = operands unchanged), got " + std::to_string(rotation));
  BenchOptions o;
  o.mode = static_cast<Mode>(mode);
  o.iterations = iterations;
  o.warmup = warmup;
  o.sync_each_call = sync_each_call;
  o.stream = as_stream(stream);
  o.rotation = rotation;
  o.drain_between_calls = drain_between_calls;
  o.capture_each_call = capture_each_call;
  return o;
}

// The names of the benchmark modes (bench.h) that `supported` accepts: the module's `modes` attribute.
template <typename Supported>
nb::list mode_names(Supported const& supported) {
  nb::list names;
  for (int v = 0; v < static_cast<int>(Mode::kCount); ++v) {
    if (supported(static_cast<Mode>(v))) names.append(mode_name(static_cast<Mode>(v)));
  }
  return names;
}

// Mean host ns of cudaFuncSetAttribute(attribute) with the adapter's own value, on `k`'s kernel (gemm_kernel) or
// on an empty one: what the attribute call costs where the adapter pays it. The arguments are checked before the
// GPU (expect_gpu with the module's archs and `what`), and `kernel` is asked for the handle only after both.
template <typename GetKernel>
double func_attribute_ns(GetKernel const& kernel, std::string const& attribute, bool gemm_kernel, int iterations,
                         char const* archs, char const* what) {
  int attr = 0, value = 0;
  if (attribute == "MaxDynamicSharedMemorySize") {
    attr = cudaFuncAttributeMaxDynamicSharedMemorySize;
  } else if (attribute == "NonPortableClusterSizeAllowed") {
    attr = cudaFuncAttributeNonPortableClusterSizeAllowed;
    value = 1;  // what ClusterLauncher::launch sets before every cluster launch
  } else {
    fail_value("attribute must be 'MaxDynamicSharedMemorySize' or 'NonPortableClusterSizeAllowed', got '" + attribute +
               "'");
  }
  if (iterations < 1) fail_value("iterations must be >= 1");
  expect_gpu(current_device(), archs, what);
  KernelHandle k = kernel();
  if (attr == cudaFuncAttributeMaxDynamicSharedMemorySize) value = k.smem_bytes;  // the adapter's own value
  nb::gil_scoped_release release;
  return trace::func_attribute_ns(gemm_kernel ? k.function : nullptr, attr, value, iterations);
}

}  // namespace co::py
