// sim/progress/progress_judge.h: the progress side of one execution, as the scheduler calls it.
//
// The scheduler schedules; this judges progress (sim/progress/progress.h): it keeps the
// tail's step signatures, watches for a repeating cycle, turns the schedule fair (round
// robin) once an unfair cycle has repeated, keeps the progress obligations, and gives the
// verdict at a step bound, at a livelock bound, at an obligation's deadline or at the end.
// It decides nothing about which actor runs but through filter_fairly().
//
// Guarantees: deterministic given the steps it is told of; the per-step calls (record, ran)
// allocate nothing; a verdict's message names the evidence it rests on: a fair cycle, a
// deadline passed in virtual time, or neither.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/verdict.h"
#include "lockstep/sim/progress/progress.h"
#include "lockstep/sim/sched/run_limits.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

// Names for messages, asked for only when a verdict is written.
struct ProgressNames {
  const std::vector<std::string>& actors;
  const std::vector<std::string>& objects;
  // "; b waits at \"lock m\" for mutex m held by a" for each parked actor not in `except`.
  std::function<std::string(std::uint64_t except)> parked;
};

// How the execution ends, when the judge ends it.
struct ProgressOutcome {
  std::optional<Cycle> cycle;  // the cycle the tail repeats, when one was found
  bool unfair = false;         // fair mode cuts it: no verdict
  Verdict verdict = Verdict::pass;
  std::string invariant;  // the obligation, for liveness
  std::string message;
};

class ProgressJudge {
 public:
  // A new execution under `limits` (the scheduler's: they outlive the execution).
  void begin(const RunLimits& limits);

  // Whether the tail is watched as the execution goes (fair mode, or a livelock bound below
  // the step bound): then every step's signature is kept.
  bool watching_tail(std::uint64_t steps) const {
    return steps >= kFairFirstStep && watch_tail_;
  }
  // Whether the step about to run is to be recorded (record()).
  bool remembers(std::uint64_t steps) const {
    return watching_tail(steps) || lasso_ || steps + kTailSteps >= max_steps_;
  }

  // Fair mode saw an unfair cycle: only the actor that waited longest is offered from now on.
  bool round_robin() const { return round_robin_; }
  // Keeps the transitions of that actor only; returns how many are kept.
  std::size_t filter_fairly(std::span<Transition> enabled) const;

  // Actor `actor` takes step `step` (0-based).
  void ran(ActorId actor, std::uint64_t step) { last_ran_[actor] = step + 1; }
  // Step `step` was taken: its signature, with the actors that could run when it was picked.
  void record(std::uint64_t step, const Transition& t, const StepResult& result, std::uint64_t enabled);

  // Every kFairCheckSteps steps while watching_tail: an outcome when the execution ends
  // here (a livelock bound reached, or an unfair cycle cut).
  std::optional<ProgressOutcome> check_tail(std::uint64_t steps, const ProgressNames& names);
  // The step bound is reached.
  ProgressOutcome at_bound(std::uint64_t steps, const ProgressNames& names);

  // Progress obligations (Env::hot, Env::cold).
  void hot(std::string_view name, Time now, Duration within, ActorId actor) {
    obligations_.make_hot(name, now, within, actor);
  }
  // A liveness verdict when it was met later than its `within` (checked in timed mode only).
  std::optional<ProgressOutcome> cold(std::string_view name, Time now, bool timed);
  // Timed mode, after the clock moved: a liveness verdict for an obligation past its deadline.
  std::optional<ProgressOutcome> overdue(Time now) const;
  // Every actor finished: a liveness verdict for an obligation still hot.
  std::optional<ProgressOutcome> at_end(const std::vector<std::string>& actor_names) const;

 private:
  // Where the repeating cycle was judged: at the livelock bound, or at the step bound.
  enum class JudgedAt : std::uint8_t { livelock_bound, step_bound };
  ProgressOutcome judge_cycle(Cycle cycle, JudgedAt at, std::uint64_t steps, const ProgressNames& names) const;

  const RunLimits* limits_ = nullptr;
  // Of limits_, for the per-step questions: the tail is watched (fair mode, or a livelock
  // bound below the step bound), a lasso is looked for, the step bound.
  bool watch_tail_ = false;
  bool lasso_ = false;
  std::uint64_t max_steps_ = 0;
  StepRing ring_;                    // the last kTailSteps steps, when they may be needed
  std::uint64_t last_mismatch_ = 0;  // lasso_period: the last step unlike the one a period before
  bool mismatch_seen_ = false;
  ObligationSet obligations_;
  CycleWatch watch_;  // the cycle the steps repeat now, once seen
  bool round_robin_ = false;
  std::array<std::uint64_t, kMaxActors> last_ran_{};  // by actor: 1 + the step it last ran
};

}  // namespace lockstep::sim
