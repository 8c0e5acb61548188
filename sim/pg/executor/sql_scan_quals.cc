// sim/pg/executor/sql_scan_quals.cc: a joined FROM's WHERE conditions that read one table only,
// run on that table's rows as it is read (sim/pg/executor/sql_run.h's LeafQuals).
//
// The planner gives each base relation the WHERE conditions that name its columns only
// (distribute_qual_to_rels: restriction quals) and its scan runs them on every row it reads,
// before any join condition; the others run above the join. So in `t JOIN k ON k.k = t.p WHERE
// pg_try_advisory_lock(t.b) AND t.p < 3` every row of t meets the lock call, matched by k or
// not. A table on the nullable side of a LEFT JOIN keeps its conditions above the join (the
// planner may make the join inner first; lockstep does not), and so does a condition with a
// subquery or naming no column.
#include <algorithm>
#include <map>
#include <set>

#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {
namespace {

// Whether `e` is NULL or false wherever every column of the relations `names` is NULL
// (find_nonnullable_rels): a WHERE condition so strict makes a LEFT JOIN to them an inner join.
bool sq_strict_for(const Expr& e, const std::set<std::string, std::less<>>& names) {
  using K = Expr::Kind;
  const auto any = [&] { return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return sq_strict_for(a, names); }); };
  switch (e.kind) {
    case K::column: return !e.qualifier.empty() && names.contains(e.qualifier);
    case K::op: return e.name != "is distinct from" && any();
    case K::like:
    case K::cast:
    case K::quantified:
    case K::subscript:
    case K::field: return any();
    case K::in_list:
    case K::between: return sq_strict_for(e.args.at(0), names);
    case K::and_: return any();
    case K::or_: return !e.args.empty() && std::all_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return sq_strict_for(a, names); });
    case K::not_: return sq_strict_for(e.args.at(0), names);
    case K::is_null: return e.negated && sq_strict_for(e.args.at(0), names);
    case K::bool_test: return (e.name == "IS TRUE" || e.name == "IS FALSE" || e.name == "IS NOT UNKNOWN") && sq_strict_for(e.args.at(0), names);
    case K::func: {
      static const std::set<std::string_view> lenient = {"concat", "concat_ws", "format", "nullif", "greatest", "least", "jsonb_build_object",
                                                         "json_build_object", "jsonb_build_array", "json_build_array", "array_append",
                                                         "array_prepend", "array_cat", "num_nulls", "num_nonnulls", "count"};
      return !lenient.contains(e.name) && sql::find_function(e.name) != nullptr && any();
    }
    default: return false;
  }
}

void sq_names(const sql::FromItem& f, std::set<std::string, std::less<>>& into) {
  if (f.kind == sql::FromItem::Kind::join) {
    for (const sql::FromItem& side : f.sides) sq_names(side, into);
  } else {
    into.insert(sql::from_item_name(f));
  }
}

// The table leaves of a FROM whose rows an inner join keeps: not a LEFT JOIN's right side,
// unless a WHERE condition strict for it makes the join inner (`reduced`; reduce_outer_joins).
void sq_inner_leaves(const sql::FromItem& f, bool nullable, std::vector<const sql::FromItem*>& into, const std::vector<const Expr*>& where = {},
                     std::set<const sql::FromItem*>* reduced = nullptr) {
  if (f.kind == sql::FromItem::Kind::join) {
    bool left = f.left;
    if (left && !nullable && reduced != nullptr) {
      std::set<std::string, std::less<>> names;
      sq_names(f.sides.at(1), names);
      if (std::any_of(where.begin(), where.end(), [&](const Expr* q) { return sq_strict_for(*q, names); })) {
        reduced->insert(&f);
        left = false;
      }
    }
    sq_inner_leaves(f.sides.at(0), nullable, into, where, reduced);
    sq_inner_leaves(f.sides.at(1), nullable || left, into, where, reduced);
    return;
  }
  const bool view = f.table == "pg_locks" || f.table == "pg_stat_activity" || f.table == "pg_database";
  if (f.kind == sql::FromItem::Kind::table && !nullable && !view) into.push_back(&f);
}

bool sq_has_sublink(const Expr& e) {
  return sql::is_sublink(e) || std::any_of(e.args.begin(), e.args.end(), [](const Expr& a) { return sq_has_sublink(a); });
}

void sq_columns(const Expr& e, std::vector<const Expr*>& into) {
  if (e.kind == Expr::Kind::column) into.push_back(&e);
  for (const Expr& a : e.args) sq_columns(a, into);
}

// The leaf of `leaves` that FROM names `relation`, or nullptr.
const sql::FromItem* sq_leaf_named(const std::vector<const sql::FromItem*>& leaves, std::string_view relation) {
  const auto leaf = std::find_if(leaves.begin(), leaves.end(), [&](const sql::FromItem* f) { return sql::from_item_name(*f) == relation; });
  return leaf == leaves.end() ? nullptr : *leaf;
}

}  // namespace

std::vector<const Expr*> SqlRun::push_to_leaves(const sql::Select& sel, const SqlTable& jt, LeafQuals& into) {
  const auto ordered = [&](const Expr& clause) {
    const std::vector<const Expr*>* order = server_.qual_order(clause);
    return order != nullptr ? *order : sql::qual_order(clause, {});
  };
  std::vector<const Expr*> where = sel.where ? ordered(*sel.where) : std::vector<const Expr*>{};
  if (sel.from.size() == 1 && sel.from[0].kind != sql::FromItem::Kind::join) return where;  // one relation: its scan runs them all
  std::vector<const sql::FromItem*> leaves;
  for (const sql::FromItem& f : sel.from) sq_inner_leaves(f, false, leaves, where, &into.reduced);
  const auto left_join = [&](const sql::FromItem& f) { return f.left && !into.reduced.contains(&f); };
  // The one leaf `q` reads, or nullptr (a subquery, no column, an outer query's, two leaves').
  const auto owner_of = [&](const Expr& q) -> const sql::FromItem* {
    std::vector<const Expr*> columns;
    sq_columns(q, columns);
    if (columns.empty() || sq_has_sublink(q)) return nullptr;
    const sql::FromItem* owner = nullptr;
    for (const Expr* ref : columns) {
      int at = -1;
      try {
        at = joined_column(jt, *ref);
      } catch (const SqlError&) {
        return nullptr;  // ambiguous: the executor's 42702, above the join
      }
      if (at < 0) return nullptr;
      const sql::FromItem* leaf = sq_leaf_named(leaves, joined_name(jt.def.columns[static_cast<std::size_t>(at)]).first);
      if (leaf == nullptr || (owner != nullptr && owner != leaf)) return nullptr;
      owner = leaf;
    }
    return owner;
  };
  // deconstruct_jointree's order: each inner join's ON conditions, lower joins first, then WHERE's.
  std::map<const sql::FromItem*, std::vector<const Expr*>> gathered;
  const auto joins = [&](const sql::FromItem& f, bool nullable, const auto& self) -> void {
    if (f.kind != sql::FromItem::Kind::join) return;
    self(f.sides.at(0), nullable, self);
    self(f.sides.at(1), nullable || left_join(f), self);
    if (nullable || left_join(f) || f.on.empty()) return;
    std::vector<const Expr*> rest;
    bool pushed = false;
    for (const Expr* c : ordered(f.on.front())) {
      const sql::FromItem* owner = owner_of(*c);
      if (owner == nullptr) rest.push_back(c);
      pushed = pushed || owner != nullptr;
    }
    if (!pushed) return;
    for (const Expr* c : sql::conjuncts(f.on.front())) {
      if (const sql::FromItem* owner = owner_of(*c)) gathered[owner].push_back(c);
    }
    into.on_rest.emplace(&f.on.front(), std::move(rest));
  };
  for (const sql::FromItem& f : sel.from) joins(f, false, joins);
  std::vector<const Expr*> rest;
  for (const Expr* q : where) {
    if (owner_of(*q) == nullptr) rest.push_back(q);
  }
  if (sel.where) {
    for (const Expr* q : sql::conjuncts(*sel.where)) {
      if (const sql::FromItem* owner = owner_of(*q)) gathered[owner].push_back(q);
    }
  }
  derive_equalities(sel, jt, leaves, gathered, into);
  // Each scan's conditions in order_qual_clauses' order, typed by the joined relation's columns.
  const sql::ColumnPrototypes types = [&](const Expr& ref) -> std::optional<Value> {
    const int at = joined_column(jt, ref);
    return at < 0 ? std::nullopt : sql::prototype_of(jt.def.columns[static_cast<std::size_t>(at)]);
  };
  for (auto& [leaf, quals] : gathered) into.at[leaf] = sql::qual_order(std::move(quals), {types, [this](const sql::Select& s) { return correlated(s); }});
  return rest;
}

// generate_base_implied_equalities: `k.k = t.p AND k.k = 1` puts t.p and k.k in one
// equivalence class with 1, so t's scan runs `t.p = 1` (and k's `k.k = 1`), after its others.
void SqlRun::derive_equalities(const sql::Select& sel, const SqlTable& jt, const std::vector<const sql::FromItem*>& leaves,
                               std::map<const sql::FromItem*, std::vector<const Expr*>>& gathered, LeafQuals& into) {
  std::vector<const Expr*> equalities;
  if (sel.where) equalities = sql::conjuncts(*sel.where);
  const auto ons = [&](const sql::FromItem& f, bool nullable, const auto& self) -> void {
    if (f.kind != sql::FromItem::Kind::join) return;
    const bool left = f.left && !into.reduced.contains(&f);
    self(f.sides.at(0), nullable, self);
    self(f.sides.at(1), nullable || left, self);
    if (!nullable && !left && !f.on.empty()) {
      for (const Expr* c : sql::conjuncts(f.on.front())) equalities.push_back(c);
    }
  };
  for (const sql::FromItem& f : sel.from) ons(f, false, ons);
  // A column of a leaf of the inner joins: its joined column's index, or -1.
  const auto member = [&](const Expr& e) -> int {
    if (e.kind != Expr::Kind::column) return -1;
    try {
      const int at = joined_column(jt, e);
      if (at < 0) return -1;
      return sq_leaf_named(leaves, joined_name(jt.def.columns[static_cast<std::size_t>(at)]).first) != nullptr ? at : -1;
    } catch (const SqlError&) {
      return -1;
    }
  };
  std::map<int, int> parent;  // union-find over joined columns
  const auto find = [&](int x) {
    while (parent.contains(x) && parent[x] != x) x = parent[x];
    return x;
  };
  std::map<int, const Expr*> constant;  // a class's constant
  std::set<int> pinned;                 // columns a written `column = constant` pins already
  for (const Expr* q : equalities) {
    if (q->kind != Expr::Kind::op || q->name != "=" || q->args.size() != 2) continue;
    const int a = member(q->args[0]);
    const int b = member(q->args[1]);
    const auto is_constant = [](const Expr& e) { return e.kind == Expr::Kind::constant || e.kind == Expr::Kind::param; };
    if (a >= 0 && b >= 0) {
      parent.try_emplace(a, a);
      parent.try_emplace(b, b);
      parent[find(a)] = find(b);
    } else if ((a >= 0 && is_constant(q->args[1])) || (b >= 0 && is_constant(q->args[0]))) {
      const int column = a >= 0 ? a : b;
      parent.try_emplace(column, column);
      pinned.insert(column);
      constant.try_emplace(column, a >= 0 ? &q->args[1] : &q->args[0]);
    }
  }
  std::map<int, const Expr*> class_constant;
  for (const auto& [column, value] : constant) class_constant.try_emplace(find(column), value);
  for (const auto& [column, up] : parent) {
    const auto value = class_constant.find(find(column));
    if (value == class_constant.end() || pinned.contains(column)) continue;
    const std::string_view relation = joined_name(jt.def.columns[static_cast<std::size_t>(column)]).first;
    const sql::FromItem* leaf = sq_leaf_named(leaves, relation);
    Expr& eq = into.derived.emplace_back();
    eq.kind = Expr::Kind::op;
    eq.name = "=";
    Expr ref;
    ref.kind = Expr::Kind::column;
    ref.name = std::string(joined_name(jt.def.columns[static_cast<std::size_t>(column)]).second);
    ref.qualifier = std::string(relation);
    eq.args = {std::move(ref), *value->second};
    gathered[leaf].push_back(&eq);
  }
}

void SqlRun::filter_leaf(const sql::FromItem& f, SqlTable& jt, std::vector<Row>& rows) {
  if (leaf_quals_ == nullptr) return;
  const auto quals = leaf_quals_->at.find(&f);
  if (quals == leaf_quals_->at.end()) return;
  if (const auto seen = leaf_quals_->rows.find(&f); seen != leaf_quals_->rows.end()) {
    rows = seen->second;  // an inner side read again for the next outer row: its scan ran once
    return;
  }
  const Saved saved = save();
  std::erase_if(rows, [&](Row& r) {
    table_ = &jt;
    alias_ = {};
    row_ = &r;
    return !std::all_of(quals->second.begin(), quals->second.end(), [&](const Expr* q) { return sql::is_true(sql::evaluate(*q, *this)); });
  });
  restore(saved);
  leaf_quals_->rows.emplace(&f, rows);
}

}  // namespace lockstep::sim::pg
