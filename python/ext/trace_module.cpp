// Python module over libco_trace: CUPTI call counting per phase, and an activity timeline.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "co_trace.h"

namespace nb = nanobind;
using namespace nb::literals;

NB_MODULE(_trace, m) {
  m.doc() = "CUPTI recorder shared by every GEMM variant module.";
  m.def("start_counting", &co::trace::start_counting);
  m.def("stop_counting", &co::trace::stop_counting);
  m.def("counting", &co::trace::counting);
  m.def("counts", [] {
    std::vector<std::tuple<std::string, std::string, std::string, uint64_t>> rows;
    for (auto const& r : co::trace::counts()) rows.emplace_back(r.phase, r.domain, r.api, r.count);
    return rows;
  }, "(phase, domain, api, count) for every API entered since start_counting().");
  m.def("start_activity", &co::trace::start_activity);
  m.def("stop_activity", [] {
    std::vector<std::tuple<std::string, std::string, uint64_t, uint64_t, uint32_t, uint32_t>> rows;
    for (auto const& r : co::trace::stop_activity())
      rows.emplace_back(r.kind, r.name, r.start_ns, r.end_ns, r.correlation_id, r.thread_id);
    return rows;
  }, "(kind, name, start_ns, end_ns, correlation_id, thread_id) records since start_activity().");
  m.def("timestamp_ns", &co::trace::timestamp_ns);
  m.def("phase_names", [] {
    std::vector<std::string> names;
    for (int p = 0; p < static_cast<int>(co::Phase::kCount); ++p) names.emplace_back(co::phase_name(static_cast<co::Phase>(p)));
    return names;
  });

  // Test support: an array that claims to live on a CUDA device but has no storage behind it, so
  // input validation can be exercised on machines without a GPU. Never dereferenced by the checks.
  m.def("_device_array_stub", [](std::vector<size_t> shape, std::vector<int64_t> strides, uint8_t code, uint8_t bits,
                                  uintptr_t address, int32_t device_id) {
    nb::dlpack::dtype t{code, bits, 1};
    return nb::ndarray<>(reinterpret_cast<void*>(address), shape.size(), shape.data(), nb::handle(), strides.data(),
                         t, nb::device::cuda::value, device_id);
  }, "shape"_a, "strides"_a, "code"_a, "bits"_a, "address"_a = 1u << 20, "device_id"_a = 0);
}
