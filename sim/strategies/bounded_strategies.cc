#include "lockstep/sim/strategies/bounded_strategies.h"

#include <algorithm>
#include <fmt/format.h>

#include "lockstep/sim/random.h"

namespace lockstep::sim {

bool PreemptionCounter::is_preemption(std::span<const Transition> enabled, const Transition& t) const {
  if (previous_ < 0 || t.actor == previous_) return false;
  return std::any_of(enabled.begin(), enabled.end(),
                     [&](const Transition& e) { return e.actor == previous_ && !e.timer; });
}

namespace {

class PreemptionBounded final : public Strategy {
 public:
  PreemptionBounded(std::unique_ptr<Strategy> inner, int bound)
      : inner_(std::move(inner)), bound_(bound), name_(fmt::format("{}+preemptions<={}", inner_->name(), bound)) {}

  std::string_view name() const override { return name_; }

  bool next_execution() override {
    counter_.reset();
    return inner_->next_execution();
  }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t step) override {
    allowed_.clear();
    for (const auto& t : enabled) {
      if (counter_.preemptions() < bound_ || !counter_.is_preemption(enabled, t)) allowed_.push_back(t);
    }
    if (allowed_.size() < enabled.size()) cut_ = true;
    const std::size_t i = inner_->pick(allowed_, step);
    if (i == kPrune) return kPrune;
    const Transition chosen = allowed_[i];
    counter_.taken(enabled, chosen);
    for (std::size_t k = 0; k < enabled.size(); ++k) {
      if (enabled[k].actor == chosen.actor && enabled[k].timer == chosen.timer) return k;
    }
    throw std::logic_error("preemption bound: chosen transition vanished");
  }

  std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    return inner_->choose(n, label, step);
  }
  void parked(std::span<const Transition> waiting) override { inner_->parked(waiting); }
  void executed(const Transition& t, const Footprint& f) override { inner_->executed(t, f); }
  void clock_advanced() override { inner_->clock_advanced(); }

  // Exhaustive only when the bound never cut a transition.
  bool exhausted() const override { return inner_->exhausted() && !cut_; }
  bool take_restart() override { return inner_->take_restart(); }
  std::string restart_reason() const override { return inner_->restart_reason(); }
  std::string limitation() const override {
    if (!cut_) return inner_->limitation();
    return fmt::format("every execution with at most {} preemptions explored{}; the bound cut others", bound_,
                       inner_->exhausted() ? "" : " (search not finished)");
  }

 private:
  std::unique_ptr<Strategy> inner_;
  int bound_;
  std::string name_;
  PreemptionCounter counter_;
  std::vector<Transition> allowed_;
  bool cut_ = false;
};

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

std::unique_ptr<Strategy> make_preemption_bounded(std::unique_ptr<Strategy> inner, int max_preemptions) {
  return std::make_unique<PreemptionBounded>(std::move(inner), max_preemptions);
}

std::unique_ptr<Strategy> make_pct_strategy(std::uint64_t seed, int depth) {
  return std::make_unique<PctStrategy>(seed, depth);
}

}  // namespace lockstep::sim
