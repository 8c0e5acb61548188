// sim/pg/sql_exec.cc: SQL on the simulated server (SimConnection::exec), the subset of
// docs/sql.md with PostgreSQL 15's READ COMMITTED semantics.
//
// A statement that reads a table takes one step that scans it (its snapshot: the committed
// rows and the session's own, at that moment); one that locks or changes rows then takes
// each candidate's row lock in a step of its own, in order, waiting as the server does for
// a row another transaction locked or changed; after a wait it evaluates WHERE again on the
// newest version (EvalPlanQual) and skips a row that no longer matches or is gone, keeping
// its lock. An INSERT takes a step per row that writes the table's object (its sequences,
// and what scans see at commit) and waits, as the unique check does, for another
// transaction that wrote the same primary key. Functions of advisory locks and sessions run
// as the typed operations do (sim/pg/advisory_locks.cc). An error aborts the transaction,
// or, outside one, drops what the statement wrote.
#include <algorithm>
#include <map>
#include <unordered_map>

#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/parse.h"
#include "lockstep/sim/pg/connection.h"

namespace lockstep::sim::pg {

using lockstep::pg::Param;
using lockstep::pg::Rows;
using sql::Expr;
using sql::SqlError;
using sql::Type;
using sql::Value;

namespace {

// Plans by statement text: parsed once per thread (the simulation's threads each run whole
// executions), bounded.
std::shared_ptr<const std::vector<sql::Statement>> plans_of(std::string_view text) {
  thread_local std::unordered_map<std::string, std::shared_ptr<const std::vector<sql::Statement>>> cache;
  const std::string key(text);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  auto plans = std::make_shared<const std::vector<sql::Statement>>(sql::parse_sql(text));
  if (cache.size() >= 4096) cache.clear();
  cache.emplace(key, plans);
  return plans;
}

Error error_of(const SqlError& e) { return Error{e.sqlstate(), e.what()}; }

// A stored row's value of column i: its text read as the column's type (absent: NULL).
Value stored(const SqlTable& t, const Row& row, int i) {
  const sql::ColumnDef& c = t.def.columns[static_cast<std::size_t>(i)];
  const auto it = row.find(c.name);
  if (it == row.end()) return Value::null(c.type);
  return sql::cast(Value::unknown(it->second), c.type);
}

// The value as a column of type `to` stores it (an assignment: PostgreSQL's assignment casts).
Value assigned(const Value& v, const sql::ColumnDef& c, const std::string& table) {
  const Type from = v.type();
  const bool allowed = v.is_null() || from == Type::unknown || from == c.type || (sql::is_integer(from) && sql::is_integer(c.type)) ||
                       c.type == Type::text;
  if (!allowed) {
    throw SqlError("42804", fmt::format("column \"{}\" is of type {} but expression is of type {}", c.name, sql::type_name(c.type),
                                        sql::type_name(from)));
  }
  Value out = sql::cast(v, c.type);
  if (out.is_null() && c.not_null) {
    throw SqlError("23502", fmt::format("null value in column \"{}\" of relation \"{}\" violates not-null constraint", c.name, table));
  }
  if (c.max_length > 0 && !out.is_null()) {
    std::size_t chars = 0;
    for (unsigned char ch : out.as_text()) chars += (ch & 0xC0) != 0x80 ? 1 : 0;
    if (chars > static_cast<std::size_t>(c.max_length)) {
      throw SqlError("22001", fmt::format("value too long for type character varying({})", c.max_length));
    }
  }
  return out;
}

std::optional<std::string> output(const Value& v) {
  if (v.is_null()) return std::nullopt;
  return v.text_output();
}

Duration setting_duration(const std::string& text) {
  // lock_timeout and statement_timeout: milliseconds, or a number with a unit.
  const std::string trimmed = text;
  bool digits = !trimmed.empty() && std::all_of(trimmed.begin(), trimmed.end(), [](unsigned char c) { return std::isdigit(c); });
  if (digits) return std::chrono::milliseconds(std::stoll(trimmed));
  try {
    return std::chrono::microseconds(sql::parse_interval(trimmed));
  } catch (const SqlError&) {
    throw SqlError("22023", fmt::format("invalid value for parameter: \"{}\"", text));
  }
}

}  // namespace

// One statement of SQL text on one session.
class SqlRun final : public sql::EvalContext {
  // An error inside a helper that returns rows: unwound to run_checked(), which fails the statement.
  struct Raised {
    Error error;
  };

 public:
  SqlRun(SimConnection& c, const sql::Statement& st, const std::vector<Param>& params)
      : c_(c), server_(c.server_), s_(c.s_), st_(st), params_(params) {}

  Result<Rows> run() {
    const auto* t = std::get_if<sql::Transaction>(&st_.body);
    const bool ends = t != nullptr && (t->kind == sql::Transaction::Kind::commit || t->kind == sql::Transaction::Kind::rollback);
    if (c_.aborted_ && !ends) {
      // A failed transaction refuses every statement but its end before looking at it (25P02).
      SimConnection::Statement guard(c_);
      if (auto refused = c_.begin_statement(OpDesc{"sql", Footprint{}, 0, false})) return *refused;
    }
    try {
      return std::visit([this](const auto& body) { return this->statement(body); }, st_.body);
    } catch (const SqlError& e) {
      return fail(error_of(e));
    }
  }

  // EvalContext
  Value column(const Expr& ref) override {
    if (ref.qualifier == "excluded") {
      if (excluded_ == nullptr) throw SqlError("42P01", "missing FROM-clause entry for table \"excluded\"");
      return value_of(*excluded_, ref);
    }
    if (!ref.qualifier.empty() && table_ != nullptr && ref.qualifier != table_->def.table && ref.qualifier != alias_) {
      throw SqlError("42P01", fmt::format("missing FROM-clause entry for table \"{}\"", ref.qualifier));
    }
    if (table_ == nullptr || row_ == nullptr) {
      throw SqlError("42703", fmt::format("column \"{}\" does not exist", ref.name));
    }
    return value_of(*row_, ref);
  }
  Value param(int number) override {
    if (number < 1 || static_cast<std::size_t>(number) > params_.size()) {
      throw SqlError("08P01", fmt::format("bind message supplies {} parameters, but prepared statement \"\" requires {}",
                                          params_.size(), st_.max_param));
    }
    const Param& p = params_[static_cast<std::size_t>(number) - 1];
    return p ? Value::unknown(*p) : Value::null();
  }
  Value call(const Expr& e, const std::vector<Value>& args) override {
    const sql::FunctionInfo* f = sql::find_function(e.name);
    if (f->kind == sql::FunctionKind::aggregate) return aggregate(e);
    if (f->kind == sql::FunctionKind::time) {
      const Time t = e.name == "clock_timestamp"       ? s_.now()
                     : e.name == "statement_timestamp" ? statement_start_
                     : c_.session_.in_transaction      ? c_.transaction_start_
                                                       : statement_start_;
      return Value::timestamptz(std::chrono::duration_cast<std::chrono::microseconds>(t).count());
    }
    return session_function(e, args);
  }
  Value subquery(const Expr& e) override {
    if (auto it = subqueries_.find(&e); it != subqueries_.end()) return it->second;
    // An InitPlan: evaluated once per statement, on the statement's snapshot.
    const sql::Select& sub = *e.select;
    SqlTable* t = sub.table.empty() ? nullptr : table(sub.table);
    if (t != nullptr) check_select(sub, *t);
    if (t != nullptr && sub.lock != sql::RowLock::none) {
      // It locks rows: its scan is a step of its own, before its row locks.
      if (auto refused = begin("sql_scan", on(t->object, Access::read))) throw Raised{*refused};
    } else if (t != nullptr && s_.in_actor()) {
      s_.also_touch(t->object);  // read within the step running now (an extra object counts as written: coarser, sound)
    }
    const Saved saved = save();
    const std::optional<std::int64_t> outer_pinned = std::exchange(pinned_, std::nullopt);  // the statement's, not the subquery's
    std::vector<std::vector<Value>> rows = select_values(sub, t, /*first_step=*/false);
    pinned_ = outer_pinned;
    restore(saved);
    Value v = e.kind == Expr::Kind::exists ? Value::boolean(!rows.empty()) : rows.empty() ? Value::null() : rows.front().front();
    if (e.kind == Expr::Kind::subquery && rows.size() > 1) {
      throw SqlError("21000", "more than one row returned by a subquery used as an expression");
    }
    subqueries_.emplace(&e, v);
    return v;
  }

 private:
  struct Saved {
    SqlTable* table;
    std::string alias;
    const Row* row;
    const std::vector<const Row*>* group;
  };
  Saved save() const { return {table_, alias_, row_, group_}; }
  void restore(const Saved& s) {
    table_ = s.table;
    alias_ = s.alias;
    row_ = s.row;
    group_ = s.group;
  }

  Value value_of(const Row& row, const Expr& ref) const {
    const int i = table_->column(ref.name);
    if (i < 0) {
      throw SqlError("42703", fmt::format("column \"{}\" does not exist", ref.qualifier.empty() ? ref.name : ref.qualifier + "." + ref.name));
    }
    return stored(*table_, row, i);
  }

  // Every column the expression names in table t exists (as PostgreSQL's analysis checks
  // before running anything): 42703 otherwise. `outputs` are names ORDER BY may also use.
  void check_columns(const Expr& e, const SqlTable& t, const std::string& alias, const std::vector<std::string>& outputs = {}) const {
    if (e.kind == Expr::Kind::column && e.qualifier != "excluded") {
      if (!e.qualifier.empty() && e.qualifier != t.def.table && e.qualifier != alias) {
        throw SqlError("42P01", fmt::format("missing FROM-clause entry for table \"{}\"", e.qualifier));
      }
      if (t.column(e.name) < 0 && (!e.qualifier.empty() || std::find(outputs.begin(), outputs.end(), e.name) == outputs.end())) {
        throw SqlError("42703", fmt::format("column \"{}\" does not exist", e.qualifier.empty() ? e.name : e.qualifier + "." + e.name));
      }
    }
    if (e.kind == Expr::Kind::subquery || e.kind == Expr::Kind::exists) return;  // checked with its own table when it runs
    for (const Expr& a : e.args) check_columns(a, t, alias, outputs);
  }
  void check_columns(const std::vector<sql::Target>& targets, const SqlTable& t, const std::string& alias) const {
    for (const sql::Target& target : targets) {
      if (!target.star) check_columns(target.expr, t, alias);
    }
  }
  void check_select(const sql::Select& sel, const SqlTable& t) const {
    check_columns(sel.targets, t, sel.alias);
    if (sel.where) check_columns(*sel.where, t, sel.alias);
    std::vector<std::string> outputs;
    for (const sql::Target& target : sel.targets) outputs.push_back(target.name);
    for (const sql::OrderItem& o : sel.order_by) check_columns(o.expr, t, sel.alias, outputs);
  }

  // The row a WHERE pins by the whole primary key (`key = constant or $n`, ANDed with
  // anything), or nullopt. Such a statement touches that row only: its first step is on the
  // row's object, not a scan of the table.
  std::optional<std::int64_t> pinned_row(SqlTable& t, const std::string& alias, const std::optional<Expr>& where) {
    if (!where || t.key.empty()) return std::nullopt;
    std::vector<const Expr*> conjuncts;
    std::vector<const Expr*> pending = {&*where};
    while (!pending.empty()) {
      const Expr* e = pending.back();
      pending.pop_back();
      if (e->kind == Expr::Kind::and_) {
        for (const Expr& a : e->args) pending.push_back(&a);
      } else {
        conjuncts.push_back(e);
      }
    }
    auto fixed = [](const Expr& e) {
      const Expr* x = &e;
      while (x->kind == Expr::Kind::cast) x = &x->args[0];
      return x->kind == Expr::Kind::constant || x->kind == Expr::Kind::param;
    };
    Row key;
    for (int i : t.key) {
      const sql::ColumnDef& col = t.def.columns[static_cast<std::size_t>(i)];
      const Expr* value = nullptr;
      for (const Expr* c : conjuncts) {
        if (c->kind != Expr::Kind::op || c->name != "=") continue;
        for (int side = 0; side < 2 && value == nullptr; ++side) {
          const Expr& l = c->args[static_cast<std::size_t>(side)];
          const Expr& r = c->args[static_cast<std::size_t>(1 - side)];
          if (l.kind == Expr::Kind::column && l.name == col.name && (l.qualifier.empty() || l.qualifier == t.def.table || l.qualifier == alias) &&
              fixed(r)) {
            value = &r;
          }
        }
      }
      if (value == nullptr) return std::nullopt;
      table_ = nullptr;
      const Value v = sql::evaluate(*value, *this);
      if (v.is_null()) return std::nullopt;
      key[col.name] = sql::cast(v, col.type).text_output();
    }
    return id_of(t, key);
  }

  SqlTable* table(const std::string& name) {
    SqlTable* t = server_.sql_table(name);
    if (t == nullptr) throw SqlError("42P01", fmt::format("relation \"{}\" does not exist", name));
    return t;
  }

  // An error: the transaction aborts (25P02 until it ends); outside one the statement's
  // writes and row locks go.
  Error fail(Error e) {
    if (c_.session_.in_transaction) return c_.abort_with(std::move(e));
    if (!c_.written_.empty() || !c_.locked_rows_.empty()) c_.release_now({.rows = true, .commit = false}, "rollback");
    return e;
  }

  // The statement's first step.
  std::optional<Error> begin(std::string_view verb, Footprint fp, std::int64_t arg = 0) {
    OpDesc op{verb, fp, arg, arg != 0};
    if (auto refused = c_.begin_statement(op)) return refused;
    if (!started_) statement_start_ = s_.now();
    started_ = true;
    return std::nullopt;
  }
  Footprint on(ObjectId obj, Access a) const { return server_.on(obj, a); }

  Result<Rows> done(Rows rows) {
    if (Status ended = c_.end_statement(); !ended.ok()) return ended.error();
    return rows;
  }

  // ---- Transactions and settings: the typed statements.
  Result<Rows> statement(const sql::Transaction& t) {
    Rows out;
    Status st;
    switch (t.kind) {
      case sql::Transaction::Kind::begin: {
        const bool was = c_.session_.in_transaction;
        st = c_.begin();
        if (st.ok() && !was) c_.transaction_start_ = s_.now();
        out.tag = "BEGIN";
        break;
      }
      case sql::Transaction::Kind::commit: {
        const bool rolls_back = c_.aborted_;
        st = c_.commit();
        out.tag = rolls_back ? "ROLLBACK" : "COMMIT";
        break;
      }
      case sql::Transaction::Kind::rollback:
        st = c_.rollback();
        out.tag = "ROLLBACK";
        break;
      default: return Error{"0A000", "savepoints are not in lockstep's SQL subset (docs/sql.md)"};
    }
    if (!st.ok()) return st.error();
    return out;
  }

  Result<Rows> statement(const sql::SetVariable& v) {
    const Duration d = v.value ? setting_duration(*v.value) : Duration{0};
    const Status st = v.name == "lock_timeout" ? c_.set_lock_timeout(d) : c_.set_statement_timeout(d);
    if (!st.ok()) return st.error();
    return Rows{{}, {}, v.value ? "SET" : "RESET"};
  }

  // ---- DDL: one step that writes the whole server; not inside a transaction block.
  // The catalog is fixed while actors run (a spec's setup and teardown, a model's
  // constructor): statements then look tables up without a step of their own.
  std::optional<Error> ddl_step() {
    if (s_.in_actor()) {
      return Error{"0A000",
                   "DDL while the sessions run is not in lockstep's SQL subset: create and drop tables in the setup (docs/sql.md)"};
    }
    if (c_.session_.in_transaction) {
      return Error{"0A000", "DDL inside a transaction block is not in lockstep's SQL subset (docs/sql.md)"};
    }
    return begin("sql_ddl", SimConnection::whole_server(Access::write));
  }

  Result<Rows> statement(const sql::CreateTable& ct) {
    SimConnection::Statement guard(c_);
    if (auto refused = ddl_step()) return *refused;
    if (server_.sql_table(ct.table) != nullptr) {
      if (ct.if_not_exists) return done(Rows{{}, {}, "CREATE TABLE"});
      return Error{"42P07", fmt::format("relation \"{}\" already exists", ct.table)};
    }
    if (!ct.unique.empty()) return Error{"0A000", "UNIQUE constraints besides the primary key are not in lockstep's SQL subset (docs/sql.md)"};
    for (const auto& col : ct.columns) {
      // A default is evaluated at each insert; here only checked to be one the subset reads.
      if (col.default_value && col.default_value->kind == Expr::Kind::column) {
        return Error{"0A000", "cannot use column reference in DEFAULT expression"};
      }
    }
    server_.add_sql_table(ct);
    return done(Rows{{}, {}, "CREATE TABLE"});
  }

  Result<Rows> statement(const sql::DropTable& d) {
    SimConnection::Statement guard(c_);
    if (auto refused = ddl_step()) return *refused;
    for (const std::string& name : d.tables) {
      if (server_.sql_table(name) == nullptr) {
        if (d.if_exists) continue;
        return Error{"42P01", fmt::format("table \"{}\" does not exist", name)};
      }
      server_.drop_sql_table(name);
    }
    return done(Rows{{}, {}, "DROP TABLE"});
  }

  Result<Rows> statement(const sql::CreateIndex& ix) {
    SimConnection::Statement guard(c_);
    if (auto refused = ddl_step()) return *refused;
    const SqlTable* t = table(ix.table);
    for (const std::string& col : ix.columns) {
      if (t->column(col) < 0) return Error{"42703", fmt::format("column \"{}\" does not exist", col)};
    }
    if (ix.unique && ix.columns != t->def.primary_key) {
      return Error{"0A000", "a unique index besides the primary key is not in lockstep's SQL subset (docs/sql.md)"};
    }
    return done(Rows{{}, {}, "CREATE INDEX"});
  }

  // ---- SELECT
  Result<Rows> statement(const sql::Select& sel) {
    if (sel.table.empty()) return select_without_from(sel);
    SqlTable* t = table(sel.table);
    check_select(sel, *t);
    SimConnection::Statement guard(c_);
    prepare_locking_subqueries(sel.where);
    pinned_ = pinned_row(*t, sel.alias, sel.where);
    if (pinned_ && sel.lock != sql::RowLock::none && sel.wait != sql::LockWait::skip_locked) {
      // Its first step is the row's lock, taken only when the row matches (as update_row_if's).
      statement_start_ = s_.now();
      started_ = true;
    } else if (pinned_) {
      if (auto refused = begin("sql_read", on(server_.row_object(t->def.table, *pinned_), Access::read))) return *refused;
    } else if (auto refused = begin("sql_scan", on(t->object, Access::read))) {
      return *refused;
    }
    Rows out;
    out.columns = column_names(sel.targets, t);
    for (auto& values : select_values(sel, t, true)) {
      std::vector<std::optional<std::string>> row;
      for (const Value& v : values) row.push_back(output(v));
      out.rows.push_back(std::move(row));
    }
    out.tag = fmt::format("SELECT {}", out.rows.size());
    return done(std::move(out));
  }

  std::vector<std::string> column_names(const std::vector<sql::Target>& targets, const SqlTable* t) const {
    std::vector<std::string> names;
    for (const sql::Target& target : targets) {
      if (target.star) {
        for (const auto& col : t->def.columns) names.push_back(col.name);
      } else {
        names.push_back(target.name);
      }
    }
    return names;
  }

  std::vector<Value> project(const std::vector<sql::Target>& targets) {
    std::vector<Value> values;
    for (const sql::Target& target : targets) {
      if (target.star) {
        for (std::size_t i = 0; i < table_->def.columns.size(); ++i) values.push_back(stored(*table_, *row_, static_cast<int>(i)));
      } else {
        values.push_back(sql::evaluate(target.expr, *this));
      }
    }
    return values;
  }

  // The rows of the table this session sees now that match WHERE, as (id, row), in id order.
  std::vector<std::pair<std::int64_t, Row>> scan(SqlTable* t, const std::string& alias, const std::optional<Expr>& where) {
    std::vector<std::pair<std::int64_t, Row>> out;
    const std::string name = t->def.table;
    std::vector<std::int64_t> ids;
    if (pinned_) {
      ids.push_back(*pinned_);
    } else {
      server_.each_row(name, [&](std::int64_t id, RowState&) { ids.push_back(id); });
    }
    for (std::int64_t id : ids) {
      const std::optional<Row>& r = c_.visible(name, id);
      if (!r) continue;
      Row copy = *r;
      table_ = t;
      alias_ = alias;
      row_ = &copy;
      const bool keep = !where || sql::is_true(sql::evaluate(*where, *this));
      row_ = nullptr;
      if (keep) out.emplace_back(id, std::move(copy));
    }
    return out;
  }

  // SELECT's rows as values: scan, ORDER BY, row locks (in order, until LIMIT has its rows),
  // OFFSET and LIMIT, aggregates. With `first_step` false (a subquery) the scan is part of
  // the step running now, and row locks take steps of their own as in a statement.
  std::vector<std::vector<Value>> select_values(const sql::Select& sel, SqlTable* t, bool /*first_step*/) {
    if (t == nullptr) {
      table_ = nullptr;
      row_ = nullptr;
      return {project(sel.targets)};
    }
    std::vector<std::pair<std::int64_t, Row>> rows;
    const bool lock_first = pinned_ && sel.lock != sql::RowLock::none && sel.wait != sql::LockWait::skip_locked;
    if (lock_first) {
      rows.emplace_back(*pinned_, Row{});  // lock_rows takes its lock if it matches
    } else {
      rows = scan(t, sel.alias, sel.where);
    }
    sort(rows, sel, t);
    const std::int64_t offset = bound(sel.offset, "OFFSET");
    const std::int64_t limit = sel.limit ? bound(sel.limit, "LIMIT") : -1;
    if (sel.lock != sql::RowLock::none) rows = lock_rows(std::move(rows), sel, t, offset, limit);
    std::vector<std::vector<Value>> out;
    table_ = t;
    alias_ = sel.alias;
    if (sel.aggregate) {
      std::vector<const Row*> group;
      for (const auto& r : rows) group.push_back(&r.second);
      group_ = &group;
      row_ = nullptr;
      out.push_back(project(sel.targets));
      group_ = nullptr;
      return out;
    }
    std::int64_t skipped = 0;
    for (const auto& [id, row] : rows) {
      if (skipped < offset) {
        ++skipped;
        continue;
      }
      if (limit >= 0 && static_cast<std::int64_t>(out.size()) >= limit) break;
      row_ = &row;
      out.push_back(project(sel.targets));
    }
    row_ = nullptr;
    return out;
  }

  std::int64_t bound(const std::optional<Expr>& e, std::string_view what) {
    if (!e) return 0;
    table_ = nullptr;
    const Value v = sql::cast(sql::evaluate(*e, *this), Type::int8);
    if (v.is_null()) return what == "LIMIT" ? -1 : 0;
    if (v.as_integer() < 0) throw SqlError("2201W", fmt::format("{} must not be negative", what));
    return v.as_integer();
  }

  void sort(std::vector<std::pair<std::int64_t, Row>>& rows, const sql::Select& sel, SqlTable* t) {
    if (sel.order_by.empty()) return;
    table_ = t;
    alias_ = sel.alias;
    std::vector<std::pair<std::vector<Value>, std::size_t>> keys;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      row_ = &rows[i].second;
      std::vector<Value> k;
      for (const sql::OrderItem& o : sel.order_by) k.push_back(sql::evaluate(order_expr(o.expr, sel), *this));
      keys.emplace_back(std::move(k), i);
    }
    row_ = nullptr;
    std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
      for (std::size_t k = 0; k < sel.order_by.size(); ++k) {
        const sql::OrderItem& o = sel.order_by[k];
        const Value& x = a.first[k];
        const Value& y = b.first[k];
        const bool nulls_first = o.nulls_first.value_or(o.descending);
        if (x.is_null() || y.is_null()) {
          if (x.is_null() && y.is_null()) continue;
          return x.is_null() == nulls_first;
        }
        const auto c = sql::compare(x, y, "<");
        if (c == 0) continue;
        return o.descending ? c > 0 : c < 0;
      }
      return false;
    });
    std::vector<std::pair<std::int64_t, Row>> sorted;
    for (const auto& [k, i] : keys) sorted.push_back(std::move(rows[i]));
    rows = std::move(sorted);
  }

  // ORDER BY 2 is the second output column; ORDER BY name is an output column's alias when
  // the table has no such column.
  static const Expr& order_expr(const Expr& e, const sql::Select& sel) {
    if (e.kind == Expr::Kind::constant && sql::is_integer(e.value.type())) {
      const std::int64_t n = e.value.as_integer();
      if (n < 1 || n > static_cast<std::int64_t>(sel.targets.size()) || sel.targets[static_cast<std::size_t>(n) - 1].star) {
        throw SqlError("42P10", fmt::format("ORDER BY position {} is not in select list", n));
      }
      return sel.targets[static_cast<std::size_t>(n) - 1].expr;
    }
    return e;
  }

  // Row locks for SELECT ... FOR UPDATE / SHARE, in the rows' order, until OFFSET + LIMIT
  // rows are locked: each a step. After a wait, WHERE is evaluated again on the newest
  // version; a row that fails it, or is gone, is left out (and stays locked).
  std::vector<std::pair<std::int64_t, Row>> lock_rows(std::vector<std::pair<std::int64_t, Row>> rows, const sql::Select& sel,
                                                      SqlTable* t, std::int64_t offset, std::int64_t limit) {
    const std::string name = t->def.table;
    const LockMode mode = sel.lock == sql::RowLock::update ? LockMode::exclusive : LockMode::shared;
    std::vector<std::pair<std::int64_t, Row>> locked;
    for (auto& [id, row] : rows) {
      if (limit >= 0 && static_cast<std::int64_t>(locked.size()) >= offset + limit) break;
      if (sel.wait == sql::LockWait::skip_locked) {
        if (!try_lock_row(name, id, mode)) continue;
      } else {
        const Stmt verb = mode == LockMode::shared ? Stmt::select_for_share
                          : sel.wait == sql::LockWait::nowait ? Stmt::select_for_update_nowait
                                                              : Stmt::select_for_update;
        std::function<bool()> wanted;
        if (pinned_ && *pinned_ == id && sel.where) {
          wanted = [&, id = id] {
            const std::optional<Row>& current = c_.visible(name, id);
            return current.has_value() && still_matches(t, sel.alias, *current, *sel.where);
          };
        }
        const Result<bool> got = c_.lock_row(name, id, sel.wait == sql::LockWait::nowait, verb, mode, wanted);
        if (!got.ok()) throw Raised{got.error()};
        if (!got.value()) continue;
      }
      std::optional<Row> newest = c_.visible(name, id);
      if (!newest) {
        forget_gone_row(name, id);
        continue;
      }
      if (sel.where && !still_matches(t, sel.alias, *newest, *sel.where)) continue;
      locked.emplace_back(id, std::move(*newest));
    }
    return locked;
  }

  // A row whose lock this session got after waiting, and found deleted meanwhile: the lock
  // was on a version that is gone, and PostgreSQL holds nothing on it; it goes at once
  // (unless this transaction wrote the row itself), in the step that found it gone.
  void forget_gone_row(const std::string& table, std::int64_t id) {
    const std::pair<std::string, std::int64_t> row{table, id};
    if (c_.written_.count(row) != 0 || c_.locked_rows_.count(row) == 0) return;
    c_.locked_rows_.erase(row);
    server_.row_locks().release_key(c_.pid_, server_.row_key(table, id), Scope::transaction);
  }

  bool still_matches(SqlTable* t, const std::string& alias, const Row& row, const Expr& where) {
    const Saved saved = save();
    table_ = t;
    alias_ = alias;
    row_ = &row;
    const bool ok = sql::is_true(sql::evaluate(where, *this));
    restore(saved);
    return ok;
  }

  // FOR ... SKIP LOCKED on one row: a step that takes the lock if nobody else's conflicts.
  bool try_lock_row(const std::string& table, std::int64_t id, LockMode mode) {
    const ObjectId obj = server_.row_object(table, id);
    const OpDesc first = narrowing({name(Stmt::select_for_update_skip_locked), {obj, acquire_access(mode)}, id, true});
    if (auto refused = c_.begin_statement(first)) throw Raised{*refused};
    const AdvisoryKey key = server_.row_key(table, id);
    bool got = c_.visible(table, id).has_value();
    if (got && server_.row_locks().held(c_.pid_, key, LockMode::exclusive) == 0 &&
        (mode == LockMode::exclusive || server_.row_locks().held(c_.pid_, key, LockMode::shared) == 0)) {
      got = server_.row_locks().try_request(c_.pid_, key, mode, Scope::transaction);
      if (got) c_.locked_rows_.emplace(table, id);
    }
    if (!got) s_.refine_access(Access::read);
    s_.note_result({Kind::value, got ? 1 : 0});
    return got;
  }

  // A subquery that locks rows takes its steps before the statement's own scan (its value is
  // then fixed for the statement, as an InitPlan's is).
  void prepare_locking_subqueries(const std::optional<Expr>& e) {
    if (!e) return;
    walk(*e);
  }
  void walk(const Expr& e) {
    if ((e.kind == Expr::Kind::subquery || e.kind == Expr::Kind::exists) && e.select->lock != sql::RowLock::none) {
      subquery(e);
      return;
    }
    for (const Expr& a : e.args) walk(a);
  }

  Value aggregate(const Expr& e) {
    if (group_ == nullptr) throw SqlError("42803", fmt::format("aggregate function calls cannot be nested or used here: {}()", e.name));
    const Saved saved = save();
    std::optional<Value> acc;
    std::int64_t count = 0;
    for (const Row* r : *group_) {
      row_ = r;
      if (e.star) {
        ++count;
        continue;
      }
      const Value v = sql::evaluate(e.args.at(0), *this);
      if (v.is_null()) continue;
      ++count;
      if (e.name == "count") continue;
      if (!acc) {
        acc = v;
      } else if (e.name == "sum") {
        if (!sql::is_integer(v.type())) throw SqlError("42883", fmt::format("function sum({}) does not exist", sql::type_name(v.type())));
        acc = Value::integer(acc->as_integer() + v.as_integer(), Type::int8);
      } else {
        const auto c = sql::compare(v, *acc, "<");
        if ((e.name == "min" && c < 0) || (e.name == "max" && c > 0)) acc = v;
      }
    }
    restore(saved);
    if (e.name == "count") return Value::integer(count, Type::int8);
    if (e.name == "sum" && acc) return Value::integer(acc->as_integer(), Type::int8);
    return acc ? *acc : Value::null();
  }

  // ---- SELECT without FROM: expressions, and the functions of locks and sessions.
  Result<Rows> select_without_from(const sql::Select& sel) {
    Rows out;
    out.columns = column_names(sel.targets, nullptr);
    bool has_session_call = false;
    for (const sql::Target& t : sel.targets) has_session_call = has_session_call || calls_server(t.expr);
    if (!has_session_call) {
      SimConnection::Statement guard(c_);
      if (auto refused = begin("sql", Footprint{})) return *refused;
      std::vector<std::optional<std::string>> row;
      table_ = nullptr;
      for (const Value& v : project(sel.targets)) row.push_back(output(v));
      out.rows.push_back(std::move(row));
      out.tag = "SELECT 1";
      return done(std::move(out));
    }
    // Each function of the lock table or the sessions is a statement of the typed API.
    statement_start_ = s_.now();
    std::vector<std::optional<std::string>> row;
    table_ = nullptr;
    for (const Value& v : project(sel.targets)) row.push_back(output(v));
    out.rows.push_back(std::move(row));
    out.tag = "SELECT 1";
    return out;
  }

  static bool calls_server(const Expr& e) {
    if (e.kind == Expr::Kind::func) {
      const sql::FunctionInfo* f = sql::find_function(e.name);
      if (f != nullptr && (f->kind == sql::FunctionKind::advisory_lock || f->kind == sql::FunctionKind::session)) return true;
    }
    return std::any_of(e.args.begin(), e.args.end(), [](const Expr& a) { return calls_server(a); });
  }

  static AdvisoryKey key_of(const std::vector<Value>& args) {
    if (args.size() == 1) return AdvisoryKey::single(sql::cast(args[0], Type::int8).as_integer());
    return AdvisoryKey::pair(static_cast<std::int32_t>(sql::cast(args[0], Type::int4).as_integer()),
                             static_cast<std::int32_t>(sql::cast(args[1], Type::int4).as_integer()));
  }

  Value session_function(const Expr& e, const std::vector<Value>& args) {
    for (const Value& a : args) {
      if (a.is_null()) return Value::null();  // strict functions
    }
    const std::string& n = e.name;
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
    if (n == "pg_terminate_backend") {
      return boolean(c_.terminate_backend(static_cast<int>(sql::cast(args[0], Type::int4).as_integer())));
    }
    if (n == "set_config") {
      const std::string setting = sql::cast(args[0], Type::text).as_text();
      const std::string value = sql::cast(args[1], Type::text).as_text();
      if (sql::cast(args[2], Type::boolean).as_bool()) {
        throw SqlError("0A000", "set_config(..., true) (transaction-local) is not in lockstep's SQL subset (docs/sql.md)");
      }
      if (setting == "lock_timeout") {
        check(c_.set_lock_timeout(setting_duration(value)));
      } else if (setting == "statement_timeout") {
        check(c_.set_statement_timeout(setting_duration(value)));
      } else {
        throw SqlError("0A000", fmt::format("the setting {} is not in lockstep's SQL subset (docs/sql.md)", setting));
      }
      return Value::text(value);
    }
    throw SqlError("0A000", fmt::format("{}() is not modeled by the simulated server yet (docs/sql.md)", n));
  }

  // ---- INSERT
  Result<Rows> statement(const sql::Insert& ins) {
    SqlTable* t = table(ins.table);
    SimConnection::Statement guard(c_);
    std::vector<int> columns;
    if (ins.columns.empty()) {
      for (std::size_t i = 0; i < t->def.columns.size(); ++i) columns.push_back(static_cast<int>(i));
    } else {
      for (const std::string& name : ins.columns) {
        const int i = t->column(name);
        if (i < 0) throw SqlError("42703", fmt::format("column \"{}\" of relation \"{}\" does not exist", name, ins.table));
        columns.push_back(i);
      }
    }
    for (const sql::Assignment& a : ins.conflict_set) {
      if (t->column(a.column) < 0) throw SqlError("42703", fmt::format("column \"{}\" of relation \"{}\" does not exist", a.column, ins.table));
      check_columns(a.value, *t, "");
    }
    if (ins.conflict_where) check_columns(*ins.conflict_where, *t, "");
    check_columns(ins.returning, *t, "");
    if (!ins.conflict_columns.empty()) {
      std::vector<std::string> key = ins.conflict_columns;
      std::vector<std::string> pk = t->def.primary_key;
      std::sort(key.begin(), key.end());
      std::sort(pk.begin(), pk.end());
      if (key != pk) {
        throw SqlError("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification");
      }
    }
    Rows out;
    out.columns = column_names(ins.returning, t);
    std::int64_t inserted = 0;
    bool first = true;
    for (const auto& values : ins.rows) {
      if (values.size() > columns.size()) throw SqlError("42601", "INSERT has more expressions than target columns");
      Row row = new_row(*t, columns, values, first);
      first = false;
      if (const auto r = insert_one(*t, ins, std::move(row), out); !r.ok()) return r.error();
      else inserted += r.value();
    }
    out.tag = fmt::format("INSERT 0 {}", inserted);
    return done(std::move(out));
  }

  // The row an INSERT's values make: defaults for the rest, each value as its column stores it.
  Row new_row(SqlTable& t, const std::vector<int>& columns, const std::vector<std::optional<Expr>>& values, bool first) {
    if (first) {
      // The statement's first step: it writes the table (its sequences; the row scans see at
      // commit), in which the values are evaluated.
      if (auto refused = begin("sql_insert", on(t.object, Access::write))) throw Raised{*refused};
    } else {
      if (auto refused = c_.begin_statement(OpDesc{"sql_insert", on(t.object, Access::write), 0, false})) throw Raised{*refused};
    }
    table_ = nullptr;
    row_ = nullptr;
    std::vector<std::optional<Value>> given(t.def.columns.size());
    for (std::size_t k = 0; k < values.size(); ++k) {
      if (values[k]) given[static_cast<std::size_t>(columns[k])] = sql::evaluate(*values[k], *this);
    }
    Row row;
    for (std::size_t i = 0; i < t.def.columns.size(); ++i) {
      const sql::ColumnDef& c = t.def.columns[i];
      Value v;
      if (given[i]) {
        v = *given[i];
      } else if (c.serial) {
        v = Value::integer(++t.sequences[i], c.type);
      } else if (c.default_value) {
        v = sql::evaluate(*c.default_value, *this);
      } else {
        v = Value::null(c.type);
      }
      const Value stored_value = assigned(v, c, t.def.table);
      if (!stored_value.is_null()) row[c.name] = stored_value.text_output();
    }
    return row;
  }

  // The row's id in the store: its primary key's (the same id for the same key), or a new one.
  std::int64_t id_of(SqlTable& t, const Row& row) {
    if (t.key.empty()) return t.next_id++;
    std::string key;
    for (int i : t.key) {
      const auto it = row.find(t.def.columns[static_cast<std::size_t>(i)].name);
      key += it == row.end() ? std::string("\x01null") : it->second;
      key += '\x1f';
    }
    const auto [it, added] = t.ids.emplace(std::move(key), t.next_id);
    if (added) ++t.next_id;
    return it->second;
  }

  // One row of an INSERT, in the step new_row began: 1 when inserted, 0 when ON CONFLICT did
  // nothing; DO UPDATE locks the existing row (waiting) and updates it when its WHERE holds.
  Result<std::int64_t> insert_one(SqlTable& t, const sql::Insert& ins, Row row, Rows& out) {
    const std::string name = t.def.table;
    const std::int64_t id = id_of(t, row);
    const ObjectId obj = server_.row_object(name, id);
    if (s_.in_actor()) s_.also_touch(obj);
    RowState& r = server_.row(name, id);
    // The unique check: another transaction that wrote this key (inserted, updated or
    // deleted its row) and has not ended is waited for (on its transaction), then the check
    // looks again: a delete that committed frees the key, one rolled back does not.
    auto writer_of = [&]() {
      for (const auto& [pid, version] : r.pending) {
        if (pid != c_.pid_) return pid;
      }
      return 0;
    };
    for (int writer = writer_of(); writer != 0 && r.pending.count(c_.pid_) == 0; writer = writer_of()) {
      const AdvisoryKey xact = server_.current_transaction_key(writer);
      auto waiter = server_.row_locks().request(c_.pid_, xact, LockMode::shared, Scope::transaction);
      LOCKSTEP_INVARIANT(waiter != nullptr, "a session with an uncommitted row version holds its transaction key");
      c_.note_queued(server_.row_locks(), xact, LockMode::shared);
      if (Status waited = c_.wait_for(server_.row_locks(), waiter, obj, Access::acquire, "row_lock_wait",
                                      fmt::format("the transaction of session {} (it wrote {}#{})", writer, name, id));
          !waited.ok()) {
        return waited.error();
      }
      server_.row_locks().release_key(c_.pid_, xact, Scope::transaction);
    }
    const bool exists = c_.visible(name, id).has_value();
    if (exists) {
      if (ins.on_conflict == sql::Insert::OnConflict::nothing) return 0;
      if (ins.on_conflict == sql::Insert::OnConflict::update) return conflict_update(t, ins, id, row, out);
      return fail(Error{std::string(sqlstate::kUniqueViolation),
                        fmt::format("duplicate key value violates unique constraint \"{}_pkey\"", name)});
    }
    const AdvisoryKey key = server_.row_key(name, id);
    if (!server_.row_locks().try_request(c_.pid_, key, LockMode::exclusive, Scope::transaction)) {
      // A session granted the lock of this key's deleted version has not run since: it lets
      // the lock go as it finds the row gone (forget_gone_row), and the insert takes it then.
      auto waiter = server_.row_locks().request(c_.pid_, key, LockMode::exclusive, Scope::transaction);
      LOCKSTEP_INVARIANT(waiter != nullptr, "a row lock held by another session makes a request wait");
      c_.note_queued(server_.row_locks(), key, LockMode::exclusive);
      if (Status waited = c_.wait_for(server_.row_locks(), waiter, obj, Access::acquire, "row_lock_wait",
                                      fmt::format("the row lock of {}#{} (a deleted version's)", name, id));
          !waited.ok()) {
        return waited.error();
      }
    }
    if (s_.logging()) s_.add_detail(row_text(row));
    returning(t, ins.returning, row, out);
    r.pending[c_.pid_] = std::move(row);
    c_.wrote(name, id);
    return 1;
  }

  Result<std::int64_t> conflict_update(SqlTable& t, const sql::Insert& ins, std::int64_t id, const Row& proposed, Rows& out) {
    const std::string name = t.def.table;
    const Result<bool> got = c_.lock_row(name, id, false, Stmt::update_row_if);
    if (!got.ok()) return got.error();
    std::optional<Row> current = c_.visible(name, id);
    if (!got.value() || !current) {
      throw SqlError("0A000", "ON CONFLICT DO UPDATE on a row deleted meanwhile is not modeled (docs/sql.md)");
    }
    excluded_ = &proposed;
    table_ = &t;
    alias_.clear();
    row_ = &*current;
    if (ins.conflict_where && !sql::is_true(sql::evaluate(*ins.conflict_where, *this))) {
      excluded_ = nullptr;
      return 0;
    }
    Row updated = apply_set(t, *current, ins.conflict_set);
    excluded_ = nullptr;
    write_version(t, id, std::move(updated), ins.returning, out);
    return 1;
  }

  // SET's new version of `row` (every value from the row as it was).
  Row apply_set(SqlTable& t, const Row& row, const std::vector<sql::Assignment>& set) {
    Row updated = row;
    table_ = &t;
    row_ = &row;
    for (const sql::Assignment& a : set) {
      const int i = t.column(a.column);
      if (i < 0) throw SqlError("42703", fmt::format("column \"{}\" of relation \"{}\" does not exist", a.column, t.def.table));
      if (std::find(t.key.begin(), t.key.end(), i) != t.key.end()) {
        throw SqlError("0A000", "an UPDATE of a primary key column is not in lockstep's SQL subset (docs/sql.md)");
      }
      const Value v = assigned(sql::evaluate(a.value, *this), t.def.columns[static_cast<std::size_t>(i)], t.def.table);
      if (v.is_null()) {
        updated.erase(a.column);
      } else {
        updated[a.column] = v.text_output();
      }
    }
    row_ = nullptr;
    return updated;
  }

  void write_version(SqlTable& t, std::int64_t id, std::optional<Row> version, const std::vector<sql::Target>& ret, Rows& out) {
    const std::string name = t.def.table;
    if (version) {
      returning(t, ret, *version, out);
      if (s_.logging()) s_.add_detail("set " + row_text(version));
    }
    server_.row(name, id).pending[c_.pid_] = std::move(version);
    c_.wrote(name, id);
  }

  void returning(SqlTable& t, const std::vector<sql::Target>& ret, const Row& row, Rows& out) {
    if (ret.empty()) return;
    const Saved saved = save();
    table_ = &t;
    row_ = &row;
    std::vector<std::optional<std::string>> values;
    for (const Value& v : project(ret)) values.push_back(output(v));
    out.rows.push_back(std::move(values));
    restore(saved);
  }

  // ---- UPDATE and DELETE: scan, then lock each candidate (a step each), then EvalPlanQual.
  template <typename Body>
  Result<Rows> change_rows(const Body& b, bool remove) {
    SqlTable* t = table(b.table);
    if (b.where) check_columns(*b.where, *t, b.alias);
    check_columns(b.returning, *t, b.alias);
    for (const sql::Assignment& a : set_of(b)) check_columns(a.value, *t, b.alias);
    SimConnection::Statement guard(c_);
    prepare_locking_subqueries(b.where);
    pinned_ = pinned_row(*t, b.alias, b.where);
    std::vector<std::pair<std::int64_t, Row>> candidates;
    if (pinned_) {
      // One row: its lock is the first step, taken only when the row matches (update_row_if's way).
      statement_start_ = s_.now();
      started_ = true;
      candidates.emplace_back(*pinned_, Row{});
    } else {
      if (auto refused = begin(remove ? "sql_delete_scan" : "sql_update_scan", on(t->object, Access::read))) return *refused;
      candidates = scan(t, b.alias, b.where);
    }
    Rows out;
    out.columns = column_names(b.returning, t);
    std::int64_t changed = 0;
    const std::string name = t->def.table;
    for (const auto& [id, seen] : candidates) {
      std::function<bool()> wanted;
      if (pinned_ && b.where) {
        wanted = [&, id = id] {
          const std::optional<Row>& current = c_.visible(name, id);
          return current.has_value() && still_matches(t, b.alias, *current, *b.where);
        };
      }
      const Result<bool> got = c_.lock_row(name, id, false, Stmt::update_row_if, LockMode::exclusive, wanted);
      if (!got.ok()) return got.error();
      std::optional<Row> newest = c_.visible(name, id);
      if (!got.value()) continue;
      if (!newest) {
        forget_gone_row(name, id);
        continue;
      }
      if (b.where && !still_matches(t, b.alias, *newest, *b.where)) continue;
      if (remove) {
        returning(*t, b.returning, *newest, out);
        if (s_.logging()) s_.add_detail("deleted " + row_text(newest));
        write_version(*t, id, std::nullopt, {}, out);
      } else {
        alias_ = b.alias;
        write_version(*t, id, apply_set(*t, *newest, set_of(b)), b.returning, out);
      }
      ++changed;
    }
    out.tag = fmt::format("{} {}", remove ? "DELETE" : "UPDATE", changed);
    return done(std::move(out));
  }
  static const std::vector<sql::Assignment>& set_of(const sql::Update& u) { return u.set; }
  static const std::vector<sql::Assignment>& set_of(const sql::Delete&) {
    static const std::vector<sql::Assignment> none;
    return none;
  }

  Result<Rows> statement(const sql::Update& u) { return change_rows(u, false); }
  Result<Rows> statement(const sql::Delete& d) { return change_rows(d, true); }

 public:
  // Runs the statement, turning a helper's Raised into the statement's failure.
  Result<Rows> run_checked() {
    try {
      Result<Rows> r = run();
      // Any error ends the statement: the transaction aborts, or the statement's own
      // writes and row locks go (a lock wait that ended in 40P01 or 55P03 among them).
      if (!r.ok()) return fail(r.error());
      return r;
    } catch (const Raised& r) {
      return fail(r.error);
    }
  }

 private:
  SimConnection& c_;
  Server& server_;
  Scheduler& s_;
  const sql::Statement& st_;
  const std::vector<Param>& params_;
  Time statement_start_{0};
  bool started_ = false;  // the statement took its first step
  std::optional<std::int64_t> pinned_;  // the one row the statement's WHERE pins (pinned_row)
  SqlTable* table_ = nullptr;
  std::string alias_;
  const Row* row_ = nullptr;
  const Row* excluded_ = nullptr;
  const std::vector<const Row*>* group_ = nullptr;
  std::map<const Expr*, Value> subqueries_;
};

Result<Rows> SimConnection::exec(std::string_view text, const std::vector<Param>& params) {
  std::shared_ptr<const std::vector<sql::Statement>> plans;
  try {
    plans = plans_of(text);
  } catch (const SqlError& e) {
    return error_of(e);
  }
  if (plans->size() > 1 && !params.empty()) return Error{"42601", "cannot insert multiple commands into a prepared statement"};
  if (plans->empty()) return Rows{};
  Result<Rows> last = Rows{};
  for (const sql::Statement& st : *plans) {
    if (dead_) return lost();
    last = SqlRun(*this, st, params).run_checked();
    if (!last.ok()) return last;
  }
  return last;
}

}  // namespace lockstep::sim::pg
