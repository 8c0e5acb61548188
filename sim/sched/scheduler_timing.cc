// sim/sched/scheduler_timing.cc: the scheduler's part of the timing model (model/timing.h):
// a jittered timer's duration as an explored choice, and what a choice drew, in its row.
#include <vector>

#include <fmt/format.h>

#include "lockstep/model/timing.h"
#include "lockstep/sim/sched/scheduler.h"

namespace lockstep::sim {

// The timing model (model/timing.h): a timer lasts as written, an end of its range, or a
// region point around another actor's pending deadline: an explored choice made as it is armed.
Duration Scheduler::jittered(Duration written, const OpDesc& op) {
  const std::vector<Duration> values = duration_choices(written, limits_.timing.jitter, pending_deadlines());
  if (values.size() == 1) return values.front();
  const std::uint32_t c = choose(static_cast<std::uint32_t>(values.size()), "duration", /*keeps_footprint=*/true);
  if (limits_.log_events) {
    describe_choice(fmt::format("{}: lasts {}, written {}", op_text(op), duration_text(values[c]), duration_text(written)));
  }
  return values[c];
}

bool Scheduler::choose_stall(std::string_view where) {
  if (!in_actor() || limits_.time != TimeMode::timed || limits_.timing.stalls == 0) return false;
  if (stalls_used_ >= limits_.timing.stalls) {  // another actor took the last: its first value, as dpor sees it
    if (!aborting_) strategy_->choice_not_offered("stall", steps_);
    return false;
  }
  touch_pending_timers();  // either value: the step's footprint does not depend on it
  const bool stalled = choose(2, "stall", /*keeps_footprint=*/true) == 1;
  describe_choice(stalled ? fmt::format("stalls {}{}", duration_text(std::chrono::milliseconds(limits_.timing.stall_ms)), where)
                          : std::string("no stall"));
  if (stalled) ++stalls_used_;
  return stalled;
}

void Scheduler::describe_choice(std::string_view text) {
  if (limits_.log_events && !events_.empty() && events_.back().op.starts_with("choose ")) {
    events_.back().result += fmt::format(" ({})", text);
  }
}

}  // namespace lockstep::sim
