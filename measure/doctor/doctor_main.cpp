// co_doctor_<kind>_<variant>: one command that says where the time of the call pattern goes on
// this machine (NVIDIA/cutlass#3003). It runs the seed's pattern at the user's shapes and, beside it,
// each candidate cause measured in place, then prints a ranked verdict and writes a JSON file.
//
// Rules it keeps: host time is measured with the stream drained before each call (outside the timed
// span), so a long kernel never fills the launch queue; no timing is taken in a process where CUPTI
// attached (counts and the profiler run in child processes: this binary re-executed).
// See measure/doctor/README.md.
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "co_trace.h"
#include "doctor.h"
#include "gemm_api.h"
#if defined(CO_NVFP4_HOST_PATH_ON_HOPPER)
#include "host_path_on_hopper/driver_stand_in.h"
#endif

#if defined(CO_DOCTOR_KIND_nvfp4)
namespace api = co::nvfp4;
constexpr bool kNvfp4 = true;
#else
namespace api = co::sm90;
constexpr bool kNvfp4 = false;
#endif

using Clock = std::chrono::steady_clock;

namespace {

constexpr char kTool[] = "co-doctor";
constexpr char kHostPathLabel[] = "host path on Hopper, no tensor-core math (never a Blackwell number)";

[[noreturn]] void die(int code, std::string const& msg) {
  std::fprintf(stderr, "%s: %s\n", kTool, msg.c_str());
  std::exit(code);
}

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")");
  }
}

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

// ---- Arguments ---------------------------------------------------------------------------------

struct Options {
  int m = 128, n = 4096, k = 4096;
  int calls = 200, rounds = 7;
  bool silu = false, bias = false;
  long load_mib = 256;
  double load_ms = 1500;
  std::string json = "co-doctor.json";
  bool matrix = false, device_info = false;
  std::string child;  // internal: counts | profile | seed
};

long parse_long(std::string const& name, char const* text, long lo, long hi) {
  errno = 0;
  char* end = nullptr;
  long v = std::strtol(text, &end, 10);
  if (text[0] == '\0' || end == text || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
    die(64, name + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + text +
                "'");
  }
  return v;
}

void usage() {
  std::printf(
      "usage: co_doctor_<kind>_<variant> [M N K] [--m M] [--n N] [--k K] [--silu] [--bias]\n"
      "       [--calls C] [--rounds R] [--load-mib MiB] [--load-ms MS] [--json PATH] [--quick]\n"
      "       [--matrix] [--device-info]\n"
      "Runs the issue's pattern (Gemm, args, get_workspace_size, workspace, can_implement, initialize,\n"
      "run(args)) at M x N x K and each candidate cause beside it; prints a ranked verdict; writes JSON.\n");
}

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
      o.calls = static_cast<int>(parse_long("--calls", value("--calls"), 1, 1000000));
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
    } else if (!a.empty() && a[0] == '-') {
      die(64, "unknown option '" + a + "' (see --help)");
    } else {
      positional.push_back(argv[i]);
    }
  }
  if (positional.size() > 4) die(64, "at most four positional arguments: M N K [calls]");
  char const* names[] = {"M", "N", "K", "calls"};
  int* slots[] = {&o.m, &o.n, &o.k, &o.calls};
  for (std::size_t i = 0; i < positional.size(); ++i) {
    *slots[i] = static_cast<int>(parse_long(names[i], positional[i], 1, i == 3 ? 1000000 : INT_MAX));
  }
  // The alignment CUTLASS's TMA needs, checked before CUTLASS sees the shape.
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
  return o;
}

// ---- GPU presence: one clear line, never "driver version is insufficient" -----------------------

struct Device {
  int id = 0, major = 0, minor = 0, driver = 0, runtime = 0;
  std::string name;
};

bool built_for(int major, int minor) {
  std::string archs = CO_DOCTOR_ARCHS;
  std::string cc = std::to_string(major * 10 + minor);
  std::stringstream ss(archs);
  for (std::string a; std::getline(ss, a, ',');) {
    if (!a.empty() && a.back() == 'a') a.pop_back();
    if (a == cc) return true;
  }
  return false;
}

Device find_gpu() {
  if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL) == nullptr) {
    die(3, "no NVIDIA driver on this machine (libcuda.so.1 cannot be loaded), so there is no GPU to diagnose");
  }
  Device d;
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    die(3, std::string("no usable CUDA GPU is visible (cudaGetDeviceCount: ") +
               (e == cudaSuccess ? "0 devices" : cudaGetErrorName(e)) + ")");
  }
  cudaGetDevice(&d.id);
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, d.id);
  d.name = prop.name, d.major = prop.major, d.minor = prop.minor;
  cudaDriverGetVersion(&d.driver);
  cudaRuntimeGetVersion(&d.runtime);
  return d;
}

// ---- Workload: operands with known values, the reference check ---------------------------------

std::vector<void*> g_buffers;
void* device_copy(void const* host, std::size_t bytes) {
  void* p = nullptr;
  check(cudaMalloc(&p, bytes ? bytes : 16), "cudaMalloc");
  if (bytes && host) check(cudaMemcpy(p, host, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
  if (bytes && !host) check(cudaMemset(p, 0, bytes), "cudaMemset");
  g_buffers.push_back(p);
  return p;
}

float bf16_to_float(uint16_t b) {
  uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
uint16_t float_to_bf16(float f) {  // exact for the small integers used here
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}
float e2m1(unsigned nibble) {
  static constexpr float kMag[8] = {0.f, 0.5f, 1.f, 1.5f, 2.f, 3.f, 4.f, 6.f};
  return (nibble & 8 ? -1.f : 1.f) * kMag[nibble & 7];
}

struct Workload {
  api::Operands ops;
  std::vector<uint8_t> a_host, b_host;  // NVFP4: packed e2m1; SM90: bf16 as bytes
  int m = 0, n = 0, k = 0;

  explicit Workload(Options const& o) : m(o.m), n(o.n), k(o.k) {
    std::mt19937 rng(1234);
    ops.m = m, ops.n = n, ops.k = k;
#if defined(CO_DOCTOR_KIND_nvfp4)
    a_host.resize(std::size_t(m) * k / 2);
    b_host.resize(std::size_t(n) * k / 2);
    for (auto& x : a_host) x = static_cast<uint8_t>(rng());
    for (auto& x : b_host) x = static_cast<uint8_t>(rng());
    // Every scale factor 1.0 (ue4m3 0x38): the reference then needs no knowledge of their swizzle.
    std::vector<uint8_t> sfa(co::nvfp4::scale_bytes(m, k), 0x38);
    std::vector<uint8_t> sfb(co::nvfp4::scale_bytes(n, k), 0x38);
    ops.a = device_copy(a_host.data(), a_host.size());
    ops.b = device_copy(b_host.data(), b_host.size());
    ops.scales_a = device_copy(sfa.data(), sfa.size());
    ops.scales_b = device_copy(sfb.data(), sfb.size());
    ops.out = device_copy(nullptr, std::size_t(m) * n * 2);
    ops.silu = o.silu;
    if (o.bias) {
      std::vector<uint16_t> bias(n, float_to_bf16(0.f));
      ops.bias = device_copy(bias.data(), bias.size() * 2);
    }
#else
    std::uniform_int_distribution<int> small(-2, 2);
    a_host.resize(std::size_t(m) * k * 2);
    b_host.resize(std::size_t(n) * k * 2);
    for (std::size_t i = 0; i < a_host.size() / 2; ++i) reinterpret_cast<uint16_t*>(a_host.data())[i] = float_to_bf16(float(small(rng)));
    for (std::size_t i = 0; i < b_host.size() / 2; ++i) reinterpret_cast<uint16_t*>(b_host.data())[i] = float_to_bf16(float(small(rng)));
    ops.a = device_copy(a_host.data(), a_host.size());
    ops.b = device_copy(b_host.data(), b_host.size());
    std::vector<uint16_t> zeros(std::size_t(m) * n, 0);
    ops.c = device_copy(zeros.data(), zeros.size() * 2);
    ops.d = device_copy(nullptr, std::size_t(m) * n * 2);
#endif
  }

  float a_at(int i, int kk) const {
#if defined(CO_DOCTOR_KIND_nvfp4)
    uint8_t byte = a_host[(std::size_t(i) * k + kk) / 2];
    return e2m1(kk % 2 ? byte >> 4 : byte & 15);
#else
    return bf16_to_float(reinterpret_cast<uint16_t const*>(a_host.data())[std::size_t(i) * k + kk]);
#endif
  }
  float b_at(int j, int kk) const {
#if defined(CO_DOCTOR_KIND_nvfp4)
    uint8_t byte = b_host[(std::size_t(j) * k + kk) / 2];
    return e2m1(kk % 2 ? byte >> 4 : byte & 15);
#else
    return bf16_to_float(reinterpret_cast<uint16_t const*>(b_host.data())[std::size_t(j) * k + kk]);
#endif
  }
  void* out() const {
#if defined(CO_DOCTOR_KIND_nvfp4)
    return ops.out;
#else
    return ops.d;
#endif
  }

  // 256 sampled outputs against a double-precision reference; returns the number that differ.
  int check_reference(std::string* detail) const {
    std::vector<uint16_t> d(std::size_t(m) * n);
    check(cudaMemcpy(d.data(), out(), d.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy (result)");
    std::mt19937 rng(99);
    int bad = 0;
    for (int s = 0; s < 256; ++s) {
      int i = static_cast<int>(rng() % m), j = static_cast<int>(rng() % n);
      double ref = 0;
      for (int kk = 0; kk < k; ++kk) ref += double(a_at(i, kk)) * b_at(j, kk);
#if defined(CO_DOCTOR_KIND_nvfp4)
      if (ops.silu) ref = ref / (1 + std::exp(-ref));
#endif
      double got = bf16_to_float(d[std::size_t(i) * n + j]);
      if (std::fabs(got - ref) > 1.0 + std::fabs(ref) / 64) {
        if (bad++ == 0) *detail = "out[" + std::to_string(i) + "," + std::to_string(j) + "] = " +
                                  std::to_string(got) + ", reference " + std::to_string(ref);
      }
    }
    return bad;
  }

  void run(cudaStream_t s) const { api::run_seed(ops, s); }
  co::BenchResult bench(co::BenchOptions const& o) const { return api::bench(ops, o); }
  std::size_t workspace() const { return api::workspace_bytes(ops); }
  std::size_t params() const {
#if defined(CO_DOCTOR_KIND_nvfp4)
    return api::params_bytes(m);
#else
    return api::params_bytes();
#endif
  }
};

// ---- Statistics ----------------------------------------------------------------------------------

struct Spread {
  double median = NAN, p25 = NAN, p75 = NAN;
  std::vector<double> rounds;
};

Spread spread(std::vector<double> v) {
  Spread s;
  s.rounds = v;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto q = [&](double f) {
    double pos = f * (v.size() - 1);
    std::size_t lo = static_cast<std::size_t>(pos);
    std::size_t hi = std::min(lo + 1, v.size() - 1);
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
  };
  s.median = q(0.5), s.p25 = q(0.25), s.p75 = q(0.75);
  return s;
}

// Mean host us per call of fn(), one value per round; the stream is drained before each call when
// `drain` is set, outside the timed span.
Spread per_call(std::function<void()> const& fn, int calls, int rounds, cudaStream_t drain) {
  for (int i = 0; i < std::min(calls, 10); ++i) fn();
  if (drain) cudaStreamSynchronize(drain);
  std::vector<double> v;
  for (int r = 0; r < rounds; ++r) {
    double total = 0;
    for (int i = 0; i < calls; ++i) {
      if (drain) cudaStreamSynchronize(drain);
      Clock::time_point t0 = Clock::now();
      fn();
      total += us_since(t0);
    }
    v.push_back(total / calls);
  }
  if (drain) cudaStreamSynchronize(drain);
  return spread(v);
}

struct ModeResult {
  Spread host, loop, gpu;
  std::array<double, static_cast<int>(co::Phase::kCount)> phases_us{};  // of the median round
  double median_round_host_us = NAN;
  std::string error;
};

ModeResult bench_mode(Workload const& w, co::Mode mode, bool drain, Options const& o, cudaStream_t s,
                      bool sync = false, bool capture = false) {
  ModeResult r;
  std::vector<double> host, loop, gpu;
  std::vector<co::BenchResult> all;
  try {
    for (int i = 0; i < o.rounds; ++i) {
      co::BenchOptions b;
      b.mode = mode, b.iterations = o.calls, b.warmup = 10, b.stream = s;
      b.drain_between_calls = drain, b.sync_each_call = sync, b.capture_each_call = capture;
      co::BenchResult x = w.bench(b);
      all.push_back(x);
      host.push_back(x.host_ns_per_call / 1e3);
      loop.push_back(x.loop_ns_per_iter / 1e3);
      gpu.push_back(x.gpu_ns_per_iter / 1e3);
    }
  } catch (std::exception const& e) {
    r.error = e.what();
    return r;
  }
  r.host = spread(host), r.loop = spread(loop), r.gpu = spread(gpu);
  // The phases of the round whose host time is the median one, so they add up to that round's total.
  std::vector<std::size_t> idx(all.size());
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) { return host[a] < host[b]; });
  std::size_t mid = idx[idx.size() / 2];
  r.median_round_host_us = host[mid];
  for (std::size_t p = 0; p < r.phases_us.size(); ++p) r.phases_us[p] = all[mid].phase_ns_per_call[p] / 1e3;
  return r;
}

// ---- Children: CUPTI never attaches to the process that times -------------------------------------

std::string g_self;
std::vector<std::string> g_forward_args;  // shape and repeat options, passed on to children

std::string shell_quote(std::string const& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string run_child(std::string const& exe, std::string const& mode, std::string* error) {
  std::string cmd = shell_quote(exe) + " --child=" + mode;
  for (auto const& a : g_forward_args) cmd += " " + shell_quote(a);
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

struct CountRow {
  std::string combo, phase, domain, api;
  uint64_t n = 0;
};

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

// In the child: one steady-state call per combination, counted by phase; the encode inputs CUTLASS passed.
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

// In the child: the seed's host time with a profiler attached the way Nsight Systems traces
// (CUPTI activity records for runtime and driver API calls and kernels).
int child_profile(Options const& o, cudaStream_t s) {
  Workload w(o);
  co::trace::start_activity();
  ModeResult r = bench_mode(w, co::Mode::kSeed, true, o, s);
  auto records = co::trace::stop_activity();
  if (!r.error.empty()) throw std::runtime_error(r.error);
  std::printf("seed_host_us %.4f %.4f %.4f\nrecords %zu\n", r.host.median, r.host.p25, r.host.p75, records.size());
  return 0;
}

// In the child (used for the -O0 sibling): the seed's host time, nothing attached.
int child_seed(Options const& o, cudaStream_t s) {
  Workload w(o);
  ModeResult r = bench_mode(w, co::Mode::kSeed, true, o, s);
  if (!r.error.empty()) throw std::runtime_error(r.error);
  std::printf("seed_host_us %.4f %.4f %.4f\n", r.host.median, r.host.p25, r.host.p75);
  return 0;
}

// ---- JSON ------------------------------------------------------------------------------------------

std::string jstr(std::string const& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) { char b[8]; std::snprintf(b, sizeof b, "\\u%04x", c); o += b; }
    else o += c;
  }
  return o + "\"";
}
std::string jnum(double v) {
  if (!std::isfinite(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}
std::string jobj(std::vector<std::pair<std::string, std::string>> const& kv) {
  std::string o = "{";
  for (std::size_t i = 0; i < kv.size(); ++i) o += (i ? ", " : "") + jstr(kv[i].first) + ": " + kv[i].second;
  return o + "}";
}
std::string jarr(std::vector<std::string> const& v) {
  std::string o = "[";
  for (std::size_t i = 0; i < v.size(); ++i) o += (i ? ", " : "") + v[i];
  return o + "]";
}
std::string jspread(Spread const& s) {
  std::vector<std::string> r;
  for (double x : s.rounds) r.push_back(jnum(x));
  return jobj({{"median_us", jnum(s.median)}, {"p25_us", jnum(s.p25)}, {"p75_us", jnum(s.p75)}, {"rounds_us", jarr(r)}});
}
std::string jmode(ModeResult const& m) {
  if (!m.error.empty()) return jobj({{"error", jstr(m.error)}});
  std::vector<std::pair<std::string, std::string>> ph;
  for (int p = 0; p < static_cast<int>(co::Phase::kCount); ++p) ph.push_back({co::phase_name(static_cast<co::Phase>(p)), jnum(m.phases_us[p])});
  return jobj({{"host_per_call", jspread(m.host)}, {"loop_per_iter", jspread(m.loop)}, {"gpu_per_iter", jspread(m.gpu)},
               {"median_round_host_us", jnum(m.median_round_host_us)}, {"phases_us_of_median_round", jobj(ph)}});
}

// ---- Load on other streams ---------------------------------------------------------------------

// A stream kept busy for about `ms`: back-to-back pinned host-to-device copies, or one spinning kernel.
class Load {
 public:
  Load(bool copies, std::size_t bytes, double ms) : copies_(copies) {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate (load)");
    if (!copies) {
      check(co::doctor::launch_spin(stream_, ms), "spin kernel");
      return;
    }
    check(cudaMallocHost(&host_, bytes), "cudaMallocHost (load)");
    check(cudaMalloc(&dev_, bytes), "cudaMalloc (load)");
    std::memset(host_, 1, bytes);
    Clock::time_point t0 = Clock::now();
    check(cudaMemcpyAsync(dev_, host_, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync (load)");
    check(cudaStreamSynchronize(stream_), "load copy");
    copy_ms_ = us_since(t0) / 1e3;
    int n = static_cast<int>(std::ceil(ms / std::max(copy_ms_, 0.01)));
    for (int i = 0; i < std::min(n, 100000); ++i) cudaMemcpyAsync(dev_, host_, bytes, cudaMemcpyHostToDevice, stream_);
  }
  bool in_flight() const { return cudaStreamQuery(stream_) == cudaErrorNotReady; }
  double copy_ms() const { return copy_ms_; }
  ~Load() {
    cudaStreamSynchronize(stream_);
    if (dev_) cudaFree(dev_);
    if (host_) cudaFreeHost(host_);
    cudaStreamDestroy(stream_);
  }
  Load(Load const&) = delete;
  Load& operator=(Load const&) = delete;

 private:
  bool copies_;
  cudaStream_t stream_ = nullptr;
  void* host_ = nullptr;
  void* dev_ = nullptr;
  double copy_ms_ = 0;
};

struct UnderLoad {
  ModeResult seed;
  Spread attr_gemm, empty_launch;
  bool in_flight_after = false;
  double copy_ms = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--child", 0) == 0 || a.rfind("--json", 0) == 0 || a == "--device-info") {
      if ((a == "--child" || a == "--json") && i + 1 < argc) ++i;
      continue;
    }
    g_forward_args.push_back(a);
  }
  char self[4096] = {};
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  g_self = len > 0 ? std::string(self, len) : argv[0];

  Clock::time_point t_ctx = Clock::now();
  Device dev = find_gpu();
  if (!built_for(dev.major, dev.minor)) {
    die(2, std::string("this doctor (") + CO_VARIANT_NAME + ") is built for sm_" + CO_DOCTOR_ARCHS + "; " + dev.name +
               " is sm_" + std::to_string(dev.major) + std::to_string(dev.minor) +
               ". Run cutlass-overhead-doctor, which picks the binary for this GPU.");
  }
  if (o.device_info) {
    std::printf("sm=%d%d name=%s variant=%s\n", dev.major, dev.minor, dev.name.c_str(), CO_VARIANT_NAME);
    return 0;
  }
  try {
    check(cudaFree(nullptr), "context creation");
    double context_us = us_since(t_ctx);
    cudaStream_t s;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    if (o.child == "counts") return child_counts(o, s);
    if (o.child == "profile") return child_profile(o, s);
    if (o.child == "seed") return child_seed(o, s);
    if (!o.child.empty()) die(64, "unknown --child mode '" + o.child + "'");

    bool host_path = api::host_path_on_hopper();
    std::printf("%s: %s on %s (sm_%d%d), driver %d, runtime %d, CUTLASS %s\n", kTool, CO_VARIANT_NAME,
                dev.name.c_str(), dev.major, dev.minor, dev.driver, dev.runtime, api::cutlass_version());
    if (host_path) std::printf("*** %s ***\n", kHostPathLabel);
    std::vector<std::pair<std::string, std::string>> J;  // the JSON document, in order
    co::doctor::HostInfo hi = co::doctor::host_info();
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

    // Counts per phase (child with CUPTI callbacks).
    std::string err;
    std::string counted = run_child(g_self, "counts", &err);
    std::vector<CountRow> rows;
    std::vector<std::string> encode_lines;
    std::string stand_in;
    {
      std::istringstream in(counted);
      for (std::string line; std::getline(in, line);) {
        std::istringstream ls(line);
        std::string tag;
        ls >> tag;
        if (tag == "count") {
          CountRow r;
          ls >> r.combo >> r.phase >> r.domain >> r.api >> r.n;
          rows.push_back(r);
        } else if (tag == "encode") {
          encode_lines.push_back(line.substr(7));
        } else if (tag == "stand_in") {
          stand_in = line.substr(9);
        }
      }
    }
    if (!err.empty()) std::printf("counts: %s\n", err.c_str());

    auto count_of = [&](std::string const& combo, std::vector<std::string> const& apis, std::string const& phase = "") {
      uint64_t n = 0;
      for (auto const& r : rows)
        if (r.combo == combo && (phase.empty() || r.phase == phase) &&
            std::find(apis.begin(), apis.end(), r.api) != apis.end())
          n += r.n;
      return n;
    };
    std::vector<std::string> kLookups = {"cudaGetDriverEntryPoint", "cudaGetDriverEntryPointByVersion"};
    std::vector<std::string> kEncodes = {"cuTensorMapEncodeTiled"};
    std::vector<std::string> kVersions = {"cudaDriverGetVersion", "cuDriverGetVersion"};
    std::vector<std::string> kAttrs = {"cudaFuncSetAttribute"};
    std::vector<std::string> kSyncs = {"cudaFree", "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMemcpy"};

    std::vector<std::string> jrows;
    for (auto const& r : rows)
      jrows.push_back(jobj({{"combo", jstr(r.combo)}, {"phase", jstr(r.phase)}, {"domain", jstr(r.domain)},
                            {"api", jstr(r.api)}, {"count", jnum(double(r.n))}}));
    J.push_back({"counts_one_steady_call", jarr(jrows)});
    if (!stand_in.empty()) {
      unsigned long long l = 0, e = 0, f = 0, x = 0;
      std::sscanf(stand_in.c_str(), "%llu %llu %llu %llu", &l, &e, &f, &x);
      J.push_back({"encode_stand_in", jobj({{"lookups", jnum(double(l))}, {"encodes", jnum(double(e))},
                                            {"fp4_mapped_to_uint8", jnum(double(f))}, {"encode_errors", jnum(double(x))}})});
      std::printf("encode stand-in (whole child run): %llu lookups, %llu encodes, %llu FP4 mapped to UINT8, %llu errors\n", l, e, f, x);
    }

    // ---- Matrix mode: every built config x epilogue; counts, host time per phase, workspace ----
    if (o.matrix) {
      std::vector<std::string> jm;
      std::printf("\n%-16s %7s %7s %7s %6s %10s %10s %10s %12s\n", "config", "lookup", "encode", "drvver", "attr",
                  "seed us", "init+run", "floor us", "workspace B");
      for (auto const& [name, c] : combos(o)) {
        Workload w(c);
        ModeResult seed = bench_mode(w, co::Mode::kSeed, true, c, s);
        ModeResult ir = bench_mode(w, co::Mode::kInitializeRun, true, c, s);
        ModeResult fl = bench_mode(w, co::Mode::kFloor, true, c, s);
        std::printf("%-16s %7llu %7llu %7llu %6llu %10.2f %10.2f %10.2f %12zu\n", name.c_str(),
                    (unsigned long long)count_of(name, kLookups), (unsigned long long)count_of(name, kEncodes),
                    (unsigned long long)count_of(name, kVersions), (unsigned long long)count_of(name, kAttrs),
                    seed.host.median, ir.host.median, fl.host.median, w.workspace());
        if (!seed.error.empty()) std::printf("   seed: %s\n", seed.error.c_str());
        jm.push_back(jobj({{"combo", jstr(name)}, {"m", jnum(c.m)}, {"silu", c.silu ? "true" : "false"},
                           {"bias", c.bias ? "true" : "false"},
#if defined(CO_DOCTOR_KIND_nvfp4)
                           {"config", jstr(api::config_name(c.m))},
#endif
                           {"lookups", jnum(double(count_of(name, kLookups)))},
                           {"encodes", jnum(double(count_of(name, kEncodes)))},
                           {"driver_version_queries", jnum(double(count_of(name, kVersions)))},
                           {"func_set_attribute", jnum(double(count_of(name, kAttrs)))},
                           {"workspace_bytes", jnum(double(w.workspace()))}, {"params_bytes", jnum(double(w.params()))},
                           {"seed_drained", jmode(seed)}, {"initialize_run_drained", jmode(ir)}, {"floor_drained", jmode(fl)}}));
      }
      J.push_back({"matrix", jarr(jm)});
      // get_workspace_size over M (each M picks its config).
      std::vector<std::string> ws;
      for (int m : {1, 64, 128, 129, 256, 257, 512, 1024, 4096}) {
        Options c = o;
        c.m = m, c.silu = false, c.bias = false;
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
      std::string doc = jobj(J);
      FILE* f = std::fopen(o.json.c_str(), "w");
      if (!f) die(1, "cannot write " + o.json);
      std::fprintf(f, "%s\n", doc.c_str());
      std::fclose(f);
      std::printf("wrote %s\n", o.json.c_str());
      return 0;
    }

    // ---- The user's shape ------------------------------------------------------------------------
    Workload w(o);
    std::printf("%s M=%d N=%d K=%d%s%s: Params %zu bytes, workspace %zu bytes\n",
#if defined(CO_DOCTOR_KIND_nvfp4)
                api::config_name(o.m),
#else
                "SM90 bf16 twin",
#endif
                o.m, o.n, o.k, o.silu ? " +SiLU" : "", o.bias ? " +bias" : "", w.params(), w.workspace());

    // First call (lazy module loading, one-time lookups) vs the second.
    Clock::time_point t0 = Clock::now();
    w.run(s);
    double first_us = us_since(t0);
    check(cudaStreamSynchronize(s), "first call");
    t0 = Clock::now();
    w.run(s);
    double second_us = us_since(t0);
    check(cudaStreamSynchronize(s), "second call");

    std::string reference = "not run: the kernel never executes in this build";
    if (!host_path) {
      std::string detail;
      int bad = w.check_reference(&detail);
      reference = bad == 0 ? "ok (256 sampled outputs match a double-precision reference)"
                           : "FAILED: " + std::to_string(bad) + " of 256 sampled outputs differ, e.g. " + detail;
    }
    std::printf("reference check: %s\n", reference.c_str());

    // Modes (the report's too): drained host time per call, and the back-to-back loop.
    // Keyed by co::mode_name (bench.h), the names Python's cutlass_overhead.Mode has too.
    std::map<std::string, ModeResult> drained, back_to_back;
    for (int v = 0; v < static_cast<int>(co::Mode::kCount); ++v) {
      co::Mode mode = static_cast<co::Mode>(v);
      if (host_path && mode == co::Mode::kGraph) continue;
      drained[co::mode_name(mode)] = bench_mode(w, mode, true, o, s);
      back_to_back[co::mode_name(mode)] = bench_mode(w, mode, false, o, s);
    }
    ModeResult sync_each = bench_mode(w, co::Mode::kSeed, false, o, s, true);

    // A real workspace allocation: cudaMalloc + cudaFree (which synchronizes) of the workspace's size,
    // or 1 MiB where the seed's is empty, beside every call.
    std::size_t ws_bytes = w.workspace() ? w.workspace() : (1u << 20);
    Spread with_alloc = per_call([&] {
      w.run(s);
      void* p = nullptr;
      cudaMalloc(&p, ws_bytes);
      cudaFree(p);
    }, o.calls, o.rounds, nullptr);

    // Kernel-attribute calls: the GEMM's own kernel vs an empty kernel.
    co::KernelHandle gemm_kernel = api::kernel(w.ops);
    auto attr_gemm = [&] { cudaFuncSetAttribute(gemm_kernel.function, cudaFuncAttributeMaxDynamicSharedMemorySize, gemm_kernel.smem_bytes); };
    auto attr_empty = [&] { cudaFuncSetAttribute(co::doctor::empty_kernel_function(), cudaFuncAttributeMaxDynamicSharedMemorySize, 0); };
    auto launch_empty = [&] { co::doctor::launch_empty(s); };
    Spread attr_gemm_idle = per_call(attr_gemm, o.calls, o.rounds, nullptr);
    Spread attr_empty_idle = per_call(attr_empty, o.calls, o.rounds, nullptr);
    Spread launch_empty_idle = per_call(launch_empty, o.calls, o.rounds, s);

    // Under load on another stream.
    auto under = [&](bool copies) {
      UnderLoad u;
      Load load(copies, std::size_t(o.load_mib) << 20, o.load_ms);
      u.copy_ms = load.copy_ms();
      u.seed = bench_mode(w, co::Mode::kSeed, true, o, s);
      u.attr_gemm = per_call(attr_gemm, o.calls, o.rounds, nullptr);
      u.empty_launch = per_call(launch_empty, o.calls, o.rounds, s);
      u.in_flight_after = load.in_flight();
      return u;
    };
    UnderLoad copy_load = under(true);
    UnderLoad kernel_load = under(false);
    check(cudaStreamSynchronize(s), "after load");

    // Profiler attached (child), and the -O0 host build (sibling binary, child).
    std::string perr;
    std::string prof = run_child(g_self, "profile", &perr);
    double prof_host = NAN;
    {
      auto at = prof.find("seed_host_us ");
      if (at != std::string::npos) prof_host = std::atof(prof.c_str() + at + 13);
    }
    std::string o0_path = g_self.substr(0, g_self.rfind('/') + 1) + "co_doctor_" + (kNvfp4 ? "nvfp4" : "sm90") + "_O0";
    double o0_host = NAN;
    std::string o0_note = "not built (configure with CO_BUILD_EXPERIMENTS=ON; SM90 twin only)";
    if (access(o0_path.c_str(), X_OK) == 0 && !host_path) {
      std::string oerr;
      std::string out = run_child(o0_path, "seed", &oerr);
      auto at = out.find("seed_host_us ");
      if (at != std::string::npos) {
        o0_host = std::atof(out.c_str() + at + 13);
        o0_note = "measured (" + o0_path + ")";
      } else {
        o0_note = "failed: " + oerr;
      }
    }

    // ---- Unit costs, measured here (no CUPTI in this process) -----------------------------------
    uint64_t n_lookups = count_of("main", kLookups), n_encodes = count_of("main", kEncodes);
    uint64_t n_versions = count_of("main", kVersions), n_attrs = count_of("main", kAttrs);
    uint64_t n_syncs = 0;
    for (auto const& r : rows)
      if (r.combo == "main" && std::find(kSyncs.begin(), kSyncs.end(), r.api) != kSyncs.end() &&
          !(r.api == "cudaFree" && w.workspace() == 0))
        n_syncs += r.n;
    int unit_iters = std::max(64, o.calls);
    double lookup_us = co::trace::unit_cost_ns("cudaGetDriverEntryPointByVersion", unit_iters) / 1e3;
    double version_us = co::trace::unit_cost_ns("cudaDriverGetVersion", unit_iters) / 1e3;
    double encode_us = NAN;
    {
      std::vector<double> costs;
      for (auto const& line : encode_lines) {
        std::istringstream ls(line);
        std::string combo;
        co::trace::EncodeInputs e;
        unsigned long long addr = 0;
        ls >> combo >> e.data_type >> e.rank >> addr;
        e.address = addr;
        for (auto& d : e.dims) ls >> d;
        for (auto& d : e.strides) ls >> d;
        for (auto& d : e.box) ls >> d;
        for (auto& d : e.element_strides) ls >> d;
        ls >> e.interleave >> e.swizzle >> e.l2_promotion >> e.oob_fill;
        if (combo != "main") continue;
        try {
          costs.push_back(co::trace::encode_cost_ns(e, unit_iters) / 1e3);
        } catch (std::exception const&) {
        }
      }
      if (!costs.empty()) encode_us = spread(costs).median;
    }
    if (std::isnan(encode_us)) encode_us = 0;

    // ---- Verdict ---------------------------------------------------------------------------------
    ModeResult const& seed = drained["seed"];
    if (!seed.error.empty()) throw std::runtime_error("seed pattern failed: " + seed.error);
    double host = seed.median_round_host_us;
    double loop = back_to_back["seed"].loop.median;
    double gpu = host_path ? NAN : (drained.count("graph") && drained["graph"].error.empty() ? back_to_back["graph"].gpu.median : NAN);
    std::string bound;
    if (host_path) {
      bound = "host path only (kernel not executed; " + std::string(kHostPathLabel) + ")";
    } else if (n_syncs > 0 && loop >= 0.8 * (host + gpu)) {
      bound = "sync-bound";
    } else if (host >= gpu) {
      bound = "host-bound";
    } else {
      bound = "GPU-bound";
    }
    struct Part { std::string name; double us; };
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
      add("cuTensorMapEncodeTiled", count_of("main", kEncodes, ph), encode_us);
      add("driver entry-point lookup", count_of("main", kLookups, ph), lookup_us);
      add("driver version query", count_of("main", kVersions, ph), version_us);
      add("cudaFuncSetAttribute on the GEMM kernel", count_of("main", kAttrs, ph), attr_gemm_idle.median);
      parts.push_back({ph + ": rest of the phase", t - attributed});
    }
    parts.push_back({"outside the phases (loop, capture when forced)", host - phase_sum});
    std::vector<Part> ranked = parts;
    std::sort(ranked.begin(), ranked.end(), [](Part const& a, Part const& b) { return a.us > b.us; });

    struct Suspect { std::string name; double delta_us; std::string detail; };
    std::vector<Suspect> suspects;
    auto add_suspect = [&](std::string name, double with, double base, std::string detail) {
      suspects.push_back({std::move(name), with - base, std::move(detail)});
    };
    add_suspect("pinned H2D copy in flight on another stream", copy_load.seed.host.median, seed.host.median,
                "seed host/call " + jnum(copy_load.seed.host.median) + " us vs " + jnum(seed.host.median) +
                    " idle; attribute call " + jnum(copy_load.attr_gemm.median) + " vs " + jnum(attr_gemm_idle.median) +
                    "; empty launch " + jnum(copy_load.empty_launch.median) + " vs " + jnum(launch_empty_idle.median) +
                    (copy_load.in_flight_after ? "" : " (load finished before the end: raise --load-ms)"));
    add_suspect("long kernel in flight on another stream", kernel_load.seed.host.median, seed.host.median,
                "seed host/call " + jnum(kernel_load.seed.host.median) + " us; attribute call " +
                    jnum(kernel_load.attr_gemm.median) + "; empty launch " + jnum(kernel_load.empty_launch.median) +
                    (kernel_load.in_flight_after ? "" : " (load finished before the end: raise --load-ms)"));
    add_suspect("profiler attached (CUPTI activity: runtime, driver, kernels)", prof_host, seed.host.median,
                std::isnan(prof_host) ? "failed: " + perr : "seed host/call " + jnum(prof_host) + " us");
    if (!std::isnan(o0_host)) add_suspect("host code built -O0", o0_host, seed.host.median, "seed host/call " + jnum(o0_host) + " us");
    add_suspect("cudaStreamSynchronize after every call", sync_each.loop.median, loop,
                "loop/iter " + jnum(sync_each.loop.median) + " us vs " + jnum(loop) + " back-to-back");
    add_suspect("a real workspace allocation per call (cudaMalloc + cudaFree of " + std::to_string(ws_bytes) + " B)",
                with_alloc.median, loop, "loop/iter " + jnum(with_alloc.median) + " us vs " + jnum(loop));
    add_suspect("first call (lazy loading, one-time lookups), once per process", first_us, second_us,
                "first " + jnum(first_us) + " us, second " + jnum(second_us) + " us; context creation " + jnum(context_us) + " us");
    add_suspect("3 x cudaFuncSetAttribute on the GEMM kernel instead of an empty kernel",
                3 * attr_gemm_idle.median, 3 * attr_empty_idle.median,
                jnum(attr_gemm_idle.median) + " us vs " + jnum(attr_empty_idle.median) + " us per call");
    std::sort(suspects.begin(), suspects.end(), [](Suspect const& a, Suspect const& b) {
      double x = std::isnan(a.delta_us) ? -1e300 : a.delta_us, y = std::isnan(b.delta_us) ? -1e300 : b.delta_us;
      return x > y;
    });

    std::printf("\n== Verdict: %s ==\n", bound.c_str());
    std::printf("loop, back to back: %.2f us/iter; host per call (stream drained first): %.2f us (IQR %.2f-%.2f); "
                "GPU per call (graph replay): %s us\n",
                loop, seed.host.median, seed.host.p25, seed.host.p75, host_path ? "not run" : jnum(gpu).c_str());
    std::printf("host time of one call, %.2f us (median round), is:\n", host);
    double check_sum = 0;
    for (auto const& p : ranked) {
      if (std::fabs(p.us) < 0.005) continue;
      std::printf("  %8.2f us  %s\n", p.us, p.name.c_str());
    }
    for (auto const& p : parts) check_sum += p.us;
    std::printf("  -------- sum %.2f us (= measured %.2f us)\n", check_sum, host);
    std::printf("\nSuspects, ranked by measured effect per call (us added vs idle/steady):\n");
    for (auto const& sp : suspects) std::printf("  %+9.2f  %s: %s\n", sp.delta_us, sp.name.c_str(), sp.detail.c_str());
    std::printf("\n-O0 host code: %s\nCPU: %s, governor %s, %s/%s kHz (cur/max); nvpmodel: %s\n", o0_note.c_str(),
                hi.cpu_model.c_str(), hi.governor.empty() ? "n/a" : hi.governor.c_str(),
                hi.cur_khz.empty() ? "n/a" : hi.cur_khz.c_str(), hi.max_khz.empty() ? "n/a" : hi.max_khz.c_str(),
                hi.nvpmodel.c_str());

    // ---- JSON ------------------------------------------------------------------------------------
    std::vector<std::pair<std::string, std::string>> jd, jb;
    for (auto const& [k, v] : drained) jd.push_back({k, jmode(v)});
    for (auto const& [k, v] : back_to_back) jb.push_back({k, jmode(v)});
    J.push_back({"params_bytes", jnum(double(w.params()))});
    J.push_back({"workspace_bytes", jnum(double(w.workspace()))});
    J.push_back({"reference_check", jstr(reference)});
    J.push_back({"context_creation_us", jnum(context_us)});
    J.push_back({"first_call_us", jnum(first_us)});
    J.push_back({"second_call_us", jnum(second_us)});
    J.push_back({"modes_drained", jobj(jd)});
    J.push_back({"modes_back_to_back", jobj(jb)});
    J.push_back({"sync_each_call", jmode(sync_each)});
    J.push_back({"with_workspace_alloc", jobj({{"bytes", jnum(double(ws_bytes))}, {"loop_per_iter", jspread(with_alloc)}})});
    J.push_back({"attribute_call", jobj({{"gemm_kernel_idle", jspread(attr_gemm_idle)},
                                         {"empty_kernel_idle", jspread(attr_empty_idle)},
                                         {"gemm_smem_bytes", jnum(gemm_kernel.smem_bytes)}})});
    J.push_back({"empty_launch_idle", jspread(launch_empty_idle)});
    auto jload = [&](UnderLoad const& u) {
      return jobj({{"seed_drained", jmode(u.seed)}, {"attribute_call_gemm", jspread(u.attr_gemm)},
                   {"empty_launch", jspread(u.empty_launch)}, {"load_in_flight_after", u.in_flight_after ? "true" : "false"},
                   {"one_copy_ms", jnum(u.copy_ms)}});
    };
    J.push_back({"under_copy_load", jload(copy_load)});
    J.push_back({"under_kernel_load", jload(kernel_load)});
    J.push_back({"profiler_attached_seed_host_us", jnum(prof_host)});
    J.push_back({"O0", jobj({{"note", jstr(o0_note)}, {"seed_host_us", jnum(o0_host)}})});
    J.push_back({"unit_costs_us", jobj({{"entry_point_lookup", jnum(lookup_us)}, {"driver_version_query", jnum(version_us)},
                                        {"encode_median_over_captured", jnum(encode_us)},
                                        {"func_set_attribute_gemm", jnum(attr_gemm_idle.median)}})});
    std::vector<std::string> jp, js;
    for (auto const& p : parts) jp.push_back(jobj({{"part", jstr(p.name)}, {"us", jnum(p.us)}}));
    for (auto const& sp : suspects)
      js.push_back(jobj({{"suspect", jstr(sp.name)}, {"delta_us", jnum(sp.delta_us)}, {"detail", jstr(sp.detail)}}));
    J.push_back({"verdict", jobj({{"bound", jstr(bound)}, {"loop_us", jnum(loop)}, {"host_us", jnum(host)},
                                  {"gpu_us", jnum(gpu)}, {"synchronizing_calls_per_call", jnum(double(n_syncs))},
                                  {"parts", jarr(jp)}, {"parts_sum_us", jnum(check_sum)}, {"suspects", jarr(js)}})});
    std::string doc = jobj(J);
    FILE* f = std::fopen(o.json.c_str(), "w");
    if (!f) die(1, "cannot write " + o.json);
    std::fprintf(f, "%s\n", doc.c_str());
    std::fclose(f);
    std::printf("\nwrote %s (attach it to the issue)\n", o.json.c_str());
    for (void* p : g_buffers) cudaFree(p);
    cudaStreamDestroy(s);
  } catch (std::exception const& e) {
    die(1, std::string("error: ") + e.what());
  }
  return 0;
}
