// model/systems/sql_spec.h: the `sql` system: a PostgreSQL isolation spec (model/sql/spec.h)
// run as a scenario. Each session is an actor with a connection of its own, running its
// setup, its steps in order and its teardown; a step that fails (a deadlock, a lock
// timeout, a unique violation) is not a verdict, the session goes on, as isolationtester
// does. The spec's setup runs before the sessions, on a connection of its own; its checks
// run after them, each a violation named by the check when it is not true (false, NULL or
// an error). A .spec file is read as a scenario of this system (load_scenario).
// Faults (`fault NAME` in the spec): backend_terminated and server_restart strike the
// sessions' connections only; the setup and the checks have a connection of their own
// (after a restart, a new one).

#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lockstep/model/sql/isolation_driver.h"
#include "lockstep/model/sql/spec.h"
#include "lockstep/model/system.h"

namespace lockstep::sql_spec {

SystemInfo system_info();

// The fact (an unordered observation) a session reports as it sends a step: its subject
// numbers the step among all the spec's steps, session by session, in the spec's order.
inline constexpr std::string_view kStepStarted = "step";
Event step_started(std::int64_t index);
// The names of the steps numbered `started` (step_started's subjects), in that order.
// InputError when a number is not one of the spec's.
std::vector<std::string> steps_in_order(const sql::Spec& spec, const std::vector<std::int64_t>& started);

// The scenario document of a spec file: system "sql", the spec's text in config.spec, its
// expect as the scenario's. Throws InputError as load_spec does.
nlohmann::json scenario_document(const std::string& path);

// The permutations to run: the spec's own, or else every interleaving of its sessions'
// steps that keeps each session's order (in isolationtester's order). InputError when there
// are more than kMaxInterleavings of them (each is a whole run).
inline constexpr std::uint64_t kMaxInterleavings = 10'000;
std::vector<std::vector<sql::PermutationStep>> permutations(const sql::Spec& spec);
// How many interleavings the spec's sessions' steps have (saturating at 2^64 - 1).
std::uint64_t interleaving_count(const sql::Spec& spec);

// One permutation run as isolationtester runs it (lockstep isolation): the spec's setup,
// each session's setup in turn, then the steps driven by model/sql/isolation_driver.h on
// their sessions' connections, in timed mode; a step still running 10 ms (virtual) after it
// was sent waits for a lock. The instance's final_state() is the
// permutation's output, byte for byte as isolationtester prints it (from "starting
// permutation:" on). REQUIRES: every step named exists (parse_spec checks permutations).
// With `with_checks`, the spec's checks run after the sessions' teardown and print a line
// each (checked_line), for confirm --force.
// A step waited for longer than `max_step_wait` (virtual) is canceled as isolationtester
// cancels it (model/sql/isolation_driver.h).
std::unique_ptr<System> permutation_system(const sql::Spec& spec, const std::vector<sql::PermutationStep>& steps,
                                           bool with_checks = false, std::chrono::seconds max_step_wait = sql::kMaxStepWait);

// A check's line in a permutation's output: `check "NAME": t` (or f, NULL, no row, or the
// error as "ERROR:  message"), the same on both servers.
std::string checked_line(const std::string& name, const pg::Result<pg::Rows>& result);

// A result as isolationtester prints it (libpq's PQprint, aligned, fields separated by |):
// nothing for a command without rows, else the header, dashes, the rows (a column whose
// values all look numeric right-aligned) and "(N rows)" with a blank line.
std::string printed_result(const pg::Rows& rows);

}  // namespace lockstep::sql_spec
