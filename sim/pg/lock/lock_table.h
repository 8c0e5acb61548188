// sim/pg/lock/lock_table.h: the advisory locks of one simulated PostgreSQL server, with the
// rules of src/backend/storage/lmgr/lock.c and proc.c (see docs/postgres.md):
//  - a session holds each (key, mode) with a count, separately per scope (session or
//    transaction); one session may hold several modes of a key;
//  - modes (Mode) conflict as the tuple lock modes do (heapam.c's tupleLockExtraInfo):
//    exclusive with all, no_key_update with share and no_key_update, key_share with
//    exclusive only; advisory locks use share and exclusive;
//  - a request that must wait joins the key's FIFO queue; a queued waiter blocks later
//    conflicting requests, except from a session that already holds the key (granted at
//    once if no holder conflicts); in a table of row locks (Queue::holders_only) only the
//    holders decide, as heap_lock_tuple grants a lock that conflicts with no locker of the
//    tuple without looking at the tuple lock's queue (checked on PostgreSQL 15: a FOR SHARE
//    while a FOR UPDATE waits for another FOR SHARE is granted at once);
//  - a release grants waiters in queue order, skipping any that conflicts with the holders
//    or with a waiter still ahead of it; the grant happens here, in the releasing backend;
//  - a row-lock waiter that stops being behind a conflicting waiter is stamped (Waiter):
//    its wait for the row's holders starts again, as the server's after the tuple lock.
// Deterministic; no scheduling of its own (sim/pg/lock/advisory_locks.cc yields around it).
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/container/flat_map.hpp>
#include <boost/container/small_vector.hpp>

#include "lockstep/model/pg.h"
#include "lockstep/sim/sched/scheduler.h"

namespace lockstep::sim::pg {

using lockstep::pg::AdvisoryKey;
using lockstep::pg::LockMode;

// A lock mode, weakest first within its family. Row locks and advisory locks use the tuple
// modes (PostgreSQL's LockTupleMode order: a hold of a mode covers a request of any weaker
// one; advisory locks use share and exclusive, FOR KEY SHARE to FOR UPDATE all four). Table
// locks (LOCK TABLE, and the locks every statement takes on its table) use the eight
// heavyweight modes of lockdefs.h, ACCESS SHARE to ACCESS EXCLUSIVE. One table holds one family.
enum class Mode : std::uint8_t {
  key_share, share, no_key_update, exclusive,  // tuple modes
  access_share, row_share, row_exclusive, share_update_exclusive, table_share, share_row_exclusive, table_exclusive,
  access_exclusive,  // table modes
};
inline constexpr int kModes = 12;
inline constexpr int kTupleModes = 4;
constexpr Mode mode_of(LockMode m) { return m == LockMode::exclusive ? Mode::exclusive : Mode::share; }
// The table mode LOCK TABLE's number names (1: ACCESS SHARE ... 8: ACCESS EXCLUSIVE).
constexpr Mode table_mode(int number) { return static_cast<Mode>(static_cast<int>(Mode::access_share) + number - 1); }
constexpr bool is_table_mode(Mode m) { return m >= Mode::access_share; }
// Whether holds in modes a and b of two sessions conflict: tuple modes as heapam.c's
// tupleLockExtraInfo, table modes as lock.c's LockConflicts.
constexpr bool modes_conflict(Mode a, Mode b) {
  if (is_table_mode(a) != is_table_mode(b)) return false;  // never in one table
  if (a > b) std::swap(a, b);  // a <= b
  if (is_table_mode(a)) {
    // Each table mode's conflicts, by number (bit n: mode n), from lockdefs.h and lock.c.
    constexpr unsigned kConflicts[9] = {0, 1u << 8, (1u << 7) | (1u << 8), 0x1E0, 0x1F0, 0x1D8, 0x1F8, 0x1FC, 0x1FE};
    const int na = static_cast<int>(a) - static_cast<int>(Mode::access_share) + 1;
    const int nb = static_cast<int>(b) - static_cast<int>(Mode::access_share) + 1;
    return (kConflicts[na] >> nb) & 1u;
  }
  switch (b) {
    case Mode::exclusive: return true;
    case Mode::no_key_update: return a != Mode::key_share;
    default: return false;  // key_share and share conflict with neither
  }
}

enum class Scope { session, transaction };

// A request that had to wait. Its backend parks until `state` leaves waiting.
struct Waiter {
  enum class State { waiting, granted, canceled };
  int session = 0;
  AdvisoryKey key = AdvisoryKey::single(0);
  Mode mode = Mode::exclusive;
  Scope scope = Scope::session;
  State state = State::waiting;
  // Row locks only. `behind`: queued behind a waiter whose request conflicts (on the server it
  // waits for the tuple lock that waiter holds while it waits for the row's holders).
  // `moved_up_at`: when it last stopped being behind one, still waiting: the server grants it
  // the tuple lock then, and it waits for the row's holders anew, its deadlock_timeout and
  // lock_timeout restarted. Its backend sees that when its next timer fires (the new ones
  // come later), so a move costs no step; only a waiter whose deadlock check ran already
  // (`checked`, set by its backend) has no earlier timer, and is woken (`moved_up`).
  bool behind = false;
  bool checked = false;
  bool moved_up = false;
  Time moved_up_at{0};
  // Row locks only: woken by a racing release (its transaction's end) instead of granted
  // (LockTable::claim): its backend takes the lock in its own step if nobody took it first,
  // as the server's waiter, woken from its wait for the releasing transaction, does.
  bool claim = false;
  // Row locks only: the REPEATABLE READ (or SERIALIZABLE) snapshot of the waiter's
  // transaction; `recheck`: woken because a transaction that changed the row committed after
  // it (LockTable::recheck_older), so the waiter checks the tuple it waits for again, as the
  // server's does once it gets the tuple lock: 40001 there, without waiting on for the row's
  // next locker.
  std::optional<std::uint64_t> snapshot;
  bool recheck = false;
  bool stale = false;  // such a change committed while it waited for others: it checks when it moves up
  // Row locks only, while not `behind`: the holders it waits for, those whose holds
  // conflicted when its wait for the row's holders (re)started: the xmax the server's waiter
  // saw (XactLockTableWait, MultiXactIdWait). A locker that passes it later (a non-key
  // UPDATE beside a FOR KEY SHARE) is not among them until they are all gone: then it waits
  // anew for the conflicting holders of that moment, as the server's re-reads the tuple.
  boost::container::small_vector<int, 2> waits_for;
};

// One advisory row of pg_locks: a (session, key, mode) held, in either scope or both, or a
// queued request.
struct LockEntry {
  int session = 0;
  AdvisoryKey key = AdvisoryKey::single(0);
  Mode mode = Mode::exclusive;
  bool granted = false;
};

class LockTable {
 public:
  // Whether queued waiters hold off later conflicting requests (heavyweight locks: lock.c's
  // waitMask) or only the holders decide (row locks).
  enum class Queue { waiters_hold_off, holders_only };
  // `clock` (row locks) stamps Waiter::moved_up_at.
  explicit LockTable(Queue queue = Queue::waiters_hold_off, const Scheduler* clock = nullptr) : queue_rule_(queue), clock_(clock) {}

  // Grants at once (nullptr) or queues the request (the waiter to park on).
  std::shared_ptr<Waiter> request(int session, AdvisoryKey key, Mode mode, Scope scope);
  // ProcSleep's early deadlock: a session that holds the key and must wait finds, first in
  // the queue among the waiters whose request conflicts with what it holds, one that holds
  // what it asks for. The server fails the request with 40P01 at once, without waiting
  // for deadlock_timeout (found by lockstep conform). Call before request().
  bool deadlocks_at_once(int session, AdvisoryKey key, Mode mode) const;
  // pg_try_advisory_lock: grants at once or returns false, queueing nothing. Unlike a
  // blocking request, a session that holds the key in another mode does not pass queued
  // conflicting waiters.
  bool try_request(int session, AdvisoryKey key, Mode mode, Scope scope);
  // A row lock's NOWAIT or SKIP LOCKED: as try_request, except that a session that holds the
  // key goes ahead of queued waiters as a blocking request does (request(), ProcSleep): the
  // server upgrades a row lock its own transaction holds alone without waiting (a FOR SHARE
  // then FOR UPDATE NOWAIT while another waits for the row: checked on PostgreSQL 15).
  bool try_request_row(int session, AdvisoryKey key, Mode mode, Scope scope);
  // Releases one hold of (key, mode) in session scope; false when none is held.
  bool release(int session, AdvisoryKey key, Mode mode);
  // Releases every hold of the session in `scope` (pg_advisory_unlock_all, commit, ...).
  void release_all(int session, Scope scope);
  // The same for one key. `raced`: its queued waiters that it frees are woken to claim it
  // (Waiter::claim) rather than granted it.
  void release_key(int session, AdvisoryKey key, Scope scope, bool raced = false);
  // A waiter woken to claim (Waiter::claim) takes the lock in its own step: granted when no
  // holder conflicts (true); else it waits on, first in its queue.
  bool claim(const std::shared_ptr<Waiter>& waiter);
  // A change of the row `key` committed at commit count `seq` by `session` (before it lets
  // go of the row): of the queued waiters whose snapshot predates it, those it ends the wait
  // of (the last of their Waiter::waits_for) check their tuple again (Waiter::recheck); the
  // others once they wake for their own holders or move up (Waiter::stale), as the server's
  // backend sleeping on another transaction or on the tuple lock does.
  void recheck_older(AdvisoryKey key, std::uint64_t seq, int session);
  // The session's holds of the key in `scope`, per mode (a savepoint's mark).
  std::array<int, kModes> holds(int session, AdvisoryKey key, Scope scope) const;
  // Lets go of the session's holds of the key in `scope` beyond `keep` (a savepoint rolled
  // back to its mark); waiters may go (`raced`: as release_key's).
  void reduce_to(int session, AdvisoryKey key, Scope scope, const std::array<int, kModes>& keep, bool raced = false);
  // A waiter gives up (timeout, termination): out of the queue, which may grant others.
  void cancel(const std::shared_ptr<Waiter>& waiter);
  // The session's backend is gone (pg_terminate_backend): its queued requests are canceled
  // (state canceled, so their backends wake) and its holds in both scopes released.
  void end_session(int session);
  // pg_cancel_backend: the session's queued requests are canceled (state canceled, so its
  // backend wakes); its holds stay. Whether it had one.
  bool cancel_waits(int session);

  // The sessions other than `session` whose holds of `key` conflict with `mode`, in order.
  std::vector<int> conflicting_holders(int session, AdvisoryKey key, Mode mode) const;
  // How many times the session holds (key, mode), in both scopes.
  int held(int session, AdvisoryKey key, Mode mode) const;
  // Whether the session holds the key in `mode` or a stronger one (heap_lock_tuple's "we
  // effectively hold the desired lock already").
  bool holds_at_least(int session, AdvisoryKey key, Mode mode) const;
  // Appends the keys the session holds in `scope` (in either mode) to out, in key order.
  void held_keys(int session, Scope scope, std::vector<AdvisoryKey>& out) const;
  // The keys someone holds or waits for.
  std::vector<AdvisoryKey> keys() const;
  // Whether some session holds the key (in either mode or scope).
  bool held_by_anyone(AdvisoryKey key) const;
  // Appends the sessions queued on some key (with repeats).
  void waiting_sessions(std::vector<int>& out) const;
  // Whether one of `sessions` (sorted) holds the key.
  bool held_by_any_of(AdvisoryKey key, const std::vector<int>& sessions) const;
  // Every hold and queued request, by key, then holders by session, then the queue in order.
  std::vector<LockEntry> entries() const;

 private:
  friend class DeadlockDetector;  // sim/pg/lock/deadlock.cc reads and reorders the queues
  // Grants when the session holds the mode already, or when no holder and no waiter
  // conflicts (LockAcquire); else false, nothing queued.
  bool grant_now(int session, AdvisoryKey key, Mode mode, Scope scope);
  struct Hold {
    std::array<std::array<int, kModes>, 2> count{};  // [scope][mode]
    int& at(Scope scope, Mode mode) { return count[scope == Scope::session ? 0 : 1][static_cast<std::size_t>(mode)]; }
    int of(Mode mode) const { return count[0][static_cast<std::size_t>(mode)] + count[1][static_cast<std::size_t>(mode)]; }
    bool any_in(Scope scope) const {
      for (const int n : count[scope == Scope::session ? 0 : 1]) {
        if (n > 0) return true;
      }
      return false;
    }
    bool any() const { return any_in(Scope::session) || any_in(Scope::transaction); }
  };
  // Holders by session and the FIFO queue, kept inline (flat, in order): nothing allocated
  // in the common case of one or two sessions.
  struct Lock {
    boost::container::flat_map<int, Hold, std::less<int>, boost::container::small_vector<std::pair<int, Hold>, 2>> holders;
    boost::container::small_vector<std::shared_ptr<Waiter>, 2> queue;
  };

  static bool conflicts(Mode a, Mode b) { return modes_conflict(a, b); }
  // Whether a request in `wanted` conflicts with what `h` holds.
  static bool conflicts_with_held(Mode wanted, const Hold& h);
  static bool holder_conflicts(const Lock& l, int session, Mode mode);
  static void grant(Lock& l, int session, Mode mode, Scope scope);
  // A row-lock waiter's Waiter::waits_for: the holders that conflict with it now.
  static void note_waits_for(const Lock& l, Waiter& w);
  // Whether one of those it waits for still holds a conflicting mode.
  static bool waits_for_holds(const Lock& l, const Waiter& w);
  void wake(Lock& l, bool raced = false) const;
  // ProcSleep's rule for a session that holds the key: granted at once when no holder and no
  // waiter ahead of the first one that must wait for its hold conflicts; else `at` is where
  // it queues (the end when no waiter must wait for it).
  bool goes_ahead(Lock& l, int session, Mode mode, Scope scope, std::size_t* at);

  // A key's entry stays once made, empty when nobody holds or waits (every reader skips
  // those): made and forgotten with each grant of a free key, it cost an allocation each.
  std::map<AdvisoryKey, Lock> locks_;
  Queue queue_rule_;
  const Scheduler* clock_;
};

}  // namespace lockstep::sim::pg
