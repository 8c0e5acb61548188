// Replay: follows a recorded decision list exactly, once. Any mismatch between the list
// and what the execution offers is a Divergence naming the step.
#include <fmt/format.h>

#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {
namespace {

class ReplayStrategy final : public Strategy {
 public:
  explicit ReplayStrategy(std::vector<Decision> decisions) : decisions_(std::move(decisions)) {}

  std::string_view name() const override { return "replay"; }

  bool next_execution() override {
    if (done_) return false;
    done_ = true;
    return true;
  }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t step) override {
    const Decision d = next(step, "a scheduling decision");
    if (d.kind == Decision::Kind::choice) {
      throw Divergence(step, fmt::format("trace has choice {} where the execution makes a scheduling "
                                         "decision", decision_text(d)));
    }
    const bool timer = d.kind == Decision::Kind::timer;
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      if (enabled[i].actor == static_cast<ActorId>(d.value) && enabled[i].timer == timer) return i;
    }
    std::string offered;
    for (const auto& t : enabled) {
      offered += fmt::format("{}{}", offered.empty() ? "" : " ",
                             decision_text({t.timer ? Decision::Kind::timer : Decision::Kind::run,
                                            static_cast<std::uint32_t>(t.actor)}));
    }
    throw Divergence(step, fmt::format("trace takes {} but it is not enabled (enabled: {})", decision_text(d), offered));
  }

  std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    const Decision d = next(step, fmt::format("choice \"{}\"", label));
    if (d.kind != Decision::Kind::choice) {
      throw Divergence(step, fmt::format("trace has {} where the execution makes choice \"{}\"", decision_text(d), label));
    }
    if (d.value >= n) {
      throw Divergence(step, fmt::format("trace chooses {} for \"{}\", which has only {} options", d.value, label, n));
    }
    return d.value;
  }

  StrategyStatus status() const override { return {.exhausted = done_}; }

 private:
  Decision next(std::uint64_t step, std::string_view what) {
    if (next_ >= decisions_.size()) {
      throw Divergence(step, fmt::format("trace ends after {} decisions, but the execution asks for {}",
                                         decisions_.size(), what));
    }
    return decisions_[next_++];
  }

  std::vector<Decision> decisions_;
  std::size_t next_ = 0;
  bool done_ = false;
};

}  // namespace

std::unique_ptr<Strategy> make_replay_strategy(std::vector<Decision> decisions) {
  return std::make_unique<ReplayStrategy>(std::move(decisions));
}

}  // namespace lockstep::sim
