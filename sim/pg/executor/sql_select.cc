// sim/pg/executor/sql_select.cc: SELECT on the simulated server (sim/pg/executor/sql_run.h): scans, ORDER BY, LIMIT,
// row locks (FOR UPDATE / SHARE, NOWAIT, SKIP LOCKED) with EvalPlanQual, aggregates, subqueries.
#include <algorithm>
#include <functional>
#include <limits>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/sim/pg/executor/pg_sort.h"
#include "lockstep/sim/pg/executor/sql_hash_aggregate.h"
#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_ssi.h"

namespace lockstep::sim::pg {

bool SqlRun::joined_star(const sql::Target& target, const SqlTable& t) {
  return target.star_of.empty() ||
         std::any_of(t.def.columns.begin(), t.def.columns.end(), [&](const sql::ColumnDef& c) { return joined_name(c).first == target.star_of; });
}

Result<Rows> SqlRun::statement(const sql::Select& sel) {
  if (sel.set_op) return select_set_operation(sel);       // sim/pg/executor/sql_set_operations.cc
  if (!sel.from.empty()) return select_from_items(sel);  // sim/pg/executor/sql_from.cc
  if (sel.table.empty()) return select_without_from(sel);
  SimConnection::Statement guard(c_);
  if (!sel.with.empty()) check_read_only();  // before a WITH query's locks or writes
  declare_ctes(sel.with);  // those that lock rows take their steps now
  SqlTable* t = table(sel.table);
  if (sel.lock != sql::RowLock::none && derived_of(t) != nullptr) {
    if (derived_of(t)->sequence) throw SqlError("42809", fmt::format("cannot lock rows in sequence \"{}\"", sel.table));
    throw SqlError("0A000", fmt::format("{} cannot be applied to a WITH query", sql::lock_clause_name(sel.lock)));
  }
  check_once(*t, &sel, [&] { check_select(sel, *t); });
  check_read_only();
  prepare_locking_subqueries(sel.where);
  // A locking SELECT with subqueries scans first: its InitPlans are computed there, on its snapshot, before any row lock waits.
  const bool scan_first = st_.has_subquery && sel.lock != sql::RowLock::none;
  pinned_ = scan_first || on_snapshot() ? std::nullopt : pinned_row(*t, sel.alias, sel.where);
  // A list that calls a lock function is projected before the row lock (select_values): the
  // statement then starts with its read, and takes its table's lock even when no row matches.
  const bool projects_first = sel.from.empty() && !sel.distinct && sel.distinct_on.empty() &&
                              std::any_of(targets_of(sel).begin(), targets_of(sel).end(), [&](const sql::Target& target) {
                                return !target.star && calls_server(target.expr);
                              });
  if (pinned_ && sel.lock != sql::RowLock::none && sel.wait != sql::LockWait::skip_locked && !projects_first) {
    // Its first step is the row's lock, taken only when the row matches (as update_row_if's).
    statement_start_ = c_.statement_time();
    started_ = true;
  } else if (pinned_) {
    if (auto refused = begin("sql_read", on(server_.row_object(t->def.table, *pinned_), Access::read))) return *refused;
  } else if (auto refused = begin("sql_scan", on(t->object, Access::read))) {
    return *refused;
  }
  // A FOR KEY SHARE that scans keeps the versions it read: its locks may return them (SimConnection::lock_row).
  if (sel.lock == sql::RowLock::key_share && !pinned_) take_statement_snapshot();
  if (scan_first) {
    take_statement_snapshot();
    compute_initplans(targets_of(sel));
    if (sel.where) compute_initplans(*sel.where);
  }
  Rows out;
  out.columns = column_names(targets_of(sel), t, sel.alias);
  add_rows(out, select_values(sel, t, true));
  return done(std::move(out));
}

std::vector<std::string> SqlRun::column_names(const std::vector<sql::Target>& targets, const SqlTable* t, std::string_view alias) const {
  std::vector<std::string> names;
  for (const sql::Target& target : targets) {
    if (!target.star) {
      names.push_back(target.name);
      continue;
    }
    if (t == nullptr) throw SqlError("42601", "SELECT * with no tables specified is not valid");
    const bool here = t->joined ? joined_star(target, *t) : stars(target, *t, alias);
    const bool joined = join_.table != nullptr && stars(target, *join_.table, join_.alias);
    if (!here && !joined) throw SqlError("42P01", fmt::format("missing FROM-clause entry for table \"{}\"", target.star_of));
    if (here && t->joined) {  // a FROM of several relations: `*` is all their columns, `x.*` one's
      for (const auto& col : t->def.columns) {
        const auto [relation, column] = joined_name(col);
        if (target.star_of.empty() || target.star_of == relation) names.emplace_back(column);
      }
    } else if (here) {
      for (const auto& col : t->def.columns) names.push_back(col.name);
    }
    if (joined) {
      for (const auto& col : join_.table->def.columns) names.push_back(col.name);
    }
  }
  return names;
}

std::vector<Value> SqlRun::project(const std::vector<sql::Target>& targets) {
  std::vector<Value> values;
  for (const sql::Target& target : targets) {
    if (target.expand) throw SqlError("0A000", "(x).* here (not a SELECT's list) is not in lockstep's SQL subset (docs/sql.md)");
    if (target.star) {
      const bool joined = table_->joined;
      if (!(joined ? joined_star(target, *table_) : stars(target, *table_))) {
        throw SqlError("42P01", fmt::format("missing FROM-clause entry for table \"{}\"", target.star_of));
      }
      for (std::size_t i = 0; i < table_->def.columns.size(); ++i) {
        if (joined && !target.star_of.empty() && joined_name(table_->def.columns[i]).first != target.star_of) continue;
        values.push_back(stored(*table_, *row_, static_cast<int>(i)));
      }
    } else {
      values.push_back(sql::evaluate(target.expr, *this));
    }
  }
  return values;
}

bool SqlRun::passes(SqlTable* t, const std::string& alias, const std::optional<Expr>& where, std::int64_t id, const Row& row) {
  if (!where) return true;
  table_ = t;
  alias_ = alias;
  row_ = &row;
  const bool keep = where_holds(*where, id, /*recheck=*/false);
  row_ = nullptr;
  return keep;
}

std::vector<std::pair<std::int64_t, Row>> SqlRun::scan(SqlTable* t, const std::string& alias, const std::optional<Expr>& where,
                                                       std::int64_t enough, std::int64_t limit, const sql::Select* lock_pull) {
  const bool limited = limit != -1;
  unplanned_order_.clear();
  // A WITH RECURSIVE query of this statement's, under a Limit: read a round at a time.
  const auto own = [&](const Derived* d) { return std::any_of(derived_.begin(), derived_.end(), [&](const auto& o) { return o.get() == d; }); };
  Derived* d = derived_of(t);
  if (d != nullptr && !d->unordered.empty()) {  // a data-modifying WITH query's RETURNING rows, in an order not decided
    if (!order_checked_scan_) refuse_unplanned_order(d->unordered);
    unplanned_order_ = d->unordered;
  }
  if (d != nullptr && d->def->recursive && !d->computed && !d->in_round && enough >= 0 && own(d)) {
    return scan_recursive(*d, t, alias, where, enough);
  }
  // A plain one, under a Limit: a row at a time where it streams; where it does not (a Sort or an Aggregate
  // in it reads every row first, or the planner's index order might not), a reader that stops early while
  // its rows took advisory locks is refused.
  bool locked = false;
  if (d != nullptr && !d->def->recursive && !d->def->modifying && !d->computed && enough >= 0 && own(d)) {
    if (streamable(*d->def->select)) return scan_streamed(*d, t, alias, where, enough);
    const std::int64_t before = advisory_holds();
    materialize(*d);
    locked = advisory_holds() != before;
  }
  std::vector<std::pair<std::int64_t, Row>> out;
  std::size_t read = 0;
  SqlSsi::plan_scan(*this, *t, alias, where);
  const auto rows = scan_rows(*t, alias, d == nullptr ? where : std::nullopt, limit);
  // The rows point into the table: where WHERE takes steps (a subquery that locks rows, a lock function), another session
  // may commit a new version of one not read yet meanwhile: each is copied as first found (SqlConformance seed 82101).
  std::vector<Row> found;
  if (st_.locking_subquery || takes_steps(st_, server_)) {
    found.reserve(rows.size());
    for (const auto& [id, r] : rows) found.push_back(*r);
  }
  for (const auto& [id, r] : rows) {
    if (enough >= 0 && static_cast<std::int64_t>(out.size()) >= enough) break;
    Row copy = found.empty() ? *r : std::move(found[read]);  // stays put while WHERE runs (a subquery there may read the relation again)
    ++read;
    if (!passes(t, alias, where, id, copy)) continue;
    if (lock_pull == nullptr) {
      out.emplace_back(id, std::move(copy));
      continue;
    }
    auto one = lock_rows({{id, std::move(copy)}}, *lock_pull, t, 0, -1);  // skipped, or gone at its re-check: the next
    if (!one.empty()) out.push_back(std::move(one.front()));
  }
  if (locked && read < rows.size()) {
    throw SqlError("0A000", fmt::format("a LIMIT that stops reading the WITH query or FROM subquery \"{}\" (with a sort, grouping or join) "
                                        "whose rows took advisory locks is not in lockstep's SQL subset (docs/sql.md)", d->def->name));
  }
  if (where) order_semi_join(out, *t, *where, enough >= 0);  // a Limit above: the scan stopped in its order
  if (where && !limited) order_exists_semi_join(out, *t, alias, *where);
  return out;
}

// The columns outside GROUP BY and aggregates must each be of a table whose primary key
// GROUP BY names whole (PostgreSQL's functional dependency), else 42803 as the parser says.
void SqlRun::check_grouped_by_key(const sql::Select& sel) {
  std::vector<std::pair<std::string, std::string>> relations;  // (name or alias, table)
  if (!sel.table.empty()) relations.emplace_back(sel.alias.empty() ? sel.table : sel.alias, sel.table);
  std::function<void(const sql::FromItem&)> walk = [&](const sql::FromItem& f) {
    if (f.kind == sql::FromItem::Kind::table) relations.emplace_back(f.alias.empty() ? f.table : f.alias, f.table);
    else if (f.kind != sql::FromItem::Kind::join) relations.emplace_back(sql::from_item_name(f), "");  // a subquery, VALUES, a function
    for (const sql::FromItem& side : f.sides) walk(side);
  };
  for (const sql::FromItem& f : sel.from) walk(f);
  for (const Expr& c : sel.grouped_by_key) {
    std::string relation;
    const SqlTable* t = nullptr;
    bool found = false;
    for (const auto& [name, table_name] : relations) {
      const Derived* d = derived(table_name);
      const SqlTable* candidate = d == nullptr ? server_.sql_table(table_name) : nullptr;
      const SqlTable* columns = d != nullptr ? &d->table : candidate;
      if (c.qualifier.empty() ? columns != nullptr && columns->column(c.name) >= 0 : c.qualifier == name) {
        relation = name;
        t = candidate;
        found = true;
        break;
      }
    }
    // An outer query's column is a constant here (FROM's other items: their own checks run).
    if (!found && (!c.qualifier.empty() || resolves_outside(c))) continue;
    bool determined = t != nullptr && !t->key.empty();
    for (std::size_t k = 0; determined && k < t->key.size(); ++k) {
      const std::string& key = t->def.columns[static_cast<std::size_t>(t->key[k])].name;
      determined = std::any_of(sel.group_by.begin(), sel.group_by.end(), [&](const Expr& g) {
        return g.kind == Expr::Kind::column && g.name == key && (g.qualifier.empty() || g.qualifier == relation);
      });
    }
    if (!determined) {
      const std::string name = (c.qualifier.empty() ? (relation.empty() ? (sel.alias.empty() ? sel.table : sel.alias) : relation) : c.qualifier) + "." + c.name;
      throw SqlError("42803", fmt::format("column \"{}\" must appear in the GROUP BY clause or be used in an aggregate function", name));
    }
  }
}

std::vector<std::vector<Value>> SqlRun::select_values(const sql::Select& sel, SqlTable* t, bool /*first_step*/) {
  if (!sel.grouped_by_key.empty()) check_grouped_by_key(sel);
  if (sel.set_op) return set_operation_values(sel);
  if (!sel.from.empty() && t == nullptr) t = from_relation(sel);  // a subquery's FROM of several relations
  if (t == nullptr) {  // a Result node below the Limit: LIMIT and OFFSET first, then WHERE, then the row
    table_ = nullptr;
    row_ = nullptr;
    const std::int64_t offset = bound(sel.offset, "OFFSET");
    const std::int64_t limit = sel.limit ? bound(sel.limit, "LIMIT") : -1;
    std::vector<const Expr*> srfs;
    for (const sql::Target& target : targets_of(sel)) set_returning_calls(target.expr, srfs);
    if (sel.aggregate) {  // an Agg over the Result's one row (none when WHERE fails): SELECT count(*)
      const bool one = !sel.where || sql::is_true(sql::evaluate(*sel.where, *this));
      return grouped_values(sel, nullptr, one ? std::vector<std::pair<std::int64_t, Row>>{{0, Row{}}} : std::vector<std::pair<std::int64_t, Row>>{});
    }
    if (srfs.empty()) {
      if (offset > 0 || limit == 0) return {};
      if (sel.where && !sql::is_true(sql::evaluate(*sel.where, *this))) return {};
      return {project(targets_of(sel))};
    }
    // Set-returning calls in the select list (unnest, generate_series, ...): a ProjectSet over the Result's
    // one row (sql_project_set.cc), a Sort above it for ORDER BY or DISTINCT, then OFFSET and LIMIT.
    if (sel.where && !sql::is_true(sql::evaluate(*sel.where, *this))) return {};
    std::vector<const Expr*> keyed;  // ORDER BY keys without a call are constants here, which the planner drops
    for (const sql::OrderItem& o : sel.order_by) set_returning_calls(order_expr(o.expr, sel), keyed);
    return project_set(sel, {{0, Row{}}}, srfs, offset, limit, !keyed.empty() || sel.distinct || !sel.distinct_on.empty());
  }
  std::vector<std::pair<std::int64_t, Row>> rows;
  // LockRows pulls a row at a time from the projection below it (the planner postpones a
  // volatile select list past the Sort, not past LockRows): a lock function there runs for
  // each row before its row lock, also a key-pinned one's (checked on PostgreSQL 15).
  const bool projects_lock_calls = sel.lock != sql::RowLock::none && sel.from.empty() && !sel.distinct && sel.distinct_on.empty() &&
                                   pull_.sel != &sel && std::any_of(targets_of(sel).begin(), targets_of(sel).end(), [&](const sql::Target& target) {
                                     return !target.star && calls_server(target.expr);
                                   });
  const bool lock_first = pinned_ && sel.lock != sql::RowLock::none && sel.wait != sql::LockWait::skip_locked && !projects_lock_calls;
  // A Limit right above the scan (no sort, grouping, DISTINCT or row locks between them) pulls
  // its rows one at a time: WHERE runs until OFFSET + LIMIT rows passed it, so a
  // pg_try_advisory_lock there locks those rows only (GoodJob's claim).
  std::vector<const Expr*> windows;
  for (const sql::Target& target : targets_of(sel)) window_calls(target.expr, windows);
  std::vector<const Expr*> srfs;  // a ProjectSet's calls: the LIMIT counts its rows, not the scan's
  if (!sel.aggregate) {
    for (const sql::Target& target : targets_of(sel)) set_returning_calls(target.expr, srfs);
  }
  if (!srfs.empty() && sel.lock != sql::RowLock::none) {
    throw SqlError("0A000", "FOR UPDATE is not allowed with set-returning functions in the target list");
  }
  std::int64_t enough = -1;
  if (sel.limit && sel.order_by.empty() && !sel.aggregate && !sel.distinct && sel.distinct_on.empty() && sel.lock == sql::RowLock::none &&
      windows.empty() && srfs.empty()) {
    const std::int64_t limit = bound(sel.limit, "LIMIT");
    if (limit >= 0) enough = std::max<std::int64_t>(bound(sel.offset, "OFFSET"), 0) + limit;
  }
  // A locking WITH query is locked whole when declared; the server's Limit locks the rows it pulls.
  if (const Derived* d = enough >= 0 ? derived_of(t) : nullptr; d != nullptr && d->def->select && d->def->select->lock != sql::RowLock::none &&
                                                                 static_cast<std::int64_t>(d->rows.size()) > enough) {
    throw SqlError("0A000", "a LIMIT that stops reading a locking WITH query is not in lockstep's SQL subset (docs/sql.md): the server locks the rows it pulls");
  }
  // A LIMIT over an ORDER BY an index could give: the WHERE runs for every row here, as under the
  // server's Sort; an index scan in that order would stop at the limit. Which plan the server takes
  // is its cost model's call, so a WHERE that took advisory locks (or row locks, in a locking
  // SubPlan) for more rows than the LIMIT keeps is refused, never answered one way. (An ORDER BY
  // no index gives is a Sort's, which reads every row; FOR UPDATE's advisory locks keep LockRows'.)
  const bool index_limit = enough < 0 && sel.limit && !sel.aggregate && windows.empty() && !sel.order_by.empty() && sel.from.empty() &&
                           derived_of(t) == nullptr && sql_order_has_index(*t, sel.alias, order_expr(sel.order_by.front().expr, sel));
  const bool eager_limit = index_limit && sel.lock == sql::RowLock::none;
  // ... unless the plan is known: a Limit over an index scan in ORDER BY's order, WHERE its
  // Filter, stopping once the Limit has its rows (so a lock call in WHERE runs for those only).
  const bool index_order = eager_limit && sel.order_by.size() == 1 && !sel.distinct && sel.distinct_on.empty() && srfs.empty() &&
                           sql_limit_reads_index_order(*t, sel.alias, order_expr(sel.order_by.front().expr, sel), sel.order_by.front(), sel.where,
                                                                       function_params_);
  // ... and under FOR UPDATE / SHARE, a WHERE that takes steps (a lock call): the Limit pulls
  // from LockRows a row at a time, which locks each row the Filter passes, so the scan stops
  // once the Limit has its rows locked (a row SKIP LOCKED passes over has run its lock call).
  const bool locking_pull = index_limit && !lock_first && sel.lock != sql::RowLock::none && sel.where && sql_filter_steps_per_row(*sel.where) &&
                            sel.order_by.size() == 1 && !sel.distinct && sel.distinct_on.empty() && srfs.empty() &&
                            sql_limit_reads_index_order(*t, sel.alias, order_expr(sel.order_by.front().expr, sel), sel.order_by.front(), sel.where,
                                                        function_params_);
  // (So with LIMIT and no ORDER BY: the Limit pulls through LockRows from the sequential scan.)
  const bool seq_pull = !index_limit && !lock_first && sel.lock != sql::RowLock::none && sel.order_by.empty() && !sel.aggregate &&
                        !sel.distinct && sel.distinct_on.empty() && windows.empty() && srfs.empty() && sel.from.empty() && derived_of(t) == nullptr &&
                        sel.where && sql_filter_steps_per_row(*sel.where);
  const std::int64_t seq_limit = seq_pull && sel.limit ? bound(sel.limit, "LIMIT") : -1;
  const std::int64_t seq_wanted = seq_limit < 0 ? -1 : std::max<std::int64_t>(bound(sel.offset, "OFFSET"), 0) + seq_limit;
  if (sel.from.empty() && !lock_first) SqlSsi::plan_select(*this, sel, *t, index_limit, index_order);
  const std::int64_t holds = eager_limit ? advisory_holds() : 0;
  const std::size_t row_locks = c_.locked_rows_.size();
  if (!sel.from.empty()) {
    rows = from_scan(sel, *t, enough);
  } else if (index_order || locking_pull) {
    rows = scan(t, sel.alias, std::nullopt, -1, -2);  // every row this session sees, then in the index's order
    sort(rows, sel, t, -1);
    const std::int64_t limit = bound(sel.limit, "LIMIT");  // -1: LIMIT ALL or NULL
    const std::int64_t wanted = limit < 0 ? std::numeric_limits<std::int64_t>::max() : std::max<std::int64_t>(bound(sel.offset, "OFFSET"), 0) + limit;
    std::vector<std::pair<std::int64_t, Row>> kept;
    const Expr& by = order_expr(sel.order_by.front().expr, sel);
    std::optional<Value> stop;  // the ORDER BY value of the row that completed the Limit
    for (auto& [id, row] : rows) {
      if (static_cast<std::int64_t>(kept.size()) >= wanted) break;
      if (!passes(t, sel.alias, sel.where, id, row)) continue;
      if (!locking_pull) {
        kept.emplace_back(id, std::move(row));
      } else if (auto one = lock_rows({{id, std::move(row)}}, sel, t, 0, -1); !one.empty()) {  // else skipped, or gone at its re-check
        kept.push_back(std::move(one.front()));
      } else {
        continue;
      }
      if (static_cast<std::int64_t>(kept.size()) == wanted && c_.ssi_tracking()) stop = value_in(*t, kept.back().second, by);
    }
    if (wanted > 0) SqlSsi::read_index_order(*this, *t, sel.alias, by, sel.order_by.front().descending, stop);  // LIMIT 0 reads nothing
    rows = std::move(kept);
  } else if (lock_first) {
    rows.emplace_back(*pinned_, Row{});  // lock_rows takes its lock if it matches
  } else {
    // An aggregate of one group in any order (count(*) ...) hides the scan's order too, where
    // WHERE takes no steps and SERIALIZABLE's reads do not hang on the plan.
    const bool unordered = sel.aggregate && sel.group_by.empty() && !shows_order(sel) && sel.lock == sql::RowLock::none &&
                           !(sel.where && sql_expr_takes_steps(*sel.where)) && !c_.serializable_;
    order_checked_scan_ = true, sorted_above_ = !sel.order_by.empty() || unordered;
    const std::int64_t limit = sel.limit ? bound(sel.limit, "LIMIT") : -1;  // the rows a Limit pulls from the scan; -2: above a Sort or Aggregate
    const bool streams = sel.order_by.empty() && !sel.aggregate && !sel.distinct && sel.distinct_on.empty() && windows.empty() && srfs.empty();
    const std::int64_t pulled = limit < 0 ? -1 : streams ? std::max<std::int64_t>(bound(sel.offset, "OFFSET"), 0) + limit : -2;
    rows = seq_pull ? scan(t, sel.alias, sel.where, seq_wanted, pulled, &sel) : scan(t, sel.alias, sel.where, enough, pulled);
    order_checked_scan_ = sorted_above_ = false;
    if (shows_order(sel)) refuse_unplanned_order(unplanned_order_);
  }
  if ((eager_limit && advisory_holds() != holds) || (index_limit && c_.locked_rows_.size() != row_locks)) {
    const std::int64_t limit = bound(sel.limit, "LIMIT");
    if (limit >= 0 && static_cast<std::int64_t>(rows.size()) > std::max<std::int64_t>(bound(sel.offset, "OFFSET"), 0) + limit) {
      throw SqlError("0A000", "a LIMIT over an ORDER BY an index gives, whose WHERE took locks for more rows than it returns, "
                              "is not in lockstep's SQL subset (docs/sql.md): the server's plan decides (an index scan stops at the "
                              "limit, a sort reads every row)");
    }
  }
  if (!windows.empty()) {
    if (sel.aggregate) throw SqlError("0A000", "window functions beside aggregates or GROUP BY are not in lockstep's SQL subset (docs/sql.md)");
    if (sel.lock != sql::RowLock::none) throw SqlError("0A000", "FOR UPDATE is not allowed with window functions");
    compute_windows(sel, t, rows);
  }
  if (sel.aggregate) return grouped_values(sel, t, rows);
  // Set-returning calls run below the Sort when a sort key holds one or DISTINCT sorts their
  // output (make_sort_input_target), else above it, on the rows in order.
  bool sort_after = !srfs.empty() && !sel.order_by.empty() && (sel.distinct || !sel.distinct_on.empty());
  for (const sql::OrderItem& o : srfs.empty() ? std::vector<sql::OrderItem>{} : sel.order_by) {
    std::vector<const Expr*> calls;
    set_returning_calls(order_expr(o.expr, sel), calls);
    sort_after = sort_after || !calls.empty();
  }
  const std::int64_t offset = bound(sel.offset, "OFFSET");
  const std::int64_t limit = sel.limit ? bound(sel.limit, "LIMIT") : -1;
  // A Limit passes its bound down to the Sort right under it (not through LockRows, Unique, ProjectSet).
  const bool bounded = limit > 0 && sel.lock == sql::RowLock::none && !sel.distinct && sel.distinct_on.empty() && srfs.empty();
  if (!sort_after) sort(rows, sel, t, index_limit && sel.order_by.size() == 1 ? -1 : bounded ? std::max<std::int64_t>(offset, 0) + limit : 0);
  if (projects_lock_calls && srfs.empty()) {
    // Each row is projected, then locked: a row then skipped or failing NOWAIT has run its
    // lock calls too, and the newest version EvalPlanQual re-checks runs them again.
    std::vector<std::vector<Value>> out;
    std::int64_t kept = 0;
    for (auto& [id, row] : rows) {
      if (limit >= 0 && kept >= std::max<std::int64_t>(offset, 0) + limit) break;
      const auto project_on = [&](const Row& r) {
        table_ = t;
        alias_ = sel.alias;
        row_ = &r;
        std::vector<Value> values = project(targets_of(sel));
        row_ = nullptr;
        return values;
      };
      std::vector<Value> values = project_on(row);
      std::vector<std::pair<std::int64_t, Row>> one;
      one.emplace_back(id, row);
      one = lock_rows(std::move(one), sel, t, 0, -1);
      if (one.empty()) continue;
      if (one.front().first != id || one.front().second != row) values = project_on(one.front().second);
      if (kept++ < offset) continue;
      out.push_back(std::move(values));
    }
    return out;
  }
  if (sel.lock != sql::RowLock::none && !locking_pull && !seq_pull) rows = sel.from.empty() ? lock_rows(std::move(rows), sel, t, offset, pulled(sel, limit)) : lock_joined_rows(std::move(rows), sel, *t, offset, pulled(sel, limit));
  std::vector<std::vector<Value>> out;
  table_ = t;
  alias_ = sel.alias;
  if (!srfs.empty()) return project_set(sel, rows, srfs, offset, limit, sort_after);
  // DISTINCT without ORDER BY: a Sort on every column, then Unique, where the planner expects
  // few rows; else a HashAggregate over a whole scan, imitated where its size is known.
  std::uint32_t buckets = 0;
  // Over unnest(array): the planner's costs for its estimate of the array's length.
  const bool columns = std::all_of(sel.targets.begin(), sel.targets.end(), [](const sql::Target& target) { return !target.star && target.expr.kind == Expr::Kind::column; });
  const std::optional<double> unnested = sel.distinct && sel.order_by.empty() && columns ? unnest_rows_estimated(sel, *this, function_params_) : std::nullopt;
  const bool hashed_unnest = unnested && distinct_hashed(*unnested, sel.targets.size());
  const bool sorted = sel.distinct && sel.order_by.empty() && (unnested ? !hashed_unnest : few_rows_estimated(sel, t));
  if (hashed_unnest) {
    buckets = hash_buckets_for_groups(*unnested);
  } else if (sel.distinct && sel.order_by.empty() && !sorted) {
    std::vector<const Expr*> exprs;
    for (const sql::Target& target : sel.targets) exprs.push_back(&target.expr);
    const bool plain = std::none_of(sel.targets.begin(), sel.targets.end(), [](const sql::Target& target) { return target.star; });
    buckets = plain ? hashed_buckets(sel, t, exprs) : 0;
  }
  // At the top, or feeding an INSERT (its rows' sequence values, RETURNING, conflicts), rows
  // whose order is not imitated are refused rather than answered wrongly.
  const auto* insert = std::get_if<sql::Insert>(&st_.body);
  const bool top = &sel == std::get_if<sql::Select>(&st_.body) || (insert != nullptr && insert->select.get() == &sel);
  const auto unordered = [] {
    return SqlError("0A000", "DISTINCT without ORDER BY giving two or more rows, in an order lockstep does not imitate here (the "
                             "server's HashAggregate or Sort), is not in lockstep's SQL subset (docs/sql.md)");
  };
  if (sorted || buckets > 0) {
    std::vector<std::vector<Value>> made;
    std::vector<std::size_t> row_keys;  // each row's among them, in scan order
    for (const auto& [id, row] : rows) {
      row_ = &row;
      window_row_ = id;
      std::vector<Value> values = project(targets_of(sel));
      const auto found = std::find_if(made.begin(), made.end(), [&](const std::vector<Value>& k) { return same_values(k, values); });
      row_keys.push_back(static_cast<std::size_t>(found - made.begin()));
      if (found == made.end()) made.push_back(std::move(values));
    }
    row_ = nullptr;
    if (sorted) {
      std::stable_sort(made.begin(), made.end(), sql_keys_ascending);
    } else if (const auto order = made.size() > 1 ? hash_aggregate_order(made, row_keys, buckets) : std::nullopt) {
      std::vector<std::vector<Value>> hashed;
      for (std::size_t i : *order) hashed.push_back(std::move(made[i]));
      made = std::move(hashed);
    } else if (made.size() > 1 && top) {
      throw unordered();
    }
    const auto first = std::min(made.size(), static_cast<std::size_t>(std::max<std::int64_t>(offset, 0)));
    made.erase(made.begin(), made.begin() + static_cast<std::ptrdiff_t>(first));
    if (limit >= 0 && static_cast<std::size_t>(limit) < made.size()) made.resize(static_cast<std::size_t>(limit));
    return made;
  }
  std::int64_t skipped = 0;
  std::vector<std::vector<Value>> seen;  // DISTINCT [ON]: the keys kept
  for (const auto& [id, row] : rows) {
    row_ = &row;
    window_row_ = id;
    std::vector<Value> values;
    if (sel.distinct || !sel.distinct_on.empty()) {
      // A Unique node: the first row of each key, in the order sorted (NULLs equal).
      std::vector<Value> key;
      if (sel.distinct) {
        key = values = project(targets_of(sel));
      } else {
        for (const Expr& e : sel.distinct_on) key.push_back(sql::evaluate(e, *this));
      }
      if (std::any_of(seen.begin(), seen.end(), [&](const std::vector<Value>& k) { return same_values(k, key); })) continue;
      seen.push_back(std::move(key));
    }
    if (skipped < offset) {
      ++skipped;
      continue;
    }
    if (limit >= 0 && static_cast<std::int64_t>(out.size()) >= limit) break;
    out.push_back(sel.distinct ? std::move(values) : project(targets_of(sel)));
  }
  row_ = nullptr;
  if (sel.distinct && sel.order_by.empty() && top && seen.size() > 1) throw unordered();
  if (top) refuse_unplanned_join(sel, out.size());
  return out;
}

bool SqlRun::shows_order(const sql::Select& sel) {
  if (!sel.order_by.empty() || sel.distinct || !sel.distinct_on.empty()) return false;
  if (!sel.aggregate) return true;
  // count, sum, avg, min, max, bool_and, bool_or: the same in any order (array_agg, string_agg,
  // json_agg and the others are not; nor is a window function's value).
  const auto ordered = [](const Expr& e, const auto& self) -> bool {
    static constexpr std::string_view kAnyOrder[] = {"count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every"};
    if (e.kind == Expr::Kind::window) return true;
    if (const sql::FunctionInfo* f = e.kind == Expr::Kind::func ? sql::find_function(e.name) : nullptr; f != nullptr && f->kind == sql::FunctionKind::aggregate &&
        std::find(std::begin(kAnyOrder), std::end(kAnyOrder), e.name) == std::end(kAnyOrder)) {
      return true;
    }
    if (sql::is_sublink(e)) return false;
    return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return self(a, self); });
  };
  return std::any_of(sel.targets.begin(), sel.targets.end(), [&](const sql::Target& t) { return !t.star && ordered(t.expr, ordered); }) ||
         (sel.having && ordered(*sel.having, ordered));
}

bool SqlRun::same_values(const std::vector<Value>& a, const std::vector<Value>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_null() != b[i].is_null()) return false;
    if (!a[i].is_null() && sql::compare(a[i], b[i], "=") != 0) return false;
  }
  return true;
}

std::int64_t SqlRun::bound(const std::optional<Expr>& e, std::string_view what) {
  if (!e) return 0;
  table_ = nullptr;
  const Value v = sql::cast(sql::evaluate(*e, *this), Type::int8);
  if (v.is_null()) return what == "LIMIT" ? -1 : 0;
  if (v.as_integer() < 0) throw SqlError(what == "LIMIT" ? "2201W" : "2201X", fmt::format("{} must not be negative", what));
  return v.as_integer();
}

void SqlRun::sort(std::vector<std::pair<std::int64_t, Row>>& rows, const sql::Select& sel, SqlTable* t, std::int64_t limit) {
  if (sel.order_by.empty()) return;
  table_ = t;
  alias_ = sel.alias;
  sql::Select by_index;  // an index scan's order: ORDER BY's column, then its index's other columns
  if (limit < 0 && t != nullptr && !t->joined && sel.order_by.size() == 1) by_index.order_by = sql_index_order(*t, sel.alias, sel.order_by[0], order_expr(sel.order_by[0].expr, sel), sel.where ? &*sel.where : nullptr);
  const sql::Select& by = by_index.order_by.empty() ? sel : by_index;
  std::vector<std::pair<std::vector<Value>, std::size_t>> keys;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    row_ = &rows[i].second;
    window_row_ = rows[i].first;
    std::vector<Value> k;
    for (const sql::OrderItem& o : by.order_by) k.push_back(sql::evaluate(order_expr(o.expr, sel), *this));
    keys.emplace_back(std::move(k), i);
  }
  row_ = nullptr;
  const auto less = [&](const auto& a, const auto& b) { return order_less(a.first, b.first, by); };
  if (limit < 0) std::stable_sort(keys.begin(), keys.end(), less);
  else pg_sort_less(keys, less, static_cast<std::size_t>(limit));
  rows = in_key_order(std::move(rows), keys);
}

void SqlRun::window_calls(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind == Expr::Kind::constant) return;  // folded: its kept arguments never run
  if (e.kind == Expr::Kind::window) out.push_back(&e);
  if (sql::is_sublink(e)) return;  // a subquery's are its own
  for (const Expr& a : e.args) window_calls(a, out);
}

bool SqlRun::same_values_prefix(const std::vector<Value>& a, const std::vector<Value>& b, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (a[i].is_null() != b[i].is_null() || (!a[i].is_null() && sql::compare(a[i], b[i], "=") != 0)) return false;
  }
  return true;
}

void SqlRun::compute_windows(const sql::Select& sel, SqlTable* t, std::vector<std::pair<std::int64_t, Row>>& rows) {
  table_ = t;
  alias_ = sel.alias;
  std::vector<const Expr*> windows;
  for (const sql::Target& target : targets_of(sel)) window_calls(target.expr, windows);
  for (const Expr* w : windows) {
    // A WindowAgg over its rows sorted by PARTITION BY, then ORDER BY (window.order_by holds both).
    const sql::Select& window = *w->select;
    std::vector<std::pair<std::vector<Value>, std::size_t>> keys;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      row_ = &rows[i].second;
      std::vector<Value> k;
      for (const sql::OrderItem& o : window.order_by) k.push_back(sql::evaluate(o.expr, *this));
      keys.emplace_back(std::move(k), i);
    }
    row_ = nullptr;
    pg_sort_less(keys, [&](const auto& a, const auto& b) { return order_less(a.first, b.first, window); });  // its Sort node
    const auto same_prefix = &SqlRun::same_values_prefix;  // PARTITION BY's values
    std::map<std::int64_t, Value>& values = window_values_[w->select.get()];
    const bool ranking = w->name == "row_number" || w->name == "rank" || w->name == "dense_rank";
    const bool ordered = window.order_by.size() > static_cast<std::size_t>(w->number);  // ORDER BY beyond PARTITION BY
    std::int64_t number = 0, rank = 0, dense = 0;
    std::size_t start = 0;  // the partition's first row (in `keys`)
    for (std::size_t j = 0; j < keys.size(); ++j) {
      const bool first = j == 0 || !same_prefix(keys[j].first, keys[j - 1].first, static_cast<std::size_t>(w->number));
      const bool peer = !first && same_values(keys[j].first, keys[j - 1].first);  // equal in ORDER BY too
      if (first) start = j;
      number = first ? 1 : number + 1;
      if (first || !peer) rank = number;
      dense = first ? 1 : peer ? dense : dense + 1;
      if (ranking) {
        const std::int64_t v = w->name == "row_number" ? number : w->name == "rank" ? rank : dense;
        values.insert_or_assign(rows[keys[j].second].first, Value::integer(v, Type::int8));
        continue;
      }
      std::size_t end = j + 1;  // the partition's end, or past the row's last peer (the default frame's end)
      while (end < keys.size() && same_prefix(keys[end].first, keys[j].first, static_cast<std::size_t>(w->number)) &&
             (!ordered || same_values(keys[end].first, keys[j].first))) {
        ++end;
      }
      values.insert_or_assign(rows[keys[j].second].first, window_value(*w, rows, keys, start, j, end));
    }
    if (windows.size() == 1) rows = in_key_order(std::move(rows), keys);  // as its WindowAgg returns them (a final Sort's input)
  }
}

Value SqlRun::window_value(const Expr& w, const std::vector<std::pair<std::int64_t, Row>>& rows,
                           const std::vector<std::pair<std::vector<Value>, std::size_t>>& keys, std::size_t start, std::size_t j,
                           std::size_t end) {
  auto at = [&](std::size_t k, const Expr& e) {  // e on the row at position k of the sorted partition
    row_ = &rows[keys[k].second].second;
    Value v = sql::evaluate(e, *this);
    row_ = nullptr;
    return v;
  };
  if (w.name == "lag" || w.name == "lead") {
    const Value offset = w.args.size() > 1 ? at(j, w.args[1]) : Value::integer(1, Type::int4);
    if (offset.is_null()) return Value::null();
    const std::int64_t off = sql::cast(offset, Type::int8).as_integer();
    const std::int64_t target = static_cast<std::int64_t>(j) + (w.name == "lag" ? -off : off);
    // The partition's rows are [start, its end): the frame's end is past the last peer only
    // when ORDER BY is given, so look for the partition's end again.
    std::size_t partition_end = j + 1;
    while (partition_end < keys.size() && same_values_prefix(keys[partition_end].first, keys[start].first, static_cast<std::size_t>(w.number))) {
      ++partition_end;
    }
    if (target >= static_cast<std::int64_t>(start) && target < static_cast<std::int64_t>(partition_end)) {
      return at(static_cast<std::size_t>(target), w.args[0]);
    }
    if (w.args.size() < 3) return Value::null();
    Value fallback = at(j, w.args[2]);
    const Value sample = at(j, w.args[0]);
    if (fallback.type() == Type::unknown && !fallback.is_null() && sample.type() != Type::unknown) fallback = sql::cast(fallback, sample.type());
    return fallback;
  }
  if (w.name == "first_value") return at(start, w.args.at(0));
  if (w.name == "last_value") return at(end - 1, w.args.at(0));
  // An aggregate over the frame: the partition's rows up to `end`.
  std::vector<const Row*> frame;
  for (std::size_t k = start; k < end; ++k) frame.push_back(&rows[keys[k].second].second);
  Expr call;
  call.kind = Expr::Kind::func;
  call.name = w.name;
  call.args = w.args;
  call.star = w.star;
  const Saved saved = save();
  group_ = &frame;
  Value v = aggregate(call);
  restore(saved);
  return v;
}

bool SqlRun::order_less(const std::vector<Value>& a, const std::vector<Value>& b, const sql::Select& sel) {
  for (std::size_t k = 0; k < sel.order_by.size(); ++k) {
    const sql::OrderItem& o = sel.order_by[k];
    const Value& x = a[k];
    const Value& y = b[k];
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
}

void SqlRun::prepare_locking_subqueries(const std::optional<Expr>& e) {
  if (!e || !st_.locking_subquery) return;
  walk(*e);
}

void SqlRun::walk(const Expr& e) {
  // A constant folding made keeps its arguments for the name checks only: the planner
  // dropped them, so a locking subquery there never runs.
  if (e.kind == Expr::Kind::constant) return;
  if (sql::is_sublink(e) && e.select->lock != sql::RowLock::none) {
    if (correlated(*e.select)) return;  // a SubPlan: it locks where it runs, per outer row
    if (e.kind == Expr::Kind::in_subquery) {
      (void)subquery_list(e);
    } else {
      (void)subquery(e);
    }
    return;
  }
  for (const Expr& a : e.args) walk(a);
}

}  // namespace lockstep::sim::pg
