// The matrix mode's measurements. Compiled per variant: the configs are the variant's.
#include "matrix.h"

#include <cstdio>
#include <string>
#include <vector>

#include "modes.h"
#include "variant.h"
#include "workload.h"

namespace co::doctor {

void run_matrix(Options const& o, cudaStream_t s, Counts const& counts, JsonFields& J) {
  std::vector<std::string> jm;
  std::printf("\n%-16s %7s %7s %7s %6s %10s %10s %10s %12s\n", "config", "lookup", "encode", "drvver", "attr",
              "seed us", "init+run", "floor us", "workspace B");
  for (auto const& [name, c] : combos(o)) {
    Workload w(c);
    ModeResult seed = bench_mode(w, co::Mode::kSeed, true, c, s);
    ModeResult ir = bench_mode(w, co::Mode::kInitializeRun, true, c, s);
    ModeResult fl = bench_mode(w, co::Mode::kFloor, true, c, s);
    std::printf("%-16s %7llu %7llu %7llu %6llu %10.2f %10.2f %10.2f %12zu\n", name.c_str(),
                (unsigned long long)counts.of(name, kLookupApis), (unsigned long long)counts.of(name, kEncodeApis),
                (unsigned long long)counts.of(name, kVersionApis), (unsigned long long)counts.of(name, kAttrApis),
                seed.host.median, ir.host.median, fl.host.median, w.workspace());
    if (!seed.error.empty()) std::printf("   seed: %s\n", seed.error.c_str());
    jm.push_back(jobj({{"combo", jstr(name)}, {"m", jnum(c.m)}, {"silu", c.silu ? "true" : "false"},
                       {"bias", c.bias ? "true" : "false"},
#if defined(CO_DOCTOR_KIND_nvfp4)
                       {"config", jstr(api::config_name(c.m))},
#endif
                       {"lookups", jnum(double(counts.of(name, kLookupApis)))},
                       {"encodes", jnum(double(counts.of(name, kEncodeApis)))},
                       {"driver_version_queries", jnum(double(counts.of(name, kVersionApis)))},
                       {"func_set_attribute", jnum(double(counts.of(name, kAttrApis)))},
                       {"workspace_bytes", jnum(double(w.workspace()))}, {"params_bytes", jnum(double(w.params()))},
                       {"seed_drained", jmode(seed)}, {"initialize_run_drained", jmode(ir)}, {"floor_drained", jmode(fl)}}));
  }
  J.push_back({"matrix", jarr(jm)});

  // get_workspace_size over M (each M picks its config).
  std::vector<std::string> ws;
  for (int m : {1, 64, 128, 129, 256, 257, 512, 1024, 4096}) {
#if defined(CO_DOCTOR_KIND_nvfp4)
    if (!api::config_built(m, false, false)) continue;
#endif
    api::Operands ops;
    ops.m = m, ops.n = o.n, ops.k = o.k;
    ws.push_back(jobj({{"m", jnum(m)}, {"n", jnum(o.n)}, {"k", jnum(o.k)},
#if defined(CO_DOCTOR_KIND_nvfp4)
                       {"config", jstr(api::config_name(m))},
#endif
                       {"workspace_bytes", jnum(double(api::workspace_bytes(ops)))}}));
  }
  J.push_back({"workspace_by_m", jarr(ws)});

  // What recording each call into a never-launched graph adds (the host-path build always does).
  if (!kNvfp4) {
    Workload w(o);
    ModeResult plain = bench_mode(w, co::Mode::kSeed, true, o, s);
    ModeResult cap = bench_mode(w, co::Mode::kSeed, true, o, s, false, true);
    ModeResult fplain = bench_mode(w, co::Mode::kFloor, true, o, s);
    ModeResult fcap = bench_mode(w, co::Mode::kFloor, true, o, s, false, true);
    std::printf("\ncapture cost on the SM90 twin (drained host us/call): seed %.2f -> captured %.2f; floor %.2f -> captured %.2f\n",
                plain.host.median, cap.host.median, fplain.host.median, fcap.host.median);
    J.push_back({"capture_cost", jobj({{"seed", jmode(plain)}, {"seed_captured", jmode(cap)},
                                       {"floor", jmode(fplain)}, {"floor_captured", jmode(fcap)}})});
  }
}

}  // namespace co::doctor
