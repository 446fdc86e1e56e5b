// What the OS says about the host: CPU frequency and governor (cpufreq), Jetson power mode (nvpmodel).
#include "doctor.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace co::doctor {
namespace {

std::string read_line(std::string const& path) {
  std::ifstream f(path);
  std::string s;
  if (f) std::getline(f, s);
  return s;
}

std::string run_command(char const* cmd) {
  FILE* p = popen(cmd, "r");
  if (!p) return "";
  std::string out;
  char buf[256];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  pclose(p);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// The first value of each "key : value" line of /proc/cpuinfo that `keys` names.
std::map<std::string, std::string> cpuinfo_fields(std::vector<std::string> const& keys) {
  std::map<std::string, std::string> found;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    std::size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::size_t at = line.find_first_not_of(" \t", colon + 1);
    if (at != std::string::npos && std::find(keys.begin(), keys.end(), key) != keys.end()) found.emplace(key, line.substr(at));
  }
  return found;
}

// As stamp.cpu_model (Python) reads it: "model name" (x86); aarch64 has none, so lscpu's vendor and
// model name (it names the part), else the CPU implementer and part ids; last, the board's "Model".
std::string cpu_model() {
  auto f = cpuinfo_fields({"model name", "CPU implementer", "CPU part", "Model"});
  if (f.count("model name")) return f["model name"];
  std::string listed =
      run_command("LC_ALL=C lscpu 2>/dev/null | sed -n 's/^Vendor ID: *//p; s/^Model name: *//p' | head -2 | tr '\\n' ' '");
  if (!listed.empty() && listed.back() != '-') return listed;
  if (f.count("CPU implementer") && f.count("CPU part"))
    return "CPU implementer " + f["CPU implementer"] + ", part " + f["CPU part"];
  return f.count("Model") ? f["Model"] : "";
}

}  // namespace

HostInfo host_info() {
  HostInfo h;
  h.cpus = static_cast<int>(std::thread::hardware_concurrency());
  std::string base = "/sys/devices/system/cpu/cpu0/cpufreq/";
  h.governor = read_line(base + "scaling_governor");
  h.cur_khz = read_line(base + "scaling_cur_freq");
  h.max_khz = read_line(base + "cpuinfo_max_freq");
  h.min_khz = read_line(base + "cpuinfo_min_freq");
  h.cpu_model = cpu_model();
  h.nvpmodel = run_command("command -v nvpmodel >/dev/null 2>&1 && nvpmodel -q 2>&1 | tr '\\n' ' '");
  if (h.nvpmodel.empty()) h.nvpmodel = "not present (not a Jetson, or nvpmodel not on PATH)";
  char const* lazy = std::getenv("CUDA_MODULE_LOADING");
  h.module_loading = lazy ? lazy : "(unset: LAZY by default since CUDA 12.2)";
  return h;
}

}  // namespace co::doctor
