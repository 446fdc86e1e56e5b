// Both sides of the child processes: what a child prints for its --child mode, and how the parent
// starts it and reads that back. Compiled per variant: the children run the variant's GEMM.
#include "children.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

#include "fail.h"
#include "modes.h"
#include "variant.h"
#include "workload.h"
#if defined(CO_NVFP4_HOST_PATH_ON_HOPPER)
#include "host_path_on_hopper/driver_stand_in.h"
#endif

namespace co::doctor {
namespace {

std::string shell_quote(std::string const& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace

// ---- Parent: start a child, read its lines --------------------------------------------------------

Children::Children(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--child", 0) == 0 || a.rfind("--json", 0) == 0 || a == "--device-info") {
      if ((a == "--child" || a == "--json") && i + 1 < argc) ++i;
      continue;
    }
    forwarded_.push_back(a);
  }
  char self[4096] = {};
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  self_ = len > 0 ? std::string(self, len) : argv[0];
}

std::string Children::run(std::string const& exe, std::string const& mode, std::string* error) const {
  std::string cmd = shell_quote(exe) + " --child=" + mode;
  for (auto const& a : forwarded_) cmd += " " + shell_quote(a);
  cmd += " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    *error = "popen failed";
    return "";
  }
  std::string out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  int status = pclose(p);
  if (status != 0) *error = "child '" + mode + "' exited with status " + std::to_string(status) + ": " + out.substr(0, 400);
  return out;
}

Counts parse_counts(std::string const& child_output) {
  Counts c;
  std::istringstream in(child_output);
  for (std::string line; std::getline(in, line);) {
    std::istringstream ls(line);
    std::string tag;
    ls >> tag;
    if (tag == "count") {
      CountRow r;
      ls >> r.combo >> r.phase >> r.domain >> r.api >> r.n;
      c.rows.push_back(r);
    } else if (tag == "encode") {
      c.encode_lines.push_back(line.substr(7));
    } else if (tag == "stand_in") {
      c.stand_in = line.substr(9);
    }
  }
  return c;
}

uint64_t Counts::of(std::string const& combo, std::vector<std::string> const& apis, std::string const& phase) const {
  uint64_t n = 0;
  for (auto const& r : rows)
    if (r.combo == combo && (phase.empty() || r.phase == phase) &&
        std::find(apis.begin(), apis.end(), r.api) != apis.end())
      n += r.n;
  return n;
}

co::trace::EncodeInputs parse_encode(std::string const& encode_line, std::string* combo) {
  std::istringstream ls(encode_line);
  co::trace::EncodeInputs e;
  unsigned long long addr = 0;
  ls >> *combo >> e.data_type >> e.rank >> addr;
  e.address = addr;
  for (auto& d : e.dims) ls >> d;
  for (auto& d : e.strides) ls >> d;
  for (auto& d : e.box) ls >> d;
  for (auto& d : e.element_strides) ls >> d;
  ls >> e.interleave >> e.swizzle >> e.l2_promotion >> e.oob_fill;
  return e;
}

std::optional<Spread> parse_seed_host_us(std::string const& child_output) {
  auto at = child_output.find("seed_host_us ");
  if (at == std::string::npos) return std::nullopt;
  std::istringstream ls(child_output.substr(at + 13));
  Spread s;
  if (!(ls >> s.median >> s.p25 >> s.p75)) return std::nullopt;
  return s;
}

// ---- Children: what each --child mode prints -------------------------------------------------------

// One steady-state call per combination, counted by phase; the encode inputs CUTLASS passed.
int child_counts(Options const& o, cudaStream_t s) {
  for (auto const& [name, c] : combos(o)) {
    Workload w(c);
    for (int i = 0; i < 3; ++i) w.run(s);
    check(cudaStreamSynchronize(s), "warm-up");
    co::trace::start_counting();
    w.run(s);
    co::trace::stop_counting();
    check(cudaStreamSynchronize(s), "counted call");
    for (auto const& r : co::trace::counts()) {
      std::printf("count %s %s %s %s %llu\n", name.c_str(), r.phase.c_str(), r.domain.c_str(), r.api.c_str(),
                  static_cast<unsigned long long>(r.count));
    }
    for (auto const& e : co::trace::captured_encodes()) {
      std::printf("encode %s %d %u %llu", name.c_str(), e.data_type, e.rank, static_cast<unsigned long long>(e.address));
      for (auto d : e.dims) std::printf(" %llu", static_cast<unsigned long long>(d));
      for (auto d : e.strides) std::printf(" %llu", static_cast<unsigned long long>(d));
      for (auto d : e.box) std::printf(" %u", d);
      for (auto d : e.element_strides) std::printf(" %u", d);
      std::printf(" %d %d %d %d\n", e.interleave, e.swizzle, e.l2_promotion, e.oob_fill);
    }
  }
#if defined(CO_NVFP4_HOST_PATH_ON_HOPPER)
  auto st = co::hopper::stand_in_stats();
  std::printf("stand_in %llu %llu %llu %llu\n", static_cast<unsigned long long>(st.lookups),
              static_cast<unsigned long long>(st.encodes), static_cast<unsigned long long>(st.fp4_stand_ins),
              static_cast<unsigned long long>(st.encode_errors));
#endif
  return 0;
}

// The seed's host time with a profiler attached the way Nsight Systems traces (CUPTI activity
// records for runtime and driver API calls and kernels).
int child_profile(Options const& o, cudaStream_t s) {
  Workload w(o);
  co::trace::start_activity();
  ModeResult r = bench_mode(w, co::Mode::kSeed, true, o, s);
  auto records = co::trace::stop_activity();
  if (!r.error.empty()) throw std::runtime_error(r.error);
  std::printf("seed_host_us %.4f %.4f %.4f\nrecords %zu\n", r.host.median, r.host.p25, r.host.p75, records.size());
  return 0;
}

// Used for the -O0 sibling: the seed's host time, nothing attached.
int child_seed(Options const& o, cudaStream_t s) {
  Workload w(o);
  ModeResult r = bench_mode(w, co::Mode::kSeed, true, o, s);
  if (!r.error.empty()) throw std::runtime_error(r.error);
  std::printf("seed_host_us %.4f %.4f %.4f\n", r.host.median, r.host.p25, r.host.p75);
  return 0;
}

}  // namespace co::doctor
