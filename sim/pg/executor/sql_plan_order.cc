// sim/pg/executor/sql_plan_order.cc: rows whose order the server's planner decides by its costs, which
// the simulation does not model: an uncorrelated IN (subquery) pulled up into a semi join, and
// UPDATE / DELETE ... FROM's join. Each plan the planner may pick for such a join orders the
// rows its own way (EXPLAIN on PostgreSQL 15, tables never analyzed: the pick moves with the
// LIMIT, a filter's selectivity and the rows' width):
//   - the table scanned outside (a hash [semi] join probing with it): the scan's order;
//   - the other side driving a nested loop over an index scan of the table: that side's
//     order; for an IN (subquery) whose values the planner cannot prove distinct (a LIMIT, a
//     column without a unique index), once made unique (create_unique_path): sorted (Sort +
//     Unique) or in a hash table's order (HashAggregate, sized by an estimate);
//   (a merge join, the key's order, is not among the plans EXPLAIN showed at these sizes).
// Where these agree for the rows at hand the answer is the server's whichever it picks; where
// they differ, a statement that shows the order (RETURNING, a SELECT without ORDER BY) is
// refused (refuse_unplanned_order) rather than answered one way.
#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>

#include "lockstep/sim/pg/executor/sql_hash_aggregate.h"
#include "lockstep/sim/pg/heap/sql_rows.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

namespace {

// Whether the rows, each ranked, come in a non-decreasing order of rank (ties keep theirs:
// the plan reads rows of one key in the table's order).
bool po_in_rank_order(const std::vector<std::size_t>& rank_of_row) {
  return std::is_sorted(rank_of_row.begin(), rank_of_row.end());
}

// Whether the subquery's single output column is provably distinct to the planner
// (relation_has_unique_index_for on a pulled-up table): a plain scan of one table selecting a
// column that alone is its primary key or a unique key.
bool po_provably_distinct(const sql::Select& sub, const SqlTable* t) {
  if (t == nullptr || sub.limit || sub.offset || sub.aggregate || !sub.from.empty() || sub.targets.size() != 1) return false;
  const Expr& e = sub.targets[0].expr;
  if (sub.targets[0].star || e.kind != Expr::Kind::column) return false;
  const int c = t->column(e.name);
  return c >= 0 && sql_single_column_index(*t, c).found;
}

std::size_t po_conjuncts(const Expr& where) { return where.kind == Expr::Kind::and_ ? where.args.size() : 1; }

}  // namespace

// The plan's pick for a join of `rows` estimated rows (lowest, highest) of the other side to
// table t on a column an index of t holds alone, with `filters` other conditions on t, on a
// table never analyzed (10 pages) with a small index (2 pages):
//   - a nested loop over an index scan of t per row: cost_index with loop_count n, whose
//     pages (index_pages_fetched: Mackert-Lohman over the 10 heap pages and the 2 index
//     pages) cost random_page_cost 4 apiece over all the loops, and some CPU a loop (0.17);
//   - a sequential scan of t (10 pages, cpu_tuple_cost a row) probing a hash of the other side
//     (cpu_operator_cost a row each way), or under a filter at least its scan.
// Decided only where every estimate falls 15% clear of the other plan; one row drives always.
SqlRun::Drive SqlRun::planned_drive(std::pair<double, double> rows, const SqlTable& t, std::size_t filters) const {
  if (rows.second <= 1) return Drive::other_side;
  const auto width = unanalyzed_width(t, widest_row(t));
  if (!width || t.tuples_written > 250) return Drive::unknown;  // past 250 keys the index may have more pages
  const auto fetched = [](double pages, double n) { return std::min(pages, std::ceil(2 * pages * n / (2 * pages + n))); };
  std::optional<Drive> pick;
  for (const double n : {rows.first, rows.second}) {
    for (const int w : {width->first, width->second}) {
      const double tuples = unanalyzed_tuples(w);
      const double nested = n * 0.17 + 4 * (fetched(10, n) + fetched(2, n));
      const double hashed = filters == 0 ? 10 + tuples * 0.0125 + n * 0.0125 : 10 + tuples * (0.01 + 0.0025 * static_cast<double>(filters));
      Drive d = Drive::unknown;
      if (n <= 1 || nested <= 0.85 * hashed) d = Drive::other_side;
      else if (filters == 0 && hashed <= 0.85 * nested && n <= tuples / 2) d = Drive::table;
      if (pick && *pick != d) return Drive::unknown;
      pick = d;
    }
  }
  return *pick;
}

// A correlated EXISTS pulled up into a semi join (Pulled::semi) keeps the table's scan order
// (a hash or nested loop semi join probing with the table) unless the planner may drive the
// join from the subquery's rows: made unique on the columns its equalities join on, or reduced
// to an inner join by a unique index of them (reduce_unique_semijoins), which its costs pick
// when the subquery's rows are few. Where the subquery's table has no such index and no
// condition but the joining equalities (its every row, some 200 groups: never the cheaper
// driver), the scan's order stands; else every order such a plan may give (with the index: the
// subquery's rows as scanned; without: sorted or hashed by the join key) must agree with the
// scan's, or a result that shows the order is refused.
void SqlRun::order_exists_semi_join(const std::vector<std::pair<std::int64_t, Row>>& rows, SqlTable& t, const std::string& alias, const Expr& where) {
  if (rows.size() < 2 || !st_.has_subquery || subquery_depth_ > 0 || !unplanned_order_.empty()) return;
  std::vector<const Expr*> conjuncts;
  const auto flatten = [](const Expr& e, std::vector<const Expr*>& out, const auto& self) -> void {
    if (e.kind != Expr::Kind::and_) return out.push_back(&e);
    for (const Expr& a : e.args) self(a, out, self);
  };
  flatten(where, conjuncts, flatten);
  for (const Expr* c : conjuncts) {
    if (pulled_up(*c) != Pulled::semi) continue;
    const sql::Select& sub = *c->select;
    SqlTable* inner = table(sub.table);
    std::vector<const Expr*> inner_conjuncts;
    flatten(*sub.where, inner_conjuncts, flatten);
    std::vector<const Expr*> outer_columns;  // the outer row's expressions the equalities join on
    bool unique = false, filtered = false;
    for (const Expr* ic : inner_conjuncts) {
      // inner column = an expression of the outer row's columns only (a hashable join clause)
      const auto outer_only = [&](const Expr& e, const auto& self) -> bool {
        if (e.kind == Expr::Kind::column) return !resolves(*inner, sub.alias, e) && resolves(t, alias, e);
        if (sql::is_sublink(e) || e.kind == Expr::Kind::param) return false;
        return std::all_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return self(a, self); });
      };
      const bool eq = ic->kind == Expr::Kind::op && ic->name == "=" && ic->args.size() == 2;
      const Expr* joined = nullptr;
      int inner_column = -1;
      for (int side = 0; eq && side < 2; ++side) {
        const Expr& a = ic->args[static_cast<std::size_t>(side)];
        const Expr& b = ic->args[static_cast<std::size_t>(1 - side)];
        if (a.kind == Expr::Kind::column && resolves(*inner, sub.alias, a) && outer_only(b, outer_only)) {
          inner_column = inner->column(a.name);
          joined = &b;
        }
      }
      if (joined == nullptr || inner_column < 0) {
        filtered = true;
        continue;
      }
      outer_columns.push_back(joined);
      unique = unique || sql_single_column_index(*inner, inner_column).found;
    }
    if (outer_columns.empty() || (!unique && !filtered)) continue;
    // The orders such plans may give, each a rank per row.
    std::vector<std::vector<Value>> distinct;
    std::vector<std::size_t> row_keys, inner_at;
    const auto inner_rows = relation_rows(*inner);
    for (const auto& [id, row] : rows) {
      std::vector<Value> key;
      table_ = &t;
      alias_ = alias;
      row_ = &row;
      for (const Expr* e : outer_columns) key.push_back(sql::evaluate(*e, *this));
      row_ = nullptr;
      const auto k = std::find_if(distinct.begin(), distinct.end(), [&](const auto& d) { return same_values(d, key); });
      row_keys.push_back(static_cast<std::size_t>(k - distinct.begin()));
      if (k == distinct.end()) distinct.push_back(std::move(key));
      const auto matched = semi_rows_.find({c, id});
      const auto at = matched == semi_rows_.end() ? inner_rows.end()
                                                  : std::find_if(inner_rows.begin(), inner_rows.end(), [&](const auto& r) { return *r.second == matched->second; });
      inner_at.push_back(static_cast<std::size_t>(at - inner_rows.begin()));
    }
    // A unique index: an inner join, driven by the subquery's rows as scanned; else they are
    // made unique first, sorted or hashed.
    std::vector<std::vector<std::size_t>> orders;
    if (unique) orders.push_back(inner_at);
    std::vector<std::size_t> by_key(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) by_key[i] = i;
    std::stable_sort(by_key.begin(), by_key.end(), [&](std::size_t a, std::size_t b) { return sql_keys_ascending(distinct[row_keys[a]], distinct[row_keys[b]]); });
    std::vector<std::size_t> sorted_rank(rows.size());
    for (std::size_t r = 0; r < by_key.size(); ++r) sorted_rank[by_key[r]] = r;
    if (!unique) orders.push_back(sorted_rank);
    std::vector<std::size_t> list_keys(rows.size());  // the keys as the subquery's scan meets them
    std::vector<std::size_t> by_inner(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) by_inner[i] = i;
    std::stable_sort(by_inner.begin(), by_inner.end(), [&](std::size_t a, std::size_t b) { return inner_at[a] < inner_at[b]; });
    for (std::size_t i = 0; i < rows.size(); ++i) list_keys[i] = row_keys[by_inner[i]];
    bool hashed = true;
    for (std::uint32_t buckets = 2; !unique && buckets <= 4096; buckets *= 2) {
      const auto order = hash_aggregate_order(distinct, list_keys, buckets);
      hashed = order.has_value();
      if (!order) break;
      std::vector<std::size_t> rank_of_key(distinct.size());
      for (std::size_t r = 0; r < order->size(); ++r) rank_of_key[(*order)[r]] = r;
      std::vector<std::size_t> ranks;
      for (const std::size_t k : row_keys) ranks.push_back(rank_of_key[k]);
      orders.push_back(std::move(ranks));
    }
    if (hashed && std::all_of(orders.begin(), orders.end(), [](const auto& o) { return po_in_rank_order(o); })) continue;
    unplanned_order_ = "the rows a correlated EXISTS keeps come in an order the server's planner picks by its costs (a semi join: the "
                       "table's; a join driven by the subquery's rows, made unique or by a unique index: theirs, as scanned, sorted or "
                       "hashed), and here those orders differ";
    return;
  }
}

bool SqlRun::semi_joined(const Expr& where) {
  if (where.kind == Expr::Kind::and_) return std::any_of(where.args.begin(), where.args.end(), [&](const Expr& a) { return semi_joined(a); });
  const Pulled p = pulled_up(where);
  return p == Pulled::semi || p == Pulled::semi_in;
}

std::optional<std::int64_t> SqlRun::planned_limit(const sql::Select& q) {
  const Expr& e = *q.limit;
  if (e.kind == Expr::Kind::constant) return sql::is_integer(e.value.type()) ? std::optional{e.value.as_integer()} : std::nullopt;
  // A plpgsql variable or a $n: a Param, whose value a custom plan (a call's first five) knows.
  const bool param = e.kind == Expr::Kind::param || (e.kind == Expr::Kind::column && function_params_ != nullptr && function_params_->names_variable(e));
  if (!param) return std::nullopt;
  const Value v = sql::evaluate(e, *this);
  return !v.is_null() && sql::is_integer(v.type()) ? std::optional{v.as_integer()} : std::nullopt;
}

std::optional<std::pair<double, double>> SqlRun::estimated_rows(const sql::Select& q) {
  if (q.table.empty() || !q.from.empty() || q.aggregate || q.distinct || !q.distinct_on.empty() || q.offset || derived(q.table) != nullptr) {
    return std::nullopt;
  }
  SqlTable* t = server_.sql_table(q.table);
  if (t == nullptr) return std::nullopt;
  const auto width = unanalyzed_width(*t, widest_row(*t));
  const std::optional<double> selectivity = where_selectivity(q, *t, /*loose=*/true);
  if (!width || !selectivity) return std::nullopt;
  double cap = std::numeric_limits<double>::infinity();
  if (q.limit) {
    const std::optional<std::int64_t> limit = planned_limit(q);
    if (!limit) return std::nullopt;
    cap = static_cast<double>(std::max<std::int64_t>(*limit, 1));
  }
  const auto rows = [&](int w) { return std::min(cap, std::max(1.0, std::rint(unanalyzed_tuples(w) * *selectivity))); };
  return std::pair{rows(width->second), rows(width->first)};  // the wider row, the fewer tuples
}

// An IN (subquery) of unnest(array) alone, as its select list (ProjectSet) or its FROM (a
// function scan), without GROUP BY, DISTINCT, LIMIT or OFFSET: the rows the planner estimates
// (unnest_rows_estimated), else nullopt.
std::optional<std::pair<double, double>> SqlRun::unnest_subquery_rows(const sql::Select& q) {
  if (q.aggregate || q.distinct || !q.distinct_on.empty() || q.limit || q.offset || q.targets.size() != 1 || q.targets[0].star) return std::nullopt;
  std::optional<double> n;
  if (q.from.size() == 1) {
    n = unnest_rows_estimated(q, *this, function_params_);
  } else if (q.from.empty() && !q.where && q.targets[0].expr.kind == Expr::Kind::func) {
    sql::FromItem f;
    f.kind = sql::FromItem::Kind::function;
    f.function.push_back(q.targets[0].expr);
    n = unnest_rows_estimated(f, nullptr, *this, function_params_);
  }
  if (!n) return std::nullopt;
  return std::pair{*n, *n};
}

void SqlRun::order_semi_join(std::vector<std::pair<std::int64_t, Row>>& rows, const SqlTable& t, const Expr& where, bool limited) {
  if ((rows.size() < 2 && !limited) || rows.empty() || !st_.has_subquery || subquery_depth_ > 0) return;  // (where_holds' semi joins: at the top)
  std::vector<const Expr*> conjuncts;
  const auto flatten = [&](const Expr& e, const auto& self) -> void {
    if (e.kind != Expr::Kind::and_) return conjuncts.push_back(&e);
    for (const Expr& a : e.args) self(a, self);
  };
  flatten(where, flatten);
  for (const Expr* c : conjuncts) {
    if (c->kind == Expr::Kind::in_subquery && c->args.at(0).kind == Expr::Kind::row && rows.size() >= 2) {
      // (a, b) IN (SELECT ... FROM a WITH query the server materializes: one that locks rows):
      // a nested loop over its rows made unique by a HashAggregate (pgqueuer's schedules).
      const Derived* d = c->select->table.empty() ? nullptr : derived(c->select->table);
      const sql::CommonTable* cte = d == nullptr ? nullptr : d->def;
      if (cte != nullptr && (cte->modifying || cte->materialized || (cte->select && cte->select->lock != sql::RowLock::none))) {
        unplanned_order_ = "the rows a row-valued IN (subquery) over a materialized WITH query keeps come in the order of its rows "
                           "made unique by the server's hash table";
        return;
      }
    }
    if (c->kind != Expr::Kind::in_subquery || c->args.at(0).kind == Expr::Kind::row || pulled_up(*c) != Pulled::semi_in) continue;
    const sql::Select& sub = *c->select;
    const std::vector<Value>& list = subquery_list(*c);
    std::vector<std::vector<Value>> distinct;  // the subquery's values, once each, in its order
    std::vector<std::size_t> list_keys;        // per value of the list, its index in `distinct`
    const auto index_of = [&](const Value& v) {
      const auto at = std::find_if(distinct.begin(), distinct.end(), [&](const std::vector<Value>& d) { return d[0] == v; });
      return static_cast<std::size_t>(at - distinct.begin());
    };
    for (const Value& v : list) {
      const std::size_t k = index_of(v);
      if (k == distinct.size()) distinct.push_back({v});
      list_keys.push_back(k);
    }
    std::vector<std::size_t> row_keys;  // per row, the subquery value it matched
    for (const auto& [id, row] : rows) {
      const auto hit = semi_values_.find({c, id});
      LOCKSTEP_INVARIANT(hit != semi_values_.end(), "a row an IN semi join kept matched one of its values");
      row_keys.push_back(index_of(hit->second));
      LOCKSTEP_INVARIANT(row_keys.back() < distinct.size(), "a matched value is one of the subquery's");
    }
    // The orders the subquery's side may drive in, each a rank per distinct value.
    std::vector<std::vector<std::size_t>> driven;
    std::vector<std::size_t> in_list(distinct.size());
    for (std::size_t k = 0; k < distinct.size(); ++k) in_list[k] = k;
    const auto rows_estimate = sub.table.empty() ? unnest_subquery_rows(sub) : estimated_rows(sub);
    bool hash_known = true;
    if (po_provably_distinct(sub, server_.sql_table(sub.table))) {
      driven.push_back(in_list);
    } else {
      // create_unique_path: a Sort + Unique costs less than a HashAggregate for 2 rows estimated
      // only (cost_sort counts 2 for fewer; past 2, n log n outgrows cpu_tuple_cost a group);
      // the hash table is sized for the estimate (SH_CREATE). Without one exact estimate, every
      // order either may give.
      const bool exact = rows_estimate && rows_estimate->first == rows_estimate->second;
      if (!exact || rows_estimate->first == 2) {
        std::vector<std::size_t> by_value = in_list, sorted(distinct.size());
        std::stable_sort(by_value.begin(), by_value.end(), [&](std::size_t a, std::size_t b) { return sql_keys_ascending(distinct[a], distinct[b]); });
        for (std::size_t r = 0; r < by_value.size(); ++r) sorted[by_value[r]] = r;
        driven.push_back(sorted);
      }
      const std::optional<std::int64_t> limit = sub.limit ? planned_limit(sub) : std::nullopt;
      const double most = exact ? rows_estimate->first : limit ? static_cast<double>(std::max<std::int64_t>(*limit, 1)) : 4096.0;
      const std::uint32_t largest = std::bit_ceil(static_cast<std::uint32_t>(std::max(2.0, most / 0.9)));
      const std::uint32_t smallest = exact ? largest : 2;
      for (std::uint32_t buckets = smallest; (!exact || rows_estimate->first != 2) && buckets <= largest; buckets *= 2) {
        const auto order = hash_aggregate_order(distinct, list_keys, buckets);
        hash_known = order.has_value();  // a type whose hash is imitated
        if (!order) break;
        std::vector<std::size_t> hashed(distinct.size());
        for (std::size_t r = 0; r < order->size(); ++r) hashed[(*order)[r]] = r;
        driven.push_back(std::move(hashed));
      }
    }
    const auto ranks = [&](const std::vector<std::size_t>& rank_of_key) {
      std::vector<std::size_t> out;
      for (const std::size_t k : row_keys) out.push_back(rank_of_key[k]);
      return out;
    };
    const bool driven_agree = hash_known && std::all_of(driven.begin(), driven.end(), [&](const auto& d) { return ranks(d) == ranks(driven[0]); });
    const Expr& probe = c->args[0];
    const bool indexed = probe.kind == Expr::Kind::column && t.column(probe.name) >= 0 && sql_single_column_index(t, t.column(probe.name)).found;
    const Drive drive = indexed && rows_estimate ? planned_drive(*rows_estimate, t, po_conjuncts(where) - 1) : Drive::unknown;
    if (limited) {  // a Limit above weighs the plans' startup costs (a fraction of the rows): not estimated here
      unplanned_order_ = "a LIMIT over an IN (subquery) semi join keeps the rows the plan the server's costs pick reads first (a nested "
                         "loop over the subquery's values made unique, or a hash semi join in the table's order)";
      return;
    }
    if (drive == Drive::table) continue;
    if (drive == Drive::other_side && driven_agree) {
      const std::vector<std::size_t> r = ranks(driven[0]);
      std::vector<std::size_t> order(rows.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return r[a] < r[b]; });
      std::vector<std::pair<std::int64_t, Row>> sorted;
      for (const std::size_t i : order) sorted.push_back(std::move(rows[i]));
      rows = std::move(sorted);
      continue;
    }
    if (drive == Drive::unknown && driven_agree && po_in_rank_order(ranks(driven[0]))) continue;  // every plan's order is the scan's
    unplanned_order_ = "the rows an IN (subquery) keeps come in an order the server's planner picks by its costs (a hash semi join: the "
                       "table's; a nested loop over the subquery's values made unique: theirs, sorted or hashed), and here those orders differ";
    return;
  }
}

void SqlRun::order_join(std::vector<std::tuple<std::int64_t, Row, Row>>& rows, const std::vector<std::size_t>& first_match, Drive drive,
                        bool ties_reversed) {
  if (rows.size() < 2 || drive == Drive::table) return;
  if (drive == Drive::other_side) {
    std::vector<std::size_t> order(rows.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return first_match[a] < first_match[b]; });
    std::vector<std::tuple<std::int64_t, Row, Row>> sorted;
    sorted.reserve(rows.size());
    for (const std::size_t i : order) sorted.push_back(std::move(rows[i]));
    rows = std::move(sorted);
    return;
  }
  // Target rows that join one row come, under a hash join led by the joined rows, in its hash
  // bucket's order (the last inserted first), under a nested loop in the table's: any two differ
  // where the planner may hash the target (may_hash_target).
  if (!po_in_rank_order(first_match) || ties_reversed) {
    unplanned_order_ = "the rows of UPDATE or DELETE ... FROM come in an order the server's planner picks by its costs (a hash join "
                       "probing with the table: the table's; a nested loop or a hash join led by the joined rows: theirs, and in a "
                       "hash bucket's order where several join one row), and here those orders differ";
  }
}

// A FROM of joins shows its rows in the order of the plan the server's costs pick. Decided
// here for one shape only: a first relation of known rows (unnest(array), VALUES) joined,
// inner or left, to tables each on a column an index of that table holds alone, where every
// such join is a nested loop over index scans (planned_drive): the first relation's order,
// each table's one row per row. Elsewhere (a hash join probing with a table gives the table's
// heap order, with its unmatched rows last; a merge join the key's order) two or more rows
// shown without ORDER BY are refused.
void SqlRun::refuse_unplanned_join(const sql::Select& sel, std::size_t rows) {
  using K = sql::FromItem::Kind;
  if (rows < 2 || !sel.order_by.empty() || sel.from.empty() || (sel.from.size() == 1 && sel.from[0].kind != K::join)) return;
  std::vector<std::pair<const sql::FromItem*, const sql::FromItem*>> chain;  // (relation, the join that brought it)
  bool shaped = sel.from.size() == 1;
  const auto flatten = [&](const sql::FromItem& f, const auto& self) -> void {
    if (f.kind != K::join) {
      chain.emplace_back(&f, nullptr);
      return;
    }
    self(f.sides.at(0), self);
    if (f.sides.at(1).kind == K::join || f.on.empty()) shaped = false;
    chain.emplace_back(&f.sides.at(1), &f);
  };
  if (shaped) flatten(sel.from[0], flatten);
  const sql::FromItem* first = shaped ? chain.front().first : nullptr;
  std::optional<double> n;
  if (first != nullptr && first->kind == K::values) n = static_cast<double>(first->values.size());
  if (first != nullptr && first->kind == K::function) n = unnest_rows_estimated(*first, nullptr, *this, function_params_);
  for (std::size_t i = 1; n && i < chain.size(); ++i) {
    const auto& [item, join] = chain[i];
    SqlTable* t = item->kind == K::table && derived(item->table) == nullptr ? server_.sql_table(item->table) : nullptr;
    if (t == nullptr) {
      n.reset();
      break;
    }
    const std::string name = sql::from_item_name(*item);
    const auto names_t = [&](const Expr& e) { return e.kind == Expr::Kind::column && e.qualifier == name; };
    const auto reads_t = [&](const Expr& e, const auto& self) -> bool {
      return (e.kind == Expr::Kind::column && (e.qualifier.empty() || e.qualifier == name)) || sql::is_sublink(e) ||
             std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return self(a, self); });
    };
    std::vector<const Expr*> conjuncts;
    for (const Expr& e : join->on) {
      if (e.kind != Expr::Kind::and_) conjuncts.push_back(&e);
      if (e.kind == Expr::Kind::and_) {
        for (const Expr& a : e.args) conjuncts.push_back(&a);
      }
    }
    const bool keyed = std::any_of(conjuncts.begin(), conjuncts.end(), [&](const Expr* c) {
      if (c->kind != Expr::Kind::op || c->name != "=" || c->args.size() != 2) return false;
      for (int side = 0; side < 2; ++side) {
        const Expr& key = c->args[static_cast<std::size_t>(side)];
        const Expr& other = c->args[static_cast<std::size_t>(1 - side)];
        if (names_t(key) && !reads_t(other, reads_t) && t->column(key.name) >= 0 && sql_single_column_index(*t, t->column(key.name)).found) return true;
      }
      return false;
    });
    if (!keyed || planned_drive({*n, *n}, *t, conjuncts.size() - 1) != Drive::other_side) n.reset();
  }
  if (n) return;
  throw SqlError("0A000", "the rows of a join without ORDER BY come in an order the server's planner picks by its costs (a nested loop: the "
                          "first relation's; a hash join probing with a table: that table's heap order), not decided here for this FROM; "
                          "shown or inserted that way they are not in lockstep's SQL subset (docs/sql.md); ORDER BY over them, or one row, is");
}

void SqlRun::refuse_unplanned_order(const std::string& why) const {
  if (why.empty()) return;
  throw SqlError("0A000", fmt::format("{}: a result in an order the planner's costs pick (not modelled) is not in lockstep's SQL subset "
                                      "(docs/sql.md); ORDER BY over it, or one row, is",
                                      why));
}

}  // namespace lockstep::sim::pg
