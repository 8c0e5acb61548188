#include "lockstep/sim/explore/symmetric_starts.h"

#include <algorithm>

#include <fmt/format.h>

#include "lockstep/model/scenario.h"
#include "lockstep/sim/invariant.h"

namespace lockstep::sim {

void SymmetricStarts::setup(std::vector<std::vector<ActorId>> classes, const SymmetryActors& actors) {
  if (auto error = symmetry_declaration_error(classes, actors.count); !error.empty()) {
    throw InputError("symmetry: " + error);
  }
  for (std::size_t k = 0; k < classes.size(); ++k) {
    auto& members = classes[k];
    std::sort(members.begin(), members.end());
    const ObjectId object = actors.new_object(fmt::format("symmetry:{}", k));
    int previous = -1;
    std::uint64_t permutations = 1;
    for (std::size_t i = 0; i < members.size(); ++i) {
      const ActorId a = members[i];
      LOCKSTEP_INVARIANT(!symmetry_.in_class(a), "an actor is in one class (checked by the declaration)");
      symmetry_.object[a] = object;
      ++symmetry_.actors;
      permutations = permutations > UINT64_MAX / (i + 1) ? UINT64_MAX : permutations * (i + 1);
      // A member that finished without a step: by symmetry all of its class did.
      if (actors.finished(a)) continue;
      const OpDesc& mine = actors.op(a);
      first_op_[a] = mine;
      if (!add_symmetry_object(first_op_[a].footprint, object)) {
        throw InputError(fmt::format("symmetry: the first operation of {} ({}) names too many objects",
                                     actors.names[a], actors.op_text(mine)));
      }
      if (previous >= 0) {
        LOCKSTEP_INVARIANT(previous < a, "a class's members are ordered by id");
        const OpDesc& theirs = actors.op(previous);
        if (mine.verb != theirs.verb || mine.footprint.access != theirs.footprint.access) {
          throw InputError(fmt::format("symmetry: {} and {} are declared interchangeable, but their first operations "
                                       "differ ({} and {})",
                                       actors.names[previous], actors.names[a], actors.op_text(theirs),
                                       actors.op_text(mine)));
        }
      }
      symmetry_.previous[a] = static_cast<std::int8_t>(previous);
      previous = a;
    }
    symmetry_.permutations =
        symmetry_.permutations > UINT64_MAX / permutations ? UINT64_MAX : symmetry_.permutations * permutations;
  }
}

std::size_t SymmetricStarts::filter(std::span<Transition> enabled, std::span<Transition> parked,
                                    std::uint64_t unfinished, std::optional<std::pair<ActorId, ActorId>>& wrong) const {
  const std::uint64_t started = started_ | ~unfinished;
  std::uint64_t runs = 0, timers = 0;
  for (const Transition& t : enabled) (t.timer ? timers : runs) |= std::uint64_t{1} << t.actor;
  std::size_t kept = 0;
  for (Transition t : enabled) {
    const ActorId a = t.actor;
    if (symmetry_.in_class(a) && !((started >> a) & 1)) {
      const int p = symmetry_.previous[a];
      if (p >= 0 && !((started >> p) & 1)) {
        if (!(((t.timer ? timers : runs) >> p) & 1)) {
          wrong = std::pair<ActorId, ActorId>(p, a);
          return kept;
        }
        continue;  // a representative starts p first
      }
      t.op = &first_op_[a];
    }
    enabled[kept++] = t;
  }
  for (Transition& t : parked) {
    if (symmetry_.in_class(t.actor) && !((started >> t.actor) & 1)) t.op = &first_op_[t.actor];
  }
  LOCKSTEP_INVARIANT(enabled.empty() || kept > 0, "symmetry keeps a representative of what could run");
  return kept;
}

}  // namespace lockstep::sim
