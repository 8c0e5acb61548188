// sim/pg/lock/advisory_locks.cc: a session's advisory lock statements: try, lock (request, then
// the wait for a grant, a timeout or a deadlock), unlock.
#include "lockstep/sim/pg/server/connection.h"
#include "lockstep/sim/pg/lock/deadlock.h"

namespace lockstep::sim::pg {

Status SimConnection::advisory_lock(AdvisoryKey key, LockMode mode) {
  Statement st(*this);
  return lock(key, mode, Scope::session);
}

Status SimConnection::advisory_lock_with_timeout(AdvisoryKey key, LockMode mode, Duration lock_timeout) {
  Statement st(*this);
  return lock(key, mode, Scope::session, lock_timeout);
}

Result<bool> SimConnection::try_advisory_lock(AdvisoryKey key, LockMode mode) {
  Statement st(*this);
  return try_lock(key, mode, Scope::session);
}

Result<bool> SimConnection::advisory_unlock(AdvisoryKey key, LockMode mode) {
  Statement st(*this);
  const OpDesc first = narrowing({name(in_mode(Stmt::advisory_unlock, mode)), {server_.object_for(key), Access::release}, pid_, true});
  if (auto refused = begin_statement(first)) return *refused;
  const bool held = server_.locks().release(pid_, key, mode_of(mode));
  if (!held) {
    s_.refine_access(Access::read);
    warnings_.push_back({std::string(sqlstate::kWarning), fmt::format("you don't own a lock of type {}", lock_type(mode_of(mode)))});
    if (s_.logging()) s_.note_detail(fmt::format("WARNING {}: {}", warnings_.back().sqlstate, warnings_.back().message));
  }
  s_.note_result({Kind::value, held ? 1 : 0});
  return held;
}

Status SimConnection::advisory_unlock_all() {
  Statement st(*this);
  if (dead_) return lost();
  // One step on every key it lets go of, in the server's domain.
  const Release all_session{.session_scope = true};
  const OpDesc first{name(Stmt::advisory_unlock_all), release_footprint(all_session), pid_, true};
  if (auto refused = begin_statement(first)) return *refused;
  apply_release(all_session);
  return {};
}

Status SimConnection::advisory_xact_lock(AdvisoryKey key, LockMode mode) {
  Statement st(*this);
  Status locked = lock(key, mode, Scope::transaction);
  if (locked.ok() && !session_.in_transaction && !hold_xact_locks_) {
    release_now({.xact_scope = true}, "end of statement");
    if (session_.terminated) return terminated();
  }
  return locked;
}

Result<bool> SimConnection::try_advisory_xact_lock(AdvisoryKey key, LockMode mode) {
  Statement st(*this);
  return try_lock(key, mode, Scope::transaction);
}

Result<bool> SimConnection::try_lock(AdvisoryKey key, LockMode mode, Scope scope) {
  const Stmt stmt = scope == Scope::session ? Stmt::try_advisory_lock : Stmt::try_advisory_xact_lock;
  OpDesc first = narrowing({name(in_mode(stmt, mode)), {server_.object_for(key), acquire_access(mode)}, pid_, true});
  first.tries = true;
  if (auto refused = begin_statement(first)) return *refused;
  const bool got = server_.locks().try_request(pid_, key, mode_of(mode), scope);
  try_step_ = s_.step_count();
  if (!got) s_.refine_access(Access::read);
  s_.note_result({Kind::value, got ? 1 : 0});
  if (got && scope == Scope::transaction && !session_.in_transaction && !hold_xact_locks_) {
    release_now({.xact_scope = true}, "end of statement");
    if (session_.terminated) return terminated();
  }
  return got;
}

Status SimConnection::lock(AdvisoryKey key, LockMode mode, Scope scope, std::optional<Duration> set_lock_timeout) {
  if (dead_) return lost();
  const ObjectId obj = server_.object_for(key);
  const Stmt stmt = scope == Scope::transaction ? Stmt::advisory_xact_lock
                    : set_lock_timeout          ? Stmt::advisory_lock_timed
                                                : Stmt::advisory_lock;
  const OpDesc first{name(in_mode(stmt, mode)), {obj, acquire_access(mode)}, pid_, true};
  if (auto refused = begin_statement(first)) return *refused;
  if (set_lock_timeout) apply_timeout(Timeout::lock, *set_lock_timeout, false);
  if (server_.locks().deadlocks_at_once(pid_, key, mode_of(mode))) {
    s_.note_result({Kind::failed});
    return abort_with({std::string(sqlstate::kDeadlockDetected), "deadlock detected"});
  }
  auto waiter = server_.locks().request(pid_, key, mode_of(mode), scope);
  if (!waiter) {
    s_.note_result({Kind::ok});
    return {};
  }
  note_queued(server_.locks(), key, mode_of(mode));
  return wait_for(server_.locks(), waiter, obj, acquire_access(mode), "advisory_lock_wait");
}

void SimConnection::note_queued(const LockTable& table, AdvisoryKey key, Mode mode) {
  s_.note_result({Kind::queued});
  if (!s_.logging()) return;
  std::string behind;
  for (const int holder : table.conflicting_holders(pid_, key, mode)) behind += fmt::format("{}{}", behind.empty() ? "" : ", ", holder);
  s_.note_detail(behind.empty() ? "behind requests queued ahead" : "behind " + behind);
}

Status SimConnection::wait_for(LockTable& table, const std::shared_ptr<Waiter>& waiter, ObjectId obj, Access access,
                std::string_view verb, std::string what, const std::function<std::optional<Error>()>& recheck) {
  // lock_timeout counts from the start of the wait; statement_timeout from the statement's
  // start (an earlier wait of it counts). The deadlock check comes deadlock_timeout in.
  // A row-lock waiter that moves up its queue waits anew (Waiter::moved_up_at): its deadlock
  // check and lock_timeout count again from then, its statement_timeout does not.
  const auto [statement_timeout, statement_start] = statement_limit();
  Time start = s_.now();
  bool deadlock_checked = false;
  bool lock_first = false;
  Time limit_at = kForever;
  auto set_limit = [&] {
    lock_first = lock_timeout_.count() > 0 && (statement_timeout.count() == 0 || start + lock_timeout_ <= statement_start + statement_timeout);
    limit_at = lock_first ? start + lock_timeout_ : statement_timeout.count() > 0 ? statement_start + statement_timeout : kForever;
  };
  set_limit();
  last_.waited = true;
  WaiterReady ready(*waiter, std::move(what), &server_.idle_epoch());
  for (;;) {
    ready.see_idle_epoch();
    const Time check_at = start + deadlock_timeout_;
    const bool check_next = !deadlock_checked && check_at < limit_at;
    const Time now = s_.now();
    // A session idle past its idle timeout (idle_in_transaction_session_timeout, or
    // idle_session_timeout) is ended then, by the server's own timer: it may end this wait.
    const Time other_at = check_next ? check_at : limit_at;
    const Time idle_at = server_.next_idle_end();
    const bool idle_next = idle_at != kForever && idle_at <= other_at;
    const Time wake_at = idle_next ? idle_at : other_at;
    const Duration wait = wake_at == kForever ? kForever : wake_at - std::min(now, wake_at);
    OpDesc waiting = granted_wait({verb, obj == kNoObject ? whole_server(access) : Footprint{obj, access}, pid_, true});
    // Timed, the deadlock check's timer reads every object of the server (one footprint
    // wherever it fires: optimal DPOR moves it as any step); it fires once nothing else can
    // run, so that costs nothing. Untimed it may fire anywhere in the wait, where every
    // object would order it against every step of the server: it reads the locks held then.
    waiting.timer_reads_every_object = check_next && !idle_next && s_.time_mode() == TimeMode::timed;
    waiting.timer_writes_domain = idle_next;
    const Wake wake = step(waiting, &ready, wait, check_next || idle_next);
    if (session_.terminated) {  // the wait was canceled, or the lock granted and let go again
      s_.note_result({Kind::failed});
      if (s_.logging()) s_.note_detail("57P01 terminated");
      return terminated();
    }
    if (session_.canceled) {  // pg_cancel_backend took this wait out of its queue
      session_.canceled = false;
      s_.note_result({Kind::failed});
      if (s_.logging()) s_.note_detail("57014 canceled");
      return abort_with({std::string(sqlstate::kQueryCanceled), "canceling statement due to user request"});
    }
    // Woken to claim a row another backend woken with it may take first (LockTable::claim):
    // taken, or it waits anew for the one that took it (XactLockTableWait on that one).
    if (waiter->state == Waiter::State::waiting && waiter->claim && wake == Wake::run) {
      if (table.claim(waiter)) break;
      start = s_.now();
      waiter->checked = deadlock_checked = false;
      set_limit();
      continue;
    }
    // Woken to check its tuple again: the change its snapshot does not see fails it (40001),
    // else it waits on, anew, for the row's holders now.
    if (waiter->state == Waiter::State::waiting && waiter->recheck && wake == Wake::run) {
      waiter->recheck = false;
      if (const std::optional<Error> failed = recheck ? recheck() : std::nullopt) {
        table.cancel(waiter);
        s_.note_result({Kind::failed});
        if (s_.logging()) s_.note_detail(fmt::format("{} {}", failed->sqlstate, failed->message));
        return abort_with(*failed);
      }
      start = s_.now();
      waiter->checked = deadlock_checked = false;
      set_limit();
      continue;
    }
    // Moved up since the wait (re)started: woken for it, or a timer of the old start fired
    // (the new ones come later): wait on from the move.
    if (waiter->state == Waiter::State::waiting && (waiter->moved_up || waiter->moved_up_at > start)) {
      LOCKSTEP_INVARIANT(wake != Wake::run || waiter->moved_up, "a row-lock waiter woken while waiting was moved up");
      start = std::max(start, waiter->moved_up_at);
      waiter->moved_up = waiter->checked = deadlock_checked = false;
      set_limit();
      continue;
    }
    // Another session went idle under an idle timeout meanwhile: wait on, its deadline a timer.
    if (wake == Wake::run && waiter->state == Waiter::State::waiting && ready.idle_changed()) continue;
    if (wake == Wake::run) break;
    if (idle_next) {
      if (server_.end_idle_sessions(s_.now())) {
        s_.also_touch_domain();
        if (s_.logging()) s_.note_detail("idle timeouts: sessions idle past theirs ended");
      }
      continue;  // granted by it, or still waiting
    }
    if (check_next) {  // the deadlock check, once per wait
      deadlock_checked = waiter->checked = true;
      // It reads the waits-for graph, which a request by another session on another lock can
      // close into a cycle (found by the sim-pg property). Every lock a cycle passes through is
      // held by a waiting session of it: untimed, the check touches the locks of the sessions
      // waiting now (Server::touch_waits_for_graph; past kMaxExtraObjects of them, the whole
      // domain); timed, every object (OpDesc::timer_reads_every_object).
      if (s_.time_mode() == TimeMode::untimed) server_.touch_waits_for_graph();
      // One waits-for graph over advisory, row and table locks: a cycle may mix them.
      DeadlockVerdict verdict = DeadlockVerdict::none;
      if (waiter->state == Waiter::State::waiting) {
        verdict = check_deadlock(*waiter, {&server_.locks(), &server_.row_locks(), &server_.table_locks()});
      }
      if (verdict == DeadlockVerdict::hard) {
        table.cancel(waiter);
        s_.note_result({Kind::failed});
        if (s_.logging()) s_.note_detail("40P01 deadlock detected");
        last_.by_timer = true;
        return abort_with({std::string(sqlstate::kDeadlockDetected), "deadlock detected"});
      }
      // A soft deadlock undone: queues of any lock reordered and their waiters woken.
      if (verdict == DeadlockVerdict::soft) s_.also_touch_domain();
      if (waiter->state == Waiter::State::waiting) {
        s_.note_result({Kind::woke});
        if (s_.logging()) {
          s_.note_detail(verdict == DeadlockVerdict::soft ? "deadlock check (deadlock_timeout): a soft deadlock, wait queues reordered"
                                                          : "deadlock check (deadlock_timeout): no cycle, still waiting");
        }
        continue;
      }
      if (verdict == DeadlockVerdict::soft && s_.logging()) s_.note_detail("deadlock check (deadlock_timeout): a soft deadlock, wait queues reordered: granted");
      break;  // granted meanwhile
    }
    if (waiter->state == Waiter::State::waiting || config_.phantom_grant) {
      // Timed out; with the phantom grant fault, also after the grant: the lock stays held.
      if (waiter->state == Waiter::State::waiting) {
        table.cancel(waiter);
      } else {
        s_.observe({"phantom_grant", pid_, 0, false, kGlobalScope, kPhantomGrantEvent});  // Bug #17686: the client sees a timeout, the session holds it
        last_.phantom = true;
      }
      last_.by_timer = true;
      s_.note_result({Kind::timeout, last_.phantom ? 1 : 0});  // 1: yet granted
      if (s_.logging()) {
        s_.note_detail(fmt::format("{}{}", lock_first ? "55P03 lock_timeout" : "57014 statement_timeout",
                                   last_.phantom ? ", yet granted: the session holds the lock (phantom grant)" : ""));
      }
      if (lock_first) return abort_with({std::string(sqlstate::kLockNotAvailable), "canceling statement due to lock timeout"});
      return abort_with({std::string(sqlstate::kQueryCanceled), "canceling statement due to statement timeout"});
    }
    break;  // the grant won the race with the timeout
  }
  s_.note_result({Kind::ok});
  if (s_.logging()) s_.note_detail("granted");
  return {};
}

}  // namespace lockstep::sim::pg
