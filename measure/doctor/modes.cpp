// Rounds of bench(): o.rounds rounds of o.calls calls each, a failure recorded rather than thrown so
// that one mode failing does not stop the others.
#include "modes.h"

#include <algorithm>
#include <exception>
#include <vector>

namespace co::doctor {

ModeResult bench_mode(Workload const& w, co::Mode mode, bool drain, Options const& o, cudaStream_t s, bool sync,
                      bool capture) {
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

}  // namespace co::doctor
