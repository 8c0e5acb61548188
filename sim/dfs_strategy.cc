// Naive depth-first search: every interleaving and every choice value, by stateless
// re-execution. Memory is the decision stack of one execution: O(depth), independent of
// how many executions have been explored.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/sim/strategy.h"

namespace lockstep::sim {
namespace {

// Executions are assigned to shards by the choices at their first kShardDepth branching
// decisions (fewer when they end sooner).
constexpr std::size_t kShardDepth = 12;

class DfsStrategy final : public Strategy {
 public:
  DfsStrategy(int shard_index, int shard_count) : shard_index_(shard_index), shard_count_(shard_count) {}

  std::string_view name() const override { return "dfs"; }

  bool owns_execution() const override {
    if (shard_count_ <= 1) return true;
    return owner(depth_) == shard_index_;
  }

  bool next_execution() override {
    if (!started_) {
      started_ = true;
      return true;
    }
    // Backtrack: drop exhausted decisions from the end, then take the next sibling.
    while (!stack_.empty() && stack_.back().chosen + 1 >= stack_.back().options) stack_.pop_back();
    if (stack_.empty()) {
      exhausted_ = true;
      return false;
    }
    ++stack_.back().chosen;
    depth_ = 0;
    resume_size_ = stack_.size();
    return true;
  }

  double explored_fraction() const override {
    double done = 0, weight = 1;
    for (const Node& n : stack_) {
      done += weight * n.chosen / n.options;
      weight /= n.options;
    }
    return std::min(1.0, done + weight);
  }

  // Checkpoints: the decisions where the current execution began (the ones it follows).
  bool can_checkpoint() const override { return true; }
  nlohmann::json checkpoint() const override {
    nlohmann::json path = nlohmann::json::array();
    for (std::size_t i = 0; i < resume_size_; ++i) path.push_back({stack_[i].options, stack_[i].chosen});
    return {{"strategy", "dfs"}, {"path", std::move(path)}};
  }
  void resume(const nlohmann::json& state) override {
    if (!state.is_object() || state.value("strategy", "") != "dfs" || !state.contains("path") ||
        !state["path"].is_array() || started_) {
      throw std::invalid_argument("malformed dfs state");
    }
    for (const auto& n : state["path"]) {
      if (!n.is_array() || n.size() != 2 || !n[0].is_number_unsigned() || !n[1].is_number_unsigned() ||
          n[1].get<std::uint32_t>() >= n[0].get<std::uint32_t>()) {
        throw std::invalid_argument("malformed dfs state: a decision");
      }
      stack_.push_back({n[0].get<std::uint32_t>(), n[1].get<std::uint32_t>()});
    }
    resume_size_ = stack_.size();
  }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t step) override {
    // A new branching decision past the shard depth: the owner is known; skip others'.
    if (shard_count_ > 1 && depth_ == stack_.size() && enabled.size() > 1 && branching_in(depth_) == kShardDepth &&
        owner(depth_) != shard_index_) {
      return kSkip;
    }
    return decide(static_cast<std::uint32_t>(enabled.size()), step, "scheduling point");
  }

  std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    return decide(n, step, label);
  }

  bool exhausted() const override { return exhausted_; }

 private:
  struct Node {
    std::uint32_t options;
    std::uint32_t chosen;
  };

  std::uint32_t decide(std::uint32_t options, std::uint64_t step, std::string_view what) {
    if (depth_ < stack_.size()) {
      const Node& node = stack_[depth_];
      // Replaying the prefix: the same decisions must offer the same options.
      if (node.options != options) {
        throw Divergence(step, fmt::format("the model is not deterministic: {} at decision {} offered {} "
                                           "options, and {} on an earlier run with the same decisions",
                                           what, depth_, options, node.options));
      }
      return stack_[depth_++].chosen;
    }
    stack_.push_back({options, 0});
    ++depth_;
    return 0;
  }

  // The number of branching decisions among the first `depth` decisions.
  std::size_t branching_in(std::size_t depth) const {
    std::size_t n = 0;
    for (std::size_t i = 0; i < depth && i < stack_.size(); ++i) n += stack_[i].options > 1 ? 1 : 0;
    return n;
  }

  // The shard of the path through the first `depth` decisions: a hash (FNV-1a) of the
  // choices at its first kShardDepth branching decisions.
  int owner(std::size_t depth) const {
    std::uint64_t h = 1469598103934665603ULL;
    std::size_t branching = 0;
    for (std::size_t i = 0; i < depth && i < stack_.size() && branching < kShardDepth; ++i) {
      if (stack_[i].options <= 1) continue;
      ++branching;
      h = (h ^ stack_[i].chosen) * 1099511628211ULL;
    }
    return static_cast<int>(h % static_cast<std::uint64_t>(shard_count_));
  }

  std::vector<Node> stack_;
  std::size_t depth_ = 0;
  std::size_t resume_size_ = 0;  // the decisions the current execution follows
  bool started_ = false;
  bool exhausted_ = false;
  int shard_index_;
  int shard_count_;
};

}  // namespace

std::unique_ptr<Strategy> make_dfs_strategy(int shard_index, int shard_count) {
  return std::make_unique<DfsStrategy>(shard_index, shard_count);
}

}  // namespace lockstep::sim
