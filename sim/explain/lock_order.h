// sim/explain/lock_order.h: lockdep across executions.
//
// Lockdep in one execution (model/supervisor/lockdep.h) sees only the orders that execution
// takes. The explorer feeds every complete execution's lock-order edges (Instance::
// lock_order_edges) into one LockOrderGraph, which keeps, for each edge, the first
// execution that took it (its decisions replay it). When a new edge closes a cycle whose
// edges come from more than one execution, that cycle is a potential deadlock no single
// run shows, as the kernel's lockdep reports across a boot: a `lock_order` violation whose
// witnesses are one replayable execution per edge. A cycle within one execution is that
// execution's own violation (its lockdep reports it), not reported again here.
//
// Memory: one decision list per distinct edge (a handful of lock classes: few edges).
// Deterministic: the same sequence of executions gives the same cycle and witnesses.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/model/system.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

// An execution that took one edge of a cycle.
struct LockOrderWitness {
  LockOrderEdge edge;
  std::vector<Decision> decisions;  // replay it
  std::uint64_t execution = 0;      // 1-based, among the complete executions explored
};

struct CrossExecutionCycle {
  std::string message;                     // the cycle, each edge with where it was taken
  std::vector<LockOrderWitness> witnesses;  // one per edge, in cycle order
};

class LockOrderGraph {
 public:
  // Adds a complete execution's edges; returns the first cycle over executions that one of
  // them closes, if any.
  std::optional<CrossExecutionCycle> add(const std::vector<LockOrderEdge>& edges, const std::vector<Decision>& decisions,
                                         std::uint64_t execution);
  std::size_t edge_count() const { return edges_.size(); }
  // Every edge with its first witness, in the order they were added (for checkpoints), and
  // adding one back as it was (no cycle is looked for: the graph had none when it was saved).
  const std::vector<LockOrderWitness>& edges() const { return edges_; }
  void restore(LockOrderWitness w) {
    index_.emplace(std::make_pair(w.edge.from, w.edge.to), edges_.size());
    edges_.push_back(std::move(w));
  }

 private:
  // Edges (by index) of a path from `from` to `to`, if any.
  std::optional<std::vector<std::size_t>> path(const std::string& from, const std::string& to) const;

  std::vector<LockOrderWitness> edges_;
  std::map<std::pair<std::string, std::string>, std::size_t> index_;
};

}  // namespace lockstep::sim
