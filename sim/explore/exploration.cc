// sim/explore/exploration.cc: the search and the recording of its failure, shared by the command
// line and the C++ API (sim/explore/exploration.h).
#include "lockstep/sim/explore/exploration.h"

#include <algorithm>

#include <fmt/format.h>

#include "lockstep/model/scenario.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/invariant.h"

namespace lockstep::sim {
namespace {

void add_stats(ExploreStats& into, const ExploreStats& from) {
  into.executions += from.executions;
  into.redundant += from.redundant;
  into.steps += from.steps;
  into.failures += from.failures;
  for (std::size_t v = 0; v < into.by_verdict.size(); ++v) into.by_verdict[v] += from.by_verdict[v];
}

// The budget of shrinking and cause analysis: what is left of the search's. Shrinking
// attempts count as executions against the user's execution bound; the wall-time bound and
// the stop flag cut both.
ShrinkBudget budget_after(const ExplorationRequest& request, const ExploreResult& result, double time_limit_s) {
  ShrinkBudget budget;
  const std::uint64_t used = result.stats.executions + result.stats.redundant;
  budget.max_attempts = std::min(budget.max_attempts, request.explore.executions_left(used));
  const auto elapsed = request.explore.elapsed_seconds;
  const auto stop = request.explore.stop_requested;
  budget.stop = [time_limit_s, elapsed, stop] {
    return (stop && stop()) || (time_limit_s > 0 && elapsed && elapsed() >= time_limit_s);
  };
  return budget;
}

}  // namespace

void apply_default_bounds(std::string_view strategy, ExploreOptions& explore) {
  const StrategyInfo* info = find_strategy(strategy);
  const bool never_exhaustive = info != nullptr && !info->exhaustive;
  if (never_exhaustive && explore.unbounded()) {
    explore.max_executions = kDefaultRandomExecutions;
  }
}

Exploration explore_and_record(const ExplorationRequest& request) {
  LOCKSTEP_INVARIANT(request.system != nullptr, "an exploration has a system");
  Exploration x;
  x.strategy = find_strategy(request.strategy);
  if (x.strategy == nullptr) {
    throw InputError(fmt::format("{}: unknown strategy \"{}\" (known: {})", request.strategy_where, request.strategy,
                                 strategy_names_text()));
  }
  if (request.strategy_options.shard.count > 1 && !strategy_is_shardable(*x.strategy)) {
    throw InputError(fmt::format("{}: only dfs splits one scenario's search into shards (strategy {})", request.source,
                                 request.strategy));
  }
  if (request.iterative && request.strategy_options.max_preemptions < 0) {
    throw InputError(fmt::format("{}: iterative deepening needs a preemption bound (--preemptions K)", request.source));
  }
  x.explore = request.explore;
  apply_default_bounds(request.strategy, x.explore);
  const int bound = request.strategy_options.max_preemptions;
  // Iterative deepening runs bounds 0..K and stops at the first that fails: the failure
  // found has the fewest preemptions the strategy can reach.
  StrategyOptions so = request.strategy_options;
  ExploreStats total;
  for (int k = request.iterative ? 0 : bound; k <= bound; ++k) {
    so.max_preemptions = k;
    auto strategy = make_strategy(request.strategy, so);
    x.result = explore_system(*request.system, *strategy, x.explore);
    add_stats(total, x.result.stats);
    x.preemption_bound = k;
    if (x.result.first_failure || k >= bound) break;
  }
  if (request.iterative) x.result.stats = total;
  if (!x.result.first_failure) return x;
  const FoundFailure& failure = *x.result.first_failure;
  if (!failure.witnesses.empty()) {
    // Each edge's execution as it was explored: not shrunk (a shorter one may not take it).
    for (const LockOrderWitness& w : failure.witnesses) {
      auto replay = make_replay_strategy(w.decisions);
      Trace t = record_execution(*request.system, request.document, *replay, x.explore.limits);
      t.strategy = request.strategy;
      t.execution = w.execution;
      x.witnesses.push_back({w.edge, std::move(t)});
    }
    return x;
  }
  // The cause analysis too: a trace cut by the time bound says so (its cause incomplete).
  const ShrinkBudget budget = budget_after(request, x.result, x.explore.time_limit_s);
  Trace t = failure_trace_for(*request.system, request.document, x.explore.limits, failure, request.shrink, budget,
                              budget.stop);
  t.strategy = request.strategy;
  t.execution = failure.execution;
  x.trace = std::move(t);
  return x;
}

}  // namespace lockstep::sim
