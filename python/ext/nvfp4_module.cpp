// Python module for one build of the issue's NVFP4 GEMM (original or patched CUTLASS).
#include <nanobind/stl/string.h>

#include "validate.h"

namespace nb = nanobind;
using namespace nb::literals;
using co::py::Array;

namespace {

using co::nvfp4::scale_bytes;

co::nvfp4::Operands operands(Array const& a, Array const& b, Array const& sfa, Array const& sfb, Array const& out,
                             float alpha, nb::object bias_obj, bool silu) {
  using namespace co::py;
  if (out.ndim() != 2) fail_value("out must be 2-D (M, N)");
  if (a.ndim() != 2) fail_value("a must be 2-D (M, K/2) packed e2m1");
  int64_t m = static_cast<int64_t>(out.shape(0)), n = static_cast<int64_t>(out.shape(1));
  int64_t k = 2 * static_cast<int64_t>(a.shape(1));
  if (m < 1 || n < 1 || k < 1) fail_value("M, N and K must be positive");
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) fail_value("M, N and K must fit in int32");
  bool has_bias = !bias_obj.is_none();
  Array bias = has_bias ? nb::cast<Array>(bias_obj) : Array();

  expect_byte_elements(a, "a", "two e2m1 values per byte");
  expect_byte_elements(b, "b", "two e2m1 values per byte");
  expect_byte_elements(sfa, "scales_a", "ue4m3 scale factors");
  expect_byte_elements(sfb, "scales_b", "ue4m3 scale factors");
  expect_bf16(out, "out");
  if (has_bias) expect_bf16(bias, "bias");
  expect_matrix(a, "a", m, k / 2);
  expect_matrix(b, "b", n, k / 2);
  if (has_bias && (bias.ndim() != 1 || bias.shape(0) != static_cast<size_t>(n))) {
    fail_value("bias must have shape (" + std::to_string(n) + ",)");
  }
  if (k % 32 != 0) fail_value("K must be a multiple of 32 (FP4 TMA alignment), got " + std::to_string(k));
  if (n % 8 != 0) fail_value("N must be a multiple of 8 (16-byte output rows), got " + std::to_string(n));
  if (sfa.size() != static_cast<size_t>(scale_bytes(m, k))) {
    fail_value("scales_a must hold " + std::to_string(scale_bytes(m, k)) +
               " bytes (M rounded up to 128 x K/16 rounded up to 4, swizzled), got " + std::to_string(sfa.size()));
  }
  if (sfb.size() != static_cast<size_t>(scale_bytes(n, k))) {
    fail_value("scales_b must hold " + std::to_string(scale_bytes(n, k)) +
               " bytes (N rounded up to 128 x K/16 rounded up to 4, swizzled), got " + std::to_string(sfb.size()));
  }
  if (!co::nvfp4::config_built(static_cast<int>(m), silu, has_bias)) {
    fail_value(std::string("this build lacks the config for M=") + std::to_string(m) + (silu ? " with SiLU" : "") +
               (has_bias ? " with bias" : "") + " (" + co::nvfp4::config_name(static_cast<int>(m)) +
               "); rebuild with -Ccmake.define.CO_NVFP4_ALL_CONFIGS=ON");
  }
  char const* names[] = {"a", "b", "scales_a", "scales_b", "out", "bias"};
  Array const* arrays[] = {&a, &b, &sfa, &sfb, &out, has_bias ? &bias : nullptr};
  int32_t device = -1;
  for (int i = 0; i < 6; ++i) {
    if (!arrays[i]) continue;
    expect_contiguous(*arrays[i], names[i]);
    expect_aligned(*arrays[i], names[i], 16);
    expect_cuda(*arrays[i], names[i], &device);
  }
  // Never reach CUTLASS on a GPU without these kernels: the failed FP4 TMA encode ends in assert(false).
  expect_gpu(device, CO_BUILT_ARCHS, "the NVFP4 block-scaled GEMM");

  co::nvfp4::Operands ops;
  ops.out = out.data();
  ops.a = a.data();
  ops.b = b.data();
  ops.scales_a = sfa.data();
  ops.scales_b = sfb.data();
  ops.bias = has_bias ? bias.data() : nullptr;
  ops.alpha = alpha;
  ops.m = static_cast<int>(m);
  ops.n = static_cast<int>(n);
  ops.k = static_cast<int>(k);
  ops.silu = silu;
  return ops;
}

// Operands of shape only (no data), for the functions that need just the config: refused when not built.
co::nvfp4::Operands built_config(int m, int n, int k, bool silu, bool bias) {
  if (m < 1 || n < 1 || k < 1) co::py::fail_value("m, n and k must be positive");
  if (!co::nvfp4::config_built(m, silu, bias)) {
    co::py::fail_value(std::string("this build lacks the config for M=") + std::to_string(m) + (silu ? " with SiLU" : "") +
                       (bias ? " with bias" : "") + "; rebuild with -Ccmake.define.CO_NVFP4_ALL_CONFIGS=ON");
  }
  co::nvfp4::Operands ops;
  ops.m = m, ops.n = n, ops.k = k, ops.silu = silu;
  ops.bias = bias ? &ops : nullptr;  // only whether there is one matters here
  return ops;
}

}  // namespace

#define CO_DEFINE_MODULE(name) NB_MODULE(name, m)
CO_DEFINE_MODULE(CO_MODULE_NAME) {
  m.doc() = "The issue's NVFP4 GEMM (NVIDIA/cutlass#3003), built as variant '" CO_VARIANT_NAME "'.";
  m.attr("variant") = CO_VARIANT_NAME;
  m.attr("built_archs") = CO_BUILT_ARCHS;

  m.def("run", [](Array a, Array b, Array sfa, Array sfb, Array out, float alpha, nb::object bias, bool silu,
                  uintptr_t stream) {
        co::nvfp4::Operands ops = operands(a, b, sfa, sfb, out, alpha, bias, silu);
        nb::gil_scoped_release release;
        co::nvfp4::run_issue_pattern(ops, co::py::as_stream(stream));
      },
      "a"_a, "b"_a, "scales_a"_a, "scales_b"_a, "out"_a, "alpha"_a = 1.f, "bias"_a.none() = nb::none(),
      "silu"_a = false, "stream"_a = 0, "runNvfp4Gemm<T, silu, bias> through the issue's M-based dispatch.");

  m.def("bench", [](Array a, Array b, Array sfa, Array sfb, Array out, float alpha, nb::object bias, bool silu,
                    int mode, int iterations, int warmup, bool sync_each_call, uintptr_t stream) {
        co::nvfp4::Operands ops = operands(a, b, sfa, sfb, out, alpha, bias, silu);
        co::BenchOptions o = co::py::bench_options(mode, iterations, warmup, sync_each_call, stream);
        co::BenchResult r;
        {
          nb::gil_scoped_release release;
          r = co::nvfp4::bench(ops, o);
        }
        return co::py::to_dict(r);
      },
      "a"_a, "b"_a, "scales_a"_a, "scales_b"_a, "out"_a, "alpha"_a, "bias"_a.none(), "silu"_a, "mode"_a,
      "iterations"_a, "warmup"_a, "sync_each_call"_a, "stream"_a);

  m.def("config_name", &co::nvfp4::config_name, "m"_a, "The config of the issue's code that the M-based dispatch picks.");
  m.def("config_built", &co::nvfp4::config_built, "m"_a, "silu"_a, "bias"_a);
  m.def("params_bytes", &co::nvfp4::params_bytes, "m"_a);
  m.def("workspace_bytes", [](int m_rows, int n, int k, bool silu, bool bias) {
        co::nvfp4::Operands ops = built_config(m_rows, n, k, silu, bias);
        return co::nvfp4::workspace_bytes(ops);
      },
      "m"_a, "n"_a, "k"_a, "silu"_a = false, "bias"_a = false,
      "What get_workspace_size returns for this shape in the config the dispatch picks (allocated every call).");
  m.def("func_attribute_ns", [](int m_rows, bool silu, bool bias, std::string const& attribute, bool gemm_kernel,
                                int iterations) {
        co::nvfp4::Operands ops = built_config(m_rows, 4096, 4096, silu, bias);
        return co::py::func_attribute_ns([&ops] { return co::nvfp4::kernel(ops); }, attribute, gemm_kernel,
                                         iterations, CO_BUILT_ARCHS, "the NVFP4 block-scaled GEMM");
      },
      "m"_a, "silu"_a, "bias"_a, "attribute"_a, "gemm_kernel"_a, "iterations"_a,
      "Mean host ns of cudaFuncSetAttribute with the adapter's arguments, on the kernel of the config for M or an "
      "empty one.");
  m.attr("host_path_on_hopper") = co::nvfp4::host_path_on_hopper();
  m.attr("modes") = co::py::mode_names(&co::nvfp4::mode_supported);

  // The TMA descriptors inside an initialized Params: [(offset, 128 bytes)] (host path on Hopper only).
  m.def("params_descriptors", [](Array a, Array b, Array sfa, Array sfb, Array out, nb::object bias, bool silu,
                                 uintptr_t stream) {
        co::nvfp4::Operands ops = operands(a, b, sfa, sfb, out, 1.f, bias, silu);
        if (!co::nvfp4::host_path_on_hopper()) {
          throw nb::value_error("params_descriptors exists only in the host-path-on-Hopper build");
        }
        std::vector<co::Descriptor> found;
        {
          nb::gil_scoped_release release;
          found = co::nvfp4::params_descriptors(ops, co::py::as_stream(stream));
        }
        nb::list result;
        for (auto const& d : found) {
          result.append(nb::make_tuple(d.offset, nb::bytes(reinterpret_cast<char const*>(d.bytes.data()), 128)));
        }
        return result;
      },
      "a"_a, "b"_a, "scales_a"_a, "scales_b"_a, "out"_a, "bias"_a.none() = nb::none(), "silu"_a = false,
      "stream"_a = 0);
}
