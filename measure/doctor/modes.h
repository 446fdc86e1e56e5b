// One bench() mode (bench.h) run in rounds: the spread of host, loop and GPU time, and the phases of
// the median round so that they add up to that round's host time (the verdict splits it).
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <string>

#include "bench.h"
#include "options.h"
#include "stats.h"
#include "workload.h"

namespace co::doctor {

struct ModeResult {
  Spread host, loop, gpu;
  std::array<double, static_cast<int>(co::Phase::kCount)> phases_us{};  // of the median round
  double median_round_host_us = NAN;
  std::string error;  // what bench() threw; everything else stays NaN then
};

ModeResult bench_mode(Workload const& w, co::Mode mode, bool drain, Options const& o, cudaStream_t s,
                      bool sync = false, bool capture = false);

}  // namespace co::doctor
