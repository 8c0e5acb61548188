// sim/dpor/dpor_strategy.cc: the search itself: following the path, new nodes, backtracking
// to the next branch, and the record of each step for the race analysis.
#include "lockstep/sim/dpor/dpor_strategy.h"
#include "lockstep/sim/strategies/strategy_makers.h"

#include <fmt/format.h>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim::dpor {

bool DporStrategy::next_execution() {
  // An execution that ended optimal mode is not analysed: the search begins again.
  if (started_ && !sub_.skipped && !(optimal_ && fallback_)) analyze_races();
  sub_.skipped = false;
  if (optimal_ && fallback_ && sub_.floor != kNoFloor) {  // a subtree explorer: its result is not used
    sub_.aborted = true;
    return false;
  }
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
  round_robin_from_ = SIZE_MAX;
  last_sched_ = -1;
  race_.events.clear();
  race_.parked.clear();
  race_.barriers.clear();
  race_.choice_steps.clear();
  race_.choices_made.clear();
  race_.var_events.clear();
  step_var_.reset();
  in_step_ = false;
  if (resume_.kept) note_resume_point();
  return true;
}

void DporStrategy::parked(std::span<const Transition> waiting) {
  for (const auto& t : waiting) {
    // Optimal mode covers waits for plain locks (exclusive or shared), waits for a grant (a
    // queued request), and sleeps (never ready: only the timer ends one).
    if (!plain_lock_acquisition(t.op->footprint) && !shared_lock_acquisition(t.op->footprint) && !t.op->handed_over &&
        !(without_symmetry(t.op->footprint) == Footprint{})) {
      unsupported("an actor waits for something other than a plain lock, a grant or a sleep");
    }
  }
  const auto state = static_cast<std::uint32_t>(race_.events.size());
  while (!race_.parked.empty() && race_.parked.back().state == state) race_.parked.pop_back();  // same state again
  for (const auto& t : waiting) {
    race_.parked.push_back({state, t.actor, t.op->footprint, static_cast<std::uint32_t>(depth_), t.op->handed_over});
  }
}

std::size_t DporStrategy::pick(std::span<const Transition> enabled, std::uint64_t step) {
  Mask on = 0, run = 0, timer = 0;
  for (const auto& t : enabled) {
    on |= bit(t.actor);
    (t.timer ? timer : run) |= bit(t.actor);
    // Untimed mode: a timer is a transition of its own, at any moment of its wait. In timed
    // mode a timer fires only once the clock moved on (race_.barriers), and a plain lock's waiter
    // that times out races through the acquisition it never made (analyze_races). A wait
    // for a grant times out by canceling its request, a step on the lock as its footprint
    // says (its request raced already); a timed deadlock check reads every object of the
    // server wherever it fires (timer_footprint); untimed, what it touched is checked as it
    // runs (executed).
    if (t.timer && !(plain_lock_acquisition(t.op->footprint) || without_symmetry(t.op->footprint) == Footprint{} ||
                     t.op->handed_over)) {
      unsupported("a timer other than a timeout of a plain lock, a grant wait or a sleep");
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
  n.uid = ++sub_.next_uid;
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
      LOCKSTEP_INVARIANT(!optimal_ || fallback_, "dpor: optimal mode never prunes (no sleep-set blocked execution)");
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
  LOCKSTEP_INVARIANT(n.mode_enabled(n.current, n.current_is_timer()), "dpor: a new node's current transition is enabled");
  n.backtrack = bit(n.current);
  if (optimal_) inherited_ = n.wakeup.take_subtree(n.current, n.current_is_timer(), n.current_path);
  last_sched_ = static_cast<int>(depth_++);
  return remember_declared(enabled, index_of(enabled, stack_.back().current, stack_.back().current_is_timer()));
}

std::uint32_t DporStrategy::choose(std::uint32_t n, std::string_view label, std::uint64_t step, bool keeps_footprint) {
  if (optimal_ && in_step_) {
    // Optimal mode: a choice inside a step takes the value its transition's path gives
    // (Node::current_path; 0 beyond it). Its other values are transitions of their own,
    // branches at the step's node (reverse_choices).
    const ChoicePath& path = stack_[static_cast<std::size_t>(last_sched_)].current_path;
    const std::size_t k = step_choices_.size();
    std::uint32_t v = k < path.size() ? path[k] : 0;
    if (v >= n) {
      unsupported("a choice has fewer values where a wakeup-tree branch puts its step");
      v = 0;
    }
    step_choices_.push_back({v, n, keeps_footprint});
    return v;
  }
  // Before the first step, a choice node above the whole search: each value's subtree is a
  // search of its own, which no race crosses. Elsewhere (outside any step, after one) a
  // choice is beyond optimal mode.
  if (last_sched_ >= 0) unsupported("the model makes an explored choice outside a step");
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

void DporStrategy::executed(const Transition& t, const Footprint& ran) {
  in_step_ = false;
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
  // (A step that declared no object writes the first one it touches: add_object.)
  const bool gained_object = declared_.object == kNoObject && effective.object != kNoObject;
  LOCKSTEP_INVARIANT(effective.access == declared_.access || effective.access == Access::read || gained_object,
                     "dpor: a step narrows its declared access only to a read");
  LOCKSTEP_INVARIANT(!optimal_ || effective.access == declared_.access || plain_try || t.timer || declared_op_.compares ||
                         gained_object,
                     "dpor: in optimal mode only a plain lock's try, a timeout and a CAS are narrowed");
  // A CAS, failed or not, is worked out where a race moves it from the values of the
  // steps on its variable (cas_access_reversed): each such step's are kept.
  if (step_var_) race_.var_events.push_back({static_cast<std::uint32_t>(race_.events.size()), *step_var_});
  if (declared_op_.compares && !step_var_) unsupported("a compare-and-swap whose values are not told (Strategy::var_step)");
  step_var_.reset();
  // A try whose step went on to touch more (a WITH RECURSIVE claim reads the next job when
  // its lock try fails): what it touches depends on its outcome, which a reversed race works
  // out for the lock only. A worked-out footprint must be exact.
  if (optimal_ && declared_op_.tries && !t.timer &&
      (own_extra_count(effective) != own_extra_count(declared_) || effective.domain_write != declared_.domain_write)) {
    unsupported("a lock's try whose step also touched other objects, as its outcome decides");
  }
  // A lock's step (its acquisition, try, wait or timeout) that also touched other objects
  // (under jitter, the pending timers a timeout arms or leaves; a stall's choice after it):
  // the lock races (Nidhugg's) are worked out on the lock alone.
  if (optimal_ && (plain_lock_acquisition(declared_) || shared_lock_acquisition(declared_)) &&
      own_extra_count(effective) != own_extra_count(declared_)) {
    unsupported("a lock's step that also touched other objects (the pending timers, under jitter)");
  }
  Node& node = stack_[last_sched_];
  if (optimal_) note_choices(node);
  if (node.expects && !(node.expected == effective)) {
    unsupported("a step ran with another footprint than its wakeup-tree branch said");
  }
  if (t.timer && declared_op_.handed_over && !(effective == (optimal_ ? optimal_dpor_footprint(declared_op_, false, true, declared_) : declared_))) {
    unsupported("a grant wait's timer touched more than its footprint (untimed, a deadlock check reads the locks held where it fires; under jitter, the pending timers)");
  }
  node.current_effect.add(effective);
  node.starts = ran.symmetry_extra;
  race_.events.push_back({t.actor, t.timer, declared_waits_, declared_op_.compares, declared_op_.handed_over,
                     declared_op_.timer_reads_every_object, declared_op_.timer_writes_domain, plain_try, declared_.access, effective,
                     static_cast<std::uint32_t>(last_sched_), static_cast<std::uint32_t>(depth_)});
  last_effect_ = effective;
}

void DporStrategy::note_choices(const Node& node) {
  std::size_t length = step_choices_.size();  // the path as made: trailing zeros are implied
  while (length > 0 && step_choices_[length - 1].value == 0) --length;
  bool same = node.current_path.size() == length;
  for (std::size_t k = 0; same && k < length; ++k) same = node.current_path[k] == step_choices_[k].value;
  // Where a branch puts a step in another state than the one it came from, its choices may
  // be others (a stall no longer offered once another actor took the last one).
  if (!same) unsupported("a step made other choices than its wakeup-tree branch said");
  if (step_choices_.empty()) return;
  race_.choice_steps.push_back({static_cast<std::uint32_t>(race_.events.size()), static_cast<std::uint32_t>(race_.choices_made.size()),
                                static_cast<std::uint32_t>(step_choices_.size())});
  race_.choices_made.insert(race_.choices_made.end(), step_choices_.begin(), step_choices_.end());
}

double DporStrategy::explored_fraction() const {
  double done = 0, weight = 1;
  for (std::size_t i = 0; i < stack_.size(); ++i) {
    const Node& n = stack_[i];
    double before = 0, known = 1;  // branches explored before the current one, and all known
    if (n.is_choice) {
      before = n.chosen;
      known = n.options;
    } else {
      if (optimal_) {
        before = static_cast<double>(n.explored.size());
        known = before + 1 + static_cast<double>(n.wakeup.root_count());
      } else {
        before = std::popcount(n.done & ~bit(n.current));
        known = std::popcount(n.backtrack | n.done | bit(n.current));
      }
      // Races add branches to a node while its first ones are explored: until then, the
      // branches that finished nodes at its depth ended with are the better guess.
      if (i < finished_.size() && finished_[i].nodes > 0) {
        known = std::max(known, finished_[i].branches / static_cast<double>(finished_[i].nodes));
      }
      known = std::max(known, before + 1);
    }
    done += weight * before / known;
    weight /= known;
  }
  return std::min(1.0, done + weight);  // the execution at the end of the path is done too
}

std::size_t DporStrategy::index_of(std::span<const Transition> enabled, ActorId actor, bool timer) {
  for (std::size_t i = 0; i < enabled.size(); ++i) {
    if (enabled[i].actor == actor && enabled[i].timer == timer) return i;
  }
  throw std::logic_error("dpor: chosen transition is not enabled");
}

void DporStrategy::child_sleep_set(std::vector<SleepEntry>& out) const {
  if (last_sched_ < 0) return;
  const Node& parent = stack_[last_sched_];
  out.reserve(parent.sleep.size() + parent.explored.size());  // one allocation, not one per doubling
  for (const auto* list : {&parent.sleep, &parent.explored}) {
    for (const auto& s : *list) {
      if (s.actor != parent.current && !s.effect.dependent_with(last_effect_)) out.push_back(s);
    }
  }
}

bool DporStrategy::next_from_wakeup(Node& n) {
  while (!n.wakeup.empty()) {
    const WakeStep& first = n.wakeup.first();
    const ActorId a = first.actor;
    const bool timer = first.timer;
    if (!n.mode_done(a, timer, first.path) && n.mode_enabled(a, timer) && !n.sleeps(a, timer, first.path)) return true;
    const ChoicePath path = first.path;  // erase_transition ends `first`
    n.wakeup.erase_transition(a, timer, path);
    if (!n.mode_enabled(a, timer)) {  // the branch's transition waits here: beyond optimal mode
      unsupported("a wakeup-tree branch's transition waits where the tree puts it");
      add_every_awake(n);
    }
  }
  return false;
}

void DporStrategy::add_every_awake(Node& n) {
  for (Mask rest = n.awake(); rest != 0; rest &= rest - 1) {
    const ActorId a = lowest(rest);
    std::array<bool, 2> modes{};
    const int count = n.awake_modes(a, modes);
    for (int k = 0; k < count; ++k) {
      const bool current = a == n.current && modes[k] == n.current_is_timer() && n.current_path.empty();  // a new node has none yet
      if (current || n.mode_done(a, modes[k])) continue;
      const WakeStep unknown{a, modes[k], {}, false};
      const WakeStep* one[] = {&unknown};
      n.wakeup.insert(one);
    }
  }
}

bool DporStrategy::backtrack() {
  while (!stack_.empty()) {
    if (stack_.size() - 1 == sub_.floor) return false;  // a subtree explorer goes no higher
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
    n.explored.push_back({n.current, n.current_is_timer(), n.current_effect, n.current_path});
    if (n.mode + 1 < n.mode_count) {
      ++n.mode;
      n.current_effect = Effect();
      diverge_ = stack_.size() - 1;
      if (optimal_) inherited_ = n.wakeup.take_subtree(n.current, n.current_is_timer(), n.current_path);
      return true;
    }
    if (optimal_) {
      if (n.current_path.empty()) (n.current_is_timer() ? n.done_timer : n.done) |= bit(n.current);
      if (!next_from_wakeup(n)) {
        note_finished(n.explored.size());
        stack_.pop_back();
        continue;
      }
      n.follow_wakeup();
      inherited_ = n.wakeup.take_subtree(n.current, n.current_is_timer(), n.current_path);
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
    note_finished(n.explored.size());
    stack_.pop_back();
  }
  return false;
}

}  // namespace lockstep::sim::dpor

namespace lockstep::sim {

bool plain_lock_acquisition(const Footprint& f) {
  return f.access == Access::acquire && f.object != kNoObject && f.domain == kNoObject && own_extra_count(f) == 0 &&
         f.effects == 0;
}

bool shared_lock_acquisition(const Footprint& f) {
  return f.access == Access::acquire_shared && f.object != kNoObject && f.domain == kNoObject && own_extra_count(f) == 0 &&
         f.effects == 0;
}

Footprint optimal_dpor_footprint(const OpDesc& op, bool waits, bool timer, const Footprint& ran) {
  Footprint f = ran;
  if (op.may_write != kNoObject) add_object(f, op.may_write);  // in every outcome
  if (!op.narrows || op.compares || timer || (plain_lock_acquisition(op.footprint) && !waits)) return f;
  f.access = op.footprint.access;  // refine_access changes the access only
  return f;
}

std::unique_ptr<Strategy> make_dpor_strategy(DporSettings settings) {
  return std::make_unique<dpor::DporStrategy>(settings);
}

}  // namespace lockstep::sim
