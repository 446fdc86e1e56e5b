// Phase markers for the call pattern.
//
// Each marker tells the CUPTI recorder (libco_trace) which step the calling thread is in and, only
// while a benchmark has installed a sink, adds the step's steady_clock time to it. Without a sink a
// marker is one store to a thread_local: the code being measured is the issue's, not ours.
#pragma once

#include <array>
#include <chrono>

#include "co_trace.h"

namespace co {

struct PhaseTimes {
  std::array<double, static_cast<int>(Phase::kCount)> ns{};
};

inline PhaseTimes*& phase_sink() {
  thread_local PhaseTimes* sink = nullptr;
  return sink;
}

// Installs `times` as this thread's sink for its lifetime and restores the previous one on every way
// out, exceptions included: the sink never points at a dead stack frame.
class PhaseSinkGuard {
 public:
  explicit PhaseSinkGuard(PhaseTimes* times) : previous_(phase_sink()) { phase_sink() = times; }
  PhaseSinkGuard(PhaseSinkGuard const&) = delete;
  PhaseSinkGuard& operator=(PhaseSinkGuard const&) = delete;
  ~PhaseSinkGuard() { phase_sink() = previous_; }

 private:
  PhaseTimes* previous_;
};

class PhaseScope {
 public:
  using Clock = std::chrono::steady_clock;

  PhaseScope() : sink_(phase_sink()) {
    if (sink_) last_ = Clock::now();
  }
  PhaseScope(PhaseScope const&) = delete;
  PhaseScope& operator=(PhaseScope const&) = delete;

  void enter(Phase next) {
    if (sink_) {
      Clock::time_point now = Clock::now();
      sink_->ns[static_cast<int>(current_)] += std::chrono::duration<double, std::nano>(now - last_).count();
      last_ = now;
    }
    current_ = next;
    trace::set_phase(next);
  }

  // Declared first in a call, destroyed last: closes the final step after the locals' destructors.
  ~PhaseScope() { enter(Phase::kOutside); }

 private:
  PhaseTimes* sink_;
  Clock::time_point last_{};
  Phase current_ = Phase::kOutside;
};

}  // namespace co
