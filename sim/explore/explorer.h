// sim/explore/explorer.h: runs execution after execution under one strategy, within bounds.
//
// Bounds: steps per execution (RunLimits::max_steps; past it sim/progress/progress.h judges the
// execution), executions, and wall time, checked between executions and every
// kStopCheckSteps steps inside one. sim/ has no clock: the caller passes elapsed_seconds
// (the CLI uses a steady clock from real/); without it there is no time bound.
//
// The overall verdict is the first failure's (violation, deadlock, step_bound,
// model_error); with no failure it is pass only when the strategy covered every execution,
// and incomplete otherwise: a bounded search is never reported as pass.
//
// Lock-order edges of every complete execution go into one graph (sim/explain/lock_order.h): a
// cycle over executions is a failure like any other, found at the execution that closes it.
//
// Memory: the scheduler's buffers and the strategy's stack, O(depth of one execution); a
// failure keeps one decision list; the lock-order graph one per distinct edge. Nothing else
// grows with the number of executions.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lockstep/model/system.h"
#include "lockstep/sim/explain/lock_order.h"
#include "lockstep/sim/sched/scheduler.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

class SubtreeExchange;

struct ExploreStats {
  std::uint64_t executions = 0;  // complete executions, each with a verdict
  std::uint64_t redundant = 0;   // ended early by the strategy (sleep-set blocked): no verdict
  std::uint64_t skipped = 0;     // belonging to other shards
  std::uint64_t unfair = 0;      // cut by fair mode: they repeated an unfair cycle (no verdict)
  std::uint64_t steps = 0;       // of both kinds
  std::uint64_t timer_steps = 0;  // of those, timers firing (sleeps ending, timeouts)
  std::uint64_t unjudged_deadlines = 0;  // untimed: obligations' deadlines (`within`) not judged
  std::uint64_t failures = 0;
  std::array<std::uint64_t, std::size(kAllVerdicts)> by_verdict{};  // indexed by Verdict
  std::map<std::string, std::uint64_t> marks;  // complete executions per Instance::marks() entry
  double elapsed_s = 0;
  // For progress: the strategy's StrategyStatus::explored_fraction when the stats were taken.
  double explored_fraction = 0;
};

// The search's bounds (SearchBounds, model/scenario.h: time_limit_s needs elapsed_seconds),
// each execution's limits and the services the search calls.
struct ExploreOptions : SearchBounds {
  RunLimits limits;
  std::function<double()> elapsed_seconds;
  // Asked before every execution and every kStopCheckSteps steps inside one: true stops the
  // search there (Ctrl-C); the result is then `interrupted`, its verdict incomplete unless a
  // failure was already found. The time bound is checked as often.
  std::function<bool()> stop_requested;
  // Called every `progress_interval_executions` executions or `progress_interval_s` of wall time (needs
  // elapsed_seconds), whichever comes first, and once at the end.
  std::function<void(const ExploreStats&)> progress;
  std::uint64_t progress_interval_executions = 4096;
  double progress_interval_s = 0.25;
  // Called after every complete (not redundant) execution, with its result.
  std::function<void(const ExecutionResult&)> on_execution;
  // Checkpoints (sim/explore/checkpoint.h), for a strategy that has them: `checkpoint` is given the
  // search's state every `checkpoint_interval_s` seconds (needs elapsed_seconds), and once at the
  // end: where it stopped short of the end (a bound, an interrupt), or complete. `resume` is
  // such a state to go on from; the bounds (executions, seconds) then count this run only,
  // and the stats are the totals of every run.
  std::function<void(const nlohmann::json&)> checkpoint;
  double checkpoint_interval_s = 60;
  std::shared_ptr<const nlohmann::json> resume;
  std::string resume_source;  // the checkpoint's file, for messages
  // Threads for one search (sim/explore/speculation.h): with more than one, other threads explore
  // pending branches' subtrees ahead of the serial walk, which takes each one whose start
  // is unchanged when it gets there. The result is the one thread's in every respect
  // (counts, verdict, first failure, order); only the time differs. For a strategy that
  // speculates (dpor in optimal mode) and no on_execution; a strategy of independent
  // executions (random: IndependentExecutions::fresh_copy) runs them on the threads and takes the
  // outcomes in order (sim/explore/portfolio.h); others run on one thread.
  // `spawn` runs a task on another thread (sim/ starts none: real/task_threads.h has them);
  // without it the search runs on one thread.
  int jobs = 1;  // 1 to kMaxJobs
  std::function<void(std::function<void()>)> spawn;
  // The executions the search runs alone before it gives work away: a small search is over
  // before that pays (tests set 0).
  std::uint64_t speculate_after = 1000;
  // Other processes for one search (sim/explore/subtree_exchange.h): the serial walk publishes
  // pending subtrees there too, as it gives them to threads, with the same guarantee.
  std::shared_ptr<SubtreeExchange> exchange;
  // The walk publishes a subtree only while the work other processes did for nothing (a
  // subtree whose start changed after a worker began it) is at most this fraction of the
  // executions explored so far: a bound on the redundant work, paid for in work not given.
  double max_redundant = 0.05;
};

struct FoundFailure {
  ExecutionResult result;
  std::vector<Decision> decisions;
  std::uint64_t execution = 0;  // 1-based index among the executions explored
  // A lock-order cycle across executions (sim/explain/lock_order.h): result is its `lock_order`
  // violation, and each witness an execution (it passes alone) that took one of its edges.
  std::vector<LockOrderWitness> witnesses;
};

struct ExploreResult {
  Verdict verdict = Verdict::pass;
  ExploreStats stats;
  std::optional<FoundFailure> first_failure;
  bool exhaustive = false;
  bool interrupted = false;  // stop_requested ended the search
  bool resumed = false;      // it went on from a checkpoint (ExploreOptions::resume)
  // ExploreOptions::jobs > 1: subtrees explored on other threads and taken as they were,
  // and those explored there but not taken (their start changed, or the search ended first).
  struct Speculation {
    int jobs = 1;  // the threads the search ran on (1: the strategy does not speculate)
    bool portfolio = false;  // independent executions (random) run on them (sim/explore/portfolio.h)
    std::uint64_t taken = 0, taken_executions = 0, dropped = 0, dropped_executions = 0;
    // ExploreOptions::exchange: subtrees published for other processes; of those, taken
    // from a worker's result (and their executions), taken back and explored here, and
    // withdrawn (their start changed, or the search ended before reaching them).
    bool exchange = false;
    std::uint64_t published = 0, remote_taken = 0, remote_taken_executions = 0, taken_back = 0, withdrawn = 0;
    // Times the walk stopped publishing because the redundant work reached
    // ExploreOptions::max_redundant of its executions.
    std::uint64_t held_back = 0;
  } speculation;
  // Symmetry reduction (RunLimits::symmetry, sim/explore/symmetry.h): the actors in the classes the
  // system declared and their permutations; 0 actors when it declared none or it was off.
  struct SymmetryUsed {
    int actors = 0;
    std::uint64_t permutations = 1;
  } symmetry;
  std::string stop_reason;  // why the search ended, for reports
  // What the user should know about how the search ran (dpor leaving optimal mode, say).
  std::vector<std::string> notes;
  // Optimal DPOR's fallback: why it left optimal mode ("" when it did not) and the execution
  // at which the search began again as source-DPOR (the counts above are that search's).
  std::string fallback;
  std::uint64_t fallback_at = 0;
};

ExploreResult explore_system(const System& system, Strategy& strategy, const ExploreOptions& options);

}  // namespace lockstep::sim
