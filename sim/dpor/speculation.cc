// sim/dpor/speculation.cc: optimal DPOR's side of speculation (sim/explore/speculation.h): pending
// branches offered as subtree explorers, the fingerprint of a branch's start, and a subtree
// explored elsewhere taken as if explored here.
//
// Why a branch's subtree is explored the same wherever it runs: below its node, a subtree
// reads the path above only through the nodes' sleep sets and explored lists (for sleep
// sets and for "unless asleep"), which do not change while the node is on the path, and the
// branches explored before it at its node, which the fingerprint holds with its wakeup
// subtree. Its races insert into the wakeup trees above it, which it never reads again (the
// branch's own subtree was taken out of its node's tree when it began). The insertions are
// recorded in order and applied in that order when the branch is skipped: the serial walk's
// trees are then exactly what exploring the subtree would have left.
#include <fmt/format.h>

#include "lockstep/sim/dpor/dpor_strategy.h"
#include "lockstep/sim/invariant.h"

namespace lockstep::sim::dpor {
namespace {

void append_entries(std::string& out, const std::vector<SleepEntry>& list) {
  const auto count = static_cast<std::uint32_t>(list.size());
  out.append(reinterpret_cast<const char*>(&count), sizeof count);
  for (const SleepEntry& e : list) {
    const Footprint* fp = e.effect.single();
    append_step_fingerprint(out, WakeStep{e.actor, e.timer, fp != nullptr ? *fp : Footprint{}, fp != nullptr, e.path});
  }
}

std::uint64_t step_hash(const WakeStep& s) {
  const Footprint& f = s.fp;
  std::uint64_t h = (static_cast<std::uint64_t>(s.actor) << 2) | (s.timer ? 2U : 0U) | (s.known ? 1U : 0U);
  h = h * 31 + f.object;
  h = h * 31 + static_cast<std::uint64_t>(f.access);
  h = h * 31 + f.domain;
  h = h * 31 + static_cast<std::uint64_t>(f.scope);
  return h * 31 + f.effects + (f.domain_write ? 7U : 0U) + (f.reads_every_object ? 11U : 0U) + f.extra_count;
}

bool same_step(const WakeStep& a, const WakeStep& b) {
  return same_transition(a, b) && a.known == b.known && a.fp == b.fp;
}

ObjectId translate(ObjectId id, const std::vector<ObjectId>& objects) {
  if (objects.empty() || id == kNoObject) return id;
  LOCKSTEP_INVARIANT(id < objects.size(), "speculation: every object of a subtree explorer has an id here");
  return objects[id];
}

Footprint translate(Footprint f, const std::vector<ObjectId>& objects) {
  f.object = translate(f.object, objects);
  f.domain = translate(f.domain, objects);
  for (std::size_t i = 0; i < f.extra_count; ++i) f.extra[i] = translate(f.extra[i], objects);
  return f;
}

}  // namespace

Mask DporStrategy::started_before(std::size_t at) const {
  // A member's start is the step that wrote its class's object: its first step that is not
  // private (sim/explore/symmetric_starts.h).
  Mask started = 0;
  for (std::size_t j = 0; j < at; ++j) {
    if (!stack_[j].is_choice && stack_[j].starts) started |= bit(stack_[j].current);
  }
  return started;
}

bool DporStrategy::starts_in_order(std::size_t at, StepSequence v) const {
  Mask started = started_before(at);
  for (const WakeStep* s : v) {
    if (!s->fp.symmetry_extra || (started & bit(s->actor))) continue;
    const int p = previous_[s->actor];
    if (p >= 0 && !(started & bit(p))) return false;
    started |= bit(s->actor);
  }
  return true;
}

void DporStrategy::insert_into(Node& node, StepSequence v) {
  const auto at = static_cast<std::size_t>(&node - &stack_[0]);
  if (symmetric_ && !starts_in_order(at, v)) return;
  if (sub_.floor != kNoFloor && at <= sub_.floor) {
    // The same sequence again at the same node changes nothing: its first insertion left it
    // covered, and a tree only grows (a leaf never gains children). Recorded once.
    std::uint64_t hash = at * 0x9e3779b97f4a7c15ULL;
    for (const WakeStep* s : v) hash = (hash ^ step_hash(*s)) * 0x100000001b3ULL;
    auto& same_hash = sub_.logged[hash];
    for (const std::uint32_t k : same_hash) {
      const LoggedInsert& e = sub_.log[k];
      if (e.node == at && std::equal(e.steps.begin(), e.steps.end(), v.begin(), v.end(),
                                     [](const WakeStep& a, const WakeStep* b) { return same_step(a, *b); })) {
        return;
      }
    }
    same_hash.push_back(static_cast<std::uint32_t>(sub_.log.size()));
    LoggedInsert entry{static_cast<std::uint32_t>(at), {}};
    entry.steps.reserve(v.size());
    for (const WakeStep* s : v) entry.steps.push_back(*s);
    sub_.log.push_back(std::move(entry));
    return;
  }
  const int under = node.wakeup.insert(v);
  if (under >= 0 && sub_.tracking) {
    const WakeStep& root = node.wakeup.root(static_cast<std::size_t>(under));
    sub_.changed.push_back({node.uid, root.actor, root.timer});
  }
}

bool DporStrategy::explored_before(const Node& n, ActorId actor, bool timer, std::vector<SleepEntry>& out) const {
  out = n.explored;
  const Footprint* current = n.current_effect.single();
  if (current == nullptr) return false;  // the current step has not run yet
  out.push_back({n.current, n.current_is_timer(), n.current_effect, n.current_path});
  for (std::size_t i = 0; i < n.wakeup.root_count(); ++i) {
    const WakeStep& r = n.wakeup.root(i);
    if (r.actor == actor && r.timer == timer && r.path.empty()) return true;
    if (n.mode_done(r.actor, r.timer, r.path) || n.sleeps(r.actor, r.timer, r.path)) continue;  // next_from_wakeup drops it
    if (!n.mode_enabled(r.actor, r.timer) || !r.known) return false;
    Effect effect;
    effect.add(r.fp);
    out.push_back({r.actor, r.timer, std::move(effect), r.path});
  }
  return false;
}

std::optional<SubtreeOffer> DporStrategy::offer(const std::vector<BranchKey>& taken) {
  if (!can_speculate()) return std::nullopt;
  std::vector<SleepEntry> before;
  // A subtree explorer gives out branches of its own subtree only: below its floor.
  for (std::size_t i = sub_.floor == kNoFloor ? 0 : sub_.floor + 1; i < stack_.size(); ++i) {
    const Node& n = stack_[i];  // REQUIRES: no push onto stack_ below (x's stack is another)
    if (n.is_choice || n.wakeup.empty()) continue;
    for (std::size_t r = 0; r < n.wakeup.root_count(); ++r) {
      const WakeStep& root = n.wakeup.root(r);
      const BranchKey key{n.uid, root.actor, root.timer};
      if (std::find(taken.begin(), taken.end(), key) != taken.end()) continue;
      // (A branch whose step takes other values of its choices is not offered: a key names
      // an actor and a mode only.)
      if (!root.known || !root.path.empty() || n.mode_done(root.actor, root.timer) || n.sleeps(root.actor, root.timer) ||
          !n.mode_enabled(root.actor, root.timer)) {
        continue;
      }
      if (!explored_before(n, root.actor, root.timer, before)) break;  // nor any later branch of n
      auto explorer = std::make_unique<DporStrategy>(settings_);
      DporStrategy& x = *explorer;
      for (std::size_t j = 0; j <= i; ++j) {
        Node& node = x.stack_.push();
        Node& source = stack_[j];
        WakeupTree kept = std::move(source.wakeup);  // not copied: the explorer never reads it
        node = source;
        source.wakeup = std::move(kept);
      }
      Node& at = x.stack_.back();
      at.explored = before;
      at.make_current(root.actor, root.timer);
      at.expects = true;
      at.expected = root.fp;
      x.inherited_ = n.wakeup.copy_subtree(root.actor, root.timer, root.path);
      x.diverge_ = i;
      x.sub_.floor = i;
      SubtreeOffer out{key, {}, std::move(explorer)};
      append_entries(out.fingerprint, before);  // the subtree: unchanged unless take_changed says so
      return out;
    }
  }
  return std::nullopt;
}

std::optional<BranchKey> DporStrategy::starting() const {
  if (!can_speculate() || !started_ || stack_.empty() || diverge_ + 1 != stack_.size()) return std::nullopt;
  const Node& n = stack_.back();
  if (n.is_choice || !n.current_path.empty()) return std::nullopt;
  return BranchKey{n.uid, n.current, n.current_is_timer()};
}

std::string DporStrategy::start_fingerprint() const {
  std::string out;
  append_entries(out, stack_.back().explored);
  return out;
}

void DporStrategy::take_changed(std::vector<BranchKey>& out) {
  sub_.tracking = true;
  out.insert(out.end(), sub_.changed.begin(), sub_.changed.end());
  sub_.changed.clear();
}

void DporStrategy::skip_branch(Strategy& explorer, const std::vector<ObjectId>& objects) {
  auto* x = dynamic_cast<DporStrategy*>(&explorer);
  LOCKSTEP_INVARIANT(x != nullptr && x->subtree_done() && x->sub_.floor == diverge_ && diverge_ + 1 == stack_.size(),
                     "speculation: a skipped branch is the one that begins, explored to its end");
  Node& n = stack_.back();
  const Footprint* ran = x->stack_[diverge_].current_effect.single();
  LOCKSTEP_INVARIANT(ran != nullptr, "speculation: a skipped branch's step ran with one footprint");
  n.current_effect = Effect();
  n.current_effect.add(translate(*ran, objects));
  std::vector<WakeStep> steps;
  std::vector<const WakeStep*> pointers;
  for (const LoggedInsert& entry : x->sub_.log) {
    LOCKSTEP_INVARIANT(entry.node <= diverge_, "speculation: a subtree records insertions above it only");
    steps.clear();
    for (WakeStep s : entry.steps) {
      s.fp = translate(s.fp, objects);
      steps.push_back(s);
    }
    pointers.clear();
    for (const WakeStep& s : steps) pointers.push_back(&s);
    insert_into(stack_[entry.node], pointers);
  }
  inherited_ = WakeupTree();
  sub_.skipped = true;
}

}  // namespace lockstep::sim::dpor
