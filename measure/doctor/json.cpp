// JSON writers for the doctor's values: strings, numbers (%.6g), objects, arrays, a Spread, a mode.
#include "json.h"

#include <cmath>
#include <cstdio>

#include "fail.h"

namespace co::doctor {

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

std::string jobj(JsonFields const& kv) {
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
  JsonFields ph;
  for (int p = 0; p < static_cast<int>(co::Phase::kCount); ++p) ph.push_back({co::phase_name(static_cast<co::Phase>(p)), jnum(m.phases_us[p])});
  return jobj({{"host_per_call", jspread(m.host)}, {"loop_per_iter", jspread(m.loop)}, {"gpu_per_iter", jspread(m.gpu)},
               {"median_round_host_us", jnum(m.median_round_host_us)}, {"phases_us_of_median_round", jobj(ph)}});
}

void write_json(std::string const& path, JsonFields const& fields) {
  std::string doc = jobj(fields);
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) die(1, "cannot write " + path);
  std::fprintf(f, "%s\n", doc.c_str());
  std::fclose(f);
}

}  // namespace co::doctor
