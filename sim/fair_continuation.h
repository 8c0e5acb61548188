// sim/fair_continuation.h: does a fair scheduler leave the cycle an execution was cut in?
//
// Fair mode (sim/progress.h) cuts an execution whose tail repeats a cycle while another
// actor could run and never does. That execution says nothing yet: the loop may be left as
// soon as the starved actor runs (a retry loop waiting for a release), or never (a spin on a
// lock nobody will release, two actors trading a lock without end). continue_fairly answers
// it the way CHESS's fair scheduler would: it replays the cut execution's decisions, then
// goes on round-robin (each actor in turn among those that can run; a parked actor's timer
// when its turn comes and it cannot run; the first value of every choice) up to the step
// bound. That continuation is a real, fair execution of the system: its verdict stands as
// any other's. A livelock then names the cycle no fair continuation left.
//
// Deterministic: the same decisions give the same continuation. Bounded by the step bound
// and RunLimits::stop, as any execution.
#pragma once

#include <vector>

#include "lockstep/model/system.h"
#include "lockstep/sim/scheduler.h"

namespace lockstep::sim {

struct FairContinuation {
  ExecutionResult result;
  std::vector<Decision> decisions;  // the prefix's and the continuation's
};

// REQUIRES: `prefix` replays on `system` under `limits` (the decisions of a cut execution).
FairContinuation continue_fairly(const System& system, const RunLimits& limits, const std::vector<Decision>& prefix);

}  // namespace lockstep::sim
