// sim/pg/sql_ddl.cc: the DDL of the simulated server (sim/pg/sql_run.h): CREATE / DROP TABLE,
// CREATE / DROP TYPE (enums), CREATE / DROP SCHEMA and CREATE INDEX, each outside the sessions
// and outside a transaction block, in one step that writes the whole server.
#include <set>

#include <fmt/ranges.h>

#include "lockstep/sim/pg/sql_run.h"

namespace lockstep::sim::pg {

std::optional<Error> SqlRun::ddl_step() {
  if (s_.in_actor()) {
    return Error{"0A000",
                 "DDL while the sessions run is not in lockstep's SQL subset: create and drop tables in the setup (docs/sql.md)"};
  }
  if (c_.session_.in_transaction) {
    return Error{"0A000", "DDL inside a transaction block is not in lockstep's SQL subset (docs/sql.md)"};
  }
  return begin("sql_ddl", SimConnection::whole_server(Access::write));
}

Result<Rows> SqlRun::statement(const sql::CreateTable& ct) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  if (server_.sql_table(ct.table) != nullptr) {
    if (ct.if_not_exists) return done(Rows{{}, {}, "CREATE TABLE"});
    return Error{"42P07", fmt::format("relation \"{}\" already exists", ct.table)};
  }
  for (const auto& col : ct.columns) {
    // A default is evaluated at each insert; here only checked to be one the subset reads.
    if (col.default_value && col.default_value->kind == Expr::Kind::column) {
      return Error{"0A000", "cannot use column reference in DEFAULT expression"};
    }
  }
  if (auto bad = check_foreign_keys(ct)) return *bad;
  for (const auto& col : ct.columns) {
    if (col.type == Type::enum_ && sql::enum_index(col.user_type) < 0) return Error{"42704", fmt::format("type \"{}\" does not exist", col.user_type)};
  }
  server_.add_sql_table(ct);
  return done(Rows{{}, {}, "CREATE TABLE"});
}

Result<Rows> SqlRun::statement(const sql::CreateType& t) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  if (sql::enum_index(t.name) >= 0 || sql::type_of_name(t.name)) return Error{"42710", fmt::format("type \"{}\" already exists", t.name)};
  server_.mutable_enum_types().push_back(sql::EnumType{t.name, t.labels});
  return done(Rows{{}, {}, "CREATE TYPE"});
}

Result<Rows> SqlRun::drop_types(const sql::DropTable& d) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  for (const std::string& name : d.tables) {
    const int index = sql::enum_index(name);
    if (index < 0) {
      if (!d.if_exists) return Error{"42704", fmt::format("type \"{}\" does not exist", name)};
      c_.warnings_.push_back({"00000", fmt::format("type \"{}\" does not exist, skipping", name)});
      continue;
    }
    bool used = false;
    server_.each_sql_table([&](const SqlTable& t) {
      for (const auto& col : t.def.columns) used = used || (col.type == Type::enum_ && col.user_type == name);
    });
    if (used) return Error{"2BP01", fmt::format("cannot drop type {} because other objects depend on it", name)};
    server_.mutable_enum_types()[static_cast<std::size_t>(index)].name.clear();  // its index stays taken
  }
  return done(Rows{{}, {}, "DROP TYPE"});
}

Result<Rows> SqlRun::statement(const sql::DropTable& d) {
  if (d.types) return drop_types(d);
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  for (const std::string& name : d.tables) {
    const SqlTable* t = server_.sql_table(name);
    if (t == nullptr) {
      if (d.if_exists) continue;
      return Error{"42P01", fmt::format("table \"{}\" does not exist", name)};
    }
    // A table another table's foreign key references goes only with that table.
    for (const auto& [child, k] : t->referenced_by) {
      if (std::find(d.tables.begin(), d.tables.end(), child) == d.tables.end()) {
        return Error{"2BP01", fmt::format("cannot drop table {} because other objects depend on it", name)};
      }
    }
  }
  for (const std::string& name : d.tables) {
    if (server_.sql_table(name) != nullptr) server_.drop_sql_table(name);
  }
  return done(Rows{{}, {}, "DROP TABLE"});
}

Result<Rows> SqlRun::statement(const sql::Schema& s) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  Rows out;
  out.tag = s.create ? "CREATE SCHEMA" : "DROP SCHEMA";
  if (s.create && !server_.add_schema(s.name)) {
    if (!s.if_clause) return Error{"42P06", fmt::format("schema \"{}\" already exists", s.name)};
    c_.warnings_.push_back({"42P06", fmt::format("schema \"{}\" already exists, skipping", s.name)});
  }
  if (!s.create && !server_.drop_schema(s.name)) {
    if (!s.if_clause) return Error{"3F000", fmt::format("schema \"{}\" does not exist", s.name)};
    c_.warnings_.push_back({"00000", fmt::format("schema \"{}\" does not exist, skipping", s.name)});
  }
  return done(std::move(out));
}

Result<Rows> SqlRun::statement(const sql::CreateIndex& ix) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  SqlTable* t = table(ix.table);
  SqlTable::UniqueKey key;
  for (const std::string& col : ix.columns) {
    const int i = t->column(col);
    if (i < 0) return Error{"42703", fmt::format("column \"{}\" does not exist", col)};
    key.columns.push_back(i);
  }
  if (ix.unique && ix.columns != t->def.primary_key) {
    key.name = ix.name;
    if (key.name.empty()) key.name = fmt::format("{}_{}_idx", t->def.table, fmt::join(ix.columns, "_"));
    // The rows there already must not repeat a key (the setup has no transactions running).
    std::set<std::string> seen;
    bool repeated = false;
    server_.each_row(t->def.table, [&](std::int64_t, RowState& r) {
      if (r.committed) {
        if (const auto text = unique_text(key, *t, *r.committed)) repeated = repeated || !seen.insert(*text).second;
      }
    });
    if (repeated) return Error{std::string(sqlstate::kUniqueViolation), fmt::format("could not create unique index \"{}\"", key.name)};
    t->unique.push_back(std::move(key));
  }
  return done(Rows{{}, {}, "CREATE INDEX"});
}

}  // namespace lockstep::sim::pg
