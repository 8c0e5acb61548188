// sim/strategies/strategy_makers.h: how each row of the strategy catalog is made
// (sim/strategies/strategy.cc); each is defined in its strategy's own file.
#pragma once

#include <cstdint>
#include <memory>

#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

// dfs (sim/strategies/dfs_strategy.cc): naive depth-first search, one shard of it.
std::unique_ptr<Strategy> make_dfs_strategy(StrategyOptions::Shard shard);

// dpor (sim/dpor/): optimal (wakeup trees) or source-DPOR (source sets and sleep sets).
enum class DporMode : std::uint8_t { optimal, source };
struct DporSettings {
  DporMode mode = DporMode::optimal;
  // Wrapped in a preemption bound: backtrack points are also added where the racing step's
  // actor began its run, and the search is source-DPOR whatever the mode.
  bool preemption_bounded = false;
};
std::unique_ptr<Strategy> make_dpor_strategy(DporSettings settings);

// random (sim/strategies/random_strategy.cc): seeded random walks.
std::unique_ptr<Strategy> make_random_strategy(std::uint64_t seed);

// pct (sim/strategies/pct_strategy.cc): PCT with bug depth `depth`.
std::unique_ptr<Strategy> make_pct_strategy(std::uint64_t seed, int depth);

}  // namespace lockstep::sim
