// real/startup_settings.h: a libpq connection that starts with settings (libpq's `options`,
// -c name=value, as pg_regress's PGTZ, PGDATESTYLE and PGOPTIONS give them): in effect from
// its start, and what RESET, RESET ALL and DISCARD ALL go back to, as on the simulated server
// (model/pg.h's PoolConfig::settings). Options the conninfo gives (else PGOPTIONS') are kept,
// before these.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <libpq-fe.h>

namespace lockstep::real {

// PQconnectdb(conninfo) with `settings` added to its options (never null; check PQstatus). A
// conninfo libpq cannot parse is connected as it is, to fail with libpq's message.
PGconn* connect_with_settings(const std::string& conninfo, const std::vector<std::pair<std::string, std::string>>& settings);

}  // namespace lockstep::real
