// sim/pg/server/sim_pg.h: a simulated PostgreSQL server behind model/pg.h, for one execution.
//
// Every statement is a visible operation on the scheduler with the footprint of the lock it
// touches. A blocking advisory lock is two steps: the request (granted at once, or queued),
// then the wait, parked until the releasing backend grants it (sim/pg/lock/lock_table.h) or its
// lock_timeout / statement_timeout fires (a timer transition: in untimed mode at any
// moment of the wait). With PoolConfig::phantom_grant, a timeout that fires after the grant
// returns 55P03 with the lock held, as Bug #17686 does; without it the grant wins. A waiter
// checks once for a deadlock, deadlock_timeout into its wait (a timer too); on a cycle it
// gets 40P01 and keeps the session locks it holds. With backend_terminated, any one
// statement may find its backend killed (a recorded choice).
// COMMIT, ROLLBACK, pg_advisory_unlock_all, the end of an autocommit statement or of an
// xact lock's statement, a terminated session and closing let go of everything they end
// in one step whose footprint names every key and row involved (sim/sched/op.h), as the server
// does at one moment. A release with nothing to let go of is no step (COMMIT and ROLLBACK
// are still one: they are statements).
//
// Every step of the server (statements, their waits and releases, checkout and return)
// also names the server as its domain (sim/sched/op.h), reading it. The pg_locks view and
// pg_terminate_backend see or change every session at once in one step: they write the
// domain, so they are ordered against every other step of the server. A session is active
// (pg_stat_activity) from its statement's first step until the statement returns.
// pg_terminate_backend rolls the victim's transaction back, releases all its locks and
// cancels its wait (which fails with 57P01) at once; the victim's next statement fails
// with 57P01, later ones with 08006.
#pragma once

#include <algorithm>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <boost/container/flat_map.hpp>
#include <boost/container/small_vector.hpp>
#include <fmt/format.h>

#include "lockstep/model/pg.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/plan.h"
#include "lockstep/model/sql/qual_cost.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/sim/invariant.h"
#include "lockstep/sim/pg/heap/row_versions.h"
#include "lockstep/sim/pg/heap/sql_table.h"
#include "lockstep/sim/pg/lock/lock_table.h"
#include "lockstep/sim/pg/lock/ssi.h"
#include "lockstep/sim/pg/server/statement_log.h"
#include "lockstep/sim/sched/scheduler.h"

namespace lockstep::sim::pg {

// A backend as pg_stat_activity shows it and pg_terminate_backend finds it.
// A table's primary key constraint name: CONSTRAINT name PRIMARY KEY's, else <table>_pkey
// (`t` may be null: a table of the typed operations).
inline std::string primary_key_name(const SqlTable* t, std::string_view table) {
  if (t != nullptr && !t->def.primary_key_name.empty()) return t->def.primary_key_name;
  return fmt::format("{}_pkey", table);
}

struct Session {
  int pid = 0;
  std::string application_name;
  bool active = false;          // inside a statement (waiting in one included)
  bool in_transaction = false;  // between BEGIN and COMMIT / ROLLBACK
  bool aborted = false;         // ... and failed (25P02 until it ends)
  std::string query;            // its latest statement's (or string's) text, from its first step
  Time query_start{0};          // when its latest statement took its first step
  bool live = true;             // false once closed, killed or terminated
  bool terminated = false;      // by pg_terminate_backend
  bool terminated_idle = false; // ... between statements: the client learns it at its next one
  bool canceled = false;        // its lock wait (or pg_sleep) was canceled by pg_cancel_backend: it fails with 57014
  bool sleeping = false;        // in pg_sleep: pg_cancel_backend and pg_terminate_backend end it at once
  // Idle in a transaction with idle_in_transaction_session_timeout set, or out of one with
  // idle_session_timeout (timed mode): the server ends the session then (end_idle_sessions);
  // kForever: not idle so.
  Time idle_until = kForever;
  bool idle_session = false;    // ... by idle_session_timeout (idle outside a transaction)
  bool idle_timed_out = false;  // ended so: its client learns it at its next statement
  Ssi::Xact ssi = Ssi::kNone;   // its SERIALIZABLE transaction's, released by a termination
  std::map<std::string, sql::CreateFunction, std::less<>> temp_functions;  // its pg_temp ones, by "pg_temp.name"
  // Its transaction's changes to them, oldest first: a name and what it was (none: absent).
  // ("" with none: its temporary schema, made in this transaction).
  std::vector<std::pair<std::string, std::optional<sql::CreateFunction>>> temp_undo;
  bool temp_schema = false;  // it has its temporary schema (made by its first temporary object)
  // pg_stat_activity's state.
  std::string_view state() const {
    return active ? "active" : !in_transaction ? "idle" : aborted ? "idle in transaction (aborted)" : "idle in transaction";
  }
  int transactions = 0;         // its transactions that wrote: the number of the latest one
  // LISTEN (sim/pg/server/notifications.cc): the channels it listens on; the NOTIFY messages sent to
  // it that wait for its transaction to end, and those its client may read.
  std::set<std::string, std::less<>> listening;
  std::vector<lockstep::pg::Notification> notifications_held, notifications_sent;
};

class Server : public sql::SqlContextSource {
 public:
  explicit Server(Scheduler& s) : s_(s), domain_(s.new_object("pg server")) {}
  // The running session's TimeZone, DateStyle and IntervalStyle, and the enum types, for the
  // evaluation of SQL (model/sql/session_style.h): the session of the scheduler's current
  // actor, so each keeps its own across fiber switches; outside actors, the setup's.
  const sql::SessionStyle& style() const override;
  const std::vector<sql::EnumType>* enum_types() const override { return &enum_types_; }
  // A running statement's session: its style, its pid.
  struct Running {
    const sql::SessionStyle* style = nullptr;
    int pid = 0;
  };
  // While alive, `style` is the style of the statement the caller runs (sim/pg/executor/sql_exec.cc).
  class RunningStyle {
   public:
    RunningStyle(Server& server, const sql::SessionStyle& style, int pid);
    ~RunningStyle();
    RunningStyle(const RunningStyle&) = delete;
    RunningStyle& operator=(const RunningStyle&) = delete;

   private:
    Server& server_;
    ActorId actor_;
    Running saved_;
  };
  // The pid of the session whose statement runs (0: none).
  int running_pid() const;
  Server(const Server&) = delete;  // table_index_ points into tables_
  Server& operator=(const Server&) = delete;
  Scheduler& scheduler() { return s_; }
  LockTable& locks() { return locks_; }
  LockTable& row_locks() { return row_locks_; }
  // Table locks (heavyweight table modes): LOCK TABLE's, and the weak one each SQL statement
  // takes on its table. A table's key is its object.
  LockTable& table_locks() { return table_locks_; }
  static AdvisoryKey table_key(const SqlTable& t) { return AdvisoryKey::single(static_cast<std::int64_t>(t.object)); }
  // The row-lock-table key of a session's transaction `number` (PostgreSQL's lock on a
  // transaction id): held exclusively while the transaction has written a row version; a
  // unique check waits on it. Each transaction has its own (a waiter granted at the end of
  // one may still hold it when the session's next transaction writes: found by the sim-pg
  // property). Never equal to a row_key (those are single keys). A subtransaction that
  // writes (number `sub` > 0 of its transaction) has its own, held until it is rolled back
  // or its transaction ends (a RELEASE hands it to the parent, as the server's lock on a
  // subtransaction id).
  static AdvisoryKey transaction_key(int pid, int number, int sub = 0) {
    return AdvisoryKey::pair(-1 - ((number & 0xffff) | ((sub & 0x3fff) << 16)), pid);
  }
  // The key another session's unique check waits on for `pid`'s version `w` of a row: that
  // of the (sub)transaction that first wrote it.
  AdvisoryKey writer_key(int pid, const RowState::Written& w) const { return writer_key(pid, w.subtransaction); }
  AdvisoryKey writer_key(int pid, int subtransaction) const { return transaction_key(pid, sessions_.at(pid).transactions, subtransaction); }
  // The row-lock-table key and the scheduler object of a row: one of each per (table, id).
  AdvisoryKey row_key(std::string_view table, std::int64_t id);
  ObjectId row_object(std::string_view table, std::int64_t id);
  // The row's state; a reference that stays valid for the whole execution.
  RowState& row(std::string_view table, std::int64_t id) { return slot(table, id).state; }
  Session& open_session(std::string application_name);
  // The live session with that pid, or nullptr.
  Session* live_session(int pid);
  // The pids of the live sessions (the client backends pg_stat_activity lists), in pid order.
  std::vector<int> live_pids() const {
    std::vector<int> out;
    for (const auto& [pid, session] : sessions_) {
      if (session.live) out.push_back(pid);
    }
    return out;
  }
  // pg_terminate_backend, at once: the victim's rows rolled back (or, mid-commit, committed)
  // and row locks released, its waits canceled, its advisory locks released (granting
  // waiters), and it is gone.
  void terminate(Session& victim);
  // idle_in_transaction_session_timeout: the earliest idle_until of a live session (kForever:
  // none), and every live session whose idle_until is `now` or earlier ended (terminate), as
  // the server ends them at that moment. Whether any was.
  Time next_idle_end() const;
  bool end_idle_sessions(Time now);
  // Counts sessions gone idle in a transaction under the timeout (a lock waiter's timer
  // counts to their deadlines: WaiterReady wakes on a change).
  const std::uint64_t& idle_epoch() const { return idle_epoch_; }
  void went_idle() { ++idle_epoch_; }
  // pg_cancel_backend, at once: a lock wait of the victim's is canceled (it fails with 57014
  // "canceling statement due to user request"); a session not waiting for a lock is left
  // alone (the simulated server's statements run in steps, so only a wait can be interrupted).
  void cancel(Session& victim);
  // The monitoring query (model/pg.h): pg_locks' advisory rows of live sessions, in its order.
  std::vector<lockstep::pg::AdvisoryLockRow> advisory_lock_rows(Time now) const;
  // The backend_terminated fault strikes at most once per execution.
  bool termination_used() const { return termination_used_; }
  void use_termination() { termination_used_ = true; }
  // The server_restart fault (PoolConfig), at most once per execution: every live session
  // terminated at once (terminate); the rows committed stay.
  bool restart_used() const { return restart_used_; }
  void restart();
  ObjectId object_for(AdvisoryKey key);
  // Marks the current step as touching the advisory and row locks that sessions waiting now
  // (in any lock table) hold: the waits-for graph an untimed deadlock check can walk
  // (Scheduler::also_touch). Every edge of a cycle runs from a waiting session through a
  // lock a waiting session of the cycle holds; the step that closes a cycle through the
  // checker queues on such a lock (docs/engine.md).
  void touch_waits_for_graph();
  // The scheduler object of a new pool's queue: "pool", then "pool2", "pool3", ...
  ObjectId new_pool_object() { return s_.new_object(++pools_ == 1 ? std::string("pool") : fmt::format("pool{}", pools_)); }
  // The SQL catalog: a table by name (nullptr: none), created, dropped (its rows gone).
  SqlTable* sql_table(std::string_view name) {
    const auto it = sql_tables_.find(name);
    return it == sql_tables_.end() ? nullptr : &it->second;
  }
  SqlTable& add_sql_table(sql::CreateTable def);
  // Parse analysis's name checks (sim/pg/executor/sql_names.h) read a statement and the catalog only:
  // one that passed them is not checked again until DDL changes the catalog, as the server
  // keeps a prepared statement's analysis. The plans are held, so no other statement can
  // come to have a checked one's address.
  bool names_checked(const sql::Statement& st) const { return names_checked_.contains(&st); }
  // With them, the order of each WHERE's conditions (model/sql/qual_cost.h), by its top AND.
  void note_names_checked(const std::shared_ptr<const std::vector<sql::Statement>>& plans, const sql::Statement& st, sql::QualOrders orders) {
    if (plans == nullptr) return;
    names_checked_.emplace(&st, plans);
    for (auto& [where, quals] : orders) qual_orders_.insert_or_assign(where, std::move(quals));
  }
  const std::vector<const sql::Expr*>* qual_order(const sql::Expr& where) const {
    if (qual_orders_.empty()) return nullptr;
    const auto it = qual_orders_.find(&where);
    return it == qual_orders_.end() ? nullptr : &it->second;
  }
  void catalog_changed() {
    names_checked_.clear();
    qual_orders_.clear();
  }
  void drop_sql_table(std::string_view name);
  // Table `child`'s foreign key number `index` goes (ALTER TABLE DROP CONSTRAINT, DROP TABLE
  // ... CASCADE of its parent); its later keys move down one where their parents list them.
  void drop_foreign_key(const std::string& child, std::size_t index);
  // ALTER TABLE ... RENAME TO: the table keyed by its new name, and the foreign keys naming it.
  // REQUIRES: the row store never held a row of it (setup renames before inserting).
  void rename_sql_table(const std::string& from, const std::string& to);
  // Whether the row store has a slot for a row of the table (one inserted, even if gone).
  bool has_row_slots(std::string_view table) const {
    const auto it = tables_.find(table);
    return it != tables_.end() && !it->second.empty();
  }
  void rename_sequence(std::string_view from, const std::string& to) {
    auto node = sequences_.extract(sequences_.find(from));
    node.key() = to;
    node.mapped().def.name = to;
    sequences_.insert(std::move(node));
  }
  // Schemas, by name (tables are known by their own names: plan.h's Schema). False when
  // the schema already exists (add) or does not (drop).
  bool add_schema(const std::string& name) { return schemas_.insert(name).second; }
  bool has_schema(std::string_view name) const override { return schemas_.find(name) != schemas_.end(); }
  bool has_temp_schema() const override;
  bool drop_schema(const std::string& name) { return schemas_.erase(name) != 0; }
  // Extensions created (uuid-ossp, pgcrypto): false when already there (add) or not (drop).
  bool add_extension(const std::string& name) { return extensions_.insert(name).second; }
  bool has_extension(std::string_view name) const { return extensions_.find(name) != extensions_.end(); }
  bool drop_extension(const std::string& name) { return extensions_.erase(name) != 0; }
  // Views (CREATE VIEW, DDL outside the sessions): by name, as tables are (one relation per name).
  struct View {
    std::string schema, query;  // the query's text, read in place of the view's name (model/sql/views.h)
    std::vector<std::string> reads;  // the relations it names
  };
  const View* view(std::string_view name) const {
    const auto it = views_.find(name);
    return it == views_.end() ? nullptr : &it->second;
  }
  void set_view(const std::string& name, std::optional<View> v);  // nullopt: dropped
  // The views read in place in a statement's text (the text itself without any): views.cc.
  std::string with_views_read(std::string_view text) const;
  bool has_views() const { return !views_.empty(); }
  template <typename F>
  void each_view(F&& f) const {
    for (const auto& [name, v] : views_) f(name, v);
  }
  // Calls f(table) for every SQL table.
  template <typename F>
  void each_sql_table(F&& f) const {
    for (const auto& [name, t] : sql_tables_) f(t);
  }
  // The serial column whose own sequence is `sequence` (<table>_<column>_seq): its table and
  // column index, or (nullptr, 0).
  std::pair<SqlTable*, std::size_t> serial_column_of(std::string_view sequence) {
    for (auto& [name, t] : sql_tables_) {
      for (std::size_t i = 0; i < t.def.columns.size(); ++i) {
        if (t.def.columns[i].serial && fmt::format("{}_{}_seq", name, t.def.columns[i].name) == sequence) return {&t, i};
      }
    }
    return {nullptr, 0};
  }
  template <typename F>
  void each_sql_table_mutable(F&& f) {
    for (auto& [name, t] : sql_tables_) f(t);
  }
  // Sequences (CREATE SEQUENCE): not transactional, as the server's; nextval and setval write
  // the sequence's object in the step that calls them.
  struct Sequence {
    sql::CreateSequence def;
    ObjectId object = kNoObject;
    std::int64_t last = 0;
    bool called = false;  // false: the next nextval returns `last` itself
  };
  Sequence* sequence(std::string_view name) {
    const auto it = sequences_.find(name);
    return it == sequences_.end() ? nullptr : &it->second;
  }
  void add_sequence(const sql::CreateSequence& def) {
    sequences_[def.name] = Sequence{def, s_.new_object("sequence " + def.name), def.start, false};
  }
  void drop_sequence(std::string_view name) { sequences_.erase(sequences_.find(name)); }
  // Created functions (CREATE FUNCTION), by name; a name's other overloads (other parameter
  // types) after it, keyed name + kOverload + their number. A name in kTempSchema is the
  // running session's own (pg_temp.name: gone with its backend, never another session's; one each).
  static constexpr std::string_view kTempSchema = sql::kTempSchemaPrefix;
  static constexpr char kOverload = '\x1f';
  const sql::CreateFunction* sql_function(std::string_view name) const override;
  std::vector<const sql::CreateFunction*> sql_functions(std::string_view name) const override;
  bool function_named_anywhere(std::string_view name) const override;
  // A created function's name as sql_function finds it whatever search_path is: "s.f", "public.f".
  static std::string explicit_function_name(const sql::CreateFunction& f) {
    return f.name.find('.') != std::string::npos ? f.name : "public." + f.name;
  }
  void add_sql_function(const sql::CreateFunction& f);
  // Row types (model/sql/records.h): a table's, numbered at its first whole-row reference.
  int record_type_index(std::string_view table) const override {
    const auto it = std::find(record_types_.begin(), record_types_.end(), table);
    if (it != record_types_.end()) return static_cast<int>(it - record_types_.begin());
    record_types_.emplace_back(table);
    return static_cast<int>(record_types_.size()) - 1;
  }
  const sql::CreateTable* record_type(int type) const override {
    if (type < 0 || static_cast<std::size_t>(type) >= record_types_.size()) return nullptr;
    const std::string& name = record_types_[static_cast<std::size_t>(type)];
    if (const auto it = sql_tables_.find(name); it != sql_tables_.end()) return &it->second.def;
    if (const auto it = anonymous_row_types_.find(name); it != anonymous_row_types_.end()) return &it->second;
    return composite_type(name);
  }
  // The row type of a subquery's row (a whole-row reference to it): one per list of column
  // names and types, named "record" + kAnonymousRowType + that list.
  int anonymous_row_type(const std::vector<sql::ColumnDef>& columns) const {
    std::string key = "record";
    key += sql::kAnonymousRowType;
    for (const sql::ColumnDef& c : columns) key += fmt::format("{}:{}:{}:{};", c.name, static_cast<int>(c.type), static_cast<int>(c.element), c.user_type);
    if (!anonymous_row_types_.contains(key)) anonymous_row_types_.emplace(key, sql::CreateTable{.table = key, .columns = columns});
    return record_type_index(key);
  }
  // CREATE TYPE name AS (fields): its fields as a row type's columns (nullptr: no such type).
  const sql::CreateTable* composite_type(std::string_view name) const {
    const auto it = composite_types_.find(name);
    return it == composite_types_.end() ? nullptr : &it->second;
  }
  void set_composite_type(std::string_view name, const std::vector<sql::ColumnDef>* fields) {
    if (fields == nullptr) {
      if (const auto it = composite_types_.find(name); it != composite_types_.end()) composite_types_.erase(it);
      return;
    }
    composite_types_.insert_or_assign(std::string(name), sql::CreateTable{.table = std::string(name), .columns = *fields});
  }
  void drop_sql_function(std::string_view name);
  // The functions with a parameter of table `table`'s row type (its dependents: DROP TABLE),
  // each with its session's pid (a pg_temp one's; 0: the server's), dropped by drop_function_of.
  std::vector<std::pair<int, std::string>> functions_of_row_type(std::string_view table) const;
  void drop_function_of(int pid, std::string_view name);
  // Session `pid`'s transaction ended: its pg_temp functions' changes kept or undone.
  void end_temp_changes(int pid, bool commit);
  // Enum types (model/sql/enums.h), by index; a dropped one keeps its index with no name.
  std::vector<sql::EnumType>& mutable_enum_types() { return enum_types_; }
  // Calls f(id, state) for every row of the table the store has, in id order.
  template <typename F>
  void each_row(std::string_view table, F&& f) {
    const auto it = tables_.find(table);
    if (it == tables_.end()) return;
    for (auto& [id, slot] : it->second) f(id, slot.state);
  }
  // Commits a session's version of a row (the count of commits goes up; the replaced
  // version is kept while a REPEATABLE READ snapshot is open).
  // `updated`: the committing transaction's first write of the row was an UPDATE of it;
  // `keys_updated`: one holding the row FOR UPDATE.
  void commit_version(RowState& row, RowState::Written written, bool updated, bool keys_updated);
  // The heap position of a new tuple of `table` (an INSERT's or an UPDATE's). Within an
  // actor's step the step also writes the table's heap object: two new tuples of a table
  // are ordered, since a later scan lists them in the order they were written.
  std::uint64_t new_tuple(std::string_view table);
  // REPEATABLE READ and SERIALIZABLE snapshots: one opens at the commit count it returns,
  // and closes.
  std::uint64_t open_snapshot() {
    ++open_snapshots_;
    return commits_;
  }
  bool snapshots_open() const { return open_snapshots_ > 0; }
  std::uint64_t commits() const { return commits_; }
  void close_snapshot() {
    LOCKSTEP_INVARIANT(open_snapshots_ > 0, "a snapshot closes that was opened");
    --open_snapshots_;
  }
  // Serializable snapshot isolation's state (sim/pg/lock/ssi.h), and its scheduler object: every
  // step that reads or changes it writes the object (the conflict graph is one, server-wide).
  Ssi& ssi() { return ssi_; }
  ObjectId ssi_object() {
    if (ssi_object_ == kNoObject) ssi_object_ = s_.new_object("pg serializable");
    return ssi_object_;
  }
  // The domain of every step of this server.
  ObjectId domain() const { return domain_; }
  // LISTEN / NOTIFY's object: written by LISTEN, UNLISTEN, NOTIFY and the commit that sends
  // (sim/pg/server/notifications.cc), so a listener's LISTEN and a sender's commit are ordered.
  ObjectId notify_object() {
    if (notify_object_ == kNoObject) notify_object_ = s_.new_object("pg notify");
    return notify_object_;
  }
  // Calls f(session) for every live session.
  template <typename F>
  void each_live_session(F&& f) {
    for (auto& [pid, session] : sessions_) {
      if (session.live) f(session);
    }
  }
  // Where statements are recorded (sim/pg/server/statement_log.h); none by default.
  StatementLog* statement_log() const { return log_; }
  void set_statement_log(StatementLog* log) { log_ = log; }
  // A footprint on obj in this server's domain.
  Footprint on(ObjectId obj, Access access) const { return {obj, access, 0, domain_}; }

 private:
  void note_temp_change(Session& session, std::string_view name);  // in its transaction: undone by a rollback
  Scheduler& s_;
  LockTable locks_;
  LockTable row_locks_{LockTable::Queue::holders_only, &s_};
  LockTable table_locks_;
  // One per (table, id) ever named: its state, and its scheduler object once asked for
  // (row_object; numbered in the order they are asked for).
  struct RowSlot {
    ObjectId object = kNoObject;
    RowState state;
  };
  RowSlot& slot(std::string_view table, std::int64_t id);

  std::map<AdvisoryKey, ObjectId> objects_;
  std::map<std::string, std::map<std::int64_t, RowSlot>, std::less<>> tables_;  // in (table, id) order
  std::vector<std::pair<std::string_view, std::map<std::int64_t, RowSlot>*>> table_index_;  // tables_ in order of first use
  // slot()'s last answer (a statement asks for one row many times; slots are never erased).
  std::string_view last_table_;
  std::int64_t last_id_ = 0;
  RowSlot* last_slot_ = nullptr;
  std::map<int, Session> sessions_;
  std::map<std::string, SqlTable, std::less<>> sql_tables_;
  std::unordered_map<const sql::Statement*, std::shared_ptr<const std::vector<sql::Statement>>> names_checked_;
  std::unordered_map<const sql::Expr*, std::vector<const sql::Expr*>> qual_orders_;  // (held by names_checked_'s plans)
  mutable std::vector<std::string> record_types_;  // by record type: its table (record_type_index)
  std::set<std::string, std::less<>> schemas_{"public"};
  std::set<std::string, std::less<>> extensions_;
  std::vector<sql::EnumType> enum_types_;
  std::map<std::string, sql::CreateTable, std::less<>> composite_types_;  // by name (record_type)
  mutable std::map<std::string, sql::CreateTable, std::less<>> anonymous_row_types_;  // anonymous_row_type's
  std::map<std::string, Sequence, std::less<>> sequences_;
  std::map<std::string, View, std::less<>> views_;
  std::string views_signature_;  // every view's name and query: with_views_read's cache key
  std::map<std::string, sql::CreateFunction, std::less<>> functions_;
  const std::string* function_key(std::string_view name) const;  // the key of the function a name finds (search_path), or nullptr
  bool overloaded(const std::string& key) const;
  std::vector<Running> running_styles_;  // by actor: its statement's session style and pid
  Running outside_style_;
  sql::SqlContextScope context_{this};  // last: this server is the thread's source for its lifetime
  ObjectId notify_object_ = kNoObject;
  int next_pid_ = 1001;
  int pools_ = 0;
  ObjectId domain_;
  bool termination_used_ = false;
  bool restart_used_ = false;
  StatementLog* log_ = nullptr;
  std::uint64_t commits_ = 0;  // row versions committed so far
  std::uint64_t heap_positions_ = 0;  // new tuples so far (RowState's heap positions)
  int open_snapshots_ = 0;
  Ssi ssi_;
  std::uint64_t idle_epoch_ = 0;
  ObjectId ssi_object_ = kNoObject;
};

std::unique_ptr<lockstep::pg::Pool> make_pool(Server& server, const lockstep::pg::PoolConfig& config);

}  // namespace lockstep::sim::pg
