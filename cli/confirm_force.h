// cli/confirm_force.h: `lockstep confirm SCENARIO.spec --force TRACE`: a trace the simulation
// found in a SQL scenario, replayed on a real server in the trace's order, step by step.
//
// The steps are taken in the order they began in the trace (each session reports a step as
// it sends it: sql_spec::step_started), then run as one isolation permutation: on the
// server as isolationtester runs it (a step that waits for a lock is shown waiting and the
// next one is sent; it is waited for), and on the simulation by the same driver; after the
// sessions' teardown, the spec's checks. The verdict: "seen on the server" when the server's
// checks fail as the trace's did (or all hold, for a passing trace), else the first step
// whose outcome (rows, error, or waiting) differs. Forcing works at the grain of
// statements: a trace whose outcome hangs on an order inside one statement is said to be so.
#pragma once

#include <ostream>
#include <string>

#include "lockstep/cli/pg_server.h"
#include "lockstep/model/scenario.h"

namespace lockstep::cli {

// 0: the server agrees with the trace; 1: it does not (the first difference is printed);
// InputError (exit 2) for a trace of another scenario, of a system other than sql, or one
// that ends a session by the backend_terminated fault (not forced: confirm injects it).
// `pg` is --pg's value (a conninfo, or auto): the server starts once the trace is read.
int run_forced_replay(const std::string& trace_path, const Scenario& scenario, const std::string& pg, std::ostream& out);

}  // namespace lockstep::cli
