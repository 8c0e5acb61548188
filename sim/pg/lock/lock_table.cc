#include "lockstep/sim/pg/lock/lock_table.h"

#include <algorithm>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim::pg {

bool LockTable::holder_conflicts(const Lock& l, int session, Mode mode) {
  for (const auto& [s, h] : l.holders) {
    if (s != session && conflicts_with_held(mode, h)) return true;
  }
  return false;
}

void LockTable::note_waits_for(const Lock& l, Waiter& w) {
  w.waits_for.clear();
  for (const auto& [s, h] : l.holders) {
    if (s != w.session && conflicts_with_held(w.mode, h)) w.waits_for.push_back(s);
  }
  LOCKSTEP_INVARIANT(!w.waits_for.empty(), "lock table: a row-lock waiter not behind another waits for a holder");
}

bool LockTable::waits_for_holds(const Lock& l, const Waiter& w) {
  return std::any_of(w.waits_for.begin(), w.waits_for.end(), [&](int s) {
    const auto it = l.holders.find(s);
    return it != l.holders.end() && conflicts_with_held(w.mode, it->second);
  });
}

void LockTable::grant(Lock& l, int session, Mode mode, Scope scope) {
  LOCKSTEP_INVARIANT(!holder_conflicts(l, session, mode), "lock table: no grant conflicts with another session's hold");
  ++l.holders[session].at(scope, mode);
}

bool LockTable::conflicts_with_held(Mode wanted, const Hold& h) {
  for (int m = 0; m < kModes; ++m) {
    if (h.of(static_cast<Mode>(m)) > 0 && conflicts(wanted, static_cast<Mode>(m))) return true;
  }
  return false;
}

std::shared_ptr<Waiter> LockTable::request(int session, AdvisoryKey key, Mode mode, Scope scope) {
  if (grant_now(session, key, mode, scope)) return nullptr;
  Lock& l = locks_[key];
  auto w = std::make_shared<Waiter>();
  w->session = session;
  w->key = key;
  w->mode = mode;
  w->scope = scope;
  std::size_t at = l.queue.size();
  if (goes_ahead(l, session, mode, scope, &at)) return nullptr;
  if (queue_rule_ == Queue::holders_only) {
    w->behind = std::any_of(l.queue.begin(), l.queue.begin() + static_cast<std::ptrdiff_t>(at),
                            [&](const auto& ahead) { return conflicts(mode, ahead->mode); });
    if (!w->behind) note_waits_for(l, *w);
  }
  l.queue.insert(l.queue.begin() + static_cast<std::ptrdiff_t>(at), w);
  return w;
}

// ProcSleep: a session that holds the key goes ahead of the first waiter that must wait for
// what it holds, and is granted at once there when neither the waiters ahead of that one nor
// any holder conflict with it. Others queue at the end (found by lockstep conform: behind
// such a waiter the simulation saw a deadlock the server has not).
bool LockTable::goes_ahead(Lock& l, int session, Mode mode, Scope scope, std::size_t* at) {
  const auto mine = l.holders.find(session);
  if (mine == l.holders.end() || !mine->second.any()) return false;
  bool ahead_conflict = false;
  for (std::size_t i = 0; i < l.queue.size(); ++i) {
    if (conflicts_with_held(l.queue[i]->mode, mine->second)) {
      if (!ahead_conflict && !holder_conflicts(l, session, mode)) {
        grant(l, session, mode, scope);
        return true;
      }
      *at = i;
      return false;
    }
    ahead_conflict = ahead_conflict || conflicts(mode, l.queue[i]->mode);
  }
  return false;
}

bool LockTable::try_request_row(int session, AdvisoryKey key, Mode mode, Scope scope) {
  if (grant_now(session, key, mode, scope)) return true;
  std::size_t at = 0;
  return goes_ahead(locks_[key], session, mode, scope, &at);
}

bool LockTable::deadlocks_at_once(int session, AdvisoryKey key, Mode mode) const {
  const auto it = locks_.find(key);
  if (it == locks_.end()) return false;
  const Lock& l = it->second;
  const auto mine = l.holders.find(session);
  if (mine == l.holders.end() || !mine->second.any() || !holder_conflicts(l, session, mode)) return false;
  for (const auto& w : l.queue) {
    if (!conflicts_with_held(w->mode, mine->second)) continue;  // not one we must go ahead of
    const auto theirs = l.holders.find(w->session);
    return theirs != l.holders.end() && conflicts_with_held(mode, theirs->second);
  }
  return false;
}

bool LockTable::try_request(int session, AdvisoryKey key, Mode mode, Scope scope) {
  return grant_now(session, key, mode, scope);
}

bool LockTable::grant_now(int session, AdvisoryKey key, Mode mode, Scope scope) {
  Lock& l = locks_[key];
  const auto mine = l.holders.find(session);
  const bool holds_key = mine != l.holders.end() && mine->second.any();
  const bool holds_mode = holds_key && mine->second.of(mode) > 0;
  bool blocked = false;
  if (!holds_mode) {
    blocked = holder_conflicts(l, session, mode);
    // A queued waiter holds off later conflicting requests (LockAcquire's waitMask test);
    // a blocking request of a session that holds the key may still go ahead of them
    // (request(), ProcSleep); a try (dontWait) never gets that far and fails (found by
    // lockstep conform).
    if (!blocked && queue_rule_ == Queue::waiters_hold_off) {
      blocked = std::any_of(l.queue.begin(), l.queue.end(), [&](const auto& w) { return conflicts(mode, w->mode); });
    }
  }
  if (blocked) return false;
  grant(l, session, mode, scope);
  return true;
}

void LockTable::wake(Lock& l, bool raced) const {
  // ProcLockWakeup: grant in queue order; a waiter left waiting blocks later conflicting ones.
  // Raced: those it would grant are woken to claim the lock in their own steps instead.
  boost::container::small_vector<Mode, 4> ahead;
  for (auto it = l.queue.begin(); it != l.queue.end();) {
    const auto& w = *it;
    const bool behind = std::any_of(ahead.begin(), ahead.end(), [&](Mode m) { return conflicts(w->mode, m); });
    if (raced && !behind && !holder_conflicts(l, w->session, w->mode)) {
      LOCKSTEP_INVARIANT(queue_rule_ == Queue::holders_only, "lock table: only a row lock is claimed");
      w->claim = true;
      w->behind = false;
      ahead.push_back(w->mode);
      ++it;
    } else if (!behind && !holder_conflicts(l, w->session, w->mode)) {
      LOCKSTEP_INVARIANT(w->state == Waiter::State::waiting, "lock table: only a waiting request is granted");
      w->claim = false;
      grant(l, w->session, w->mode, w->scope);
      w->state = Waiter::State::granted;
      it = l.queue.erase(it);
    } else {
      if (queue_rule_ == Queue::holders_only) {
        // Moved up (it takes the tuple lock), or the holders it waited for are gone while
        // another conflicts now: it waits anew, for the row's conflicting holders of now.
        if (!behind && (w->behind || !waits_for_holds(l, *w))) {
          if (clock_ != nullptr) w->moved_up_at = clock_->now();
          w->moved_up = w->checked;
          w->recheck = w->recheck || w->stale;  // it reads its tuple again now: a change its snapshot misses fails it
          note_waits_for(l, *w);
        }
        w->behind = behind;
      }
      ahead.push_back(w->mode);
      ++it;
    }
  }
}

bool LockTable::release(int session, AdvisoryKey key, Mode mode) {
  auto lit = locks_.find(key);
  if (lit == locks_.end()) return false;
  Lock& l = lit->second;
  auto hit = l.holders.find(session);
  if (hit == l.holders.end()) return false;
  int& count = hit->second.at(Scope::session, mode);
  if (count == 0) return false;
  --count;
  if (!hit->second.any()) l.holders.erase(hit);
  wake(l);
  return true;
}

void LockTable::release_all(int session, Scope scope) {
  for (const auto& [key, l] : locks_) release_key(session, key, scope);
}

void LockTable::release_key(int session, AdvisoryKey key, Scope scope, bool raced) {
  auto lit = locks_.find(key);
  if (lit == locks_.end()) return;
  Lock& l = lit->second;
  auto hit = l.holders.find(session);
  if (hit == l.holders.end()) return;
  Hold& h = hit->second;
  h.count[scope == Scope::session ? 0 : 1].fill(0);
  if (!h.any()) l.holders.erase(hit);
  wake(l, raced);
}

void LockTable::recheck_older(AdvisoryKey key, std::uint64_t seq, int session) {
  const auto it = locks_.find(key);
  if (it == locks_.end()) return;
  const Lock& l = it->second;
  for (const auto& w : l.queue) {
    if (w->state != Waiter::State::waiting || !w->snapshot || *w->snapshot >= seq) continue;
    // Woken by this commit: it waited for the committer, and for nobody else who still holds.
    const bool ends_its_wait = !w->behind && std::find(w->waits_for.begin(), w->waits_for.end(), session) != w->waits_for.end() &&
                               std::none_of(w->waits_for.begin(), w->waits_for.end(), [&](int s) {
                                 const auto h = l.holders.find(s);
                                 return s != session && h != l.holders.end() && conflicts_with_held(w->mode, h->second);
                               });
    (ends_its_wait ? w->recheck : w->stale) = true;
  }
}

bool LockTable::claim(const std::shared_ptr<Waiter>& waiter) {
  LOCKSTEP_INVARIANT(waiter->claim && waiter->state == Waiter::State::waiting, "lock table: only a waiter woken to claim claims");
  waiter->claim = false;
  Lock& l = locks_.at(waiter->key);
  if (holder_conflicts(l, waiter->session, waiter->mode)) {  // another took it first: wait for that one
    note_waits_for(l, *waiter);
    return false;
  }
  const auto at = std::find(l.queue.begin(), l.queue.end(), waiter);
  LOCKSTEP_INVARIANT(at != l.queue.end(), "lock table: a waiter woken to claim is still queued");
  l.queue.erase(at);
  grant(l, waiter->session, waiter->mode, waiter->scope);
  waiter->state = Waiter::State::granted;
  wake(l);  // those behind it wait for it as a holder now
  return true;
}

std::array<int, kModes> LockTable::holds(int session, AdvisoryKey key, Scope scope) const {
  const auto lit = locks_.find(key);
  if (lit == locks_.end()) return {};
  const auto hit = lit->second.holders.find(session);
  if (hit == lit->second.holders.end()) return {};
  return hit->second.count[scope == Scope::session ? 0 : 1];
}

void LockTable::reduce_to(int session, AdvisoryKey key, Scope scope, const std::array<int, kModes>& keep, bool raced) {
  auto lit = locks_.find(key);
  if (lit == locks_.end()) return;
  Lock& l = lit->second;
  auto hit = l.holders.find(session);
  if (hit == l.holders.end()) return;
  auto& counts = hit->second.count[scope == Scope::session ? 0 : 1];
  for (std::size_t m = 0; m < counts.size(); ++m) counts[m] = std::min(counts[m], keep[m]);
  if (!hit->second.any()) l.holders.erase(hit);
  wake(l, raced);
}

void LockTable::cancel(const std::shared_ptr<Waiter>& waiter) {
  auto lit = locks_.find(waiter->key);
  if (lit == locks_.end()) return;
  auto& q = lit->second.queue;
  q.erase(std::remove(q.begin(), q.end(), waiter), q.end());
  wake(lit->second);  // those it held off may go now
}

void LockTable::end_session(int session) {
  for (auto& [key, l] : locks_) {
    for (const auto& w : l.queue) {
      if (w->session == session) w->state = Waiter::State::canceled;
    }
    l.queue.erase(std::remove_if(l.queue.begin(), l.queue.end(), [&](const auto& w) { return w->session == session; }),
                  l.queue.end());
    l.holders.erase(session);
    wake(l);
  }
}

bool LockTable::cancel_waits(int session) {
  bool any = false;
  for (auto& [key, l] : locks_) {
    const auto mine = [&](const auto& w) { return w->session == session; };
    if (std::none_of(l.queue.begin(), l.queue.end(), mine)) continue;
    for (const auto& w : l.queue) {
      if (mine(w)) w->state = Waiter::State::canceled;
    }
    l.queue.erase(std::remove_if(l.queue.begin(), l.queue.end(), mine), l.queue.end());
    wake(l);
    any = true;
  }
  return any;
}

int LockTable::held(int session, AdvisoryKey key, Mode mode) const {
  auto lit = locks_.find(key);
  if (lit == locks_.end()) return 0;
  auto hit = lit->second.holders.find(session);
  if (hit == lit->second.holders.end()) return 0;
  return hit->second.of(mode);
}

bool LockTable::holds_at_least(int session, AdvisoryKey key, Mode mode) const {
  for (int m = static_cast<int>(mode); m < (is_table_mode(mode) ? kModes : kTupleModes); ++m) {
    if (held(session, key, static_cast<Mode>(m)) > 0) return true;
  }
  return false;
}

void LockTable::held_keys(int session, Scope scope, std::vector<AdvisoryKey>& out) const {
  for (const auto& [key, l] : locks_) {
    auto hit = l.holders.find(session);
    if (hit == l.holders.end()) continue;
    const Hold& h = hit->second;
    if (h.any_in(scope)) out.push_back(key);
  }
}

std::vector<int> LockTable::conflicting_holders(int session, AdvisoryKey key, Mode mode) const {
  std::vector<int> out;
  const auto it = locks_.find(key);
  if (it == locks_.end()) return out;
  for (const auto& [holder, hold] : it->second.holders) {
    if (holder != session && conflicts_with_held(mode, hold)) out.push_back(holder);
  }
  return out;
}

bool LockTable::held_by_anyone(AdvisoryKey key) const {
  auto it = locks_.find(key);
  return it != locks_.end() && !it->second.holders.empty();
}

void LockTable::waiting_sessions(std::vector<int>& out) const {
  for (const auto& [key, l] : locks_) {
    for (const auto& w : l.queue) out.push_back(w->session);
  }
}

bool LockTable::held_by_any_of(AdvisoryKey key, const std::vector<int>& sessions) const {
  const auto it = locks_.find(key);
  if (it == locks_.end()) return false;
  const auto& holders = it->second.holders;
  return std::any_of(holders.begin(), holders.end(), [&](const auto& h) { return std::binary_search(sessions.begin(), sessions.end(), h.first); });
}

std::vector<AdvisoryKey> LockTable::keys() const {
  std::vector<AdvisoryKey> out;
  for (const auto& [key, l] : locks_) {
    if (!l.holders.empty() || !l.queue.empty()) out.push_back(key);
  }
  return out;
}

std::vector<LockEntry> LockTable::entries() const {
  std::vector<LockEntry> out;
  for (const auto& [key, l] : locks_) {
    for (const auto& [session, h] : l.holders) {
      for (int m = kModes - 1; m >= 0; --m) {
        if (h.of(static_cast<Mode>(m)) > 0) out.push_back({session, key, static_cast<Mode>(m), true});
      }
    }
    for (const auto& w : l.queue) out.push_back({w->session, key, w->mode, false});
  }
  return out;
}


}  // namespace lockstep::sim::pg
