#include "lockstep/model/supervisor/lockdep.h"

#include <algorithm>

#include <fmt/format.h>

namespace lockstep::supervisor {

void LockDep::report(Violation v) {
  if (reported_) return;
  reported_ = true;
  pending_ = std::move(v);
  env_.observe(kLockdepEvent.global(0, 0));
}

void LockDep::acquiring(const std::string& cls, const std::string& where) {
  const std::vector<std::string>& held = held_.get();
  if (auto rank = ranks_.find(cls); rank != ranks_.end()) {
    for (const std::string& h : held) {
      auto hr = ranks_.find(h);
      if (hr != ranks_.end() && rank->second <= hr->second) {
        report({"lock_rank", fmt::format("{} asks for {} (rank {}) while holding {} (rank {})", where, cls, rank->second, h,
                                         hr->second)});
        return;
      }
    }
  }
  for (const std::string& h : held) {
    if (h == cls) continue;  // the same class again: a self-deadlock, reported by the scheduler
    const std::string how = fmt::format("{}: {} then {}", where, h, cls);
    if (!edges_.emplace(std::make_pair(h, cls), how).second) continue;
    if (auto back = path(cls, h)) {
      std::string other;
      for (const auto& e : *back) other += fmt::format("{}{}", other.empty() ? "" : "; ", edges_.at(e));
      report({"lock_order", fmt::format("lock order cycle: {} -> {} ({}) and back: {}", h, cls, how, other)});
      return;
    }
  }
}

void LockDep::calling(const std::string& callee, const std::string& where) {
  for (const std::string& h : held_.get()) {
    if (h.starts_with("Supervisor[") && h.ends_with("].mu")) {
      report({"child_call_under_lock",
              fmt::format("{} calls {} while holding {} (Rule 3: never hold Supervisor.mu while calling child methods)", where,
                          callee, h)});
      return;
    }
  }
}

void LockDep::released(const std::string& cls) {
  std::vector<std::string>& held = held_.get();
  auto it = std::find(held.rbegin(), held.rend(), cls);
  if (it != held.rend()) held.erase(std::next(it).base());
}

std::optional<std::vector<std::pair<std::string, std::string>>> LockDep::path(const std::string& from, const std::string& to) const {
  // Depth-first over the edges; the graph is small (a handful of classes).
  std::vector<std::pair<std::string, std::vector<std::pair<std::string, std::string>>>> stack{{from, {}}};
  std::set<std::string> seen;
  while (!stack.empty()) {
    auto [node, edges] = std::move(stack.back());
    stack.pop_back();
    if (node == to) return edges;
    if (!seen.insert(node).second) continue;
    for (const auto& [edge, how] : edges_) {
      if (edge.first != node) continue;
      auto next = edges;
      next.push_back(edge);
      stack.push_back({edge.second, std::move(next)});
    }
  }
  return std::nullopt;
}

}  // namespace lockstep::supervisor
