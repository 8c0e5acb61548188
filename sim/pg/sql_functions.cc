// sim/pg/sql_functions.cc: LANGUAGE sql functions on the simulated server (sim/pg/sql_run.h):
// CREATE [OR REPLACE] FUNCTION and DROP FUNCTION (DDL: outside the sessions, in one step that
// writes the whole server). Their calls: model/sql/user_functions.h.
#include <algorithm>

#include <fmt/ranges.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/sim/pg/sql_run.h"

namespace lockstep::sim::pg {
namespace {
using sql::Type;
}  // namespace

Result<Rows> SqlRun::statement(const sql::CreateFunction& f) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  if (const sql::CreateFunction* old = server_.sql_function(f.name)) {
    auto types = [](const sql::CreateFunction& g) {
      std::vector<std::pair<Type, std::string>> out;
      for (const sql::FunctionParam& p : g.params) out.emplace_back(p.type.type, p.type.user_type);
      return out;
    };
    if (types(*old) != types(f)) {
      return Error{"0A000", fmt::format("a second function named {} (overloading) is not in lockstep's SQL subset", f.name)};
    }
    if (!f.replace) return Error{"42723", fmt::format("function \"{}\" already exists with same argument types", f.name)};
    if (old->returns.type != f.returns.type || old->returns.user_type != f.returns.user_type) {
      return Error{"42P13", "cannot change return type of existing function"};
    }
  }
  for (const sql::FunctionParam& p : f.params) {
    if (p.type.type == Type::enum_ && sql::enum_index(p.type.user_type) < 0) return Error{"42704", fmt::format("type \"{}\" does not exist", p.type.user_type)};
  }
  server_.add_sql_function(f);
  return done(Rows{{}, {}, "CREATE FUNCTION"});
}

Result<Rows> SqlRun::drop_functions(const sql::DropTable& d) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  for (const std::string& name : d.tables) {
    if (server_.sql_function(name) != nullptr) {
      server_.drop_sql_function(name);
      continue;
    }
    if (!d.if_exists) return Error{"42883", fmt::format("could not find a function named \"{}\"", name)};
    c_.warnings_.push_back({"00000", fmt::format("function {}() does not exist, skipping", name)});
  }
  return done(Rows{{}, {}, "DROP FUNCTION"});
}

}  // namespace lockstep::sim::pg
