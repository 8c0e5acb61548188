// sim/pg/executor/sql_records.cc: row values in the simulated server's queries (model/sql/records.h):
// which table's row an expression is, read from the query text before any row is, so that a
// column of rows is typed and (x).* expands to the row's columns even when no row (or only a
// NULL one) comes, as PostgreSQL's parser types them.
#include <algorithm>

#include "lockstep/model/sql/records.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

const SqlTable* SqlRun::record_table_of(const Expr& e, const sql::Select& sel) {
  const auto named_in = [&](const sql::Select& sub) -> const SqlTable* {  // a column of sub's output named e.name
    const sql::Select& first = sub.set_op ? *sub.set_op->left : sub;
    for (const sql::Target& t : first.targets) {
      if (!t.star && !t.expand && t.name == e.name) return record_table_of(t.expr, first);
    }
    return nullptr;
  };
  if (e.kind == Expr::Kind::subquery && e.name == "ARRAY") return nullptr;  // an array, not a row
  if (e.kind == Expr::Kind::subquery && e.select != nullptr && e.select->targets.size() == 1) {
    const sql::Target& only = e.select->targets.front();
    return only.star || only.expand ? nullptr : record_table_of(only.expr, *e.select);
  }
  if (e.kind != Expr::Kind::column || !e.qualifier.empty()) return nullptr;
  if (!sel.table.empty()) {
    const SqlTable* t = table(sel.table);
    if (whole_row_reference(*t, sel.alias, e)) return t;
    const Derived* d = derived(sel.table);
    return d != nullptr && d->def != nullptr && d->def->select != nullptr ? named_in(*d->def->select) : nullptr;
  }
  for (const sql::FromItem& f : sel.from) {
    if (f.kind == sql::FromItem::Kind::subquery && f.select != nullptr) {
      if (const SqlTable* t = named_in(*f.select)) return t;
    }
    if (f.kind == sql::FromItem::Kind::table) {
      const Derived* d = derived(f.table);
      if (d != nullptr && d->def != nullptr && d->def->select != nullptr) {
        if (const SqlTable* t = named_in(*d->def->select)) return t;
      }
    }
  }
  return nullptr;
}

std::optional<sql::ColumnDef> SqlRun::static_column(const Expr& e, const sql::Select& sel) {
  if (e.kind == Expr::Kind::field) {
    const SqlTable* t = record_table_of(e.args.at(0), sel);
    const int i = t == nullptr ? -1 : t->column(e.name);
    if (i < 0) return std::nullopt;
    const sql::ColumnDef& c = t->def.columns[static_cast<std::size_t>(i)];
    return sql::ColumnDef{.name = c.name, .type = c.type, .user_type = c.user_type, .element = c.element};
  }
  const SqlTable* t = record_table_of(e, sel);
  if (t == nullptr) return std::nullopt;
  return sql::ColumnDef{.type = Type::record, .user_type = t->def.table};
}

const std::vector<sql::Target>& SqlRun::targets_of(const sql::Select& sel) {
  if (std::none_of(sel.targets.begin(), sel.targets.end(), [](const sql::Target& t) { return t.expand; })) return sel.targets;
  const auto [it, fresh] = expanded_targets_.try_emplace(&sel);
  if (!fresh) return it->second;
  for (const sql::Target& target : sel.targets) {
    if (!target.expand) {
      it->second.push_back(target);
      continue;
    }
    const SqlTable* t = record_table_of(target.expr, sel);
    if (t == nullptr) {
      expanded_targets_.erase(it);
      throw SqlError("0A000", "(x).* of a value other than a table's whole row is not in lockstep's SQL subset (docs/sql.md)");
    }
    for (const sql::ColumnDef& c : t->def.columns) {
      sql::Target field;
      field.name = c.name;
      field.expr.kind = Expr::Kind::field;
      field.expr.name = c.name;
      field.expr.location = target.expr.location;
      field.expr.args.push_back(target.expr);
      it->second.push_back(std::move(field));
    }
  }
  return it->second;
}

// A whole-row reference to a subquery, VALUES or function relation of a FROM (`SELECT
// row_to_json(t) FROM (SELECT ...) t`, Que's notify triggers): a record of an anonymous row type
// of its columns; NULL for the NULL side of an outer join. Another name is missing_column's
// error (a table's whole row beside another relation is refused there). Without a row: only
// the check.
Value SqlRun::derived_whole_row(const SqlTable& t, std::string_view alias, const Row* row, const Expr& ref) const {
  const bool derived = t.joined && ref.kind == Expr::Kind::column && ref.qualifier.empty() &&
                       std::find(t.derived.begin(), t.derived.end(), ref.name) != t.derived.end();
  if (!derived) missing_column(t, alias, ref);
  std::vector<sql::ColumnDef> columns;
  std::vector<std::optional<std::string>> fields;
  for (const sql::ColumnDef& c : t.def.columns) {
    const auto [relation, name] = joined_name(c);
    if (relation != ref.name) continue;
    if (std::any_of(columns.begin(), columns.end(), [&](const sql::ColumnDef& d) { return d.name == name; })) {
      throw SqlError("0A000", fmt::format("a whole-row reference to {}, which has two columns named {}, is not in lockstep's SQL subset (docs/sql.md)", ref.name, name));
    }
    // A column of no type (only NULLs, or no row yet) is text, as an untyped literal's.
    columns.push_back(sql::ColumnDef{.name = std::string(name), .type = c.type == Type::unknown ? Type::text : c.type, .user_type = c.user_type,
                                     .element = c.element});
    if (row == nullptr) continue;
    const auto it = row->find(c.name);
    fields.push_back(it == row->end() ? std::nullopt : std::optional<std::string>(it->second));
  }
  const int type = server_.anonymous_row_type(columns);
  return row != nullptr && row->contains(joined_row_id(ref.name)) ? Value::record(type, sql::record_output(fields)) : Value::null_record(type);
}

const Expr& SqlRun::order_expr(const Expr& e, const sql::Select& sel) {
  if (e.kind != Expr::Kind::constant || e.folded || !sql::is_integer(e.value.type())) return e;
  const std::int64_t n = e.value.as_integer();
  const auto beyond = [&] { return SqlError("42P10", fmt::format("ORDER BY position {} is not in select list", n)); };
  if (std::none_of(sel.targets.begin(), sel.targets.end(), [](const sql::Target& t) { return t.star; })) {
    if (n < 1 || n > static_cast<std::int64_t>(sel.targets.size())) throw beyond();
    return sel.targets[static_cast<std::size_t>(n) - 1].expr;
  }
  const auto [it, fresh] = star_positions_.try_emplace({&sel, n});
  if (!fresh) return it->second;
  std::int64_t at = 0;
  for (const sql::Target& t : sel.targets) {
    if (!t.star && ++at == n) return it->second = t.expr;
    if (!t.star) continue;
    std::vector<std::pair<std::string, std::string>> columns;  // the relation's name and the column's
    if (!sel.table.empty()) {
      for (const sql::ColumnDef& c : table(sel.table)->def.columns) columns.emplace_back(sel.alias.empty() ? sel.table : sel.alias, c.name);
    } else if (!sel.from.empty()) {
      for (const sql::ColumnDef& c : from_relation(sel)->def.columns) {
        const auto [relation, column] = joined_name(c);
        if (t.star_of.empty() || relation == t.star_of) columns.emplace_back(relation, column);
      }
    }
    for (auto& [relation, column] : columns) {
      if (++at != n) continue;
      it->second.kind = Expr::Kind::column;
      it->second.qualifier = std::move(relation);
      it->second.name = std::move(column);
      return it->second;
    }
  }
  star_positions_.erase(it);
  throw beyond();
}

}  // namespace lockstep::sim::pg
