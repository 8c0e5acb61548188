// jobqueue.h: a team's job queue on PostgreSQL, written as SQL through Connection::exec on its
// own schema (<lockstep/pg.h> only), so the same code runs on lockstep's simulated server and
// on a real one through libpq.
//
// Workers claim the first available job with FOR UPDATE SKIP LOCKED, beat a heartbeat while
// they run it and complete it by its attempt number. A rescuer, elected with a session
// advisory lock on its own connection, puts back jobs whose heartbeat went silent, so that a
// worker that stalled (a GC pause) does not hold a job forever; a later attempt's worker then
// completes it, and the stalled worker's completion of its old attempt changes nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include <lockstep/pg.h>

namespace jobqueue {

// The designs: the correct one, then the planted bugs.
enum class Variant {
  correct,
  no_skip_locked,      // claim reads an available job without locking it, then takes it by id
  complete_by_id,      // complete names the job only, not the attempt: a stale worker completes it
  xact_leader,         // the rescuer's election takes a transaction lock in autocommit: gone at once
};

// "correct", "no_skip_locked", "complete_by_id", "xact_leader" (std::invalid_argument otherwise).
Variant variant(std::string_view name);

struct Claim {
  std::int64_t job = 0;
  std::int64_t attempt = 0;
};

// Creates (after dropping) `jobs` with jobs 1..jobs available. Outside any session.
void create_schema(lockstep::pg::Connection& conn, int jobs);

// Claims the first available job for `worker`: the job and its attempt, or nothing.
std::optional<Claim> claim(lockstep::pg::Connection& conn, std::string_view worker, Variant v);

// Marks the claimed attempt alive now (the server's clock): false when it was rescued.
bool heartbeat(lockstep::pg::Connection& conn, const Claim& c);

// Completes the claimed attempt: false when the job was rescued (and maybe claimed again).
bool complete(lockstep::pg::Connection& conn, const Claim& c, Variant v);

// Tries to become the rescuer (a session advisory lock, held until resign): whether it is.
bool try_lead(lockstep::pg::Connection& conn, Variant v);
void resign(lockstep::pg::Connection& conn, Variant v);

// Puts back every running job whose heartbeat is older than `stale_ms`: how many.
std::int64_t rescue(lockstep::pg::Connection& conn, std::int64_t stale_ms);

// Every function throws lockstep::ModelError on an unexpected server error.

}  // namespace jobqueue
