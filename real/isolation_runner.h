// real/isolation_runner.h: a PostgreSQL isolation spec's permutation run on a real server as
// isolationtester runs it, for `lockstep isolation --pg`.
//
// One connection per session plus a control connection. Each step is sent without waiting
// (PQsendQuery); a step still running after a 10 ms poll is asked about on the control
// connection, as isolationtester does (pg_isolation_test_session_is_blocked): when the
// server says the session waits for a lock, the step is shown "<waiting ...>" and the next
// one goes; a waiting step is shown "<... completed>" with its results once it finishes. The
// output, from "starting permutation:" on, is isolationtester's byte for byte (results as
// PQprint aligns them, errors as "ERROR:  message", notices prefixed with the session name):
// the text model/systems/sql_spec.h's simulation prints for the same permutation.
//
// Every run gets a schema of its own, first on every connection's search_path and dropped
// at the end, so runs never see each other's tables. A step that neither finishes nor waits
// for a lock within five minutes is canceled and reported (as isolationtester's
// max_step_wait).
#pragma once

#include <string>
#include <vector>

#include "lockstep/model/sql/spec.h"

namespace lockstep::real {

// The permutation's output. Throws InputError when the server cannot be reached or a setup
// or teardown block fails (the spec does not fit this server), naming the spec and the block.
std::string run_permutation_on_server(const ::lockstep::sql::Spec& spec, const std::vector<std::string>& steps, const std::string& conninfo);

}  // namespace lockstep::real
