// sim/dpor/node.h: the path of scheduling nodes DPOR keeps for one execution: each node's
// enabled transitions, its source set or wakeup tree, its sleep set and what was explored
// there. Invariant: a node's current transition is one of its enabled ones.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lockstep/sim/dpor/wakeup_tree.h"
#include "lockstep/sim/invariant.h"
#include "lockstep/model/env.h"
#include "lockstep/sim/sched/op.h"

namespace lockstep::sim::dpor {

using Mask = std::uint64_t;

constexpr Mask bit(ActorId a) { return Mask{1} << a; }
inline ActorId lowest(Mask m) { return static_cast<ActorId>(std::countr_zero(m)); }

// The union of the footprints one actor's step had at a node (over its modes and choice
// values). Beyond a few distinct footprints it conservatively depends on everything. The
// first is kept inline: most steps have one, and sleep sets copy effects at every node.
class Effect {
 public:
  void add(const Footprint& f) {
    if (count_ == 0) {
      first_ = f;
      count_ = 1;
      return;
    }
    if (first_ == f) return;
    for (const auto& m : more_) {
      if (m == f) return;
    }
    if (count_ == kMaxFootprints) {
      overflow_ = true;
      return;
    }
    more_.push_back(f);
    ++count_;
  }
  bool dependent_with(const Footprint& f) const {
    if (overflow_) return true;
    if (count_ > 0 && dependent(first_, f)) return true;
    for (const auto& m : more_) {
      if (dependent(m, f)) return true;
    }
    return false;
  }

  // The one footprint, when the step had only one (always in optimal mode); else null.
  const Footprint* single() const { return count_ == 1 && !overflow_ ? &first_ : nullptr; }

  // As JSON and back, for checkpoints (sim/dpor/dpor_checkpoint.cc).
  nlohmann::json to_json() const;
  static Effect from_json(const nlohmann::json& j);

 private:
  static constexpr std::uint8_t kMaxFootprints = 4;
  Footprint first_{};
  std::vector<Footprint> more_;  // the others: empty (no allocation) for most steps
  std::uint8_t count_ = 0;
  bool overflow_ = false;
};

// A transition in a sleep set: one actor's run or timer transition with the values of its
// choices, and the footprints its step had when it was explored.
struct SleepEntry {
  ActorId actor;
  bool timer;
  Effect effect;
  ChoicePath path{};
};

struct Node {
  bool is_choice = false;
  // A choice node.
  std::uint32_t options = 0;
  std::uint32_t chosen = 0;
  // A scheduling node.
  Mask enabled = 0;      // actors with at least one enabled transition
  Mask run_modes = 0;    // actors whose operation can run
  Mask timer_modes = 0;  // actors whose timer can fire
  Mask backtrack = 0;    // source-DPOR: the source set, actors that must be explored here
  WakeupTree wakeup;     // optimal DPOR: the branches still to explore here (not current's)
  Mask done = 0;         // actors explored here already (optimal mode: their run transition, no choice path)
  Mask done_timer = 0;   // optimal mode: actors whose timer transition was explored here (no choice path)
  std::vector<SleepEntry> sleep;     // the sleep set the node was entered with
  std::vector<SleepEntry> explored;  // transitions explored here, with their steps' effects
  ActorId current = -1;
  std::array<bool, 2> modes{};  // current's transitions to explore: false run, true timer
  int mode_count = 0;
  int mode = 0;  // index into modes
  Effect current_effect;
  // Optimal mode: the values current's choices take (ChoicePath; empty: each its first).
  ChoicePath current_path;
  // Symmetry: current's step was its start, the step that wrote its class's object
  // (Footprint::symmetry_extra; sim/explore/symmetric_starts.h).
  bool starts = false;
  // Optimal mode: the footprint the wakeup tree's branch gave current's step, which the step
  // must have when it runs (else the tree was built on a wrong footprint: optimal mode ends;
  // an alarm, since a branch dropped unexecuted is never checked: footprints must be exact).
  Footprint expected;
  bool expects = false;
  std::uint64_t uid = 0;  // unique in a search: speculation's key (sim/explore/speculation.h)

  bool current_is_timer() const { return modes[mode]; }
  bool sleeps(ActorId a, bool timer, const ChoicePath& path = {}) const {
    for (const auto& s : sleep) {
      if (s.actor == a && s.timer == timer && s.path == path) return true;
    }
    return false;
  }
  bool mode_enabled(ActorId a, bool timer) const { return ((timer ? timer_modes : run_modes) >> a) & 1; }
  // Whether the transition (a, timer, path) was explored here (optimal mode; source-DPOR
  // explores every path of an actor's step at once).
  bool mode_done(ActorId a, bool timer, const ChoicePath& path = {}) const {
    if (path.empty()) return ((timer ? done_timer : done) >> a) & 1;
    for (const auto& s : explored) {
      if (s.actor == a && s.timer == timer && s.path == path) return true;
    }
    return false;
  }
  // The enabled transitions of `a` that do not sleep, in order run, timer.
  int awake_modes(ActorId a, std::array<bool, 2>& out) const {
    int n = 0;
    if (((run_modes >> a) & 1) && !sleeps(a, false)) out[n++] = false;
    if (((timer_modes >> a) & 1) && !sleeps(a, true)) out[n++] = true;
    return n;
  }
  // Actors with an enabled transition that does not sleep.
  Mask awake() const {
    Mask m = 0;
    std::array<bool, 2> unused{};
    for (Mask rest = enabled; rest != 0; rest &= rest - 1) {
      const ActorId a = lowest(rest);
      if (awake_modes(a, unused) > 0) m |= bit(a);
    }
    return m;
  }
  void make_current(ActorId a) {
    current = a;
    mode_count = awake_modes(a, modes);
    mode = 0;
    current_effect = Effect();
    current_path.clear();
    expects = false;
  }
  // Optimal mode: one transition of `a` is current, the only one this branch explores (the
  // other one, if any, is a branch of its own when a race asks for it).
  void make_current(ActorId a, bool timer, const ChoicePath& path = {}) {
    current = a;
    modes[0] = timer;
    mode_count = 1;
    mode = 0;
    current_effect = Effect();
    current_path = path;
    expects = false;
  }
  // Optimal mode: makes the leftmost branch of the wakeup tree current.
  void follow_wakeup() {
    const WakeStep& step = wakeup.first();
    make_current(step.actor, step.timer, step.path);
    expects = step.known;
    if (expects) expected = step.fp;
  }
  // Every field as a new node's; the sleep set's and explored list's memory is kept.
  void reset() {
    std::vector<SleepEntry> sleep_memory = std::move(sleep), explored_memory = std::move(explored);
    *this = Node();
    sleep = std::move(sleep_memory);
    sleep.clear();
    explored = std::move(explored_memory);
    explored.clear();
  }
};

// The path of nodes, deepest last. A popped node keeps its vectors' memory for the next
// push: a new node's sleep set and explored list are otherwise allocated at every step.
class NodeStack {
 public:
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Node& operator[](std::size_t i) { return nodes_[i]; }
  const Node& operator[](std::size_t i) const { return nodes_[i]; }
  Node& back() { return nodes_[size_ - 1]; }
  const Node& back() const { return nodes_[size_ - 1]; }
  // A new node on top (REQUIRES: no reference into the stack is held across the call).
  Node& push() {
    if (size_ == nodes_.size()) {
      nodes_.emplace_back();
    } else {
      nodes_[size_].reset();
    }
    return nodes_[size_++];
  }
  void pop_back() {
    LOCKSTEP_INVARIANT(size_ > 0, "dpor: a node is popped from a non-empty path");
    --size_;
  }
  void clear() { size_ = 0; }

 private:
  std::vector<Node> nodes_;
  std::size_t size_ = 0;
};

}  // namespace lockstep::sim::dpor
