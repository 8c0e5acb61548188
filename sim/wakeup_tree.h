// sim/wakeup_tree.h: the wakeup tree of one scheduling node, for optimal DPOR (Abdulla,
// Aronis, Jonsson, Sagonas: "Source Sets: A Foundation for Optimal Dynamic Partial Order
// Reduction", JACM 2017, section 6).
//
// A wakeup tree is an ordered set of sequences of steps (each an actor's run or timer
// transition, with the footprint it had), none a prefix of another: the branches a node
// still has to explore, each a reversed race that must be followed to its end so that no
// execution ends with every actor asleep. Kept as a tree: each node's children are the
// distinct next steps of the sequences through it, leftmost (first inserted) first. The
// trees of one search share a WakeupForest, which holds their nodes; a WakeupTree is a
// handle to its roots there.
//
// Invariants: no sequence is empty; no sequence is a prefix of another (insert stops at a
// leaf); a tree's nodes are reachable from no other tree. Weak initials decide equivalence;
// a step whose footprint is unknown (known == false) is taken as dependent with every step,
// which can only add branches, never lose one.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/sim/op.h"

namespace lockstep::sim {

// A step of a wakeup sequence: a transition (an actor's run or its timer) with the footprint
// its step will have there. Every step but the last keeps the footprint it had in the
// execution the sequence came from; the last one's is worked out (a plain lock's try) or
// guessed (a waiter's other transition), and checked when it runs (Node::expected).
struct WakeStep {
  ActorId actor = 0;
  bool timer = false;
  Footprint fp;
  bool known = true;  // false: an actor to explore whose step is not known yet
};

// Whether two steps may be dependent.
inline bool may_depend(const WakeStep& a, const WakeStep& b) { return !a.known || !b.known || dependent(a.fp, b.fp); }

// A sequence to insert: steps by pointer (the analysis builds each step once per execution).
using StepSequence = std::span<const WakeStep* const>;

// Whether the transition (actor, timer) is a weak initial of w: either w contains a step of
// actor, the first one with the same mode and no step before it in w that it depends on;
// or w contains none and the transition is independent of every step of w. depends(fp)
// tells whether the transition's step is dependent with a step of footprint fp; own, when
// given, is the footprint that step has.
template <typename Depends>
bool weak_initial(ActorId actor, bool timer, const Depends& depends, StepSequence w, const Footprint* own = nullptr) {
  auto step_depends = [&](const WakeStep& s) { return !s.known || depends(s.fp); };
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (w[k]->actor != actor) continue;
    if (w[k]->timer != timer) return false;
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
  return weak_initial(p.actor, p.timer, [&p](const Footprint& f) { return !p.known || dependent(p.fp, f); }, w,
                      p.known ? &p.fp : nullptr);
}

class WakeupTree;

// The nodes of every wakeup tree of one search, in one vector: a branch's steps are
// inserted one after another, and a tree's subtree becomes the next node's tree without a
// copy, so descending a branch reads memory in order (the trees are deep and narrow).
// Unlinked nodes stay until compact(), which the search calls between executions with every
// tree it keeps: the vector then holds their nodes only, each tree's in depth-first order.
class WakeupForest {
 public:
  // first_compaction: the node count at which the first compaction is due (tests make it small).
  explicit WakeupForest(std::size_t first_compaction = 4096)
      : next_compaction_(first_compaction), first_compaction_(first_compaction) {}

  // Whether enough was inserted since the last compaction that one is due (amortized: the
  // vector has grown to twice what the last one kept).
  bool wants_compaction() const { return nodes_.size() >= next_compaction_; }

  // Keeps the nodes of `trees` only; every other tree of this forest is invalid after it.
  void compact(std::span<WakeupTree* const> trees);
  // Nodes held, reachable or not.
  std::size_t size() const { return nodes_.size(); }

 private:
  friend class WakeupTree;
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};
  // A node: its step, its first child and its next sibling (leftmost first); a node without
  // children ends a sequence.
  struct Node {
    WakeStep step;
    std::uint32_t first_child = kNone;
    std::uint32_t next_sibling = kNone;
  };
  // Appends copies of `from` and the siblings after it, with their descendants, depth
  // first, from `old`; returns the first one's index (kNone for none).
  std::uint32_t copy_siblings(const std::vector<Node>& old, std::uint32_t from);

  std::vector<Node> nodes_;
  std::vector<Node> spare_;  // the vector before the last compaction: its memory, reused
  std::size_t next_compaction_;
  std::size_t first_compaction_;  // the floor of next_compaction_
};

// One node's wakeup tree: a handle to its roots in the search's forest.
class WakeupTree {
 public:
  WakeupTree() = default;
  explicit WakeupTree(WakeupForest& forest) : forest_(&forest) {}
  // A handle moves (the moved-from tree is empty); two handles never share a node.
  WakeupTree(WakeupTree&& other) noexcept : forest_(other.forest_), first_root_(other.first_root_) {
    other.first_root_ = WakeupForest::kNone;
  }
  WakeupTree& operator=(WakeupTree&& other) noexcept {
    forest_ = other.forest_;
    first_root_ = other.first_root_;
    other.first_root_ = WakeupForest::kNone;
    return *this;
  }
  WakeupTree(const WakeupTree&) = delete;
  WakeupTree& operator=(const WakeupTree&) = delete;

  bool empty() const { return first_root_ == WakeupForest::kNone; }
  // The leftmost child. REQUIRES: !empty().
  const WakeStep& first() const { return forest_->nodes_[first_root_].step; }

  // Removes the branch under the child (actor, timer) and returns it as a tree of its own
  // (its sequences without their first step).
  WakeupTree take_subtree(ActorId actor, bool timer);
  // Drops every branch that begins with the transition (actor, timer).
  void erase_transition(ActorId actor, bool timer);
  // Adds v as a new rightmost branch unless a branch already covers it: descending while
  // some child is a weak initial of what is left of v, it stops at a leaf or when v is used
  // up. Copies the steps it keeps. REQUIRES: !v.empty(), a tree made with a forest.
  void insert(StepSequence v);
  // Each sequence as its actors (timer steps negated, -1 - actor), leftmost first: for tests.
  std::vector<std::vector<int>> branches() const;

 private:
  friend class WakeupForest;
  using Node = WakeupForest::Node;
  // Unlinks the root (actor, timer); kNone when there is none.
  std::uint32_t unlink_root(ActorId actor, bool timer);

  WakeupForest* forest_ = nullptr;
  std::uint32_t first_root_ = WakeupForest::kNone;  // the leftmost child of the root
};

}  // namespace lockstep::sim
