// sim/dpor/races.cc: the race analysis after each execution: vector clocks over the
// recorded steps, the races they reveal (object, domain, lock and parked-waiter races), and
// the reversals they ask for.
#include "lockstep/sim/dpor/dpor_strategy.h"

#include "lockstep/sim/invariant.h"

namespace lockstep::sim::dpor {

void DporStrategy::analyze_races() {
  const std::size_t n = begin_analysis();
  for (std::size_t j = 0; j < race_.events.size(); ++j) analyze_event(j, n);
  check_parked_at(race_.events.size(), n);
  reverse_deferred(n);
  reverse_shared_waits(n);
  reverse_alternatives(n);
  reverse_choices(n);
  reverse_timed_out(n);
}

// Resets the analysis's scratch for the execution just finished; returns its actor count.
std::size_t DporStrategy::begin_analysis() {
  int actors = 0;
  for (const auto& e : race_.events) actors = std::max(actors, e.actor + 1);
  for (const auto& pk : race_.parked) actors = std::max(actors, pk.actor + 1);  // some never ran a step
  const auto n = static_cast<std::size_t>(actors);
  race_.vc.assign(race_.events.size() * n, 0);
  race_.seq.assign(n, 0);
  race_.last_of_actor.assign(n, -1);
  race_.last_parked.assign(n, -1);
  // Emptied in place: their read lists keep their memory from one analysis to the next.
  for (auto& h : race_.objects) h.reset();
  for (auto& h : race_.domains) h.reset();
  for (auto& h : race_.domain_objects) h.reset();
  race_.every_object_read = std::any_of(race_.events.begin(), race_.events.end(), [](const Event& e) { return e.fp.reads_every_object; });
  race_.observations.reset();
  for (auto& scope : race_.scopes) scope.second.reset();
  race_.last_machine_crash = -1;
  race_.last_acquire.clear();
  race_.first_release.clear();
  if (optimal_) {  // each event's actor's next event (announces), and who holds which lock
    race_.next_of_actor.assign(race_.events.size(), -1);
    race_.first_after.assign(n, -1);
    race_.first_after_index.resize(race_.events.size() * n);
    for (std::size_t k = race_.events.size(); k-- > 0;) {
      std::copy(race_.first_after.begin(), race_.first_after.end(), race_.first_after_index.begin() + static_cast<std::ptrdiff_t>(k * n));
      int& first = race_.first_after[static_cast<std::size_t>(race_.events[k].actor)];
      race_.next_of_actor[k] = first;
      first = static_cast<int>(k);
    }
    race_.holding.assign(race_.holding.size(), Access::none);
    race_.held_since.assign(race_.held_since.size(), -1);
    race_.held_by_releaser.assign(race_.events.size(), Access::none);
    race_.acquisition_released_by.assign(race_.events.size(), -1);
  }
  if (optimal_) {
    race_.steps.clear();
    for (const Event& e : race_.events) {
      race_.steps.push_back(wake_step(e));
    }
    for (const auto& c : race_.choice_steps) {  // a step's choices: its transition's path
      ChoicePath& path = race_.steps[c.event].path;
      for (std::uint32_t k = 0; k < c.count; ++k) path.push_back(race_.choices_made[c.first + k].value);
      while (!path.empty() && path.back() == 0) path.pop_back();
    }
  }
  race_.next_choice_step = 0;
  race_.next_parked = 0;
  race_.next_barrier = 0;
  if (!race_.barriers.empty()) {
    race_.all_vc.assign(n, 0);
    race_.barrier_vc.assign(n, 0);
  }
  return n;
}

// The actors parked in the state before event `state`: each races as a pending operation
// with what it waited for (check_parked), as its mode asks.
void DporStrategy::check_parked_at(std::size_t state, std::size_t n) {
  for (; race_.next_parked < race_.parked.size() && race_.parked[race_.next_parked].state == state; ++race_.next_parked) {
    const Parked& pk = race_.parked[race_.next_parked];
    race_.last_parked[pk.actor] = static_cast<int>(state);
    // Optimal mode: a shared lock's waiter races as a pending operation where its wait
    // begins (the step that made it wait is what it could have run before), with v
    // taken over the whole execution (race_.shared_waits, after the pass).
    if (optimal_ && state != race_.events.size() && shared_lock_acquisition(pk.fp) && !pk.handed_over &&
        (state == 0 || !parked_at(static_cast<std::uint32_t>(state - 1), pk.actor, pk.fp.object))) {
      check_parked(pk, n, /*defer=*/true);
      continue;
    }
    // Optimal mode: an exclusive lock's waiter races through its acquisition (lock races
    // below); only a waiter left at the end, which has none, races as a pending
    // operation. A waiter for a grant races through its request, a step of its own.
    if (optimal_ && (state != race_.events.size() || pk.handed_over)) continue;
    if (optimal_ || pk.decisions > diverge_) check_parked(pk, n, /*defer=*/false);
  }
}

// Event j of the pass: its clock, and the races it closes with earlier events.
void DporStrategy::analyze_event(std::size_t j, std::size_t n) {
  check_parked_at(j, n);
  const Event& e = race_.events[j];
  std::uint32_t* vc = begin_clock(j, n);
  // vc now holds what e's actor already knew: events in it are not races with e.
  // Optimal mode, a plain lock's acquisition: it races with the lock's previous
  // acquisition by another actor unless its actor knew of that one already; not with
  // the release in between, which it could never precede (Nidhugg's lock races).
  LockStep lock;
  lock.acquisition = optimal_ && e.waits && plain_lock_acquisition(e.fp) && !e.refined();
  lock.shared_wait = optimal_ && e.waits && shared_lock_acquisition(e.fp);
  // Optimal mode: what the step's actor held of its lock before it (its last step on the
  // lock an acquisition, not narrowed: it holds it), for a release (race_.held_by_releaser).
  if (optimal_) {
    note_holding(e, j, n);
    note_lock_order(e, j, vc, n, lock);
    note_timeout(e, j, n);
  }
  race_.candidates.clear();
  record_access(e.fp, static_cast<int>(j));
  const bool is_new = e.decisions > diverge_;
  // Optimal mode, a wait for a grant: it never races with the step that granted it (the
  // step after which it no longer waited), which it could never precede; its request
  // races as any step does.
  lock.granted_by = optimal_ && e.grant_wait && !e.timer ? race_.last_parked[e.actor] : -1;
  collect_direct_races(e, vc, n, lock);
  for (int i : race_.candidates) join(vc, &race_.vc[static_cast<std::size_t>(i) * n], n);
  vc[e.actor] = ++race_.seq[e.actor];
  if (!race_.barriers.empty()) join(race_.all_vc.data(), vc, n);
  // Optimal mode: the actor's other transition at e's node (its timer, or its run once the
  // lock is free) is a branch of its own there, after notdep(e) as a race's is.
  if (optimal_ && stack_[e.node].mode_enabled(e.actor, !e.timer)) {
    // Its footprint is worked out: a plain lock's timeout reads the lock, its run takes
    // it; a grant wait's run and timeout (a phantom grant, or the grant winning) both have
    // the wait's footprint, a deadlock check's timer also every object of its domain read.
    race_.alternatives.push_back({static_cast<int>(j), race_.last_of_actor[e.actor]});
  }
  if (optimal_ && race_.next_choice_step < race_.choice_steps.size() && race_.choice_steps[race_.next_choice_step].event == j) {
    race_.choice_alternatives.push_back({static_cast<int>(j), race_.last_of_actor[e.actor]});
    ++race_.next_choice_step;
  }
  race_.last_of_actor[e.actor] = static_cast<int>(j);
  // Source-DPOR reverses each race once, when its later event is new. In optimal mode a
  // race's sequence runs to the end of the execution, so the same race of a replayed
  // prefix has another sequence in each new continuation: every race of every execution
  // is inserted (JACM 2017, Algorithm 2), those already covered change nothing.
  if (is_new || optimal_) queue_reversals(e, j, vc, n, lock.race);
}

// e's clock: what its actor knew before it, and (timed mode) every step before the
// clock's last advance.
std::uint32_t* DporStrategy::begin_clock(std::size_t j, std::size_t n) {
  const Event& e = race_.events[j];
  std::uint32_t* vc = &race_.vc[j * n];
  if (race_.last_of_actor[e.actor] >= 0) {
    const std::uint32_t* prev = &race_.vc[static_cast<std::size_t>(race_.last_of_actor[e.actor]) * n];
    std::copy(prev, prev + n, vc);
  }
  // Timed mode: where virtual time moved on, nothing could run; a step after that happens
  // after every step before it (the clock knows them all), so no race crosses it.
  for (; race_.next_barrier < race_.barriers.size() && race_.barriers[race_.next_barrier] <= j; ++race_.next_barrier) race_.barrier_vc = race_.all_vc;
  if (race_.next_barrier > 0) join(vc, race_.barrier_vc.data(), n);
  return vc;
}

// Optimal mode: the lock's acquisitions in order; a waiting acquisition's race with the
// previous one (lock.race) and the release it waited for (lock.enabling_release).
void DporStrategy::note_lock_order(const Event& e, std::size_t j, const std::uint32_t* vc, std::size_t n, LockStep& lock) {
  if (plain_lock_acquisition(e.fp) && !announces(j)) {  // every acquisition, also a try's: the next waiter's partner
    if (race_.last_acquire.size() <= e.fp.object) {
      race_.last_acquire.resize(e.fp.object + 1, -1);
      race_.first_release.resize(e.fp.object + 1, -1);
    }
    const int i = race_.last_acquire[e.fp.object];
    if (lock.acquisition && i >= 0 && race_.events[i].actor != e.actor && vc[race_.events[i].actor] < own_seq(i, n)) lock.race = i;
    lock.enabling_release = race_.first_release[e.fp.object];
    race_.last_acquire[e.fp.object] = static_cast<int>(j);
    race_.first_release[e.fp.object] = -1;
  } else if (e.fp.access == Access::release && e.fp.object < race_.first_release.size() &&
             race_.first_release[e.fp.object] < 0 && race_.last_acquire[e.fp.object] >= 0) {
    race_.first_release[e.fp.object] = static_cast<int>(j);  // a later one finds the lock free: a race as any
  }
}

// Optimal mode, a plain lock's waiter that leaves by its timeout: the acquisition it
// never made races with the lock's last acquisition by another actor that it did not
// know of before its timeout, as a waiting acquisition would. Without it, in timed
// mode, the clock's advance before the timeout hides every race that would give it
// the lock (found by the main property: dpor 6 of dfs's 9 traces).
void DporStrategy::note_timeout(const Event& e, std::size_t j, std::size_t n) {
  if (e.timer && e.refined() && waited_for_plain_lock(e) && e.fp.object < race_.last_acquire.size()) {
    const int i = race_.last_acquire[e.fp.object];
    const int before = race_.last_of_actor[e.actor];
    const bool known = before >= 0 && i >= 0 && race_.vc[static_cast<std::size_t>(before) * n + race_.events[i].actor] >= own_seq(i, n);
    if (i >= 0 && race_.events[i].actor != e.actor && !known) race_.timed_out.push_back({i, static_cast<int>(j), before});
  }
}

// Keeps in race_.races the candidates that race with e directly: not known to e's actor, not
// an ordering a lock imposes (lock races: race_.holder_races instead).
void DporStrategy::collect_direct_races(const Event& e, const std::uint32_t* vc, std::size_t n, const LockStep& lock) {
  race_.races.clear();
  race_.holder_races.clear();
  for (int i : race_.candidates) {
    const Event& c = race_.events[i];
    if (c.actor == e.actor || vc[c.actor] >= own_seq(i, n)) continue;
    // Not the release that let it go after the previous acquisition, which it could never
    // precede (a release of a lock already free, a flock's close after its unlock, races).
    if (lock.acquisition && i == lock.enabling_release) continue;
    // Nor the grant that ended its wait, or a step before that grant: e runs only after it.
    if (lock.granted_by >= 0 && race_.vc[static_cast<std::size_t>(lock.granted_by) * n + c.actor] >= own_seq(i, n)) continue;
    // Nor the release that ended the wait (after which its actor was no longer parked): a
    // reader/writer lock's writer waits for the last reader, whose release need not be the
    // first since the lock's last exclusive acquisition. A shared lock's waiter races where
    // its wait began (check_parked_at).
    if ((lock.acquisition || lock.shared_wait) && enabling_release_of_wait(i, e.actor)) continue;
    // Nor a release by a holder that excluded it: right before that release the lock was
    // held (exclusively, for a shared waiter), and the steps of notdep(i) do not touch
    // the lock (they would happen after i), so the waiting acquisition could not run
    // there. Nidhugg's lock races: an unlock and the next lock are not a race.
    // Its race is with the holder's acquisition instead, as a lock race (unless e's actor
    // knew of it already).
    if ((lock.acquisition || lock.shared_wait) && excluded_by_holder(i, e)) {
      const int taken = race_.acquisition_released_by[static_cast<std::size_t>(i)];
      // (Not a writer's waiting acquisition for a shared one: readers wait while a writer does.)
      const bool behind_writer = lock.shared_wait && taken >= 0 && writer_waited_before(taken, e.fp.object);
      if (taken >= 0 && !behind_writer && vc[race_.events[taken].actor] < own_seq(taken, n)) race_.holder_races.push_back(taken);
      continue;
    }
    race_.races.push_back(i);
  }
}

// The races of event j to reverse: now (source-DPOR), or after the pass (optimal mode:
// v needs the whole execution's clocks); a race behind another of them is covered by it.
void DporStrategy::queue_reversals(const Event& e, std::size_t j, const std::uint32_t* vc, std::size_t n, int lock_race) {
  if (lock_race >= 0) race_.deferred.push_back({lock_race, static_cast<int>(j)});
  for (int taken : race_.holder_races) {
    if (taken != lock_race) race_.deferred.push_back({taken, static_cast<int>(j)});
  }
  for (int i : race_.races) {
    bool behind_another = false;
    for (int k : race_.races) {
      if (k > i && race_.vc[static_cast<std::size_t>(k) * n + race_.events[i].actor] >= own_seq(i, n)) behind_another = true;
    }
    if (behind_another) continue;
    if (optimal_) {
      race_.deferred.push_back({i, static_cast<int>(j)});  // v needs the whole execution's clocks
    } else {
      reverse_race(i, static_cast<int>(j), wake_step(e), vc, n);
    }
  }
}

void DporStrategy::reverse_deferred(std::size_t n) {
  // Optimal mode: v = notdep(e, E).e' takes every later event of the execution that does
  // not happen after e, also those after e' (JACM 2017, Algorithm 2). Cut at e', v is a
  // weak prefix of branches that then cover it without reaching its trace (found by the
  // optimal-mode property: a leaf ordering two writes the other way "covered" v).
  for (const auto& [i, j] : race_.deferred) {
    WakeStep q_step = race_.steps[static_cast<std::size_t>(j)];
    // Moved before i, a plain lock's try or a CAS may do otherwise there: it is worked
    // out. Every other step that may narrow its access kept its
    // declared one (optimal_dpor_footprint):
    // the wakeup tree needs the footprint a step will have, and a superset is not enough (a
    // leaf ending in it would cover sequences its branch never reaches: found by the sim-pg
    // property with a conditional update).
    if (race_.events[j].compares) {  // it may fail there, or succeed: worked out from the values
      const std::optional<Access> known = cas_access_reversed(i, j, n);
      if (!known) {
        unsupported("a race moves a compare-and-swap where the value it finds is not known");
        break;
      }
      q_step.fp.access = *known;
    }
    if (race_.events[j].plain_try) {
      const std::optional<Access> known = try_access_reversed(i, j, n);
      if (!known) {
        unsupported("a race moves a lock's try where what it does is not known");
        break;
      }
      q_step.fp.access = *known;
    }
    reverse_race(i, j, q_step, &race_.vc[static_cast<std::size_t>(j) * n], n, static_cast<int>(race_.events.size()));
  }
  race_.deferred.clear();
}

void DporStrategy::reverse_shared_waits(std::size_t n) {
  // A shared lock's waiter where its wait began: its pending acquisition, after every step
  // of the execution that does not happen after the race's first step. None of those may
  // be its own (its steps after the wait come after that step: the release that ended the
  // wait follows it on the lock).
  for (const SharedWait& w : race_.shared_waits) {
    const WakeStep pending{w.actor, false, w.fp, true};
    const auto end = static_cast<int>(race_.events.size());
    reverse_race(w.race, end, pending, &race_.shared_wait_vcs[w.vc], n, end, static_cast<int>(w.state));
  }
  race_.shared_waits.clear();
  race_.shared_wait_vcs.clear();
}

void DporStrategy::reverse_alternatives(std::size_t n) {
  // The other transition of a waiter: for a plain lock, its timeout looks at the lock (a
  // read), its run takes it; for a grant, both have the wait's footprint, but a deadlock
  // check's timer also reads every object of its domain (timer_footprint). It knows what
  // its actor knew before e.
  for (const auto& [j, before] : race_.alternatives) {
    const Event& e = race_.events[j];
    WakeStep other{e.actor, !e.timer, e.fp, true};
    if (!e.grant_wait) other.fp.access = other.timer ? Access::read : e.declared_access;
    if (e.grant_wait && (e.timer_reads_every_object || e.timer_writes_domain)) {  // timer_footprint
      other.fp.reads_every_object = other.timer && e.timer_reads_every_object;
      other.fp.domain_write = other.timer && e.timer_writes_domain;
    }
    race_.zero_vc.assign(n, 0);
    const std::uint32_t* known = before >= 0 ? &race_.vc[static_cast<std::size_t>(before) * n] : race_.zero_vc.data();
    reverse_race(j, j, other, known, n, static_cast<int>(race_.events.size()));
  }
  race_.alternatives.clear();
}

void DporStrategy::reverse_choices(std::size_t n) {
  // Each other value of each choice: the choices before it as made, those after it at
  // their first value. The step keeps its footprint when that choice keeps it and each
  // later one does or took its first value (so takes the same there). Else the step's
  // footprint is not known: a wakeup sequence ending in it could not be compared with
  // the branches and sleepers that may cover it (a sleep-set-blocked execution).
  LOCKSTEP_INVARIANT(race_.choice_alternatives.size() == race_.choice_steps.size() || fallback_,
                     "dpor: every step that made a choice is reached by the analysis");
  bool known_footprints = true;
  for (std::size_t c = 0; c < race_.choice_alternatives.size() && known_footprints && !fallback_; ++c) {
    const auto [j, before] = race_.choice_alternatives[c];
    const auto& made = race_.choice_steps[c];
    LOCKSTEP_INVARIANT(made.event == static_cast<std::uint32_t>(j), "dpor: a choice step's record is its event's");
    const Event& e = race_.events[static_cast<std::size_t>(j)];
    race_.zero_vc.assign(n, 0);
    const std::uint32_t* known = before >= 0 ? &race_.vc[static_cast<std::size_t>(before) * n] : race_.zero_vc.data();
    for (std::uint32_t k = 0; k < made.count; ++k) {
      const Choice& choice = race_.choices_made[made.first + k];
      bool kept = choice.keeps_footprint;
      for (std::uint32_t i = k + 1; i < made.count && kept; ++i) {
        kept = race_.choices_made[made.first + i].keeps_footprint || race_.choices_made[made.first + i].value == 0;
      }
      if (!kept && choice.options > 1) {
        unsupported("a step makes a choice that may change what it does (a fault, a crash)");
        known_footprints = false;
        break;
      }
      for (std::uint32_t w = 0; w < choice.options; ++w) {
        if (w == choice.value) continue;
        WakeStep other{e.actor, e.timer, e.fp, true, {}};
        for (std::uint32_t i = 0; i < k; ++i) other.path.push_back(race_.choices_made[made.first + i].value);
        other.path.push_back(w);
        while (!other.path.empty() && other.path.back() == 0) other.path.pop_back();
        reverse_race(j, j, other, known, n, static_cast<int>(race_.events.size()));
      }
    }
  }
  race_.choice_alternatives.clear();
}

// A plain lock's waiter that timed out: the acquisition it never made, moved before the
// lock's last acquisition it did not know of.
void DporStrategy::reverse_timed_out(std::size_t n) {
  for (const auto& [i, j, before] : race_.timed_out) {
    WakeStep acquisition{race_.events[j].actor, false, race_.events[j].fp, true};
    acquisition.fp.access = Access::acquire;
    race_.zero_vc.assign(n, 0);
    const std::uint32_t* known = before >= 0 ? &race_.vc[static_cast<std::size_t>(before) * n] : race_.zero_vc.data();
    reverse_race(i, j, acquisition, known, n, static_cast<int>(race_.events.size()));
  }
  race_.timed_out.clear();
}

void DporStrategy::check_parked(const Parked& pk, std::size_t n, bool defer) {
  race_.candidates.clear();
  std::size_t sources = 0;
  for_each_object(pk.fp, [&](ObjectId obj, Access access) {
    if (access != Access::none && obj < race_.objects.size()) sources += pending_candidates(race_.objects[obj], is_read(access));
  });
  if (pk.fp.domain != kNoObject && pk.fp.domain < race_.domains.size()) {
    sources += pending_candidates(race_.domains[pk.fp.domain], !pk.fp.domain_write);
  }
  if (pk.fp.domain != kNoObject && pk.fp.domain < race_.domain_objects.size() && (pk.fp.reads_every_object || writes_an_object(pk.fp))) {
    sources += pending_candidates(race_.domain_objects[pk.fp.domain], !pk.fp.reads_every_object);
  }
  if (race_.last_machine_crash >= 0) {  // a crash before it: dependent with everything
    race_.candidates.push_back(race_.last_machine_crash);
    ++sources;
  }
  if (race_.candidates.empty()) return;
  if (sources > 1) dedupe_candidates();
  race_.zero_vc.assign(n, 0);
  const std::uint32_t* known = pk.actor < static_cast<ActorId>(n) && race_.last_of_actor[pk.actor] >= 0
                                   ? &race_.vc[static_cast<std::size_t>(race_.last_of_actor[pk.actor]) * n]
                                   : race_.zero_vc.data();
  race_.races.clear();
  for (int i : race_.candidates) {
    if (race_.events[i].actor == pk.actor || known[race_.events[i].actor] >= own_seq(i, n)) continue;
    // A shared waiter never runs right before a writer's waiting acquisition: the writer
    // waited there, and readers wait while a writer does (sim/sched/sim_objects.h, writer
    // preference). Its race is with what came before the writer's wait.
    if (optimal_ && shared_lock_acquisition(pk.fp) && writer_waited_before(i, pk.fp.object)) continue;
    race_.races.push_back(i);
  }
  // The pending operation's clock, as an event's would be: what its actor knew, joined
  // with every step it depends on (a reversal must not treat it as independent of those).
  race_.pending_vc.assign(known, known + n);
  for (int i : race_.candidates) join(race_.pending_vc.data(), &race_.vc[static_cast<std::size_t>(i) * n], n);
  for (int i : race_.races) {
    bool behind_another = false;
    for (int k : race_.races) {
      if (k > i && race_.vc[static_cast<std::size_t>(k) * n + race_.events[i].actor] >= own_seq(i, n)) behind_another = true;
    }
    if (behind_another) continue;
    if (defer) {  // v needs the whole execution's clocks
      race_.shared_waits.push_back({i, pk.actor, pk.fp, pk.state, race_.shared_wait_vcs.size()});
      race_.shared_wait_vcs.insert(race_.shared_wait_vcs.end(), race_.pending_vc.begin(), race_.pending_vc.end());
    } else {
      reverse_race(i, static_cast<int>(pk.state), WakeStep{pk.actor, false, pk.fp, true}, race_.pending_vc.data(), n);
    }
  }
}

void DporStrategy::record_access(const Footprint& fp, int j) {
  std::size_t sources = 0;
  // A machine crash depends on every step of every other actor (sim/sched/op.h): on the latest
  // one of each (the earlier ones are behind it), and every later step depends on it.
  if (fp.effects & kMachineCrash) {
    for (std::size_t a = 0; a < race_.last_of_actor.size(); ++a) {
      if (race_.last_of_actor[a] >= 0 && static_cast<std::size_t>(race_.events[j].actor) != a) race_.candidates.push_back(race_.last_of_actor[a]);
    }
    if (race_.last_machine_crash >= 0) race_.candidates.push_back(race_.last_machine_crash);
    race_.last_machine_crash = j;
    ++sources;
  } else if (race_.last_machine_crash >= 0) {
    race_.candidates.push_back(race_.last_machine_crash);
    ++sources;
  }
  auto visit = [&](ObjectHistory& h, bool read) {
    const std::size_t before = race_.candidates.size();
    touch(h, j, read);
    if (race_.candidates.size() > before) ++sources;
  };
  for_each_object(fp, [&](ObjectId obj, Access access) {
    if (access == Access::none) return;
    if (race_.objects.size() <= obj) race_.objects.resize(obj + 1);
    visit(race_.objects[obj], is_read(access));
    if (optimal_) race_.objects[obj].accesses.emplace_back(j, is_read(access));
  });
  if (fp.domain != kNoObject) {
    if (race_.domains.size() <= fp.domain) race_.domains.resize(fp.domain + 1);
    visit(race_.domains[fp.domain], !fp.domain_write);
    if (race_.every_object_read && (fp.reads_every_object || writes_an_object(fp))) {
      if (race_.domain_objects.size() <= fp.domain) race_.domain_objects.resize(fp.domain + 1);
      visit(race_.domain_objects[fp.domain], !fp.reads_every_object);
    }
  }
  if (fp.effects & kObserves) {
    if (fp.scope == kGlobalObservations) {
      visit(race_.observations, false);
    } else {
      visit(race_.observations, true);
      visit(scope_history(fp.scope), false);
    }
  }
  if (sources > 1) dedupe_candidates();  // a step may race with one step through several
}

bool DporStrategy::parked_at(std::uint32_t state, ActorId q, std::optional<ObjectId> object) const {
  auto it = std::lower_bound(race_.parked.begin(), race_.parked.end(), state,
                             [](const Parked& p, std::uint32_t s) { return p.state < s; });
  for (; it != race_.parked.end() && it->state == state; ++it) {
    if (it->actor == q && (!object || it->fp.object == *object)) return true;
  }
  return false;
}

void DporStrategy::note_holding(const Event& e, std::size_t j, std::size_t n) {
  const Footprint& f = e.fp;
  if (f.object == kNoObject || f.domain != kNoObject || own_extra_count(f) != 0 || f.effects != 0) return;
  const std::size_t at = static_cast<std::size_t>(f.object) * n + static_cast<std::size_t>(e.actor);
  if (race_.holding.size() <= at) {
    race_.holding.resize((static_cast<std::size_t>(f.object) + 1) * n, Access::none);
    race_.held_since.resize(race_.holding.size(), -1);
  }
  Access& held = race_.holding[at];
  if (f.access == Access::release) {
    race_.held_by_releaser[j] = held;
    race_.acquisition_released_by[j] = held == Access::none ? -1 : race_.held_since[at];
    held = Access::none;
  } else if (f.access == Access::acquire || f.access == Access::acquire_shared) {
    held = f.access;
    race_.held_since[at] = static_cast<int>(j);
  } else {
    held = Access::none;  // a failed try (a read), a write: nothing known held
  }
}

bool DporStrategy::excluded_by_holder(int i, const Event& e) const {
  const Event& r = race_.events[i];
  if (r.fp.access != Access::release || r.fp.object != e.fp.object || r.actor == e.actor) return false;
  const Access held = race_.held_by_releaser[static_cast<std::size_t>(i)];
  return held == Access::acquire || (held == Access::acquire_shared && e.fp.access == Access::acquire);
}

bool DporStrategy::announces(std::size_t j) const {
  const Event& e = race_.events[j];
  if (e.waits || e.plain_try || e.timer) return false;
  const int next = race_.next_of_actor[j];
  if (next < 0) return parked_at(static_cast<std::uint32_t>(race_.events.size()), e.actor, e.fp.object);
  const Event& w = race_.events[static_cast<std::size_t>(next)];
  return w.waits && !w.timer && plain_lock_acquisition(w.fp) && w.fp.object == e.fp.object;
}

bool DporStrategy::enabled_by(int i, ActorId q) const {
  const Event& e = race_.events[i];
  const auto state = static_cast<std::uint32_t>(i);
  if (e.fp.access != Access::release || parked_at(state + 1, q, std::nullopt)) return false;
  bool waited_on_one = false;  // a multi-object release (a COMMIT) lets go of several at once
  for_each_object(e.fp, [&](ObjectId obj, Access) { waited_on_one = waited_on_one || parked_at(state, q, obj); });
  return waited_on_one;
}

void DporStrategy::touch(ObjectHistory& h, int j, bool read) {
  if (read) {
    if (h.last_write >= 0) race_.candidates.push_back(h.last_write);
    h.reads_since.push_back(j);
    return;
  }
  if (h.reads_since.empty()) {
    if (h.last_write >= 0) race_.candidates.push_back(h.last_write);
  } else {
    race_.candidates.insert(race_.candidates.end(), h.reads_since.begin(), h.reads_since.end());
    if (h.last_write >= 0) race_.candidates.push_back(h.last_write);  // behind the reads: joined, filtered out
  }
  h.last_write = j;
  h.reads_since.clear();
}

}  // namespace lockstep::sim::dpor
