// sim/explore/portfolio.h: a search of independent executions (random walks, pct) on several threads.
//
// A strategy whose executions do not depend on one another (IndependentExecutions, sim/strategies/strategy.h: execution
// k is decided by the seed and k alone) has them run on N threads: thread t runs executions
// first + t, first + t + N, ..., each thread with its own scheduler, simulated environment
// and copy of the strategy. The search takes the outcomes in execution order and judges
// them as one thread does, so counts, verdict, first failure and its trace are the same for
// any N: a portfolio of seeds that is also deterministic. Threads run at most kAhead
// executions past the one the search waits for (memory: kAhead outcomes and their
// decisions).
//
// sim/ starts no thread: the threads are the caller's (ExploreOptions::spawn).
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "lockstep/model/system.h"
#include "lockstep/sim/sched/scheduler.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

class Portfolio {
 public:
  static constexpr std::uint64_t kAhead = 256;

  struct Outcome {
    ExecutionResult result;
    std::vector<Decision> decisions;
    int symmetric_actors = 0;  // Scheduler::symmetry() after it
    std::uint64_t permutations = 1;
    std::exception_ptr error;  // anything but a Divergence the run threw: rethrown by the search
  };

  // Runs executions first, first + 1, ... of copies of `prototype` (REQUIRES: its
  // fresh_copy() is not null) under `limits` (whose stop is not used: the portfolio stops its
  // threads itself) on `jobs` tasks handed to `spawn`.
  Portfolio(const System& system, const IndependentExecutions& prototype, const RunLimits& limits, int jobs,
            const std::function<void(std::function<void()>)>& spawn, std::uint64_t first);
  // Stops the threads (an execution running is cut) and waits for them.
  ~Portfolio();
  Portfolio(const Portfolio&) = delete;
  Portfolio& operator=(const Portfolio&) = delete;

  // The next execution's outcome, in order; nullopt when `stop` said to stop while waiting
  // (asked every 20 ms).
  std::optional<Outcome> next(const std::function<bool()>& stop);

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
  std::uint64_t next_;
};

}  // namespace lockstep::sim
