// sim/dpor/reversal.cc: reversing one race: the sequence notdep(i).q, its initials, and
// where it goes: a source set (source-DPOR) or a wakeup tree, unless a sleeping transition
// covers it (optimal DPOR).
#include "lockstep/sim/dpor/dpor_strategy.h"

#include "lockstep/sim/invariant.h"

namespace lockstep::sim::dpor {

std::optional<Access> DporStrategy::try_access_reversed(int i, int j, std::size_t n) {
  const ObjectId lock = race_.events[j].fp.object;
  const ActorId p = race_.events[i].actor;
  const std::uint32_t p_seq = own_seq(i, n);
  for (int k = j - 1; k >= 0; --k) {
    if (k == i || (k > i && race_.vc[static_cast<std::size_t>(k) * n + p] >= p_seq)) continue;  // not before j in v
    std::optional<Access> wrote;  // k's access to the lock, when it changed it
    for_each_object(race_.events[k].fp, [&](ObjectId obj, Access access) {
      if (obj == lock && access != Access::none && access != Access::read) wrote = access;
    });
    if (!wrote) continue;
    if (*wrote == Access::acquire) return Access::read;     // held: the try fails
    if (*wrote == Access::release) return Access::acquire;  // free: the try takes it
    return std::nullopt;
  }
  return Access::acquire;  // never taken: free
}

const VarStep* DporStrategy::var_step_of(int event) const {
  const auto& all = race_.var_events;
  const auto it = std::lower_bound(all.begin(), all.end(), static_cast<std::uint32_t>(event),
                                   [](const RaceAnalysis::VarEvent& v, std::uint32_t e) { return v.event < e; });
  return it != all.end() && it->event == static_cast<std::uint32_t>(event) ? &it->values : nullptr;
}

std::optional<Access> DporStrategy::cas_access_reversed(int i, int j, std::size_t n) const {
  const VarStep* own = var_step_of(j);
  if (own == nullptr) return std::nullopt;
  const ObjectId var = race_.events[j].fp.object;
  const ActorId p = race_.events[i].actor;
  const std::uint32_t p_seq = own_seq(i, n);
  std::optional<std::int64_t> holds;
  for (int k = j - 1; k >= 0 && !holds; --k) {
    if (k == i || (k > i && race_.vc[static_cast<std::size_t>(k) * n + p] >= p_seq)) continue;  // not before j in v
    const Footprint& fp = race_.events[k].fp;
    if (fp.effects & kMachineCrash) return std::nullopt;
    bool wrote = false;
    for_each_object(fp, [&](ObjectId obj, Access access) { wrote = wrote || (obj == var && access != Access::none && !is_read(access)); });
    if (!wrote) continue;
    const VarStep* w = var_step_of(k);
    if (w == nullptr) return std::nullopt;
    holds = w->left;
  }
  if (!holds) {  // nothing before j in v wrote it: it holds what it held at the start
    for (const auto& v : race_.var_events) {
      if (race_.events[v.event].fp.object == var) {
        holds = v.values.found;
        break;
      }
    }
  }
  if (!holds) return std::nullopt;
  return *holds == own->expected ? race_.events[j].declared_access : Access::read;
}

void DporStrategy::insert_unless_asleep(Node& node, StepSequence v, Mask seen, Mask initials) {
  const ActorId q = v.back()->actor;
  for (const auto* list : {&node.sleep, &node.explored}) {
    for (const SleepEntry& s : *list) {
      const Footprint* own = s.effect.single();
      if (own != nullptr && !s.timer && s.actor != q && (seen & bit(s.actor))) {
        const WakeStep& first = *race_.first_step[s.actor];
        if (first.known && !first.timer && first.path == s.path && first.fp == *own) {
          if (initials & bit(s.actor)) return;
          continue;
        }
      }
      if (weak_initial(s.actor, s.timer, s.path, [&s](const Footprint& f) { return s.effect.dependent_with(f); }, v, own)) {
        return;
      }
    }
  }
  insert_into(node, v);
}

bool DporStrategy::asleep_before_v(const Node& node, int i, int end, int notdep_end, const WakeStep& q_step, std::size_t n) const {
  if (race_.last_machine_crash >= 0) return false;
  const ActorId p = race_.events[i].actor;
  const ActorId q = q_step.actor;
  const std::uint32_t p_seq = own_seq(i, n);
  auto in_v = [&](int k) {
    return k > i && k < notdep_end && k != end && race_.vc[static_cast<std::size_t>(k) * n + p] < p_seq;
  };
  auto simple = [](const Footprint& f) { return f.domain == kNoObject && f.effects == 0 && f.extra_count == 0; };
  // Whether a step of v touches simple footprint f's object in conflict with it.
  auto touched = [&](const Footprint& f) {
    if (f.object == kNoObject || f.access == Access::none || f.object >= race_.objects.size()) return false;
    const auto& accesses = race_.objects[f.object].accesses;
    for (auto it = accesses.rbegin(); it != accesses.rend() && it->first > i; ++it) {
      if (!(it->second && is_read(f.access)) && in_v(it->first)) return true;
    }
    return false;
  };
  // Whether actor a has a step in v (q's last one aside): its first event after i is one
  // (its later ones happen after that one, and so after i if it does).
  auto has_step_in_v = [&](ActorId a) {
    if (static_cast<std::size_t>(a) >= n) return false;  // no event at all
    const int first = race_.first_after_index[static_cast<std::size_t>(i) * n + static_cast<std::size_t>(a)];
    return first >= 0 && in_v(first);
  };
  // v's first step is one of its initials: when its actor cannot run at the node, the
  // full path may end optimal mode there (reverse_race's ready == 0), which a sleeper
  // covering v must not hide. Left to it.
  int first_of_v = -1;
  for (int k = i + 1; k < notdep_end && first_of_v < 0; ++k) {
    if (in_v(k)) first_of_v = k;
  }
  const ActorId opens = first_of_v >= 0 ? race_.events[static_cast<std::size_t>(first_of_v)].actor : q;
  if (!(node.enabled & bit(opens))) return false;
  for (const auto* list : {&node.sleep, &node.explored}) {
    for (const SleepEntry& s : *list) {
      const Footprint* own = s.effect.single();
      if (own == nullptr || s.timer || !simple(*own)) continue;
      if (s.actor == q) {
        if (q_step.timer || !q_step.known || q_step.path != s.path || !simple(q_step.fp) || has_step_in_v(q)) continue;
        if (touched(q_step.fp) || (!(q_step.fp == *own) && touched(*own))) continue;
        return true;
      }
      if (!q_step.known || has_step_in_v(s.actor) || dependent(*own, q_step.fp) || touched(*own)) continue;
      return true;
    }
  }
  return false;
}

void DporStrategy::add_backtrack(Node& node, Mask initials, ActorId q) {
  if (initials & node.backtrack) return;
  const Mask ready = initials & node.enabled;
  if (ready == 0) {
    node.backtrack |= node.enabled;
  } else if (ready & bit(q)) {
    node.backtrack |= bit(q);
  } else {
    node.backtrack |= bit(lowest(ready));
  }
  LOCKSTEP_INVARIANT((node.backtrack & ~node.enabled) == 0, "dpor: a backtrack set holds enabled actors only");
}

void DporStrategy::reverse_race(int i, int end, const WakeStep& q_step, const std::uint32_t* q_vc, std::size_t n, int notdep_end,
                  int q_later) {
  if (optimal_ && fallback_) return;  // optimal mode ended in this analysis: nothing inserted counts
  if (notdep_end < 0) notdep_end = end;
  LOCKSTEP_INVARIANT(race_.events[i].node < stack_.size() && !stack_[race_.events[i].node].is_choice,
                     "dpor: a race reverses at a scheduling node of the current path");
  const ActorId q = q_step.actor;
  Node& node = stack_[race_.events[i].node];
  const ActorId p = race_.events[i].actor;
  const std::uint32_t p_seq = own_seq(i, n);
  if (optimal_ && q_later == std::numeric_limits<int>::max() && asleep_before_v(node, i, end, notdep_end, q_step, n)) return;
  Mask initials = 0, seen = 0;
  race_.first_in_v.assign(n, 0);
  // Symmetry: whether v starts a class's member before the member before it (its trace is
  // then the image of another's, explored there: sim/explore/symmetry.h).
  Mask started = symmetric_ ? started_before(race_.events[i].node) : 0;
  bool out_of_order = false;
  auto consider = [&](ActorId actor, const std::uint32_t* vc, const WakeStep* step, bool starts) {
    if (symmetric_ && starts && !(started & bit(actor))) {
      const int previous = previous_[actor];
      out_of_order = out_of_order || (previous >= 0 && !(started & bit(previous)));
      started |= bit(actor);
    }
    if (seen & bit(actor)) return;
    if (optimal_) race_.first_step[actor] = step;
    bool after_earlier = false;
    for (Mask rest = seen; rest != 0 && !after_earlier; rest &= rest - 1) {
      const ActorId a = lowest(rest);
      after_earlier = vc[a] >= race_.first_in_v[a];
    }
    if (!after_earlier) initials |= bit(actor);
    seen |= bit(actor);
    race_.first_in_v[actor] = vc[actor];  // the phantom step of q comes last: never read back
  };
  race_.sequence.clear();
  if (optimal_) race_.first_step.resize(std::max(race_.first_step.size(), n + 1));
  for (int k = i + 1; k < notdep_end; ++k) {
    if (k != end && race_.vc[static_cast<std::size_t>(k) * n + p] < p_seq) {
      if (k >= q_later && race_.events[k].actor == q) {  // q's own later step would come before it
        unsupported("a reversal would put an actor's later step before its own earlier one");
        return;
      }
      const WakeStep* step = optimal_ ? &race_.steps[static_cast<std::size_t>(k)] : nullptr;
      consider(race_.events[k].actor, &race_.vc[static_cast<std::size_t>(k) * n], step, race_.events[k].fp.symmetry_extra);
      if (optimal_) race_.sequence.push_back(step);
    }
  }
  consider(q, q_vc, &q_step, q_step.fp.symmetry_extra);
  if (out_of_order) return;
  if (!optimal_ && (initials & node.backtrack)) return;
  const Mask ready = initials & node.enabled;
  if (ready == 0 && initials == bit(q) && enabled_by(i, q)) {
    // i is the release q was waiting for: the two were never co-enabled and cannot be
    // reordered. The race that matters is q's parked race with the step that took the
    // object, which check_parked finds.
    return;
  }
  // In fair mode's round-robin tail a node offers only the actor that waited longest: a
  // reversal starting there with another is an order the search does not explore by design
  // (source-DPOR adds that node's enabled set: the one actor, explored already).
  if (optimal_ && ready == 0 && race_.events[i].node >= round_robin_from_) return;
  if (optimal_) {
    if (ready == 0) {
      // The reversal cannot start here (a wait). Beyond optimal mode: the search begins
      // again as source-DPOR, so nothing is inserted here. (Steps whose footprint may be
      // another in the reversed order, a timer or a failed try, never reach here: they
      // end optimal mode as they run, and such an execution is not analysed.)
      unsupported("a race's reversal would start with a step that waits");
      return;
    }
    race_.sequence.push_back(&q_step);
    insert_unless_asleep(node, race_.sequence, seen, initials);
    return;
  }
  add_backtrack(node, initials, q);  // when no initial can run there: every enabled actor
  if (bounded_) {
    int start = i;
    while (start > 0 && race_.events[start - 1].actor == p) --start;
    if (start != i) add_backtrack(stack_[race_.events[start].node], initials, q);
  }
}

}  // namespace lockstep::sim::dpor
