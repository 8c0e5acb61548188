// Source-DPOR with sleep sets (Abdulla, Aronis, Jonsson, Sagonas: "Optimal Dynamic Partial
// Order Reduction", POPL 2014, Algorithm 1), over the scheduler's effective footprints.
//
// Exploration is stateless: every execution re-runs from the start, following the stack of
// nodes (one per decision) down to where it last branched. A scheduling node holds the
// actors enabled there, its backtrack (source) set, the actors already explored, and the
// sleep set it was entered with. Choice points, and the two ways one actor can move (run
// its operation, or fire its timer), are local branching: every value is explored (in
// source-DPOR; optimal mode below makes each transition a branch of its own).
//
// After each execution, every race between a new event e' and an earlier event e of
// another actor (dependent, and e not already happening-before e' through e's other
// dependencies or the program order of e''s actor) adds, at the node before e, an initial
// of notdep(e).e' unless one is there already. When no initial is enabled at that node (it
// was blocked there), every enabled actor is added instead, as classic DPOR does: an
// over-approximation that keeps the search sound.
//
// A footprint's domain (sim/op.h) is a second, coarser object: races through it are found
// from its own history, with a domain write as a write and every other step in it as a
// read. Ordered observations are one more domain, their scopes its objects. A machine crash
// writes everything: it races with the latest step of every other actor.
//
// Sleep sets hold each explored actor with the effective footprints its step had, so an
// actor wakes exactly when a dependent step runs. With them no two complete executions are
// equivalent; an execution whose every enabled actor sleeps is redundant and is pruned
// (counted as sleep-set blocked).
//
// Optimal mode (strategy "dpor"; JACM 2017, Algorithm 2): each node also holds a wakeup
// tree (sim/wakeup_tree.h), and a race inserts the whole sequence notdep(e).e' there unless
// a sleeping transition is a weak initial of it; exploration follows the tree's branches, so
// no execution is sleep-set blocked. notdep(e) is every later event of the execution that
// does not happen after e (also those after e'), so every race of every execution is
// inserted again (one already covered changes nothing). A plain lock's waiting acquisition
// races with the lock's previous acquisition, not with the release between (Nidhugg's lock
// races); a waiting acquisition of a reader/writer lock, shared or exclusive, never races
// with the release of a holder that excluded it, but with that holder's acquisition, and a
// reader's wait races where it began, with the step that made it wait (readers wait while a
// writer holds the lock or waits for it; a writer's first step that only announced it is no
// acquisition). Each branch is one transition: a waiter's timer and its run are two, and the one
// not taken at a node is a branch of its own there (after notdep, as a race's reversal),
// as Nidhugg treats a nondeterministic choice. A plain lock's try is a read when it fails,
// and a reversed race knows which it will be (the lock is held or not where it runs). A wait
// for a grant (a pg lock request queued behind others: OpDesc::handed_over) races through
// its request, a step of its own, and never with the step that granted it. Every other
// operation that may narrow its access (a pg try, a conditional update) keeps its declared
// access (optimal_dpor_footprint): a wakeup tree needs the footprint a step will have where
// a race moves it, and a superset is not enough (a leaf ending in it covers sequences its
// branch never reaches). Optimal mode covers programs whose actors wait only for plain
// locks (exclusive or shared), grants and sleeps, whose timers are timeouts of those (no deadlock check), make no
// choice, and whose CAS never fails nor is moved by a race. At the first sign of anything
// else (or should a step run with another footprint than its wakeup-tree branch said) the
// search begins again as above (strategy "source-dpor"), and take_restart() tells the
// explorer.
//
// Timed mode, both strategies: the clock moves on only when nothing can run, so every step
// after that happens after every step before it (Strategy::clock_advanced): no race
// crosses it. A plain lock's waiter that then times out races through the acquisition it
// never made, with the lock's last acquisition (else nothing would give it the lock).
//
// Memory: the node stack and the event list of one execution: O(depth * actors); in optimal
// mode also the wakeup trees along the path.
#include <algorithm>
#include <bit>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "lockstep/sim/invariant.h"
#include "lockstep/sim/scheduler.h"
#include "lockstep/sim/strategy.h"
#include "lockstep/sim/wakeup_tree.h"

namespace lockstep::sim {
namespace {

using Mask = std::uint64_t;

constexpr Mask bit(ActorId a) { return Mask{1} << a; }
ActorId lowest(Mask m) { return static_cast<ActorId>(std::countr_zero(m)); }

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

 private:
  static constexpr std::uint8_t kMaxFootprints = 4;
  Footprint first_{};
  std::vector<Footprint> more_;  // the others: empty (no allocation) for most steps
  std::uint8_t count_ = 0;
  bool overflow_ = false;
};

// A transition in a sleep set: one actor's run or timer transition, with the footprints its
// step had when it was explored.
struct SleepEntry {
  ActorId actor;
  bool timer;
  Effect effect;
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
  Mask done = 0;         // actors explored here already (optimal mode: their run transition)
  Mask done_timer = 0;   // optimal mode: actors whose timer transition was explored here
  std::vector<SleepEntry> sleep;     // the sleep set the node was entered with
  std::vector<SleepEntry> explored;  // transitions explored here, with their steps' effects
  ActorId current = -1;
  std::array<bool, 2> modes{};  // current's transitions to explore: false run, true timer
  int mode_count = 0;
  int mode = 0;  // index into modes
  Effect current_effect;
  // Optimal mode: the footprint the wakeup tree's branch gave current's step, which the step
  // must have when it runs (else the tree was built on a wrong footprint: optimal mode ends;
  // an alarm, since a branch dropped unexecuted is never checked: footprints must be exact).
  Footprint expected;
  bool expects = false;

  bool current_is_timer() const { return modes[mode]; }
  bool sleeps(ActorId a, bool timer) const {
    for (const auto& s : sleep) {
      if (s.actor == a && s.timer == timer) return true;
    }
    return false;
  }
  bool mode_enabled(ActorId a, bool timer) const { return ((timer ? timer_modes : run_modes) >> a) & 1; }
  bool mode_done(ActorId a, bool timer) const { return ((timer ? done_timer : done) >> a) & 1; }
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
    expects = false;
  }
  // Optimal mode: one transition of `a` is current, the only one this branch explores (the
  // other one, if any, is a branch of its own when a race asks for it).
  void make_current(ActorId a, bool timer) {
    current = a;
    modes[0] = timer;
    mode_count = 1;
    mode = 0;
    current_effect = Effect();
    expects = false;
  }
  // Optimal mode: makes the leftmost branch of the wakeup tree current.
  void follow_wakeup() {
    const WakeStep& step = wakeup.first();
    make_current(step.actor, step.timer);
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

// One executed step: who, what it touched, at which scheduling node, and the number of
// decisions taken when it ended (to tell new steps from replayed ones).
struct Event {
  ActorId actor;
  bool timer;
  bool waits;    // the step's operation parks until its condition holds (Transition::waits)
  bool compares;     // a CAS (OpDesc::compares): moved by a race, it may fail
  bool grant_wait;   // a step of a wait for a grant, its run or its timer (OpDesc::handed_over)
  bool timer_reads_more;  // with grant_wait: its timer is a deadlock check (OpDesc::timer_reads_more)
  bool plain_try;  // a plain lock's acquisition that does not wait: it fails (a read) when held
  Access declared_access;  // the access its operation declared (a timeout narrows it to a read)
  Footprint fp;
  std::uint32_t node;
  std::uint32_t decisions;

  // The step narrowed its declared access to a read (a failed try or CAS, a timeout).
  bool refined() const { return fp.access != declared_access; }
};

// An actor parked in the state before event `state`, with its pending operation.
struct Parked {
  std::uint32_t state;
  ActorId actor;
  Footprint fp;
  std::uint32_t decisions;
  bool handed_over;  // OpDesc::handed_over: its request races, not the wait
};

// Happens-before bookkeeping for one object or domain (or the observations) while
// analysing a run.
struct ObjectHistory {
  int last_write = -1;
  std::vector<int> reads_since;
  // Optimal mode, objects only: every access of the run, in order (the event, whether a read).
  std::vector<std::pair<int, bool>> accesses;

  void reset() {
    last_write = -1;
    reads_since.clear();
    accesses.clear();
  }
};


class DporStrategy final : public Strategy {
 public:
  // bounded: a preemption bound filters the transitions this strategy is offered. Then,
  // as in Coons, Musuvathi and McKinley's bounded partial-order reduction (OOPSLA 2013),
  // every backtrack point is also added where the racing step's actor began its run of
  // steps: reversing there needs no preemption, so the bound does not hide it.
  //
  // optimal: wakeup trees instead of source sets (the JACM 2017 paper's Algorithm 2): a
  // reversed race is followed along its whole sequence, so no execution ends with every
  // enabled actor asleep. With a preemption bound the search is source-DPOR (the bound
  // cuts sequences that the trees would need).
  DporStrategy(std::string name, bool bounded, bool optimal)
      : name_(std::move(name)), bounded_(bounded), optimal_(optimal && !bounded) {}

  std::string_view name() const override { return name_; }

  bool next_execution() override {
    // An execution that ended optimal mode is not analysed: the search begins again.
    if (started_ && !(optimal_ && fallback_)) analyze_races();
    if (optimal_ && fallback_) {
      // The program has what optimal mode does not cover: begin again as source-DPOR.
      optimal_ = false;
      restarted_ = true;
      started_ = false;
      stack_.clear();
      diverge_ = 0;  // every step of the first execution is new
      inherited_ = WakeupTree();
    }
    if (started_) {
      if (!backtrack()) {
        exhausted_ = true;
        return false;
      }
    }
    started_ = true;
    depth_ = 0;
    last_sched_ = -1;
    events_.clear();
    parked_.clear();
    barriers_.clear();
    return true;
  }

  bool take_restart() override { return std::exchange(restarted_, false); }

  void clock_advanced() override { barriers_.push_back(static_cast<std::uint32_t>(events_.size())); }

  // The footprint the picked transition declared (t.op in executed() is already the
  // actor's next operation).
  std::size_t remember_declared(std::span<const Transition> enabled, std::size_t index) {
    declared_ = enabled[index].op->footprint;
    declared_op_ = *enabled[index].op;
    declared_waits_ = enabled[index].waits && !enabled[index].timer;
    return index;
  }

  void parked(std::span<const Transition> waiting) override {
    for (const auto& t : waiting) {
      // Optimal mode covers waits for plain locks (exclusive or shared), waits for a grant (a
      // queued request), and sleeps (never ready: only the timer ends one).
      if (!plain_lock_acquisition(t.op->footprint) && !shared_lock_acquisition(t.op->footprint) && !t.op->handed_over &&
          !(t.op->footprint == Footprint{})) {
        unsupported();
      }
    }
    const auto state = static_cast<std::uint32_t>(events_.size());
    while (!parked_.empty() && parked_.back().state == state) parked_.pop_back();  // same state again
    for (const auto& t : waiting) {
      parked_.push_back({state, t.actor, t.op->footprint, static_cast<std::uint32_t>(depth_), t.op->handed_over});
    }
  }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t step) override {
    Mask on = 0, run = 0, timer = 0;
    for (const auto& t : enabled) {
      on |= bit(t.actor);
      (t.timer ? timer : run) |= bit(t.actor);
      // Untimed mode: a timer is a transition of its own, at any moment of its wait. In timed
      // mode a timer fires only once the clock moved on (barriers_), and a plain lock's waiter
      // that times out races through the acquisition it never made (analyze_races). A wait
      // for a grant times out by canceling its request, a step on the lock as its footprint
      // says (its request raced already), unless its timer is a deadlock check, which reads
      // every lock held then: a footprint no race could work out elsewhere.
      if (t.timer && !(plain_lock_acquisition(t.op->footprint) || t.op->footprint == Footprint{} ||
                       (t.op->handed_over && !t.op->timer_reads_more))) {
        unsupported();
      }
    }
    if (depth_ < stack_.size()) {  // following the path of the previous execution
      const Node& n = stack_[depth_];
      if (n.is_choice || n.enabled != on || n.run_modes != run || n.timer_modes != timer) {
        throw Divergence(step, fmt::format("the model is not deterministic: scheduling point {} offers other "
                                           "transitions than on an earlier run with the same decisions", depth_));
      }
      last_sched_ = static_cast<int>(depth_++);
      return remember_declared(enabled, index_of(enabled, n.current, n.current_is_timer()));
    }
    Node& n = stack_.push();
    n.enabled = on;
    n.run_modes = run;
    n.timer_modes = timer;
    child_sleep_set(n.sleep);
    bool from_tree = false;
    if (optimal_) {
      n.wakeup = std::move(inherited_);
      inherited_ = WakeupTree();
      from_tree = next_from_wakeup(n);
    }
    if (from_tree) {
      n.follow_wakeup();
    } else {
      const Mask candidates = n.awake();
      if (candidates == 0) {  // everything enabled sleeps: explored elsewhere
        stack_.pop_back();
        return kPrune;
      }
      const ActorId a = lowest(candidates);
      if (optimal_) {
        std::array<bool, 2> modes{};
        n.awake_modes(a, modes);
        n.make_current(a, modes[0]);  // its first awake transition; the other only if a race asks
      } else {
        n.make_current(a);
      }
    }
    n.backtrack = bit(n.current);
    if (optimal_) inherited_ = n.wakeup.take_subtree(n.current, n.current_is_timer());
    last_sched_ = static_cast<int>(depth_++);
    return remember_declared(enabled, index_of(enabled, stack_.back().current, stack_.back().current_is_timer()));
  }

  std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    unsupported();
    if (depth_ < stack_.size()) {
      const Node& node = stack_[depth_];
      if (!node.is_choice || node.options != n) {
        throw Divergence(step, fmt::format("the model is not deterministic: choice \"{}\" at decision {} differs "
                                           "from an earlier run with the same decisions", label, depth_));
      }
      ++depth_;
      return node.chosen;
    }
    Node& node = stack_.push();
    node.is_choice = true;
    node.options = n;
    ++depth_;
    return 0;
  }

  void executed(const Transition& t, const Footprint& ran) override {
    const Footprint effective = optimal_ ? optimal_dpor_footprint(declared_op_, declared_waits_, t.timer, ran) : ran;
    LOCKSTEP_INVARIANT(last_sched_ >= 0 && stack_[last_sched_].current == t.actor &&
                           stack_[last_sched_].current_is_timer() == t.timer,
                       "dpor: the step that ran is the one its node chose");
    // A try: it may fail (narrows). A writer's first step on a reader/writer lock does not: it
    // takes the lock or announces itself, an acquisition either way.
    const bool plain_try = plain_lock_acquisition(declared_) && !declared_waits_ && !t.timer && declared_op_.narrows;
    // A step may narrow its access to a read (a failed try or CAS, a timeout): refine_access
    // changes nothing else. In optimal mode only a plain lock's try (it fails exactly when
    // the lock is held) and a timeout (of a wait for a plain lock: it only looks at it) are
    // left narrowed; any other keeps its declared access (optimal_dpor_footprint).
    LOCKSTEP_INVARIANT(effective.access == declared_.access || effective.access == Access::read,
                       "dpor: a step narrows its declared access only to a read");
    LOCKSTEP_INVARIANT(!optimal_ || effective.access == declared_.access || plain_try || t.timer || declared_op_.compares,
                       "dpor: in optimal mode only a plain lock's try, a timeout and a CAS are narrowed");
    // A failed CAS would succeed where the variable holds what it expects, which optimal
    // mode does not work out (it knows no values): beyond it.
    if (declared_op_.compares && effective.access != declared_.access) unsupported();
    Node& node = stack_[last_sched_];
    if (node.expects && !(node.expected == effective)) unsupported();  // the wakeup tree was wrong
    if (t.timer && declared_op_.handed_over && !(effective == declared_)) unsupported();  // it read more
    node.current_effect.add(effective);
    events_.push_back({t.actor, t.timer, declared_waits_, declared_op_.compares, declared_op_.handed_over,
                       declared_op_.timer_reads_more, plain_try, declared_.access, effective,
                       static_cast<std::uint32_t>(last_sched_), static_cast<std::uint32_t>(depth_)});
    last_effect_ = effective;
  }

  bool exhausted() const override { return exhausted_; }

 private:
  static std::size_t index_of(std::span<const Transition> enabled, ActorId actor, bool timer) {
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      if (enabled[i].actor == actor && enabled[i].timer == timer) return i;
    }
    throw std::logic_error("dpor: chosen transition is not enabled");
  }

  // The sleep set of a new node: the parent's sleepers and explored siblings that are
  // independent of the step just taken from the parent.
  void child_sleep_set(std::vector<SleepEntry>& out) const {
    if (last_sched_ < 0) return;
    const Node& parent = stack_[last_sched_];
    out.reserve(parent.sleep.size() + parent.explored.size());  // one allocation, not one per doubling
    for (const auto* list : {&parent.sleep, &parent.explored}) {
      for (const auto& s : *list) {
        if (s.actor != parent.current && !s.effect.dependent_with(last_effect_)) out.push_back(s);
      }
    }
  }

  // Optimal DPOR: whether n's wakeup tree has a branch that can be taken; its leftmost one
  // is then first. A branch whose transition sleeps here is covered by the sleep set and
  // dropped; one whose transition cannot be taken here (the race's reversal is not enabled:
  // a wait) is replaced by every awake actor, as source-DPOR does.
  bool next_from_wakeup(Node& n) {
    while (!n.wakeup.empty()) {
      const ActorId a = n.wakeup.first().actor;
      const bool timer = n.wakeup.first().timer;
      if (!n.mode_done(a, timer) && n.mode_enabled(a, timer) && !n.sleeps(a, timer)) return true;
      n.wakeup.erase_transition(a, timer);
      if (!n.mode_enabled(a, timer)) {  // the branch's transition waits here: beyond optimal mode
        unsupported();
        add_every_awake(n);
      }
    }
    return false;
  }

  // Adds every awake transition not explored here yet (each enabled: a parked waiter's
  // timer, not its run, which next_from_wakeup would drop and add again, for ever).
  static void add_every_awake(Node& n) {
    for (Mask rest = n.awake(); rest != 0; rest &= rest - 1) {
      const ActorId a = lowest(rest);
      std::array<bool, 2> modes{};
      const int count = n.awake_modes(a, modes);
      for (int k = 0; k < count; ++k) {
        const bool current = a == n.current && modes[k] == n.current_is_timer();  // a new node has none yet
        if (current || n.mode_done(a, modes[k])) continue;
        const WakeStep unknown{a, modes[k], {}, false};
        const WakeStep* one[] = {&unknown};
        n.wakeup.insert(one);
      }
    }
  }

  // Moves to the next unexplored branch; false when none is left.
  bool backtrack() {
    while (!stack_.empty()) {
      Node& n = stack_.back();
      if (n.is_choice) {
        if (n.chosen + 1 < n.options) {
          ++n.chosen;
          diverge_ = stack_.size() - 1;
          inherited_ = WakeupTree();  // sequences were made with the value before
          return true;
        }
        stack_.pop_back();
        continue;
      }
      if (n.explored.empty()) n.explored.reserve(4);  // most nodes explore few: no doubling from one
      n.explored.push_back({n.current, n.current_is_timer(), n.current_effect});
      if (n.mode + 1 < n.mode_count) {
        ++n.mode;
        n.current_effect = Effect();
        diverge_ = stack_.size() - 1;
        if (optimal_) inherited_ = n.wakeup.take_subtree(n.current, n.current_is_timer());
        return true;
      }
      if (optimal_) {
        (n.current_is_timer() ? n.done_timer : n.done) |= bit(n.current);
        if (!next_from_wakeup(n)) {
          stack_.pop_back();
          continue;
        }
        n.follow_wakeup();
        inherited_ = n.wakeup.take_subtree(n.current, n.current_is_timer());
        diverge_ = stack_.size() - 1;
        return true;
      }
      n.done |= bit(n.current);
      const Mask candidates = n.backtrack & n.awake() & ~n.done;
      if (candidates != 0) {
        n.make_current(lowest(candidates));
        diverge_ = stack_.size() - 1;
        return true;
      }
      stack_.pop_back();
    }
    return false;
  }

  // Finds the races of the execution just finished and extends backtrack sets.
  void analyze_races() {
    int actors = 0;
    for (const auto& e : events_) actors = std::max(actors, e.actor + 1);
    for (const auto& pk : parked_) actors = std::max(actors, pk.actor + 1);  // some never ran a step
    const auto n = static_cast<std::size_t>(actors);
    vc_.assign(events_.size() * n, 0);
    seq_.assign(n, 0);
    last_of_actor_.assign(n, -1);
    last_parked_.assign(n, -1);
    // Emptied in place: their read lists keep their memory from one analysis to the next.
    for (auto& h : objects_) h.reset();
    for (auto& h : domains_) h.reset();
    observations_.reset();
    for (auto& scope : scopes_) scope.second.reset();
    last_machine_crash_ = -1;
    last_acquire_.clear();
    first_release_.clear();
    if (optimal_) {  // each event's actor's next event (announces), and who holds which lock
      next_of_actor_.assign(events_.size(), -1);
      first_after_.assign(n, -1);
      first_after_index_.resize(events_.size() * n);
      for (std::size_t k = events_.size(); k-- > 0;) {
        std::copy(first_after_.begin(), first_after_.end(), first_after_index_.begin() + static_cast<std::ptrdiff_t>(k * n));
        int& first = first_after_[static_cast<std::size_t>(events_[k].actor)];
        next_of_actor_[k] = first;
        first = static_cast<int>(k);
      }
      holding_.assign(holding_.size(), Access::none);
      held_since_.assign(held_since_.size(), -1);
      held_by_releaser_.assign(events_.size(), Access::none);
      acquisition_released_by_.assign(events_.size(), -1);
    }
    if (optimal_) {
      steps_.clear();
      for (const Event& e : events_) {
        steps_.push_back(wake_step(e));
      }
    }

    std::size_t next_parked = 0;
    auto check_parked_at = [&](std::size_t state) {
      for (; next_parked < parked_.size() && parked_[next_parked].state == state; ++next_parked) {
        const Parked& pk = parked_[next_parked];
        last_parked_[pk.actor] = static_cast<int>(state);
        // Optimal mode: a shared lock's waiter races as a pending operation where its wait
        // begins (the step that made it wait is what it could have run before), with v
        // taken over the whole execution (shared_waits_, after the pass).
        if (optimal_ && state != events_.size() && shared_lock_acquisition(pk.fp) && !pk.handed_over &&
            (state == 0 || !parked_at(static_cast<std::uint32_t>(state - 1), pk.actor, pk.fp.object))) {
          check_parked(pk, n, /*defer=*/true);
          continue;
        }
        // Optimal mode: an exclusive lock's waiter races through its acquisition (lock races
        // below); only a waiter left at the end, which has none, races as a pending
        // operation. A waiter for a grant races through its request, a step of its own.
        if (optimal_ && (state != events_.size() || pk.handed_over)) continue;
        if (optimal_ || pk.decisions > diverge_) check_parked(pk, n, /*defer=*/false);
      }
    };
    // Timed mode: where virtual time moved on, nothing could run; a step after that happens
    // after every step before it (the clock knows them all), so no race crosses it.
    std::size_t next_barrier = 0;
    if (!barriers_.empty()) {
      all_vc_.assign(n, 0);
      barrier_vc_.assign(n, 0);
    }
    for (std::size_t j = 0; j < events_.size(); ++j) {
      check_parked_at(j);
      const Event& e = events_[j];
      std::uint32_t* vc = &vc_[j * n];
      if (last_of_actor_[e.actor] >= 0) {
        const std::uint32_t* prev = &vc_[static_cast<std::size_t>(last_of_actor_[e.actor]) * n];
        std::copy(prev, prev + n, vc);
      }
      for (; next_barrier < barriers_.size() && barriers_[next_barrier] <= j; ++next_barrier) barrier_vc_ = all_vc_;
      if (next_barrier > 0) join(vc, barrier_vc_.data(), n);
      // vc now holds what e's actor already knew: events in it are not races with e.
      // Optimal mode, a plain lock's acquisition: it races with the lock's previous
      // acquisition by another actor unless its actor knew of that one already; not with
      // the release in between, which it could never precede (Nidhugg's lock races).
      int lock_race = -1;
      const bool lock_step = optimal_ && e.waits && plain_lock_acquisition(e.fp) && !e.refined();
      const bool shared_wait = optimal_ && e.waits && shared_lock_acquisition(e.fp);
      // Optimal mode: what the step's actor held of its lock before it (its last step on the
      // lock an acquisition, not narrowed: it holds it), for a release (held_by_releaser_).
      if (optimal_) note_holding(e, j, n);
      int enabling_release = -1;  // the release e's acquisition waited for, if any
      if (optimal_ && plain_lock_acquisition(e.fp) && !announces(j)) {  // every acquisition, also a try's: the next waiter's partner
        if (last_acquire_.size() <= e.fp.object) {
          last_acquire_.resize(e.fp.object + 1, -1);
          first_release_.resize(e.fp.object + 1, -1);
        }
        const int i = last_acquire_[e.fp.object];
        if (lock_step && i >= 0 && events_[i].actor != e.actor && vc[events_[i].actor] < own_seq(i, n)) lock_race = i;
        enabling_release = first_release_[e.fp.object];
        last_acquire_[e.fp.object] = static_cast<int>(j);
        first_release_[e.fp.object] = -1;
      } else if (optimal_ && e.fp.access == Access::release && e.fp.object < first_release_.size() &&
                 first_release_[e.fp.object] < 0 && last_acquire_[e.fp.object] >= 0) {
        first_release_[e.fp.object] = static_cast<int>(j);  // a later one finds the lock free: a race as any
      }
      // Optimal mode, a plain lock's waiter that leaves by its timeout: the acquisition it
      // never made races with the lock's last acquisition by another actor that it did not
      // know of before its timeout, as a waiting acquisition would. Without it, in timed
      // mode, the clock's advance before the timeout hides every race that would give it
      // the lock (found by the main property: dpor 6 of dfs's 9 traces).
      if (optimal_ && e.timer && e.refined() && waited_for_plain_lock(e) && e.fp.object < last_acquire_.size()) {
        const int i = last_acquire_[e.fp.object];
        const int before = last_of_actor_[e.actor];
        const bool known = before >= 0 && i >= 0 && vc_[static_cast<std::size_t>(before) * n + events_[i].actor] >= own_seq(i, n);
        if (i >= 0 && events_[i].actor != e.actor && !known) timed_out_.push_back({i, static_cast<int>(j), before});
      }
      candidates_.clear();
      record_access(e.fp, static_cast<int>(j));
      const bool is_new = e.decisions > diverge_;
      // Optimal mode, a wait for a grant: it never races with the step that granted it (the
      // step after which it no longer waited), which it could never precede; its request
      // races as any step does.
      const int granted_by = optimal_ && e.grant_wait && !e.timer ? last_parked_[e.actor] : -1;
      // Keep only direct races: not known to e's actor, not behind another candidate.
      races_.clear();
      holder_races_.clear();
      for (int i : candidates_) {
        const Event& c = events_[i];
        if (c.actor == e.actor || vc[c.actor] >= own_seq(i, n)) continue;
        // Not the release that let it go after the previous acquisition, which it could never
        // precede (a release of a lock already free, a flock's close after its unlock, races).
        if (lock_step && i == enabling_release) continue;
        if (i == granted_by) continue;
        // Nor the release that ended the wait (after which its actor was no longer parked): a
        // reader/writer lock's writer waits for the last reader, whose release need not be the
        // first since the lock's last exclusive acquisition. A shared lock's waiter races where
        // its wait began (check_parked_at).
        if ((lock_step || shared_wait) && enabling_release_of_wait(i, e.actor)) continue;
        // Nor a release by a holder that excluded it: right before that release the lock was
        // held (exclusively, for a shared waiter), and the steps of notdep(i) do not touch
        // the lock (they would happen after i), so the waiting acquisition could not run
        // there. Nidhugg's lock races: an unlock and the next lock are not a race.
        // Its race is with the holder's acquisition instead, as a lock race (unless e's actor
        // knew of it already).
        if ((lock_step || shared_wait) && excluded_by_holder(i, e)) {
          const int taken = acquisition_released_by_[static_cast<std::size_t>(i)];
          // (Not a writer's waiting acquisition for a shared one: readers wait while a writer does.)
          const bool behind_writer = shared_wait && taken >= 0 && writer_waited_before(taken, e.fp.object);
          if (taken >= 0 && !behind_writer && vc[events_[taken].actor] < own_seq(taken, n)) holder_races_.push_back(taken);
          continue;
        }
        races_.push_back(i);
      }
      for (int i : candidates_) join(vc, &vc_[static_cast<std::size_t>(i) * n], n);
      vc[e.actor] = ++seq_[e.actor];
      if (!barriers_.empty()) join(all_vc_.data(), vc, n);
      // Optimal mode: the actor's other transition at e's node (its timer, or its run once the
      // lock is free) is a branch of its own there, after notdep(e) as a race's is.
      if (optimal_ && stack_[e.node].mode_enabled(e.actor, !e.timer)) {
        // Its footprint is worked out: a plain lock's timeout reads the lock, its run takes
        // it; a grant wait's run and timeout (a phantom grant, or the grant winning) both have
        // the wait's footprint, but for a deadlock check, which reads every lock held then.
        if (e.grant_wait && e.timer_reads_more) unsupported();
        alternatives_.push_back({static_cast<int>(j), last_of_actor_[e.actor]});
      }
      last_of_actor_[e.actor] = static_cast<int>(j);
      // Source-DPOR reverses each race once, when its later event is new. In optimal mode a
      // race's sequence runs to the end of the execution, so the same race of a replayed
      // prefix has another sequence in each new continuation: every race of every execution
      // is inserted (JACM 2017, Algorithm 2), those already covered change nothing.
      if (!is_new && !optimal_) continue;
      if (lock_race >= 0) deferred_.push_back({lock_race, static_cast<int>(j)});
      for (int taken : holder_races_) {
        if (taken != lock_race) deferred_.push_back({taken, static_cast<int>(j)});
      }
      for (int i : races_) {
        bool behind_another = false;
        for (int k : races_) {
          if (k > i && vc_[static_cast<std::size_t>(k) * n + events_[i].actor] >= own_seq(i, n)) behind_another = true;
        }
        if (behind_another) continue;
        if (optimal_) {
          deferred_.push_back({i, static_cast<int>(j)});  // v needs the whole execution's clocks
        } else {
          reverse_race(i, static_cast<int>(j), wake_step(e), vc, n);
        }
      }
    }
    check_parked_at(events_.size());
    // Optimal mode: v = notdep(e, E).e' takes every later event of the execution that does
    // not happen after e, also those after e' (JACM 2017, Algorithm 2). Cut at e', v is a
    // weak prefix of branches that then cover it without reaching its trace (found by the
    // optimal-mode property: a leaf ordering two writes the other way "covered" v).
    for (const auto& [i, j] : deferred_) {
      WakeStep q_step = steps_[static_cast<std::size_t>(j)];
      // Moved before i, a plain lock's try may do otherwise there: it is worked out; a CAS
      // is beyond optimal mode. Every other step that may narrow its access kept its
      // declared one (optimal_dpor_footprint):
      // the wakeup tree needs the footprint a step will have, and a superset is not enough (a
      // leaf ending in it would cover sequences its branch never reaches: found by the sim-pg
      // property with a conditional update).
      if (events_[j].compares) {  // it may fail there, or succeed: not known
        unsupported();
        break;
      }
      if (events_[j].plain_try) {
        const std::optional<Access> known = try_access_reversed(i, j, n);
        if (!known) {
          unsupported();
          break;
        }
        q_step.fp.access = *known;
      }
      reverse_race(i, j, q_step, &vc_[static_cast<std::size_t>(j) * n], n, static_cast<int>(events_.size()));
    }
    deferred_.clear();
    // A shared lock's waiter where its wait began: its pending acquisition, after every step
    // of the execution that does not happen after the race's first step. None of those may
    // be its own (its steps after the wait come after that step: the release that ended the
    // wait follows it on the lock).
    for (const SharedWait& w : shared_waits_) {
      const WakeStep pending{w.actor, false, w.fp, true};
      const auto end = static_cast<int>(events_.size());
      reverse_race(w.race, end, pending, &shared_wait_vcs_[w.vc], n, end, static_cast<int>(w.state));
    }
    shared_waits_.clear();
    shared_wait_vcs_.clear();
    // The other transition of a waiter: for a plain lock, its timeout looks at the lock (a
    // read), its run takes it; for a grant, both have the wait's footprint. It knows what its
    // actor knew before e.
    for (const auto& [j, before] : alternatives_) {
      const Event& e = events_[j];
      WakeStep other{e.actor, !e.timer, e.fp, true};
      if (!e.grant_wait) other.fp.access = other.timer ? Access::read : e.declared_access;
      zero_vc_.assign(n, 0);
      const std::uint32_t* known = before >= 0 ? &vc_[static_cast<std::size_t>(before) * n] : zero_vc_.data();
      reverse_race(j, j, other, known, n, static_cast<int>(events_.size()));
    }
    alternatives_.clear();
    for (const auto& [i, j, before] : timed_out_) {
      WakeStep acquisition{events_[j].actor, false, events_[j].fp, true};
      acquisition.fp.access = Access::acquire;
      zero_vc_.assign(n, 0);
      const std::uint32_t* known = before >= 0 ? &vc_[static_cast<std::size_t>(before) * n] : zero_vc_.data();
      reverse_race(i, j, acquisition, known, n, static_cast<int>(events_.size()));
    }
    timed_out_.clear();
  }

  // An actor parked on a pending operation races with the latest dependent steps it does
  // not know of: had it run before them, it would not have been blocked.
  void check_parked(const Parked& pk, std::size_t n, bool defer) {
    candidates_.clear();
    std::size_t sources = 0;
    for_each_object(pk.fp, [&](ObjectId obj, Access access) {
      if (access != Access::none && obj < objects_.size()) sources += pending_candidates(objects_[obj], is_read(access));
    });
    if (pk.fp.domain != kNoObject && pk.fp.domain < domains_.size()) {
      sources += pending_candidates(domains_[pk.fp.domain], !pk.fp.domain_write);
    }
    if (last_machine_crash_ >= 0) {  // a crash before it: dependent with everything
      candidates_.push_back(last_machine_crash_);
      ++sources;
    }
    if (candidates_.empty()) return;
    if (sources > 1) dedupe_candidates();
    zero_vc_.assign(n, 0);
    const std::uint32_t* known = pk.actor < static_cast<ActorId>(n) && last_of_actor_[pk.actor] >= 0
                                     ? &vc_[static_cast<std::size_t>(last_of_actor_[pk.actor]) * n]
                                     : zero_vc_.data();
    races_.clear();
    for (int i : candidates_) {
      if (events_[i].actor == pk.actor || known[events_[i].actor] >= own_seq(i, n)) continue;
      // A shared waiter never runs right before a writer's waiting acquisition: the writer
      // waited there, and readers wait while a writer does (sim/sim_objects.h, writer
      // preference). Its race is with what came before the writer's wait.
      if (optimal_ && shared_lock_acquisition(pk.fp) && writer_waited_before(i, pk.fp.object)) continue;
      races_.push_back(i);
    }
    // The pending operation's clock, as an event's would be: what its actor knew, joined
    // with every step it depends on (a reversal must not treat it as independent of those).
    pending_vc_.assign(known, known + n);
    for (int i : candidates_) join(pending_vc_.data(), &vc_[static_cast<std::size_t>(i) * n], n);
    for (int i : races_) {
      bool behind_another = false;
      for (int k : races_) {
        if (k > i && vc_[static_cast<std::size_t>(k) * n + events_[i].actor] >= own_seq(i, n)) behind_another = true;
      }
      if (behind_another) continue;
      if (defer) {  // v needs the whole execution's clocks
        shared_waits_.push_back({i, pk.actor, pk.fp, pk.state, shared_wait_vcs_.size()});
        shared_wait_vcs_.insert(shared_wait_vcs_.end(), pending_vc_.begin(), pending_vc_.end());
      } else {
        reverse_race(i, static_cast<int>(pk.state), WakeStep{pk.actor, false, pk.fp, true}, pending_vc_.data(), n);
      }
    }
  }

  // Adds the steps in h a pending operation would depend on, were it to run now; 1 when
  // there were any.
  std::size_t pending_candidates(const ObjectHistory& h, bool read) {
    const std::size_t before = candidates_.size();
    if (!read) candidates_.insert(candidates_.end(), h.reads_since.begin(), h.reads_since.end());
    if (h.last_write >= 0) candidates_.push_back(h.last_write);
    return candidates_.size() > before ? 1 : 0;
  }

  // Records step j's accesses (its object, its domain, its observations) in their histories,
  // adding its dependent predecessors to candidates_: the same relation as sim::dependent.
  // Observations are a domain of their own: a global one writes it, a scoped one reads it
  // and writes its scope.
  void record_access(const Footprint& fp, int j) {
    std::size_t sources = 0;
    // A machine crash depends on every step of every other actor (sim/op.h): on the latest
    // one of each (the earlier ones are behind it), and every later step depends on it.
    if (fp.effects & kMachineCrash) {
      for (std::size_t a = 0; a < last_of_actor_.size(); ++a) {
        if (last_of_actor_[a] >= 0 && static_cast<std::size_t>(events_[j].actor) != a) candidates_.push_back(last_of_actor_[a]);
      }
      if (last_machine_crash_ >= 0) candidates_.push_back(last_machine_crash_);
      last_machine_crash_ = j;
      ++sources;
    } else if (last_machine_crash_ >= 0) {
      candidates_.push_back(last_machine_crash_);
      ++sources;
    }
    auto visit = [&](ObjectHistory& h, bool read) {
      const std::size_t before = candidates_.size();
      touch(h, j, read);
      if (candidates_.size() > before) ++sources;
    };
    for_each_object(fp, [&](ObjectId obj, Access access) {
      if (access == Access::none) return;
      if (objects_.size() <= obj) objects_.resize(obj + 1);
      visit(objects_[obj], is_read(access));
      if (optimal_) objects_[obj].accesses.emplace_back(j, is_read(access));
    });
    if (fp.domain != kNoObject) {
      if (domains_.size() <= fp.domain) domains_.resize(fp.domain + 1);
      visit(domains_[fp.domain], !fp.domain_write);
    }
    if (fp.effects & kObserves) {
      if (fp.scope == kGlobalObservations) {
        visit(observations_, false);
      } else {
        visit(observations_, true);
        visit(scope_history(fp.scope), false);
      }
    }
    if (sources > 1) dedupe_candidates();  // a step may race with one step through several
  }

  ObjectHistory& scope_history(ScopeId scope) {
    for (auto& [id, h] : scopes_) {
      if (id == scope) return h;
    }
    return scopes_.emplace_back(scope, ObjectHistory()).second;
  }

  // Only when several histories added candidates: sorting reorders the races.
  void dedupe_candidates() {
    std::sort(candidates_.begin(), candidates_.end());
    candidates_.erase(std::unique(candidates_.begin(), candidates_.end()), candidates_.end());
  }

  // Whether actor q was parked in the state before event `state`, on `object` if given.
  bool parked_at(std::uint32_t state, ActorId q, std::optional<ObjectId> object) const {
    auto it = std::lower_bound(parked_.begin(), parked_.end(), state,
                               [](const Parked& p, std::uint32_t s) { return p.state < s; });
    for (; it != parked_.end() && it->state == state; ++it) {
      if (it->actor == q && (!object || it->fp.object == *object)) return true;
    }
    return false;
  }

  // Records what event j's actor holds of j's lock (plain, exclusive or shared) once j ran,
  // and, for a release, what it held right before it.
  void note_holding(const Event& e, std::size_t j, std::size_t n) {
    const Footprint& f = e.fp;
    if (f.object == kNoObject || f.domain != kNoObject || f.extra_count != 0 || f.effects != 0) return;
    const std::size_t at = static_cast<std::size_t>(f.object) * n + static_cast<std::size_t>(e.actor);
    if (holding_.size() <= at) {
      holding_.resize((static_cast<std::size_t>(f.object) + 1) * n, Access::none);
      held_since_.resize(holding_.size(), -1);
    }
    Access& held = holding_[at];
    if (f.access == Access::release) {
      held_by_releaser_[j] = held;
      acquisition_released_by_[j] = held == Access::none ? -1 : held_since_[at];
      held = Access::none;
    } else if (f.access == Access::acquire || f.access == Access::acquire_shared) {
      held = f.access;
      held_since_[at] = static_cast<int>(j);
    } else {
      held = Access::none;  // a failed try (a read), a write: nothing known held
    }
  }

  // Whether release i was by an actor that held its lock in a way that excluded waiting
  // acquisition e: exclusively, or (for an exclusive e) at all.
  bool excluded_by_holder(int i, const Event& e) const {
    const Event& r = events_[i];
    if (r.fp.access != Access::release || r.fp.object != e.fp.object || r.actor == e.actor) return false;
    const Access held = held_by_releaser_[static_cast<std::size_t>(i)];
    return held == Access::acquire || (held == Access::acquire_shared && e.fp.access == Access::acquire);
  }

  // Whether event i is a waiting exclusive acquisition of a reader/writer lock (object):
  // its writer announced itself before it (sim/sim_objects.cc, RWMutex::lock: it waits only
  // once announced) and still waited right before it.
  bool writer_waited_before(int i, ObjectId object) const {
    const Event& w = events_[i];
    return w.waits && plain_lock_acquisition(w.fp) && w.fp.object == object;
  }

  // Whether event j only announced its actor as a writer of a reader/writer lock: a plain
  // acquisition that neither waits nor may fail, after which its actor waits for the lock
  // (sim/sim_objects.cc, RWMutex::lock). It takes nothing: no lock race's partner.
  bool announces(std::size_t j) const {
    const Event& e = events_[j];
    if (e.waits || e.plain_try || e.timer) return false;
    const int next = next_of_actor_[j];
    if (next < 0) return parked_at(static_cast<std::uint32_t>(events_.size()), e.actor, e.fp.object);
    const Event& w = events_[static_cast<std::size_t>(next)];
    return w.waits && !w.timer && plain_lock_acquisition(w.fp) && w.fp.object == e.fp.object;
  }

  // Whether event i is the release that ended actor q's wait on its object.
  bool enabling_release_of_wait(int i, ActorId q) const {
    return events_[i].fp.access == Access::release && enabled_by(i, q);
  }

  // Whether event e's operation was a plain lock's acquisition (its footprint as declared).
  static bool waited_for_plain_lock(const Event& e) {
    Footprint declared = e.fp;
    declared.access = e.declared_access;
    return plain_lock_acquisition(declared);
  }

  // Whether event i, a release, is what let parked actor q run: q waited on i's object
  // before i and no longer waits after it.
  bool enabled_by(int i, ActorId q) const {
    const Event& e = events_[i];
    const auto state = static_cast<std::uint32_t>(i);
    if (e.fp.access != Access::release || parked_at(state + 1, q, std::nullopt)) return false;
    bool waited_on_one = false;  // a multi-object release (a COMMIT) lets go of several at once
    for_each_object(e.fp, [&](ObjectId obj, Access) { waited_on_one = waited_on_one || parked_at(state, q, obj); });
    return waited_on_one;
  }

  std::uint32_t own_seq(int event, std::size_t n) const {
    return vc_[static_cast<std::size_t>(event) * n + events_[event].actor];
  }

  static void join(std::uint32_t* into, const std::uint32_t* from, std::size_t n) {
    for (std::size_t a = 0; a < n; ++a) into[a] = std::max(into[a], from[a]);
  }

  // Records event j's access to one object: its dependent predecessors become candidates.
  void touch(ObjectHistory& h, int j, bool read) {
    if (read) {
      if (h.last_write >= 0) candidates_.push_back(h.last_write);
      h.reads_since.push_back(j);
      return;
    }
    if (h.reads_since.empty()) {
      if (h.last_write >= 0) candidates_.push_back(h.last_write);
    } else {
      candidates_.insert(candidates_.end(), h.reads_since.begin(), h.reads_since.end());
      if (h.last_write >= 0) candidates_.push_back(h.last_write);  // behind the reads: joined, filtered out
    }
    h.last_write = j;
    h.reads_since.clear();
  }

  static WakeStep wake_step(const Event& e) {
    // Every step of notdep(e) has, in the reversed order, the footprint it had: the events
    // it depends on stay before it. Only the race's later step, moved before e, may not.
    return WakeStep{e.actor, e.timer, e.fp, true};
  }

  // The access plain try j (a try of a plain lock, race partner of event i) has when the
  // race is reversed: it runs after the events before i and notdep(i) before j, none that
  // happens after i, so the lock is as the last of those left it (none writes it after j:
  // it would depend on j, so happen after i). Held: the try fails, a read; free: it takes
  // the lock. After a write that is neither an acquisition nor a release (a crash's) the
  // outcome is not known: nullopt.
  std::optional<Access> try_access_reversed(int i, int j, std::size_t n) {
    const ObjectId lock = events_[j].fp.object;
    const ActorId p = events_[i].actor;
    const std::uint32_t p_seq = own_seq(i, n);
    for (int k = j - 1; k >= 0; --k) {
      if (k == i || (k > i && vc_[static_cast<std::size_t>(k) * n + p] >= p_seq)) continue;  // not before j in v
      std::optional<Access> wrote;  // k's access to the lock, when it changed it
      for_each_object(events_[k].fp, [&](ObjectId obj, Access access) {
        if (obj == lock && access != Access::none && access != Access::read) wrote = access;
      });
      if (!wrote) continue;
      if (*wrote == Access::acquire) return Access::read;     // held: the try fails
      if (*wrote == Access::release) return Access::acquire;  // free: the try takes it
      return std::nullopt;
    }
    return Access::acquire;  // never taken: free
  }

  // Optimal DPOR: adds v to node's wakeup tree unless a transition that sleeps there (or
  // was explored there) is a weak initial of v: then v's trace is explored elsewhere.
  // reverse_race's summary of v decides most of them at once: a sleeping actor other than
  // q (v's last step) with a step in v, the same step (one footprint), is a weak initial
  // exactly when that step is one of v's initials: it happens after no earlier step of v.
  // Its clock's chains back into v run through v alone (a step before it that happens after
  // the race's first step would put it after that step too), so by the clocks, which follow
  // the dependence relation, that is having no dependent step before it in v. Not so for q:
  // a lock race's acquisition knows the release after the first step (Nidhugg's lock races).
  void insert_unless_asleep(Node& node, StepSequence v, Mask seen, Mask initials) {
    const ActorId q = v.back()->actor;
    for (const auto* list : {&node.sleep, &node.explored}) {
      for (const SleepEntry& s : *list) {
        const Footprint* own = s.effect.single();
        if (own != nullptr && !s.timer && s.actor != q && (seen & bit(s.actor))) {
          const WakeStep& first = *first_step_[s.actor];
          if (first.known && !first.timer && first.fp == *own) {
            if (initials & bit(s.actor)) return;
            continue;
          }
        }
        if (weak_initial(s.actor, s.timer, [&s](const Footprint& f) { return s.effect.dependent_with(f); }, v, own)) {
          return;
        }
      }
    }
    node.wakeup.insert(v);
  }

  // Optimal mode, before v = notdep(i).q is built (notdep(i): the events in (i, notdep_end)
  // but `end` that do not happen after i): whether a transition asleep (or explored) at node
  // is a weak initial of v, which insert_unless_asleep would find, worked out from the run's
  // accesses per object instead of from v. Decided here only:
  // - a sleeper with no step in v, a footprint on one object (no domain, effects or extra
  //   objects) that no step of v touches in conflict, independent of q's step;
  // - q itself asleep, with no step in v but its last one, q_step, on one object, which no
  //   step of v touches in conflict (nor the sleeper's footprint, when it is another).
  // In a run with a machine crash (dependent with everything) nothing is decided here, nor
  // where v's first step cannot run at the node. False means only "not decided":
  // insert_unless_asleep then decides with v. Most races of a replayed prefix end here
  // (lastzero: three in four), without v.
  bool asleep_before_v(const Node& node, int i, int end, int notdep_end, const WakeStep& q_step, std::size_t n) const {
    if (last_machine_crash_ >= 0) return false;
    const ActorId p = events_[i].actor;
    const ActorId q = q_step.actor;
    const std::uint32_t p_seq = own_seq(i, n);
    auto in_v = [&](int k) {
      return k > i && k < notdep_end && k != end && vc_[static_cast<std::size_t>(k) * n + p] < p_seq;
    };
    auto simple = [](const Footprint& f) { return f.domain == kNoObject && f.effects == 0 && f.extra_count == 0; };
    // Whether a step of v touches simple footprint f's object in conflict with it.
    auto touched = [&](const Footprint& f) {
      if (f.object == kNoObject || f.access == Access::none || f.object >= objects_.size()) return false;
      const auto& accesses = objects_[f.object].accesses;
      for (auto it = accesses.rbegin(); it != accesses.rend() && it->first > i; ++it) {
        if (!(it->second && is_read(f.access)) && in_v(it->first)) return true;
      }
      return false;
    };
    // Whether actor a has a step in v (q's last one aside): its first event after i is one
    // (its later ones happen after that one, and so after i if it does).
    auto has_step_in_v = [&](ActorId a) {
      if (static_cast<std::size_t>(a) >= n) return false;  // no event at all
      const int first = first_after_index_[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(a)];
      return first >= 0 && in_v(first);
    };
    // v's first step is one of its initials: when its actor cannot run at the node, the
    // full path may end optimal mode there (reverse_race's ready == 0), which a sleeper
    // covering v must not hide. Left to it.
    int first_of_v = -1;
    for (int k = i + 1; k < notdep_end && first_of_v < 0; ++k) {
      if (in_v(k)) first_of_v = k;
    }
    const ActorId opens = first_of_v >= 0 ? events_[static_cast<std::size_t>(first_of_v)].actor : q;
    if (!(node.enabled & bit(opens))) return false;
    for (const auto* list : {&node.sleep, &node.explored}) {
      for (const SleepEntry& s : *list) {
        const Footprint* own = s.effect.single();
        if (own == nullptr || s.timer || !simple(*own)) continue;
        if (s.actor == q) {
          if (q_step.timer || !q_step.known || !simple(q_step.fp) || has_step_in_v(q)) continue;
          if (touched(q_step.fp) || (!(q_step.fp == *own) && touched(*own))) continue;
          return true;
        }
        if (!q_step.known || has_step_in_v(s.actor) || dependent(*own, q_step.fp) || touched(*own)) continue;
        return true;
      }
    }
    return false;
  }

  // Adds q (or, when q cannot run there, every enabled actor) to node's backtrack set.
  static void add_backtrack(Node& node, Mask initials, ActorId q) {
    if (initials & node.backtrack) return;
    const Mask ready = initials & node.enabled;
    if (ready == 0) {
      node.backtrack |= node.enabled;
    } else if (ready & bit(q)) {
      node.backtrack |= bit(q);
    } else {
      node.backtrack |= bit(lowest(ready));
    }
  }

  // Race between event i and the step of actor q after the events before `end` (event
  // `end` itself, or a parked actor's pending operation), whose vector clock is q_vc: make
  // sure the node before i explores an initial of notdep(i).q, where notdep(i) is the events
  // before notdep_end (end unless given) but `end` that do not happen after i. From index
  // q_later on, q's steps are ones it took after that operation: none may be in notdep(i).
  void reverse_race(int i, int end, const WakeStep& q_step, const std::uint32_t* q_vc, std::size_t n, int notdep_end = -1,
                    int q_later = std::numeric_limits<int>::max()) {
    if (optimal_ && fallback_) return;  // optimal mode ended in this analysis: nothing inserted counts
    if (notdep_end < 0) notdep_end = end;
    LOCKSTEP_INVARIANT(events_[i].node < stack_.size() && !stack_[events_[i].node].is_choice,
                       "dpor: a race reverses at a scheduling node of the current path");
    const ActorId q = q_step.actor;
    Node& node = stack_[events_[i].node];
    const ActorId p = events_[i].actor;
    const std::uint32_t p_seq = own_seq(i, n);
    if (optimal_ && q_later == std::numeric_limits<int>::max() && asleep_before_v(node, i, end, notdep_end, q_step, n)) return;
    Mask initials = 0, seen = 0;
    first_in_v_.assign(n, 0);
    auto consider = [&](ActorId actor, const std::uint32_t* vc, const WakeStep* step) {
      if (seen & bit(actor)) return;
      if (optimal_) first_step_[actor] = step;
      bool after_earlier = false;
      for (Mask rest = seen; rest != 0 && !after_earlier; rest &= rest - 1) {
        const ActorId a = lowest(rest);
        after_earlier = vc[a] >= first_in_v_[a];
      }
      if (!after_earlier) initials |= bit(actor);
      seen |= bit(actor);
      first_in_v_[actor] = vc[actor];  // the phantom step of q comes last: never read back
    };
    sequence_.clear();
    if (optimal_) first_step_.resize(std::max(first_step_.size(), n + 1));
    for (int k = i + 1; k < notdep_end; ++k) {
      if (k != end && vc_[static_cast<std::size_t>(k) * n + p] < p_seq) {
        if (k >= q_later && events_[k].actor == q) {  // q's own later step would come before it
          unsupported();
          return;
        }
        const WakeStep* step = optimal_ ? &steps_[static_cast<std::size_t>(k)] : nullptr;
        consider(events_[k].actor, &vc_[static_cast<std::size_t>(k) * n], step);
        if (optimal_) sequence_.push_back(step);
      }
    }
    consider(q, q_vc, &q_step);
    if (!optimal_ && (initials & node.backtrack)) return;
    const Mask ready = initials & node.enabled;
    if (ready == 0 && initials == bit(q) && enabled_by(i, q)) {
      // i is the release q was waiting for: the two were never co-enabled and cannot be
      // reordered. The race that matters is q's parked race with the step that took the
      // object, which check_parked finds.
      return;
    }
    if (optimal_) {
      if (ready == 0) {
        // The reversal cannot start here (a wait). Beyond optimal mode: the search begins
        // again as source-DPOR, so nothing is inserted here. (Steps whose footprint may be
        // another in the reversed order, a timer or a failed try, never reach here: they
        // end optimal mode as they run, and such an execution is not analysed.)
        unsupported();
        return;
      }
      sequence_.push_back(&q_step);
      insert_unless_asleep(node, sequence_, seen, initials);
      return;
    }
    add_backtrack(node, initials, q);  // when no initial can run there: every enabled actor
    if (bounded_) {
      int start = i;
      while (start > 0 && events_[start - 1].actor == p) --start;
      if (start != i) add_backtrack(stack_[events_[start].node], initials, q);
    }
  }

  // Something beyond optimal mode (see the top of this file) ends it: the search begins
  // again as source-DPOR (take_restart).
  void unsupported() { fallback_ = fallback_ || optimal_; }

  std::string name_;
  bool bounded_;
  bool optimal_;
  bool fallback_ = false;
  Footprint declared_;
  OpDesc declared_op_;  // the picked transition's operation (Transition::op moves on as it runs)
  bool declared_waits_ = false;
  bool restarted_ = false;
  NodeStack stack_;
  WakeupTree inherited_;  // optimal: the wakeup tree of the next new scheduling node
  std::size_t depth_ = 0;
  std::size_t diverge_ = 0;
  int last_sched_ = -1;
  Footprint last_effect_;
  bool started_ = false;
  bool exhausted_ = false;

  std::vector<Event> events_;
  std::vector<Parked> parked_;
  std::vector<std::uint32_t> barriers_;  // timed mode: the events before which virtual time moved on
  // Scratch for analyze_races, kept to reuse their memory.
  std::vector<std::uint32_t> vc_, seq_, first_in_v_, zero_vc_, pending_vc_, all_vc_, barrier_vc_;
  std::vector<int> last_of_actor_, candidates_, races_;
  std::vector<int> last_parked_;  // per actor: the last state it was parked in, so far in the pass
  std::vector<WakeStep> steps_;             // optimal mode: each event as a wakeup step
  std::vector<const WakeStep*> sequence_;   // scratch of reverse_race
  std::vector<const WakeStep*> first_step_;  // scratch of reverse_race: each actor's first step in v
  std::vector<int> last_acquire_;  // per object: its latest plain lock acquisition in the run analysed
  std::vector<int> first_release_;  // per object: its first release after that acquisition (-1: none yet)
  std::vector<std::pair<int, int>> deferred_;  // optimal mode: races (i, j) to reverse after the pass
  std::vector<std::pair<int, int>> alternatives_;  // optimal mode: (event, its actor's event before)
  struct TimedOut {
    int acquisition;  // the lock's last acquisition before the timeout
    int timeout;      // the waiter's timer event
    int before;       // the waiter's event before it (-1: none)
  };
  std::vector<TimedOut> timed_out_;  // optimal mode: plain-lock waiters that timed out
  struct SharedWait {
    int race;               // the step that made it wait: the race's first step
    ActorId actor;          // the waiter
    Footprint fp;           // its pending shared acquisition
    std::uint32_t state;    // where its wait began
    std::size_t vc;         // its pending operation's clock, at shared_wait_vcs_[vc..vc + n)
  };
  std::vector<SharedWait> shared_waits_;
  std::vector<Access> holding_;           // optimal mode, per (object, actor): what it holds of that lock
  std::vector<Access> held_by_releaser_;  // per event: for a release, what its actor held before it
  std::vector<int> held_since_;               // per (object, actor): the acquisition it holds by
  std::vector<int> acquisition_released_by_;  // per event: for a release, that acquisition (-1: none)
  std::vector<int> holder_races_;             // scratch: lock races in place of skipped releases
  std::vector<int> next_of_actor_;            // optimal mode, per event: its actor's next event (-1: none)
  std::vector<int> first_after_index_;        // optimal mode, [k * n + a]: actor a's first event after event k (-1: none)
  std::vector<int> first_after_;              // scratch of next_of_actor_'s pass
  std::vector<std::uint32_t> shared_wait_vcs_;  // the pending operations' clocks of shared_waits_
  std::vector<ObjectHistory> objects_;
  std::vector<ObjectHistory> domains_;
  int last_machine_crash_ = -1;                             // in the run being analysed
  ObjectHistory observations_;                              // the domain of all observations
  std::vector<std::pair<ScopeId, ObjectHistory>> scopes_;  // one per observation scope seen
};

}  // namespace

bool plain_lock_acquisition(const Footprint& f) {
  return f.access == Access::acquire && f.object != kNoObject && f.domain == kNoObject && f.extra_count == 0 &&
         f.effects == 0;
}

bool shared_lock_acquisition(const Footprint& f) {
  return f.access == Access::acquire_shared && f.object != kNoObject && f.domain == kNoObject && f.extra_count == 0 &&
         f.effects == 0;
}

Footprint optimal_dpor_footprint(const OpDesc& op, bool waits, bool timer, const Footprint& ran) {
  if (!op.narrows || op.compares || timer || (plain_lock_acquisition(op.footprint) && !waits)) return ran;
  Footprint declared = ran;  // refine_access changes the access only
  declared.access = op.footprint.access;
  return declared;
}

std::unique_ptr<Strategy> make_dpor_strategy(bool bounded, bool optimal) {
  return std::make_unique<DporStrategy>(optimal ? "dpor" : "source-dpor", bounded, optimal);
}

}  // namespace lockstep::sim
