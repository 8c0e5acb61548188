// sim/explain/cause.h: the race that matters: which orderings a failing execution depends on.
//
// Given the decisions of a failing execution, find_cause replays it once to learn every
// step's actor and effective footprint, then asks, for each pair of dependent steps of two
// actors (sim::dependent, the explorer's own relation; step i ran before step j), whether
// the failure needs that order. It delays actor A = actor(i) from step i until after step j:
// the steps before i run as recorded, then the steps in (i, j] of the other actors in their
// order (an actor whose step can no longer run there waits with A), then j, then the rest
// in the recorded order where it fits (a re-exploration that makes no new choice of its
// own). When that execution does not fail as the trace does (another verdict, or another
// invariant), the pair (i, j) is a cause. For each i only the first such j is kept: delaying
// past a later step also delays past that one. The steps j tried for an i are the first
// kMaxDelaysPerActor dependent steps of each other actor: a delay longer than that explains
// less. Steps i are taken latest first, so a budget that runs out leaves the earliest
// unexamined (the result then says so: complete false).
//
// Every attempt is a real execution of the system. The result is deterministic (the same
// decisions give the same pairs and sentences) unless CauseBudget::stop fires; it is asked
// before every step i is examined and before every attempt. Bounded by
// attempts and by the steps all attempts run; out of budget, the analysis says "not
// computed" instead of delaying the verdict. Cost: one replay, plus one execution per
// pair tried, O(steps) each: O(steps^2 x actors) in all, within the budget.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "lockstep/model/system.h"
#include "lockstep/sim/sched/scheduler.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::sim {

// What one step of a replayed execution did, as the explorer saw it.
struct StepFact {
  ActorId actor = 0;
  bool timer = false;
  Footprint footprint;  // effective: as refined and widened while it ran
  StepResult result;
  std::vector<ObjectId> released;  // Scheduler::note_released (replays with the event log only)
};

// One choice an execution made (Strategy::choose), in order.
struct ChoiceFact {
  std::string label;
  std::uint32_t options = 0;
  std::uint32_t value = 0;
};

// One execution replayed with every step's facts and the event log.
struct ExecutionFacts {
  ExecutionResult result;
  std::vector<StepFact> steps;             // one per scheduling decision, in order
  std::vector<std::string> object_names;   // by ObjectId
  std::vector<LogEvent> events;
  std::vector<std::string> actors;
  std::vector<Decision> decisions;
  std::vector<ChoiceFact> choices;         // in the order made; the k-th is the k-th "choose" event
};

// Replays `decisions` exactly. Throws Divergence when they do not fit.
ExecutionFacts replay_facts(const System& system, const RunLimits& limits, const std::vector<Decision>& decisions);

struct CauseBudget {
  std::uint64_t max_attempts = 3000;
  std::uint64_t max_steps = 3'000'000;  // over all attempts
  std::function<bool()> stop;           // checked before each step and attempt; may be empty
};

// The most cause pairs a report keeps (the latest found, shown in step order).
inline constexpr std::size_t kMaxCausePairs = 8;
inline constexpr int kMaxDelaysPerActor = 4;
// How far after a step its partners are looked for: keeps the analysis O(steps x window).
inline constexpr std::size_t kCauseWindow = 2048;

// Timing causes (model/timing.h): with a timing model set, after the orderings, each choice
// of the timing model the failing execution made (a timer's duration, a stall, a statement's
// round trip, a clock's skew) is tried at each of its other values, the steps then following the recorded
// schedule where it fits, as a reordering does. A choice whose other value avoids the
// failure is a cause: Cause::timing says which value it had, the first other value (in the
// choice's own order: as written first) that avoids it, and what the execution does then.
// At most kMaxTimingAttempts executions, within the same budget.
inline constexpr std::uint64_t kMaxTimingAttempts = 256;

// REQUIRES: `failing` replays to a failure under `limits`.
Cause find_cause(const System& system, const RunLimits& limits, const std::vector<Decision>& failing,
                 const CauseBudget& budget = {});

// The execution find_cause ran for `pair` (its first step's actor delayed past its second
// step), with its facts and decisions: for a cause pair, the nearest passing (or otherwise
// different) execution. Throws std::invalid_argument when the pair is not two steps of two
// actors, or cannot be reordered so.
ExecutionFacts delayed_execution(const System& system, const RunLimits& limits, const std::vector<Decision>& failing,
                                 const CausePair& pair);

}  // namespace lockstep::sim
