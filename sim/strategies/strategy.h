// sim/strategies/strategy.h: how the explorer decides, one execution after another.
//
// A Strategy makes every decision of an execution: which enabled transition runs next
// (pick) and the value of each choice point (choose). Siblings are chosen by name:
//   dfs     naive depth-first search over every interleaving and every choice: the
//           reference against which reductions are checked; exhaustive.
//   random  seeded random walk; never exhaustive.
//   replay  follows a recorded decision list exactly (lockstep replay).
// Partial-order reduction, preemption bounding and PCT plug in here: they see the pending
// operation of every enabled transition (its footprint) in pick(), and every executed step
// with its effective footprint in executed().
//
// Decisions are recorded by value (actor id, or the chosen value), not by index, so a trace
// replays under any strategy.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lockstep/model/env.h"
#include "lockstep/sim/sched/op.h"
#include "lockstep/sim/explore/symmetry.h"

namespace lockstep::sim {

// A transition the scheduler can take now: run an actor's pending operation, or fire the
// timer of a parked actor (a timeout, or the end of a sleep).
struct Transition {
  ActorId actor = 0;
  bool timer = false;
  const OpDesc* op = nullptr;  // the actor's pending operation
  bool waits = false;          // the operation parks until its condition holds (a lock, not a try)
};

struct Decision {
  enum class Kind : std::uint8_t { run, timer, choice };
  Kind kind = Kind::run;
  std::uint32_t value = 0;  // the actor for run / timer, the chosen value for choice

  friend bool operator==(const Decision&, const Decision&) = default;
};

// "a3" (run actor 3), "t3" (fire actor 3's timer), "c1" (choice value 1).
std::string decision_text(Decision d);
// Parses decision_text's output; false when malformed.
bool parse_decision(std::string_view text, Decision& out);

// The execution took a path the strategy cannot follow: a replayed trace no longer fits
// the code, or a model behaved differently on the same decisions (nondeterminism).
class Divergence : public std::runtime_error {
 public:
  Divergence(std::uint64_t step, const std::string& message)
      : std::runtime_error(message), step_(step) {}
  std::uint64_t step() const { return step_; }

 private:
  std::uint64_t step_;
};

class Strategy;
class SpeculativeStrategy;  // sim/explore/speculation.h

// Abilities a strategy may have beyond deciding, as side interfaces the explorer asks for
// once (Strategy::abilities()): a null pointer is an ability the strategy lacks. What the
// catalog says of a strategy (strategy_has_checkpoints, strategy_is_shardable) is read from
// here, so it is what the strategy does.

// Partial-order reduction's view of a run beyond its steps.
class StepObserver {
 public:
  // Told before each decision (and once more when the execution ends) which unfinished
  // actors are parked: their pending operation cannot run now (their timer may still fire).
  // A blocked acquire races with the step that took the lock, though it never ran.
  virtual void parked(std::span<const Transition> waiting) = 0;
  // Told at the start of each execution, before its first pick, which actors are
  // interchangeable (sim/explore/symmetry.h; none unless RunLimits::symmetry). The transitions
  // it is offered are then those of representatives only, and a class member's start (its
  // first step that is not private) writes its class's object in the footprints it sees.
  virtual void symmetric(const Symmetry& symmetry) = 0;
  // Told when virtual time moves on (timed mode, once no actor could run): every step after
  // this happens after every step before it.
  virtual void clock_advanced() = 0;
  // Told once an execution when fair mode's round robin takes over its tail (sim/progress):
  // from the next pick on only the actor that waited longest is offered, by design (an order
  // the search does not explore), not because the others cannot run.
  virtual void round_robin_began() = 0;

 protected:
  ~StepObserver() = default;
};

// Checkpoints (sim/explore/checkpoint.h). Once asked to by keep_resume_point(), the strategy
// remembers where each execution began; checkpoint() is that state (valid after
// next_execution() returned true, also while or after the execution runs), and a fresh
// strategy given it by resume() begins that execution at its next next_execution(): a
// search resumed any number of times explores exactly what an uninterrupted one does.
class Checkpointing {
 public:
  virtual void keep_resume_point() = 0;
  virtual nlohmann::json checkpoint() const = 0;
  // Throws std::invalid_argument for a state this strategy cannot take.
  virtual void resume(const nlohmann::json& state) = 0;

 protected:
  ~Checkpointing() = default;
};

// Independent executions (random walks, pct: execution k is decided by the seed and k
// alone): sim/explore/portfolio.h runs them on several threads.
class IndependentExecutions {
 public:
  // A new strategy with the same settings (never null).
  virtual std::unique_ptr<Strategy> fresh_copy() const = 0;
  // Makes it begin execution k (1-based) at its next next_execution().
  virtual void begin_at(std::uint64_t execution) = 0;

 protected:
  ~IndependentExecutions() = default;
};

// A search that may begin anew (dpor leaving its optimal mode for a program it does not
// cover): the explorer then forgets what it counted.
class Restarting {
 public:
  // True once, right after a next_execution() that began the search anew.
  virtual bool take_restart() = 0;
  // Why the search began anew, for the user: a cost they may avoid.
  virtual std::string restart_reason() const = 0;

 protected:
  ~Restarting() = default;
};

// One shard of a search split among processes (StrategyOptions::shard).
class Sharded {
 public:
  // Whether the execution that just ended belongs to this shard.
  virtual bool owns_execution() const = 0;

 protected:
  ~Sharded() = default;
};

struct StrategyAbilities {
  StepObserver* observer = nullptr;
  Checkpointing* checkpoints = nullptr;
  IndependentExecutions* independent = nullptr;
  Restarting* restarts = nullptr;
  Sharded* shard = nullptr;
  SpeculativeStrategy* speculation = nullptr;  // sim/explore/speculation.h
};

// Where a search stands, for reports and progress.
struct StrategyStatus {
  // True once the executions so far cover every execution (only exhaustive strategies).
  bool exhausted = false;
  // The share of the search tree explored so far, in (0, 1], seen from the path of the last
  // execution: each node's branches known so far weigh the same (Knuth's estimate of a
  // tree's size along one path, and the usual one for a depth-first search's progress);
  // executions so far / this estimates the total. 0 when the strategy cannot tell.
  double explored_fraction = 0;
  // Why a finished search is not exhaustive ("" when it is, or says nothing).
  std::string limitation;
};

// The core interface: seven methods. Everything else is an ability (above).
class Strategy {
 public:
  virtual ~Strategy() = default;

  virtual std::string_view name() const = 0;

  // Begins the next execution; false when there is nothing left to explore.
  virtual bool next_execution() = 0;

  // Index of the transition to take, or kPrune to end the execution as redundant (a
  // partial-order reduction knows an equivalent one is explored elsewhere). REQUIRES:
  // !enabled.empty(); the transitions come in a canonical order (by actor, run before
  // timer). May throw Divergence.
  static constexpr std::size_t kPrune = static_cast<std::size_t>(-1);
  // Ends the execution as another shard's (see StrategyOptions::shard): not counted.
  static constexpr std::size_t kSkip = static_cast<std::size_t>(-2);
  virtual std::size_t pick(std::span<const Transition> enabled, std::uint64_t step) = 0;

  // A choice point's value in [0, n). REQUIRES: n > 0. May throw Divergence.
  virtual std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) = 0;
  // The same for a choice whose value leaves the footprint of the step making it as it is
  // (it decides what its actor does next: a stall, a duration, a skew, a model's choice):
  // dpor takes the step with another value as the same footprint (checked when it runs).
  virtual std::uint32_t choose_keeping_footprint(std::uint32_t n, std::string_view label, std::uint64_t step) {
    return choose(n, label, step);
  }
  // Where such a choice is not offered in this state (a stall once the execution's stalls
  // are taken): for dpor, the place of a choice whose one value is its first, so a step's
  // choices line up wherever it runs. Not a decision: traces do not record it.
  virtual void choice_not_offered(std::string_view /*label*/, std::uint64_t /*step*/) {}

  // Told during a step on a shared variable (before executed()) what it found and left.
  virtual void var_step(const VarStep& /*step*/) {}

  // Told after each step, with the footprint the step actually had.
  virtual void executed(const Transition& /*t*/, const Footprint& /*effective*/) {}

  virtual StrategyStatus status() const { return {}; }

  // The abilities it has; the same for the strategy's whole life.
  virtual StrategyAbilities abilities() { return {}; }
};

// The footprint of a plain lock's acquisition: exclusive, on one object outside any domain
// (a mutex or a lock of sim/sched/sim_objects.h). With Transition::waits its actor parks until the
// lock is free and takes it in one step; a try (no wait) may run while it is held, and fail.
bool plain_lock_acquisition(const Footprint& f);

// The footprint of a reader/writer lock's shared acquisition (`rlock`), on one object outside
// any domain. With Transition::waits its actor parks while a writer holds the lock or waits
// for it, and takes it in one step.
bool shared_lock_acquisition(const Footprint& f);

// The footprint optimal DPOR ("dpor") works with for a step of operation `op` (as declared
// when picked; `waits` and `timer` as in Transition) that ran with `ran`: the same, but an
// operation that may narrow its access (OpDesc::narrows: a pg try, a conditional update, an
// unlock of what is not held, a failing file operation) keeps its declared access, unless it
// is a plain lock's try or a CAS. A narrowed footprint is only known where the step ran, and a
// wakeup tree needs the footprint a step has wherever a race moves it; a plain lock's try is
// worked out (it fails exactly when the lock is held), and a CAS, whose outcome depends on a
// value, ends optimal mode when it fails or a race moves it. Coarser than the step's own: a
// step ordered that need not be costs executions, never traces.
Footprint optimal_dpor_footprint(const OpDesc& op, bool waits, bool timer, const Footprint& ran);

// Options some strategies take.
struct StrategyOptions {
  std::uint64_t seed = 1;
  int pct_depth = 3;            // pct: bug depth d
  int max_preemptions = -1;     // >= 0: wrap the strategy in a preemption bound
  // dfs only: explore shard `index` of `count` (0-based). An execution belongs to the shard
  // that its first branching choices hash to, so the shards partition the executions of
  // one unsharded run exactly; a shard skips the subtrees of others once it knows.
  struct Shard {
    int index = 0;
    int count = 1;
  } shard;
};

// The one table of strategies: every name the command line, scenarios and the C++ API
// accept is a row of it, with what the rest of lockstep needs to know of it.
struct StrategyInfo {
  std::string_view name;
  std::string_view help;
  std::string_view fairness;  // what it assumes of the scheduler when judging progress (sim/progress/progress.h)
  bool exhaustive = false;  // explores every trace (else it samples, and gets a default execution bound)
  std::unique_ptr<Strategy> (*make)(const StrategyOptions& options) = nullptr;  // without the preemption bound
};
// What the strategy's abilities say (a strategy made with the default options is asked):
// --checkpoint / --resume (Checkpointing), --shard I/N splitting one scenario's search (Sharded).
bool strategy_has_checkpoints(const StrategyInfo& info);
bool strategy_is_shardable(const StrategyInfo& info);
std::span<const StrategyInfo> strategy_catalog();
// The row of `name`; nullptr for an unknown name.
const StrategyInfo* find_strategy(std::string_view name);
// The catalog's names, comma-separated (for messages that list what is known).
std::string strategy_names_text();

// Makes a strategy by name (a row of strategy_catalog(), wrapped in the preemption bound
// when options.max_preemptions >= 0); nullptr for an unknown name. "replay" is made with
// make_replay_strategy.
std::unique_ptr<Strategy> make_strategy(std::string_view name, std::uint64_t seed);
std::unique_ptr<Strategy> make_strategy(std::string_view name, const StrategyOptions& options);
std::unique_ptr<Strategy> make_replay_strategy(std::vector<Decision> decisions);

}  // namespace lockstep::sim
