#include "lockstep/sim/strategies/preemption_bound.h"

#include <algorithm>
#include <fmt/format.h>


namespace lockstep::sim {

bool PreemptionCounter::is_preemption(std::span<const Transition> enabled, const Transition& t) const {
  if (previous_ < 0 || t.actor == previous_) return false;
  return std::any_of(enabled.begin(), enabled.end(),
                     [&](const Transition& e) { return e.actor == previous_ && !e.timer; });
}

namespace {

class PreemptionBounded final : public Strategy, public StepObserver {
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
  void var_step(const VarStep& v) override { inner_->var_step(v); }
  void executed(const Transition& t, const Footprint& f) override { inner_->executed(t, f); }

  // Exhaustive only when the bound never cut a transition.
  StrategyStatus status() const override {
    StrategyStatus inner = inner_->status();
    if (!cut_) return inner;
    return {.exhausted = false,
            .explored_fraction = inner.explored_fraction,
            .limitation = fmt::format("every execution with at most {} preemptions explored{}; the bound cut others",
                                      bound_, inner.exhausted ? "" : " (search not finished)")};
  }

  // The inner strategy restarts as it would alone and sees parked actors and clock
  // advances; not symmetry, whose reduction assumes the unbounded search (the scheduler
  // still starts a class's members in order). The bound keeps no checkpoint of its own
  // counter, so it offers none.
  StrategyAbilities abilities() override {
    const StrategyAbilities inner = inner_->abilities();
    inner_observer_ = inner.observer;
    return {.observer = inner.observer != nullptr ? this : nullptr, .restarts = inner.restarts};
  }
  void parked(std::span<const Transition> waiting) override { inner_observer_->parked(waiting); }
  void symmetric(const Symmetry& /*symmetry*/) override {}
  void clock_advanced() override { inner_observer_->clock_advanced(); }
  void round_robin_began() override { inner_observer_->round_robin_began(); }

 private:
  std::unique_ptr<Strategy> inner_;
  StepObserver* inner_observer_ = nullptr;
  int bound_;
  std::string name_;
  PreemptionCounter counter_;
  std::vector<Transition> allowed_;
  bool cut_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_preemption_bounded(std::unique_ptr<Strategy> inner, int max_preemptions) {
  return std::make_unique<PreemptionBounded>(std::move(inner), max_preemptions);
}

}  // namespace lockstep::sim
