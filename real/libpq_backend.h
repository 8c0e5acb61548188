// real/libpq_backend.h: model/pg.h over libpq, against a real PostgreSQL server.
//
// Every statement is parameterised (values never spliced into SQL; table and column names
// are quoted with PQescapeIdentifier); every error carries the server's SQLSTATE (08006
// when the connection is gone); WARNINGs are collected by a notice receiver for
// take_warnings(). Connections and results are RAII. LibpqPool has QueuePool semantics
// (pool_size kept, max_overflow more on demand, checkout waits up to the timeout and then
// fails with LS001, a return does ROLLBACK and keeps session locks) and is safe to use from
// many threads; it must outlive the connections it hands out.
//
// Connection settings come from libpq's usual sources: the conninfo string given (empty:
// the PG* environment variables). Messages never include a password.
//
// Rows: each table of model/pg.h is lockstep.<name> (id int8 primary key, data jsonb), the
// Row being the jsonb object with "id" in it, as the simulation returns it. A table is
// created (with the schema) the first time a statement names it, on a separate connection;
// drop_row_tables drops the schema between runs.
//
// The simulation-only PoolConfig field phantom_grant is ignored: a real server has Bug
// #17686 of its own. backend_terminated is acted on by the confirmation runs' Env
// (real/thread_env.h), through the hooks.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/model/pg.h"
#include "lockstep/model/pg_statements.h"

namespace lockstep::real {

// Called around every statement, on the thread that runs it: `before` just before it is
// sent (confirmation runs add their jitter there), `after` with the statement
// (model/pg_statements.h; nullopt for the harness's own, such as creating a row table) and
// its round-trip time.
struct StatementHooks {
  // `statement`: what is about to run: exec's SQL text, the statement's name
  // (model/pg_statements.h) for the typed operations and exec_prepared, "" for the
  // harness's own (creating a row table, setting the search_path) and for prepare.
  std::function<void(pg::Connection& c, std::string_view statement)> before;
  std::function<void(std::optional<pg::Stmt> op, Duration took)> after;
  // A statement, or the connect of a pool's new connection, failed with `error`.
  std::function<void(std::string_view op, const pg::Error& error)> failed;
  // Before a pool's checkout (false) and before a connection goes back to it (true, maybe
  // in a destructor): each a visible operation of the actor, as in the simulation.
  std::function<void(bool returning)> pool_op;
};

// Whether an error means the session or the server is gone (SQLSTATE class 08, connection
// exception; 57P01-57P03, admin or crash shutdown, cannot connect now), not a statement's
// own failure. lockstep's designs never end their own sessions on a real server, so in a
// confirm run this is always something outside the run.
bool connection_lost(const pg::Error& error);

// Thrown when the server a command works against fails it (lost, refused a statement the
// harness itself needs): what() names what was being done and the SQLSTATE, never the
// conninfo's password. The command line reports it as exit 2.
class ServerError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Opens one connection, starting with `settings` (real/startup_settings.h); the error (08006)
// when the server cannot be reached.
pg::Result<std::unique_ptr<pg::Connection>> connect(const std::string& conninfo, StatementHooks hooks = {},
                                                    const std::vector<std::pair<std::string, std::string>>& settings = {});

std::unique_ptr<pg::Pool> make_libpq_pool(const std::string& conninfo, const pg::PoolConfig& config, StatementHooks hooks = {});

// Shuts the connection's socket down, as a client that crashed or lost its network would:
// the server ends the session (rolling its transaction back) when it reads the end of the
// stream, and every later statement on `c` fails with 08006. REQUIRES: c is a connection of
// this backend.
void close_socket(pg::Connection& c);

// DROP SCHEMA lockstep CASCADE: every row table, for a fresh start.
pg::Status drop_row_tables(const std::string& conninfo);

// The conninfo with any password replaced by "***".
std::string redact_conninfo(const std::string& conninfo);

// Where a conninfo points, for messages: "host H, port P, database D, user U" (the parts it
// sets), "the PG* environment" for "", or "a conninfo libpq cannot parse". Never the
// conninfo itself: no password, no other option.
std::string describe_conninfo(const std::string& conninfo);

}  // namespace lockstep::real
