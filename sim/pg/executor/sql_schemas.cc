// sim/pg/executor/sql_schemas.cc: names found through search_path (sim/pg/executor/sql_schemas.h).
#include "lockstep/sim/pg/executor/sql_schemas.h"

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "lockstep/sim/pg/executor/sql_names.h"
#include "lockstep/sim/pg/heap/sql_rows.h"
#include "lockstep/sim/pg/server/sim_pg.h"

namespace lockstep::sim::pg {

bool on_search_path(std::string_view schema, Server& server) {
  if (schema == "public" && server.style().search_path == sql::kDefaultSearchPath) return server.has_schema("public");
  const std::vector<std::string> path = sql::path_schemas(server.style().search_path, &server);
  return std::find(path.begin(), path.end(), schema) != path.end();
}

namespace {

// The 42P01 of a relation named `schema.name` ("": a bare name), as the statement wrote it.
sql::SqlError missing_relation(std::string_view schema, std::string_view name) {
  return sql::SqlError("42P01", fmt::format("relation \"{}{}{}\" does not exist", schema, schema.empty() ? "" : ".", name));
}

std::optional<sql::SqlError> unresolved_type(const sql::Statement& st, Server& server) {
  const std::vector<sql::EnumType>& declared = *server.enum_types();
  for (const auto& [schema, name] : st.types) {
    const auto t = std::find_if(declared.begin(), declared.end(), [&](const sql::EnumType& e) { return e.name == name; });
    if (t == declared.end() || schema == "pg_catalog") continue;  // no such type: the executor's 42704
    if (!schema.empty() && schema != t->schema && !server.has_schema(schema)) return sql::SqlError("3F000", fmt::format("schema \"{}\" does not exist", schema));
    if (schema.empty() ? !on_search_path(t->schema, server) : schema != t->schema) {
      return sql::SqlError("42704", fmt::format("type \"{}{}{}\" does not exist", schema, schema.empty() ? "" : ".", name));
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<sql::SqlError> unresolved_relation(const sql::Statement& st, Server& server, bool absent_too) {
  if (auto type = unresolved_type(st, server)) return type;
  const bool lock = std::holds_alternative<sql::LockTables>(st.body);
  if (st.relations.empty() || !(lock || std::holds_alternative<sql::Select>(st.body) || std::holds_alternative<sql::Insert>(st.body) ||
                                std::holds_alternative<sql::Update>(st.body) || std::holds_alternative<sql::Delete>(st.body))) {
    return std::nullopt;
  }
  std::optional<std::set<std::string, std::less<>>> tables;  // the names that are no WITH query's
  const auto named = [&](const std::string& name) {  // a table's name, not a WITH query's
    if (!tables && !lock) {
      tables.emplace();
      each_table_named(st, [&](const std::string& n) { tables->insert(n); });
    }
    return lock || tables->contains(name);
  };
  for (const auto& [schema, name] : st.relations) {
    const SqlTable* t = server.sql_table(name);
    if (t == nullptr && server.view(name) != nullptr && named(name)) {  // one not read in place: a write's target, a function body's
      return sql::SqlError("0A000", fmt::format("the view {} here (lockstep reads a view in a statement's FROM, written in the statement itself, "
                                                "and writes none) is not in lockstep's SQL subset (docs/sql.md)", name));
    }
    if (t == nullptr && absent_too && server.sequence(name) == nullptr && server.serial_column_of(name).first == nullptr && named(name)) {
      return missing_relation(schema, name);
    }
    // A qualified name no table has: 42P01 naming it as written (an unqualified one fails as the scan opens it).
    if (t == nullptr && !schema.empty() && server.sequence(name) == nullptr && server.serial_column_of(name).first == nullptr && named(name)) {
      return missing_relation(schema, name);
    }
    if (t == nullptr || schema == "pg_catalog") continue;
    const std::string_view own = schema_of(t->def);
    if (!schema.empty()) {
      if (schema != own) return missing_relation(schema, name);
      continue;
    }
    if (on_search_path(own, server)) continue;
    if (named(name)) return missing_relation("", name);
  }
  return std::nullopt;
}

std::optional<sql::SqlError> unresolved_sequence(std::string_view schema, std::string_view name, std::string_view own, Server& server) {
  if (schema.empty() ? on_search_path(own, server) : schema == own) return std::nullopt;
  return missing_relation(schema, name);
}

std::string creation_schema(std::string_view written, Server& server) {
  if (!written.empty()) {
    if (!server.has_schema(written)) throw sql::SqlError("3F000", fmt::format("schema \"{}\" does not exist", written));
    return std::string(written);
  }
  std::vector<std::string> path = sql::path_schemas(server.style().search_path, &server);
  if (path.empty()) throw sql::SqlError("3F000", "no schema has been selected to create in");
  return std::move(path.front());
}

const std::string& search_path_value(const std::string& value) {
  bool shown = !value.empty();  // names (lower case, or "$user") joined by ", "
  for (std::size_t at = 0; shown && at <= value.size();) {
    const std::size_t end = std::min(value.find(", ", at), value.size());
    const std::string_view name = std::string_view(value).substr(at, end - at);
    shown = name == "\"$user\"" || (!name.empty() && std::isdigit(static_cast<unsigned char>(name[0])) == 0 &&
                                    std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::islower(c) != 0 || std::isdigit(c) != 0 || c == '_'; }));
    at = end + 2;
  }
  if (!shown) throw sql::SqlError("0A000", fmt::format("set_config('search_path', '{}', ...) of a value SHOW would print otherwise is not in lockstep's SQL subset (docs/sql.md)", value));
  return value;
}

}  // namespace lockstep::sim::pg
