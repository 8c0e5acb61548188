#include "lockstep/sim/fair_continuation.h"

#include "lockstep/sim/sim_env.h"
#include "lockstep/sim/strategy.h"

namespace lockstep::sim {
namespace {

// Follows `prefix`, then gives each actor its turn in order after the previous one.
class FairAfter final : public Strategy {
 public:
  explicit FairAfter(const std::vector<Decision>& prefix) : prefix_(prefix) {}

  std::string_view name() const override { return "fair"; }
  bool next_execution() override { return true; }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t) override {
    std::size_t chosen = enabled.size();
    if (next_ < prefix_.size()) {
      const Decision d = prefix_[next_++];
      for (std::size_t i = 0; i < enabled.size(); ++i) {
        if (enabled[i].actor == static_cast<ActorId>(d.value) && enabled[i].timer == (d.kind == Decision::Kind::timer)) {
          chosen = i;
        }
      }
    }
    if (chosen == enabled.size()) chosen = next_in_turn(enabled);
    previous_ = enabled[chosen].actor;
    return chosen;
  }

  std::uint32_t choose(std::uint32_t n, std::string_view, std::uint64_t) override {
    if (next_ < prefix_.size() && prefix_[next_].kind == Decision::Kind::choice && prefix_[next_].value < n) {
      return prefix_[next_++].value;
    }
    return 0;
  }

 private:
  // The first actor after the previous one (cyclically) that has a transition: its run if
  // it can run, else its timer. Transitions come sorted by actor, run before timer.
  std::size_t next_in_turn(std::span<const Transition> enabled) const {
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      if (enabled[i].actor > previous_) return i;
    }
    return 0;
  }

  const std::vector<Decision>& prefix_;
  std::size_t next_ = 0;
  ActorId previous_ = -1;
};

}  // namespace

FairContinuation continue_fairly(const System& system, const RunLimits& limits, const std::vector<Decision>& prefix) {
  Scheduler scheduler;
  SimEnv env;
  FairAfter strategy(prefix);
  FairContinuation out;
  RunLimits fair = limits;
  fair.fair = true;
  fair.log_events = false;
  std::uint64_t prefix_steps = 0;
  for (const Decision& d : prefix) prefix_steps += d.kind == Decision::Kind::choice ? 0 : 1;
  fair.fair_from_step = prefix_steps;  // the prefix's unfair cycle is what is being left
  out.result = scheduler.run(system, env, strategy, fair);
  out.decisions = scheduler.decisions();
  return out;
}

}  // namespace lockstep::sim
