// sim/sched/run_limits.h: the limits and switches of one execution (Scheduler::run), and
// the one place they are taken from a search's settings (run_limits_of).
#pragma once

#include <cstdint>
#include <functional>

#include "lockstep/model/scenario.h"

namespace lockstep::sim {

struct RunLimits {
  std::uint64_t max_steps = 10'000;
  TimeMode time = TimeMode::untimed;
  std::uint64_t seed = 1;  // feeds Env::random
  bool log_events = false;
  bool record_final_state = false;  // fill ExecutionResult::final_state (Instance::final_state)
  bool fair = true;  // cut executions that repeat an unfair cycle (sim/progress/progress.h)
  // An execution whose steps have repeated one fair cycle for this many steps is a livelock
  // there, before its step bound (sim/progress/progress.h): a bound in the millions then costs no more
  // than this on a spinning model. A loop that legitimately repeats identical steps longer
  // (a retry loop of many thousand identical attempts) needs a larger value.
  std::uint64_t livelock_steps = kDefaultLivelockSteps;
  // Asked every kStopCheckSteps steps: true ends the execution at once, with no verdict
  // (ExecutionResult::interrupted). A wall-time bound or Ctrl-C; may be empty.
  std::function<bool()> stop;
  // Symmetry reduction (sim/explore/symmetry.h) over the classes the instance declares
  // (Instance::symmetric_actors): off for a replay, whose decisions are followed as they are.
  bool symmetry = false;
  // > 0: find where the steps start repeating with this period (ExecutionResult::cycle
  // then covers the whole periodic suffix, not only the ring's window): a lasso's prefix.
  std::uint32_t lasso_period = 0;
};

// The limits of each execution of a search with these settings: the one place they are
// taken from the options (the command line, a scenario, the C++ API).
inline RunLimits run_limits_of(const ExploreSettings& settings) {
  RunLimits limits;
  limits.max_steps = settings.max_steps;
  limits.time = settings.time;
  limits.seed = settings.seed;
  limits.fair = settings.fair;
  limits.livelock_steps = settings.livelock_steps;
  limits.symmetry = settings.symmetry;
  return limits;
}

}  // namespace lockstep::sim
