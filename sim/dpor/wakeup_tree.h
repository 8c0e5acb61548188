// sim/dpor/wakeup_tree.h: the wakeup tree of one scheduling node, for optimal DPOR (Abdulla,
// Aronis, Jonsson, Sagonas: "Source Sets: A Foundation for Optimal Dynamic Partial Order
// Reduction", JACM 2017, section 6).
//
// A wakeup tree is an ordered set of sequences of steps (each an actor's run or timer
// transition, with the footprint it had), none a prefix of another: the branches a node
// still has to explore, each a reversed race that must be followed to its end so that no
// execution ends with every actor asleep. Kept as a tree: each node's children are the
// distinct next steps of the sequences through it, leftmost (first inserted) first.
//
// Invariants: no sequence is empty; no sequence is a prefix of another (insert stops at a
// leaf). Weak initials decide equivalence; a step whose footprint is unknown (known ==
// false) is taken as dependent with every step, which can only add branches, never lose one.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lockstep/model/env.h"
#include "lockstep/sim/sched/op.h"

namespace lockstep::sim {

// The values of the choices a step makes (Env::choose, a fault, a timing choice), in the
// order it makes them, without trailing zeros: a choice beyond the path takes 0, so [1] and
// [1, 0] are one transition. A transition is (actor, run or timer, path): the other values
// of a choice are transitions of their own (JACM 2017 treats a choice as Nidhugg does).
using ChoicePath = std::vector<std::uint32_t>;

// A step of a wakeup sequence: a transition (an actor's run or its timer, with the values of
// its choices) with the footprint its step will have there. Every step but the last keeps
// the footprint it had in the execution the sequence came from; the last one's is worked
// out (a plain lock's try), guessed (a waiter's other transition) and checked when it runs
// (Node::expected), or not known (another value of a choice).
struct WakeStep {
  ActorId actor = 0;
  bool timer = false;
  Footprint fp;
  bool known = true;  // false: an actor to explore whose step is not known yet
  ChoicePath path;    // the values its choices take
};

// Whether two steps are one transition (their footprints aside).
inline bool same_transition(const WakeStep& a, const WakeStep& b) {
  return a.actor == b.actor && a.timer == b.timer && a.path == b.path;
}

// Whether two steps may be dependent.
inline bool may_depend(const WakeStep& a, const WakeStep& b) { return !a.known || !b.known || dependent(a.fp, b.fp); }

// Appends step s exactly (its fields as bytes) to `out`, for fingerprints.
void append_step_fingerprint(std::string& out, const WakeStep& s);

class FootprintTable;  // sim/dpor/dpor_checkpoint.cc

// A sequence to insert: steps by pointer (the analysis builds each step once per execution).
using StepSequence = std::span<const WakeStep* const>;

// Whether the transition (actor, timer, path) is a weak initial of w: either w contains a
// step of actor, the first one the same transition and no step before it in w that it
// depends on; or w contains none and the transition is independent of every step of w.
// depends(fp) tells whether the transition's step is dependent with a step of footprint fp;
// own, when given, is the footprint that step has.
template <typename Depends>
bool weak_initial(ActorId actor, bool timer, const ChoicePath& path, const Depends& depends, StepSequence w,
                  const Footprint* own = nullptr) {
  auto step_depends = [&](const WakeStep& s) { return !s.known || depends(s.fp); };
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (w[k]->actor != actor) continue;
    if (w[k]->timer != timer || w[k]->path != path) return false;
    // The transition's step and w's step of its actor are one step: with one known
    // footprint, the check of w's own step decides (one check per earlier step, not two).
    const bool same = own != nullptr && w[k]->known && w[k]->fp == *own;
    for (std::size_t j = 0; j < k; ++j) {
      if (may_depend(*w[j], *w[k]) || (!same && step_depends(*w[j]))) return false;
    }
    return true;
  }
  for (const WakeStep* s : w) {
    if (step_depends(*s)) return false;
  }
  return true;
}

inline bool weak_initial(const WakeStep& p, StepSequence w) {
  return weak_initial(p.actor, p.timer, p.path, [&p](const Footprint& f) { return !p.known || dependent(p.fp, f); }, w,
                      p.known ? &p.fp : nullptr);
}

class WakeupTree {
 public:
  bool empty() const { return roots_.empty(); }
  std::size_t root_count() const { return roots_.size(); }
  // The leftmost child. REQUIRES: !empty().
  const WakeStep& first() const { return roots_.front().step; }

  // Removes the branch under the child (actor, timer, path) and returns it as a tree of its
  // own (its sequences without their first step).
  WakeupTree take_subtree(ActorId actor, bool timer, const ChoicePath& path = {});
  // Drops every branch that begins with the transition (actor, timer, path).
  void erase_transition(ActorId actor, bool timer, const ChoicePath& path = {});
  // Adds v as a new rightmost branch unless a branch already covers it: descending while
  // some child is a weak initial of what is left of v, it stops at a leaf or when v is used
  // up. Copies the steps it keeps. Returns the index of the child whose branch it extended
  // (-1: none did change: v was covered, or is a new child). REQUIRES: !v.empty().
  int insert(StepSequence v);
  // The i-th child's step. REQUIRES: i < root_count().
  const WakeStep& root(std::size_t i) const { return roots_[i].step; }
  // A copy of the branch under the child (actor, timer, path), as take_subtree would return it.
  WakeupTree copy_subtree(ActorId actor, bool timer, const ChoicePath& path) const;
  // Each sequence as its actors (timer steps negated, -1 - actor), leftmost first: for tests.
  std::vector<std::vector<int>> branches() const;
  // The tree as text and back, for checkpoints (sim/dpor/dpor_checkpoint.cc): five numbers
  // per node in pre-order (actor, timer + 2 * the path's length, known, footprint, children),
  // then the path's values, footprints by their index in `table`. A path's trees can hold a million nodes: compact, flat, not nested.
  // from_text throws std::invalid_argument for a malformed one.
  std::string to_text(FootprintTable& table) const;
  static WakeupTree from_text(std::string_view text, const FootprintTable& table);

 private:
  // A node: its step and its children, in order (leftmost first); a leaf ends a sequence.
  struct Node {
    WakeStep step;
    std::vector<Node> children;
  };
  std::vector<Node> roots_;
};


}  // namespace lockstep::sim
