// sim/strategies/preemption_bound.h: the preemption bound, a strategy that trades completeness for reach.
//
// Preemption bounding (CHESS; Musuvathi and Qadeer, PLDI 2007): a decorator that lets the
// strategy it wraps switch away from an actor that could still run at most K times per
// execution. A search that the bound cut is reported incomplete, never pass. With dfs,
// every execution within the bound is explored. With dpor, dpor also adds each backtrack
// point at the start of the racing actor's run of steps (after Coons, Musuvathi and
// McKinley, OOPSLA 2013), but it still explores one execution per trace, which may need
// more preemptions than the cheapest execution of that trace: a bug within K preemptions
// may need a larger bound under dpor. Iterative deepening plus shrinking gives the fewest.

#pragma once

#include <cstdint>
#include <memory>

#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

// Counts a switch away from the actor of the previous step while that actor could still
// run its operation (a timer-only wait is no preemption).
class PreemptionCounter {
 public:
  void reset() {
    previous_ = -1;
    preemptions_ = 0;
  }
  // Whether taking `t` now would be a preemption.
  bool is_preemption(std::span<const Transition> enabled, const Transition& t) const;
  void taken(std::span<const Transition> enabled, const Transition& t) {
    if (is_preemption(enabled, t)) ++preemptions_;
    previous_ = t.actor;
  }
  int preemptions() const { return preemptions_; }
  ActorId previous() const { return previous_; }

 private:
  ActorId previous_ = -1;
  int preemptions_ = 0;
};

// `inner` within at most `max_preemptions` preemptions per execution.
std::unique_ptr<Strategy> make_preemption_bounded(std::unique_ptr<Strategy> inner, int max_preemptions);

}  // namespace lockstep::sim
