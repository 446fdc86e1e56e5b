// What the OS says about the host: CPU frequency and governor (cpufreq), Jetson power mode (nvpmodel).
#include "doctor.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

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

}  // namespace

HostInfo host_info() {
  HostInfo h;
  h.cpus = static_cast<int>(std::thread::hardware_concurrency());
  std::string base = "/sys/devices/system/cpu/cpu0/cpufreq/";
  h.governor = read_line(base + "scaling_governor");
  h.cur_khz = read_line(base + "scaling_cur_freq");
  h.max_khz = read_line(base + "cpuinfo_max_freq");
  h.min_khz = read_line(base + "cpuinfo_min_freq");
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      h.cpu_model = line.substr(line.find(':') + 2);
      break;
    }
  }
  h.nvpmodel = run_command("command -v nvpmodel >/dev/null 2>&1 && nvpmodel -q 2>&1 | tr '\\n' ' '");
  if (h.nvpmodel.empty()) h.nvpmodel = "not present (not a Jetson, or nvpmodel not on PATH)";
  char const* lazy = std::getenv("CUDA_MODULE_LOADING");
  h.module_loading = lazy ? lazy : "(unset: LAZY by default since CUDA 12.2)";
  return h;
}

}  // namespace co::doctor
