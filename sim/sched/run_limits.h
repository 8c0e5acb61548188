// sim/sched/run_limits.h: the limits and switches of one execution (Scheduler::run), and
// the one place they are taken from a search's settings (run_limits_of).
#pragma once

#include <cstdint>
#include <functional>

#include "lockstep/model/scenario.h"

namespace lockstep::sim {

// RunSettings (model/scenario.h) and the engine's own switches. Its defaults are the
// settings' but for symmetry, off unless a search asks for it: a replay follows its decisions
// as they are.
struct RunLimits : RunSettings {
  RunLimits() { symmetry = false; }

  bool log_events = false;
  bool record_final_state = false;  // fill ExecutionResult::final_state (Instance::final_state)
  // Asked every kStopCheckSteps steps: true ends the execution at once, with no verdict
  // (ExecutionResult::interrupted). A wall-time bound or Ctrl-C; may be empty.
  std::function<bool()> stop;
  // > 0: find where the steps start repeating with this period (ExecutionResult::cycle
  // then covers the whole periodic suffix, not only the ring's window): a lasso's prefix.
  std::uint32_t lasso_period = 0;
};

// The limits of each execution of a search with these settings: the one place they are
// taken from the options (the command line, a scenario, the C++ API).
inline RunLimits run_limits_of(const RunSettings& settings) {
  RunLimits limits;
  static_cast<RunSettings&>(limits) = settings;
  return limits;
}

}  // namespace lockstep::sim
