// real/pg_work_queue.h: the subtree exchange of sim/explore/subtree_exchange.h on PostgreSQL: one
// dpor search split among processes that a job runner starts (check --queue CONNINFO).
//
// The queue is a lock service of its own: two tables in the database CONNINFO names,
// lockstep_runs (one row per --run-id: the coordinator's settings, and whether the run is
// over) and lockstep_tasks (one row per published subtree). A worker takes the lowest queued
// task with SELECT ... FOR UPDATE SKIP LOCKED inside a transaction that stays open while it
// explores, and writes the result in that transaction. So the row lock says who has a task:
// the coordinator takes back a task no worker holds (the same SKIP LOCKED), and a worker
// that dies loses nothing (its transaction rolls back; the task is queued again and the
// coordinator takes it back when it gets there). Withdrawn tasks are listed in
// lockstep_withdrawn, which a working worker reads every half second to stop early.
//
// The tables are created when missing (under an advisory lock: processes start together).
// A worker refuses (InputError, exit 2) a run whose settings differ from its own: the same
// scenario, strategy, bounds per execution and lockstep version, or the results would not
// fit together. Errors of the server are real::ServerError.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "lockstep/sim/explore/subtree_exchange.h"

namespace lockstep::real {

// The coordinator's side: begins run `run` (its earlier tasks, if any, are removed) with
// `settings` (a JSON text the workers must match); `capacity` tasks at most in flight.
// Destroying it marks the run over, which ends the workers.
std::shared_ptr<sim::SubtreeExchange> coordinate_run(const std::string& conninfo, const std::string& run,
                                                     const std::string& settings, int capacity);

// A worker's side: waits (until stop(), at most 10 minutes: then InputError) for run `run`
// to begin, and checks its settings.
std::unique_ptr<sim::SubtreeSource> serve_run(const std::string& conninfo, const std::string& run,
                                              const std::string& settings, const std::function<bool()>& stop);

}  // namespace lockstep::real
