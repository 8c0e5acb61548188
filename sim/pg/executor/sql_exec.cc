// sim/pg/executor/sql_exec.cc: the frame of one SQL statement's run (sim/pg/executor/sql_run.h): its evaluation
// context, transactions, settings and the functions of locks and sessions (a text's parse and
// its statements in turn: sim/pg/server/sql_text.cc; DDL: sim/pg/executor/sql_ddl.cc).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <cstdint>
#include <set>

#include <fmt/ranges.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/binary_types.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/parse.h"
#include "lockstep/model/sql/server_version.h"
#include "lockstep/sim/pg/executor/sql_names.h"
#include "lockstep/sim/pg/executor/sql_schemas.h"
#include "lockstep/sim/pg/server/sql_log.h"
#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_settings.h"

namespace lockstep::sim::pg {

Error error_of(const SqlError& e) { return Error{e.sqlstate(), e.what()}; }

void SqlRun::add_rows(Rows& out, const std::vector<std::vector<Value>>& values) {
  for (const auto& v : values) {
    std::vector<std::optional<std::string>>& row = out.rows.emplace_back();
    row.reserve(v.size());
    for (const Value& x : v) row.push_back(output(x));
    if (returned_ != nullptr) returned_->push_back(v);  // a plpgsql statement's rows (INTO)
  }
  out.tag = fmt::format("SELECT {}", out.rows.size());
}

std::optional<std::string> output(const Value& v) {
  if (v.is_null()) return std::nullopt;
  return sql::display_text(v);  // in the session's DateStyle, IntervalStyle and TimeZone
}

std::string shown_duration(Duration d) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (ms == 0) return "0";
  // The largest unit that divides it, as PostgreSQL shows a time setting.
  constexpr std::pair<std::int64_t, const char*> kUnits[] = {{86'400'000, "d"}, {3'600'000, "h"}, {60'000, "min"}, {1'000, "s"}};
  for (const auto& [size, unit] : kUnits) if (ms % size == 0) return fmt::format("{}{}", ms / size, unit);
  return fmt::format("{}ms", ms);
}

// The command a READ ONLY transaction refuses (the server's tag for it), or "" for one it runs.
std::string read_only_command(const sql::Statement& st) {
  if (const auto* sel = std::get_if<sql::Select>(&st.body)) {
    sql::RowLock lock = sel->lock;
    for (const sql::CommonTable& w : sel->with) {
      if (w.modifying) return "SELECT";
      if (lock == sql::RowLock::none && w.select && w.read) lock = w.select->lock;  // one nothing reads is never planned
    }
    if (lock != sql::RowLock::none) return fmt::format("SELECT {}", sql::lock_clause_name(lock));
    if (st.locking_subquery && st.subquery_lock != sql::RowLock::none) return fmt::format("SELECT {}", sql::lock_clause_name(st.subquery_lock));
    if (st.locking_subquery) {
      throw SqlError("0A000", "a locking subquery in a READ ONLY transaction beside another of another strength, or beside a constant the planner "
                              "folds, is not in lockstep's SQL subset (docs/sql.md)");
    }
    return "";
  }
  const bool writes = std::holds_alternative<sql::Insert>(st.body) || std::holds_alternative<sql::Update>(st.body) ||
                      std::holds_alternative<sql::Delete>(st.body) || std::holds_alternative<sql::CreateTable>(st.body) ||
                      std::holds_alternative<sql::DropTable>(st.body) || std::holds_alternative<sql::CreateSequence>(st.body) ||
                      std::holds_alternative<sql::CreateType>(st.body) || std::holds_alternative<sql::CreateFunction>(st.body) ||
                      std::holds_alternative<sql::AlterTable>(st.body) || std::holds_alternative<sql::CreateIndex>(st.body) ||
                      std::holds_alternative<sql::Schema>(st.body);
  const auto* l = std::get_if<sql::LockTables>(&st.body);
  const bool truncates = l != nullptr && l->maintenance == sql::LockTables::Maintenance::truncate;
  return writes || truncates ? (truncates ? "TRUNCATE TABLE" : st.tag()) : "";
}

Result<Rows> SqlRun::run() {
  if (!nested_ && !c_.session_.in_transaction) c_.activity_.reset();  // an autocommit statement: a transaction of its own
  const auto* t = std::get_if<sql::Transaction>(&st_.body);
  const bool ends = t != nullptr && (t->kind == sql::Transaction::Kind::commit || t->kind == sql::Transaction::Kind::rollback ||
                                     t->kind == sql::Transaction::Kind::rollback_to);
  if (c_.session_.aborted && !ends) {
    // A failed transaction refuses every statement but its end before looking at it (25P02).
    SimConnection::Statement guard(c_);
    if (auto refused = c_.begin_statement(OpDesc{"sql", Footprint{}, 0, false})) return *refused;
  }
  request_table_lock();
  const bool dml = std::holds_alternative<sql::Select>(st_.body) || std::holds_alternative<sql::Insert>(st_.body) ||
                   std::holds_alternative<sql::Update>(st_.body) || std::holds_alternative<sql::Delete>(st_.body);
  if (c_.read_only_ && c_.session_.in_transaction && !c_.session_.aborted && !dml && !read_only_command(st_).empty()) {
    SimConnection::Statement guard(c_);  // DDL: ProcessUtility's check, before it runs
    if (auto refused = c_.begin_statement(OpDesc{"sql", Footprint{}, 0, false}, false)) return *refused;
    return fail(Error{"25006", fmt::format("cannot execute {} in a read-only transaction", read_only_command(st_))});
  }
  const Server::RunningStyle style(server_, c_.style_, c_.pid_);
  // pg_advisory_xact_lock in an autocommit statement holds to its end (an implicit transaction), also while a later step waits.
  struct HoldXactLocks {
    SimConnection& c;
    bool was;
    ~HoldXactLocks() { c.hold_xact_locks_ = was; }
  } hold{c_, std::exchange(c_.hold_xact_locks_, true)};
  try {
    try {  // parse analysis: before any row (sim/pg/executor/sql_names.h), names through search_path first
      if (auto unresolved = unresolved_relation(st_, server_)) throw *unresolved;
      if (!server_.names_checked(st_)) {
        server_.note_names_checked(plans_, st_, check_qualified_columns(st_, server_, [this](const Expr& e, const sql::Select& s) { return record_table_of(e, s); },
                                                                        !nested_ && function_params_ == nullptr,  // types: not where a variable may name a column
                                                                        [this](const sql::Select& s) { return correlated(s); }));
      }
      if (st_.plan_error) throw *st_.plan_error;  // the planner's, folding constants (model/sql/parse_fold.cc)
      refuse_triggers(st_);  // a plpgsql trigger it would fire
    } catch (const SqlError&) {  // after the tables it opened are locked (a wait behind LOCK TABLE)
      SimConnection::Statement guard(c_);  // active in pg_stat_activity, its query shown
      if (auto refused = c_.begin_statement(OpDesc{"sql", Footprint{}, 0, false}, false)) throw Raised{*refused};
      throw;
    }
    if ((!c_.session_.in_transaction || c_.implicit_block_) && !st_.relations.empty() && !nested_ && function_params_ == nullptr) {
      const std::string level = default_isolation_name(c_);
      if (level == "repeatable read" || level == "serializable") {
        throw SqlError("0A000", fmt::format("a statement outside a transaction block under default_transaction_isolation '{}' is not in lockstep's SQL "
                                            "subset (docs/sql.md): BEGIN first",
                                            level));
      }
    }
    Result<Rows> r = std::visit([this](const auto& body) { return this->statement(body); }, st_.body);
    c_.forget_table_lock_request();
    return r;
  } catch (const SqlError& e) {
    c_.forget_table_lock_request();
    return fail(error_of(e));
  }
}

void SqlRun::check_read_only() {
  if (!c_.read_only_ || !c_.session_.in_transaction || (nested_ && enclosing_ != nullptr)) return;  // (a plpgsql function's statement: checked)
  const std::string command = read_only_command(st_);
  if (command.empty()) return;
  if (!started_) {  // a step of its own, after its table locks
    if (auto refused = nested_ ? begin("sql", Footprint{}, 0, false) : c_.begin_statement(OpDesc{"sql", Footprint{}, 0, false}, false)) throw Raised{*refused};
  }
  throw SqlError("25006", fmt::format("cannot execute {} in a read-only transaction", command));
}

Value SqlRun::column(const Expr& ref) {
  if (ref.qualifier == "excluded") {
    if (excluded_ == nullptr) throw SqlError("42P01", "missing FROM-clause entry for table \"excluded\"");
    return value_of(*excluded_, ref);
  }
  if (table_ != nullptr && row_ != nullptr && resolves(*table_, alias_, ref)) {
    // A plpgsql function's statement: a variable of the name too is ambiguous (variable_conflict = error).
    if (function_params_ != nullptr && ref.qualifier.empty() && function_params_->conflicts_with_columns() && function_params_->names_variable(ref)) {
      throw SqlError("42702", fmt::format("column reference \"{}\" is ambiguous", ref.name));
    }
    return value_of(*row_, ref);
  }
  // Its own table's name: the whole row (before an outer query's column of that name: docs/notes.md).
  if (table_ != nullptr && row_ != nullptr && whole_row_reference(*table_, alias_, ref)) return whole_row(*table_, *row_);
  for (auto it = outer_.rbegin(); it != outer_.rend(); ++it) {  // a correlated subquery's reference
    if (it->table != nullptr && it->row != nullptr && resolves(*it->table, it->alias, ref)) return value_in(*it->table, *it->row, ref);
  }
  if (function_params_ != nullptr && function_params_->names_variable(ref)) return function_params_->column(ref);  // NEW.x, after the columns
  if (!ref.qualifier.empty() && table_ != nullptr) throw unresolved_qualifier(ref, meant_by(ref, table_, alias_.empty() ? table_->def.table : alias_, server_));
  // xmax in an upsert's RETURNING, compared with 0 only (model/sql/parse.cc): 0 for a row
  // inserted, the updater's xid for one ON CONFLICT DO UPDATE updated.
  if (ref.name == "xmax" && row_ != nullptr) return Value::integer(returning_updated_ ? 1 : 0, Type::int8);
  if (table_ == nullptr || row_ == nullptr) throw sql::missing_column_error(ref);
  return value_of(*row_, ref);
}

Value SqlRun::param(int number) {
  if (function_params_ != nullptr) return function_params_->param(number);
  if (number < 1 || static_cast<std::size_t>(number) > params_.size()) {
    throw SqlError("08P01", fmt::format("bind message supplies {} parameters, but prepared statement \"\" requires {}",
                                        params_.size(), st_.max_param));
  }
  const Param& p = params_[static_cast<std::size_t>(number) - 1];
  return p ? Value::unknown(*p) : Value::null();
}

Value SqlRun::call(const Expr& e, const std::vector<Value>& args) {
  if (e.kind == Expr::Kind::window) {  // computed for the query's rows (sql_select.cc compute_windows)
    const auto w = window_values_.find(e.select.get());  // (ORDER BY an alias reads a copy of the call)
    const auto v = w == window_values_.end() ? nullptr : &w->second;
    if (v == nullptr || v->find(window_row_) == v->end()) throw SqlError("0A000", fmt::format("{}() OVER here is not in lockstep's SQL subset (docs/sql.md)", e.name));
    return v->at(window_row_);
  }
  const sql::FunctionInfo* f = sql::find_function(e.name);
  if (f->kind == sql::FunctionKind::aggregate) return aggregate(e);
  if (sql::select_list_set_returning(e.name)) return set_returning_value(e);
  if (f->kind == sql::FunctionKind::setting) {
    if (args.at(0).is_null()) return Value::null(Type::text);
    const std::string name = sql::cast(args[0], Type::text).as_text();
    // Read-only here: the isolation levels (SET of them is outside the subset).
    if (name == "default_transaction_isolation") return Value::text(default_isolation_name(c_));
    if (name == "transaction_isolation") {  // outside a block: its own transaction's, the default
      if (!c_.session_.in_transaction || c_.implicit_block_) return Value::text(default_isolation_name(c_));
      return Value::text(c_.serializable_ ? "serializable" : c_.repeatable_read_ ? "repeatable read" : "read committed");
    }
    if (name == "transaction_read_only") return Value::text(c_.read_only_ ? "on" : "off");
    if (name == "default_transaction_read_only") return Value::text("off");
    std::string lowered = name;
    std::transform(lowered.begin(), lowered.end(), lowered.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    if (sql::is_custom_setting(lowered)) {  // current_setting(name, missing_ok)
      if (std::optional<std::string> v = c_.custom_setting(lowered)) return Value::text(std::move(*v));
      if (args.size() == 2 && !args[1].is_null() && sql::cast(args[1], Type::boolean).as_bool()) return Value::null(Type::text);
      throw SqlError("42704", fmt::format("unrecognized configuration parameter \"{}\"", name));
    }
    if (lowered == "server_version" || lowered == "server_version_num") return Value::text(std::string(lowered.ends_with("num") ? sql::server_version_num() : sql::server_version()));
    if (sql::is_pinned_style(lowered)) return Value::text(sql::style_setting_text(c_.style_, lowered));
    if (lowered == "application_name") return Value::text(c_.session_.application_name);
    if (const int bit = planner_switch_named(lowered); bit >= 0) return Value::text(c_.planner_switch(bit) ? "on" : "off");
    return Value::text(shown_duration(c_.timeout(timeout_named(name))));
  }
  if (f->kind == sql::FunctionKind::time) {
    // clock_timestamp(): a microsecond past the statement's start at least (`> now()` holds on the server)
    const Time t = e.name == "clock_timestamp"       ? std::max<Time>(s_.now(), statement_start_ + std::chrono::microseconds(1))
                   : e.name == "statement_timestamp" ? statement_start_
                   : c_.session_.in_transaction      ? c_.transaction_start_
                                                     : statement_start_;
    const auto micros = lockstep::pg::kSimulatedClockOrigin + std::chrono::duration_cast<std::chrono::microseconds>(t).count();
    if (e.name == "current_date") return sql::cast(Value::timestamptz(micros), sql::Type::date);
    if (e.name == "localtime") return sql::cast(Value::timestamptz(micros), sql::Type::time);
    return e.name == "localtimestamp" ? Value::timestamp(sql::local_of_utc(micros)) : Value::timestamptz(micros);
  }
  return session_function(e, args);
}

void SqlRun::restore(const Saved& s) {
  table_ = s.table;
  alias_ = s.alias;
  row_ = s.row;
  group_ = s.group;
  grouping_absent_ = s.grouping_absent;
}

void SqlRun::missing_column(const SqlTable& t, std::string_view alias, const Expr& ref) {
  // A relation's name where a column is read is its whole row (SELECT j FROM t AS j).
  const bool whole_row = ref.qualifier.empty() &&
                         (t.joined ? std::any_of(t.def.columns.begin(), t.def.columns.end(), [&](const sql::ColumnDef& c) { return joined_name(c).first == ref.name; })
                                   : ref.name == (alias.empty() ? std::string_view(t.def.table) : alias));
  if (whole_row) throw SqlError("0A000", fmt::format("the whole-row reference {} is not in lockstep's SQL subset (docs/sql.md)", ref.name));
  throw sql::missing_column_error(ref);
}

Value SqlRun::value_in(const SqlTable& t, const Row& row, const Expr& ref) const {
  const int i = t.joined ? joined_column(t, ref) : t.column(ref.name);
  if (i < 0) return derived_whole_row(t, {}, &row, ref);  // (else missing_column's error)
  return stored(t, row, i);
}

bool SqlRun::whole_row_reference(const SqlTable& t, std::string_view alias, const Expr& ref) const {
  return ref.kind == Expr::Kind::column && ref.qualifier.empty() && !t.joined && t.object != kNoObject && t.column(ref.name) < 0 &&
         ref.name == (alias.empty() ? std::string_view(t.def.table) : alias);
}

Value SqlRun::whole_row(const SqlTable& t, const Row& row) const {
  std::vector<std::optional<std::string>> fields;
  for (const sql::ColumnDef& c : t.def.columns) {
    const auto it = row.find(c.name);
    fields.push_back(it == row.end() ? std::nullopt : std::optional<std::string>(it->second));
  }
  return Value::record(server_.record_type_index(t.def.table), sql::record_output(fields));
}

void SqlRun::check_columns(const Expr& e, const SqlTable& t, const std::string& alias, const std::vector<std::string>& outputs) const {
  if (whole_row_reference(t, alias, e)) return;
  if (e.kind == Expr::Kind::column && e.qualifier != "excluded" && !(!resolves(t, alias, e) && resolves_outside(e))) {
    if (!e.qualifier.empty() && !resolves(t, alias, e)) throw unresolved_qualifier(e, meant_by(e, &t, alias.empty() ? std::string_view(t.def.table) : alias, server_));
    if (t.column(e.name) < 0 && e.name != "xmax" && (!e.qualifier.empty() || std::find(outputs.begin(), outputs.end(), e.name) == outputs.end())) {
      (void)derived_whole_row(t, alias, nullptr, e);  // (xmax: the parser let it through in an upsert's RETURNING only)
    }
  }
  if (e.kind == Expr::Kind::subquery || e.kind == Expr::Kind::exists) return;  // checked with its own table when it runs
  for (const Expr& a : e.args) check_columns(a, t, alias, outputs);
}

void SqlRun::check_columns(const std::vector<sql::Target>& targets, const SqlTable& t, const std::string& alias) const {
  for (const sql::Target& target : targets) {
    if (!target.star) check_columns(target.expr, t, alias);
  }
}

void SqlRun::check_select(const sql::Select& sel, const SqlTable& t) const {
  check_columns(sel.targets, t, sel.alias);
  if (sel.where) check_columns(*sel.where, t, sel.alias);
  std::vector<std::string> outputs;
  for (const sql::Target& target : sel.targets) outputs.push_back(target.name);
  for (const sql::OrderItem& o : sel.order_by) check_columns(o.expr, t, sel.alias, outputs);
}

SqlTable* SqlRun::table(const std::string& name) {
  if (Derived* d = derived(name)) return &d->table;  // a WITH query's name hides a table's
  SqlTable* t = server_.sql_table(name);
  if (t == nullptr && (server_.sequence(name) != nullptr || server_.serial_column_of(name).first != nullptr)) {
    return &sequence_relation(name).table;  // SELECT last_value, is_called FROM seq (pgmq's metrics)
  }
  if (t == nullptr && server_.view(name) != nullptr) {
    throw SqlError("0A000", fmt::format("the view {} here (lockstep reads a view in a statement's FROM, written in the statement itself, and "
                                        "writes none) is not in lockstep's SQL subset (docs/sql.md)", name));
  }
  if (t == nullptr) throw SqlError("42P01", fmt::format("relation \"{}\" does not exist", name));
  return t;
}

Error SqlRun::fail(Error e) {
  if (c_.session_.in_transaction || !c_.savepoints_.empty()) return c_.abort_with(std::move(e));
  // An autocommit statement's error ends its transaction: rows, row locks and its weak table
  // lock go (a LOCK TABLE queued behind that lock is granted).
  c_.release_now({.rows = true, .commit = false, .xact_scope = true}, "rollback");
  return e;
}

std::optional<Error> SqlRun::begin(std::string_view verb, Footprint fp, std::int64_t arg, bool snapshot) {
  OpDesc op{verb, fp, arg, arg != 0};
  if (nested_) {  // a data-modifying WITH query: a step of its statement, not a statement's start
    if (!started_ && enclosing_ != nullptr && !c_.session_.aborted) {  // (its statement the transaction's first)
      LOCKSTEP_INVARIANT(!c_.serializable_, "a data-modifying WITH query under SERIALIZABLE is refused before it runs (run_modifying)");
      if (auto refused = c_.take_repeatable_read_snapshot()) return refused;
    }
    c_.step(op);
    if (c_.killed()) return c_.terminated();
    if (c_.session_.aborted) return c_.in_failed_transaction();
    if (!started_) {
      // Its table's RowExclusiveLock, before it reads anything; after a wait for it, its
      // first step is taken again (as a statement's first step is).
      bool waited = false;  // (a plpgsql function's statement: those run_in_function asked for)
      for (const auto& lock : enclosing_ == nullptr ? std::exchange(c_.implicit_table_locks_, {}) : table_locks()) {
        if (auto e = c_.take_table_lock(lock, &waited)) return e;
      }
      if (waited) {
        c_.step(op);
        if (c_.killed()) return c_.terminated();
        if (c_.session_.aborted) return c_.in_failed_transaction();
      }
    }
    if (!started_ && enclosing_ != nullptr) {
      // The statement's first step takes its snapshot, which its later steps read every
      // table with: so this step reads them all (a commit before it is seen, after it not).
      enclosing_->take_statement_snapshot();
      if (s_.in_actor()) server_.each_sql_table([&](const SqlTable& t) { touch(t); });
    }
    if (!started_ && enclosing_ == nullptr) hold_snapshot_for_later_reads();  // a plpgsql function's statement
    started_ = true;
    return std::nullopt;
  }
  if (auto refused = c_.begin_statement(op, snapshot)) return refused;
  if (!started_) {
    statement_start_ = c_.statement_time();
    hold_snapshot_for_later_reads();
    // A data-modifying WITH query run last reads on the snapshot of the statement's first step.
    if (std::ranges::any_of(derived_, [](const auto& d) { return d->last; })) hold_statement_snapshot();
  }
  started_ = true;
  return std::nullopt;
}

Result<Rows> SqlRun::done(Rows rows) {
  for (const auto& d : derived_) {
    if (d->last && !d->computed) run_modifying(*d);  // a data-modifying WITH query nothing read, in order
  }
  if (nested_ && enclosing_ != nullptr) return rows;  // its statement ends it
  queue_after_statement();
  if (!after_rows_.empty()) fire_after_rows();  // AFTER ROW and STATEMENT triggers, as the query ends (AfterTriggerEndQuery)
  if (nested_) return rows;  // a plpgsql function's statement: the calling one ends the transaction
  if (Status ended = c_.end_statement(); !ended.ok()) return ended.error();
  return rows;
}

Result<Rows> SqlRun::statement(const sql::LockTables& l) {
  SimConnection::Statement guard(c_);
  std::vector<std::pair<std::string, AdvisoryKey>> tables;
  for (const std::string& name : l.tables) {
    SqlTable* t = table(name);
    if (derived_of(t) != nullptr) throw SqlError("0A000", "LOCK TABLE, VACUUM, ANALYZE or TRUNCATE of a sequence is not in lockstep's SQL subset (docs/sql.md)");
    tables.emplace_back(name, Server::table_key(*t));
  }
  c_.forget_table_lock_request();  // LOCK TABLE takes its own
  if (l.maintenance == sql::LockTables::Maintenance::truncate) return truncate(l, tables);
  if (l.maintenance != sql::LockTables::Maintenance::none) {
    const bool vacuum = l.maintenance == sql::LockTables::Maintenance::vacuum;
    const Status st = c_.maintain_tables(tables, table_mode(l.mode), vacuum ? "vacuum" : "analyze");
    if (!st.ok()) return st.error();
    if (l.maintenance != sql::LockTables::Maintenance::comment) {
      for (const std::string& name : l.tables) table(name)->planner_stats = true;  // (sql_hash_aggregate.h)
    }
    return done(Rows{{}, {}, vacuum ? "VACUUM" : l.maintenance == sql::LockTables::Maintenance::comment ? "COMMENT" : "ANALYZE"});
  }
  const Status st = c_.lock_tables(tables, table_mode(l.mode), l.nowait);
  if (!st.ok()) return st.error();
  return done(Rows{{}, {}, "LOCK TABLE"});
}

Result<Rows> SqlRun::select_without_from(const sql::Select& sel) {
  Rows out;
  out.columns = column_names(targets_of(sel), nullptr, {});
  bool has_session_call = false;
  for (const sql::Target& t : targets_of(sel)) has_session_call = has_session_call || calls_server(t.expr);
  if (!has_session_call) {
    SimConnection::Statement guard(c_);
    declare_ctes(sel.with);  // a data-modifying one runs now
    if (auto refused = begin("sql", Footprint{}, 0, !sel.show)) return *refused;  // SHOW takes no snapshot
    add_rows(out, select_values(sel, nullptr, true));  // WHERE, LIMIT and OFFSET too
    return done(std::move(out));
  }
  if (!sel.with.empty()) throw SqlError("0A000", "WITH before a SELECT without FROM that calls a lock or session function is not in lockstep's SQL subset");
  if (sel.where || sel.limit || sel.offset) {
    throw SqlError("0A000", "WHERE, LIMIT or OFFSET on a SELECT without FROM that calls a lock or session function is not in "
                            "lockstep's SQL subset");
  }
  // Each function of the lock table or the sessions is a statement of the typed API; a
  // subquery reads the snapshot of a first step of the statement's own. Outside a block its
  // xact locks go at its end (with the last call's step when that took them).
  if (auto refused = st_.has_subquery && !c_.snapshot_ ? begin("sql", Footprint{}) : std::nullopt) return *refused;
  statement_start_ = c_.statement_time();
  SimConnection::Statement guard(c_);  // one statement for its timeouts: statement_timeout as it started
  std::vector<std::optional<std::string>> row;
  table_ = nullptr;
  std::vector<Value> values = project(targets_of(sel));
  for (const Value& v : values) row.push_back(output(v));
  if (returned_ != nullptr) returned_->push_back(std::move(values));
  if (!c_.session_.in_transaction) c_.release_now({.xact_scope = true}, "end of statement");
  out.rows.push_back(std::move(row));
  out.tag = "SELECT 1";
  return out;
}

bool SqlRun::calls_server(const Expr& e) {
  if (e.kind == Expr::Kind::constant) return false;  // folded: its kept arguments never run (parse_fold.cc)
  if (e.kind == Expr::Kind::func) {
    const sql::FunctionInfo* f = sql::find_function(e.name);
    if (f != nullptr && (f->kind == sql::FunctionKind::advisory_lock || f->kind == sql::FunctionKind::session)) return true;
  }
  return std::any_of(e.args.begin(), e.args.end(), [](const Expr& a) { return calls_server(a); });
}

AdvisoryKey SqlRun::key_of(const std::vector<Value>& args) {
  if (args.size() == 1) return AdvisoryKey::single(sql::cast(args[0], Type::int8).as_integer());
  return AdvisoryKey::pair(static_cast<std::int32_t>(sql::cast(args[0], Type::int4).as_integer()),
                           static_cast<std::int32_t>(sql::cast(args[1], Type::int4).as_integer()));
}

Value SqlRun::session_function(const Expr& e, const std::vector<Value>& args) {
  const std::string& n = e.name;
  // NOTIFY's function, not strict: a NULL channel is an empty one (an error), a NULL payload
  // empty; queued in the transaction (sim/pg/server/notifications.cc).
  if (n == "pg_notify") {
    if (s_.in_actor()) s_.also_touch(server_.notify_object());
    c_.queue_notify(args.at(0).is_null() ? std::string() : sql::cast(args[0], Type::text).as_text(),
                    args.at(1).is_null() ? std::string() : sql::cast(args[1], Type::text).as_text());
    return Value::text("");  // void
  }
  for (const Value& a : args) {
    if (a.is_null()) return Value::null();  // strict functions
  }
  const LockMode mode = n.ends_with("_shared") ? LockMode::shared : LockMode::exclusive;
  auto check = [](const Status& st) {
    if (!st.ok()) throw Raised{st.error()};
  };
  auto boolean = [](const Result<bool>& r) {
    if (!r.ok()) throw Raised{r.error()};
    return Value::boolean(r.value());
  };
  if (n == "pg_advisory_lock" || n == "pg_advisory_lock_shared") {
    check(c_.advisory_lock(key_of(args), mode));
    return Value::text("");  // void
  }
  if (n == "pg_try_advisory_lock" || n == "pg_try_advisory_lock_shared") return boolean(c_.try_advisory_lock(key_of(args), mode));
  if (n == "pg_advisory_unlock" || n == "pg_advisory_unlock_shared") return boolean(c_.advisory_unlock(key_of(args), mode));
  if (n == "pg_advisory_unlock_all") {
    check(c_.advisory_unlock_all());
    return Value::text("");
  }
  if (n == "pg_advisory_xact_lock" || n == "pg_advisory_xact_lock_shared") {
    check(c_.advisory_xact_lock(key_of(args), mode));
    return Value::text("");
  }
  if (n == "pg_try_advisory_xact_lock" || n == "pg_try_advisory_xact_lock_shared") {
    return boolean(c_.try_advisory_xact_lock(key_of(args), mode));
  }
  if (n == "pg_backend_pid") return Value::integer(c_.pid_, Type::int4);
  if (n == "nextval" || n == "currval" || n == "setval") return sequence_function(n, args);
  if (n == "pg_get_serial_sequence") return serial_sequence_of(server_, args);  // the catalog too
  if (n == "has_table_privilege") return table_privilege(server_, args);
  if (n == "to_regclass") {  // the catalog, which only DDL outside the sessions changes
    if (args.at(0).is_null()) return Value::null(Type::text);
    const std::optional<std::string> found = to_regclass(server_, sql::cast(args[0], Type::text).as_text());
    return found ? Value::text(*found) : Value::null(Type::text);
  }
  if (n == "gen_random_uuid" || n == "uuid_generate_v4") {  // deterministic: the session's pid and its count of draws (model/sql/binary_types.h)
    if (n != "gen_random_uuid" && !server_.has_extension("uuid-ossp")) throw sql::SqlError("42883", "function uuid_generate_v4() does not exist");
    return sql::uuid_from_seed((static_cast<std::uint64_t>(c_.pid_) << 32) | ++c_.random_draws_);
  }
  if (n == "uuid_nil") {
    if (!server_.has_extension("uuid-ossp")) throw sql::SqlError("42883", "function uuid_nil() does not exist");
    return Value::uuid("00000000-0000-0000-0000-000000000000");
  }
  if (n == "random") return sql::random_from_seed((static_cast<std::uint64_t>(c_.pid_) << 32) | ++c_.random_draws_);
  if (n == "pg_cancel_backend") return boolean(c_.cancel_backend(static_cast<int>(sql::cast(args[0], Type::int4).as_integer())));
  if (n == "pg_terminate_backend") return boolean(c_.terminate_backend(static_cast<int>(sql::cast(args[0], Type::int4).as_integer())));
  if (n == "set_config") {
    const std::string setting = sql::cast(args[0], Type::text).as_text();
    const std::string value = sql::cast(args[1], Type::text).as_text();
    const bool local = sql::cast(args[2], Type::boolean).as_bool();  // is_local: as SET LOCAL (also of an autocommit statement's transaction)
    struct Call { bool& in; ~Call() { in = false; } } call{c_.in_set_config_ = true};  // NOLINT: the flag for this call only
    if (setting == "search_path") return c_.set_style(local, [&](sql::SessionStyle& style, std::string&) { style.search_path = search_path_value(value); }), Value::text(value);
    if (setting == "default_transaction_isolation") {
      const std::string level = isolation_level_value(value);
      check(c_.set_custom(setting, level, local));
      return Value::text(level.empty() ? std::string("read committed") : level);
    }
    const bool custom = sql::is_custom_setting(setting);
    if (!custom) (void)timeout_named(setting);  // another setting: refused before its value is read
    check(custom ? c_.set_custom(setting, value, local) : c_.set_timeout(timeout_named(setting), setting_duration(setting, value), local));
    return Value::text(custom ? value : shown_duration(setting_duration(setting, value)));  // the new value, as SHOW prints it
  }
  if (n == "pg_sleep") {
    // Seconds, as double precision: an integer, or a numeric literal in quotes ('0.05').
    const std::string text = args[0].text_output();
    double seconds = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), seconds);
    if (ec != std::errc() || end != text.data() + text.size()) {
      throw SqlError("22P02", fmt::format("invalid input syntax for type double precision: \"{}\"", text));
    }
    const auto d = std::chrono::duration_cast<Duration>(std::chrono::duration<double>(std::max(seconds, 0.0)));
    check(c_.sleep_statement(d));
    return Value::text("");  // void
  }
  throw SqlError("0A000", fmt::format("{}() is not modeled by the simulated server yet (docs/sql.md)", n));
}

Result<Rows> SqlRun::run_checked() {
  const std::uint64_t before = s_.step_count();
  Result<Rows> r = [&]() -> Result<Rows> {
    try {
      Result<Rows> run_result = run();
      // Any error ends the statement: the transaction aborts, or the statement's own
      // writes and row locks go (a lock wait that ended in 40P01 or 55P03 among them).
      if (!run_result.ok()) return fail(run_result.error());
      return run_result;
    } catch (const Raised& raised) {
      return fail(raised.error);
    }
  }();
  // Only a statement that took a step of its own: its last step's row gets the text.
  if (s_.logging() && s_.in_actor() && s_.step_count() != before) {
    s_.detail_first_step_after(before, sql_log_text(st_.text));
    s_.add_detail(sql_outcome_text(r));
  }
  return r;
}

}  // namespace lockstep::sim::pg
