// sim/pg/executor/sql_grouping_sets.cc: GROUP BY GROUPING SETS, ROLLUP and CUBE on the simulated server
// (sim/pg/executor/sql_run.h): each set's groups of the query's rows, each shown as its first row with
// the GROUP BY columns outside the set NULL (PostgreSQL 15's prepare_projection_slot), and
// GROUPING()'s bits. Without ORDER BY at a statement's top, the groups come in the order of
// the plan the server picks for a scan of a table never analyzed that it estimates at 200 rows
// or more, checked on PostgreSQL 15 for sets of at most two columns (pg-boss's countStates,
// `GROUP BY rollup(name), rollup(state)`): a MixedAggregate's empty set first, then each
// hashed set's HashAggregate order (sim/pg/executor/sql_hash_aggregate.h) in the order of its rollup
// chains; else refused there, and in expansion order, each set's groups in order of their
// first rows, inside a query.
#include <algorithm>

#include "lockstep/sim/pg/executor/sql_hash_aggregate.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {
namespace {

// One grouping set's groups: their keys (the set's items' values, in `columns`' order), each
// input row's group, each group's rows.
struct gs_Groups {
  std::vector<std::size_t> columns;  // GROUP BY items, in hash key order
  std::vector<std::vector<Value>> keys;
  std::vector<std::size_t> row_keys;
  std::vector<std::vector<const Row*>> rows;
};

gs_Groups gs_group(std::vector<std::size_t> columns, const std::vector<std::vector<Value>>& values,
                   const std::vector<std::pair<std::int64_t, Row>>& rows) {
  gs_Groups g{.columns = std::move(columns)};
  for (std::size_t r = 0; r < rows.size(); ++r) {
    std::vector<Value> key;
    for (const std::size_t c : g.columns) key.push_back(values[r][c]);
    const auto found = std::find_if(g.keys.begin(), g.keys.end(), [&](const auto& k) { return SqlRun::same_values(k, key); });
    g.row_keys.push_back(static_cast<std::size_t>(found - g.keys.begin()));
    if (found == g.keys.end()) {
      g.keys.push_back(std::move(key));
      g.rows.emplace_back();
    }
    g.rows[g.row_keys.back()].push_back(&rows[r].second);
  }
  return g;
}

// The hashed sets in the order the planner's rollup chains list them, for sets of at most two
// GROUP BY items (`sets` shortest first, none repeated, the empty one left out): a two-item
// set first, keyed with the first one-item set's item first (extract_rollup_sets chains that
// set to it), then the other one-item sets. Checked on PostgreSQL 15 (grouping-sets.spec).
std::vector<std::vector<std::size_t>> gs_chain_order(const std::vector<std::vector<std::size_t>>& sets) {
  std::vector<std::vector<std::size_t>> singles, out;
  for (const auto& s : sets) {
    if (s.size() == 1) singles.push_back(s);
  }
  for (const auto& s : sets) {
    if (s.size() != 2) continue;
    std::vector<std::size_t> pair = s;
    if (!singles.empty()) {
      if (pair[1] == singles.front()[0]) std::swap(pair[0], pair[1]);
      out.push_back(pair);
      out.push_back(singles.front());
      singles.erase(singles.begin());
    } else {
      out.push_back(pair);
    }
  }
  out.insert(out.end(), singles.begin(), singles.end());
  return out;
}

}  // namespace

std::vector<std::vector<const Row*>> SqlRun::grouping_set_groups(const sql::Select& sel, SqlTable* t,
                                                                 const std::vector<std::pair<std::int64_t, Row>>& rows,
                                                                 std::vector<std::pair<Row, std::uint32_t>>& shown) {
  if (t == nullptr) throw SqlError("0A000", "GROUPING SETS, ROLLUP or CUBE without a FROM is not in lockstep's SQL subset");
  // Each GROUP BY item's column in a stored row: nulled in the sets without it.
  std::vector<std::string> stored_as;
  for (const Expr& g : sel.group_by) {
    const int i = t->joined ? joined_column(*t, g) : resolves(*t, sel.alias, g) ? t->column(g.name) : -1;
    if (i < 0) throw SqlError("0A000", "a GROUPING SETS, ROLLUP or CUBE item that is no column of the query's FROM is not in lockstep's SQL subset");
    stored_as.push_back(t->def.columns[static_cast<std::size_t>(i)].name);
  }
  std::vector<std::vector<Value>> values;
  for (const auto& r : rows) {
    row_ = &r.second;
    std::vector<Value>& v = values.emplace_back();
    for (const Expr& g : sel.group_by) v.push_back(sql::evaluate(g, *this));
  }
  row_ = nullptr;
  const auto* insert = std::get_if<sql::Insert>(&st_.body);
  const bool top = &sel == std::get_if<sql::Select>(&st_.body) || (insert != nullptr && insert->select.get() == &sel);
  std::vector<gs_Groups> ordered;
  std::size_t empty_sets = 0;  // (GROUPING SETS ((), ()): a row each)
  if (sel.order_by.empty() && top) {  // the server's plan's order, where imitated
    std::vector<std::vector<std::size_t>> hashed;
    for (const auto& s : sel.grouping_sets) {
      if (s.empty()) ++empty_sets;
      if (!s.empty()) hashed.push_back(s);
    }
    auto sorted = sel.grouping_sets;
    std::sort(sorted.begin(), sorted.end());
    // (DISTINCT: a Unique or HashAggregate above reorders them.)
    bool imitated = sel.group_by.size() <= 2 && std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end() && !t->joined && !sel.distinct;
    for (const auto& s : imitated ? gs_chain_order(hashed) : std::vector<std::vector<std::size_t>>{}) {
      gs_Groups g = gs_group(s, values, rows);
      std::vector<const Expr*> exprs;
      for (const std::size_t c : s) exprs.push_back(&sel.group_by[c]);
      const std::uint32_t buckets = hashed_buckets(sel, t, exprs);
      const auto order = buckets > 0 ? hash_aggregate_order(g.keys, g.row_keys, buckets) : std::nullopt;
      if (!order) {
        imitated = false;
        break;
      }
      gs_Groups h{.columns = g.columns};
      for (const std::size_t k : *order) {
        h.keys.push_back(std::move(g.keys[k]));
        h.rows.push_back(std::move(g.rows[k]));
      }
      ordered.push_back(std::move(h));
    }
    if (!imitated && rows.size() > 0) {
      throw SqlError("0A000", "GROUPING SETS, ROLLUP or CUBE without ORDER BY, in an order lockstep does not imitate here (the server's "
                              "MixedAggregate of a scan it estimates at 200 rows or more, sets of one or two columns), is not in "
                              "lockstep's SQL subset (docs/sql.md)");
    }
    if (!imitated) ordered.clear();
  } else {
    for (const auto& s : sel.grouping_sets) {
      if (s.empty()) {
        ++empty_sets;
        continue;
      }
      ordered.push_back(gs_group(s, values, rows));
    }
  }
  std::vector<std::vector<const Row*>> groups;
  auto show = [&](const std::vector<std::size_t>& in_set, const Row* first) {
    Row r = first != nullptr ? *first : Row{};
    std::uint32_t absent = 0;
    for (std::size_t i = 0; i < sel.group_by.size(); ++i) {
      if (std::find(in_set.begin(), in_set.end(), i) != in_set.end()) continue;
      r.erase(stored_as[i]);
      absent |= 1U << i;
    }
    shown.emplace_back(std::move(r), absent);
  };
  // The empty set's one group (also of no rows): a MixedAggregate's sorted phase, first; in
  // expansion order (shortest first) also first.
  for (std::size_t e = 0; e < empty_sets; ++e) {
    std::vector<const Row*>& all = groups.emplace_back();
    for (const auto& r : rows) all.push_back(&r.second);
    show({}, all.empty() ? nullptr : all.front());
  }
  for (gs_Groups& g : ordered) {
    for (auto& members : g.rows) {
      show(g.columns, members.front());
      groups.push_back(std::move(members));
    }
  }
  return groups;
}

}  // namespace lockstep::sim::pg
