#include "lockstep/sim/pg/sim_pg.h"

#include "lockstep/sim/invariant.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <set>
#include <tuple>

#include <boost/container/flat_set.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace lockstep::sim::pg {
namespace {

using lockstep::pg::AdvisoryLockRow;
using lockstep::pg::Error;
using lockstep::pg::PooledConnection;
using lockstep::pg::PoolConfig;
using lockstep::pg::Result;
using lockstep::pg::Row;
using lockstep::pg::Status;
namespace sqlstate = lockstep::pg::sqlstate;
using Kind = StepResult::Kind;
using lockstep::pg::Stmt;
using lockstep::pg::in_mode;
using lockstep::pg::name;

// A row as the event log shows it: {col=value, ...}, or "no row".
std::string row_text(const std::optional<Row>& row) {
  if (!row) return "no row";
  std::string out = "{";
  for (const auto& [column, value] : *row) out += fmt::format("{}{}={}", out.size() > 1 ? ", " : "", column, value);
  return out + "}";
}

std::string_view lock_type(LockMode mode) { return mode == LockMode::exclusive ? "ExclusiveLock" : "ShareLock"; }
Access acquire_access(LockMode mode) { return mode == LockMode::exclusive ? Access::acquire : Access::acquire_shared; }

class WaiterReady final : public WaitCondition {
 public:
  // `what` names the lock waited for; "" for an advisory lock (named by its key).
  WaiterReady(const Waiter& w, std::string what) : w_(w), what_(std::move(what)) {}
  bool ready(ActorId) const override { return w_.state != Waiter::State::waiting; }
  std::string describe(ActorId) const override {
    if (!what_.empty()) return what_;
    return fmt::format("advisory lock ({}, {}, {}) in {} mode", w_.key.classid(), w_.key.objid(), w_.key.objsubid(),
                       w_.mode == LockMode::exclusive ? "exclusive" : "shared");
  }

 private:
  const Waiter& w_;
  std::string what_;
};

class SimConnection : public lockstep::pg::Connection {
 public:
  SimConnection(Server& server, const PoolConfig& config)
      : server_(server),
        s_(server.scheduler()),
        session_(server.open_session(config.application_name)),
        pid_(session_.pid),
        config_(config) {}

  bool dead() const { return dead_; }
  // In a transaction block (an open or a failed one): a ROLLBACK has something to end.
  bool in_transaction() const { return session_.in_transaction; }

  int backend_pid() const override { return pid_; }

  Status advisory_lock(AdvisoryKey key, LockMode mode) override {
    Statement st(*this);
    return lock(key, mode, Scope::session);
  }

  Status advisory_lock_with_timeout(AdvisoryKey key, LockMode mode, Duration lock_timeout) override {
    Statement st(*this);
    return lock(key, mode, Scope::session, lock_timeout);
  }

  Result<bool> try_advisory_lock(AdvisoryKey key, LockMode mode) override {
    Statement st(*this);
    return try_lock(key, mode, Scope::session);
  }

  Result<bool> advisory_unlock(AdvisoryKey key, LockMode mode) override {
    Statement st(*this);
    const OpDesc first = narrowing({name(in_mode(Stmt::advisory_unlock, mode)), {server_.object_for(key), Access::release}, pid_, true});
    if (auto refused = begin_statement(first)) return *refused;
    const bool held = server_.locks().release(pid_, key, mode);
    if (!held) {
      s_.refine_access(Access::read);
      warnings_.push_back({std::string(sqlstate::kWarning), fmt::format("you don't own a lock of type {}", lock_type(mode))});
      if (s_.logging()) s_.note_detail(fmt::format("WARNING {}: {}", warnings_.back().sqlstate, warnings_.back().message));
    }
    s_.note_result({Kind::value, held ? 1 : 0});
    return held;
  }

  Status advisory_unlock_all() override {
    Statement st(*this);
    if (dead_) return lost();
    // One step on every key it lets go of, in the server's domain.
    const Release all_session{.session_scope = true};
    const OpDesc first{name(Stmt::advisory_unlock_all), release_footprint(all_session), pid_, true};
    if (auto refused = begin_statement(first)) return *refused;
    apply_release(all_session);
    return {};
  }

  Status advisory_xact_lock(AdvisoryKey key, LockMode mode) override {
    Statement st(*this);
    Status locked = lock(key, mode, Scope::transaction);
    if (locked.ok() && !session_.in_transaction) {
      release_now({.xact_scope = true}, "end of statement");
      if (session_.terminated) return terminated();
    }
    return locked;
  }

  Result<bool> try_advisory_xact_lock(AdvisoryKey key, LockMode mode) override {
    Statement st(*this);
    return try_lock(key, mode, Scope::transaction);
  }

  Status set_lock_timeout(Duration t) override {
    Statement st(*this);
    const OpDesc first{name(Stmt::set_lock_timeout), {}, std::chrono::duration_cast<std::chrono::milliseconds>(t).count(), true};
    if (auto refused = begin_statement(first)) return *refused;
    lock_timeout_ = t;
    return {};
  }
  Status set_statement_timeout(Duration t) override {
    Statement st(*this);
    const OpDesc first{name(Stmt::set_statement_timeout), {}, std::chrono::duration_cast<std::chrono::milliseconds>(t).count(), true};
    if (auto refused = begin_statement(first)) return *refused;
    statement_timeout_ = t;
    return {};
  }

  Result<std::optional<Row>> read_row(std::string_view table, std::int64_t id) override {
    Statement st(*this);
    const OpDesc first{name(Stmt::read_row), {server_.row_object(table, id), Access::read}, id, true};
    if (auto refused = begin_statement(first)) return *refused;
    std::optional<Row> row = visible(table, id);
    if (s_.logging()) s_.note_detail(row_text(row));
    return row;
  }

  Status insert_row(std::string_view table, std::int64_t id, const Row& values) override {
    Statement st(*this);
    const Result<bool> inserted = insert(table, id, values, Stmt::insert_row);
    return inserted.ok() ? Status() : Status(inserted.error());
  }

  Result<bool> insert_row_if_absent(std::string_view table, std::int64_t id, const Row& values) override {
    Statement st(*this);
    return insert(table, id, values, Stmt::insert_row_if_absent);
  }

  Result<int> update_row(std::string_view table, std::int64_t id, const Row& values) override {
    Statement st(*this);
    if (dead_) return lost();
    const Result<bool> locked = lock_row(table, id, false, Stmt::update_row);
    if (!locked.ok()) return locked.error();
    std::optional<Row> row = locked.value() ? visible(table, id) : std::nullopt;  // the newest committed version, after the wait
    const bool found = row.has_value();
    if (found) {
      for (const auto& [k, v] : values) (*row)[k] = v;
      server_.row(table, id).pending[pid_] = std::move(row);
      wrote(table, id);
    }
    if (s_.logging()) s_.add_detail(found ? "set " + row_text(values) : std::string("no row"));
    if (Status ended = end_statement(); !ended.ok()) return ended.error();
    return found ? 1 : 0;
  }

  Result<std::optional<Row>> select_for_update(std::string_view table, std::int64_t id, bool nowait) override {
    Statement st(*this);
    if (dead_) return lost();
    const Result<bool> locked = lock_row(table, id, nowait, nowait ? Stmt::select_for_update_nowait : Stmt::select_for_update);
    if (!locked.ok()) return locked.error();
    std::optional<Row> row = locked.value() ? visible(table, id) : std::nullopt;
    if (s_.logging()) s_.note_detail(row_text(row));
    if (Status ended = end_statement(); !ended.ok()) return ended.error();
    return row;
  }

  Result<std::optional<Row>> select_for_update_skip_locked(std::string_view table, std::int64_t id) override {
    Statement st(*this);
    const OpDesc first = narrowing({name(Stmt::select_for_update_skip_locked), {server_.row_object(table, id), Access::acquire}, id, true});
    if (auto refused = begin_statement(first)) return *refused;
    const AdvisoryKey key = server_.row_key(table, id);
    bool got = visible(table, id).has_value();
    if (got && server_.row_locks().held(pid_, key, LockMode::exclusive) == 0) {
      got = server_.row_locks().try_request(pid_, key, LockMode::exclusive, Scope::transaction);
      if (got) locked_rows_.emplace(std::string(table), id);
    }
    if (!got) s_.refine_access(Access::read);  // absent, or locked by another: skipped
    s_.note_result({Kind::value, got ? 1 : 0});
    std::optional<Row> row = got ? visible(table, id) : std::nullopt;
    if (s_.logging()) s_.note_detail(row_text(row));
    if (Status ended = end_statement(); !ended.ok()) return ended.error();
    return row;
  }

  Result<std::optional<Row>> select_for_share(std::string_view table, std::int64_t id) override {
    Statement st(*this);
    if (dead_) return lost();
    const Result<bool> locked = lock_row(table, id, false, Stmt::select_for_share, LockMode::shared);
    if (!locked.ok()) return locked.error();
    std::optional<Row> row = locked.value() ? visible(table, id) : std::nullopt;
    if (s_.logging()) s_.note_detail(row_text(row));
    if (Status ended = end_statement(); !ended.ok()) return ended.error();
    return row;
  }

  Result<int> update_row_if(std::string_view table, std::int64_t id, std::string_view column, std::string_view expected,
                            const Row& values) override {
    Statement st(*this);
    if (dead_) return lost();
    auto matches = [&] {
      const std::optional<Row>& row = visible(table, id);
      if (!row) return false;
      const auto it = row->find(std::string(column));
      return it != row->end() && it->second == expected;
    };
    // A row that does not match as the statement first sees it is neither locked nor
    // waited for: lock_row's step reads it.
    const Result<bool> locked = lock_row(table, id, false, Stmt::update_row_if, LockMode::exclusive, matches);
    if (!locked.ok()) return locked.error();
    // After a wait, the newest committed version is checked again; a row that no longer
    // matches stays locked (as the server's EvalPlanQual leaves it) and is not changed.
    const bool change = locked.value() && matches();
    if (change) {
      std::optional<Row> row = visible(table, id);
      for (const auto& [k, v] : values) (*row)[k] = v;
      server_.row(table, id).pending[pid_] = std::move(row);
      wrote(table, id);
    }
    if (Status ended = end_statement(); !ended.ok()) return ended.error();
    return change ? 1 : 0;
  }

  Status begin() override {
    Statement st(*this);
    if (auto refused = begin_statement({name(Stmt::begin), {}, pid_, true})) return *refused;
    if (session_.in_transaction) warnings_.push_back({"25001", "there is already a transaction in progress"});
    session_.in_transaction = true;
    return {};
  }
  Status commit() override { return end_transaction(Stmt::commit); }
  Status rollback() override { return end_transaction(Stmt::rollback); }

  Result<std::vector<AdvisoryLockRow>> advisory_locks() override {
    Statement st(*this);
    const OpDesc first{name(Stmt::pg_locks), whole_server(Access::read), pid_, true};
    if (auto refused = begin_statement(first)) return *refused;
    std::vector<AdvisoryLockRow> rows = server_.advisory_lock_rows(s_.now());
    s_.note_result({Kind::value, static_cast<std::int64_t>(rows.size())});
    return rows;
  }

  Result<bool> terminate_backend(int pid) override {
    Statement st(*this);
    const OpDesc first{name(Stmt::pg_terminate_backend), whole_server(Access::write), pid, true};
    if (auto refused = begin_statement(first)) return *refused;
    Session* victim = server_.live_session(pid);
    s_.note_result({Kind::value, victim != nullptr ? 1 : 0});
    if (victim == nullptr) {
      warnings_.push_back({std::string(sqlstate::kWarning), fmt::format("PID {} is not a PostgreSQL backend process", pid)});
      return false;
    }
    server_.terminate(*victim);
    if (victim == &session_) {
      // Its own backend: this statement ends with it, and libpq reports the connection lost
      // without a SQLSTATE, as after an idle termination (checked by lockstep conform).
      session_.terminated_idle = true;
      return terminated();
    }
    return true;
  }

  std::vector<Error> take_warnings() override { return std::exchange(warnings_, {}); }

  // Closing ends the session: every lock it holds goes.
  virtual void close() {
    if (dead_) return;
    release_now({.session_scope = true, .xact_scope = true}, "close");
    session_.live = false;
  }

 protected:
  // What the latest statement did, for the statement log (sim/pg/statement_log.h).
  struct LastStatement {
    std::optional<std::uint64_t> first_step;  // none: it took no step (its connection was dead)
    bool waited = false;
    bool by_timer = false;
    bool phantom = false;
    std::size_t warnings_before = 0;
  };
  const LastStatement& last_statement() const { return last_; }
  const std::vector<Error>& pending_warnings() const { return warnings_; }
  Server& server() { return server_; }
  const Session& session() const { return session_; }

 private:
  // One statement, for pg_stat_activity: the session is active from the statement's first
  // step (see step()) until it returns.
  class Statement {
   public:
    explicit Statement(SimConnection& c) : c_(c) {
      c_.in_statement_ = true;
      c_.last_ = {std::nullopt, false, false, false, c_.warnings_.size()};
    }
    ~Statement() {
      c_.in_statement_ = false;
      c_.session_.active = false;
    }
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

   private:
    SimConnection& c_;
  };

  // A footprint that sees or changes every session at once.
  static Footprint whole_server(Access access) {
    Footprint f{kNoObject, access};
    f.domain_write = true;
    return f;
  }

  // A step of this session, in the server's domain. A statement's first step starts it.
  Wake step(OpDesc op, const WaitCondition* guard = nullptr, Duration timeout = kForever) {
    op.footprint.domain = server_.domain();
    const Wake wake = s_.yield(op, guard, timeout);
    last_step_ = {op.footprint, s_.step_count()};
    if (in_statement_ && !session_.active && !last_.first_step) {
      session_.active = true;
      session_.query_start = s_.now();
      last_.first_step = s_.step_count();
    }
    return wake;
  }

  // pg_try_advisory_lock / pg_try_advisory_xact_lock: grants at once or says false. An xact
  // lock taken outside a transaction goes as its statement ends.
  Result<bool> try_lock(AdvisoryKey key, LockMode mode, Scope scope) {
    const Stmt stmt = scope == Scope::session ? Stmt::try_advisory_lock : Stmt::try_advisory_xact_lock;
    const OpDesc first = narrowing({name(in_mode(stmt, mode)), {server_.object_for(key), acquire_access(mode)}, pid_, true});
    if (auto refused = begin_statement(first)) return *refused;
    const bool got = server_.locks().try_request(pid_, key, mode, scope);
    if (!got) s_.refine_access(Access::read);
    s_.note_result({Kind::value, got ? 1 : 0});
    if (got && scope == Scope::transaction && !session_.in_transaction) {
      release_now({.xact_scope = true}, "end of statement");
      if (session_.terminated) return terminated();
    }
    return got;
  }

  // With `set_lock_timeout`, the statement sets the session's lock_timeout first (one
  // statement: advisory_lock_with_timeout).
  Status lock(AdvisoryKey key, LockMode mode, Scope scope, std::optional<Duration> set_lock_timeout = std::nullopt) {
    if (dead_) return lost();
    const ObjectId obj = server_.object_for(key);
    const Stmt stmt = scope == Scope::transaction ? Stmt::advisory_xact_lock
                      : set_lock_timeout          ? Stmt::advisory_lock_timed
                                                  : Stmt::advisory_lock;
    const OpDesc first{name(in_mode(stmt, mode)), {obj, acquire_access(mode)}, pid_, true};
    if (auto refused = begin_statement(first)) return *refused;
    if (set_lock_timeout) lock_timeout_ = *set_lock_timeout;
    if (server_.locks().deadlocks_at_once(pid_, key, mode)) {
      s_.note_result({Kind::failed});
      return abort_with({std::string(sqlstate::kDeadlockDetected), "deadlock detected"});
    }
    auto waiter = server_.locks().request(pid_, key, mode, scope);
    if (!waiter) {
      s_.note_result({Kind::ok});
      return {};
    }
    note_queued(server_.locks(), key, mode);
    return wait_for(server_.locks(), waiter, obj, acquire_access(mode), "advisory_lock_wait");
  }

  // The step queued a request: the log says behind which sessions (those holding the key in
  // a conflicting mode; none: behind conflicting requests queued ahead of it).
  void note_queued(const LockTable& table, AdvisoryKey key, LockMode mode) {
    s_.note_result({Kind::queued});
    if (!s_.logging()) return;
    std::string behind;
    for (const int holder : table.conflicting_holders(pid_, key, mode)) behind += fmt::format("{}{}", behind.empty() ? "" : ", ", holder);
    s_.note_detail(behind.empty() ? "behind requests queued ahead" : "behind " + behind);
  }

  // Waits for a queued request: granted (ok), or lock_timeout / statement_timeout, or a
  // deadlock found by the one check deadlock_timeout into the wait, or the backend
  // terminated (its request canceled).
  Status wait_for(LockTable& table, const std::shared_ptr<Waiter>& waiter, ObjectId obj, Access access,
                  std::string_view verb, std::string what = "") {
    // lock_timeout counts from the start of the wait; statement_timeout from the statement,
    // which started this step: both from now. The deadlock check comes deadlock_timeout in.
    const bool lock_first = lock_timeout_.count() > 0 && (statement_timeout_.count() == 0 || lock_timeout_ <= statement_timeout_);
    const Duration limit = lock_first ? lock_timeout_ : statement_timeout_.count() > 0 ? statement_timeout_ : kForever;
    const Time start = s_.now();
    bool deadlock_checked = false;
    last_.waited = true;
    const WaiterReady ready(*waiter, std::move(what));
    for (;;) {
      const bool check_next = !deadlock_checked && config_.deadlock_timeout < limit;
      const Duration waited = s_.now() - start;
      const Duration wait = check_next ? config_.deadlock_timeout - std::min(waited, config_.deadlock_timeout)
                                       : (limit == kForever ? kForever : limit - std::min(waited, limit));
      OpDesc waiting = granted_wait({verb, {obj, access}, pid_, true});
      waiting.timer_reads_more = check_next;
      const Wake wake = step(waiting, &ready, wait);
      if (session_.terminated) {  // the wait was canceled, or the lock granted and let go again
        s_.note_result({Kind::failed});
        if (s_.logging()) s_.note_detail("57P01 terminated");
        return terminated();
      }
      if (wake == Wake::run) break;
      if (check_next) {  // the deadlock check, once per wait
        deadlock_checked = true;
        // It reads the waits-for graph, which a request by another session on another lock can
        // close into a cycle (found by the sim-pg property). Every edge of a cycle runs to a
        // lock someone holds, and only steps on such locks add, remove or reorder edges: the
        // check reads every held lock (past kMaxExtraObjects of them, the whole domain).
        server_.touch_held_locks();
        // One waits-for graph over advisory and row locks: a cycle may mix them.
        const LockTable* other = &table == &server_.locks() ? &server_.row_locks() : &server_.locks();
        if (waiter->state == Waiter::State::waiting && table.in_deadlock(*waiter, other)) {
          table.cancel(waiter);
          s_.note_result({Kind::failed});
          if (s_.logging()) s_.note_detail("40P01 deadlock detected");
          last_.by_timer = true;
          return abort_with({std::string(sqlstate::kDeadlockDetected), "deadlock detected"});
        }
        if (waiter->state == Waiter::State::waiting) {
          s_.note_result({Kind::woke});
          if (s_.logging()) s_.note_detail("deadlock check (deadlock_timeout): no cycle, still waiting");
          continue;
        }
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

  // The common start of every statement but COMMIT and ROLLBACK (end_transaction): on a
  // dead connection it fails with 08006 and takes no step; otherwise it takes the
  // statement's first step, where a terminated backend or the backend_terminated fault ends
  // it (57P01), and a failed transaction refuses it (25P02). nullopt: go on.
  std::optional<Error> begin_statement(OpDesc op) {
    if (dead_) return lost();
    step(op);
    if (killed()) return terminated();
    if (aborted_) return in_failed_transaction();
    return std::nullopt;
  }

  // Whether this statement finds its backend gone: terminated by another session, or now
  // killed by the backend_terminated fault.
  bool killed() {
    if (session_.terminated) return true;
    if (!config_.backend_terminated || server_.termination_used()) return false;
    if (s_.choose(2, "backend_terminated") == 0) return false;
    server_.use_termination();
    return true;
  }

  // The session ends, the connection is dead. Killed by the fault, its rows and locks go
  // here, in one step; after pg_terminate_backend the server let everything go already.
  Error terminated() {
    if (!session_.terminated) {
      release_now({.rows = true, .session_scope = true, .xact_scope = true}, "backend terminated");
    }
    locked_rows_.clear();
    written_.clear();
    session_.in_transaction = false;
    session_.live = false;
    dead_ = true;
    if (session_.terminated_idle) {
      // The FATAL message arrived while no statement was running: libpq reports the
      // connection lost, without a SQLSTATE (checked by lockstep conform).
      return Error{std::string(sqlstate::kConnectionFailure),
                   "terminating connection due to administrator command; server closed the connection unexpectedly"};
    }
    return Error{std::string(sqlstate::kAdminShutdown), "terminating connection due to administrator command"};
  }

  // An error inside an explicit transaction aborts it: until COMMIT or ROLLBACK every
  // statement fails with 25P02, and COMMIT rolls back (found by lockstep conform).
  // PostgreSQL aborts the transaction at the error itself (AbortTransaction): its row
  // versions are dropped and its row locks and transaction-scope advisory locks go at once
  // (found by lockstep conform); only the failed block stays until ROLLBACK or COMMIT.
  Error abort_with(Error e) {
    if (session_.in_transaction && !aborted_) {
      aborted_ = true;
      release_now({.rows = true, .commit = false, .xact_scope = true}, "abort");
    }
    return e;
  }
  static Error in_failed_transaction() {
    return Error{"25P02", "current transaction is aborted, commands ignored until end of transaction block"};
  }

  static Error lost() { return Error{std::string(sqlstate::kConnectionFailure), "server closed the connection unexpectedly"}; }

  Status end_transaction(Stmt verb) {
    Statement st(*this);
    if (dead_) return lost();
    // One step on every row and transaction lock it ends (session advisory locks survive),
    // as the server ends them at one moment. A release: a pooled connection's return rolls
    // back from a destructor.
    const bool commit = verb == Stmt::commit && !aborted_;  // COMMIT of a failed transaction rolls it back
    const Release end{.rows = true, .commit = commit, .xact_scope = true};
    OpDesc op{name(verb), release_footprint(end), pid_, true};
    op.commits = commit;
    step(op);
    if (session_.terminated) return terminated();
    if (s_.logging()) s_.note_detail(release_detail(end));  // "" when it let nothing go
    if (!session_.in_transaction) {
      // As the server says (found by lockstep conform): not an error, a WARNING.
      warnings_.push_back({"25P01", "there is no transaction in progress"});
    }
    session_.in_transaction = false;
    aborted_ = false;
    apply_release(end);
    return {};
  }

  // INSERT, or INSERT ... ON CONFLICT DO NOTHING (verb): true when it inserted.
  Result<bool> insert(std::string_view table, std::int64_t id, const Row& values, Stmt verb) {
    if (!s_.in_actor() && seed(table, id, values)) return true;
    const OpDesc first{name(verb), {server_.row_object(table, id), Access::write}, id, true};
    if (auto refused = begin_statement(first)) return *refused;
    // A conflict: 23505, or with ON CONFLICT DO NOTHING, no row and no error.
    auto duplicate = [&]() -> Result<bool> {
      if (verb == Stmt::insert_row_if_absent) {
        s_.note_result({Kind::value, 0});
        if (Status ended = end_statement(); !ended.ok()) return ended.error();
        return false;
      }
      return abort_with({std::string(sqlstate::kUniqueViolation),
                         fmt::format("duplicate key value violates unique constraint \"{}_pkey\"", table)});
    };
    RowState& r = server_.row(table, id);
    if (r.pending.count(pid_) != 0) return duplicate();
    // Another transaction wrote the id and has not ended (inserted it, or updated the row):
    // the unique check waits for that transaction, as the server does (on its transaction
    // id), then looks again; a committed row is a duplicate. A row only locked FOR UPDATE is
    // a duplicate at once.
    for (int writer = other_writer(r); writer != 0; writer = other_writer(r)) {
      const AdvisoryKey xact = server_.current_transaction_key(writer);
      auto waiter = server_.row_locks().request(pid_, xact, LockMode::shared, Scope::transaction);
      LOCKSTEP_INVARIANT(waiter != nullptr, "a session with an uncommitted row version holds its transaction key");
      note_queued(server_.row_locks(), xact, LockMode::shared);
      if (Status waited = wait_for(server_.row_locks(), waiter, server_.row_object(table, id), Access::acquire,
                                   "row_lock_wait", fmt::format("the transaction of session {} (it wrote {}#{})", writer, table, id));
          !waited.ok()) {
        return waited.error();
      }
      server_.row_locks().release_key(pid_, xact, Scope::transaction);  // it ended: nothing left to wait for
    }
    if (r.committed) return duplicate();
    const bool locked = server_.row_locks().try_request(pid_, server_.row_key(table, id), LockMode::exclusive, Scope::transaction);
    LOCKSTEP_INVARIANT(locked, "no session locks a row that none sees");
    Row row = values;
    row["id"] = std::to_string(id);
    if (s_.logging()) s_.add_detail(row_text(row));
    r.pending[pid_] = std::move(row);
    wrote(table, id);
    if (Status ended = end_statement(); !ended.ok()) return ended.error();
    return true;
  }

  // Outside any actor (a model building the database it starts from: no step is scheduled
  // there), an autocommit insert of an id nobody has written commits at once, leaving what
  // the statement would leave: the row committed, the row's object made (object numbers
  // follow the order of first use), the session's transaction count moved on, the session
  // idle with its query_start and last step. Its lock-table round trip (the row's key and
  // the transaction's, taken and let go) leaves nothing. Anything else (a transaction open,
  // a row there, a fault that may strike, a statement log) takes the statement's own path:
  // false.
  bool seed(std::string_view table, std::int64_t id, const Row& values) {
    if (dead_ || aborted_ || session_.in_transaction || session_.terminated || config_.backend_terminated || s_.logging() ||
        server_.statement_log() != nullptr) {
      return false;
    }
    const ObjectId obj = server_.row_object(table, id);
    RowState& r = server_.row(table, id);
    if (r.committed || !r.pending.empty()) return false;
    Row row = values;
    row["id"] = std::to_string(id);
    r.committed = std::move(row);
    ++session_.transactions;
    session_.query_start = s_.now();
    last_.first_step = s_.step_count();
    last_step_ = {server_.on(obj, Access::release), s_.step_count()};
    return true;
  }

  // Records a row version this transaction wrote. Its first write takes the transaction's
  // own key (PostgreSQL's lock on its transaction id), which a unique check of another
  // session waits on; the end of the transaction lets it go (apply_release).
  void wrote(std::string_view table, std::int64_t id) {
    if (written_.empty()) {  // a new transaction id
      ++session_.transactions;
      const AdvisoryKey own_key = Server::transaction_key(pid_, session_.transactions);
      const bool own = server_.row_locks().try_request(pid_, own_key, LockMode::exclusive, Scope::transaction);
      LOCKSTEP_INVARIANT(own, "nobody else takes a transaction's own key exclusively");
    }
    written_.emplace(std::string(table), id);
  }

  // Another session with an uncommitted version of the row (at most one: a version needs
  // the row lock), or 0.
  int other_writer(const RowState& r) const {
    for (const auto& [pid, version] : r.pending) {
      if (pid != pid_ && version) return pid;
    }
    return 0;
  }

  // What this session sees of a row: its own uncommitted version, else the committed one
  // (a reference, valid until the row's versions change).
  const std::optional<Row>& visible(std::string_view table, std::int64_t id) {
    const RowState& r = server_.row(table, id);
    if (auto mine = r.pending.find(pid_); mine != r.pending.end()) return mine->second;
    return r.committed;
  }

  // Takes the row lock (transaction scope) of a row this session sees, waiting as for an
  // advisory lock, and says true. A row it does not see (none committed, none of its own:
  // another transaction's uncommitted insert is invisible under READ COMMITTED) is not
  // locked: false, the statement finds no row, and its step only read that it is absent.
  // With `wanted`, a row it sees that `wanted` refuses is not locked either (false).
  Result<bool> lock_row(std::string_view table, std::int64_t id, bool nowait, Stmt verb, LockMode mode = LockMode::exclusive,
                        const std::function<bool()>& wanted = nullptr) {
    const ObjectId obj = server_.row_object(table, id);
    const Access access = acquire_access(mode);
    if (auto refused = begin_statement(narrowing({name(verb), {obj, access}, id, true}))) return *refused;
    if (!visible(table, id) || (wanted && !wanted())) {
      s_.refine_access(Access::read);
      s_.note_result({Kind::value, 0});
      return false;
    }
    const AdvisoryKey key = server_.row_key(table, id);
    if (server_.row_locks().held(pid_, key, LockMode::exclusive) > 0 ||
        (mode == LockMode::shared && server_.row_locks().held(pid_, key, LockMode::shared) > 0)) {
      return true;
    }
    locked_rows_.emplace(std::string(table), id);
    if (nowait) {
      if (server_.row_locks().try_request(pid_, key, LockMode::exclusive, Scope::transaction)) return true;
      locked_rows_.erase({std::string(table), id});
      s_.refine_access(Access::read);
      s_.note_result({Kind::failed});
      return abort_with({std::string(sqlstate::kLockNotAvailable), fmt::format("could not obtain lock on row in relation \"{}\"", table)});
    }
    auto waiter = server_.row_locks().request(pid_, key, mode, Scope::transaction);
    if (!waiter) return true;
    note_queued(server_.row_locks(), key, mode);
    Status st = wait_for(server_.row_locks(), waiter, obj, access, "row_lock_wait",
                         fmt::format("the row lock of {}#{}", table, id));
    if (!st.ok()) {
      locked_rows_.erase({std::string(table), id});
      return st.error();
    }
    return true;
  }

  // Outside an explicit transaction a statement commits when it ends; 57P01 when the
  // backend was terminated meanwhile.
  Status end_statement() {
    if (!session_.in_transaction) release_now({.rows = true, .commit = true}, "autocommit");
    if (session_.terminated) return terminated();
    return {};
  }

  // What ends at one moment: the transaction's rows (committed or dropped, their row locks
  // released) and the advisory holds of the scopes named.
  struct Release {
    bool rows = false;
    bool commit = false;
    bool session_scope = false;
    bool xact_scope = false;
  };

  // The footprint of a release: each key held in its scopes and each row of the
  // transaction, all written by one step in the server's domain (past kMaxExtraObjects, the
  // whole domain). No object when there is nothing to let go of.
  Footprint release_footprint(const Release& r) {
    Footprint f{kNoObject, Access::release};
    f.domain = server_.domain();
    keys_.clear();
    if (r.xact_scope) server_.locks().held_keys(pid_, Scope::transaction, keys_);
    if (r.session_scope) server_.locks().held_keys(pid_, Scope::session, keys_);
    for (const AdvisoryKey& key : keys_) add_object(f, server_.object_for(key));
    if (r.rows) {
      for (const auto& [table, id] : locked_rows_) add_object(f, server_.row_object(table, id));
      for (const auto& [table, id] : written_) add_object(f, server_.row_object(table, id));
    }
    return f;
  }

  // For the event log: what a release lets go, by name, before it does ("released
  // advisory(1,1,2); committed agents#1"), each lock also told to Scheduler::note_released.
  // Call only when logging.
  std::string release_detail(const Release& r) {
    std::string locks, rows;
    auto add = [](std::string& list, const std::string& name) { list += (list.empty() ? "" : ", ") + name; };
    keys_.clear();
    if (r.xact_scope) server_.locks().held_keys(pid_, Scope::transaction, keys_);
    if (r.session_scope) server_.locks().held_keys(pid_, Scope::session, keys_);
    for (const AdvisoryKey& key : keys_) {
      add(locks, s_.object_name(server_.object_for(key)));
      s_.note_released(server_.object_for(key));  // all of them, also past a footprint's kMaxExtraObjects
    }
    if (r.rows) {
      for (const auto& [table, id] : locked_rows_) {
        add(locks, "row lock " + s_.object_name(server_.row_object(table, id)));
        s_.note_released(server_.row_object(table, id));
      }
      for (const auto& [table, id] : written_) add(rows, s_.object_name(server_.row_object(table, id)));
    }
    std::string detail = locks.empty() ? std::string() : "released " + locks;
    if (!rows.empty()) detail += fmt::format("{}{} {}", detail.empty() ? "" : "; ", r.commit ? "committed" : "rolled back", rows);
    return detail;
  }

  // Does what a release's step declared: commit publishes this session's row versions,
  // rollback drops them, either way its row locks go; then the advisory holds go.
  void apply_release(const Release& r) {
    if (r.rows) {
      auto finish = [&](const std::pair<std::string, std::int64_t>& row) {
        RowState& state = server_.row(row.first, row.second);
        if (auto mine = state.pending.find(pid_); mine != state.pending.end()) {
          if (r.commit) state.committed = std::move(mine->second);
          state.pending.erase(mine);
        }
        server_.row_locks().release_key(pid_, server_.row_key(row.first, row.second), Scope::transaction);
      };
      for (const auto& row : locked_rows_) finish(row);
      for (const auto& row : written_) {
        if (!locked_rows_.count(row)) finish(row);
      }
      if (!written_.empty()) {
        server_.row_locks().release_key(pid_, Server::transaction_key(pid_, session_.transactions), Scope::transaction);
      }
      locked_rows_.clear();
      written_.clear();
    }
    if (r.xact_scope) server_.locks().release_all(pid_, Scope::transaction);
    if (r.session_scope) server_.locks().release_all(pid_, Scope::session);
  }

  // A release at the end of a statement (autocommit, an xact lock's statement), a close or
  // a termination: nothing when there is nothing to let go of; part of the step running now
  // when that step writes every object the release does (an autocommit insert publishes
  // the row its step wrote; an xact lock goes at the end of the step that took it), as the
  // server ends the statement at one moment; else a step of its own.
  void release_now(const Release& r, std::string_view verb) {
    const Footprint f = release_footprint(r);
    if (f.object == kNoObject) return;
    if (!within_last_step(f)) {
      step({verb, f, pid_, true});
      if (s_.logging() && !session_.terminated) s_.note_detail(release_detail(r));
    } else if (s_.logging()) {  // for reports: the step that took them also let them go
      for_each_object(f, [&](ObjectId obj, Access) { s_.note_released(obj); });
    }
    if (session_.terminated) return;  // pg_terminate_backend let everything go meanwhile
    apply_release(r);
  }

  // Whether this session's step is still running and writes every object of f.
  bool within_last_step(const Footprint& f) const {
    if (last_step_.number != s_.step_count() || !s_.in_actor() || is_read(s_.current_access()) ||
        s_.current_access() == Access::none || f.domain_write) {
      return false;
    }
    bool all = true;
    for_each_object(f, [&](ObjectId obj, Access) {
      bool found = false;
      for_each_object(last_step_.fp, [&](ObjectId mine, Access) { found = found || mine == obj; });
      all = all && found;
    });
    return all;
  }

  Server& server_;
  Scheduler& s_;
  Session& session_;
  int pid_;
  PoolConfig config_;
  // This transaction's rows, in (table, id) order; flat: a set per statement allocated.
  boost::container::flat_set<std::pair<std::string, std::int64_t>> locked_rows_, written_;
  std::vector<AdvisoryKey> keys_;  // scratch of release_footprint, reused
  struct {
    Footprint fp;
    std::uint64_t number = ~std::uint64_t{0};
  } last_step_;  // this session's latest step, as declared
  bool dead_ = false;
  bool aborted_ = false;  // the explicit transaction failed (25P02 until it ends)
  bool in_statement_ = false;
  Duration lock_timeout_{0};
  Duration statement_timeout_{0};
  std::vector<Error> warnings_;
  LastStatement last_;
};

// A SimConnection that records every statement in the server's StatementLog.
class LoggedSimConnection final : public SimConnection {
 public:
  LoggedSimConnection(Server& server, const PoolConfig& config, StatementLog& log)
      : SimConnection(server, config), log_(log) {}

  Status advisory_lock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::advisory_lock, mode), key), [&] { return SimConnection::advisory_lock(key, mode); });
  }
  Status advisory_lock_with_timeout(AdvisoryKey key, LockMode mode, Duration t) override {
    LoggedStatement e = keyed(in_mode(Stmt::advisory_lock_timed, mode), key);
    e.timeout = t;
    return record(std::move(e), [&] { return SimConnection::advisory_lock_with_timeout(key, mode, t); });
  }
  Result<bool> try_advisory_lock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::try_advisory_lock, mode), key),
                  [&] { return SimConnection::try_advisory_lock(key, mode); });
  }
  Result<bool> advisory_unlock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::advisory_unlock, mode), key),
                  [&] { return SimConnection::advisory_unlock(key, mode); });
  }
  Status advisory_unlock_all() override { return record(named(Stmt::advisory_unlock_all), [&] { return SimConnection::advisory_unlock_all(); }); }
  Status advisory_xact_lock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::advisory_xact_lock, mode), key),
                  [&] { return SimConnection::advisory_xact_lock(key, mode); });
  }
  Result<bool> try_advisory_xact_lock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::try_advisory_xact_lock, mode), key), [&] { return SimConnection::try_advisory_xact_lock(key, mode); });
  }
  Status set_lock_timeout(Duration t) override {
    LoggedStatement e = named(Stmt::set_lock_timeout);
    e.timeout = t;
    return record(std::move(e), [&] { return SimConnection::set_lock_timeout(t); });
  }
  Status set_statement_timeout(Duration t) override {
    LoggedStatement e = named(Stmt::set_statement_timeout);
    e.timeout = t;
    return record(std::move(e), [&] { return SimConnection::set_statement_timeout(t); });
  }
  Result<std::optional<Row>> read_row(std::string_view table, std::int64_t id) override {
    return record(row_op(Stmt::read_row, table, id, {}), [&] { return SimConnection::read_row(table, id); });
  }
  Status insert_row(std::string_view table, std::int64_t id, const Row& values) override {
    return record(row_op(Stmt::insert_row, table, id, values), [&] { return SimConnection::insert_row(table, id, values); });
  }
  Result<bool> insert_row_if_absent(std::string_view table, std::int64_t id, const Row& values) override {
    return record(row_op(Stmt::insert_row_if_absent, table, id, values),
                  [&] { return SimConnection::insert_row_if_absent(table, id, values); });
  }
  Result<int> update_row_if(std::string_view table, std::int64_t id, std::string_view column, std::string_view expected,
                            const Row& values) override {
    LoggedStatement e = row_op(Stmt::update_row_if, table, id, values);
    e.column = std::string(column);
    e.expected = std::string(expected);
    return record(std::move(e), [&] { return SimConnection::update_row_if(table, id, column, expected, values); });
  }
  Result<std::optional<Row>> select_for_update_skip_locked(std::string_view table, std::int64_t id) override {
    return record(row_op(Stmt::select_for_update_skip_locked, table, id, {}),
                  [&] { return SimConnection::select_for_update_skip_locked(table, id); });
  }
  Result<std::optional<Row>> select_for_share(std::string_view table, std::int64_t id) override {
    return record(row_op(Stmt::select_for_share, table, id, {}), [&] { return SimConnection::select_for_share(table, id); });
  }
  Result<int> update_row(std::string_view table, std::int64_t id, const Row& values) override {
    return record(row_op(Stmt::update_row, table, id, values), [&] { return SimConnection::update_row(table, id, values); });
  }
  Result<std::optional<Row>> select_for_update(std::string_view table, std::int64_t id, bool nowait) override {
    return record(row_op(nowait ? Stmt::select_for_update_nowait : Stmt::select_for_update, table, id, {}),
                  [&] { return SimConnection::select_for_update(table, id, nowait); });
  }
  Status begin() override { return record(named(Stmt::begin), [&] { return SimConnection::begin(); }); }
  Status commit() override { return record(named(Stmt::commit), [&] { return SimConnection::commit(); }); }
  Status rollback() override { return record(named(Stmt::rollback), [&] { return SimConnection::rollback(); }); }
  Result<std::vector<AdvisoryLockRow>> advisory_locks() override {
    return record(named(Stmt::pg_locks), [&] { return SimConnection::advisory_locks(); });
  }
  Result<bool> terminate_backend(int pid) override {
    LoggedStatement e = named(Stmt::pg_terminate_backend);
    e.target_pid = pid;
    return record(std::move(e), [&] { return SimConnection::terminate_backend(pid); });
  }
  void close() override {
    if (dead()) return;
    const std::uint64_t before = server().scheduler().step_count();
    SimConnection::close();
    LoggedStatement e = named(Stmt::close);
    e.first_step = before + 1;
    e.last_step = std::max(before + 1, server().scheduler().step_count());
    e.locks_after = server().advisory_lock_rows(server().scheduler().now());
    log_.push_back(std::move(e));
  }

 private:
  LoggedStatement named(Stmt op) const {
    LoggedStatement e;
    e.op = op;
    e.pid = backend_pid();
    e.application_name = session().application_name;
    return e;
  }
  LoggedStatement keyed(Stmt op, AdvisoryKey key) const {
    LoggedStatement e = named(op);
    e.key = key;
    return e;
  }
  LoggedStatement row_op(Stmt op, std::string_view table, std::int64_t id, const Row& values) const {
    LoggedStatement e = named(op);
    e.table = std::string(table);
    e.id = id;
    e.values = values;
    return e;
  }

  static std::string text(const bool& v) { return v ? "t" : "f"; }
  static std::string text(const int& v) { return std::to_string(v); }
  static std::string text(const std::optional<Row>& row) {
    if (!row) return "";
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, v] : *row) j[k] = v;
    return j.dump();
  }
  static std::string text(const std::vector<AdvisoryLockRow>& rows) { return std::to_string(rows.size()) + " rows"; }

  // Runs the statement and records it; a statement the end of the execution interrupts
  // (still waiting, say) is recorded as unfinished.
  template <typename F>
  auto record(LoggedStatement e, F statement) -> decltype(statement()) {
    using R = decltype(statement());
    std::optional<R> result;
    try {
      result.emplace(statement());
    } catch (const ExecutionAborted&) {
      const LastStatement& last = last_statement();
      e.last_step = server().scheduler().step_count();
      e.first_step = last.first_step.value_or(e.last_step);
      e.waited = last.waited;
      e.unfinished = true;
      log_.push_back(std::move(e));
      throw;
    }
    return finish(std::move(e), std::move(*result));
  }

  template <typename R>
  R finish(LoggedStatement e, R result) {
    const LastStatement& last = last_statement();
    Scheduler& s = server().scheduler();
    e.last_step = s.step_count();
    e.first_step = last.first_step.value_or(e.last_step);
    e.waited = last.waited;
    e.by_timer = last.by_timer;
    e.phantom = last.phantom;
    if (!result.ok()) {
      e.error = result.error();
    } else if constexpr (!std::is_same_v<R, Status>) {
      e.value = text(result.value());
    }
    const auto& warnings = pending_warnings();
    e.warnings.assign(warnings.begin() + static_cast<std::ptrdiff_t>(std::min(last.warnings_before, warnings.size())), warnings.end());
    e.locks_after = server().advisory_lock_rows(s.now());
    log_.push_back(std::move(e));
    return result;
  }

  StatementLog& log_;
};

class SimPool final : public lockstep::pg::Pool, public WaitCondition {
 public:
  SimPool(Server& server, PoolConfig config)
      : server_(server), s_(server.scheduler()), config_(config), object_(server.new_pool_object()) {}

  Result<PooledConnection> checkout() override {
    s_.yield({"checkout", server_.on(object_, Access::acquire)});
    if (!available()) {
      s_.note_result({Kind::failed});
      if (s_.yield({"checkout_wait", server_.on(object_, Access::acquire)}, this, config_.timeout) == Wake::timer) {
        s_.note_result({Kind::timeout});
        return Error{std::string(lockstep::pg::sqlstate::kPoolTimeout),
                     fmt::format("QueuePool limit of size {} overflow {} reached, connection timed out, timeout {:.2f}",
                                 config_.pool_size, config_.max_overflow,
                                 std::chrono::duration<double>(config_.timeout).count())};
      }
    }
    std::unique_ptr<SimConnection> c;
    if (!idle_.empty()) {
      c = std::move(idle_.front());
      idle_.pop_front();
    } else {
      c = server_.statement_log() ? std::make_unique<LoggedSimConnection>(server_, config_, *server_.statement_log())
                                  : std::make_unique<SimConnection>(server_, config_);
      ++open_;
    }
    s_.note_result({Kind::value, c->backend_pid()});
    ++checked_out_;
    return PooledConnection(std::move(c), [this](std::unique_ptr<lockstep::pg::Connection> back) {
      give_back(std::unique_ptr<SimConnection>(static_cast<SimConnection*>(back.release())));
    });
  }

  PoolConfig config() const override { return config_; }
  int checked_out() const override { return checked_out_; }

  bool ready(ActorId) const override { return available(); }
  std::string describe(ActorId) const override {
    return fmt::format("a connection from the pool ({} open, {} checked out, size {} overflow {})", open_, checked_out_,
                       config_.pool_size, config_.max_overflow);
  }

 private:
  bool available() const { return !idle_.empty() || open_ < config_.pool_size + config_.max_overflow; }

  // QueuePool's return: ROLLBACK when a transaction is open (psycopg2's rollback sends
  // nothing otherwise; session locks stay either way), then back to the queue, or closed
  // when the pool already keeps pool_size idle connections.
  void give_back(std::unique_ptr<SimConnection> c) {
    if (c->in_transaction()) (void)c->rollback();
    s_.yield({"return", server_.on(object_, Access::release), c->backend_pid(), true});
    --checked_out_;
    if (c->dead()) {
      --open_;  // the pool discards a connection whose backend died
    } else if (static_cast<int>(idle_.size()) < config_.pool_size) {
      idle_.push_back(std::move(c));
    } else {
      c->close();
      --open_;
    }
  }

  Server& server_;
  Scheduler& s_;
  PoolConfig config_;
  ObjectId object_;  // this pool's queue
  std::deque<std::unique_ptr<SimConnection>> idle_;
  int open_ = 0;
  int checked_out_ = 0;
};

}  // namespace

Session& Server::open_session(std::string application_name) {
  const int pid = next_pid_++;
  Session& s = sessions_[pid];
  s.pid = pid;
  s.application_name = std::move(application_name);
  return s;
}

Session* Server::live_session(int pid) {
  auto it = sessions_.find(pid);
  return it != sessions_.end() && it->second.live ? &it->second : nullptr;
}

void Server::terminate(Session& victim) {
  for (auto& [table, rows] : tables_) {
    for (auto& [id, row] : rows) {
      RowState& r = row.state;
      auto mine = r.pending.find(victim.pid);
      if (mine == r.pending.end()) continue;
      r.pending.erase(mine);  // a commit is one step: never half done when this runs
    }
  }
  row_locks_.end_session(victim.pid);
  locks_.end_session(victim.pid);
  victim.terminated = true;
  victim.terminated_idle = !victim.active;
  victim.live = false;
  victim.active = false;
  victim.in_transaction = false;
}

std::vector<AdvisoryLockRow> Server::advisory_lock_rows(Time now) const {
  std::vector<AdvisoryLockRow> rows;
  for (const LockEntry& e : locks_.entries()) {
    auto it = sessions_.find(e.session);
    if (it == sessions_.end() || !it->second.live) continue;  // the join with pg_stat_activity
    const Session& s = it->second;
    const std::string_view state = s.active ? "active" : s.in_transaction ? "idle in transaction" : "idle";
    rows.push_back({s.pid, s.application_name, std::string(state), s.query_start, e.key.classid(), e.key.objid(),
                    e.key.objsubid(), std::string(lock_type(e.mode)), e.granted, now - s.query_start});
  }
  std::sort(rows.begin(), rows.end(), [](const AdvisoryLockRow& a, const AdvisoryLockRow& b) {
    return std::tie(a.pid, a.classid, a.objid, a.objsubid, a.mode, a.granted) <
           std::tie(b.pid, b.classid, b.objid, b.objsubid, b.mode, b.granted);
  });
  return rows;
}

ObjectId Server::object_for(AdvisoryKey key) {
  auto [it, inserted] = objects_.emplace(key, kNoObject);
  if (inserted) it->second = s_.new_object(fmt::format("advisory({},{},{})", key.classid(), key.objid(), key.objsubid()));
  return it->second;
}

void Server::touch_held_locks() {
  for (const auto& [key, obj] : objects_) {
    if (locks_.held_by_anyone(key)) s_.also_touch(obj);
  }
  for (const auto& [table, rows] : tables_) {
    for (const auto& [id, slot] : rows) {
      const ObjectId obj = slot.object;
      if (obj != kNoObject && row_locks_.held_by_anyone(AdvisoryKey::single(static_cast<std::int64_t>(obj)))) {
        s_.also_touch(obj);  // row_key(table, id)
      }
    }
  }
}

AdvisoryKey Server::row_key(std::string_view table, std::int64_t id) {
  // The row's own object number: one key per (table, id), whatever the id's 64 bits. Row
  // locks have a table of their own, so these keys never meet advisory ones.
  return AdvisoryKey::single(static_cast<std::int64_t>(row_object(table, id)));
}

Server::RowSlot& Server::slot(std::string_view table, std::int64_t id) {
  // A model names a handful of tables, several times a statement: a scan of their names
  // costs less than the ordered map's string comparisons.
  for (const auto& [name, rows] : table_index_) {
    if (name == table) return (*rows)[id];
  }
  auto& [name, rows] = *tables_.emplace(std::string(table), std::map<std::int64_t, RowSlot>()).first;
  table_index_.emplace_back(name, &rows);
  return rows[id];
}

ObjectId Server::row_object(std::string_view table, std::int64_t id) {
  RowSlot& row = slot(table, id);
  if (row.object == kNoObject) {
    std::string name(table);  // "{table}#{id}", without fmt's parsing: a few times per execution
    name += '#';
    name += std::to_string(id);
    row.object = s_.new_object(std::move(name));
  }
  return row.object;
}

std::unique_ptr<lockstep::pg::Pool> make_pool(Server& server, const PoolConfig& config) {
  return std::make_unique<SimPool>(server, config);
}

}  // namespace lockstep::sim::pg
