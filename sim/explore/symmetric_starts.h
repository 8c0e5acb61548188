// sim/explore/symmetric_starts.h: the scheduler's side of symmetry reduction (sim/explore/symmetry.h).
//
// Once the actors stand at their first operations, setup() reads the classes the instance
// declares and gives each class an object; then, every step, filter() drops the start of a
// member whose previous member has not started, and shows the strategy each unstarted
// member's start with its class's object; started() adds that object to a start's effective
// footprint.
//
// A member's start is its first step that is not private. A private step names only objects
// the member owns (Scheduler::own: a pool of its own), observes nothing, is no timer's
// firing and cannot crash: it commutes with every other actor's step, and every member takes
// the same private steps from the same symmetric state, so a member may take them before the
// member before it has started. That is what lets a class of workers, each checking out of a
// pool of its own first, be ordered at their first statements, which usually conflict.
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
  const std::vector<std::int8_t>& owners;  // by object: the actor that owns it, or -1
};

class SymmetricStarts {
 public:
  void clear() {
    symmetry_ = Symmetry();
    started_ = 0;
    private_ = 0;
    owners_ = nullptr;
    names_ = nullptr;
  }
  // Throws InputError for a declaration that is malformed or not symmetric at the start.
  void setup(std::vector<std::vector<ActorId>> classes, const SymmetryActors& actors);
  const Symmetry& symmetry() const { return symmetry_; }
  bool any() const { return symmetry_.any(); }

  // Filters `enabled` in place (returns how many are kept) and rewrites the starts of
  // unstarted members in both spans (`armed`: actors a crash may strike at their next step).
  // Sets `wrong` to (p, a) when member a could start where the member p before it could not
  // run: the declaration is wrong.
  std::size_t filter(std::span<Transition> enabled, std::span<Transition> parked, std::uint64_t unfinished,
                     std::uint64_t armed, std::optional<std::pair<ActorId, ActorId>>& wrong);

  // Actor `actor` took a step (its timer's firing when `timer`) with `effective`: a member's
  // start writes its class's object.
  void started(ActorId actor, bool timer, Footprint& effective);

 private:
  // Whether `fp` is a private step's of `actor` (the class comment).
  bool private_to(const Footprint& fp, ActorId actor) const;

  Symmetry symmetry_;
  std::uint64_t started_ = 0;
  std::uint64_t private_ = 0;  // unstarted members whose pending operation filter() found private
  const std::vector<std::int8_t>* owners_ = nullptr;
  const std::vector<std::string>* names_ = nullptr;
  std::array<OpDesc, kMaxActors> start_op_{};  // an unstarted member's pending operation, as a start
};

}  // namespace lockstep::sim
