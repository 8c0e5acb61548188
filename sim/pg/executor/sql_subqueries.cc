// sim/pg/executor/sql_subqueries.cc: subqueries on the simulated server (sim/pg/executor/sql_run.h), as
// PostgreSQL's planner and executor treat them: an uncorrelated one is an InitPlan (computed
// once, in the statement's first step, on its snapshot), a correlated one a SubPlan (run per
// outer row, reading the statement's snapshot, also in an EvalPlanQual re-check), and a
// correlated [NOT] EXISTS conjunct of WHERE a semi (anti) join, whose re-check joins the new
// version with the inner row the scan matched (or, for an anti join, passes). Each of these
// was checked on PostgreSQL 15 (tests/sql-specs/initplan-kept-through-recheck.spec,
// correlated-subqueries.spec).
#include <algorithm>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/sim/pg/executor/sql_names.h"

#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/executor/sql_schemas.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

Value SqlRun::subquery(const Expr& e) {
  if (e.kind == Expr::Kind::in_subquery && e.args.at(0).kind == Expr::Kind::row) {  // (a, b) IN (SELECT x, y ...)
    return sql::in_rows(row_values(e.args[0]), subquery_rows(e));
  }
  if (e.kind == Expr::Kind::in_subquery) {
    const Value x = sql::evaluate(e.args.at(0), *this);  // in the enclosing query's row
    if (e.select->lock == sql::RowLock::none || !correlated(*e.select)) return sql::in_values(x, subquery_list(e));
    // A correlated one that locks rows: its SubPlan pulls rows until one equals x, so its
    // LockRows locks those only (ExecScanSubPlan's ANY_SUBLINK).
    const sql::Select& sub = *e.select;
    if (sub.targets.size() != 1 || sub.targets.front().star || sub.table.empty() || !sub.from.empty() || sub.aggregate) {
      throw SqlError("0A000", "a correlated IN (SELECT ... FOR UPDATE) other than of one column of one table is not in lockstep's SQL subset (docs/sql.md)");
    }
    SqlTable* t = table(sub.table);
    const std::function<bool(const Row&)> until = [&](const Row& r) {
      const Saved saved = save();
      table_ = t;
      alias_ = sub.alias;
      row_ = &r;
      const Value v = sql::evaluate(sub.targets.front().expr, *this);
      restore(saved);
      return sql::is_true(sql::in_values(x, {v}));
    };
    std::vector<Value> values;
    for (std::vector<Value>& row : run_subquery(sub, true, {&sub, -1, &until})) values.push_back(std::move(row.front()));
    return sql::in_values(x, values);
  }
  if (auto it = subqueries_.find(&e); it != subqueries_.end()) return it->second;
  if (auto it = failed_subqueries_.find(&e); it != failed_subqueries_.end()) throw it->second;
  if (const Derived* d = e.kind == Expr::Kind::exists && !e.select->table.empty() ? derived(e.select->table) : nullptr;
      d != nullptr && d->def->select && d->def->select->lock != sql::RowLock::none && d->rows.size() > 1) {  // locked whole when declared
    throw SqlError("0A000", "EXISTS over a locking WITH query of two or more rows is not in lockstep's SQL subset (docs/sql.md): the server locks the rows it pulls");
  }
  const bool per_row = correlated(*e.select);  // a SubPlan: run for each outer row, never kept
  // ExecScanSubPlan pulls what it needs: an EXISTS one row, a scalar subquery a second to
  // refuse it (so a FOR UPDATE there locks those rows only; ARRAY pulls every row).
  const std::int64_t pull = e.kind == Expr::Kind::exists ? 1 : e.name == "ARRAY" ? -1 : 2;
  const std::vector<std::vector<Value>> rows = run_subquery(*e.select, per_row, {&*e.select, pull, nullptr});
  if (e.kind == Expr::Kind::subquery && e.name == "ARRAY") {
    Value v = array_of_rows(rows);
    if (!per_row) subqueries_.emplace(&e, v);
    return v;
  }
  Value v = e.kind == Expr::Kind::exists ? Value::boolean(!rows.empty()) : rows.empty() ? Value::null() : rows.front().front();
  if (e.kind == Expr::Kind::subquery && rows.empty()) {  // a row subquery with no row: NULL of its row type
    if (const SqlTable* t = record_table_of(e, *e.select)) v = Value::null_record(server_.record_type_index(t->def.table));
  }
  if (e.kind == Expr::Kind::subquery && rows.size() > 1) {
    throw SqlError("21000", "more than one row returned by a subquery used as an expression");
  }
  if (!per_row) subqueries_.emplace(&e, v);
  return v;
}

Value SqlRun::array_of_rows(const std::vector<std::vector<Value>>& rows) {
  // ARRAY (SELECT ...): '{}' without rows; the elements' type is the column's (its first
  // non-NULL value's here; an untyped literal's: text).
  sql::ElementType element{Type::text, -1};
  std::vector<Value> values;
  bool typed = false;
  for (const std::vector<Value>& row : rows) {
    const Value& v = row.front();
    if (!typed && !v.is_null() && v.type() != Type::unknown) {
      element = {v.type(), v.type() == Type::enum_ ? v.enum_type() : v.type() == Type::record ? v.record_type() : -1};
      typed = true;
    }
    values.push_back(v);
  }
  if (element.type == Type::array) throw SqlError("0A000", "ARRAY (SELECT ...) of arrays (a multidimensional array) is not in lockstep's SQL subset");
  for (Value& v : values) {
    if (v.type() == Type::unknown && !v.is_null()) v = sql::cast(v, Type::text);
  }
  return sql::make_array(element, values);
}

const std::vector<Value>& SqlRun::subquery_list(const Expr& e) {
  if (auto it = subquery_lists_.find(&e); it != subquery_lists_.end()) return it->second;
  if (auto it = failed_subqueries_.find(&e); it != failed_subqueries_.end()) throw it->second;
  const bool per_row = correlated(*e.select);
  std::vector<Value> values;
  for (std::vector<Value>& row : run_subquery(*e.select, per_row)) values.push_back(std::move(row.front()));
  if (per_row) {
    scratch_list_ = std::move(values);
    return scratch_list_;
  }
  return subquery_lists_.emplace(&e, std::move(values)).first->second;
}

const std::vector<std::vector<Value>>& SqlRun::subquery_rows(const Expr& e) {
  if (auto it = subquery_row_lists_.find(&e); it != subquery_row_lists_.end()) return it->second;
  if (auto it = failed_subqueries_.find(&e); it != failed_subqueries_.end()) throw it->second;
  const bool per_row = correlated(*e.select);
  if (per_row && e.select->lock != sql::RowLock::none) {  // it would lock up to its first match
    throw SqlError("0A000", "a correlated (a, b) IN (SELECT ... FOR UPDATE) is not in lockstep's SQL subset (docs/sql.md)");
  }
  std::vector<std::vector<Value>> rows = run_subquery(*e.select, per_row);
  const std::size_t n = e.args.at(0).args.size();
  if (!rows.empty() && rows.front().size() != n) throw SqlError("42601", rows.front().size() > n ? "subquery has too many columns" : "subquery has too few columns");
  if (per_row) {
    scratch_rows_ = std::move(rows);
    return scratch_rows_;
  }
  return subquery_row_lists_.emplace(&e, std::move(rows)).first->second;
}

std::vector<Value> SqlRun::row_values(const Expr& row) {
  std::vector<Value> out;
  out.reserve(row.args.size());
  for (const Expr& a : row.args) out.push_back(sql::evaluate(a, *this));
  return out;
}

std::int64_t SqlRun::pulled(const sql::Select& sel, std::int64_t limit) const {
  if (pull_.sel != &sel || pull_.rows < 0) return limit;
  return limit < 0 ? pull_.rows : std::min(limit, pull_.rows);
}

std::vector<std::vector<Value>> SqlRun::run_subquery(const sql::Select& sub, bool /*per_row*/, Pull pull) {
  // A correlated one that locks rows (graphile-worker's EXISTS (... FOR UPDATE SKIP LOCKED)
  // on the job's queue) runs per outer row: a scan step of its own and its row locks each time.
  sql::check_stack_depth(subquery_depth_);  // subqueries nest as deep as the parser allows (128)
  declare_subquery_ctes(sub);
  for (const sql::CommonTable& c : sub.with) {
    if (Derived* d = derived(c.name); d != nullptr && d->correlated) {  // for this outer row
      d->computed = false;
      d->rows.clear();
    }
  }
  Enclosing enclosing(*this);  // the enclosing query's row stays readable to the subquery's references
  SqlTable* t = sub.table.empty() ? nullptr : table(sub.table);
  if (t != nullptr) check_once(*t, &sub, [&] { check_select(sub, *t); });
  if (t != nullptr && sub.lock != sql::RowLock::none) {
    // It locks rows: its scan is a step of its own, before its row locks.
    if (auto refused = begin("sql_scan", on(t->object, Access::read))) throw Raised{*refused};
    hold_statement_snapshot();
  } else if (t != nullptr) {
    touch(*t);
  }
  const std::optional<std::int64_t> outer_pinned = std::exchange(pinned_, std::nullopt);  // the statement's, not the subquery's
  const Pull outer_pull = std::exchange(pull_, pull);
  std::vector<std::vector<Value>> rows = select_values(sub, t, /*first_step=*/false);
  pull_ = outer_pull;
  pinned_ = outer_pinned;
  return rows;
}

void SqlRun::declare_subquery_ctes(const sql::Select& sub) {
  if (sub.with.empty()) return;
  if (std::any_of(derived_.begin(), derived_.end(), [&](const auto& d) { return d->def == &sub.with.front(); })) return;
  // One derived list serves the statement: a name used twice would be read by both.
  for (const sql::CommonTable& c : sub.with) {
    if (derived(c.name) != nullptr) {
      throw SqlError("0A000", fmt::format("a WITH query named \"{}\" inside a subquery beside another of that name is not in lockstep's SQL subset (docs/sql.md)", c.name));
    }
  }
  declare_ctes(sub.with);
  // Computed once for the statement, but one naming an outer query's column: computed again
  // for each outer row (the server's CTE scan of a SubPlan is rescanned when its parameter
  // changes; procrastinate's list_queues).
  for (const sql::CommonTable& c : sub.with) {
    Scopes scopes;
    if (c.select == nullptr || !reaches_out(*c.select, scopes)) continue;
    if (c.modifying || c.recursive || c.select->lock != sql::RowLock::none) {
      const char* kind = c.modifying ? "data-modifying" : c.recursive ? "recursive" : "locking";
      throw SqlError("0A000", fmt::format("a {} WITH query \"{}\" inside a subquery that names an outer query's column is not in "
                                          "lockstep's SQL subset (docs/sql.md)",
                                          kind, c.name));
    }
    derived(c.name)->correlated = true;
  }
}

bool SqlRun::resolves(const SqlTable& t, std::string_view alias, const Expr& ref) const {
  // A table given an alias is named by it only: `t` inside `FROM t AS o` is an outer query's.
  if (t.joined) return joined_column(t, ref) >= 0;  // sim/pg/executor/sql_from.cc
  if (!ref.schema.empty()) return alias.empty() && ref.qualifier == t.def.table && schema_of(t.def) == ref.schema;  // s.t.c
  if (!ref.qualifier.empty()) return ref.qualifier == (alias.empty() ? std::string_view(t.def.table) : alias);
  return t.column(ref.name) >= 0;
}

SqlRun::Enclosing::Enclosing(SqlRun& run) : run_(run), saved_(run.save()) {
  run_.outer_.push_back(saved_);
  ++run_.subquery_depth_;
}

SqlRun::Enclosing::~Enclosing() {
  --run_.subquery_depth_;
  run_.outer_.pop_back();
  run_.restore(saved_);
}

bool SqlRun::resolves_outside(const Expr& ref) const {
  if (function_params_ != nullptr && function_params_->names_variable(ref)) return true;  // a plpgsql function's variable
  return std::any_of(outer_.begin(), outer_.end(), [&](const Saved& o) { return o.table != nullptr && resolves(*o.table, o.alias, ref); });
}

bool SqlRun::correlated(const sql::Select& sub) {
  if (auto it = correlated_.find(&sub); it != correlated_.end()) return it->second;
  Scopes scopes;
  const bool out = reaches_out(sub, scopes);
  correlated_.emplace(&sub, out);
  return out;
}

bool SqlRun::reaches_out(const Expr& e, Scopes& scopes) const {
  if (e.kind == Expr::Kind::column) {
    const bool inside = std::any_of(scopes.begin(), scopes.end(), [&](const auto& s) {
      if (s.first == nullptr) return false;
      try {
        return resolves(*s.first, s.second, e);
      } catch (const SqlError&) {
        return true;  // ambiguous there (42702 when it runs), so not an outer query's
      }
    });
    // A plpgsql function's variable is a Param to the planner, not an outer query's column
    // (one naming both is 42702, plpgsql's variable_conflict = error).
    return !inside && (function_params_ == nullptr || !function_params_->names_variable(e));
  }
  if (e.kind == Expr::Kind::in_subquery && reaches_out(e.args.at(0), scopes)) return true;
  if (sql::is_sublink(e)) return reaches_out(*e.select, scopes);
  if (e.kind == Expr::Kind::constant) return false;  // folded: its kept arguments never run
  return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return reaches_out(a, scopes); });
}

bool SqlRun::reaches_out(const sql::Select& sel, Scopes& scopes) const {
  // The query's own relation: its table, a WITH query of that name, or its FROM items joined.
  const SqlTable* own = nullptr;
  const_cast<SqlRun*>(this)->declare_subquery_ctes(sel);  // its WITH queries name relations
  if (!sel.table.empty()) {
    const Derived* d = const_cast<SqlRun*>(this)->derived(sel.table);
    own = d != nullptr ? &d->table : server_.sql_table(sel.table);
  } else if (!sel.from.empty()) {
    try {
      own = const_cast<SqlRun*>(this)->from_relation(sel);  // its columns only: nothing runs
    } catch (const SqlError&) {
      own = nullptr;  // the error is raised when the query runs
    }
  }
  bool out = false;
  for (const sql::CommonTable& c : sel.with) out = out || (c.select != nullptr && !c.modifying && reaches_out(*c.select, scopes));
  // FROM's subqueries, functions and VALUES (they see the outer queries only; a LATERAL one
  // also FROM's items: checked beside them below).
  const auto from_reaches_out = [&](const sql::FromItem& f, const auto& self) -> bool {
    if (f.lateral) return false;
    if (f.select && reaches_out(*f.select, scopes)) return true;
    for (const Expr& a : f.function) if (reaches_out(a, scopes)) return true;
    for (const auto& row : f.values) if (std::any_of(row.begin(), row.end(), [&](const Expr& a) { return reaches_out(a, scopes); })) return true;
    return std::any_of(f.sides.begin(), f.sides.end(), [&](const sql::FromItem& side) { return self(side, self); });
  };
  for (const sql::FromItem& f : sel.from) out = out || from_reaches_out(f, from_reaches_out);
  if (sel.set_op) out = out || reaches_out(*sel.set_op->left, scopes) || reaches_out(*sel.set_op->right, scopes);
  scopes.emplace_back(own, sel.alias);
  for (const sql::FromItem& f : sel.from) {  // join conditions see FROM's items
    const auto on_reaches_out = [&](const sql::FromItem& item, const auto& self) -> bool {
      if (item.lateral && ((item.select && reaches_out(*item.select, scopes)) ||
                           std::any_of(item.function.begin(), item.function.end(), [&](const Expr& a) { return reaches_out(a, scopes); }))) {
        return true;
      }
      return std::any_of(item.on.begin(), item.on.end(), [&](const Expr& e) { return reaches_out(e, scopes); }) ||
             std::any_of(item.sides.begin(), item.sides.end(), [&](const sql::FromItem& side) { return self(side, self); });
    };
    out = out || on_reaches_out(f, on_reaches_out);
  }
  for (const sql::Target& target : sel.targets) out = out || (!target.star && reaches_out(target.expr, scopes));
  for (const sql::OrderItem& o : sel.order_by) out = out || reaches_out(o.expr, scopes);
  for (const auto* e : {&sel.where, &sel.limit, &sel.offset, &sel.having}) out = out || (e->has_value() && reaches_out(**e, scopes));
  for (const Expr& g : sel.group_by) out = out || reaches_out(g, scopes);
  scopes.pop_back();
  return out;
}

void SqlRun::compute_initplans(const Expr& e) {
  if (sql::is_sublink(e)) {
    if (e.kind == Expr::Kind::in_subquery) compute_initplans(e.args.at(0));
    const sql::Select& sub = *e.select;
    if (sub.lock != sql::RowLock::none) return;
    if (correlated(sub)) {
      // A SubPlan reads the statement's snapshot later: the step that takes it reads its table.
      if (!sub.table.empty()) touch(*table(sub.table));
      return;
    }
    bool server = false;
    for (const sql::Target& target : sub.targets) server = server || (!target.star && calls_server(target.expr));
    if (sub.where) server = server || calls_server(*sub.where);
    if (server) return;
    try {
      if (e.kind == Expr::Kind::in_subquery && e.args.at(0).kind == Expr::Kind::row) {
        (void)subquery_rows(e);
      } else if (e.kind == Expr::Kind::in_subquery) {
        (void)subquery_list(e);
      } else {
        (void)subquery(e);
      }
    } catch (const SqlError& err) {
      failed_subqueries_.emplace(&e, err);
    }
    return;
  }
  if (e.kind == Expr::Kind::constant) return;  // folded: an InitPlan there is never planned
  for (const Expr& a : e.args) compute_initplans(a);
}

void SqlRun::compute_initplans(const std::vector<sql::Target>& targets) {
  for (const sql::Target& target : targets) {
    if (!target.star) compute_initplans(target.expr);
  }
}

void SqlRun::take_statement_snapshot() {
  if (c_.snapshot_ || statement_snapshot_) return;  // REPEATABLE READ: the transaction's
  statement_snapshot_ = server_.open_snapshot();
}

bool SqlRun::on_snapshot() const { return on_snapshot_ || (nested_ && enclosing_ != nullptr && enclosing_->on_snapshot()); }

std::optional<std::uint64_t> SqlRun::snapshot_seq() const {
  if (nested_ && enclosing_ != nullptr && enclosing_->on_snapshot()) return enclosing_->snapshot_seq();
  return statement_snapshot_;
}

void SqlRun::hold_statement_snapshot() {
  if (on_snapshot_ || c_.snapshot_) return;  // REPEATABLE READ: the transaction's already
  if (nested_ && enclosing_ != nullptr) {
    // Inside a data-modifying WITH query: its first step took the statement's snapshot and
    // read every table (begin); the whole statement reads on it from here.
    if (enclosing_ != nullptr) enclosing_->on_snapshot_ = true;
    return;
  }
  take_statement_snapshot();
  on_snapshot_ = true;
  if (s_.in_actor()) server_.each_sql_table([&](const SqlTable& t) { touch(t); });  // a commit before it is seen, after it not
}

namespace {

bool sub_has_sublink(const Expr& e) {
  if (e.kind == Expr::Kind::constant) return false;  // folded: its kept arguments never run
  return sql::is_sublink(e) || std::any_of(e.args.begin(), e.args.end(), [](const Expr& a) { return sub_has_sublink(a); });
}

}  // namespace

bool SqlRun::insert_reads_after_waits() const {
  // Subqueries an INSERT evaluates after a row's unique check may have waited: a later row's
  // VALUES, ON CONFLICT DO UPDATE's SET and WHERE (the first row's VALUES and an INSERT ...
  // SELECT's rows are read in its first step).
  if (!st_.has_subquery) return false;
  const auto* insert = std::get_if<sql::Insert>(&st_.body);
  if (insert == nullptr) return false;
  for (std::size_t r = 1; r < insert->rows.size(); ++r) {
    for (const std::optional<Expr>& value : insert->rows[r]) {
      if (value && sub_has_sublink(*value)) return true;
    }
  }
  if (insert->conflict_where && sub_has_sublink(*insert->conflict_where)) return true;
  return std::any_of(insert->conflict_set.begin(), insert->conflict_set.end(),
                     [](const sql::Assignment& a) { return !a.to_default && sub_has_sublink(a.value); });
}

void SqlRun::hold_snapshot_for_later_reads() {
  // The server's READ COMMITTED statement reads every relation on the snapshot it took at its
  // start, also after a lock function waited or a try let other sessions commit (a scalar
  // subquery after pg_advisory_lock reads the value from before the wait), and in an INSERT
  // after a row's unique check waited (a later row's VALUES, ON CONFLICT DO UPDATE's SET and
  // WHERE after the wait for the conflicting row's lock: checked on PostgreSQL 15,
  // tests/sql-specs/statement-snapshot-after-waits.spec). So such a statement's first step
  // takes it and reads each table the statement names: a commit before that step is seen,
  // one after it not, wherever the statement reads.
  if (!(takes_steps(st_, server_) || insert_reads_after_waits())) return;
  if (c_.snapshot_ || on_snapshot_ || (nested_ && enclosing_ != nullptr) || !s_.in_actor()) return;
  bool reads = false;
  each_table_named(st_, [&](const std::string& name) { reads = reads || server_.sql_table(name) != nullptr; });
  if (!reads) return;
  take_statement_snapshot();
  on_snapshot_ = true;
  each_table_named(st_, [&](const std::string& name) {
    if (const SqlTable* t = server_.sql_table(name)) touch(*t);
  });
}

const std::optional<Row>& SqlRun::subquery_visible(std::string_view table, std::int64_t id) {
  const std::optional<std::uint64_t> seq = snapshot_seq();
  if (!seq) return c_.visible(table, id);
  const RowState& r = server_.row(table, id);
  if (auto mine = r.pending.find(c_.pid_); mine != r.pending.end()) return mine->second.version;
  return r.version_at(*seq);
}

HeapPlace SqlRun::subquery_place(std::string_view table, std::int64_t id) {
  const std::optional<std::uint64_t> seq = snapshot_seq();
  if (!seq) return c_.visible_place(table, id);
  const RowState& r = server_.row(table, id);
  if (auto mine = r.pending.find(c_.pid_); mine != r.pending.end()) return mine->second.place;
  return r.place_at(*seq);
}

SqlRun::Pulled SqlRun::pulled_up(const Expr& conjunct) {
  if (conjunct.kind == Expr::Kind::in_subquery) {
    // convert_ANY_sublink_to_join: an uncorrelated IN (SELECT ...) is a semi join, whatever
    // the subquery reads (a table, unnest, a join, a subquery).
    const sql::Select& sub = *conjunct.select;
    const bool simple = !correlated(sub) && !calls_server(conjunct.args.at(0)) &&
                        std::none_of(sub.targets.begin(), sub.targets.end(), [](const sql::Target& t) { return !t.star && calls_server(t.expr); });
    return simple ? Pulled::semi_in : Pulled::no;
  }
  const bool anti = conjunct.kind == Expr::Kind::not_ && conjunct.args.size() == 1 && conjunct.args[0].kind == Expr::Kind::exists;
  const Expr& e = anti ? conjunct.args[0] : conjunct;
  if (e.kind != Expr::Kind::exists) return Pulled::no;
  const sql::Select& sub = *e.select;
  // simplify_EXISTS_query's and convert_EXISTS_sublink_to_join's conditions, on this subset.
  if (sub.table.empty() || sub.aggregate || sub.offset || sub.lock != sql::RowLock::none || !sub.where) return Pulled::no;
  if (sub.limit && !(sub.limit->kind == Expr::Kind::constant && sql::is_integer(sub.limit->value.type()) && sub.limit->value.as_integer() > 0)) {
    return Pulled::no;
  }
  if (calls_server(*sub.where) || !correlated(sub)) return Pulled::no;
  Scopes scopes{{server_.sql_table(sub.table), sub.alias}};
  if (!reaches_out(*sub.where, scopes)) return Pulled::no;  // the outer row is named outside WHERE only
  return anti ? Pulled::anti : Pulled::semi;
}

bool SqlRun::where_holds(const Expr& where, std::int64_t id, bool recheck) {
  if (!st_.has_subquery || subquery_depth_ > 0) return sql::is_true(sql::evaluate(where, *this));
  // The scan's conditions in order_qual_clauses' order (a SubPlan, a correlated subquery not
  // pulled up into a join, after the others: a locking EXISTS locks only for rows that passed
  // them), then the semi and anti joins the planner made of the others, above the scan.
  std::vector<const Expr*> conjuncts;
  if (const std::vector<const Expr*>* order = server_.qual_order(where)) {
    conjuncts = *order;
  } else {
    conjuncts = sql::qual_order(where, {{}, [this](const sql::Select& s) { return correlated(s); }});
  }
  std::stable_partition(conjuncts.begin(), conjuncts.end(), [&](const Expr* c) { return pulled_up(*c) == Pulled::no; });
  for (const Expr* c : conjuncts) {
    const Pulled p = pulled_up(*c);
    if (p == Pulled::no) {
      if (!sql::is_true(sql::evaluate(*c, *this))) return false;
      continue;
    }
    if (p == Pulled::semi_in && c->args.at(0).kind == Expr::Kind::row) {
      // The new version joins the row the scan matched, as it was.
      const std::vector<Value> xs = row_values(c->args[0]);
      if (recheck) {
        const auto it = semi_row_values_.find({c, id});
        if (it == semi_row_values_.end() || !sql::is_true(sql::in_rows(xs, {it->second}))) return false;
        continue;
      }
      const std::vector<std::vector<Value>>& rows = subquery_rows(*c);
      const auto hit = std::find_if(rows.begin(), rows.end(), [&](const std::vector<Value>& r) { return sql::is_true(sql::in_rows(xs, {r})); });
      if (hit == rows.end()) return false;
      semi_row_values_.insert_or_assign({c, id}, *hit);
      continue;
    }
    if (p == Pulled::semi_in) {
      // The new version joins the element the scan matched, as it was.
      const Value x = sql::evaluate(c->args.at(0), *this);
      if (recheck) {
        const auto it = semi_values_.find({c, id});
        if (it == semi_values_.end() || !sql::is_true(sql::in_values(x, {it->second}))) return false;
        continue;
      }
      const std::vector<Value>& list = subquery_list(*c);
      const auto hit = std::find_if(list.begin(), list.end(), [&](const Value& v) { return sql::is_true(sql::in_values(x, {v})); });
      if (hit == list.end()) return false;
      semi_values_.insert_or_assign({c, id}, *hit);
      continue;
    }
    const Expr& exists = p == Pulled::anti ? c->args[0] : *c;
    if (recheck) {
      if (p == Pulled::anti) continue;
      const auto it = semi_rows_.find({&exists, id});
      if (it == semi_rows_.end()) return false;
      const bool passes = inner_matches(*exists.select, it->second);
      // Which inner row the semi join matched first is the plan's (a hashed one's: the last
      // inserted): where another would re-check otherwise, the answer is the planner's.
      if (const auto more = semi_others_.find({&exists, id}); more != semi_others_.end()) {
        for (const Row& other : more->second) {
          if (inner_matches(*exists.select, other) != passes) {
            throw SqlError("0A000", "an EvalPlanQual re-check of a correlated EXISTS that two or more rows matched, which the new version "
                                    "passes with one and fails with another (the server re-checks the one its plan met first), is not in "
                                    "lockstep's SQL subset (docs/sql.md)");
          }
        }
      }
      if (!passes) return false;
      continue;
    }
    std::vector<Row> others;
    std::optional<Row> inner = first_inner_match(*exists.select, p == Pulled::anti || c_.repeatable_read_ ? nullptr : &others);  // (a re-check: READ COMMITTED's)
    if (p == Pulled::anti) {
      if (inner) return false;
      continue;
    }
    if (!inner) return false;
    semi_rows_.insert_or_assign({&exists, id}, std::move(*inner));
    if (others.empty()) {
      semi_others_.erase({&exists, id});
    } else {
      semi_others_.insert_or_assign({&exists, id}, std::move(others));
    }
  }
  return true;
}

std::optional<Row> SqlRun::first_inner_match(const sql::Select& sub, std::vector<Row>* others) {
  Enclosing enclosing(*this);
  SqlTable* t = table(sub.table);
  check_once(*t, &sub, [&] { check_select(sub, *t); });
  touch(*t);
  std::optional<Row> first;
  for (const auto& [id, r] : relation_rows(*t)) {
    table_ = t;
    alias_ = sub.alias;
    row_ = r;
    if (!sql::is_true(sql::evaluate(*sub.where, *this))) continue;
    if (first && others != nullptr) others->push_back(*r);
    if (!first) first = *r;
    if (others == nullptr) break;
  }
  return first;
}

bool SqlRun::inner_matches(const sql::Select& sub, const Row& inner) {
  Enclosing enclosing(*this);
  table_ = table(sub.table);
  alias_ = sub.alias;
  row_ = &inner;
  return sql::is_true(sql::evaluate(*sub.where, *this));
}

}  // namespace lockstep::sim::pg
