// co_doctor_<kind>_<variant>: one command that says where the time of the call pattern goes on
// this machine (NVIDIA/cutlass#3003). It runs the seed's pattern at the user's shapes and, beside it,
// each candidate cause measured in place, then prints a ranked verdict and writes a JSON file.
//
// Rules it keeps: host time is measured with the stream drained before each call (outside the timed
// span), so a long kernel never fills the launch queue; no timing is taken in a process where CUPTI
// attached (counts and the profiler run in child processes: this binary re-executed).
// See measure/doctor/README.md. This file holds main() and the verdict; the rest, one role a file:
//   options    the command line              device     GPU presence, the right binary for it
//   workload   operands, reference check     stats      Spread, per-call timing
//   modes      bench() in rounds             load       work on another stream
//   children   CUPTI in child processes      evidence   every measurement at the user's shape
//   matrix     --matrix                      json       the JSON writers
//   fail       exit codes, the CUDA check    variant.h  which GEMM (`api`) this executable drives
//   doctor.h   the empty and spinning kernels (measurements.cu), host facts (system_info.cpp)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "children.h"
#include "co_trace.h"
#include "cuda_handles.h"
#include "device.h"
#include "doctor.h"
#include "evidence.h"
#include "fail.h"
#include "json.h"
#include "matrix.h"
#include "options.h"
#include "stats.h"
#include "variant.h"
#include "workload.h"

namespace co::doctor {
namespace {

// ---- Before measuring: what runs where -----------------------------------------------------------

// The first line of output and the JSON's header: tool, variant, GPU, CUTLASS, host, shape.
void describe(Device const& dev, Options const& o, bool host_path, HostInfo const& hi, JsonFields& J) {
  J.push_back({"tool", jstr(kTool)});
  J.push_back({"variant", jstr(CO_VARIANT_NAME)});
  J.push_back({"label", jstr(host_path ? kHostPathLabel : "measured on this machine")});
  J.push_back({"gpu", jobj({{"name", jstr(dev.name)}, {"sm", jstr(std::to_string(dev.major * 10 + dev.minor))},
                            {"driver_api", jnum(dev.driver)}, {"runtime", jnum(dev.runtime)}})});
  J.push_back({"cutlass_version", jstr(api::cutlass_version())});
  J.push_back({"host", jobj({{"cpus", jnum(hi.cpus)}, {"cpu_model", jstr(hi.cpu_model)},
                             {"governor", jstr(hi.governor)}, {"cur_khz", jstr(hi.cur_khz)},
                             {"min_khz", jstr(hi.min_khz)}, {"max_khz", jstr(hi.max_khz)},
                             {"nvpmodel", jstr(hi.nvpmodel)}, {"CUDA_MODULE_LOADING", jstr(hi.module_loading)}})});
  J.push_back({"shape", jobj({{"m", jnum(o.m)}, {"n", jnum(o.n)}, {"k", jnum(o.k)}, {"silu", o.silu ? "true" : "false"},
                              {"bias", o.bias ? "true" : "false"}, {"calls", jnum(o.calls)}, {"rounds", jnum(o.rounds)}})});
}

// Counts per phase, from a child with CUPTI callbacks; into the JSON, and the stand-in's line.
Counts count_calls(Children const& children, JsonFields& J) {
  std::string err;
  Counts counts = parse_counts(children.run(children.self(), "counts", &err));
  if (!err.empty()) std::printf("counts: %s\n", err.c_str());
  std::vector<std::string> jrows;
  for (auto const& r : counts.rows)
    jrows.push_back(jobj({{"combo", jstr(r.combo)}, {"phase", jstr(r.phase)}, {"domain", jstr(r.domain)},
                          {"api", jstr(r.api)}, {"count", jnum(double(r.n))}}));
  J.push_back({"counts_one_steady_call", jarr(jrows)});
  if (!counts.stand_in.empty()) {
    unsigned long long l = 0, e = 0, f = 0, x = 0;
    std::sscanf(counts.stand_in.c_str(), "%llu %llu %llu %llu", &l, &e, &f, &x);
    J.push_back({"encode_stand_in", jobj({{"lookups", jnum(double(l))}, {"encodes", jnum(double(e))},
                                          {"fp4_mapped_to_uint8", jnum(double(f))}, {"encode_errors", jnum(double(x))}})});
    std::printf("encode stand-in (whole child run): %llu lookups, %llu encodes, %llu FP4 mapped to UINT8, %llu errors\n", l, e, f, x);
  }
  return counts;
}

// ---- The verdict ---------------------------------------------------------------------------------

struct Part {
  std::string name;
  double us;
};
struct Suspect {
  std::string name;
  double delta_us;
  std::string detail;
};

struct Verdict {
  std::string bound;                // host-bound, GPU-bound, sync-bound (or the host-path label)
  double host = NAN, loop = NAN, gpu = NAN;
  uint64_t n_syncs = 0;             // synchronizing calls in one steady-state call
  std::vector<Part> parts;          // the median round's host time, phase by phase; adds up to `host`
  std::vector<Part> ranked;         // the same, largest first
  double parts_sum = 0;
  std::vector<Suspect> suspects;    // largest measured effect first
};

// Synchronizing calls in one steady-state call; the workspace's cudaFree only counts where there is one.
uint64_t synchronizing_calls(Counts const& counts, Workload const& w) {
  uint64_t n = 0;
  for (auto const& r : counts.rows)
    if (r.combo == "main" && std::find(kSyncApis.begin(), kSyncApis.end(), r.api) != kSyncApis.end() &&
        !(r.api == "cudaFree" && w.workspace() == 0))
      n += r.n;
  return n;
}

std::string classify(Verdict const& v, bool host_path) {
  if (host_path) return "host path only (kernel not executed; " + std::string(kHostPathLabel) + ")";
  if (v.n_syncs > 0 && v.loop >= 0.8 * (v.host + v.gpu)) return "sync-bound";
  if (v.host >= v.gpu) return "host-bound";
  return "GPU-bound";
}

// Splits the median round's host time into the seed's phases; inside each, counts x unit costs as
// estimates and the rest of the phase as the remainder, so the parts add up to the measured time.
std::vector<Part> split_host_time(ModeResult const& seed, double host, Counts const& counts, UnitCosts const& u,
                                  double attr_unit_us) {
  std::vector<Part> parts;
  double phase_sum = 0;
  for (int p = 1; p < static_cast<int>(co::Phase::kCount); ++p) {
    std::string ph = co::phase_name(static_cast<co::Phase>(p));
    double t = seed.phases_us[p];
    phase_sum += t;
    double attributed = 0;
    auto add = [&](std::string const& what, uint64_t n, double unit) {
      if (n == 0 || !(unit > 0)) return;
      parts.push_back({ph + ": " + std::to_string(n) + " x " + what + " (count x unit cost)", n * unit});
      attributed += n * unit;
    };
    add("cuTensorMapEncodeTiled", counts.of("main", kEncodeApis, ph), u.encode_us);
    add("driver entry-point lookup", counts.of("main", kLookupApis, ph), u.lookup_us);
    add("driver version query", counts.of("main", kVersionApis, ph), u.version_us);
    add("cudaFuncSetAttribute on the GEMM kernel", counts.of("main", kAttrApis, ph), attr_unit_us);
    parts.push_back({ph + ": rest of the phase", t - attributed});
  }
  parts.push_back({"outside the phases (loop, capture when forced)", host - phase_sum});
  return parts;
}

// Each candidate cause as measured: us added per call against the idle or steady baseline.
std::vector<Suspect> rank_suspects(Evidence const& e, ModeResult const& seed, double loop, double context_us) {
  std::vector<Suspect> suspects;
  auto add_suspect = [&](std::string name, double with, double base, std::string detail) {
    suspects.push_back({std::move(name), with - base, std::move(detail)});
  };
  UnderLoad const& copy_load = e.copy_load;
  UnderLoad const& kernel_load = e.kernel_load;
  add_suspect("pinned H2D copy in flight on another stream", copy_load.seed.host.median, seed.host.median,
              "seed host/call " + jnum(copy_load.seed.host.median) + " us vs " + jnum(seed.host.median) +
                  " idle; attribute call " + jnum(copy_load.attr_gemm.median) + " vs " + jnum(e.attr_gemm_idle.median) +
                  "; empty launch " + jnum(copy_load.empty_launch.median) + " vs " + jnum(e.launch_empty_idle.median) +
                  (copy_load.in_flight_after ? "" : " (load finished before the end: raise --load-ms)"));
  add_suspect("long kernel in flight on another stream", kernel_load.seed.host.median, seed.host.median,
              "seed host/call " + jnum(kernel_load.seed.host.median) + " us; attribute call " +
                  jnum(kernel_load.attr_gemm.median) + "; empty launch " + jnum(kernel_load.empty_launch.median) +
                  (kernel_load.in_flight_after ? "" : " (load finished before the end: raise --load-ms)"));
  add_suspect("profiler attached (CUPTI activity: runtime, driver, kernels)", e.prof_host.median, seed.host.median,
              std::isnan(e.prof_host.median) ? "failed: " + e.perr : "seed host/call " + jnum(e.prof_host.median) + " us");
  if (!std::isnan(e.o0_host.median))
    add_suspect("host code built -O0", e.o0_host.median, seed.host.median,
                "seed host/call " + jnum(e.o0_host.median) + " us (IQR " + jnum(e.o0_host.p25) + "-" + jnum(e.o0_host.p75) + ")");
  add_suspect("cudaStreamSynchronize after every call", e.sync_each.loop.median, loop,
              "loop/iter " + jnum(e.sync_each.loop.median) + " us vs " + jnum(loop) + " back-to-back");
  add_suspect("a real workspace allocation per call (cudaMalloc + cudaFree of " + std::to_string(e.ws_bytes) + " B)",
              e.with_alloc.median, loop, "loop/iter " + jnum(e.with_alloc.median) + " us vs " + jnum(loop));
  add_suspect("first call (lazy loading, one-time lookups), once per process", e.first_us, e.second_us,
              "first " + jnum(e.first_us) + " us, second " + jnum(e.second_us) + " us; context creation " + jnum(context_us) + " us");
  add_suspect("3 x cudaFuncSetAttribute on the GEMM kernel instead of an empty kernel",
              3 * e.attr_gemm_idle.median, 3 * e.attr_empty_idle.median,
              jnum(e.attr_gemm_idle.median) + " us vs " + jnum(e.attr_empty_idle.median) + " us per call");
  std::sort(suspects.begin(), suspects.end(), [](Suspect const& a, Suspect const& b) {
    double x = std::isnan(a.delta_us) ? -1e300 : a.delta_us, y = std::isnan(b.delta_us) ? -1e300 : b.delta_us;
    return x > y;
  });
  return suspects;
}

Verdict decide(Evidence const& e, Counts const& counts, UnitCosts const& u, Workload const& w, bool host_path,
               double context_us) {
  ModeResult const& seed = e.drained.at("seed");
  if (!seed.error.empty()) throw std::runtime_error("seed pattern failed: " + seed.error);
  Verdict v;
  v.n_syncs = synchronizing_calls(counts, w);
  v.host = seed.median_round_host_us;
  v.loop = e.back_to_back.at("seed").loop.median;
  v.gpu = host_path ? NAN
                    : (e.drained.count("graph") && e.drained.at("graph").error.empty() ? e.back_to_back.at("graph").gpu.median
                                                                                        : NAN);
  v.bound = classify(v, host_path);
  v.parts = split_host_time(seed, v.host, counts, u, e.attr_gemm_idle.median);
  v.ranked = v.parts;
  std::sort(v.ranked.begin(), v.ranked.end(), [](Part const& a, Part const& b) { return a.us > b.us; });
  for (auto const& p : v.parts) v.parts_sum += p.us;
  v.suspects = rank_suspects(e, seed, v.loop, context_us);
  return v;
}

void print_verdict(Verdict const& v, Evidence const& e, HostInfo const& hi, bool host_path) {
  ModeResult const& seed = e.drained.at("seed");
  std::printf("\n== Verdict: %s ==\n", v.bound.c_str());
  std::printf("loop, back to back: %.2f us/iter; host per call (stream drained first): %.2f us (IQR %.2f-%.2f); "
              "GPU per call (graph replay): %s us\n",
              v.loop, seed.host.median, seed.host.p25, seed.host.p75, host_path ? "not run" : jnum(v.gpu).c_str());
  std::printf("host time of one call, %.2f us (median round), is:\n", v.host);
  for (auto const& p : v.ranked) {
    if (std::fabs(p.us) < 0.005) continue;
    std::printf("  %8.2f us  %s\n", p.us, p.name.c_str());
  }
  std::printf("  -------- sum %.2f us (= measured %.2f us)\n", v.parts_sum, v.host);
  std::printf("\nSuspects, ranked by measured effect per call (us added vs idle/steady):\n");
  for (auto const& sp : v.suspects) std::printf("  %+9.2f  %s: %s\n", sp.delta_us, sp.name.c_str(), sp.detail.c_str());
  std::printf("\n-O0 host code: %s\nCPU: %s, governor %s, %s/%s kHz (cur/max); nvpmodel: %s\n", e.o0_note.c_str(),
              hi.cpu_model.c_str(), hi.governor.empty() ? "n/a" : hi.governor.c_str(),
              hi.cur_khz.empty() ? "n/a" : hi.cur_khz.c_str(), hi.max_khz.empty() ? "n/a" : hi.max_khz.c_str(),
              hi.nvpmodel.c_str());
}

// The JSON after the header and the counts: every measurement, the unit costs, the verdict.
void add_results(Evidence const& e, UnitCosts const& u, Verdict const& v, Workload const& w, double context_us,
                 JsonFields& J) {
  JsonFields jd, jb;
  for (auto const& [k, m] : e.drained) jd.push_back({k, jmode(m)});
  for (auto const& [k, m] : e.back_to_back) jb.push_back({k, jmode(m)});
  J.push_back({"params_bytes", jnum(double(w.params()))});
  J.push_back({"workspace_bytes", jnum(double(w.workspace()))});
  J.push_back({"reference_check", jstr(e.reference)});
  J.push_back({"context_creation_us", jnum(context_us)});
  J.push_back({"first_call_us", jnum(e.first_us)});
  J.push_back({"second_call_us", jnum(e.second_us)});
  J.push_back({"modes_drained", jobj(jd)});
  J.push_back({"modes_back_to_back", jobj(jb)});
  J.push_back({"sync_each_call", jmode(e.sync_each)});
  J.push_back({"with_workspace_alloc", jobj({{"bytes", jnum(double(e.ws_bytes))}, {"loop_per_iter", jspread(e.with_alloc)}})});
  J.push_back({"attribute_call", jobj({{"gemm_kernel_idle", jspread(e.attr_gemm_idle)},
                                       {"empty_kernel_idle", jspread(e.attr_empty_idle)},
                                       {"gemm_smem_bytes", jnum(e.gemm_kernel.smem_bytes)}})});
  J.push_back({"empty_launch_idle", jspread(e.launch_empty_idle)});
  auto jload = [&](UnderLoad const& l) {
    return jobj({{"seed_drained", jmode(l.seed)}, {"attribute_call_gemm", jspread(l.attr_gemm)},
                 {"empty_launch", jspread(l.empty_launch)}, {"load_in_flight_after", l.in_flight_after ? "true" : "false"},
                 {"one_copy_ms", jnum(l.copy_ms)}});
  };
  J.push_back({"under_copy_load", jload(e.copy_load)});
  J.push_back({"under_kernel_load", jload(e.kernel_load)});
  J.push_back({"profiler_attached_seed_host_us", jnum(e.prof_host.median)});
  J.push_back({"profiler_attached_seed_host", jspread(e.prof_host)});
  J.push_back({"O0", jobj({{"note", jstr(e.o0_note)}, {"seed_host_us", jnum(e.o0_host.median)},
                           {"seed_host", jspread(e.o0_host)}})});
  J.push_back({"unit_costs_us", jobj({{"entry_point_lookup", jnum(u.lookup_us)}, {"driver_version_query", jnum(u.version_us)},
                                      {"encode_median_over_captured", jnum(u.encode_us)},
                                      {"func_set_attribute_gemm", jnum(e.attr_gemm_idle.median)}})});
  std::vector<std::string> jp, js;
  for (auto const& p : v.parts) jp.push_back(jobj({{"part", jstr(p.name)}, {"us", jnum(p.us)}}));
  for (auto const& sp : v.suspects)
    js.push_back(jobj({{"suspect", jstr(sp.name)}, {"delta_us", jnum(sp.delta_us)}, {"detail", jstr(sp.detail)}}));
  J.push_back({"verdict", jobj({{"bound", jstr(v.bound)}, {"loop_us", jnum(v.loop)}, {"host_us", jnum(v.host)},
                                {"gpu_us", jnum(v.gpu)}, {"synchronizing_calls_per_call", jnum(double(v.n_syncs))},
                                {"parts", jarr(jp)}, {"parts_sum_us", jnum(v.parts_sum)}, {"suspects", jarr(js)}})});
}

// ---- The whole run, in the parent process ----------------------------------------------------------

int diagnose(Options const& o, Device const& dev, Children const& children, cudaStream_t s, double context_us) {
  bool host_path = api::host_path_on_hopper();
  std::printf("%s: %s on %s (sm_%d%d), driver %d, runtime %d, CUTLASS %s\n", kTool, CO_VARIANT_NAME,
              dev.name.c_str(), dev.major, dev.minor, dev.driver, dev.runtime, api::cutlass_version());
  if (host_path) std::printf("*** %s ***\n", kHostPathLabel);
  JsonFields J;  // the JSON document, in order
  HostInfo hi = host_info();
  describe(dev, o, host_path, hi, J);
  Counts counts = count_calls(children, J);

  if (o.matrix) {
    run_matrix(o, s, counts, J);
    write_json(o.json, J);
    std::printf("wrote %s\n", o.json.c_str());
    return 0;
  }

  Workload w(o);
  std::printf("%s M=%d N=%d K=%d%s%s: Params %zu bytes, workspace %zu bytes\n",
#if defined(CO_DOCTOR_KIND_nvfp4)
              api::config_name(o.m),
#else
              "SM90 bf16 twin",
#endif
              o.m, o.n, o.k, o.silu ? " +SiLU" : "", o.bias ? " +bias" : "", w.params(), w.workspace());
  Evidence e = gather_evidence(w, o, s, children, host_path);
  UnitCosts u = measure_unit_costs(counts, o);
  Verdict v = decide(e, counts, u, w, host_path, context_us);
  print_verdict(v, e, hi, host_path);

  add_results(e, u, v, w, context_us, J);
  write_json(o.json, J);
  std::printf("\nwrote %s (attach it to the issue)\n", o.json.c_str());
  return 0;
}

}  // namespace
}  // namespace co::doctor

int main(int argc, char** argv) {
  using namespace co::doctor;
  Options o = parse(argc, argv);
  if (o.check_args) return 0;
  Children children(argc, argv);

  Clock::time_point t_ctx = Clock::now();
  Device dev = find_gpu();
  require_built_for(dev);
  if (o.device_info) {
    std::printf("sm=%d%d name=%s variant=%s\n", dev.major, dev.minor, dev.name.c_str(), CO_VARIANT_NAME);
    return 0;
  }
  try {
    check(cudaFree(nullptr), "context creation");
    double context_us = us_since(t_ctx);
    co::Stream s;
    check(cudaStreamCreateWithFlags(s.out(), cudaStreamNonBlocking), "cudaStreamCreate");
    if (o.child == "counts") return child_counts(o, s.get());
    if (o.child == "profile") return child_profile(o, s.get());
    if (o.child == "seed") return child_seed(o, s.get());
    if (!o.child.empty()) die(64, "unknown --child mode '" + o.child + "'");
    return diagnose(o, dev, children, s.get(), context_us);
  } catch (std::exception const& e) {
    die(1, std::string("error: ") + e.what());
  }
}
