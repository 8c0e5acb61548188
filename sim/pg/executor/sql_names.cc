// sim/pg/executor/sql_names.cc: qualified column references checked as parse analysis does
// (sim/pg/executor/sql_names.h).
#include "lockstep/sim/pg/executor/sql_names.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/type_check.h"
#include "lockstep/sim/pg/executor/sql_schemas.h"
#include "lockstep/sim/pg/heap/sql_rows.h"
#include "lockstep/sim/pg/server/sim_pg.h"

namespace lockstep::sim::pg {
namespace {

using Columns = std::optional<std::vector<std::string>>;  // nullopt: not known before rows

struct Relation {
  std::string name;
  Columns columns;
  const SqlTable* table = nullptr;  // a table's: its columns' types are known (type_check.h)
  // A WITH query's or FROM subquery's: its outputs' types where its targets tell them, read for
  // the conditions' costs only (model/sql/qual_cost.h).
  std::vector<std::optional<sql::Value>> output_types = {};
};

class QualifiedNames {
 public:
  QualifiedNames(Server& server, const RecordOf& record_of, bool check_types, const std::function<bool(const sql::Select&)>& correlated)
      : server_(server), record_of_(record_of), check_types_(check_types), correlated_(correlated) {}

  sql::QualOrders orders;  // each boolean clause's conditions, in the order the executor runs them

  void statement(const sql::Statement& st) {
    std::visit([&](const auto& body) { this->body(body); }, st.body);
  }

 private:
  template <typename Other>
  void body(const Other&) {}  // DDL, transactions, settings: no column references to check

  void body(const sql::Select& sel) { select(sel); }

  void body(const sql::Insert& ins) {
    const std::size_t ctes = with(ins.with);
    if (ins.select) select(*ins.select);
    ctes_.resize(ctes);
  }

  void body(const sql::Update& u) { modify(u.with, u.table, u.alias, u.from, u.from_alias, u.from_join.get(), [&] {
    for (const sql::Assignment& a : u.set) {
      if (!a.to_default) assignment(u.table, a);
    }
    if (u.where) root(*u.where, "WHERE");
    for (const sql::Target& t : u.returning) target(t);
  }); }

  void body(const sql::Delete& d) { modify(d.with, d.table, d.alias, d.from, d.from_alias, d.from_join.get(), [&] {
    if (d.where) root(*d.where, "WHERE");
    for (const sql::Target& t : d.returning) target(t);
  }); }

  template <typename Walk>
  void modify(const std::vector<sql::CommonTable>& w, const std::string& table, const std::string& alias, const std::string& from,
              const std::string& from_alias, const sql::Select* join, Walk walk) {
    const std::size_t ctes = with(w);
    std::vector<Relation> scope{{alias.empty() ? table : alias, table_columns(table), typed_table(table)}};
    if (!from.empty()) scope.push_back({from_alias.empty() ? from : from_alias, table_columns(from), typed_table(from)});
    std::vector<const sql::Expr*> conditions;  // a joined FROM's ON conditions
    if (join != nullptr) {
      for (const sql::FromItem& f : join->from) from_item(f, scope, conditions);
    }
    scopes_.push_back(std::move(scope));
    const std::size_t outer = std::exchange(modify_depth_, from.empty() && join == nullptr ? 0 : scopes_.size());
    for (const sql::Expr* on : conditions) root(*on, "JOIN/ON");
    walk();
    modify_depth_ = outer;
    scopes_.pop_back();
    ctes_.resize(ctes);
  }

  // WITH's queries become relations FROM can name (a recursive one also inside itself); a
  // data-modifying one's RETURNING columns are left to the executor. Returns the depth to
  // restore.
  std::size_t with(const std::vector<sql::CommonTable>& w) {
    // Each sees the ones before it, and itself only when it is recursive (a recursive one's
    // columns are its first term's, named before its second term reads them).
    const std::size_t depth = ctes_.size();
    if (w.empty()) return depth;
    ctes_.emplace_back();
    for (const sql::CommonTable& cte : w) {
      Columns columns = cte.select ? output_names(*cte.select) : std::nullopt;
      rename(columns, cte.column_names);
      if (cte.recursive) ctes_.back().push_back({cte.name, std::move(columns)});
      last_output_types_.clear();
      if (cte.select) select(*cte.select);
      if (!cte.recursive) ctes_.back().push_back({cte.name, std::move(columns), nullptr, std::move(last_output_types_)});
    }
    return depth;
  }

  static void rename(Columns& columns, const std::vector<std::string>& aliases) {
    if (!columns || aliases.empty()) return;
    if (aliases.size() > columns->size()) {
      columns.reset();  // the executor's error (42P10) is the one to give
      return;
    }
    std::copy(aliases.begin(), aliases.end(), columns->begin());
  }

  Columns table_columns(const std::string& name) const {
    if (const Relation* r = cte(name)) return r->columns;
    const SqlTable* t = server_.sql_table(name);
    if (t == nullptr) return std::nullopt;  // a sequence read as a relation, or 42P01 when run
    std::vector<std::string> out;
    for (const sql::ColumnDef& c : t->def.columns) out.push_back(c.name);
    for (const char* system : {"tableoid", "ctid", "xmin", "xmax", "cmin", "cmax"}) out.emplace_back(system);
    return out;
  }

  // A query's output column names, when its targets give them all.
  Columns output_names(const sql::Select& sel) const {
    if (sel.set_op) return output_names(*sel.set_op->left);
    std::vector<std::string> out;
    for (const sql::Target& t : sel.targets) {
      if (t.expand) {  // (x).*: the fields of the table whose row x is
        const SqlTable* record = plain_tables(sel) ? record_of(t.expr, sel) : nullptr;
        if (record == nullptr) return std::nullopt;
        for (const sql::ColumnDef& c : record->def.columns) out.push_back(c.name);
        continue;
      }
      if (!t.star) {
        out.push_back(t.name);
        continue;
      }
      if (!t.star_of.empty() || sel.table.empty()) return std::nullopt;
      Columns all = table_columns(sel.table);
      if (!all) return std::nullopt;
      for (const std::string& c : *all) {
        if (c != "tableoid" && c != "ctid" && c != "xmin" && c != "xmax" && c != "cmin" && c != "cmax") out.push_back(c);
      }
    }
    return out;
  }

  // Whether every relation sel (and the FROM subqueries in it) names is a table of the server:
  // record_of_ then reads the catalog only (a WITH query is not declared yet, a sequence's
  // relation is made when its statement reads it).
  bool plain_tables(const sql::Select& sel) const {
    const auto plain = [&](const std::string& name) { return cte(name) == nullptr && server_.sql_table(name) != nullptr; };
    if (!sel.table.empty() && !plain(sel.table)) return false;
    const auto item = [&](const sql::FromItem& f, const auto& self) -> bool {
      if (f.kind == sql::FromItem::Kind::table && !plain(f.table)) return false;
      if (f.select && !plain_tables(*f.select)) return false;
      return std::all_of(f.sides.begin(), f.sides.end(), [&](const sql::FromItem& s) { return self(s, self); });
    };
    return std::all_of(sel.from.begin(), sel.from.end(), [&](const sql::FromItem& f) { return item(f, item); });
  }

  const SqlTable* record_of(const sql::Expr& e, const sql::Select& sel) const {
    try {
      return record_of_(e, sel);
    } catch (const sql::SqlError&) {
      return nullptr;  // the executor raises it where the server does
    }
  }

  const Relation* cte(const std::string& name) const {
    for (auto level = ctes_.rbegin(); level != ctes_.rend(); ++level) {
      for (const Relation& r : *level) {
        if (r.name == name) return &r;
      }
    }
    return nullptr;
  }

  void select(const sql::Select& sel) {
    const std::size_t ctes = with(sel.with);
    if (sel.set_op) {
      select(*sel.set_op->left);
      select(*sel.set_op->right);
      ctes_.resize(ctes);
      last_output_types_.clear();
      return;
    }
    std::vector<Relation> scope;
    if (!sel.table.empty()) {
      const Relation* named = cte(sel.table);
      scope.push_back({sel.alias.empty() ? sel.table : sel.alias, table_columns(sel.table), typed_table(sel.table), named ? named->output_types : std::vector<std::optional<sql::Value>>{}});
    }
    std::vector<const sql::Expr*> conditions;
    for (const sql::FromItem& f : sel.from) from_item(f, scope, conditions);
    for (const std::string& name : sel.group_by_output_names) {
      // An input column of that name wins (findTargetlistEntrySQL92): not the reader's choice.
      for (const Relation& r : scope) {
        if (r.columns && std::find(r.columns->begin(), r.columns->end(), name) == r.columns->end()) continue;
        throw sql::SqlError("0A000", fmt::format("GROUP BY {} naming an output column beside the FROM item {}{} is not in lockstep's SQL "
                                                 "subset (docs/sql.md)",
                                                 name, r.name, r.columns ? " that has a column of that name" : " whose columns are known when it runs"));
      }
    }
    scopes_.push_back(std::move(scope));
    for (const sql::Expr* on : conditions) root(*on, "JOIN/ON");
    for (const sql::Target& t : sel.targets) target(t);
    std::vector<std::optional<sql::Value>> outputs = output_types(sel);
    if (sel.where) root(*sel.where, "WHERE");
    if (sel.having) root(*sel.having, "HAVING");
    output_names_ = true;  // these may name an output column
    for (const sql::Expr& g : sel.group_by) root(g);
    for (const sql::Expr& d : sel.distinct_on) root(d);
    for (const sql::OrderItem& o : sel.order_by) root(o.expr);
    output_names_ = false;
    if (sel.limit) root(*sel.limit);
    if (sel.offset) root(*sel.offset);
    scopes_.pop_back();
    ctes_.resize(ctes);
    last_output_types_ = std::move(outputs);
  }

  // The types of sel's outputs (in the scope of its FROM), where its targets are plain: empty
  // where one is not known (a set operation, t.*, (x).*).
  std::vector<std::optional<sql::Value>> output_types(const sql::Select& sel) const {
    std::vector<std::optional<sql::Value>> out;
    if (!check_types_) return out;
    for (const sql::Target& t : sel.targets) {
      if (t.expand || (t.star && (!t.star_of.empty() || sel.table.empty() || cte(sel.table) != nullptr))) return {};
      if (t.star) {
        const SqlTable* table = server_.sql_table(sel.table);
        if (table == nullptr) return {};
        for (const sql::ColumnDef& c : table->def.columns) out.push_back(sql::prototype_of(c));
        continue;
      }
      try {
        out.push_back(sql::check_types(t.expr, prototypes_));
      } catch (const sql::SqlError&) {
        out.emplace_back();
      }
    }
    return out;
  }

  void from_item(const sql::FromItem& f, std::vector<Relation>& scope, std::vector<const sql::Expr*>& conditions) {
    using K = sql::FromItem::Kind;
    Columns columns;
    const SqlTable* table = nullptr;
    std::vector<std::optional<sql::Value>> outputs;
    switch (f.kind) {
      case K::table:
        columns = table_columns(f.table);
        table = typed_table(f.table);
        if (const Relation* named = cte(f.table)) outputs = named->output_types;
        break;
      case K::subquery:
        if (f.lateral) scopes_.push_back(scope);  // it sees the items before it
        last_output_types_.clear();
        select(*f.select);
        if (f.lateral) scopes_.pop_back();
        columns = output_names(*f.select);
        outputs = std::move(last_output_types_);
        break;
      case K::values: {
        std::vector<std::string> names;
        for (std::size_t i = 0; !f.values.empty() && i < f.values.front().size(); ++i) names.push_back(fmt::format("column{}", i + 1));
        columns = std::move(names);
        break;
      }
      case K::function:
        break;  // its columns come from the function (left to the executor)
      case K::join: {
        const std::size_t before = scope.size();
        for (const sql::FromItem& side : f.sides) from_item(side, scope, conditions);
        if (f.using_columns.empty()) {  // USING's comparisons: the executor words their errors
          for (const sql::Expr& on : f.on) conditions.push_back(&on);
        }
        if (!f.alias.empty()) {  // (a JOIN b) AS j hides a and b
          scope.resize(before);
          scope.push_back({f.alias, std::nullopt});
        }
        return;
      }
    }
    if (!f.column_aliases.empty()) table = nullptr;
    rename(columns, f.column_aliases);
    scope.push_back({from_item_name(f), std::move(columns), table, std::move(outputs)});
  }

  void target(const sql::Target& t) {
    if (!t.star) root(t.expr);
  }

  // A clause's expression: its names, then its types (`boolean_clause`: it must be boolean).
  void root(const sql::Expr& e, std::string_view boolean_clause = {}) {
    expr(e);
    if (check_types_) sql::check_types(e, prototypes_, boolean_clause);
    const sql::Expr* quals = &e;  // `(a AND b) OR false`: the planner's a AND b
    while (quals->kind == sql::Expr::Kind::or_ && std::count_if(quals->args.begin(), quals->args.end(), [](const sql::Expr& a) { return !is_false(a); }) == 1) {
      quals = &*std::find_if(quals->args.begin(), quals->args.end(), [](const sql::Expr& a) { return !is_false(a); });
    }
    if (!boolean_clause.empty() && quals->kind == sql::Expr::Kind::and_) {
      orders.emplace_back(quals, sql::qual_order(*quals, {check_types_ ? cost_prototypes_ : sql::ColumnPrototypes{}, correlated_}));
    }
  }

  // SET c = value: its value's types, then the assignment's (an untyped literal read as the
  // column's type; a value of a type with no assignment cast to it).
  void assignment(const std::string& table, const sql::Assignment& a) {
    expr(a.value);
    if (!check_types_) return;
    const std::optional<sql::Value> v = sql::check_types(a.value, prototypes_);
    const SqlTable* t = server_.sql_table(table);
    if (!v || v->is_null() || t == nullptr) return;
    for (const sql::ColumnDef& c : t->def.columns) {
      if (c.name != a.column) continue;
      try {
        assigned(*v, c, table, false);
      } catch (const sql::SqlError& err) {
        if (err.sqlstate() == "42804" || (v->type() == sql::Type::unknown && sql::is_parse_time_error(err, a.value))) throw;
      }
    }
  }

  // A table whose columns' types the checks may read (not a WITH query of that name).
  const SqlTable* typed_table(const std::string& name) const { return cte(name) != nullptr ? nullptr : server_.sql_table(name); }

  // The prototype of the column `ref` names, where the scopes say which one it is: a
  // qualified name's relation, or the one relation of the innermost scope that has a column
  // of that name (none there: the next scope out), where every relation's columns are known.
  // A bare name no relation in scope has, nor names, is the parser's 42703.
  std::optional<sql::Value> prototype(const sql::Expr& ref) const {
    bool all_known = ref.qualifier.empty() && !output_names_;
    for (const auto& scope : scopes_) {
      for (const Relation& r : scope) all_known = all_known && r.columns && r.name != ref.name;
    }
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      const Relation* hit = nullptr;
      for (const Relation& r : *scope) {
        if (!ref.qualifier.empty()) {
          if (r.name == ref.qualifier) return typed_column(r, ref.name);
          continue;
        }
        if (!r.columns) return std::nullopt;  // it may have that column
        if (std::find(r.columns->begin(), r.columns->end(), ref.name) == r.columns->end()) continue;
        if (hit != nullptr) return std::nullopt;  // ambiguous: the executor's 42702
        hit = &r;
      }
      if (hit != nullptr) return typed_column(*hit, ref.name);
    }
    if (all_known && !scopes_.empty()) throw sql::missing_column_error(ref);
    return std::nullopt;
  }

  static bool is_false(const sql::Expr& e) {
    return e.kind == sql::Expr::Kind::constant && e.value.type() == sql::Type::boolean && !e.value.is_null() && !e.value.as_bool();
  }

  std::optional<sql::Value> typed_column(const Relation& r, const std::string& name) const {
    if (r.table == nullptr) {
      if (!for_costs_ || !r.columns || r.output_types.size() != r.columns->size()) return std::nullopt;
      const auto at = std::find(r.columns->begin(), r.columns->end(), name);
      return at == r.columns->end() ? std::nullopt : r.output_types[static_cast<std::size_t>(at - r.columns->begin())];
    }
    for (const sql::ColumnDef& c : r.table->def.columns) {
      if (c.name == name) return sql::prototype_of(c);
    }
    return std::nullopt;  // a system column
  }

  void expr(const sql::Expr& e) {
    if (e.kind == sql::Expr::Kind::column && !e.qualifier.empty()) {
      column(e);
      return;
    }
    if (e.kind == sql::Expr::Kind::column && modify_depth_ != 0 && scopes_.size() == modify_depth_) {
      // UPDATE ... FROM, DELETE ... USING: a bare name both relations have is ambiguous.
      const auto has = [&](const Relation& r) { return r.columns && std::find(r.columns->begin(), r.columns->end(), e.name) != r.columns->end(); };
      if (std::count_if(scopes_.back().begin(), scopes_.back().end(), has) > 1) {
        throw sql::SqlError("42702", fmt::format("column reference \"{}\" is ambiguous", e.name));
      }
    }
    if (sql::is_sublink(e) && e.select) select(*e.select);
    if (e.kind == sql::Expr::Kind::window && e.select) {
      for (const sql::OrderItem& o : e.select->order_by) expr(o.expr);
    }
    for (const sql::Expr& a : e.args) expr(a);
  }

  void column(const sql::Expr& ref) const {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      for (const Relation& r : *scope) {
        if (r.name != ref.qualifier) continue;
        if (!ref.schema.empty() && r.table != nullptr && (r.table->def.table != r.name || schema_of(r.table->def) != ref.schema)) {
          throw unresolved_qualifier(ref, true);
        }
        if (r.columns && std::find(r.columns->begin(), r.columns->end(), ref.name) == r.columns->end()) {
          throw sql::missing_column_error(ref);
        }
        return;  // the innermost relation of that name is the one it reads
      }
    }
    for (const auto& scope : scopes_) {  // a table of that name under an alias: hidden by it
      for (const Relation& r : scope) {
        if (meant_by(ref, r.table, r.name, server_)) throw unresolved_qualifier(ref, true);
      }
    }
  }

  Server& server_;
  const RecordOf& record_of_;
  const bool check_types_;
  const std::function<bool(const sql::Select&)>& correlated_;
  bool output_names_ = false;  // in GROUP BY, DISTINCT ON, ORDER BY: a bare name may be an output column
  const sql::ColumnPrototypes prototypes_ = [this](const sql::Expr& ref) { return prototype(ref); };
  // For costs: also the outputs of WITH queries and FROM subqueries (never an error).
  bool for_costs_ = false;
  const sql::ColumnPrototypes cost_prototypes_ = [this](const sql::Expr& ref) -> std::optional<sql::Value> {
    const bool was = std::exchange(for_costs_, true);
    std::optional<sql::Value> v;
    try {
      v = prototype(ref);
    } catch (const sql::SqlError&) {
    }
    for_costs_ = was;
    return v;
  };
  std::vector<std::optional<sql::Value>> last_output_types_;  // the last select()'s (output_types)
  std::vector<std::vector<Relation>> ctes_;    // WITH queries in scope, the innermost level last
  std::vector<std::vector<Relation>> scopes_;  // FROM's relations per query level, the innermost last
  std::size_t modify_depth_ = 0;  // an UPDATE ... FROM's or DELETE ... USING's level in scopes_ (0: none)
};

// The tables a statement names, WITH queries' names left out (each_table_named).
class TablesNamed {
 public:
  explicit TablesNamed(const std::function<void(const std::string&, bool)>& fn) : fn_(fn) {}

  void statement(const sql::Statement& st) {
    std::visit([&](const auto& body) { this->body(body); }, st.body);
  }

 private:
  template <typename Other>
  void body(const Other&) {}
  void body(const sql::Select& sel) { select(sel); }
  void body(const sql::Insert& ins) {
    const std::size_t depth = with(ins.with);
    table(ins.table);
    for (const auto& row : ins.rows) {
      for (const auto& value : row) {
        if (value) expr(*value);
      }
    }
    if (ins.select) select(*ins.select);
    for (const sql::Assignment& a : ins.conflict_set) expr(a.value);
    if (ins.conflict_where) expr(*ins.conflict_where);
    for (const sql::Target& t : ins.returning) expr(t.expr);
    ctes_.resize(depth);
  }
  void body(const sql::Update& u) {
    const std::size_t depth = with(u.with);
    table(u.table);
    if (!u.from.empty()) table(u.from);
    if (u.from_join) select(*u.from_join);
    for (const sql::Assignment& a : u.set) expr(a.value);
    if (u.where) expr(*u.where);
    for (const sql::Target& t : u.returning) expr(t.expr);
    ctes_.resize(depth);
  }
  void body(const sql::Delete& d) {
    const std::size_t depth = with(d.with);
    table(d.table);
    if (!d.from.empty()) table(d.from);
    if (d.from_join) select(*d.from_join);
    if (d.where) expr(*d.where);
    for (const sql::Target& t : d.returning) expr(t.expr);
    ctes_.resize(depth);
  }

  std::size_t with(const std::vector<sql::CommonTable>& w) {
    const std::size_t depth = ctes_.size();
    for (const sql::CommonTable& cte : w) {  // each sees those before it, itself when recursive
      if (cte.recursive) ctes_.push_back(cte.name);
      if (cte.select) select(*cte.select);
      if (cte.modifying) statement(*cte.modifying);
      if (!cte.recursive) ctes_.push_back(cte.name);
    }
    return depth;
  }

  // `alias`: what the query calls it (a table of a query's own FROM, whose locking clause
  // may name it: then it is opened with RowShareLock).
  void table(const std::string& name, const std::string* alias = nullptr) {
    if (std::find(ctes_.begin(), ctes_.end(), name) != ctes_.end()) return;
    bool locked = alias != nullptr && query_ != nullptr && query_->lock != sql::RowLock::none;
    if (locked && !query_->lock_of.empty()) {
      const std::string& called = alias->empty() ? name : *alias;
      locked = std::find(query_->lock_of.begin(), query_->lock_of.end(), called) != query_->lock_of.end();
    }
    fn_(name, locked);
  }

  void select(const sql::Select& sel) {
    const std::size_t depth = with(sel.with);
    if (sel.set_op) {
      select(*sel.set_op->left);
      select(*sel.set_op->right);
    }
    const sql::Select* outer = std::exchange(query_, &sel);
    if (!sel.table.empty()) table(sel.table, &sel.alias);
    for (const sql::FromItem& f : sel.from) from_item(f);
    query_ = outer;
    for (const sql::Target& t : sel.targets) expr(t.expr);
    if (sel.where) expr(*sel.where);
    for (const sql::Expr& g : sel.group_by) expr(g);
    if (sel.having) expr(*sel.having);
    for (const sql::OrderItem& o : sel.order_by) expr(o.expr);
    for (const sql::Expr& d : sel.distinct_on) expr(d);
    if (sel.limit) expr(*sel.limit);
    if (sel.offset) expr(*sel.offset);
    ctes_.resize(depth);
  }

  void from_item(const sql::FromItem& f) {
    if (f.kind == sql::FromItem::Kind::table) table(f.table, &f.alias);
    if (f.select) select(*f.select);
    for (const sql::Expr& call : f.function) expr(call);
    for (const sql::FromItem& side : f.sides) from_item(side);
    for (const sql::Expr& on : f.on) expr(on);
  }

  void expr(const sql::Expr& e) {
    if (sql::is_sublink(e) && e.select) select(*e.select);
    for (const sql::Expr& a : e.args) expr(a);
  }

  const std::function<void(const std::string&, bool)>& fn_;
  std::vector<std::string> ctes_;  // WITH queries' names in scope
  const sql::Select* query_ = nullptr;  // the query whose FROM is being read
};

}  // namespace

sql::SqlError unresolved_qualifier(const sql::Expr& ref, bool table_in_scope) {
  return sql::SqlError("42P01", fmt::format("{} FROM-clause entry for table \"{}\"", table_in_scope ? "invalid reference to" : "missing",
                                            ref.qualifier));
}

bool meant_by(const sql::Expr& ref, const SqlTable* t, std::string_view shown, Server& server) {
  if (shown == ref.qualifier) return true;
  if (t == nullptr || t->def.table != ref.qualifier) return false;
  return ref.schema.empty() ? on_search_path(schema_of(t->def), server) : schema_of(t->def) == ref.schema;
}

void each_table_named(const sql::Statement& st, const std::function<void(const std::string&, bool)>& fn) { TablesNamed(fn).statement(st); }

void each_table_named(const sql::Statement& st, const std::function<void(const std::string&)>& fn) {
  each_table_named(st, std::function<void(const std::string&, bool)>([&](const std::string& name, bool) { fn(name); }));
}

sql::QualOrders check_qualified_columns(const sql::Statement& st, Server& server, const RecordOf& record_of, bool check_types,
                                        const std::function<bool(const sql::Select&)>& correlated) {
  // The parser reads the FROM clauses first: a relation that does not exist is its 42P01,
  // which the executor gives.
  bool all_exist = true;
  each_table_named(st, [&](const std::string& name) {
    all_exist = all_exist && (server.sql_table(name) != nullptr || server.sequence(name) != nullptr || server.serial_column_of(name).first != nullptr);
  });
  if (!all_exist) return {};
  QualifiedNames names(server, record_of, check_types, correlated);
  names.statement(st);
  return std::move(names.orders);
}

}  // namespace lockstep::sim::pg
