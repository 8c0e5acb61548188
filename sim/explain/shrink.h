// sim/explain/shrink.h: counterexample shrinking.
//
// Given the decisions of a failing execution, searches for a simpler schedule with the same
// verdict (and, for a violation, the same invariant): fewer preemptions first, then fewer
// steps, then fewer switches between actors. Candidates move a whole run of one actor's
// steps around a preemption (so that the preempted actor goes on, or the preempting run
// waits), drop one decision of the current best schedule, or cut it short; each is run under a guided strategy that follows the
// remaining decisions where they fit and otherwise lets the previous actor go on (no
// preemption). Every accepted candidate is a real execution, so the result replays exactly.
// Greedy and bounded (ShrinkBudget): by attempts and by the steps all attempts run, both
// deterministic, and by an optional stop callback (a deadline, an interrupt), which makes
// the result depend on when it fires. Out of budget, the best schedule found so far is the
// result. Memory: O(length of the schedule), candidates are built one at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "lockstep/model/system.h"
#include "lockstep/sim/sched/scheduler.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

struct ScheduleShape {
  int preemptions = 0;
  std::uint64_t steps = 0;
  int switches = 0;

  // Lexicographic: preemptions, then steps, then switches.
  bool simpler_than(const ScheduleShape& o) const;
};

struct ShrinkResult {
  std::vector<Decision> decisions;  // of the simplest failing execution found
  ExecutionResult result;
  ScheduleShape original;
  ScheduleShape shrunk;
  std::uint64_t attempts = 0;
  bool out_of_budget = false;  // stopped by the budget, not because nothing simpler was found
};

struct ShrinkBudget {
  std::uint64_t max_attempts = 4000;
  std::uint64_t max_steps = 20'000'000;  // over all attempts: seconds of work, not hours
  std::function<bool()> stop;            // checked before each attempt; may be empty
};

// REQUIRES: `failing` reproduces `target` (a failure verdict) under `limits`.
ShrinkResult shrink_failure(const System& system, const RunLimits& limits, const std::vector<Decision>& failing,
                            const ExecutionResult& target, const ShrinkBudget& budget = {});

}  // namespace lockstep::sim
