// Naive depth-first search: every interleaving and every choice value, by stateless
// re-execution. Memory is the decision stack of one execution: O(depth), independent of
// how many executions have been explored.
//
// Several threads or processes (sim/explore/speculation.h): a pending branch's subtree is every
// execution below a prefix of decisions, the same wherever and whenever it is explored (dfs
// prunes nothing), so a speculation's start never changes and skipping a branch is moving
// past it: the next execution begins at its next sibling, as after exploring it here.
#include <algorithm>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/sim/invariant.h"
#include "lockstep/sim/explore/speculation.h"
#include "lockstep/sim/strategies/strategy_makers.h"

namespace lockstep::sim {
namespace {

// Executions are assigned to shards by the choices at their first kShardDepth branching
// decisions (fewer when they end sooner).
constexpr std::size_t kShardDepth = 12;

class DfsStrategy final : public Strategy, public Checkpointing, public Sharded, public SpeculativeStrategy {
 public:
  explicit DfsStrategy(StrategyOptions::Shard shard) : shard_index_(shard.index), shard_count_(shard.count) {}

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
    // Backtrack: drop exhausted decisions from the end, then take the next sibling; a
    // subtree explorer never backtracks into its prefix.
    while (stack_.size() > floor_ && stack_.back().chosen + 1 >= stack_.back().options) stack_.pop_back();
    if (stack_.size() == floor_) {
      exhausted_ = true;
      return false;
    }
    ++stack_.back().chosen;
    beginning_ = key_of(stack_.back().uid, stack_.back().chosen);
    depth_ = 0;
    resume_size_ = stack_.size();
    return true;
  }

  StrategyAbilities abilities() override {
    return {.checkpoints = this, .shard = this, .speculation = this};
  }

  StrategyStatus status() const override { return {.exhausted = exhausted_, .explored_fraction = explored_fraction()}; }

  double explored_fraction() const {
    double done = 0, weight = 1;
    for (const Node& n : stack_) {
      done += weight * n.chosen / n.options;
      weight /= n.options;
    }
    return std::min(1.0, done + weight);
  }

  // Checkpoints: the decisions where the current execution began (the ones it follows).
  void keep_resume_point() override {}  // the path is the resume point: always kept
  nlohmann::json checkpoint() const override { return path_state(resume_size_); }
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
      stack_.push_back({n[0].get<std::uint32_t>(), n[1].get<std::uint32_t>(), next_uid_++});
    }
    resume_size_ = stack_.size();
  }

  // Speculation (sim/explore/speculation.h). Pending branches: at each node of the path, the
  // siblings after the one followed; the shallowest first (the largest subtree).
  bool can_speculate() const override { return shard_count_ <= 1; }
  std::optional<SubtreeOffer> offer(const std::vector<BranchKey>& taken) override {
    if (!can_speculate() || !started_) return std::nullopt;
    for (std::size_t i = floor_; i < resume_size_; ++i) {
      for (std::uint32_t c = stack_[i].chosen + 1; c < stack_[i].options; ++c) {
        const BranchKey key = key_of(stack_[i].uid, c);
        if (std::find(taken.begin(), taken.end(), key) != taken.end()) continue;
        auto x = std::make_unique<DfsStrategy>(StrategyOptions::Shard{});
        x->stack_.assign(stack_.begin(), stack_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        x->stack_.back().chosen = c;
        x->floor_ = x->resume_size_ = i + 1;
        x->next_uid_ = next_uid_;
        return SubtreeOffer{key, std::string(), std::move(x)};
      }
    }
    return std::nullopt;
  }
  std::optional<BranchKey> starting() const override { return beginning_; }
  std::string start_fingerprint() const override { return std::string(); }  // a subtree never changes
  void take_changed(std::vector<BranchKey>&) override {}
  void skip_branch(Strategy& explorer, const std::vector<ObjectId>&) override {
    // The next execution begins past the skipped branch: nothing to do here.
    LOCKSTEP_INVARIANT(dynamic_cast<DfsStrategy&>(explorer).exhausted_ && beginning_ &&
                           beginning_->node == stack_.back().uid && depth_ == 0,
                       "dfs speculation: a skipped branch is the one that begins, explored to its end");
    beginning_.reset();
  }
  bool subtree_done() const override { return exhausted_; }
  nlohmann::json subtree_start() const override { return path_state(floor_); }  // read by resume()
  void begin_subtree(const nlohmann::json& start) override {
    resume(start);
    floor_ = stack_.size();
    if (floor_ == 0) throw std::invalid_argument("malformed dfs subtree: no path");
  }
  nlohmann::json subtree_outcome() const override { return {{"done", exhausted_}}; }
  void take_subtree_outcome(const nlohmann::json& outcome) override {
    if (!outcome.is_object() || !outcome.contains("done") || !outcome["done"].is_boolean()) {
      throw std::invalid_argument("malformed dfs subtree outcome");
    }
    exhausted_ = outcome["done"].get<bool>();
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


 private:
  struct Node {
    std::uint32_t options;
    std::uint32_t chosen;
    std::uint64_t uid;  // for speculation's BranchKey: unique among this strategy's nodes
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
    stack_.push_back({options, 0, next_uid_++});
    ++depth_;
    return 0;
  }

  // The first `n` decisions as resume() reads them (a checkpoint, a subtree's start).
  nlohmann::json path_state(std::size_t n) const {
    nlohmann::json path = nlohmann::json::array();
    for (std::size_t i = 0; i < n; ++i) path.push_back({stack_[i].options, stack_[i].chosen});
    return {{"strategy", "dfs"}, {"path", std::move(path)}};
  }

  // A branch: its node, and the option taken there in the place of an actor.
  static BranchKey key_of(std::uint64_t node, std::uint32_t option) {
    return BranchKey{node, static_cast<ActorId>(option), false};
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
  std::size_t floor_ = 0;  // a subtree explorer: the decisions of its prefix, never backtracked
  std::uint64_t next_uid_ = 0;
  std::optional<BranchKey> beginning_;  // the branch the current execution begins
  int shard_index_;
  int shard_count_;
};

}  // namespace

std::unique_ptr<Strategy> make_dfs_strategy(StrategyOptions::Shard shard) {
  return std::make_unique<DfsStrategy>(shard);
}

}  // namespace lockstep::sim
