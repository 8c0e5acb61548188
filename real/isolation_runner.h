// real/isolation_runner.h: a PostgreSQL isolation spec's permutation run on a real server as
// isolationtester runs it, for `lockstep isolation --pg`.
//
// One connection per session plus a control connection; model/sql/isolation_driver.h drives
// the steps. Each step is sent without waiting (PQsendQuery); a step still running after a
// 10 ms poll is asked about on the control connection, as isolationtester does
// (pg_isolation_test_session_is_blocked). The output, from "starting permutation:" on, is
// isolationtester's byte for byte (results as PQprint aligns them, errors as "ERROR:  message",
// notices prefixed with the session name, NOTIFYs named by their sender): the text
// model/systems/sql_spec.h's simulation prints for the same permutation. The spec's SQL is
// sent as written: read it with SqlText::as_written to run what lockstep's subset lacks.
//
// Every run gets a schema of its own, first on every connection's search_path and dropped
// at the end, so runs never see each other's tables; on a server lockstep started for the
// command (--pg auto) it runs in `public` instead, as pg_regress's database has it (a spec's
// `public.t` and current_schema() are the simulation's), and `public` is emptied after. A step that neither finishes nor waits
// for a lock within five minutes is canceled and reported (as isolationtester's
// max_step_wait).
#pragma once

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockstep/model/sql/isolation_driver.h"
#include "lockstep/model/sql/spec.h"

namespace lockstep::real {

// The permutation's output. Throws InputError when the server cannot be reached or a setup
// or teardown block fails (the spec does not fit this server), naming the spec and the block.
// A step waited for (its session's next step is due) still running `max_step_wait` after the
// wait began is canceled, as isolationtester's max_step_wait (300 s) does, and the cancel printed.
// With `with_checks`, the spec's checks run after the sessions' teardown (on the control
// connection) and follow, a line each (sql_spec::checked_line).
// `stop` is asked while a step is awaited (every 10 ms): when it says yes (Ctrl-C, SIGTERM),
// the run ends at once with PermutationInterrupted, its connections closed.
// `private_server`: no other client uses the server (--pg auto): the run is in `public`.
std::string run_permutation_on_server(const ::lockstep::sql::Spec& spec, const std::vector<::lockstep::sql::PermutationStep>& steps,
                                      const std::string& conninfo, std::chrono::seconds max_step_wait = ::lockstep::sql::kMaxStepWait,
                                      bool with_checks = false, std::function<bool()> stop = {}, bool private_server = false);

// A permutation stopped by its `stop` hook before it finished.
struct PermutationInterrupted : std::runtime_error {
  PermutationInterrupted() : std::runtime_error("the permutation was interrupted") {}
};

}  // namespace lockstep::real
