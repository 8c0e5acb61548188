// sim/strategies/pct_strategy.cc: PCT (Burckhardt, Kothari, Musuvathi, Nagarakatte: "A
// Randomized Scheduler with Probabilistic Guarantees of Finding Bugs", ASPLOS 2010): actors
// get random distinct priorities, the highest-priority enabled actor runs, and at d-1 random
// steps the running actor drops below all others. For a program of n actors and at most k
// steps, one execution finds a given bug of depth d with probability at least
// 1 / (n * k^(d-1)). Seeded; never exhaustive.
#include <algorithm>

#include "lockstep/sim/random.h"
#include "lockstep/sim/strategies/strategy_makers.h"

namespace lockstep::sim {

namespace {

class PctStrategy final : public Strategy {
 public:
  PctStrategy(std::uint64_t seed, int depth) : seed_(seed), depth_(std::max(depth, 1)) {}

  std::string_view name() const override { return "pct"; }

  bool next_execution() override {
    rng_ = Random(seed_ ^ (0xD1B54A32D192ED03ULL * ++execution_));
    priority_.clear();
    step_ = 0;
    // k: the longest execution seen so far (at least 1) bounds where change points fall.
    change_points_.clear();
    for (int i = 0; i + 1 < depth_; ++i) change_points_.push_back(1 + rng_.uniform(std::max<std::uint64_t>(k_, 1)));
    return true;
  }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t) override {
    ++step_;
    k_ = std::max(k_, step_);
    for (const auto& t : enabled) assign_priority(t.actor);
    // At the i-th change point the running actor drops to priority i (below all initial ones).
    for (std::size_t i = 0; i < change_points_.size(); ++i) {
      if (change_points_[i] == step_ && last_ >= 0) priority_[last_] = static_cast<std::int64_t>(i) + 1;
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < enabled.size(); ++i) {
      if (priority_[enabled[i].actor] > priority_[enabled[best].actor]) best = i;
    }
    // The chosen actor's run and timer transitions are both its own: pick one at random.
    std::size_t same = 0;
    for (const auto& t : enabled) same += t.actor == enabled[best].actor ? 1 : 0;
    if (same == 2 && rng_.uniform(2) == 1) ++best;
    last_ = enabled[best].actor;
    return best;
  }

  std::uint32_t choose(std::uint32_t n, std::string_view, std::uint64_t) override {
    return static_cast<std::uint32_t>(rng_.uniform(n));
  }

 private:
  void assign_priority(ActorId a) {
    if (static_cast<std::size_t>(a) >= priority_.size()) priority_.resize(a + 1, 0);
    if (priority_[a] != 0) return;
    // Initial priorities are distinct and above every change-point priority (1..d-1).
    std::int64_t p;
    do {
      p = depth_ + static_cast<std::int64_t>(rng_.uniform(1 << 20));
    } while (std::find(priority_.begin(), priority_.end(), p) != priority_.end());
    priority_[a] = p;
  }

  std::uint64_t seed_;
  int depth_;
  std::uint64_t execution_ = 0;
  Random rng_;
  std::vector<std::int64_t> priority_;
  std::vector<std::uint64_t> change_points_;
  std::uint64_t step_ = 0;
  std::uint64_t k_ = 1;
  ActorId last_ = -1;
};

}  // namespace

std::unique_ptr<Strategy> make_pct_strategy(std::uint64_t seed, int depth) {
  return std::make_unique<PctStrategy>(seed, depth);
}

}  // namespace lockstep::sim
