// Quartiles by linear interpolation, and the per-call timing loop the doctor uses beside bench().
#include "stats.h"

#include <algorithm>

#include "fail.h"

namespace co::doctor {

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

Spread per_call(std::function<void()> const& fn, int calls, int rounds, cudaStream_t drain) {
  for (int i = 0; i < std::min(calls, 10); ++i) fn();
  if (drain) check(cudaStreamSynchronize(drain), "cudaStreamSynchronize (drain)");
  std::vector<double> v;
  for (int r = 0; r < rounds; ++r) {
    double total = 0;
    for (int i = 0; i < calls; ++i) {
      if (drain) check(cudaStreamSynchronize(drain), "cudaStreamSynchronize (drain)");
      Clock::time_point t0 = Clock::now();
      fn();
      total += us_since(t0);
    }
    v.push_back(total / calls);
  }
  if (drain) check(cudaStreamSynchronize(drain), "cudaStreamSynchronize (drain)");
  return spread(v);
}

}  // namespace co::doctor
