// Python module for one build of the SM90 stand-in (original, patched, direct, O0: see CMakeLists.txt).
#include <nanobind/stl/string.h>

#include "validate.h"

namespace nb = nanobind;
using namespace nb::literals;
using co::py::Array;

namespace {

co::sm90::Operands operands(Array const& a, Array const& b, nb::object c_obj, Array const& d, float alpha,
                            float beta) {
  using namespace co::py;
  if (a.ndim() != 2) fail_value("a must be 2-D (M, K)");
  if (b.ndim() != 2) fail_value("b must be 2-D (N, K)");
  int64_t m = static_cast<int64_t>(a.shape(0)), k = static_cast<int64_t>(a.shape(1));
  int64_t n = static_cast<int64_t>(b.shape(0));
  if (m < 1 || n < 1 || k < 1) fail_value("M, N and K must be positive");
  if (m > INT32_MAX || n > INT32_MAX || k > INT32_MAX) fail_value("M, N and K must fit in int32");
  bool has_c = !c_obj.is_none();
  Array c = has_c ? nb::cast<Array>(c_obj) : Array();
  char const* names[] = {"a", "b", "c", "d"};
  Array const* arrays[] = {&a, &b, has_c ? &c : nullptr, &d};
  for (int i = 0; i < 4; ++i) {
    if (arrays[i]) expect_bf16(*arrays[i], names[i]);
  }
  expect_matrix(a, "a", m, k);
  expect_matrix(b, "b", n, k);
  if (has_c) expect_matrix(c, "c", m, n);
  expect_matrix(d, "d", m, n);
  if (k % 8 != 0) fail_value("K must be a multiple of 8 (16-byte rows for TMA), got " + std::to_string(k));
  if (n % 8 != 0) fail_value("N must be a multiple of 8 (16-byte rows for TMA), got " + std::to_string(n));
  int32_t device = -1;
  for (int i = 0; i < 4; ++i) {
    if (!arrays[i]) continue;
    expect_contiguous(*arrays[i], names[i]);
    expect_aligned(*arrays[i], names[i], 16);
    expect_cuda(*arrays[i], names[i], &device);
  }
  if (!has_c && beta != 0.f) fail_value("beta != 0 needs c");
  expect_gpu(device, CO_BUILT_ARCHS, "the SM90 bf16 GEMM");

  co::sm90::Operands ops;
  ops.a = a.data();
  ops.b = b.data();
  // CUTLASS reads C only when beta != 0; without c, D doubles as the (unread) source.
  ops.c = has_c ? c.data() : d.data();
  ops.d = d.data();
  ops.alpha = alpha;
  ops.beta = beta;
  ops.m = static_cast<int>(m);
  ops.n = static_cast<int>(n);
  ops.k = static_cast<int>(k);
  return ops;
}

}  // namespace

#define CO_DEFINE_MODULE(name) NB_MODULE(name, m)
CO_DEFINE_MODULE(CO_MODULE_NAME) {
  m.doc() = "The SM90 stand-in of the NVIDIA/cutlass#3003 reproducer, built as variant '" CO_VARIANT_NAME "'.";
  m.attr("variant") = CO_VARIANT_NAME;
  m.attr("built_archs") = CO_BUILT_ARCHS;
  m.attr("modes") = co::py::mode_names(&co::sm90::mode_supported);

  m.def("run", [](Array a, Array b, nb::object c, Array d, float alpha, float beta, uintptr_t stream) {
        co::sm90::Operands ops = operands(a, b, c, d, alpha, beta);
        nb::gil_scoped_release release;
        co::sm90::run_issue_pattern(ops, co::py::as_stream(stream));
      },
      "a"_a, "b"_a, "c"_a.none(), "d"_a, "alpha"_a = 1.f, "beta"_a = 0.f, "stream"_a = 0,
      "D = alpha * a @ b.T + beta * c, called in the issue's pattern (runNvfp4Gemm's body).");

  m.def("bench", [](Array a, Array b, nb::object c, Array d, float alpha, float beta, int mode, int iterations,
                    int warmup, bool sync_each_call, uintptr_t stream, int rotation, bool drain_between_calls,
                    bool capture_each_call) {
        co::sm90::Operands ops = operands(a, b, c, d, alpha, beta);
        co::BenchOptions o = co::py::bench_options(mode, iterations, warmup, sync_each_call, stream, rotation,
                                                   drain_between_calls, capture_each_call);
        co::BenchResult r;
        {
          nb::gil_scoped_release release;
          r = co::sm90::bench(ops, o);
        }
        return co::py::to_dict(r);
      },
      "a"_a, "b"_a, "c"_a.none(), "d"_a, "alpha"_a, "beta"_a, "mode"_a, "iterations"_a, "warmup"_a,
      "sync_each_call"_a, "stream"_a, "rotation"_a = 1, "drain_between_calls"_a = false, "capture_each_call"_a = false,
      "Times `iterations` calls in `mode` (bench.h); rotation > 1 cycles A and D through that many buffers; "
      "capture_each_call records each call into a graph that is never launched (what the host-path build does).");

  m.def("bench_layer", [](int m_rows, int mode, int iterations, int warmup, uintptr_t stream, int rotation,
                          bool drain_between_calls) {
        if (m_rows < 1) co::py::fail_value("M must be positive, got " + std::to_string(m_rows));
        co::BenchOptions o = co::py::bench_options(mode, iterations, warmup, false, stream, rotation,
                                                   drain_between_calls);
        co::py::expect_gpu(co::py::current_device(), CO_BUILT_ARCHS,
                           "the SM90 bf16 GEMM");
        co::BenchResult r;
        {
          nb::gil_scoped_release release;
          r = co::sm90::bench_layer(m_rows, o);
        }
        return co::py::to_dict(r);
      },
      "m"_a, "mode"_a, "iterations"_a, "warmup"_a, "stream"_a, "rotation"_a = 1, "drain_between_calls"_a = false,
      "Times `iterations` calls of one transformer layer's GEMMs (layer_gemms()) at M = m; one call = one layer.");

  m.def("layer_gemms", [] {
        nb::list out;
        for (co::sm90::LayerGemm const& g : co::sm90::kLayerGemms) out.append(nb::make_tuple(g.name, g.n, g.k));
        return out;
      }, "(name, N, K) of each GEMM of the layer benchmark, in call order.");

  m.def("kernel_smem_bytes", [] { return co::sm90::kernel({}).smem_bytes; },
        "The dynamic shared memory the adapter sets on this GEMM's kernel (MaxDynamicSharedMemorySize).");

  m.def("func_attribute_ns", [](std::string const& attribute, bool gemm_kernel, int iterations) {
        return co::py::func_attribute_ns([] { return co::sm90::kernel({}); }, attribute, gemm_kernel, iterations,
                                         CO_BUILT_ARCHS, "the SM90 bf16 GEMM");
      },
      "attribute"_a, "gemm_kernel"_a, "iterations"_a,
      "Mean host ns of cudaFuncSetAttribute with the adapter's arguments, on this GEMM's kernel or an empty one.");

  nb::list parts;
  for (char const* part : co::sm90::kInitializeParts) parts.append(part);
  m.attr("initialize_parts") = parts;

  m.def("initialize_part_ns", [](Array a, Array b, Array d, std::string const& part, int iterations) {
        co::sm90::Operands ops = operands(a, b, nb::none(), d, 1.f, 0.f);
        bool known = false;
        for (char const* p : co::sm90::kInitializeParts) known = known || part == p;
        if (!known) co::py::fail_value("part must be one of initialize_parts, got '" + part + "'");
        if (iterations < 1) co::py::fail_value("iterations must be >= 1");
        nb::gil_scoped_release release;
        return co::sm90::initialize_part_ns(ops, part.c_str(), iterations);
      },
      "a"_a, "b"_a, "d"_a, "part"_a, "iterations"_a,
      "Mean host ns of one call of `part` (initialize_parts) with the issue's Arguments, after a first initialize().");

  m.def("params_bytes", &co::sm90::params_bytes, "sizeof(Gemm::Params): the kernel's parameter block.");
  m.def("workspace_bytes", [](int m_rows, int n, int k) {
        if (m_rows < 1 || n < 1 || k < 1) co::py::fail_value("m, n and k must be positive");
        co::sm90::Operands ops;
        ops.m = m_rows, ops.n = n, ops.k = k;
        return co::sm90::workspace_bytes(ops);
      },
      "m"_a, "n"_a, "k"_a, "What get_workspace_size returns for this shape (the issue's code allocates it every call).");
}
