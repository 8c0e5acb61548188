// sim/isolation.h: one permutation of a PostgreSQL isolation spec on the simulated server, as
// `lockstep isolation` prints it (model/systems/sql_spec.h's permutation system, one
// execution in timed mode). The same permutation on a real server is
// real/isolation_runner.h; the two print the same text when the simulation is right.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "lockstep/model/sql/isolation_driver.h"
#include "lockstep/model/sql/spec.h"

namespace lockstep::sim {

// The permutation's output, from "starting permutation:" on. Throws InputError naming the
// spec and the permutation when it cannot finish (a step that waits for a later step of its
// own session: isolationtester's invalid permutation) or the model fails.
// With `with_checks`, the spec's checks follow, a line each (sql_spec::checked_line).
// A step waited for longer than `max_step_wait` (virtual) is canceled, as isolationtester does.
std::string run_isolation_permutation(const sql::Spec& spec, const std::vector<sql::PermutationStep>& steps,
                                      bool with_checks = false, std::chrono::seconds max_step_wait = sql::kMaxStepWait);

// The distinct outputs of the permutation over the simulation's schedules (backends woken
// together run in either order, as the server's race), from a search of at most
// `max_executions` executions (strategy "dpor" or "dfs"): what the server may print, for the
// differential property. Each output as run_isolation_permutation gives it.
std::vector<std::string> isolation_permutation_outputs(const sql::Spec& spec, const std::vector<sql::PermutationStep>& steps,
                                                       std::chrono::seconds max_step_wait, std::size_t max_executions,
                                                       const std::string& strategy = "dpor");

}  // namespace lockstep::sim
