// Host timing and its summary: a median with its interquartile range, the rounds kept beside it.
#pragma once

#include <cuda_runtime_api.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <vector>

namespace co::doctor {

using Clock = std::chrono::steady_clock;

inline double us_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

struct Spread {
  double median = NAN, p25 = NAN, p75 = NAN;
  std::vector<double> rounds;
};

Spread spread(std::vector<double> v);

// Mean host us per call of fn(), one value per round; the stream is drained before each call when
// `drain` is set, outside the timed span.
Spread per_call(std::function<void()> const& fn, int calls, int rounds, cudaStream_t drain);

}  // namespace co::doctor
