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
  const std::uint32_t c = choose(static_cast<std::uint32_t>(values.size()), "duration");
  if (limits_.log_events) {
    describe_choice(fmt::format("{}: lasts {}, written {}", op_text(op), duration_text(values[c]), duration_text(written)));
  }
  return values[c];
}

void Scheduler::describe_choice(std::string_view text) {
  if (limits_.log_events && !events_.empty() && events_.back().op.starts_with("choose ")) {
    events_.back().result += fmt::format(" ({})", text);
  }
}

}  // namespace lockstep::sim
