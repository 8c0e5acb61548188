// Naive depth-first search: every interleaving and every choice value, by stateless
// re-execution. Memory is the decision stack of one execution: O(depth), independent of
// how many executions have been explored.
#include <fmt/format.h>

#include "sim/strategy.h"

namespace lockstep::sim {
namespace {

class DfsStrategy final : public Strategy {
 public:
  std::string_view name() const override { return "dfs"; }

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
    return true;
  }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t step) override {
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

  std::vector<Node> stack_;
  std::size_t depth_ = 0;
  bool started_ = false;
  bool exhausted_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_dfs_strategy() { return std::make_unique<DfsStrategy>(); }

}  // namespace lockstep::sim
