// sim/pg/server/connection.h: one simulated backend session (SimConnection), the server side of
// lockstep::pg::Connection for one execution. Its statements live by job in
// advisory_locks.cc, rows.cc and release.cc; the statement-logging wrapper in
// logged_connection.cc; the pool in pool.cc. Internal to sim/pg.
// Guarantees: every statement is a visible step with the footprint sim_pg.h describes; a
// session's locks and rows are released at one step, as the server does.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <boost/container/flat_set.hpp>
#include <fmt/format.h>

#include "lockstep/model/sql/session_style.h"
#include "lockstep/sim/invariant.h"
#include "lockstep/sim/pg/server/sim_pg.h"

namespace lockstep::sim::pg {


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
inline std::string row_text(const std::optional<Row>& row) {
  if (!row) return "no row";
  std::string out = "{";
  for (const auto& [column, value] : *row) out += fmt::format("{}{}={}", out.size() > 1 ? ", " : "", column, value);
  return out + "}";
}

inline std::string_view lock_type(Mode mode) { return mode == Mode::exclusive ? "ExclusiveLock" : "ShareLock"; }
// The footprint of a request: the modes that conflict with themselves (no_key_update,
// exclusive) as an acquire, the others as a shared acquire (ordered against acquires, not
// against each other). A key_share and a no_key_update request are ordered although they
// do not conflict: sound, one reordering more than needed.
inline Access acquire_access(Mode mode) { return modes_conflict(mode, mode) ? Access::acquire : Access::acquire_shared; }
inline Access acquire_access(LockMode mode) { return acquire_access(mode_of(mode)); }

class WaiterReady final : public WaitCondition {
 public:
  // `what` names the lock waited for; "" for an advisory lock (named by its key).
  // `idle_epoch`: the server's count of sessions gone idle under an idle timeout; a change
  // since see() wakes the waiter, whose timer then counts to the new deadline too.
  WaiterReady(const Waiter& w, std::string what, const std::uint64_t* idle_epoch = nullptr)
      : w_(w), what_(std::move(what)), idle_epoch_(idle_epoch) {}
  bool ready(ActorId) const override {
    return w_.state != Waiter::State::waiting || w_.moved_up || w_.claim || w_.recheck || idle_changed();
  }
  void see_idle_epoch() { seen_ = idle_epoch_ != nullptr ? *idle_epoch_ : 0; }
  bool idle_changed() const { return idle_epoch_ != nullptr && *idle_epoch_ != seen_; }
  std::string describe(ActorId) const override {
    if (!what_.empty()) return what_;
    return fmt::format("advisory lock ({}, {}, {}) in {} mode", w_.key.classid(), w_.key.objid(), w_.key.objsubid(),
                       w_.mode == Mode::exclusive ? "exclusive" : "shared");
  }

 private:
  const Waiter& w_;
  std::string what_;
  const std::uint64_t* idle_epoch_;
  std::uint64_t seen_ = 0;
};
class SimConnection : public lockstep::pg::Connection {
 public:
  SimConnection(Server& server, const PoolConfig& config)
      : server_(server),
        s_(server.scheduler()),
        session_(server.open_session(config.application_name)),
        pid_(session_.pid),
        config_(config),
        deadlock_timeout_(config.deadlock_timeout) {
    session_settings_.deadlock_timeout = settings_at_begin_.deadlock_timeout = config.deadlock_timeout;
    start_style_ = style_ = sql::startup_style(config.settings);
  }

  bool dead() const { return dead_; }
  // In a transaction block (an open or a failed one): a ROLLBACK has something to end.
  bool in_transaction() const { return session_.in_transaction; }

  int backend_pid() const override { return pid_; }

  Status advisory_lock(AdvisoryKey key, LockMode mode) override;

  Status advisory_lock_with_timeout(AdvisoryKey key, LockMode mode, Duration lock_timeout) override;

  Result<bool> try_advisory_lock(AdvisoryKey key, LockMode mode) override;

  Result<bool> advisory_unlock(AdvisoryKey key, LockMode mode) override;

  Status advisory_unlock_all() override;

  Status advisory_xact_lock(AdvisoryKey key, LockMode mode) override;

  Result<bool> try_advisory_xact_lock(AdvisoryKey key, LockMode mode) override;

  Status set_lock_timeout(Duration t) override;
  Status set_statement_timeout(Duration t) override;
  // The timeouts a session sets: lock_timeout, statement_timeout, deadlock_timeout and
  // idle_in_transaction_session_timeout.
  enum class Timeout { lock, statement, deadlock, idle, idle_session };
  // SET [LOCAL] of a timeout as one statement (SQL's SET and the two above).
  Status set_timeout(Timeout which, Duration t, bool local);
  // The setting changed without a step of its own (a statement that sets it first).
  void apply_timeout(Timeout which, Duration t, bool local);
  // idle_in_transaction_session_timeout and idle_session_timeout: the server ends a session
  // idle (in a transaction, or out of one) longer than that (FATAL). Timed, after SQL text: at
  // that moment (Session::idle_until), as the first statement after it or a lock wait's timer
  // finds (end_idle_sessions); its client learns it at its next statement. Not modelled, so
  // the next statement is refused (0A000): untimed, after any idle moment (it may be that
  // long); timed, after a typed operation's idle moment longer than the timeout.
  std::optional<Error> idle_timeout_refusal() const;
  // A statement's first step: ends the sessions idle past their timeout (the step then writes
  // the server), and this one is idle no longer.
  void end_idle_sessions();
  // SQL's answer sent (a string's at its end): idle from here, under the timeout in effect (timed:
  // a step that sets the session's deadline; untimed: the next SQL is refused).
  void went_idle();
  // SET [LOCAL] enable_seqscan (and the other planner switches, model/sql/functions.h) as
  // one statement: bit `which` of the switches turned off. Kept as the timeouts are (SET
  // LOCAL until the transaction ends, undone by a rollback).
  Status set_planner_switch(int which, bool on, bool local);
  bool planner_switch(int which) const { return (planner_off_ & (1U << which)) == 0; }
  // SET [LOCAL] of a custom setting (a placeholder, `que.skip_notify`: a name with a dot) as
  // one statement, or set_config's (`value` nullopt: RESET). Kept as the timeouts are; a
  // placeholder once set stays defined for the session, as '' when no value is in effect.
  Status set_custom(const std::string& name, std::optional<std::string> value, bool local);
  // Its value now; nullopt when the session never set it (current_setting: 42704).
  std::optional<std::string> custom_setting(const std::string& name) const;
  // The timeout in effect now.
  Duration timeout(Timeout which) const {
    return which == Timeout::lock ? lock_timeout_ : which == Timeout::statement ? statement_timeout_ : which == Timeout::deadlock ? deadlock_timeout_ : which == Timeout::idle ? idle_timeout_ : idle_session_timeout_;
  }
  // SELECT pg_sleep(s): a statement that sleeps d inside it (a timer: exactly d in timed
  // mode, any moment in untimed); a shorter statement_timeout cancels it with 57014.
  Status sleep_statement(Duration d);

  Result<std::optional<Row>> read_row(std::string_view table, std::int64_t id) override;

  Status insert_row(std::string_view table, std::int64_t id, const Row& values) override;

  Result<bool> insert_row_if_absent(std::string_view table, std::int64_t id, const Row& values) override;

  Result<int> update_row(std::string_view table, std::int64_t id, const Row& values) override;

  Result<std::optional<Row>> select_for_update(std::string_view table, std::int64_t id, bool nowait) override;

  Result<std::optional<Row>> select_for_update_skip_locked(std::string_view table, std::int64_t id) override;

  Result<std::optional<Row>> select_for_share(std::string_view table, std::int64_t id) override;

  Result<int> update_row_if(std::string_view table, std::int64_t id, std::string_view column, std::string_view expected,
                            const Row& values) override;

  Status begin() override;
  Status commit() override { return end_transaction(Stmt::commit); }
  // SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT (sim/pg/server/savepoints.cc). ROLLBACK
  // TO undoes the rows written and lets go of the row locks taken since the savepoint, in
  // one step on them, and ends a failed state; the savepoint stays. Table locks and
  // transaction-scope advisory locks taken since go; a unique check of another session
  // waiting on a row written since stops waiting (the subtransaction's key goes).
  Status savepoint(const std::string& name);
  // LOCK TABLE (sim/pg/lock/table_locks.cc): each table's lock in turn, in a transaction block,
  // waiting as the server does (NOWAIT: 55P03); every step on them writes the server's domain.
  Status lock_tables(const std::vector<std::pair<std::string, AdvisoryKey>>& tables, Mode mode, bool nowait);
  // VACUUM (outside a transaction block: 25001) and ANALYZE: each table's lock in `mode`,
  // for the statement or the transaction; nothing else a statement can see changes.
  Status maintain_tables(const std::vector<std::pair<std::string, AdvisoryKey>>& tables, Mode mode, std::string_view verb);
  // The weak lock a SQL statement takes on its table (ACCESS SHARE, ROW SHARE for a locking
  // clause, ROW EXCLUSIVE for a write), taken in the statement's first step
  // (begin_statement) and held to the end of the transaction. It waits only behind LOCK
  // TABLE's strong modes, whose steps write the domain: otherwise it changes no footprint.
  void take_table_lock_first(AdvisoryKey key, Mode mode, std::string table) {
    implicit_table_locks_.push_back(TableLockRequest{key, mode, std::move(table)});
  }
  void forget_table_lock_request() { implicit_table_locks_.clear(); }
  Status release_savepoint(const std::string& name);
  Status rollback_to_savepoint(const std::string& name);
  // A plpgsql EXCEPTION block's subtransaction (BeginInternalSubTransaction), in or outside a
  // transaction block: an unnamed savepoint (its index in the list), released when the block
  // ends, or rolled back after an error it catches or lets through (its rows, row and table
  // locks go at once, in a step when it changed any; `was_aborted`: the state to go back to).
  std::size_t begin_internal_subtransaction();
  void release_internal_subtransaction(std::size_t at);
  void rollback_internal_subtransaction(std::size_t at, bool was_aborted);
  Status rollback() override { return end_transaction(Stmt::rollback); }

  Result<std::vector<AdvisoryLockRow>> advisory_locks() override;

  Result<bool> terminate_backend(int pid) override;
  // pg_cancel_backend(pid): true when a backend has that pid (Server::cancel).
  Result<bool> cancel_backend(int pid);
  // The step of pg_cancel_backend / pg_terminate_backend (it writes the whole server): the
  // live session with that pid, or nullptr and the server's warning.
  Result<Session*> signal_step(std::string_view verb, int pid);

  std::vector<Error> take_warnings() override { return std::exchange(warnings_, {}); }
  std::vector<lockstep::pg::Notification> take_notifications() override { return std::exchange(session_.notifications_sent, {}); }
  bool in_pg_sleep() const override { return session_.sleeping; }

  // SQL, as the server runs it (sim/pg/executor/sql_exec.cc; the subset in docs/sql.md).
  Result<lockstep::pg::Rows> exec(std::string_view sql, const std::vector<lockstep::pg::Param>& params) override;
  void begin_query_string(std::string_view whole) override {
    in_query_string_ = true;
    string_text_.assign(whole);
    string_start_ = arrival();
  }
  void end_query_string() override {
    in_query_string_ = false;
    string_text_.clear();
    string_start_.reset();
    end_implicit_block();
    session_.active = false;
    went_idle();
  }
  Status prepare(std::string_view name, std::string_view sql) override;
  Result<lockstep::pg::Rows> exec_prepared(std::string_view name, const std::vector<lockstep::pg::Param>& params) override;
  // The statements of a text (one, or several separated by semicolons), each run in turn.
  Result<lockstep::pg::Rows> run_statements(const std::shared_ptr<const std::vector<sql::Statement>>& plans,
                                            const std::vector<lockstep::pg::Param>& params);
  // DO: its statements in turn, outside the sessions only (sim/pg/executor/sql_do.cc); run_plpgsql
  // sets `stopped` at a RETURN.
  Result<lockstep::pg::Rows> run_do(const sql::DoBlock& d);
  std::optional<lockstep::pg::Error> run_plpgsql(const std::vector<sql::PlStatement>& body, bool& stopped);

  // Closing ends the session: every lock it holds goes.
  virtual void close();

 protected:
  // What the latest statement did, for the statement log (sim/pg/server/statement_log.h).
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
  friend class SqlRun;  // one SQL statement's run (sim/pg/executor/sql_exec.cc)
  friend class PlRun;   // a plpgsql function's run (sim/pg/executor/sql_plpgsql.cc): its RAISE NOTICE
  friend struct SqlSsi;  // its serializable snapshot isolation (sim/pg/executor/sql_ssi.h)

  // One statement, for pg_stat_activity: the session is active from the statement's first
  // step (see step()) until it returns.
  class Statement {
   public:
    explicit Statement(SimConnection& c) : c_(c) {
      if (c_.statement_depth_++ == 0) {  // statement_timeout counts from here, as it was set here (its timer is armed)
        c_.statement_began_ = c_.s_.now();
        c_.statement_timeout_armed_ = c_.statement_timeout_;
      }
      c_.in_statement_ = true;
      c_.last_ = {std::nullopt, false, false, false, c_.warnings_.size()};
    }
    ~Statement() {
      --c_.statement_depth_;
      c_.in_statement_ = false;
      // A string of statements keeps its session active (and its query_start) to its end.
      if (!c_.in_query_string_) c_.session_.active = false;
      // A typed operation's end: idle from here, as idle_timeout_refusal weighs (SQL text's
      // idle moments are modelled: went_idle).
      if (c_.sql_depth_ == 0) c_.idle_since_ = c_.s_.now();
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
  // `server_timer`: the timeout is the server's own (the deadlock check), which the timing
  // model's jitter leaves as configured; the client's timeouts (lock_timeout, ...) it varies.
  Wake step(OpDesc op, const WaitCondition* guard = nullptr, Duration timeout = kForever, bool server_timer = false);

  // pg_try_advisory_lock / pg_try_advisory_xact_lock: grants at once or says false. An xact
  // lock taken outside a transaction goes as its statement ends.
  Result<bool> try_lock(AdvisoryKey key, LockMode mode, Scope scope);

  // With `set_lock_timeout`, the statement sets the session's lock_timeout first (one
  // statement: advisory_lock_with_timeout).
  Status lock(AdvisoryKey key, LockMode mode, Scope scope, std::optional<Duration> set_lock_timeout = std::nullopt);

  // The step queued a request: the log says behind which sessions (those holding the key in
  // a conflicting mode; none: behind conflicting requests queued ahead of it).
  void note_queued(const LockTable& table, AdvisoryKey key, Mode mode);

  // Waits for a queued request: granted (ok), or lock_timeout / statement_timeout, or a
  // deadlock found by the one check deadlock_timeout into the wait, or the backend
  // terminated (its request canceled). `recheck`: a row lock's check of its tuple when woken
  // for it (Waiter::recheck): an error fails the wait (its request canceled).
  Status wait_for(LockTable& table, const std::shared_ptr<Waiter>& waiter, ObjectId obj, Access access,
                  std::string_view verb, std::string what = "", const std::function<std::optional<Error>()>& recheck = {});

  // The common start of every statement but COMMIT and ROLLBACK (end_transaction): on a
  // dead connection it fails with 08006 and takes no step; otherwise it takes the
  // statement's first step, where a terminated backend or the backend_terminated fault ends
  // it (57P01), and a failed transaction refuses it (25P02). nullopt: go on.
  // In a REPEATABLE READ transaction its first statement (`snapshot` true: not SET) takes
  // the snapshot first, in a step that writes the server's domain: what the transaction
  // will see depends on every commit before it.
  std::optional<Error> begin_statement(OpDesc op, bool snapshot = true);
  // That step alone (begin_statement's; a data-modifying WITH query's, first in its statement).
  std::optional<Error> take_repeatable_read_snapshot();
  // The timing model before a statement (model/timing.h): in timed mode, a stall the actor
  // may take (an explored choice, while the execution has stalls left), then the statement's
  // round trip (the low or high end, a choice). One timer step of their sum, or none.
  // Called only when Scheduler::times_statements().
  void statement_timing();

  // Whether this statement finds its backend gone: terminated by another session, or now
  // killed by the backend_terminated fault or the server_restart fault (every session).
  bool killed();

  // The session ends, the connection is dead. Killed by the fault, its rows and locks go
  // here, in one step; after pg_terminate_backend the server let everything go already.
  Error terminated();

  // An error inside an explicit transaction aborts it: until COMMIT or ROLLBACK every
  // statement fails with 25P02, and COMMIT rolls back (found by lockstep conform).
  // PostgreSQL aborts the transaction at the error itself (AbortTransaction): its row
  // versions are dropped and its row locks and transaction-scope advisory locks go at once
  // (found by lockstep conform); only the failed block stays until ROLLBACK or COMMIT.
  Error abort_with(Error e);
  static Error in_failed_transaction() {
    return Error{"25P02", "current transaction is aborted, commands ignored until end of transaction block"};
  }

  static Error lost() { return Error{std::string(sqlstate::kConnectionFailure), "server closed the connection unexpectedly"}; }

  Status end_transaction(Stmt verb);
  // A transaction block's end but its release: settings back, no block, no snapshot.
  void end_block(bool commit);
  // The session's settings in force again (SET LOCAL's, set_config(..., true)'s end).
  void restore_session_settings();
  // RESET ALL's (and DISCARD ALL's): every setting back to the connection's start, in the step
  // running now; a transaction's rollback undoes it as it undoes a SET (sim/pg/server/session_reset.cc).
  void reset_settings();

  // INSERT, or INSERT ... ON CONFLICT DO NOTHING (verb): true when it inserted.
  Result<bool> insert(std::string_view table, std::int64_t id, const Row& values, Stmt verb);

  // Outside any actor (a model building the database it starts from: no step is scheduled
  // there), an autocommit insert of an id nobody has written commits at once, leaving what
  // the statement would leave: the row committed, the row's object made (object numbers
  // follow the order of first use), the session's transaction count moved on, the session
  // idle with its query_start and last step. Its lock-table round trip (the row's key and
  // the transaction's, taken and let go) leaves nothing. Anything else (a transaction open,
  // a row there, a fault that may strike, a statement log) takes the statement's own path:
  // false.
  bool seed(std::string_view table, std::int64_t id, const Row& values);

  // Records a row version this transaction wrote. Its first write takes the transaction's
  // own key (PostgreSQL's lock on its transaction id), which a unique check of another
  // session waits on; the end of the transaction lets it go (apply_release).
  void wrote(std::string_view table, std::int64_t id);

  // Another session with an uncommitted version of the row (at most one: a version needs
  // the row lock), or 0.
  int other_writer(const RowState& r) const;

  // What this session sees of a row: its own uncommitted version, else the committed one,
  // or under REPEATABLE READ the one its snapshot saw (a reference, valid until the row's
  // versions change).
  const std::optional<Row>& visible(std::string_view table, std::int64_t id);
  // ... and that version's place in the heap (RowState): a scan lists rows in its order.
  HeapPlace visible_place(std::string_view table, std::int64_t id);
  // Its own uncommitted version, else the newest committed one, whatever the snapshot (the
  // unique check's view).
  const std::optional<Row>& newest(std::string_view table, std::int64_t id);
  // Under REPEATABLE READ, a row this session locks or changes that another transaction
  // changed (or deleted) after the snapshot: 40001, as the server says; else nullopt.
  // A locking clause (SELECT ... FOR) says "concurrent update" for a deleted row too
  // (ExecLockRows); an UPDATE or DELETE says "concurrent delete".
  // FOR KEY SHARE (`mode`) passes an UPDATE that kept the row's keys: one whose transaction
  // did not hold the row FOR UPDATE when it first updated it (RowState::Older::keys_updated).
  std::optional<Error> serialization_failure(std::string_view table, std::int64_t id, bool locking_clause, Mode mode);
  // Whether this transaction holds the row FOR UPDATE (a key-changing UPDATE takes it too).
  bool holds_for_update(std::string_view table, std::int64_t id);
  // BEGIN ISOLATION LEVEL REPEATABLE READ: the transaction's first statement takes a snapshot.
  // SERIALIZABLE takes one too, and its serializable snapshot isolation state (ssi_).
  void use_repeatable_read(bool serializable = false) {
    repeatable_read_ = true;
    serializable_ = serializable;
  }
  // The snapshot goes with the transaction.
  void end_snapshot();
  // A string of several statements, outside a transaction block, runs as one transaction:
  // the block opens before a statement other than a transaction statement, and ends after
  // the string (committed, or rolled back when a statement failed).
  void begin_implicit_block();
  void end_implicit_block();
  // The start of a statement as statement_timestamp() gives it: its string's arrival. Work
  // before the run's first step (a spec's setup) is a millisecond before it, as on a server,
  // where the setup's transactions ended before a session's began: its now() is earlier.
  Time statement_time() const { return string_start_ ? *string_start_ : arrival(); }
  Time arrival() const { return !s_.in_actor() && s_.step_count() == 0 ? s_.now() - std::chrono::milliseconds(1) : s_.now(); }

  // Takes the row lock (transaction scope) of a row this session sees, waiting as for an
  // advisory lock, and says true. A row it does not see (none committed, none of its own:
  // another transaction's uncommitted insert is invisible under READ COMMITTED) is not
  // locked: false, the statement finds no row, and its step only read that it is absent.
  // With `wanted`, a row it sees that `wanted` refuses is not locked either (false).
  // `mode_now`, when given, decides the mode in the lock's step from the row then (an UPDATE
  // that changes a key column's value takes FOR UPDATE, else FOR NO KEY UPDATE); its
  // footprint is `mode`'s, which must be as strong an access.
  // A READ COMMITTED FOR KEY SHARE passes updates that kept the row's keys (heap_lock_tuple
  // locks the version the statement read and follows its update chain, waiting only for a
  // conflicting lock on a later version): when every change committed since the read (at
  // commit count `read_at`, else the lock's first step) is such an update, the version read is
  // what the lock returns, without a re-check: `locked_as_read_`, set until the next lock.
  Result<bool> lock_row(std::string_view table, std::int64_t id, bool nowait, Stmt verb, Mode mode = Mode::exclusive,
                        const std::function<bool()>& wanted = nullptr, const std::function<Mode()>& mode_now = nullptr,
                        std::optional<std::uint64_t> read_at = std::nullopt);
  std::optional<lockstep::pg::Row> locked_as_read_;
  // While an UPDATE locks its row: the table's heap, which the lock's step (or its wait's)
  // writes unless the row no longer matches (OpDesc::may_write; set by UpdateHeap).
  ObjectId may_write_ = kNoObject;
  struct UpdateHeap {
    SimConnection& c;
    ObjectId saved;
    UpdateHeap(SimConnection& conn, const SqlTable* t) : c(conn), saved(std::exchange(conn.may_write_, t ? t->heap : kNoObject)) {}
    UpdateHeap(const UpdateHeap&) = delete;
    UpdateHeap& operator=(const UpdateHeap&) = delete;
    ~UpdateHeap() { c.may_write_ = saved; }
  };

  // Outside an explicit transaction a statement commits when it ends; 57P01 when the
  // backend was terminated meanwhile.
  Status end_statement();

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
  Footprint release_footprint(const Release& r);

  // For the event log: what a release lets go, by name, before it does ("released
  // advisory(1,1,2); committed agents#1"), each lock also told to Scheduler::note_released.
  // Call only when logging.
  std::string release_detail(const Release& r);

  // Does what a release's step declared: commit publishes this session's row versions,
  // rollback drops them, either way its row locks go; then the advisory holds go.
  void apply_release(const Release& r);
  // LISTEN / UNLISTEN / NOTIFY (sim/pg/server/notifications.cc): queued in the transaction, done at
  // its commit (listens first, then the messages, each (channel, payload) once), dropped at
  // its rollback. Throws SqlError for a channel or payload the server refuses.
  void queue_listen(bool listen, const std::string& channel);
  void queue_notify(const std::string& channel, const std::string& payload);
  bool notifications_pending() const { return !pending_listens_.empty() || !pending_notifies_.empty(); }
  // At the end of a transaction (commit: true to apply what it queued).
  void end_notifications(bool commit);

  // A release at the end of a statement (autocommit, an xact lock's statement), a close or
  // a termination: nothing when there is nothing to let go of; part of the step running now
  // when that step writes every object the release does (an autocommit insert publishes
  // the row its step wrote; an xact lock goes at the end of the step that took it), as the
  // server ends the statement at one moment; else a step of its own.
  void release_now(const Release& r, std::string_view verb);

  // Whether this session's step is still running and writes every object of f.
  bool within_last_step(const Footprint& f) const;

  Server& server_;
  Scheduler& s_;
  Session& session_;
  int pid_;
  std::uint64_t random_draws_ = 0;  // gen_random_uuid() and random() calls: with the pid, the seed of the next
  std::map<std::string, std::int64_t, std::less<>> currvals_;  // per sequence, this session's latest nextval
  PoolConfig config_;
  // This transaction's rows, in (table, id) order; flat: a set per statement allocated.
  boost::container::flat_set<std::pair<std::string, std::int64_t>> locked_rows_, written_;
  std::vector<AdvisoryKey> keys_;  // scratch of release_footprint, reused
  // Scratch of apply_release: a committed key-changing UPDATE's old slot and its new one.
  struct MovedRow {
    std::string table;
    std::int64_t from = 0, to = 0;
  };
  std::vector<MovedRow> moved_to_;
  struct {
    Footprint fp;
    std::uint64_t number = ~std::uint64_t{0};
  } last_step_;  // this session's latest step, as declared
  // Statements prepared on this connection, by name (plans shared with exec's cache).
  std::map<std::string, std::shared_ptr<const std::vector<sql::Statement>>, std::less<>> prepared_;
  bool repeatable_read_ = false;            // this transaction's isolation level
  // The transaction is a string of several statements' implicit block (exec_simple_query's):
  // it commits after the string's last statement, or rolls back after an error that stopped
  // the string; a BEGIN in it makes it an explicit block.
  bool implicit_block_ = false;
  bool in_query_string_ = false;  // between begin_query_string and end_query_string
  std::string string_text_;  // ... the string's text
  std::optional<Time> string_start_;  // when its string came (the server's statement_timestamp)
  // As the block found the display settings, search_path and application_name (an implicit
  // block's start, an explicit one's first SET of them): back if the block rolls back.
  using Style = std::pair<sql::SessionStyle, std::string>;
  std::optional<Style> style_at_block_;
  // As SET (not LOCAL) made them since the block's first SET LOCAL of one: back at its commit.
  std::optional<Style> style_of_session_;
  // SET [LOCAL] of them: `change` on the style in effect (and on the session's, unless local).
  // SET LOCAL outside a block warns (25P01) and changes nothing, as the server does.
  void set_style(bool local, const std::function<void(sql::SessionStyle&, std::string&)>& change);
  bool serializable_ = false;               // ... and SERIALIZABLE (REPEATABLE READ's snapshot and its sxact)
  // The SERIALIZABLE transaction's sxact (sim/pg/lock/ssi.h), from its snapshot to its end; its
  // hooks live in sim/pg/sql_ssi.cc. Tracked: it has one the server still checks.
  Ssi::Xact ssi_ = Ssi::kNone;
  bool ssi_tracking();
  std::optional<Error> begin_ssi();          // at the snapshot: the sxact, or a refusal
  std::optional<Error> pre_commit_ssi();     // COMMIT's check, in its step
  void end_ssi(bool commit);                 // after the transaction's rows are committed or gone
  void ssi_note_xid();                       // its first write or row lock
  // A construct whose SIREAD locks the simulation may not model: refused (0A000) beside
  // another SERIALIZABLE transaction, else noted for one that comes (Ssi::note_imprecise).
  std::optional<Error> ssi_unsupported(std::string what);
  bool read_only_ = false;                  // ... READ ONLY: writes fail 25006 (SqlRun::run)
  bool queried_ = false;  // a statement of the transaction took a snapshot (the server's FirstSnapshotSet)
  std::optional<std::uint64_t> snapshot_;  // its snapshot (a commit count), once taken
  bool dead_ = false;
  // The step of this connection's latest lock try (pg_try_advisory_lock...): what its statement
  // reads after it is a step of its own (SqlRun::touch).
  std::uint64_t try_step_ = ~std::uint64_t{0};
  // The text of the statement (or string of statements) being run: pg_stat_activity's query
  // from its first step (valid while it runs; empty for a typed operation).
  std::string_view query_text_;
  // pg_stat_activity as this transaction first read it (an autocommit statement's own, or a
  // block's): the server keeps its backends' status to the transaction's end (pgstat's local
  // snapshot, pgstat_read_current_status), its own backend's included.
  struct Activity {
    int pid = 0;
    std::string application_name, state, query;
  };
  std::optional<std::vector<Activity>> activity_;
  bool in_statement_ = false;
  int statement_depth_ = 0;  // Statement guards alive: the outermost's start is statement_began_
  Time statement_began_{};
  Duration statement_timeout_armed_{0};
  // The statement_timeout of the running statement and when it started (a SET of it later in the statement: the next one's).
  std::pair<Duration, Time> statement_limit() const {
    return statement_depth_ > 0 ? std::pair{statement_timeout_armed_, std::min(statement_began_, s_.now())} : std::pair{statement_timeout_, s_.now()};
  }
  int sql_depth_ = 0;  // inside run_statements (SQL text), nested
  // A set_config() call runs: its is_local outside a block sets the implicit transaction's
  // value (the statement's), silently, where SET LOCAL warns and sets nothing.
  bool in_set_config_ = false;
  // Inside a SQL statement outside a transaction block: its transaction-scope advisory locks
  // last to the statement's end (end_statement), not to the lock call's.
  bool hold_xact_locks_ = false;
  Duration lock_timeout_{0};       // in effect now
  Duration statement_timeout_{0};  // in effect now
  Duration deadlock_timeout_;      // in effect now: the wait before the deadlock check
  Duration idle_timeout_{0};       // in effect now: idle_in_transaction_session_timeout
  Duration idle_session_timeout_{0};  // in effect now: idle_session_timeout (idle outside a transaction)
  std::uint8_t planner_off_ = 0;   // in effect now: the planner switches turned off
  std::map<std::string, std::string, std::less<>> custom_;  // in effect now: custom settings
  std::set<std::string, std::less<>> placeholders_;  // every custom setting the session set
  // When the last SQL of a transaction with idle_timeout_ set ended (its session idle in
  // the transaction since): the next one checks the timeout did not pass (check_idle_timeout).
  std::optional<Time> idle_since_;
  // As SET (not LOCAL) left them: in effect again when a transaction commits; and as the
  // transaction found them: back when it rolls back (SET LOCAL lasts until either).
  struct Settings {
    Duration lock_timeout{0};
    Duration statement_timeout{0};
    Duration deadlock_timeout{0};
    Duration idle_timeout{0};
    Duration idle_session_timeout{0};
    std::uint8_t planner_off = 0;  // the planner switches turned off, one bit each
    std::map<std::string, std::string, std::less<>> custom;  // custom settings (placeholders)
    Duration& of(Timeout which) {
      return which == Timeout::lock ? lock_timeout : which == Timeout::statement ? statement_timeout : which == Timeout::deadlock ? deadlock_timeout : which == Timeout::idle ? idle_timeout : idle_session_timeout;
    }
  };
  Settings session_settings_, settings_at_begin_;
  // TimeZone, DateStyle, IntervalStyle and search_path (model/sql/session_style.h): in effect
  // (set_style), and as the connection started (its pool's settings over the server's
  // defaults): what RESET goes back to.
  sql::SessionStyle style_, start_style_;
  // The checks of INITIALLY DEFERRED foreign keys the transaction block queued, in order, run
  // by its COMMIT (SqlRun::run_deferred_checks): a child row's (`child`: its table, the key's
  // index, the row as written) or a parent's deleted or changed key (the child's table, the
  // key's index, the parent's old row).
  struct DeferredCheck {
    std::string table;
    std::size_t key = 0;
    Row row;
    bool child = true;
  };
  std::vector<DeferredCheck> deferred_checks_;
  // SET CONSTRAINTS in the transaction block: ALL's choice (which clears the named ones), then
  // each named key's; a key neither names keeps its INITIALLY (SqlRun::defers).
  struct ConstraintModes {
    std::optional<bool> all;
    std::map<std::string, bool, std::less<>> named;
  };
  ConstraintModes constraint_modes_;
  // The transaction's savepoints, oldest first: what each found (sim/pg/server/savepoints.cc).
  struct Savepoint {
    std::string name;
    int subtransaction = 0;  // its number in the transaction (a new one after ROLLBACK TO)
    boost::container::flat_set<std::pair<std::string, std::int64_t>> locked_rows, written;
    std::map<std::pair<std::string, std::int64_t>, RowState::Written> versions;          // written rows' own versions
    std::map<std::pair<std::string, std::int64_t>, std::array<int, kModes>> holds;        // their row locks
    std::map<AdvisoryKey, std::array<int, kModes>> table_holds, advisory_holds;           // table and xact advisory locks held
    Settings settings;
    Duration lock_timeout{0}, statement_timeout{0}, deadlock_timeout{0}, idle_timeout{0}, idle_session_timeout{0};
    std::uint8_t planner_off = 0;
    std::map<std::string, std::string, std::less<>> custom;  // the custom settings in effect
    Style style;  // the display settings, search_path and application_name in effect
    std::optional<Style> style_of_session;
    bool read_only = false;  // SET TRANSACTION READ ONLY after it goes with it (a GUC's rollback)
    std::size_t listens = 0, notifies = 0;  // LISTEN / UNLISTEN and NOTIFY queued before it (AtSubAbort_Notify)
    std::vector<DeferredCheck> deferred_checks;  // deferred foreign key checks queued (a ROLLBACK TO queues them again)
    ConstraintModes constraint_modes;       // SET CONSTRAINTS before it
  };
  std::vector<Savepoint> savepoints_;
  Savepoint mark_here(const std::string& name);  // what a savepoint made now keeps
  int subtransactions_ = 0;  // the transaction's subtransactions so far: numbers them
  // The subtransactions whose keys (Server::transaction_key) the transaction holds: each
  // took it at its first write; a ROLLBACK TO lets go of its savepoint's and newer ones'.
  boost::container::flat_set<int> subtransaction_keys_;
  struct TableLockRequest {
    AdvisoryKey key;
    Mode mode;
    std::string table;
  };
  std::vector<TableLockRequest> implicit_table_locks_;  // for the statement's first step, in order
  bool strong_table_lock_ = false;  // the transaction ran LOCK TABLE: its end writes the domain
  // Savepoints (savepoints.cc): the rows locked or written now, the footprint of putting them
  // back, putting them back as `mark` found them, and an error's abort of the innermost
  // subtransaction (the rest of the transaction keeps its rows and locks).
  std::vector<std::pair<std::string, std::int64_t>> changed_since_mark() const;
  Footprint undo_footprint();
  void undo_to(const Savepoint& mark);
  // After undo_to: the keys of `mark`'s subtransaction and of those begun inside it go, and
  // `mark` begins a new subtransaction (the server's ROLLBACK TO starts one).
  void restart_subtransaction(Savepoint& mark);
  // ROLLBACK TO's work after its step: undo_to, restart_subtransaction, the settings and the
  // LISTEN / NOTIFY queue as `mark` found them.
  void roll_back_to(Savepoint& mark);
  void abort_subtransaction();
  // Takes a table lock for this transaction, waiting (steps on the whole server) if it must.
  // `waited` (when given) says whether the request queued behind another session's lock.
  std::optional<Error> take_table_lock(const TableLockRequest& request, bool* waited = nullptr);
  Time transaction_start_{0};  // of the explicit transaction: now() in SQL
  std::vector<Error> warnings_;
  std::vector<std::pair<bool, std::string>> pending_listens_;  // (LISTEN, channel); UNLISTEN *: (false, "")
  std::vector<lockstep::pg::Notification> pending_notifies_;
  LastStatement last_;
};

// A SimConnection that records every statement in `log` (logged_connection.cc).
std::unique_ptr<SimConnection> make_logged_connection(Server& server, const lockstep::pg::PoolConfig& config, StatementLog& log);

}  // namespace lockstep::sim::pg
