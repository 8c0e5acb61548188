// sim/pg/executor/sql_schemas.h: names found through search_path, as PostgreSQL's namespace.c
// finds them. A table is known by its own name in the simulated server (model/sql/plan.h's
// Schema); what a schema changes is whether a name finds it: a name without a schema finds
// a table of a schema on the session's search_path, schema.name the table of that schema only.
//
// Guarantees: unresolved_relation gives the server's 42P01 for the first relation a SELECT,
// INSERT, UPDATE, DELETE or LOCK TABLE names that search_path (or its schema) does not find;
// names of no table (a WITH query, a sequence, a system view) are left to the executor.
// Types (enums, composite types) are found likewise (42704, 3F000), as the statement runs.
// creation_schema gives the schema a CREATE puts an object in, or throws the server's 3F000.
// SearchPathOfCall restores the session's search_path however the call ends.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/plan.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sim::pg {

class Server;

// The schema a table is in (one lockstep's typed API made: public).
inline std::string_view schema_of(const sql::CreateTable& def) { return def.schema.empty() ? std::string_view("public") : std::string_view(def.schema); }

// Whether `schema` is one of the running session's search_path the server has.
bool on_search_path(std::string_view schema, Server& server);

// The 42P01 ("relation \"t\" does not exist", "relation \"s.t\" does not exist") of a relation
// st names that the running session's search_path does not find, or nullopt. `absent_too`: also
// of a name of no table, sequence or WITH query (a LANGUAGE sql body checked as it is created).
// (Or of the first type it names that is not found so: 42704, or 3F000 for a schema the server lacks.)
std::optional<sql::SqlError> unresolved_relation(const sql::Statement& st, Server& server, bool absent_too = false);

// The 42P01 of a sequence of schema `own` that `schema.name` (schema "" as written: through
// search_path) does not find, or nullopt.
std::optional<sql::SqlError> unresolved_sequence(std::string_view schema, std::string_view name, std::string_view own, Server& server);

// The schema `written` (a CREATE's "schema" or "") names: it, or the first schema of
// search_path the server has; throws SqlError 3F000 for a schema the server lacks or none.
std::string creation_schema(std::string_view written, Server& server);

// set_config('search_path', value, ...)'s value, as the session's path takes it; throws SqlError
// 0A000 for one not written as SHOW prints one (lower-case names joined by ", ").
const std::string& search_path_value(const std::string& value);

// A plpgsql function's SET search_path (model/sql/plan.h's CreateFunction::search_path) on the
// session's settings while the call runs.
class SearchPathOfCall {
 public:
  SearchPathOfCall(sql::SessionStyle& style, const std::optional<std::string>& path) : style_(style) {
    if (path) saved_ = std::exchange(style_.search_path, *path);
  }
  ~SearchPathOfCall() {
    if (saved_) style_.search_path = std::move(*saved_);
  }
  SearchPathOfCall(const SearchPathOfCall&) = delete;
  SearchPathOfCall& operator=(const SearchPathOfCall&) = delete;

 private:
  sql::SessionStyle& style_;
  std::optional<std::string> saved_;
};

}  // namespace lockstep::sim::pg
