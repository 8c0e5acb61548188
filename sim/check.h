// sim/check.h: checking a scenario and replaying a trace: what `lockstep check`, `sweep`
// and `replay` do, as a library (the tests and the user-facing API call it too).
//
// check_scenario explores with the scenario's settings (command-line overrides win) and,
// for a failure, records its trace by re-running the failing decisions with the event log
// on. replay_trace re-executes a trace from its decisions alone and checks that decisions,
// event log and verdict are identical; any difference is a Divergence naming the step.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "lockstep/model/scenario.h"
#include "lockstep/sim/explain/cause.h"
#include "lockstep/sim/explore/exploration.h"
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/pg/server/statement_log.h"
#include "lockstep/sim/explain/shrink.h"
#include "lockstep/sim/explore/subtree_exchange.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::sim {

// The command line's settings over a scenario's own (unset: the scenario's).
struct CheckOverrides {
  SettingOverrides settings = {};  // model/scenario.h
  StrategyOptions::Shard shard = {};  // dfs: explore only this shard of the search tree
  bool iterative = false;  // with a preemption bound K: try bounds 0, 1, ..., K in turn
  bool shrink = true;      // shrink a failure's trace before returning it
  std::uint64_t speculate_after = 1000;  // ExploreOptions::speculate_after
};

struct CheckOptions {
  CheckOverrides overrides;
  std::function<double()> elapsed_seconds;
  std::function<void(const ExploreStats&)> progress;
  // Asked before every execution and every shrinking attempt: true stops both (Ctrl-C).
  std::function<bool()> stop_requested;
  // Checkpoints (sim/explore/checkpoint.h): written to checkpoint_path every checkpoint_interval_s
  // seconds and where the search ends; the search goes on from resume_path's. Only for
  // strategies with checkpoints (strategy_has_checkpoints), without a preemption bound.
  std::optional<std::string> checkpoint_path;
  std::optional<std::string> resume_path;
  double checkpoint_interval_s = 60;
  // Runs a task on another thread, for CheckOverrides::jobs > 1 (ExploreOptions::spawn).
  std::function<void(std::function<void()>)> spawn;
  // Other processes for one dpor search (check --queue; ExploreOptions::exchange): the
  // coordinator's side.
  std::shared_ptr<SubtreeExchange> exchange;
};

// check --queue (sim/explore/subtree_exchange.h). What a coordinator and its workers must agree on,
// as a JSON text: lockstep's version, the scenario's digest and the settings that shape the
// search (as a checkpoint's, without the shard).
std::string queue_settings(const Scenario& scenario, const CheckOptions& options);

// A worker: explores the tasks of `source` with the scenario's search (options as for
// check_scenario) until the run is over or options.stop_requested.
struct WorkerReport {
  std::uint64_t tasks = 0;
  std::uint64_t explored = 0;  // complete and redundant executions of those tasks' subtrees
  std::uint64_t cut = 0;       // tasks withdrawn (or stopped) while explored here
  bool interrupted = false;
};
// Throws InputError for a strategy other than dpor (or with a preemption bound) and for a
// malformed task.
WorkerReport serve_scenario(const Scenario& scenario, const CheckOptions& options, SubtreeSource& source);

// An estimate of a search's size (check --estimate): the search runs for a few seconds and
// each progress sample's executions / StrategyStatus::explored_fraction estimates the total; the
// interval is the lowest and highest of the samples in the second half of that time. Exact
// when the search finished meanwhile.
struct Estimate {
  double executions = 0;
  double low = 0, high = 0;
  double seconds = 0;  // at the sampled rate
  std::uint64_t sampled = 0;
  double sampled_seconds = 0;
  bool exact = false;
};

// Throws InputError for an unknown strategy, or one that cannot estimate (random, pct).
Estimate estimate_scenario(const Scenario& scenario, const CheckOptions& options, double seconds);

struct CheckReport {
  std::string strategy;
  std::uint64_t seed = 0;
  RunSettings run;  // what each execution ran under (time mode, timing model, bounds)
  int preemption_bound = -1;  // the bound the result is for (-1: none)
  ExploreResult result;
  bool as_expected = false;
  std::optional<Trace> trace;  // present when the verdict is a failure of one execution
  // A lock-order cycle across executions: one trace per edge, of an execution that took
  // it (each passes alone); `trace` is then absent.
  using Witness = LockOrderTrace;
  std::vector<Witness> witnesses;
};

// Throws InputError for an unknown strategy name. Wall time (time_limit_s) bounds the search
// and the shrinking that follows it together; a random or pct search with neither an
// execution nor a time bound gets kDefaultRandomExecutions.
CheckReport check_scenario(const Scenario& scenario, const CheckOptions& options);

bool verdict_as_expected(const Expectation& expect, Verdict verdict, const std::string& invariant);

// Shrinks a failing trace (see sim/explain/shrink.h) and re-records it; `file` names it in messages.
// REQUIRES: the trace replays (replay_trace) with its verdict.
Trace shrink_trace(const Trace& trace, const std::string& file, const ShrinkBudget& budget = {});

// The trace of a failure of `system` (shrunk when asked, within `budget`), with its cause
// (sim/explain/cause.h, stopped by the budget's stop as well); `scenario` is embedded as is.
// The cause analysis stops only at `cause_stop` (an interrupt) and its own deterministic
// bounds, so that a trace's bytes do not depend on the wall time its search had left.
Trace failure_trace_for(const System& system, const nlohmann::json& scenario, const RunLimits& limits,
                        const FoundFailure& failure, bool shrink, const ShrinkBudget& budget = {},
                        const std::function<bool()>& cause_stop = {});

// Runs one execution of the scenario under `strategy` with the event log on, and returns it
// as a trace (whatever its verdict). Throws Divergence as Scheduler::run does.
Trace record_execution(const Scenario& scenario, Strategy& strategy, const RunLimits& limits);
// With `statements`, every statement of the simulated PostgreSQL is recorded there.
Trace record_execution(const System& system, const nlohmann::json& scenario, Strategy& strategy,
                       const RunLimits& limits, pg::StatementLog* statements = nullptr);

// The cause of a failing trace (sim/explain/cause.h) on the system of its embedded scenario.
// Throws InputError for a malformed scenario, Divergence when the trace does not replay.
Cause trace_cause(const Trace& trace, const std::string& file, const CauseBudget& budget = {});

// The trace's execution replayed with every step's facts (footprints, results, objects).
ExecutionFacts trace_facts(const Trace& trace, const std::string& file);

// For a lasso (Trace::lasso): who holds what the cycle's steps touch when the cycle begins,
// as "m held by a since step 0; ..." ("" when nothing is held). Replays the trace once.
std::string cycle_holders(const Trace& trace, const std::string& file);

// The execution with the trace's cause pair k (1-based) reordered (sim/explain/cause.h
// delayed_execution) as a trace of its own, which replays: the nearest passing execution.
// Throws InputError when the trace has no such pair.
Trace delayed_trace(const Trace& trace, const std::string& file, std::size_t k);

struct ReplayReport {
  ExecutionResult result;
  std::vector<LogEvent> events;
  std::vector<std::string> actors;
};

// The scenario a trace embeds, with its system configured. A trace of a model in C++
// ("system": "api") gets the registered system that makes that model (SystemInfo::
// from_model_identity); InputError when none does, or when the scenario is malformed.
Scenario scenario_of_trace(const Trace& trace, const std::string& file);
// Whether this program can run the trace: not a model in C++, or one it registers.
bool replays_here(const Trace& trace);

// Throws Divergence when the trace no longer fits the code; InputError when its embedded
// scenario is malformed (`file` names the trace in messages).
// With `statements`, the replay records every statement of the simulated PostgreSQL there
// (for the conformance runner).
ReplayReport replay_trace(const Trace& trace, const std::string& file, pg::StatementLog* statements = nullptr);
// The trace with the event log and message this lockstep records for its decisions (after a
// change to what trace rows show), its cause found again when it had one. Divergence unless
// the decisions all run and end with the trace's verdict and invariant.
Trace rerecorded_trace(const Trace& trace, const std::string& file);

// Replays the trace's decisions on `system` (a model given in code) with the same checks.
ReplayReport replay_on_system(const System& system, const Trace& trace, const std::string& file,
                              pg::StatementLog* statements = nullptr);

}  // namespace lockstep::sim
