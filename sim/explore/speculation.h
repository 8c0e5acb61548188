// sim/explore/speculation.h: what a strategy offers for exploring one search on several threads
// (ExploreOptions::jobs), by speculation that never changes the result.
//
// The search itself stays serial: one thread (the explorer's) walks the tree in the order
// one thread would. Other threads explore, each on its own scheduler, the subtree of a
// branch that is still pending on that walk's path. A branch's subtree is explored the same
// wherever it runs, given what the path says when the branch begins: its node's sleep set,
// the branches explored before it there and its own wakeup subtree. What the subtree
// changes above itself (branches its races add to nodes of the path) is recorded, not
// applied. When the serial walk reaches the branch, it compares the branch's start with the
// one the speculation began from (a fingerprint): equal, it takes the subtree's counts and
// applies its record in order, exactly as if it had explored the subtree itself; else it
// explores the branch itself. So counts, verdicts, the first failure and the order of
// everything are those of one thread, for any number of threads.
//
// Invariant: a speculation's subtree is explored from a copy; nothing of the serial walk's
// state is shared with another thread.
#pragma once

#include <compare>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lockstep/model/env.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

// A branch of the serial walk: a node (by the id it got when made) and a transition there.
struct BranchKey {
  std::uint64_t node = 0;
  ActorId actor = 0;
  bool timer = false;
  friend auto operator<=>(const BranchKey&, const BranchKey&) = default;
};

// A pending branch offered to another thread: a strategy that explores its subtree only,
// and the fingerprint of the branch's start.
struct SubtreeOffer {
  BranchKey key;
  std::string fingerprint;
  std::unique_ptr<Strategy> explorer;
};

class SpeculativeStrategy {
 public:
  virtual ~SpeculativeStrategy() = default;
  // Whether speculation can run now (dpor: only in optimal mode).
  virtual bool can_speculate() const = 0;
  // The best pending branch of the current path whose key `taken` does not hold, for
  // another thread: the shallowest, whose subtree is the largest and is reached last.
  virtual std::optional<SubtreeOffer> offer(const std::vector<BranchKey>& taken) = 0;
  // After next_execution() returned true: the branch the next execution begins, and the
  // fingerprint of its start (nullopt when no speculation could match it).
  virtual std::optional<BranchKey> starting() const = 0;
  virtual std::string start_fingerprint() const = 0;
  // Branches whose wakeup subtree changed since the last call (their speculation is stale).
  virtual void take_changed(std::vector<BranchKey>& out) = 0;
  // After next_execution() returned true for the branch `explorer` explored (its offer's
  // key, with the same fingerprint), the explorer's search having ended at its subtree's
  // end: the serial walk goes on as if it had explored that subtree itself. `objects` maps
  // the explorer's object ids to this walk's (sim/sched/scheduler.h ids; identity when empty).
  virtual void skip_branch(Strategy& explorer, const std::vector<ObjectId>& objects) = 0;
  // On the explorer: whether its search ended at its subtree's end (else it stopped early:
  // the search left optimal mode, or was stopped).
  virtual bool subtree_done() const = 0;

  // A subtree explored by another process (sim/explore/subtree_exchange.h). On an explorer fresh
  // from offer(): its start, which begin_subtree() on a new strategy of the same search
  // (same strategy and settings) turns into the same explorer. On that one, once its search
  // ended: its outcome (what skip_branch reads), which take_subtree_outcome() on the
  // offered explorer makes it hold. Both throw std::invalid_argument for malformed JSON.
  virtual nlohmann::json subtree_start() const = 0;
  virtual void begin_subtree(const nlohmann::json& start) = 0;
  virtual nlohmann::json subtree_outcome() const = 0;
  virtual void take_subtree_outcome(const nlohmann::json& outcome) = 0;
};

}  // namespace lockstep::sim
