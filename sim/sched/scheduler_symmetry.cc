// sim/sched/scheduler_symmetry.cc: the scheduler's side of symmetry reduction: reading the
// instance's classes once the actors stand at their first operations, and filtering what
// may run each step (sim/explore/symmetric_starts.h).
#include <fmt/format.h>

#include "lockstep/sim/sched/scheduler.h"

namespace lockstep::sim {

void Scheduler::setup_symmetry() {
  if (limits_.symmetry) {
    std::vector<std::vector<ActorId>> classes;
    try {
      classes = instance_->symmetric_actors();
    } catch (const std::exception& e) {
      throw InputError(fmt::format("symmetry: symmetric_actors threw: {}", e.what()));
    }
    starts_.setup(std::move(classes),
                  {.count = actor_count_,
                   .op = [this](ActorId a) -> const OpDesc& { return pending_op(a); },
                   .finished = [this](ActorId a) { return finished(a); },
                   .new_object = [this](std::string name) { return new_object(std::move(name)); },
                   .op_text = [this](const OpDesc& op) { return op_text(op); },
                   .names = actor_names_,
                   .owners = owners_});
  }
  if (observer_ != nullptr) observer_->symmetric(starts_.symmetry());
}

void Scheduler::filter_symmetric() {
  std::optional<std::pair<ActorId, ActorId>> wrong;
  std::uint64_t armed = 0;  // a crash may strike at their next step: it is never a private one
  for (ActorId a = 0; a < actor_count_; ++a) {
    if (crash_armed_[a]) armed |= std::uint64_t{1} << a;
  }
  enabled_count_ =
      starts_.filter({enabled_.data(), enabled_count_}, {parked_.data(), parked_count_}, unfinished_, armed, wrong);
  if (wrong) {
    const auto [p, a] = *wrong;
    throw InputError(fmt::format("symmetry: {} and {} are declared interchangeable, but {}'s first operation "
                                 "({}) can run where {}'s cannot",
                                 actor_names_[p], actor_names_[a], actor_names_[a], op_text(pending_op(a)),
                                 actor_names_[p]));
  }
}

}  // namespace lockstep::sim
