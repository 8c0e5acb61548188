// sim/pg/executor/sql_alter.cc: ALTER TABLE and DROP INDEX on the simulated server (sim/pg/executor/sql_run.h):
// DDL, outside the sessions and outside a transaction block, in one step that writes the
// whole server. Each command changes the table's definition and its rows' committed
// versions in turn (no transaction is open, so there are no others), checking them as the
// server does: NOT NULL and CHECK against the rows there, a unique key against repeats. A
// command lockstep cannot carry out on the rows there (a primary key or foreign key added to
// a table with rows, a key column dropped or retyped) is refused by name.
#include <algorithm>
#include <functional>
#include <set>

#include <fmt/ranges.h>

#include "lockstep/model/sql/eval.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {
namespace {

using sql::AlterCommand;
using sql::SqlError;

[[noreturn]] void alter_refuse(std::string_view what) {
  throw SqlError("0A000", fmt::format("{} is not in lockstep's SQL subset (docs/sql.md)", what));
}

void alter_columns_of(const sql::Expr& e, std::set<std::string>& out) {
  if (e.kind == sql::Expr::Kind::column) out.insert(e.name);
  for (const sql::Expr& a : e.args) alter_columns_of(a, out);
}

bool alter_has_rows(Server& server, const SqlTable& t) {
  bool any = false;
  server.each_row(t.def.table, [&](std::int64_t, RowState& r) { any = any || r.committed.has_value(); });
  return any;
}

// Whether column i is used by a key, a foreign key, a CHECK, a partial index's predicate or a
// generated column: dropping or retyping it is refused.
bool alter_column_used(Server& server, const SqlTable& t, int i) {
  const std::string& name = t.def.columns[static_cast<std::size_t>(i)].name;
  if (t.is_key_column(i)) return true;
  for (const SqlTable::ForeignKey& fk : t.foreign_keys) {
    if (std::find(fk.columns.begin(), fk.columns.end(), i) != fk.columns.end()) return true;
  }
  bool referenced = false;
  for (const auto& [child, index] : t.referenced_by) {
    const SqlTable* c = server.sql_table(child);
    const auto& pc = c->foreign_keys[index].parent_columns;
    referenced = referenced || std::find(pc.begin(), pc.end(), i) != pc.end();
  }
  if (referenced) return true;
  std::set<std::string> used;
  for (const sql::CheckConstraint& k : t.def.checks) alter_columns_of(*k.expr, used);
  for (const SqlTable::UniqueKey& u : t.unique) {
    if (std::find(u.columns.begin(), u.columns.end(), i) != u.columns.end()) return true;
    if (u.where) alter_columns_of(*u.where, used);
    for (const auto& e : u.expressions) {
      if (e) alter_columns_of(*e, used);
    }
  }
  for (const sql::ColumnDef& c : t.def.columns) {
    if (c.generated) alter_columns_of(*c.generated, used);
  }
  return used.count(name) != 0;
}

// The table's column numbers after column `dropped` goes.
void alter_renumber(Server& server, SqlTable& t, int dropped) {
  auto shift = [dropped](std::vector<int>& columns) {
    for (int& c : columns) c -= c > dropped ? 1 : 0;
  };
  shift(t.key);
  for (SqlTable::UniqueKey& u : t.unique) shift(u.columns);
  for (SqlTable::ForeignKey& fk : t.foreign_keys) shift(fk.columns);
  for (const auto& [child, index] : t.referenced_by) shift(server.sql_table(child)->foreign_keys[index].parent_columns);
}

std::string alter_check_name(const SqlTable& t, const sql::CheckConstraint& k) {
  if (!k.name.empty()) {
    for (const sql::CheckConstraint& other : t.def.checks) {
      if (other.name == k.name) throw SqlError("42710", fmt::format("constraint \"{}\" for relation \"{}\" already exists", k.name, t.def.table));
    }
    return k.name;
  }
  std::set<std::string> columns;
  alter_columns_of(*k.expr, columns);
  const std::string base = columns.size() == 1 ? fmt::format("{}_{}_check", t.def.table, *columns.begin()) : fmt::format("{}_check", t.def.table);
  std::string name = base;
  auto taken = [&](const std::string& n) {
    return std::any_of(t.def.checks.begin(), t.def.checks.end(), [&](const sql::CheckConstraint& c) { return c.name == n; });
  };
  for (int n = 1; taken(name); ++n) name = fmt::format("{}{}", base, n);
  return name;
}

}  // namespace

Result<Rows> SqlRun::statement(const sql::AlterTable& a) {
  using K = AlterCommand::Kind;
  if (!a.commands.empty() && (a.commands[0].kind == K::add_trigger || a.commands[0].kind == K::drop_trigger)) return trigger(a);
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  const char* tag = a.table.empty() ? "DROP INDEX" : "ALTER TABLE";
  if (a.table.empty() && a.commands.at(0).kind == K::alter_sequence) {
    // A serial column's sequence (<table>_<column>_seq) widened to bigint: its values are bound
    // by the column's type, which an ALTER COLUMN ... TYPE changes, so nothing changes here.
    // OWNED BY: a CREATE SEQUENCE's sequence is dropped with its table from then on.
    const AlterCommand& c = a.commands[0];
    if (auto* q = server_.sequence(c.constraint)) {
      const bool only_owner = std::ranges::none_of(a.commands, [](const AlterCommand& x) { return x.widen; });
      if (!only_owner) alter_refuse("ALTER SEQUENCE ... AS or MAXVALUE of a CREATE SEQUENCE's sequence");
      for (const AlterCommand& x : a.commands) {
        if (x.keys.empty()) continue;
        if (x.keys[0].empty()) {
          q->def.owned_by.clear();
          continue;
        }
        SqlTable* owner = server_.sql_table(x.keys[0]);
        if (owner == nullptr) return Error{"42P01", fmt::format("relation \"{}\" does not exist", x.keys[0])};
        if (std::ranges::none_of(owner->def.columns, [&](const sql::ColumnDef& d) { return d.name == x.keys[1]; })) {
          return Error{"42703", fmt::format("column \"{}\" of relation \"{}\" does not exist", x.keys[1], x.keys[0])};
        }
        q->def.owned_by = x.keys[0];
      }
      return done(Rows{{}, {}, "ALTER SEQUENCE"});
    }
    if (std::ranges::any_of(a.commands, [&](const AlterCommand& x) { return !x.keys.empty() && (x.keys[0].empty() || fmt::format("{}_{}_seq", x.keys[0], x.keys[1]) != c.constraint); })) {
      alter_refuse("ALTER SEQUENCE ... OWNED BY another column than a serial's own");
    }
    if (server_.serial_column_of(c.constraint).first == nullptr) {
      if (!c.missing_ok) return Error{"42P01", fmt::format("relation \"{}\" does not exist", c.constraint)};
      c_.warnings_.push_back({"00000", fmt::format("relation \"{}\" does not exist, skipping", c.constraint)});
    }
    return done(Rows{{}, {}, "ALTER SEQUENCE"});
  }
  if (a.table.empty() && a.commands.at(0).kind == K::rename_sequence) {
    const AlterCommand& c = a.commands[0];
    if (server_.sequence(c.constraint) != nullptr) {
      if (server_.sequence(c.name) != nullptr || server_.sql_table(c.name) != nullptr) {
        return Error{"42P07", fmt::format("relation \"{}\" already exists", c.name)};
      }
      server_.rename_sequence(c.constraint, c.name);
      return done(Rows{{}, {}, "ALTER SEQUENCE"});
    }
    alter_refuse("RENAME of a serial column's sequence");
  }
  if (a.table.empty() && a.commands.at(0).kind == K::rename_index) {
    const AlterCommand& c = a.commands[0];
    bool renamed = false;
    server_.each_sql_table_mutable([&](SqlTable& t) {
      for (SqlTable::PlainIndex& index : t.indexes) {
        if (index.name == c.constraint && !renamed) index.name = c.name, renamed = true;
      }
      for (SqlTable::UniqueKey& u : t.unique) {
        if (u.name == c.constraint && !renamed) u.name = c.name, renamed = true;
      }
      if (!renamed && !t.key.empty() && primary_key_name(&t, t.def.table) == c.constraint) {
        t.def.primary_key_name = c.name;
        renamed = true;
      }
    });
    if (!renamed) {
      if (!c.missing_ok) return Error{"42P01", fmt::format("relation \"{}\" does not exist", c.constraint)};
      c_.warnings_.push_back({"00000", fmt::format("relation \"{}\" does not exist, skipping", c.constraint)});
    }
    return done(Rows{{}, {}, "ALTER INDEX"});
  }
  if (a.table.empty()) {  // DROP INDEX
    for (const AlterCommand& c : a.commands) {
      bool found = false;
      server_.each_sql_table([&](const SqlTable& t) {
        found = found || t.has_index(c.constraint) ||
                std::any_of(t.unique.begin(), t.unique.end(), [&](const SqlTable::UniqueKey& u) { return u.name == c.constraint; }) ||
                (!t.key.empty() && primary_key_name(&t, t.def.table) == c.constraint);
      });
      if (!found) {
        if (!c.missing_ok) return Error{"42704", fmt::format("index \"{}\" does not exist", c.constraint)};
        c_.warnings_.push_back({"00000", fmt::format("index \"{}\" does not exist, skipping", c.constraint)});
        continue;
      }
      std::string owner;
      server_.each_sql_table([&](const SqlTable& t) {
        for (const SqlTable::UniqueKey& u : t.unique) {
          if (u.name == c.constraint && u.constraint) owner = t.def.table;
        }
        if (!t.key.empty() && primary_key_name(&t, t.def.table) == c.constraint) owner = t.def.table;
      });
      if (!owner.empty()) {
        return Error{"2BP01", fmt::format("cannot drop index {0} because constraint {0} on table {1} requires it", c.constraint, owner)};
      }
      server_.each_sql_table_mutable([&](SqlTable& t) {
        std::erase_if(t.indexes, [&](const SqlTable::PlainIndex& i) { return i.name == c.constraint; });
        std::erase_if(t.unique, [&](const SqlTable::UniqueKey& u) { return u.name == c.constraint; });
      });
    }
    return done(Rows{{}, {}, tag});
  }
  SqlTable* t = server_.sql_table(a.table);
  if (t == nullptr) {
    if (!a.if_exists) return Error{"42P01", fmt::format("relation \"{}\" does not exist", a.table)};
    c_.warnings_.push_back({"00000", fmt::format("relation \"{}\" does not exist, skipping", a.table)});
    return done(Rows{{}, {}, tag});
  }
  const std::string& table = t->def.table;
  for (const AlterCommand& c : a.commands) {
    const int i = t->column(c.name);
    auto column_must_exist = [&] {
      if (i < 0) throw SqlError("42703", fmt::format("column \"{}\" of relation \"{}\" does not exist", c.name, table));
    };
    switch (c.kind) {
      case K::no_effect: break;
      case K::add_column: {
        if (t->column(c.column.name) >= 0) {
          if (!c.missing_ok) return Error{"42701", fmt::format("column \"{}\" of relation \"{}\" already exists", c.column.name, table)};
          c_.warnings_.push_back({"42701", fmt::format("column \"{}\" of relation \"{}\" already exists, skipping", c.column.name, table)});
          break;
        }
        if (c.column.generated) alter_refuse("ADD COLUMN ... GENERATED ALWAYS AS");
        if (c.column.type == Type::enum_ && sql::enum_index(c.column.user_type) < 0) {
          return Error{"42704", fmt::format("type \"{}\" does not exist", c.column.user_type)};
        }
        t->def.columns.push_back(c.column);
        if (c.column.default_value) pin_sequence_names(*t->def.columns.back().default_value, server_);
        t->sequences.push_back({.last = c.column.sequence_start});
        const std::size_t n = t->def.columns.size() - 1;
        // Each row there gets the column's default, evaluated per row (a serial's nextval).
        server_.each_row(table, [&](std::int64_t, RowState& r) {
          if (!r.committed) return;
          const Value d = column_default(*t, n);
          if (d.is_null() && c.column.not_null) {
            throw SqlError("23502", fmt::format("column \"{}\" of relation \"{}\" contains null values", c.column.name, table));
          }
          const Value v = assigned(d, t->def.columns[n], table);
          if (v.is_null()) return;
          (*r.committed)[c.column.name] = v.text_output();
        });
        break;
      }
      case K::drop_column: {
        if (i < 0) {
          if (!c.missing_ok) column_must_exist();
          c_.warnings_.push_back({"00000", fmt::format("column \"{}\" of relation \"{}\" does not exist, skipping", c.name, table)});
          break;
        }
        if (alter_column_used(server_, *t, i)) alter_refuse("DROP COLUMN of a column a key, index, constraint or generated column uses");
        server_.each_row(table, [&](std::int64_t, RowState& r) {
          if (r.committed) r.committed->erase(c.name);
        });
        std::erase_if(t->indexes, [&](const SqlTable::PlainIndex& x) { return std::find(x.reads.begin(), x.reads.end(), c.name) != x.reads.end(); });
        t->def.columns.erase(t->def.columns.begin() + i);
        t->sequences.erase(t->sequences.begin() + i);
        alter_renumber(server_, *t, i);
        break;
      }
      case K::set_default:
        column_must_exist();
        t->def.columns[static_cast<std::size_t>(i)].default_value = c.column.default_value;
        if (c.column.default_value) pin_sequence_names(*t->def.columns[static_cast<std::size_t>(i)].default_value, server_);
        break;
      case K::set_not_null: {
        column_must_exist();
        sql::ColumnDef& col = t->def.columns[static_cast<std::size_t>(i)];
        if (!c.not_null) {
          if (std::find(t->key.begin(), t->key.end(), i) != t->key.end()) return Error{"42P16", fmt::format("column \"{}\" is in a primary key", c.name)};
          col.not_null = false;
          break;
        }
        server_.each_row(table, [&](std::int64_t, RowState& r) {
          if (r.committed && r.committed->count(c.name) == 0) {
            throw SqlError("23502", fmt::format("column \"{}\" of relation \"{}\" contains null values", c.name, table));
          }
        });
        col.not_null = true;
        break;
      }
      case K::alter_type: {
        column_must_exist();
        if (alter_column_used(server_, *t, i) && alter_has_rows(server_, *t)) {
          alter_refuse("ALTER COLUMN ... TYPE of a column a key, index, constraint or generated column uses, on a table with rows");
        }
        sql::ColumnDef col = t->def.columns[static_cast<std::size_t>(i)];
        col.type = c.column.type;
        col.user_type = c.column.user_type;
        col.element = c.column.element;
        col.bits = c.column.bits;
        col.max_length = c.column.max_length;
        col.numeric_precision = c.column.numeric_precision;
        col.numeric_scale = c.column.numeric_scale;
        col.time_precision = c.column.time_precision;
        server_.each_row(table, [&](std::int64_t, RowState& r) {
          if (!r.committed) return;
          StoredRowContext values(*t, *r.committed, "ALTER COLUMN ... USING");
          const Value old = c.using_expr ? sql::evaluate(*c.using_expr, values) : stored(*t, *r.committed, i);
          Value v;
          try {
            v = assigned(old, col, table);
          } catch (const SqlError& e) {
            if (e.sqlstate() != "42804") throw;
            throw SqlError("42804", fmt::format("column \"{}\" cannot be cast automatically to type {}", c.name, sql::type_name(col.type)));
          }
          if (v.is_null()) {
            r.committed->erase(c.name);
          } else {
            (*r.committed)[c.name] = v.text_output();
          }
        });
        t->def.columns[static_cast<std::size_t>(i)] = std::move(col);
        break;
      }
      case K::add_check: {
        sql::CheckConstraint k = c.check;
        k.name = alter_check_name(*t, k);
        check_columns(*k.expr, *t, "");
        if (c.validate) {
          server_.each_row(table, [&](std::int64_t, RowState& r) {
            if (!r.committed) return;
            try {
              SqlTable one = *t;
              one.def.checks = {k};
              check_constraints(one, *r.committed);
            } catch (const SqlError& e) {
              if (e.sqlstate() != "23514") throw;
              throw SqlError("23514", fmt::format("check constraint \"{}\" of relation \"{}\" is violated by some row", k.name, table));
            }
          });
        }
        t->def.checks.push_back(std::move(k));
        break;
      }
      case K::add_unique:
      case K::add_primary_key: {
        const bool primary = c.kind == K::add_primary_key;
        t->planner_stats = t->planner_stats || alter_has_rows(server_, *t);  // its index was built over rows
        std::vector<int> columns;
        for (const std::string& k : c.keys) {
          const int col = t->column(k);
          if (col < 0) return Error{"42703", fmt::format("column \"{}\" named in key does not exist", k)};
          columns.push_back(col);
        }
        if (primary) {
          if (!t->key.empty()) return Error{"42P16", fmt::format("multiple primary keys for table \"{}\" are not allowed", table)};
          if (alter_has_rows(server_, *t)) alter_refuse("ADD PRIMARY KEY to a table with rows");
          t->key = columns;
          t->def.primary_key = c.keys;
          t->def.primary_key_name = c.constraint;
          for (int col : columns) t->def.columns[static_cast<std::size_t>(col)].not_null = true;
          break;
        }
        SqlTable::UniqueKey key;
        key.columns = columns;
        key.name = c.constraint.empty() ? fmt::format("{}_{}_key", table, fmt::join(c.keys, "_")) : c.constraint;
        std::set<std::string> seen;
        bool repeated = false;
        server_.each_row(table, [&](std::int64_t, RowState& r) {
          if (!r.committed) return;
          if (const auto text = unique_text(key, *t, *r.committed)) repeated = repeated || !seen.insert(*text).second;
        });
        if (repeated) return Error{std::string(sqlstate::kUniqueViolation), fmt::format("could not create unique index \"{}\"", key.name)};
        t->unique.push_back(std::move(key));
        break;
      }
      case K::add_foreign_key: {
        const sql::ForeignKey& fk = c.foreign_key;
        SqlTable* parent = server_.sql_table(fk.parent);
        if (parent == nullptr) return Error{"42P01", fmt::format("relation \"{}\" does not exist", fk.parent)};
        SqlTable::ForeignKey k{fk.name, {}, fk.parent, {}, fk.restrict_delete, fk.restrict_update, fk.on_delete, fk.deferrable, fk.deferred};
        for (const std::string& col : fk.columns) {
          const int n = t->column(col);
          if (n < 0) return Error{"42703", fmt::format("column \"{}\" referenced in foreign key constraint does not exist", col)};
          k.columns.push_back(n);
        }
        if (fk.parent_columns.empty()) {
          k.parent_columns = parent->key;
        } else {
          for (const std::string& col : fk.parent_columns) {
            const int n = parent->column(col);
            if (n < 0) return Error{"42703", fmt::format("column \"{}\" referenced in foreign key constraint does not exist", col)};
            k.parent_columns.push_back(n);
          }
        }
        if (k.parent_columns.size() != k.columns.size()) {
          return Error{"42830", "number of referencing and referenced columns for foreign key disagree"};
        }
        if (fk.cascade_update && k.parent_columns != parent->key) alter_refuse("ON UPDATE CASCADE of a key other than the parent's primary key");
        if (c.validate) {  // every row there with its key columns set must find its parent row
          std::set<std::vector<std::string>> parents;
          server_.each_row(parent->def.table, [&](std::int64_t, RowState& r) {
            if (!r.committed) return;
            std::vector<std::string> values;
            for (int pc : k.parent_columns) values.push_back(stored(*parent, *r.committed, pc).text_output());
            parents.insert(std::move(values));
          });
          server_.each_row(table, [&](std::int64_t, RowState& r) {
            if (!r.committed) return;
            std::vector<std::string> values;
            for (int col : k.columns) {
              const Value v = stored(*t, *r.committed, col);
              if (v.is_null()) return;  // MATCH SIMPLE: a NULL key references nothing
              values.push_back(v.text_output());
            }
            if (parents.count(values) == 0) {
              throw SqlError("23503", fmt::format("insert or update on table \"{}\" violates foreign key constraint \"{}\"", table, k.name));
            }
          });
        }
        parent->referenced_by.emplace_back(table, t->foreign_keys.size());
        t->foreign_keys.push_back(std::move(k));
        break;
      }
      case K::drop_constraint: {
        const std::string& name = c.constraint;
        if (std::erase_if(t->def.checks, [&](const sql::CheckConstraint& k) { return k.name == name; }) > 0) break;
        if (std::erase_if(t->unique, [&](const SqlTable::UniqueKey& u) { return u.constraint && u.name == name; }) > 0) break;
        const auto fk = std::find_if(t->foreign_keys.begin(), t->foreign_keys.end(), [&](const SqlTable::ForeignKey& k) { return k.name == name; });
        if (fk != t->foreign_keys.end()) {
          server_.drop_foreign_key(table, static_cast<std::size_t>(fk - t->foreign_keys.begin()));
          break;
        }
        if (!t->key.empty() && primary_key_name(t, table) == name) alter_refuse("DROP CONSTRAINT of a primary key");
        if (!c.missing_ok) return Error{"42704", fmt::format("constraint \"{}\" of relation \"{}\" does not exist", name, table)};
        c_.warnings_.push_back({"00000", fmt::format("constraint \"{}\" of relation \"{}\" does not exist, skipping", name, table)});
        break;
      }
      case K::rename_table: {
        if (server_.sql_table(c.name) != nullptr || server_.sequence(c.name) != nullptr) {
          return Error{"42P07", fmt::format("relation \"{}\" already exists", c.name)};
        }
        if (server_.has_row_slots(table)) alter_refuse("RENAME of a table that has held rows");
        const std::string old_name = table;
        server_.rename_sql_table(old_name, c.name);
        return done(Rows{{}, {}, tag});  // one command: RENAME stands alone
      }
      case K::rename_column: {
        column_must_exist();
        if (t->column(c.constraint) >= 0) return Error{"42701", fmt::format("column \"{}\" of relation \"{}\" already exists", c.constraint, table)};
        const std::string& from = c.name;
        const std::string& to = c.constraint;
        std::function<void(sql::Expr&)> rename = [&](sql::Expr& e) {
          if (e.kind == sql::Expr::Kind::column && e.name == from && (e.qualifier.empty() || e.qualifier == table)) e.name = to;
          for (sql::Expr& arg : e.args) rename(arg);
        };
        auto renamed = [&](const std::shared_ptr<const sql::Expr>& e) -> std::shared_ptr<const sql::Expr> {
          if (!e) return e;
          auto copy = std::make_shared<sql::Expr>(*e);
          rename(*copy);
          return copy;
        };
        for (sql::CheckConstraint& k : t->def.checks) k.expr = renamed(k.expr);
        for (SqlTable::PlainIndex& x : t->indexes) {
          std::replace(x.columns.begin(), x.columns.end(), from, to);
          std::replace(x.reads.begin(), x.reads.end(), from, to);
        }
        for (SqlTable::UniqueKey& u : t->unique) {
          u.where = renamed(u.where);
          for (auto& e : u.expressions) e = renamed(e);
        }
        for (sql::ColumnDef& col : t->def.columns) col.generated = renamed(col.generated);
        for (std::string& k : t->def.primary_key) k = k == from ? to : k;
        for (auto& keys : t->def.unique) {
          for (std::string& k : keys) k = k == from ? to : k;
        }
        server_.each_row(table, [&](std::int64_t, RowState& r) {
          if (!r.committed) return;
          if (auto node = r.committed->extract(from)) {
            node.key() = to;
            r.committed->insert(std::move(node));
          }
        });
        for (sql::ForeignKey& fk : t->def.foreign_keys) {
          for (std::string& k : fk.columns) k = k == from ? to : k;
        }
        server_.each_sql_table_mutable([&](SqlTable& other) {
          for (sql::ForeignKey& fk : other.def.foreign_keys) {
            if (fk.parent != table) continue;
            for (std::string& k : fk.parent_columns) k = k == from ? to : k;
          }
        });
        t->def.columns[static_cast<std::size_t>(i)].name = to;
        t->checked.clear();  // statements checked against the old names are checked again
        t->pins.clear();
        break;
      }
      case K::drop_index:
      case K::alter_sequence:
      case K::rename_index:
      case K::rename_sequence:
      case K::add_trigger:
      case K::drop_trigger: break;  // handled above
    }
  }
  return done(Rows{{}, {}, tag});
}

}  // namespace lockstep::sim::pg
