// Python module over libco_trace: CUPTI call counting per phase, an activity timeline, the unit-cost
// probes, and the names C++ gives the phases and benchmark modes (exported once, as Python enums).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/map.h>

#include <cstdint>
#include <tuple>
#include <vector>

#include "bench.h"
#include "co_trace.h"

namespace nb = nanobind;
using namespace nb::literals;

NB_MODULE(_trace, m) {
  m.doc() = "CUPTI recorder shared by every GEMM variant module.";
  m.def("start_counting", &co::trace::start_counting);
  m.def("stop_counting", &co::trace::stop_counting);
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
  m.def("captured_encodes", [] {
    nb::list out;
    for (auto const& e : co::trace::captured_encodes()) {
      nb::dict d;
      d["phase"] = e.phase;
      d["data_type"] = e.data_type;
      d["rank"] = e.rank;
      d["address"] = e.address;
      d["dims"] = std::vector<uint64_t>(e.dims, e.dims + e.rank);
      d["strides"] = std::vector<uint64_t>(e.strides, e.strides + (e.rank ? e.rank - 1 : 0));
      d["box"] = std::vector<uint32_t>(e.box, e.box + e.rank);
      d["element_strides"] = std::vector<uint32_t>(e.element_strides, e.element_strides + e.rank);
      d["interleave"] = e.interleave;
      d["swizzle"] = e.swizzle;
      d["l2_promotion"] = e.l2_promotion;
      d["oob_fill"] = e.oob_fill;
      out.append(d);
    }
    return out;
  }, "Inputs of each cuTensorMapEncodeTiled seen during the last counting session.");
  m.def("unit_cost_names", &co::trace::unit_cost_names);
  m.def("unit_cost_ns", &co::trace::unit_cost_ns, "name"_a, "iterations"_a,
        nb::call_guard<nb::gil_scoped_release>());
  m.def("encode_cost_ns", [](nb::dict d, int iterations) {
    co::trace::EncodeInputs in;
    in.data_type = nb::cast<int>(d["data_type"]);
    in.rank = nb::cast<uint32_t>(d["rank"]);
    in.address = nb::cast<uint64_t>(d["address"]);
    auto dims = nb::cast<std::vector<uint64_t>>(d["dims"]);
    auto strides = nb::cast<std::vector<uint64_t>>(d["strides"]);
    auto box = nb::cast<std::vector<uint32_t>>(d["box"]);
    auto es = nb::cast<std::vector<uint32_t>>(d["element_strides"]);
    if (in.rank < 1 || in.rank > 5 || dims.size() != in.rank || box.size() != in.rank || es.size() != in.rank ||
        strides.size() + 1 != in.rank) {
      throw nb::value_error("encode inputs are inconsistent with their rank");
    }
    for (uint32_t i = 0; i < in.rank; ++i) {
      in.dims[i] = dims[i];
      in.box[i] = box[i];
      in.element_strides[i] = es[i];
      if (i + 1 < in.rank) in.strides[i] = strides[i];
    }
    in.interleave = nb::cast<int>(d["interleave"]);
    in.swizzle = nb::cast<int>(d["swizzle"]);
    in.l2_promotion = nb::cast<int>(d["l2_promotion"]);
    in.oob_fill = nb::cast<int>(d["oob_fill"]);
    nb::gil_scoped_release release;
    return co::trace::encode_cost_ns(in, iterations);
  }, "inputs"_a, "iterations"_a);

  nb::class_<co::trace::Load>(m, "Load", "Work in flight on a stream of its own (load.cu) until it ends or is freed.")
      .def(nb::init<bool, std::size_t, double>(), "copies"_a, "bytes"_a, "ms"_a,
           "Pinned host-to-device copies of `bytes` back to back (copies=True) or one spinning kernel, for about "
           "`ms` milliseconds.")
      .def("in_flight", &co::trace::Load::in_flight, "Whether the load is still running.")
      .def_prop_ro("copy_ms", &co::trace::Load::copy_ms, "One copy's time, measured before the load started.");

  // The steps and the benchmark modes, with the names the C++ side gives them (phase_name,
  // mode_name): Python and the tests use these enums instead of repeating names or integers.
  auto phase = nb::enum_<co::Phase>(m, "Phase", nb::is_arithmetic(), "The steps of runNvfp4Gemm, in order.");
  for (int p = 0; p < static_cast<int>(co::Phase::kCount); ++p) {
    phase.value(co::phase_name(static_cast<co::Phase>(p)), static_cast<co::Phase>(p));
  }
  auto mode = nb::enum_<co::Mode>(m, "Mode", nb::is_arithmetic(), "How a benchmark calls the GEMM (bench.h).");
  for (int v = 0; v < static_cast<int>(co::Mode::kCount); ++v) {
    mode.value(co::mode_name(static_cast<co::Mode>(v)), static_cast<co::Mode>(v));
  }
}
