// sim/explore/exploration.h: the one front door to exploration, for the command line
// (check_scenario, sim/check.h) and the C++ API (run_model, sim/model_run.h) alike.
//
// explore_and_record looks the strategy up in the catalog (sim/strategies/strategy.h), applies the
// default bounds where the caller gave none, runs the search (with iterative deepening over
// preemption bounds when asked), and records the first failure's trace: shrunk and
// cause-analysed under the same budget as the search (its wall time, its execution bound,
// the stop flag). Both callers therefore explore, bound and record the same way; they only
// differ in where their settings come from and what they report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/model/system.h"
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/strategies/strategy.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::sim {

// The bounds a search gets where its caller gave none: a strategy that never exhausts
// (random, pct) with neither an execution nor a time bound gets kDefaultRandomExecutions.
void apply_default_bounds(std::string_view strategy, ExploreOptions& explore);

struct ExplorationRequest {
  const System* system = nullptr;
  nlohmann::json document;     // the scenario the failing trace embeds
  std::string strategy;        // a name of strategy_catalog()
  std::string strategy_where;  // where that name came from, for an unknown name's message
  std::string source;          // the scenario file or model, for other messages
  StrategyOptions strategy_options;  // max_preemptions: the bound (or, iterative, the largest)
  bool iterative = false;            // try preemption bounds 0, 1, ..., max_preemptions in turn
  ExploreOptions explore;            // as the caller gave them
  bool shrink = true;                // shrink the failing trace
};

// A lock-order cycle across executions: each edge's execution, as explored (not shrunk).
struct LockOrderTrace {
  LockOrderEdge edge;
  Trace trace;
};

struct Exploration {
  const StrategyInfo* strategy = nullptr;
  int preemption_bound = -1;  // the bound the result is for (-1: none)
  ExploreOptions explore;     // as run: with the default bounds
  ExploreResult result;       // with iterative deepening, the stats of every bound tried
  std::optional<Trace> trace;  // the first failure of one execution, recorded
  std::vector<LockOrderTrace> witnesses;  // or the edges of a lock-order cycle
};

// Throws InputError for an unknown strategy (naming request.strategy_where), for shards of a
// strategy that does not split, and for iterative deepening without a preemption bound.
Exploration explore_and_record(const ExplorationRequest& request);

}  // namespace lockstep::sim
