// sim/pg/executor/sql_project_set.cc: set-returning functions in a select list with FROM on the
// simulated server (sim/pg/executor/sql_run.h), as PostgreSQL's ProjectSet runs them: per scanned row,
// its calls in step (as many rows as the longest, the others NULL), above the Sort, or below it
// when a sort key holds one or DISTINCT sorts their output (make_sort_input_target).
#include <algorithm>

#include <fmt/ranges.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/sim/pg/executor/pg_sort.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

std::vector<std::vector<Value>> SqlRun::project_set(const sql::Select& sel, const std::vector<std::pair<std::int64_t, Row>>& rows,
                                                    const std::vector<const Expr*>& srfs, std::int64_t offset, std::int64_t limit,
                                                    bool sort_after) {
  // A ProjectSet over the scanned rows (GoodJob's NOT IN (SELECT jsonb_array_elements_text(...)
  // FROM ...)): per row, its calls run in step, as many rows as the longest; OFFSET and LIMIT
  // above it. Below a Sort (`sort_after`): its rows sorted, then DISTINCT's Unique (sorted by
  // ORDER BY's keys, then the other output columns, so equal rows are adjacent).
  if (sel.order_by.empty() && (sel.distinct || !sel.distinct_on.empty())) {
    throw SqlError("0A000", fmt::format("{}() in the select list of a query with DISTINCT without ORDER BY is not in lockstep's SQL "
                                        "subset (docs/sql.md): the server's HashAggregate or Sort decides the order",
                                        srfs.front()->name));
  }
  if (sort_after) {
    // A sort key's calls are the ProjectSet's too (resjunk columns: an output name's a copy of
    // the select list's call, run again in step with it).
    std::vector<const Expr*> calls = srfs;
    for (const sql::OrderItem& o : sel.order_by) set_returning_calls(order_expr(o.expr, sel), calls);
    std::vector<std::pair<std::vector<Value>, std::vector<Value>>> made;  // (ORDER BY keys, row)
    for (const auto& [id, row] : rows) {
      row_ = &row;
      window_row_ = id;
      const std::size_t n = run_set_returning_calls(calls);
      for (std::size_t i = 0; i < n; ++i) {
        srf_row_ = static_cast<std::int64_t>(i);
        std::vector<Value> keys;
        for (const sql::OrderItem& o : sel.order_by) keys.push_back(sql::evaluate(order_expr(o.expr, sel), *this));
        made.emplace_back(std::move(keys), project(targets_of(sel)));
      }
      srf_row_ = -1;
    }
    srf_rows_.clear();
    row_ = nullptr;
    const bool distinct = sel.distinct;
    // tuplesort's (pg_sort.h): a Limit right above the Sort bounds it (not past a Unique).
    const std::size_t bound = !distinct && limit >= 0 ? static_cast<std::size_t>(std::max<std::int64_t>(offset, 0) + limit) : 0;
    pg_sort_less(made, [&](const auto& a, const auto& b) {
      if (order_less(a.first, b.first, sel)) return true;
      if (order_less(b.first, a.first, sel) || !distinct) return false;
      return sql_keys_ascending(a.second, b.second);  // the Unique's other sort keys
    }, bound);
    if (!sel.distinct_on.empty()) {
      throw SqlError("0A000", "DISTINCT ON beside a set-returning function in the select list is not in lockstep's SQL subset (docs/sql.md)");
    }
    std::vector<std::vector<Value>> out;
    std::optional<std::vector<Value>> last, last_keys;  // the Unique's row before, and its keys
    std::int64_t skipped = 0;
    for (auto& [keys, values] : made) {
      if (distinct && last && same_values(*last, values)) continue;
      // Distinct rows tied on ORDER BY's keys: the server's HashAggregate (or Sort) below the
      // Sort decides their order.
      if (distinct && last_keys && !order_less(*last_keys, keys, sel)) {
        throw SqlError("0A000", "DISTINCT over a set-returning function in the select list with rows ORDER BY leaves tied is not in "
                                "lockstep's SQL subset (docs/sql.md): the server's plan decides their order");
      }
      if (distinct) {
        last = values;
        last_keys = keys;
      }
      if (skipped < offset) {
        ++skipped;
        continue;
      }
      if (limit >= 0 && static_cast<std::int64_t>(out.size()) >= limit) break;
      out.push_back(std::move(values));
    }
    return out;
  }
  std::vector<std::vector<Value>> out;
  std::int64_t skipped = 0;
  for (const auto& [id, row] : rows) {
    row_ = &row;
    window_row_ = id;
    const std::size_t n = run_set_returning_calls(srfs);
    for (std::size_t i = 0; i < n; ++i) {
      if (skipped < offset) {
        ++skipped;
        continue;
      }
      if (limit >= 0 && static_cast<std::int64_t>(out.size()) >= limit) break;
      srf_row_ = static_cast<std::int64_t>(i);
      out.push_back(project(targets_of(sel)));
    }
    srf_row_ = -1;
    if (limit >= 0 && static_cast<std::int64_t>(out.size()) >= limit) break;
  }
  srf_rows_.clear();
  row_ = nullptr;
  return out;
}

std::size_t SqlRun::run_set_returning_calls(const std::vector<const Expr*>& calls) {
  std::size_t n = 0;
  srf_rows_.clear();
  for (const Expr* call : calls) {
    if (call->name == "unnest" && call->args.size() > 1) {  // the several-array form is FROM's only
      std::vector<std::string> types;
      for (const Expr& a : call->args) {
        const Value v = sql::evaluate(a, *this);
        types.push_back(v.type() == Type::array ? sql::array_type_name(v) : std::string(sql::type_name(v.type())));
      }
      throw SqlError("42883", fmt::format("function unnest({}) does not exist", fmt::join(types, ", ")));
    }
    std::vector<std::vector<Value>> produced = function_rows(*call);
    n = std::max(n, produced.size());
    srf_rows_[call] = std::move(produced);
  }
  return n;
}

void SqlRun::set_returning_calls(const Expr& e, std::vector<const Expr*>& out) {
  if (e.kind == Expr::Kind::constant) return;  // folded: its kept arguments never run
  if (e.kind == Expr::Kind::func && sql::select_list_set_returning(e.name)) {
    out.push_back(&e);
    return;
  }
  if (sql::is_sublink(e)) return;
  for (const Expr& a : e.args) set_returning_calls(a, out);
}

Value SqlRun::set_returning_value(const Expr& call) {
  const auto rows = srf_rows_.find(&call);
  if (srf_row_ < 0 || rows == srf_rows_.end()) {
    throw SqlError("0A000", fmt::format("{}() outside the select list of a SELECT without FROM (or INSERT ... SELECT) is not in "
                                        "lockstep's SQL subset",
                                        call.name));
  }
  const auto i = static_cast<std::size_t>(srf_row_);
  return i < rows->second.size() ? rows->second[i].at(0) : Value::null();
}

}  // namespace lockstep::sim::pg
