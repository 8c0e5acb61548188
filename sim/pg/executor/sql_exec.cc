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

// The timeout a setting names (model/sql/functions.h's kSettings); another is refused.
SimConnection::Timeout timeout_named(std::string_view name) {
  const std::optional<sql::Setting> setting = sql::setting_named(name);
  if (!setting) throw SqlError("0A000", fmt::format("the setting {} is not in lockstep's SQL subset (docs/sql.md)", name));
  using T = SimConnection::Timeout;
  constexpr auto same = [](sql::Setting s, T t) { return static_cast<int>(s) == static_cast<int>(t); };
  static_assert(same(sql::Setting::lock_timeout, T::lock) && same(sql::Setting::statement_timeout, T::statement) &&
                same(sql::Setting::deadlock_timeout, T::deadlock) && same(sql::Setting::idle_in_transaction_session_timeout, T::idle) &&
                same(sql::Setting::idle_session_timeout, T::idle_session));  // one order, so a setting is its timeout
  if (sql::is_planner_switch(*setting)) throw std::logic_error("timeout_named: a setting without its timeout");
  return static_cast<T>(*setting);
}

// The planner switch a setting names (its bit), or -1.
int planner_switch_named(std::string_view name) {
  const std::optional<sql::Setting> setting = sql::setting_named(name);
  if (!setting || !sql::is_planner_switch(*setting)) return -1;
  return static_cast<int>(*setting) - static_cast<int>(sql::Setting::enable_seqscan);
}

// A Boolean setting's value as the server's parse_bool reads it (any unique prefix of on,
// off, true, false, yes, no; 1 and 0).
bool setting_bool(const std::string& name, const std::string& text) {
  std::string v = text;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  const auto prefix = [&](std::string_view word, std::size_t least) { return v.size() >= least && std::string_view(word).starts_with(v); };
  if (prefix("true", 1) || prefix("yes", 1) || prefix("on", 2) || v == "1") return true;
  if (prefix("false", 1) || prefix("no", 1) || prefix("off", 2) || v == "0") return false;
  throw SqlError("22023", fmt::format("parameter \"{}\" requires a Boolean value", name));
}

// A time setting's value as the server's parse_int reads it: a number (a fraction allowed,
// rounded), optional spaces, then a unit (us, ms, s, min, h, d; case matters; none: ms).
Duration setting_duration(const std::string& name, const std::string& text) {
  const auto invalid = [&]() -> Duration {
    throw SqlError("22023", fmt::format("invalid value for parameter \"{}\": \"{}\"", name, text));
  };
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  const std::size_t start = i;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) != 0 || text[i] == '.')) ++i;
  const std::string number = text.substr(start, i - start);
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size()) return invalid();
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
  std::size_t unit_end = i;
  while (unit_end < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_end])) != 0) ++unit_end;
  const std::string unit = text.substr(i, unit_end - i);
  for (std::size_t k = unit_end; k < text.size(); ++k) {
    if (std::isspace(static_cast<unsigned char>(text[k])) == 0) return invalid();
  }
  constexpr std::pair<std::string_view, double> kUnits[] = {{"us", 0.001}, {"ms", 1}, {"s", 1e3}, {"min", 60e3}, {"h", 3600e3}, {"d", 86'400e3}};
  double ms = -1;
  for (const auto& [u, size] : kUnits) {
    if (unit == u) ms = std::nearbyint(v * size);
  }
  if (unit.empty()) ms = std::nearbyint(v);
  if (ms == -1 && !unit.empty()) return invalid();
  if (ms > std::numeric_limits<std::int32_t>::max() || ms < std::numeric_limits<std::int32_t>::min()) return invalid();
  if (ms < 0) {
    throw SqlError("22023", fmt::format("{} ms is outside the valid range for parameter \"{}\" (0 .. 2147483647)", static_cast<std::int64_t>(ms), name));
  }
  return std::chrono::milliseconds(static_cast<std::int64_t>(ms));
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
    if (name == "default_transaction_isolation") return Value::text("read committed");
    if (name == "transaction_isolation") return Value::text(c_.serializable_ ? "serializable" : c_.repeatable_read_ ? "repeatable read" : "read committed");
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
  }
  started_ = true;
  return std::nullopt;
}

Result<Rows> SqlRun::done(Rows rows) {
  if (nested_ && enclosing_ != nullptr) return rows;  // its statement ends it
  if (!after_rows_.empty()) fire_after_rows();  // AFTER ROW triggers, as the query ends (AfterTriggerEndQuery)
  if (nested_) return rows;  // a plpgsql function's statement: the calling one ends the transaction
  if (Status ended = c_.end_statement(); !ended.ok()) return ended.error();
  return rows;
}

Result<Rows> SqlRun::statement(const sql::Transaction& t) {
  Rows out;
  Status st;
  switch (t.kind) {
    case sql::Transaction::Kind::begin: {
      if (c_.implicit_block_ && t.isolation && *t.isolation != sql::Isolation::read_committed) {
        // The server: "SET TRANSACTION ISOLATION LEVEL must be called before any query" once
        // a statement of the string took a snapshot; which statements do is not modelled.
        throw SqlError("0A000", "BEGIN ISOLATION LEVEL after another statement of the same string is not in lockstep's SQL subset (docs/sql.md)");
      }
      const bool was = c_.session_.in_transaction;
      st = c_.begin();
      if (st.ok() && !was) c_.transaction_start_ = c_.statement_time();
      if (st.ok()) transaction_options(t);  // inside a transaction too, after the server's WARNING
      out.tag = t.start ? "START TRANSACTION" : "BEGIN";
      break;
    }
    case sql::Transaction::Kind::commit: {
      const bool rolls_back = c_.session_.aborted;
      st = c_.commit();
      out.tag = rolls_back ? "ROLLBACK" : "COMMIT";
      break;
    }
    case sql::Transaction::Kind::rollback:
      st = c_.rollback();
      out.tag = "ROLLBACK";
      break;
    case sql::Transaction::Kind::savepoint:
      st = c_.savepoint(t.savepoint);
      out.tag = "SAVEPOINT";
      break;
    case sql::Transaction::Kind::release:
      st = c_.release_savepoint(t.savepoint);
      out.tag = "RELEASE";
      break;
    case sql::Transaction::Kind::rollback_to:
      st = c_.rollback_to_savepoint(t.savepoint);
      out.tag = "ROLLBACK";
      break;
    case sql::Transaction::Kind::set_transaction: return set_transaction(t);
  }
  if (!st.ok()) return st.error();
  return out;
}

Result<Rows> SqlRun::set_transaction(const sql::Transaction& t) {
  SimConnection::Statement guard(c_);
  if (auto refused = c_.begin_statement(OpDesc{"set_transaction", {}, 0, false}, false)) return *refused;
  if (!c_.session_.in_transaction) {  // the statement's own transaction has it, then ends
    c_.warnings_.push_back({"25P01", "SET TRANSACTION can only be used in transaction blocks"});
    return done(Rows{{}, {}, "SET"});
  }
  transaction_options(t);
  return done(Rows{{}, {}, "SET"});
}

void SqlRun::transaction_options(const sql::Transaction& t) {
  // The server's checks (check_transaction_isolation, check_transaction_read_only); a
  // snapshot open (a REPEATABLE READ one) is a query run.
  const bool queried = c_.queried_ || c_.snapshot_.has_value();
  const sql::Isolation now = c_.serializable_ ? sql::Isolation::serializable : c_.repeatable_read_ ? sql::Isolation::repeatable_read : sql::Isolation::read_committed;
  if (t.isolation && *t.isolation != now) {
    if (queried) throw SqlError("25001", "SET TRANSACTION ISOLATION LEVEL must be called before any query");
    if (!c_.savepoints_.empty()) throw SqlError("25001", "SET TRANSACTION ISOLATION LEVEL must not be called in a subtransaction");
    c_.repeatable_read_ = c_.serializable_ = false;
    if (*t.isolation != sql::Isolation::read_committed) c_.use_repeatable_read(*t.isolation == sql::Isolation::serializable);
  }
  if (t.read_only) {
    if (!*t.read_only && c_.read_only_ && !c_.savepoints_.empty()) throw SqlError("25001", "cannot set transaction read-write mode inside a read-only transaction");
    if (!*t.read_only && c_.read_only_ && queried) throw SqlError("25001", "transaction read-write mode must be set before any query");
    c_.read_only_ = *t.read_only;
  }
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

Result<Rows> SqlRun::statement(const sql::SetVariable& v) {
  if (v.style) {  // TimeZone, DateStyle, IntervalStyle, search_path, application_name: the session's own, no other step sees them
    SimConnection::Statement guard(c_);
    if (auto refused = begin("sql_set", Footprint{})) return *refused;
    c_.set_style(v.local, [&](sql::SessionStyle& style, std::string& application_name) {
      if (v.name == "application_name") {  // RESET: the connection's (its pool's option)
        application_name = v.value ? *v.value : c_.config_.application_name;
      } else if (v.value->empty()) {  // RESET, SET ... TO DEFAULT
        sql::reset_style_setting(style, c_.start_style_, v.name);
      } else if (!sql::apply_style_setting(style, v.name, *v.value)) {
        throw std::logic_error("SET of a style the parser accepted and the server does not");
      }
    });
    return done(Rows{{}, {}, v.reset ? "RESET" : "SET"});
  }
  if (sql::is_custom_setting(v.name)) {  // a placeholder: any text, the session's own
    const Status st = c_.set_custom(v.name, v.value, v.local);
    if (!st.ok()) return st.error();
    return Rows{{}, {}, v.reset ? "RESET" : "SET"};
  }
  if (const int bit = planner_switch_named(v.name); bit >= 0) {
    const Status st = c_.set_planner_switch(bit, v.value ? setting_bool(v.name, *v.value) : true, v.local);
    if (!st.ok()) return st.error();
    return Rows{{}, {}, v.reset ? "RESET" : "SET"};
  }
  const SimConnection::Timeout which = timeout_named(v.name);
  // RESET and SET ... TO DEFAULT: the server's default (0, or the pool's deadlock_timeout).
  const Duration d = v.value                                    ? setting_duration(v.name, *v.value)
                     : which == SimConnection::Timeout::deadlock ? c_.config_.deadlock_timeout
                                                                 : Duration{0};
  const Status st = c_.set_timeout(which, d, v.local);
  if (!st.ok()) return st.error();
  return Rows{{}, {}, v.reset ? "RESET" : "SET"};
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
  if (n == "to_regclass") {  // the catalog, which only DDL outside the sessions changes
    if (args.at(0).is_null()) return Value::null(Type::text);
    const std::optional<std::string> found = to_regclass(server_, sql::cast(args[0], Type::text).as_text());
    return found ? Value::text(*found) : Value::null(Type::text);
  }
  if (n == "gen_random_uuid" || n == "uuid_generate_v4") {  // deterministic: the session's pid and its count of draws (model/sql/binary_types.h)
    if (n != "gen_random_uuid" && !server_.has_extension("uuid-ossp")) throw sql::SqlError("42883", "function uuid_generate_v4() does not exist");
    return sql::uuid_from_seed((static_cast<std::uint64_t>(c_.pid_) << 32) | ++c_.random_draws_);
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
    const bool custom = sql::is_custom_setting(setting);
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
