// sim/pg/executor/sql_scan_order.cc: which scan the server's planner picks for a table's WHERE, as far
// as the order of the rows it returns goes (sim/pg/executor/sql_run.h: sql_scan_has_index_qual).
#include <algorithm>

#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_scan_choice.h"
#include "lockstep/sim/pg/executor/sql_ssi.h"

namespace lockstep::sim::pg {
namespace {

using sql::Expr;

// An expression the planner can use as an index key's comparand: no column of any row (an
// uncorrelated subquery is an InitPlan), no volatile function. A plpgsql variable (named by
// `variables`, a running function's frame) is a Param to the server's planner.
bool order_free(const Expr& e, const sql::EvalContext* variables) {
  switch (e.kind) {
    case Expr::Kind::constant:
    case Expr::Kind::param:
    case Expr::Kind::subquery: return true;
    case Expr::Kind::column: return variables != nullptr && variables->names_variable(e);
    case Expr::Kind::func:
      if (e.name != "now" && e.name != "current_timestamp" && e.name != "transaction_timestamp") return false;
      break;
    case Expr::Kind::cast:
    case Expr::Kind::op:
    case Expr::Kind::array: break;
    default: return false;
  }
  return std::all_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return order_free(a, variables); });
}

// A column of t that leads the primary key or a unique index without a predicate (`plain`:
// or a plain btree's).
bool order_leading_column(const SqlTable& t, std::string_view alias, const Expr& e, bool plain = false) {
  if (e.kind != Expr::Kind::column) return false;
  if (!e.qualifier.empty() && e.qualifier != alias && e.qualifier != t.def.table) return false;
  const int c = t.column(e.name);
  if (c < 0) return false;
  if (!t.key.empty() && t.key.front() == c) return true;
  if (plain && std::any_of(t.indexes.begin(), t.indexes.end(), [&](const auto& x) { return !x.columns.empty() && x.columns.front() == e.name; })) return true;
  return std::any_of(t.unique.begin(), t.unique.end(), [&](const SqlTable::UniqueKey& u) {
    return !u.where && !u.columns.empty() && u.columns.front() == c;
  });
}

bool order_index_qual(const SqlTable& t, std::string_view alias, const Expr& e, const sql::EvalContext* variables, bool plain = false) {
  const auto free = [variables](const Expr& a) { return order_free(a, variables); };
  const auto order_leading_column = [plain](const SqlTable& tt, std::string_view a, const Expr& x) { return pg::order_leading_column(tt, a, x, plain); };
  switch (e.kind) {
    case Expr::Kind::op: {
      static constexpr std::string_view kComparisons[] = {"=", "<", "<=", ">", ">="};
      if (e.args.size() != 2 || std::find(std::begin(kComparisons), std::end(kComparisons), e.name) == std::end(kComparisons)) return false;
      return (order_leading_column(t, alias, e.args[0]) && free(e.args[1])) || (order_leading_column(t, alias, e.args[1]) && free(e.args[0]));
    }
    case Expr::Kind::between:
    case Expr::Kind::in_list:
      return !e.negated && order_leading_column(t, alias, e.args.at(0)) && std::all_of(e.args.begin() + 1, e.args.end(), free);
    case Expr::Kind::quantified:
      return !e.all && e.name == "=" && order_leading_column(t, alias, e.args.at(0)) && free(e.args.at(1));
    case Expr::Kind::is_null: return !e.negated && order_leading_column(t, alias, e.args.at(0));
    case Expr::Kind::or_:
      return std::all_of(e.args.begin(), e.args.end(), [&](const Expr& arm) {
        if (arm.kind == Expr::Kind::and_) {
          return std::any_of(arm.args.begin(), arm.args.end(), [&](const Expr& c) { return order_index_qual(t, alias, c, variables, plain); });
        }
        return order_index_qual(t, alias, arm, variables, plain);
      });
    case Expr::Kind::and_:
      return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& c) { return order_index_qual(t, alias, c, variables, plain); });
    default: return false;
  }
}

}  // namespace

bool sql_order_has_index(const SqlTable& t, std::string_view alias, const Expr& first) { return order_leading_column(t, alias, first); }

std::vector<sql::OrderItem> sql_index_order(const SqlTable& t, std::string_view alias, const sql::OrderItem& order, const Expr& first,
                                            const Expr* where) {
  std::vector<sql::OrderItem> out{sql::OrderItem{.expr = first, .descending = order.descending, .nulls_first = order.nulls_first}};
  if (!order_leading_column(t, alias, first)) return out;
  const int c = t.column(first.name);
  for (const Expr* q : where != nullptr ? sql_index_quals(t, alias, *where, {c}, nullptr) : std::vector<const Expr*>{}) {
    if ((q->kind == Expr::Kind::op && q->name == "=") || q->kind == Expr::Kind::in_list || q->kind == Expr::Kind::quantified) return out;
  }
  const std::vector<int>* key = !t.key.empty() && t.key.front() == c ? &t.key : nullptr;
  for (const SqlTable::UniqueKey& u : t.unique) {
    if (key == nullptr && !u.where && u.expressions.empty() && !u.columns.empty() && u.columns.front() == c) key = &u.columns;
  }
  for (std::size_t i = 1; key != nullptr && i < key->size(); ++i) {
    const Expr column{.kind = Expr::Kind::column, .name = t.def.columns[static_cast<std::size_t>((*key)[i])].name};
    out.push_back(sql::OrderItem{.expr = column, .descending = order.descending});  // a backward scan for DESC: NULLS FIRST
  }
  return out;
}

std::vector<const Expr*> sql_primary_key_quals(const SqlTable& t, std::string_view alias, const Expr& where, const sql::EvalContext* variables) {
  return sql_index_quals(t, alias, where, t.key, variables);
}

std::vector<const Expr*> sql_index_quals(const SqlTable& t, std::string_view alias, const Expr& where, const std::vector<int>& key,
                                         const sql::EvalContext* variables) {
  const auto is_free = [variables](const Expr& a) { return order_free(a, variables); };
  if (t.joined || key.empty()) return {};
  // A conjunct on one of the key's columns that a btree scan of the key checks (an index cond).
  auto key_column = [&](const Expr& e) {
    if (e.kind != Expr::Kind::column || (!e.qualifier.empty() && e.qualifier != alias && e.qualifier != t.def.table)) return -1;
    const int c = t.column(e.name);
    return c >= 0 && std::find(key.begin(), key.end(), c) != key.end() ? c : -1;
  };
  auto cond_column = [&](const Expr& e) {
    switch (e.kind) {
      case Expr::Kind::op: {
        static constexpr std::string_view kComparisons[] = {"=", "<", "<=", ">", ">="};
        if (e.args.size() != 2 || std::find(std::begin(kComparisons), std::end(kComparisons), e.name) == std::end(kComparisons)) return -1;
        if (key_column(e.args[0]) >= 0 && is_free(e.args[1])) return key_column(e.args[0]);
        return is_free(e.args[0]) ? key_column(e.args[1]) : -1;
      }
      case Expr::Kind::between:
      case Expr::Kind::in_list:
        return !e.negated && std::all_of(e.args.begin() + 1, e.args.end(), is_free) ? key_column(e.args.at(0)) : -1;
      case Expr::Kind::quantified: return !e.all && e.name == "=" && is_free(e.args.at(1)) ? key_column(e.args.at(0)) : -1;
      default: return -1;
    }
  };
  std::vector<const Expr*> quals;
  bool leading = false;
  auto visit = [&](const Expr& e, const auto& self) -> void {
    if (e.kind == Expr::Kind::and_) {
      for (const Expr& a : e.args) self(a, self);
      return;
    }
    const int c = cond_column(e);
    if (c < 0) return;
    quals.push_back(&e);
    leading = leading || c == key.front();
  };
  visit(where, visit);
  if (!leading) return {};
  return quals;
}

SingleColumnIndex sql_single_column_index(const SqlTable& t, int c) {
  if (c < 0) return {};
  if (t.key.size() == 1 && t.key.front() == c) return {.found = true, .primary = true};
  for (const SqlTable::UniqueKey& u : t.unique) {
    if (!u.where && u.expressions.empty() && u.columns.size() == 1 && u.columns.front() == c) return {.found = true, .unique = &u};
  }
  return {};
}

bool sql_limit_reads_index_order(const SqlTable& t, std::string_view alias, const Expr& e, const sql::OrderItem& order,
                                 const std::optional<Expr>& where, const sql::EvalContext* variables) {
  // Checked on PostgreSQL 15 (EXPLAIN of tables never analyzed): `ORDER BY id LIMIT n` is a
  // Limit over an Index Scan of the key with WHERE as its Filter, also beside a one-sided
  // range on another unique column (its selectivity, a third, loses to the ordered scan);
  // an equality, IN or = ANY on a unique column is an index scan of that column under a Sort.
  if (t.joined || !t.indexes.empty() || e.kind != Expr::Kind::column) return false;
  if (!e.qualifier.empty() && e.qualifier != alias && e.qualifier != t.def.table) return false;
  if (order.nulls_first && *order.nulls_first != order.descending) return false;  // not the index's order
  const int c = t.column(e.name);
  const SingleColumnIndex index = sql_single_column_index(t, c);
  // NULLs of a unique column tie, and the index keeps ties in its entries' heap order (the
  // HOT chains' roots; read backward for DESC): a Sort's stable order is not that.
  if (!index.found || !(index.primary || t.def.columns[static_cast<std::size_t>(c)].not_null)) return false;
  if (!where) return true;
  std::vector<const Expr*> conjuncts;
  auto flatten = [&](const Expr& x, const auto& self) -> void {
    if (x.kind != Expr::Kind::and_) {
      conjuncts.push_back(&x);
      return;
    }
    for (const Expr& a : x.args) self(a, self);
  };
  flatten(*where, flatten);
  int ranges = 0;
  for (const Expr* x : conjuncts) {
    if (!order_index_qual(t, alias, *x, variables)) continue;  // a Filter's
    if (x->kind != Expr::Kind::op || x->name == "=") return false;  // another index's plan (under a Sort)
    const Expr& column = order_leading_column(t, alias, x->args[0]) ? x->args[0] : x->args[1];
    if (t.column(column.name) == c || ++ranges > 1) return false;  // an Index Cond, or another index's plan
  }
  return true;
}

bool sql_scan_has_index_qual(const SqlTable& t, std::string_view alias, const Expr& where, const sql::EvalContext* variables, bool plain) {
  if (t.joined) return false;
  return order_index_qual(t, alias, where, variables, plain);
}

bool sql_expr_takes_steps(const Expr& e) {
  if (e.kind == Expr::Kind::constant) return false;  // folded: its kept arguments never run
  const bool pl = e.kind == Expr::Kind::user_func &&
                  std::ranges::any_of(sql::current_sql_functions(e.name), [](const sql::CreateFunction* f) { return f->pl != nullptr; });  // (any overload)
  return pl || (e.kind == Expr::Kind::func && sql::is_stepping_function(e.name)) ||
         std::any_of(e.args.begin(), e.args.end(), sql_expr_takes_steps);
}

bool sql_filter_steps_per_row(const Expr& where) {
  bool sublink = false;
  const auto walk = [&](const Expr& e, const auto& self) -> void {
    if (e.kind == Expr::Kind::constant) return;
    sublink = sublink || sql::is_sublink(e);
    for (const Expr& a : e.args) self(a, self);
  };
  walk(where, walk);
  return !sublink && sql_expr_takes_steps(where);
}

}  // namespace lockstep::sim::pg

namespace lockstep::sim::pg {

std::vector<std::pair<std::int64_t, const Row*>> SqlRun::scan_rows(SqlTable& t, const std::string& alias, const std::optional<Expr>& where,
                                                                   std::int64_t limit) {
  ScanChoice choice;
  if (where && (sql_scan_has_index_qual(t, alias, *where, function_params_, true) || sql_scan_may_use_uncosted_index(t, *where))) {
    choice = sql_scan_choice(t, alias, *where, limit, widest_row(t), *this, function_params_);
  }
  auto rows = relation_rows(t, choice.pick != ScanPick::seq);
  order_scan(rows, t, alias, where, choice);
  return rows;
}

void SqlRun::order_scan(std::vector<std::pair<std::int64_t, const Row*>>& rows, SqlTable& t, const std::string& alias,
                        const std::optional<Expr>& where, const ScanChoice& choice) {
  if (rows.size() < 2 || choice.pick == ScanPick::seq || choice.pick == ScanPick::bitmap) return;
  if (choice.pick == ScanPick::unknown && sorted_above_) return;  // ORDER BY decides (its ties aside)
  using Rows = std::vector<std::pair<std::int64_t, const Row*>>;
  // An index scan: its keys in ascending order (NULLs last), a key's entries in heap order of
  // their HOT chains' roots (btree ties are by TID).
  const auto by_index = [&](const Rows& in, const std::vector<int>& columns) {
    std::vector<std::vector<Value>> keys;
    for (const auto& [id, row] : in) {
      auto& k = keys.emplace_back();
      for (const int c : columns) k.push_back(value_in(t, *row, Expr{.kind = Expr::Kind::column, .name = t.def.columns[static_cast<std::size_t>(c)].name}));
    }
    std::vector<std::size_t> order(in.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      for (std::size_t k = 0; k < columns.size(); ++k) {
        const Value &x = keys[a][k], &y = keys[b][k];
        if (x.is_null() || y.is_null()) {
          if (x.is_null() != y.is_null()) return y.is_null();
          continue;
        }
        if (const auto c = sql::compare(x, y, "<"); c != 0) return c < 0;
      }
      return false;
    });
    Rows out;
    for (const std::size_t i : order) out.push_back(in[i]);
    return out;
  };
  if (choice.pick == ScanPick::index) {
    rows = by_index(rows, choice.index_columns);
    return;
  }
  // Not decided: answered where every plan still in the running gives the rows WHERE keeps (all
  // rows, where WHERE cannot run here without steps) in one order.
  const bool pure = !where || (!sql_expr_takes_steps(*where) && [&] {
    bool sublink = false;
    const auto walk = [&](const Expr& e, const auto& self) -> void {
      sublink = sublink || sql::is_sublink(e);
      for (const Expr& a : e.args) self(a, self);
    };
    walk(*where, walk);
    return !sublink;
  }());
  const auto ids = [&](const Rows& in) {
    std::vector<std::int64_t> out;
    for (const auto& [id, row] : in) {
      if (!pure || passes(&t, alias, where, id, *row)) out.push_back(id);
    }
    return out;
  };
  const std::vector<std::int64_t> roots = ids(rows);
  bool same = ids(relation_rows(t)) == roots;
  for (const std::vector<int>& columns : choice.index_orders) same = same && ids(by_index(rows, columns)) == roots;
  if (!same) {
    throw SqlError("0A000", fmt::format("which scan PostgreSQL's planner picks for this WHERE on \"{}\" ({}), which decides the order of its rows, is "
                                        "not in lockstep's SQL subset (docs/sql.md)",
                                        t.def.table, choice.why));
  }
}

}  // namespace lockstep::sim::pg
