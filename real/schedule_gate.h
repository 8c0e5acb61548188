// real/schedule_gate.h: real threads taking their visible operations in the order a simulated
// trace took them (confirm's aim: ConfirmOptions::aim).
//
// The order is the acting actor of each step. Before a visible operation an actor waits for
// its turn: the next step of the order is its own and no other step is running. A step runs
// until its actor comes back to the gate (its next operation, or its end), or, when it is
// still running after `blocked_after`, it counts as blocked (a lock wait on the server) and
// the next step goes, as isolationtester moves on from a waiting step. When the actor of
// the next step does not come within `missing_after` (the real run took another path, or
// that actor is blocked), that step is skipped, as are the steps of an actor that ended. After the last step every actor runs free.
// The gate never stops an actor for good: a run that leaves the trace's path goes on, and
// followed()/skipped() say how much of the order it took.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <vector>

#include "lockstep/model/env.h"

namespace lockstep::real {

class ScheduleGate {
 public:
  ScheduleGate(std::vector<ActorId> order, Duration blocked_after, Duration missing_after);

  // Before one of `actor`'s visible operations: ends its step before, if it was running, and
  // waits for its turn. True when it took its turn; false once the order is over (the
  // actor runs free).
  bool before(ActorId actor);
  // `actor` ended (returned or threw): its running step, if any, is over, and its steps
  // left in the order are skipped.
  void ended(ActorId actor);

  std::size_t followed() const;  // steps taken at their turn
  std::size_t skipped() const;   // steps given up on (their actor did not come)

 private:
  using Clock = std::chrono::steady_clock;
  void advance(Clock::time_point now);  // REQUIRES: m_ held
  bool has_ended(ActorId actor) const;  // REQUIRES: m_ held

  const std::vector<ActorId> order_;
  const Duration blocked_after_, missing_after_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::size_t next_ = 0;       // the step whose turn comes next
  ActorId running_ = -1;       // the actor of the step running, -1 when none
  Clock::time_point since_;    // when that step began, or when the turn became free
  std::size_t followed_ = 0, skipped_ = 0;
  std::vector<bool> ended_;    // by actor
};

}  // namespace lockstep::real
