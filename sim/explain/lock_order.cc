#include "lockstep/sim/explain/lock_order.h"

#include <set>

#include <fmt/format.h>

namespace lockstep::sim {

std::optional<CrossExecutionCycle> LockOrderGraph::add(const std::vector<LockOrderEdge>& edges,
                                                       const std::vector<Decision>& decisions, std::uint64_t execution) {
  for (const LockOrderEdge& e : edges) {
    if (e.from == e.to || index_.contains({e.from, e.to})) continue;
    index_.emplace(std::make_pair(e.from, e.to), edges_.size());
    edges_.push_back({e, decisions, execution});
    auto back = path(e.to, e.from);
    if (!back) continue;
    std::vector<std::size_t> cycle{edges_.size() - 1};
    cycle.insert(cycle.end(), back->begin(), back->end());
    std::set<std::uint64_t> executions;
    for (const std::size_t k : cycle) executions.insert(edges_[k].execution);
    if (executions.size() < 2) continue;  // one execution's own cycle: its lockdep reports it
    CrossExecutionCycle c;
    std::string chain;
    for (const std::size_t k : cycle) {
      const LockOrderWitness& w = edges_[k];
      chain += fmt::format("{}{} -> {} (execution #{}: {})", chain.empty() ? "" : "; ", w.edge.from, w.edge.to, w.execution,
                           w.edge.how);
      c.witnesses.push_back(w);
    }
    c.message = fmt::format("lock order cycle across {} executions, which no single execution shows: {}", executions.size(),
                            chain);
    return c;
  }
  return std::nullopt;
}

std::optional<std::vector<std::size_t>> LockOrderGraph::path(const std::string& from, const std::string& to) const {
  // Breadth-first over the edges, in the order they were added: the shortest path, and the
  // same one for the same edges.
  std::vector<std::pair<std::string, std::vector<std::size_t>>> frontier{{from, {}}};
  std::set<std::string> seen{from};
  while (!frontier.empty()) {
    std::vector<std::pair<std::string, std::vector<std::size_t>>> next;
    for (const auto& [node, via] : frontier) {
      if (node == to) return via;
      for (std::size_t k = 0; k < edges_.size(); ++k) {
        if (edges_[k].edge.from != node || !seen.insert(edges_[k].edge.to).second) continue;
        auto longer = via;
        longer.push_back(k);
        next.emplace_back(edges_[k].edge.to, std::move(longer));
      }
    }
    frontier = std::move(next);
  }
  return std::nullopt;
}

}  // namespace lockstep::sim
