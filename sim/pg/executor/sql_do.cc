// sim/pg/executor/sql_do.cc: DO blocks (plan.h's DoBlock) on the simulated server, outside the
// sessions only (a spec's setup and teardown, a model's constructor), where no other statement
// runs beside them. Each statement of the body runs as the connection runs a text; an IF's
// condition, an EXECUTE's text and a RAISE's arguments are one-value queries (SELECT expr), as
// plpgsql evaluates them. A failing statement fails the DO with its error; what the statements
// before it did stays (the server rolls the block back): a setup that fails stops its run.
#include "lockstep/sim/pg/server/connection.h"
#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

namespace {

using lockstep::pg::Error;
using lockstep::pg::Result;
using lockstep::pg::Rows;

// A plpgsql expression's value as text (nullopt: NULL, also for no row), exec_eval_expr's way.
Result<std::optional<std::string>> do_value(SimConnection& c, const std::string& expression) {
  Result<Rows> r = c.exec("SELECT " + expression, {});
  if (!r.ok()) return r.error();
  const Rows& rows = r.value();
  if (rows.columns.size() != 1) return Error{"42601", fmt::format("query \"{}\" returned {} columns", expression, rows.columns.size())};
  if (rows.rows.size() > 1) return Error{"21000", fmt::format("query \"{}\" returned more than one row", expression)};
  if (rows.rows.empty()) return std::optional<std::string>();
  return rows.rows[0][0];
}

}  // namespace

Result<Rows> SqlRun::statement(const sql::DoBlock&) {
  // SimConnection::run_statements runs a DO itself; a WITH query cannot be one (the parser's).
  throw std::logic_error("a DO block reached SqlRun: SimConnection::run_do runs it");
}

Result<Rows> SimConnection::run_do(const sql::DoBlock& d) {
  if (s_.in_actor()) {
    return Error{"0A000", "DO in a session's step (lockstep runs DO blocks outside the sessions: a spec's setup or teardown) is not in "
                          "lockstep's SQL subset (docs/sql.md)"};
  }
  bool stopped = false;
  if (std::optional<Error> e = run_plpgsql(d.body, stopped)) return *e;
  return Rows{{}, {}, "DO"};
}

std::optional<Error> SimConnection::run_plpgsql(const std::vector<sql::PlStatement>& body, bool& stopped) {
  using K = sql::PlStatement::Kind;
  for (const sql::PlStatement& s : body) {
    switch (s.kind) {
      case K::sql:
      case K::perform: {
        if (Result<Rows> r = exec(s.text, {}); !r.ok()) return r.error();
        break;
      }
      case K::execute: {
        Result<std::optional<std::string>> text = do_value(*this, s.text);
        if (!text.ok()) return text.error();
        if (!text.value()) return Error{"22004", "query string argument of EXECUTE is null"};
        if (Result<Rows> r = exec(*text.value(), {}); !r.ok()) return r.error();
        break;
      }
      case K::branch:
        for (const sql::PlBranch& b : s.branches) {
          if (!b.condition.empty()) {
            Result<std::optional<std::string>> holds = do_value(*this, b.condition);
            if (!holds.ok()) return holds.error();
            const std::optional<std::string>& v = holds.value();
            if (v && *v != "t" && *v != "f") {
              return Error{"0A000", fmt::format("an IF condition that is not boolean ({}) in a DO block is not in lockstep's SQL subset (docs/sql.md)", b.condition)};
            }
            if (v != "t") continue;  // false or NULL: the next branch
          }
          if (std::optional<Error> e = run_plpgsql(b.body, stopped)) return e;
          break;
        }
        break;
      case K::raise: {
        std::optional<Error> failed;
        RaisedError raised;
        try {
          raised = raise_error(s, [&](const std::string& e) -> std::optional<std::string> {
            if (failed) return std::string();  // not NULL: the failure is returned below
            Result<std::optional<std::string>> v = do_value(*this, e);
            if (!v.ok()) failed = v.error();
            return v.ok() ? v.value() : std::string();
          });
        } catch (const SqlError& e) {
          if (!failed) failed = Error{e.sqlstate(), e.what()};
        }
        if (failed) return *failed;
        if (s.level >= 21) return Error{raised.sqlstate, raised.message};  // RAISE EXCEPTION (ERROR)
        if (s.level >= 17) warnings_.push_back({s.level == 19 ? "01000" : "00000", raised.message});  // LOG, DEBUG: the client gets none
        break;
      }
      case K::stop:
        stopped = true;
        break;
      case K::assign:  // a function's only (the reader refuses variables, loops and handlers in a DO block)
      case K::loop:
      case K::exit:
      case K::block:
      case K::diagnostics:
      case K::return_next:
      case K::return_query:
        throw std::logic_error("a plpgsql function's statement in a DO block");
    }
    if (stopped) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace lockstep::sim::pg
