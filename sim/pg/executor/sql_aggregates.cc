// sim/pg/executor/sql_aggregates.cc: aggregate functions over a group's rows on the simulated server
// (sim/pg/executor/sql_run.h): count, sum, avg, min, max, bool_and / bool_or, array_agg, string_agg,
// json_agg, jsonb_agg, jsonb_object_agg, json_object_agg; DISTINCT, FILTER and ORDER BY inside them;
// the Agg node that groups a query's rows (grouped_values).
#include <algorithm>
#include <functional>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/interval.h"
#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/sim/pg/executor/sql_hash_aggregate.h"
#include "lockstep/sim/pg/executor/pg_sort.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

Value SqlRun::aggregate(const Expr& e) {
  if (group_ == nullptr) throw SqlError("42803", fmt::format("aggregate function calls cannot be nested or used here: {}()", e.name));
  if (e.name == "grouping") {  // a bit per argument (its GROUP BY item's number), the first highest: 1 where not grouped
    std::int64_t bits = 0;
    for (const Expr& a : e.args) bits = (bits << 1) | ((grouping_absent_ >> a.value.as_integer()) & 1U);
    return Value::integer(bits, Type::int4);
  }
  const Saved saved = save();
  std::optional<Value> acc;
  std::int64_t count = 0;
  std::vector<Value> values;  // array_agg's and string_agg's inputs; DISTINCT's seen values
  std::optional<Value> delimiter;
  std::vector<Value> pairs;  // jsonb_object_agg's keys and values
  std::vector<const Row*> ordered;  // ORDER BY inside the aggregate: its input in that order
  if (e.select != nullptr && !e.select->order_by.empty()) {
    std::vector<std::pair<std::vector<Value>, const Row*>> keys;
    for (const Row* r : *group_) {
      row_ = r;
      std::vector<Value>& key = keys.emplace_back(std::vector<Value>{}, r).first;
      for (const sql::OrderItem& o : e.select->order_by) key.push_back(sql::evaluate(o.expr, *this));
    }
    pg_sort_less(keys, [&](const auto& a, const auto& b) { return order_less(a.first, b.first, *e.select); });  // tuplesort's order of ties
    for (const auto& [key, r] : keys) ordered.push_back(r);
  }
  for (const Row* r : e.select != nullptr && !e.select->order_by.empty() ? ordered : *group_) {
    row_ = r;
    if (e.filtered && !sql::is_true(sql::evaluate(e.args.back(), *this), "FILTER")) continue;
    if (e.star) {
      ++count;
      continue;
    }
    const Value v = sql::evaluate(e.args.at(0), *this);
    if (e.name == "string_agg" && !delimiter) delimiter = sql::evaluate(e.args.at(1), *this);
    if (e.name == "jsonb_object_agg" || e.name == "json_object_agg") {  // each row's key and value, in the order read
      if (e.distinct) throw SqlError("0A000", fmt::format("{}(DISTINCT ...) is not in lockstep's SQL subset", e.name));
      if (v.is_null()) throw SqlError("22004", "field name must not be null");
      pairs.push_back(v);
      pairs.push_back(sql::evaluate(e.args.at(1), *this));
      continue;
    }
    const bool keeps_nulls = e.name == "array_agg" || e.name == "json_agg" || e.name == "jsonb_agg";
    if (v.is_null() && !keeps_nulls) continue;
    if (e.distinct) {
      const bool seen = std::any_of(values.begin(), values.end(), [&](const Value& s) {
        return s.is_null() ? v.is_null() : !v.is_null() && sql::compare(s, v, "=") == 0;
      });
      if (seen) continue;
      if (!keeps_nulls && e.name != "string_agg") values.push_back(v);
    }
    ++count;
    if (e.name == "count") continue;
    if (keeps_nulls || e.name == "string_agg" || e.name == "sum" || e.name == "avg") {
      if (!e.distinct || keeps_nulls || e.name == "string_agg") values.push_back(v);
      continue;
    }
    if (e.name == "bool_and" || e.name == "bool_or" || e.name == "every") {
      const Value b = v.type() == Type::unknown ? sql::cast(v, Type::boolean) : v;
      if (b.type() != Type::boolean) throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, sql::type_name(v.type())));
      const bool any = e.name == "bool_or";
      acc = Value::boolean(acc ? (any ? acc->as_bool() || b.as_bool() : acc->as_bool() && b.as_bool()) : b.as_bool());
      continue;
    }
    const Type t = v.type();  // min / max: of the server's ordered types only (not jsonb, uuid, boolean, bytea, bit)
    if (t == Type::jsonb || t == Type::json || t == Type::uuid || t == Type::boolean || t == Type::bytea || t == Type::bit) {
      throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, sql::type_name(t)));
    }
    if (!acc) {
      acc = v;
    } else {
      // On a tie the server's numeric_larger, interval_smaller and their kin return the row's
      // value, not the running one (min(1.50, 1.5) is 1.5; max of '1 day' and '24 hours' the
      // later); bpchar_larger and bpchar_smaller keep the running one.
      const auto c = sql::compare(v, *acc, "<");
      const bool tie_takes_row = c == 0 && t != Type::bpchar;
      if ((e.name == "min" && c < 0) || (e.name == "max" && c > 0) || tie_takes_row) acc = v;
    }
  }
  restore(saved);
  if (e.distinct && (e.name == "array_agg" || e.name == "json_agg" || e.name == "jsonb_agg" || e.name == "string_agg")) {
    // A DISTINCT aggregate sorts its input first (NULLs last), as the server does.
    std::stable_sort(values.begin(), values.end(), [](const Value& x, const Value& y) {
      if (x.is_null() || y.is_null()) return !x.is_null() && y.is_null();
      return sql::compare(x, y, "<") < 0;
    });
    values.erase(std::unique(values.begin(), values.end(), [](const Value& x, const Value& y) {
      return x.is_null() ? y.is_null() : !y.is_null() && sql::compare(x, y, "=") == 0;
    }), values.end());
  }
  if (e.name == "count") return Value::integer(count, Type::int8);
  if ((e.name == "sum" || e.name == "avg") && !values.empty() && values.front().type() == Type::interval) {  // interval_pl; avg: / count
    sql::Interval total;
    for (const Value& v : values) total = sql::interval_plus(total, v.as_interval());
    return Value::interval(e.name == "sum" ? total : sql::interval_divided(total, static_cast<double>(values.size())));
  }
  if (e.name == "sum") return sql::numeric_sum(values);  // model/sql/numeric.h
  if (e.name == "avg") return sql::numeric_avg(values);
  if (e.name == "json_agg" || e.name == "jsonb_agg") return sql::json_aggregate(values, e.name == "jsonb_agg");
  if (e.name == "jsonb_object_agg") return pairs.empty() ? Value::null(Type::jsonb) : sql::jsonb_build_object(pairs);  // the last of a repeated key
  if (e.name == "json_object_agg") {  // json_object_agg_transfn's text: { "k" : v, ... }, every key kept
    if (pairs.empty()) return Value::null(Type::json);
    std::string out = "{ ";
    for (std::size_t i = 0; i < pairs.size(); i += 2) {
      const Value value = pairs[i + 1].is_null() ? Value::null(Type::json) : sql::to_json(pairs[i + 1]);
      out += fmt::format("{}{} : {}", i == 0 ? "" : ", ", sql::to_json(Value::text(pairs[i].text_output())).text_output(),
                         value.is_null() ? std::string("null") : value.text_output());
    }
    return Value::json(out + " }");
  }
  if (e.name == "array_agg") {
    if (values.empty()) return Value::null(Type::array);
    sql::ElementType element;
    for (const Value& v : values) {
      if (!v.is_null()) element = {v.type() == Type::unknown ? Type::text : v.type(), v.type() == Type::enum_ ? v.enum_type() : -1};
    }
    if (element.type == Type::array) throw SqlError("0A000", "array_agg of arrays (a multidimensional array) is not in lockstep's SQL subset");
    std::vector<Value> typed;
    for (const Value& v : values) typed.push_back(v.type() == Type::unknown && !v.is_null() ? sql::cast(v, Type::text) : v);
    return sql::make_array(element.type == Type::unknown ? sql::ElementType{Type::text, -1} : element, typed);
  }
  if (e.name == "string_agg") {
    if (values.empty()) return Value::null(Type::text);
    std::string out;
    for (std::size_t i = 0; i < values.size(); ++i) {
      if (values[i].type() != Type::text && values[i].type() != Type::unknown) {
        throw SqlError("42883", fmt::format("function string_agg({}, unknown) does not exist", sql::type_name(values[i].type())));
      }
      if (i > 0 && delimiter && !delimiter->is_null()) out += sql::cast(*delimiter, Type::text).as_text();
      out += values[i].as_text();
    }
    return Value::text(out);
  }
  return acc ? *acc : Value::null();
}

bool sql_keys_ascending(const std::vector<Value>& a, const std::vector<Value>& b) {
  for (std::size_t k = 0; k < a.size() && k < b.size(); ++k) {
    if (a[k].is_null() || b[k].is_null()) {
      if (a[k].is_null() && b[k].is_null()) continue;
      return b[k].is_null();
    }
    const auto c = sql::compare(a[k], b[k], "<");
    if (c != 0) return c < 0;
  }
  return false;
}

// Tables here are never analyzed: the planner estimates a scan at its pages' worth of rows
// (hundreds), which a HashAggregate groups (hashed_buckets), but an equality of a column with a
// value (a constant, parameter or outer query's column) or IS NULL at a few rows, which it
// sorts and groups in key order (checked on PostgreSQL 15: procrastinate's list_queues).
bool SqlRun::few_rows_estimated(const sql::Select& sel, SqlTable* t) const {
  if (!sel.where || t == nullptr) return false;
  auto own = [&](const Expr& e) { return e.kind == Expr::Kind::column && resolves(*t, sel.alias, e); };
  auto value = [&](const Expr& e) {
    return e.kind == Expr::Kind::constant || e.kind == Expr::Kind::param || (e.kind == Expr::Kind::column && !resolves(*t, sel.alias, e));
  };
  auto equality = [&](const Expr& e) {
    if (e.kind == Expr::Kind::is_null) return !e.negated && own(e.args.at(0));
    return e.kind == Expr::Kind::op && e.name == "=" && e.args.size() == 2 &&
           ((own(e.args[0]) && value(e.args[1])) || (value(e.args[0]) && own(e.args[1])));
  };
  const Expr& w = *sel.where;
  if (w.kind == Expr::Kind::and_) return std::any_of(w.args.begin(), w.args.end(), equality);
  return equality(w);
}

// The planner's selectivity of WHERE over `t` without statistics (clauselist_selectivity: a
// product over its conjuncts): a column <> a value or IS NOT NULL 0.995, < > <= >= 1/3 (one
// per column: two make a range), = or IS NULL 0.005; nullopt for any other conjunct. With
// `loose` (a join's estimate), a value is any expression of no column (a Param or a stable
// call to the planner) and LIKE of a pattern without wildcards is an equality.
std::optional<double> SqlRun::where_selectivity(const sql::Select& sel, SqlTable& t, bool loose) const {
  if (!sel.where) return 1.0;
  const Expr& w = *sel.where;
  std::vector<const Expr*> conjuncts;
  if (w.kind == Expr::Kind::and_) {
    for (const Expr& a : w.args) conjuncts.push_back(&a);
  } else {
    conjuncts.push_back(&w);
  }
  auto own = [&](const Expr& e) { return e.kind == Expr::Kind::column && resolves(t, sel.alias, e); };
  const auto columnless = [&](const Expr& e, const auto& self) -> bool {
    if (e.kind == Expr::Kind::column) return !own(e) && function_params_ != nullptr && function_params_->names_variable(e);  // a Param
    return !sql::is_sublink(e) && e.kind != Expr::Kind::window && std::all_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return self(a, self); });
  };
  auto value = [&](const Expr& e) {
    return e.kind == Expr::Kind::constant || e.kind == Expr::Kind::param || (loose && columnless(e, columnless));
  };
  double selectivity = 1;
  std::vector<std::string> ranged;
  for (const Expr* c : conjuncts) {
    if (loose && c->kind == Expr::Kind::like && c->args.size() == 2 && own(c->args[0]) && c->args[1].kind == Expr::Kind::constant &&
        (c->args[1].value.type() == Type::text || c->args[1].value.type() == Type::unknown) && c->args[1].value.as_text().find_first_of("%_\\") == std::string::npos) {
      selectivity *= c->negated ? 0.995 : 0.005;
      continue;
    }
    if (c->kind == Expr::Kind::is_null && own(c->args.at(0))) {
      selectivity *= c->negated ? 0.995 : 0.005;
      continue;
    }
    if (c->kind != Expr::Kind::op || c->args.size() != 2) return std::nullopt;
    const Expr* column = own(c->args[0]) && value(c->args[1]) ? &c->args[0] : own(c->args[1]) && value(c->args[0]) ? &c->args[1] : nullptr;
    if (column == nullptr) return std::nullopt;
    if (c->name == "=") {
      selectivity *= 0.005;
    } else if (c->name == "<>" || c->name == "!=") {
      selectivity *= 0.995;
    } else if (c->name == "<" || c->name == ">" || c->name == "<=" || c->name == ">=") {
      if (std::find(ranged.begin(), ranged.end(), column->name) != ranged.end()) return std::nullopt;
      ranged.push_back(column->name);
      selectivity *= 1.0 / 3;
    } else {
      return std::nullopt;
    }
  }
  return selectivity;
}

// The buckets of the HashAggregate the planner puts over a scan of `t` grouping by `keys`
// (sql_hash_aggregate.h), or 0 where its order is not imitated: a WHERE of other conjuncts
// (where_selectivity), a join, a key that is not a column (its estimate), a boolean or unique
// column (2, or every row, distinct values; the planner drops other keys beside a primary key's).
std::uint32_t SqlRun::hashed_buckets(const sql::Select& sel, SqlTable* t, const std::vector<const Expr*>& keys) const {
  const std::optional<double> selectivity = t != nullptr ? where_selectivity(sel, *t) : std::nullopt;
  if (!selectivity || !sel.from.empty() || keys.empty()) return 0;
  // The columns the keys read: estimate_num_groups counts an expression's as its own.
  std::vector<int> columns;
  bool plain = true;
  const std::function<void(const Expr&)> read = [&](const Expr& e) {
    if (sql::is_sublink(e) || e.kind == Expr::Kind::func || e.kind == Expr::Kind::window) plain = false;
    if (e.kind == Expr::Kind::column) {
      const int i = resolves(*t, sel.alias, e) ? t->column(e.name) : -1;
      if (i < 0) plain = false;
      if (i >= 0 && std::find(columns.begin(), columns.end(), i) == columns.end()) columns.push_back(i);
    }
    for (const Expr& a : e.args) read(a);
  };
  for (const Expr* k : keys) read(*k);
  if (!plain || columns.empty()) return 0;
  for (const int i : columns) {
    if (t->def.columns[static_cast<std::size_t>(i)].type == Type::boolean || t->key == std::vector<int>{i}) return 0;
    for (const SqlTable::UniqueKey& u : t->unique) {
      if (u.columns == std::vector<int>{i} && !u.where) return 0;
    }
  }
  if (!t->key.empty() && std::all_of(t->key.begin(), t->key.end(), [&](int c) { return std::find(columns.begin(), columns.end(), c) != columns.end(); })) {
    return 0;
  }
  return hash_aggregate_buckets(*t, *selectivity, columns.size(), widest_row(*t));
}

std::size_t SqlRun::widest_row(const SqlTable& t) const {
  std::size_t widest = 0;  // bytes of a row's values, each at most its text and 8
  server_.each_row(t.def.table, [&](std::int64_t, RowState& r) {
    auto measure = [&](const Row& row) {
      std::size_t bytes = 0;
      for (const auto& [name, text] : row) bytes += text.size() + 8;
      widest = std::max(widest, bytes);
    };
    if (r.committed) measure(*r.committed);
    for (const auto& [pid, written] : r.pending) {
      if (written.version) measure(*written.version);
    }
  });
  return widest;
}

// Whether the order of `sel`'s groups can reach what the statement shows: `sel` is its SELECT
// (or INSERT ... SELECT's, the serial ids following that order), or a WITH query or FROM
// subquery that one reads with no ORDER BY, grouping or DISTINCT of its own (pgqueuer's log
// aggregation: `WITH agg AS (... GROUP BY ...) INSERT ... SELECT ... FROM agg`).
bool SqlRun::group_order_reaches_output(const sql::Select& sel) const {
  const auto* insert = std::get_if<sql::Insert>(&st_.body);
  const sql::Select* top = insert != nullptr ? insert->select.get() : std::get_if<sql::Select>(&st_.body);
  if (top == nullptr) return false;
  if (&sel == top) return true;
  if (!top->order_by.empty() || top->aggregate || top->distinct || !top->distinct_on.empty() || top->set_op) return false;
  const std::vector<sql::CommonTable>& with = insert != nullptr && !insert->with.empty() ? insert->with : top->with;
  const bool cte = std::any_of(with.begin(), with.end(), [&](const sql::CommonTable& c) { return c.select.get() == &sel; });
  const bool subquery = std::any_of(top->from.begin(), top->from.end(), [&](const sql::FromItem& f) { return f.select.get() == &sel; });
  return cte || subquery;
}

// An Agg node: the rows in groups of equal GROUP BY values (NULLs equal), in order of each
// group's first row (one group of every row, maybe none, without GROUP BY), of their keys
// when the planner sorts them (few_rows_estimated), or as its HashAggregate returns them
// (hashed_buckets: else first rows', docs/notes.md); HAVING; then ORDER BY over the groups'
// values, OFFSET and LIMIT. A grouped column reads its group's first row.
std::vector<std::vector<Value>> SqlRun::grouped_values(const sql::Select& sel, SqlTable* t,
                                                       const std::vector<std::pair<std::int64_t, Row>>& rows) {
  table_ = t;
  alias_ = sel.alias;
  std::vector<std::vector<const Row*>> groups;
  std::vector<std::pair<Row, std::uint32_t>> shown;  // grouping sets: each group's row as projected, its GROUPING() bits
  if (!sel.grouping_sets.empty()) {
    groups = grouping_set_groups(sel, t, rows, shown);  // sim/pg/executor/sql_grouping_sets.cc
  } else if (sel.group_by.empty()) {
    groups.emplace_back();
    for (const auto& r : rows) groups.back().push_back(&r.second);
  } else {
    std::vector<std::vector<Value>> keys;
    std::vector<std::size_t> row_keys;  // each row's group, in scan order
    for (const auto& r : rows) {
      row_ = &r.second;
      std::vector<Value> key;
      for (const Expr& g : sel.group_by) key.push_back(sql::evaluate(g, *this));
      const auto found = std::find_if(keys.begin(), keys.end(), [&](const std::vector<Value>& other) { return same_values(key, other); });
      row_keys.push_back(static_cast<std::size_t>(found - keys.begin()));
      if (found == keys.end()) {
        keys.push_back(std::move(key));
        groups.emplace_back();
        groups.back().push_back(&r.second);
      } else {
        groups[row_keys.back()].push_back(&r.second);
      }
    }
    if (sel.order_by.empty() && few_rows_estimated(sel, t)) {  // Sort, then GroupAggregate: groups in key order
      std::vector<std::size_t> order(groups.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sql_keys_ascending(keys[a], keys[b]); });
      std::vector<std::vector<const Row*>> sorted;
      for (std::size_t i : order) sorted.push_back(std::move(groups[i]));
      groups = std::move(sorted);
    } else if (std::vector<const Expr*> exprs; groups.size() > 1) {
      for (const Expr& g : sel.group_by) exprs.push_back(&g);
      const std::uint32_t buckets = hashed_buckets(sel, t, exprs);
      if (const auto order = buckets > 0 ? hash_aggregate_order(keys, row_keys, buckets) : std::nullopt) {
        std::vector<std::vector<const Row*>> hashed;
        for (std::size_t i : *order) hashed.push_back(std::move(groups[i]));
        groups = std::move(hashed);
      } else if (sel.order_by.empty() && group_order_reaches_output(sel)) {
        throw SqlError("0A000", "GROUP BY without ORDER BY giving two or more groups, in an order lockstep does not imitate here (the "
                                "server's HashAggregate or Sort), is not in lockstep's SQL subset (docs/sql.md)");
      }
    }
  }
  std::vector<std::pair<std::vector<Value>, std::vector<Value>>> out;  // (ORDER BY keys, row)
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const std::vector<const Row*>& g = groups[gi];
    group_ = &g;
    row_ = !shown.empty() ? &shown[gi].first : g.empty() ? nullptr : g.front();
    grouping_absent_ = !shown.empty() ? shown[gi].second : 0;
    if (sel.having && !sql::is_true(sql::evaluate(*sel.having, *this), "HAVING")) continue;
    std::vector<Value> keys;
    for (const sql::OrderItem& o : sel.order_by) keys.push_back(sql::evaluate(order_expr(o.expr, sel), *this));
    out.emplace_back(std::move(keys), project(targets_of(sel)));
  }
  group_ = nullptr;
  row_ = nullptr;
  grouping_absent_ = 0;
  const std::int64_t sort_limit = sel.limit && !sel.distinct && !sel.order_by.empty() ? bound(sel.limit, "LIMIT") : -1;  // the Sort's bound
  pg_sort_less(out, [&](const auto& a, const auto& b) { return order_less(a.first, b.first, sel); },
               sort_limit > 0 ? static_cast<std::size_t>(std::max<std::int64_t>(bound(sel.offset, "OFFSET"), 0) + sort_limit) : 0);
  if (sel.distinct) {
    std::vector<std::pair<std::vector<Value>, std::vector<Value>>> kept;
    for (auto& o : out) {
      if (std::none_of(kept.begin(), kept.end(), [&](const auto& k) { return same_values(k.second, o.second); })) kept.push_back(std::move(o));
    }
    out = std::move(kept);
  }
  const std::int64_t offset = bound(sel.offset, "OFFSET");
  const std::int64_t limit = sel.limit ? bound(sel.limit, "LIMIT") : -1;
  std::vector<std::vector<Value>> values;
  for (std::size_t i = static_cast<std::size_t>(offset); i < out.size(); ++i) {
    if (limit >= 0 && static_cast<std::int64_t>(values.size()) >= limit) break;
    values.push_back(std::move(out[i].second));
  }
  return values;
}

}  // namespace lockstep::sim::pg
