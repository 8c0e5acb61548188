// sim/explore/symmetric_starts.h: the scheduler's side of symmetry reduction (sim/explore/symmetry.h).
//
// Once the actors stand at their first operations, setup() reads the classes the instance
// declares and gives each class an object; then, every step, filter() drops the transitions
// of members whose previous member has not started, and shows the strategy each unstarted
// member's first operation with its class's object; started() adds that object to a first
// step's effective footprint.
//
// Guarantees: the classes' members start in the order of their ids in every execution the
// strategy is offered; a declaration that is malformed or plainly not symmetric is an
// InputError naming the actors (the model's mistake, not a verdict). filter() allocates nothing.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/sim/explore/symmetry.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

// What setup() reads of the scheduler's actors, and how it names things in its errors.
struct SymmetryActors {
  int count = 0;
  std::function<const OpDesc&(ActorId)> op;  // the actor's pending (first) operation
  std::function<bool(ActorId)> finished;
  std::function<ObjectId(std::string)> new_object;
  std::function<std::string(const OpDesc&)> op_text;
  const std::vector<std::string>& names;
};

class SymmetricStarts {
 public:
  void clear() {
    symmetry_ = Symmetry();
    started_ = 0;
  }
  // Throws InputError for a declaration that is malformed or not symmetric at the start.
  void setup(std::vector<std::vector<ActorId>> classes, const SymmetryActors& actors);
  const Symmetry& symmetry() const { return symmetry_; }
  bool any() const { return symmetry_.any(); }

  // Filters `enabled` in place (returns how many are kept) and rewrites the operations of
  // unstarted members in both spans. Sets `wrong` to (p, a) when member a could run where the
  // member p before it could not: the declaration is wrong.
  std::size_t filter(std::span<Transition> enabled, std::span<Transition> parked, std::uint64_t unfinished,
                     std::optional<std::pair<ActorId, ActorId>>& wrong) const;

  // Actor `actor` took a step with `effective`: the first step of a member writes its class's object.
  void started(ActorId actor, Footprint& effective) {
    const std::uint64_t bit = std::uint64_t{1} << actor;
    if (symmetry_.in_class(actor) && !(started_ & bit)) {
      add_symmetry_object(effective, symmetry_.object[actor]);  // room checked by setup
    }
    started_ |= bit;
  }

 private:
  Symmetry symmetry_;
  std::uint64_t started_ = 0;
  std::array<OpDesc, kMaxActors> first_op_{};
};

}  // namespace lockstep::sim
