// The measurements behind the verdict, each a named step; the order is the original doctor's.
#include "evidence.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <vector>

#include "doctor.h"
#include "fail.h"
#include "variant.h"

namespace co::doctor {
namespace {

// First call (lazy module loading, one-time lookups) vs the second.
void time_first_calls(Workload const& w, cudaStream_t s, Evidence& e) {
  Clock::time_point t0 = Clock::now();
  w.run(s);
  e.first_us = us_since(t0);
  check(cudaStreamSynchronize(s), "first call");
  t0 = Clock::now();
  w.run(s);
  e.second_us = us_since(t0);
  check(cudaStreamSynchronize(s), "second call");
}

std::string reference_check(Workload const& w, bool host_path) {
  if (host_path) return "not run: the kernel never executes in this build";
  std::string detail;
  int bad = w.check_reference(&detail);
  return bad == 0 ? "ok (256 sampled outputs match a double-precision reference)"
                  : "FAILED: " + std::to_string(bad) + " of 256 sampled outputs differ, e.g. " + detail;
}

// Modes (the report's too): drained host time per call, and the back-to-back loop.
void bench_modes(Workload const& w, Options const& o, cudaStream_t s, bool host_path, Evidence& e) {
  for (int v = 0; v < static_cast<int>(co::Mode::kCount); ++v) {
    co::Mode mode = static_cast<co::Mode>(v);
    if (host_path && mode == co::Mode::kGraph) continue;
#if !defined(CO_DOCTOR_KIND_sm90)
    if (mode == co::Mode::kKernelLaunch) continue;  // built for SM90 kernels only (bench.cuh)
#endif
    e.drained[co::mode_name(mode)] = bench_mode(w, mode, true, o, s);
    e.back_to_back[co::mode_name(mode)] = bench_mode(w, mode, false, o, s);
  }
  e.sync_each = bench_mode(w, co::Mode::kSeed, false, o, s, true);
}

// Profiler attached (child), and the -O0 host build (sibling binary, child).
void run_children(Children const& children, bool host_path, Evidence& e) {
  std::string prof = children.run(children.self(), "profile", &e.perr);
  if (auto us = parse_seed_host_us(prof)) e.prof_host = *us;
  std::string const& self = children.self();
  // The -O0 sibling of this doctor: same kernel family, same host path (on Hopper or not).
  std::string o0_path = self.substr(0, self.rfind('/') + 1) + "co_doctor_" +
                        (kNvfp4 ? (host_path ? "nvfp4_hopper" : "nvfp4") : "sm90") + "_O0";
  e.o0_note = "not built (configure with CO_BUILD_EXPERIMENTS=ON)";
  if (access(o0_path.c_str(), X_OK) == 0) {
    std::string oerr;
    std::string out = children.run(o0_path, "seed", &oerr);
    if (auto us = parse_seed_host_us(out)) {
      e.o0_host = *us;
      e.o0_note = "measured (" + o0_path + ")";
    } else {
      e.o0_note = "failed: " + oerr;
    }
  }
}

}  // namespace

Evidence gather_evidence(Workload const& w, Options const& o, cudaStream_t s, Children const& children,
                         bool host_path) {
  Evidence e;
  time_first_calls(w, s, e);
  e.reference = reference_check(w, host_path);
  std::printf("reference check: %s\n", e.reference.c_str());
  bench_modes(w, o, s, host_path, e);

  // A real workspace allocation beside every call: cudaMalloc + cudaFree (which synchronizes) of the
  // workspace's size, or 1 MiB where the seed's is empty. The raw pair is the thing measured.
  e.ws_bytes = w.workspace() ? w.workspace() : (1u << 20);
  std::size_t ws_bytes = e.ws_bytes;
  e.with_alloc = per_call([&] {
    w.run(s);
    void* p = nullptr;
    check(cudaMalloc(&p, ws_bytes), "cudaMalloc (workspace)");
    check(cudaFree(p), "cudaFree (workspace)");
  }, o.calls, o.rounds, nullptr);

  // Kernel-attribute calls: the GEMM's own kernel vs an empty kernel.
  e.gemm_kernel = api::kernel(w.ops);
  co::KernelHandle gemm_kernel = e.gemm_kernel;
  std::function<void()> attr_gemm = [gemm_kernel] {
    check(cudaFuncSetAttribute(gemm_kernel.function, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               gemm_kernel.smem_bytes), "cudaFuncSetAttribute (GEMM kernel)");
  };
  std::function<void()> attr_empty = [] {
    check(cudaFuncSetAttribute(empty_kernel_function(), cudaFuncAttributeMaxDynamicSharedMemorySize, 0),
          "cudaFuncSetAttribute (empty kernel)");
  };
  std::function<void()> launch_empty = [s] { co::doctor::launch_empty(s); };
  e.attr_gemm_idle = per_call(attr_gemm, o.calls, o.rounds, nullptr);
  e.attr_empty_idle = per_call(attr_empty, o.calls, o.rounds, nullptr);
  e.launch_empty_idle = per_call(launch_empty, o.calls, o.rounds, s);

  // Under load on another stream: pinned copies, then a spinning kernel.
  e.copy_load = under_load(true, w, o, s, attr_gemm, launch_empty);
  e.kernel_load = under_load(false, w, o, s, attr_gemm, launch_empty);
  check(cudaStreamSynchronize(s), "after load");

  run_children(children, host_path, e);
  return e;
}

UnitCosts measure_unit_costs(Counts const& counts, Options const& o) {
  UnitCosts u;
  int unit_iters = std::max(64, o.calls);
  u.lookup_us = co::trace::unit_cost_ns("cudaGetDriverEntryPointByVersion", unit_iters) / 1e3;
  u.version_us = co::trace::unit_cost_ns("cudaDriverGetVersion", unit_iters) / 1e3;
  std::vector<double> costs;
  for (auto const& line : counts.encode_lines) {
    std::string combo;
    co::trace::EncodeInputs in = parse_encode(line, &combo);
    if (combo != "main") continue;
    try {
      costs.push_back(co::trace::encode_cost_ns(in, unit_iters) / 1e3);
    } catch (std::exception const&) {
    }
  }
  double encode_us = costs.empty() ? NAN : spread(costs).median;
  u.encode_us = std::isnan(encode_us) ? 0 : encode_us;
  return u;
}

}  // namespace co::doctor
