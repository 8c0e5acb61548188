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
// The simulation-only PoolConfig fields (phantom_grant, backend_terminated) are ignored: a
// real server has Bug #17686 of its own. Under way (issue 5): not yet used by the command
// line, no thread-based Env yet.
#pragma once

#include <memory>
#include <string>

#include "model/pg.h"

namespace lockstep::real {

// Opens one connection; the error (08006) when the server cannot be reached.
pg::Result<std::unique_ptr<pg::Connection>> connect(const std::string& conninfo);

std::unique_ptr<pg::Pool> make_libpq_pool(const std::string& conninfo, const pg::PoolConfig& config);

// The conninfo with any password replaced by "***", for messages.
std::string redact_conninfo(const std::string& conninfo);

}  // namespace lockstep::real
