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
  owners_ = &actors.owners;
  names_ = &actors.names;
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
      OpDesc start = mine;
      if (!add_symmetry_object(start.footprint, object)) {
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

bool SymmetricStarts::private_to(const Footprint& fp, ActorId actor) const {
  if (fp.object == kNoObject || fp.effects != 0 || fp.domain_write || fp.reads_every_object || fp.symmetry_extra) return false;
  const std::vector<std::int8_t>& owners = *owners_;
  const auto mine = [&](ObjectId o) { return o < owners.size() && owners[o] == actor; };
  if (!mine(fp.object)) return false;
  for (std::size_t i = 0; i < fp.extra_count; ++i) {
    if (!mine(fp.extra[i])) return false;
  }
  return true;
}

std::size_t SymmetricStarts::filter(std::span<Transition> enabled, std::span<Transition> parked,
                                    std::uint64_t unfinished, std::uint64_t armed,
                                    std::optional<std::pair<ActorId, ActorId>>& wrong) {
  const std::uint64_t started = started_ | ~unfinished;
  std::uint64_t runs = 0, timers = 0;
  for (const Transition& t : enabled) (t.timer ? timers : runs) |= std::uint64_t{1} << t.actor;
  private_ = 0;
  // The pending operation of unstarted member a as its start: with its class's object.
  const auto as_start = [&](ActorId a, const OpDesc* op) {
    start_op_[a] = *op;
    if (!add_symmetry_object(start_op_[a].footprint, symmetry_.object[a])) {
      throw InputError(fmt::format("symmetry: the start of {} ({}) names too many objects for symmetry reduction; "
                                   "turn symmetry off for this model",
                                   (*names_)[a], op->verb));
    }
    return &start_op_[a];
  };
  std::size_t kept = 0;
  for (Transition t : enabled) {
    const ActorId a = t.actor;
    const std::uint64_t bit = std::uint64_t{1} << a;
    if (symmetry_.in_class(a) && !(started & bit)) {
      if (!t.timer && !(armed & bit) && private_to(t.op->footprint, a)) {
        private_ |= bit;  // runs before p has started: it commutes with everything
        enabled[kept++] = t;
        continue;
      }
      const int p = symmetry_.previous[a];
      if (p >= 0 && !((started >> p) & 1)) {
        if (!(((t.timer ? timers : runs) >> p) & 1)) {
          wrong = std::pair<ActorId, ActorId>(p, a);
          return kept;
        }
        continue;  // a representative starts p first
      }
      t.op = as_start(a, t.op);
    }
    enabled[kept++] = t;
  }
  for (Transition& t : parked) {
    const ActorId a = t.actor;
    if (symmetry_.in_class(a) && !((started >> a) & 1) && !private_to(t.op->footprint, a)) t.op = as_start(a, t.op);
  }
  LOCKSTEP_INVARIANT(enabled.empty() || kept > 0, "symmetry keeps a representative of what could run");
  return kept;
}

void SymmetricStarts::started(ActorId actor, bool timer, Footprint& effective) {
  const std::uint64_t bit = std::uint64_t{1} << actor;
  if (!symmetry_.in_class(actor) || (started_ & bit)) return;
  if (!timer && (private_ & bit)) {
    LOCKSTEP_INVARIANT(private_to(effective, actor), "a private step names only objects its actor owns");
    return;
  }
  add_symmetry_object(effective, symmetry_.object[actor]);  // room checked by filter
  started_ |= bit;
}

}  // namespace lockstep::sim
