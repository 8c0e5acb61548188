// sim/explore/symmetry.h: symmetry reduction for identical actors.
//
// A system may declare classes of interchangeable actors (Instance::symmetric_actors): the
// same code and configuration, a symmetric initial state, and checks that do not tell them
// apart. A member's start is its first step that is not private (one on objects only it
// owns: sim/explore/symmetric_starts.h). Any execution is then, up to a permutation of each
// class, one in which the members of a class start in the order of their ids. With symmetry
// on (RunLimits::symmetry) the scheduler offers a member's start only once the member before
// it in its class has started: every execution explored is such a representative, and each
// class of executions equal up to a permutation has one.
//
// Partial-order reduction sees it as dependence: the starts of a class's members all write
// one object of the class's own, so their order is part of the trace, and a race whose
// reversal would start a member before the one before it is dropped (its trace is another's
// image; DporStrategy::insert_into). No trace is lost and none is added: a trace with the
// starts in id order is explored once, as without symmetry. The object is the
// strategy's only: clocks do not pass through it (sim/sched/scheduler.h), so time stays symmetric.
//
// The scheduler checks what it can of a declaration as it goes: two members not started yet
// must offer the same operation (verb and access) and be able to run alike; anything else
// stops the search with an InputError naming them (the declaration is wrong: no verdict). Soundness is checked against the dfs oracle
// (DporProperties.SymmetricDporExploresEveryClassDfsFinds).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/sim/sched/op.h"

namespace lockstep::sim {

struct Symmetry {
  // Per actor: the member before it in its class (-1: none, or not in a class).
  std::array<std::int8_t, kMaxActors> previous = filled(-1);
  // Per actor: the object its class's starts write (kNoObject: not in a class).
  std::array<ObjectId, kMaxActors> object{};
  int actors = 0;  // actors in classes
  // The permutations of the declared classes (the product of their sizes' factorials),
  // saturated at UINT64_MAX.
  std::uint64_t permutations = 1;

  bool any() const { return actors > 0; }
  bool in_class(ActorId a) const { return object[a] != kNoObject; }

 private:
  static std::array<std::int8_t, kMaxActors> filled(std::int8_t v) {
    std::array<std::int8_t, kMaxActors> out{};
    out.fill(v);
    return out;
  }
};

// The empty string when `classes` is a valid declaration for `actor_count` actors (each class
// of two or more distinct actors, no actor in two classes), else what is wrong.
std::string symmetry_declaration_error(const std::vector<std::vector<ActorId>>& classes, int actor_count);

// A footprint as the strategy sees it when its step is the first of a member of a class: it
// also writes the class's object. False when there is no room for it (kMaxExtraObjects).
bool add_symmetry_object(Footprint& fp, ObjectId object);

}  // namespace lockstep::sim
