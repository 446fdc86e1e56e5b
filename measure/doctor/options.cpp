// Argument parsing, the usage text, and the shapes --matrix expands to. Compiled per variant: which
// shapes are valid depends on the GEMM (variant.h).
#include "options.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>

#include "fail.h"
#include "variant.h"

namespace co::doctor {
namespace {

constexpr long kMaxCalls = 1000000;  // --calls and the positional CALLS

long parse_long(std::string const& name, char const* text, long lo, long hi) {
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (text[0] == '\0' || end == text || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    std::string what = text[0] == '-' && end != text && *end == '\0' ? "the negative value '" : "'";
    die(64, name + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + what +
                text + "'");
  }
  return v;
}

void usage() {
  std::printf(
      "usage: co_doctor_<kind>_<variant> [M N K [CALLS]] [--m M] [--n N] [--k K] [--silu] [--bias]\n"
      "       [--calls C] [--rounds R] [--load-mib MiB] [--load-ms MS] [--json PATH] [--quick]\n"
      "       [--matrix] [--device-info]\n"
      "Runs the issue's pattern (Gemm, args, get_workspace_size, workspace, can_implement, initialize,\n"
      "run(args)) at M x N x K and each candidate cause beside it; prints a ranked verdict; writes JSON.\n"
      "CALLS (or --calls) is the number of calls per timed round (default %d, at most %ld).\n",
      Options{}.calls, kMaxCalls);
}

// The alignment CUTLASS's TMA needs and the sizes the reference check can index, checked before
// CUTLASS sees the shape; and, for NVFP4, that this build instantiated the config M picks.
void check_shape(Options const& o) {
  if (kNvfp4) {
    if (o.k % 32 != 0) die(64, "K must be a multiple of 32 (FP4 TMA alignment), got " + std::to_string(o.k));
    if (o.n % 8 != 0) die(64, "N must be a multiple of 8 (16-byte output rows), got " + std::to_string(o.n));
  } else {
    if (o.k % 8 != 0 || o.n % 8 != 0) die(64, "N and K must be multiples of 8 (16-byte bf16 rows) for the SM90 twin");
    if (o.silu || o.bias) die(64, "--silu/--bias exist only for the NVFP4 GEMM");
  }
  if (static_cast<double>(o.m) * o.k > 4e9 || static_cast<double>(o.n) * o.k > 4e9 ||
      static_cast<double>(o.m) * o.n > 4e9) {
    die(64, "M x K, N x K and M x N must each stay below 4e9 elements");
  }
#if defined(CO_DOCTOR_KIND_nvfp4)
  if (!api::config_built(o.m, o.silu, o.bias)) {
    die(64, std::string("this build lacks the config for M=") + std::to_string(o.m) + (o.silu ? " with SiLU" : "") +
                (o.bias ? " with bias" : "") + " (" + api::config_name(o.m) +
                "); rebuild with CO_NVFP4_ALL_CONFIGS=ON");
  }
#endif
}

}  // namespace

Options parse(int argc, char** argv) {
  Options o;
  std::vector<char const*> positional;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](char const* name) -> char const* {
      std::string prefix = std::string(name) + "=";
      if (a.rfind(prefix, 0) == 0) return argv[i] + prefix.size();
      if (i + 1 >= argc) die(64, std::string(name) + " needs a value");
      return argv[++i];
    };
    auto is = [&](char const* name) { return a == name || a.rfind(std::string(name) + "=", 0) == 0; };
    if (a == "-h" || a == "--help") {
      usage();
      std::exit(0);
    } else if (is("--m")) {
      o.m = static_cast<int>(parse_long("--m", value("--m"), 1, INT_MAX));
    } else if (is("--n")) {
      o.n = static_cast<int>(parse_long("--n", value("--n"), 1, INT_MAX));
    } else if (is("--k")) {
      o.k = static_cast<int>(parse_long("--k", value("--k"), 1, INT_MAX));
    } else if (is("--calls")) {
      o.calls = static_cast<int>(parse_long("--calls", value("--calls"), 1, kMaxCalls));
    } else if (is("--rounds")) {
      o.rounds = static_cast<int>(parse_long("--rounds", value("--rounds"), 1, 1000));
    } else if (is("--load-mib")) {
      o.load_mib = parse_long("--load-mib", value("--load-mib"), 1, 1 << 16);
    } else if (is("--load-ms")) {
      o.load_ms = static_cast<double>(parse_long("--load-ms", value("--load-ms"), 10, 60000));
    } else if (is("--json")) {
      o.json = value("--json");
    } else if (is("--child")) {
      o.child = value("--child");
    } else if (a == "--silu") {
      o.silu = true;
    } else if (a == "--bias") {
      o.bias = true;
    } else if (a == "--quick") {
      o.calls = 50, o.rounds = 5, o.load_ms = 500;
    } else if (a == "--matrix") {
      o.matrix = true;
    } else if (a == "--device-info") {
      o.device_info = true;
    } else if (a == "--check-args") {
      o.check_args = true;
    } else if (a.size() > 1 && a[0] == '-' && std::isdigit(static_cast<unsigned char>(a[1]))) {
      positional.push_back(argv[i]);  // a negative number: parse_long names it and its argument
    } else if (!a.empty() && a[0] == '-') {
      die(64, "unknown option '" + a + "' (see --help)");
    } else {
      positional.push_back(argv[i]);
    }
  }
  if (positional.size() > 4) die(64, "at most four positional arguments: M N K [CALLS]");
  char const* names[] = {"M", "N", "K", "CALLS"};
  int* slots[] = {&o.m, &o.n, &o.k, &o.calls};
  for (std::size_t i = 0; i < positional.size(); ++i) {
    *slots[i] = static_cast<int>(parse_long(names[i], positional[i], 1, i == 3 ? kMaxCalls : INT_MAX));
  }
  if (!o.check_args) check_shape(o);
  return o;
}

std::vector<std::pair<std::string, Options>> combos(Options const& o) {
  std::vector<std::pair<std::string, Options>> out;
  if (!o.matrix) {
    out.push_back({"main", o});
    return out;
  }
#if defined(CO_DOCTOR_KIND_nvfp4)
  for (int m : {128, 256, 512}) {
    for (int epi = 0; epi < 4; ++epi) {
      Options c = o;
      c.m = m, c.silu = epi & 1, c.bias = epi & 2;
      if (!api::config_built(c.m, c.silu, c.bias)) continue;
      std::string name = "M" + std::to_string(m) + (c.silu ? "+silu" : "") + (c.bias ? "+bias" : "");
      out.push_back({name, c});
    }
  }
#else
  out.push_back({"M" + std::to_string(o.m), o});
#endif
  return out;
}

}  // namespace co::doctor
