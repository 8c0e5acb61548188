// leases.h: a lease lock service with fencing tokens, and a SKIP LOCKED job queue, written
// as SQL through Connection::exec on our own schema (<lockstep/pg.h> only), so the same code
// runs on lockstep's simulated PostgreSQL and on a real one.
//
// A lease is a row of `leases`: whoever acquires it gets the next fencing token and holds it
// until expires_at (the server's clock), unless it renews or releases it. A holder writes to
// the shared `resource` with its token, and the write is refused once a newer token wrote:
// a holder that stalled past its lease cannot overwrite its successor's work.
//
// A queue is table `jobs`: a worker claims the first queued job in a transaction that locks
// it with FOR UPDATE SKIP LOCKED, so concurrent workers claim different jobs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <lockstep/pg.h>

namespace leases {

// The lease service's designs: the correct one, then the planted bugs.
enum class LeaseVariant {
  correct,
  // Acquires by a SELECT, a decision on the client and an UPDATE by name that checks
  // nothing again, with the next token computed from what it read: two clients that both
  // read the lease free both take it, with the same token.
  stale_read,
  // Tests expiry against the client's clock (LeaseOptions::client_clock) instead of the
  // server's now(): a client whose clock runs ahead takes over a lease that is still live.
  client_clock,
  // Writes the resource without the fence (no `last_token <= $2`): a holder that stalled
  // past its lease overwrites its successor's write.
  unfenced_write,
};

// "correct", "stale_read", "client_clock", "unfenced_write" (std::invalid_argument otherwise).
LeaseVariant lease_variant(std::string_view name);

struct LeaseOptions {
  LeaseVariant variant = LeaseVariant::correct;
  lockstep::Duration ttl = std::chrono::milliseconds(100);
  // The client's clock, as time since the simulated server's time 0 (lockstep::pg::
  // kSimulatedClockOrigin, 2026-01-01 00:00:00+00). Read by the client_clock variant only.
  std::function<lockstep::Time()> client_clock;
};

// Creates (after dropping) `leases` with one free lease per name and `resource` with row
// id 1 never written. Outside any session: a model's constructor, or a test's setup.
void create_lease_schema(lockstep::pg::Connection& conn, const std::vector<std::string>& names);

// Acquires lease `name` for `holder` for options.ttl when it is free or expired: the new
// fencing token, or nothing when it is held. The correct design is one statement decided on
// the server's clock.
std::optional<std::int64_t> acquire(lockstep::pg::Connection& conn, std::string_view name, std::string_view holder,
                                    const LeaseOptions& options);

// Extends the lease by options.ttl from now (the server's clock) while `holder` still holds
// it with `token` and it has not expired: false when it was lost.
bool renew(lockstep::pg::Connection& conn, std::string_view name, std::string_view holder, std::int64_t token,
           const LeaseOptions& options);

// Lets the lease go if `holder` still holds it with `token` (the token stays, so the next
// holder's is greater): false when it was no longer ours.
bool release(lockstep::pg::Connection& conn, std::string_view name, std::string_view holder, std::int64_t token);

// Writes `value` to the resource under fencing token `token`: false when a newer token has
// written it already (the write changes nothing).
bool fenced_write(lockstep::pg::Connection& conn, std::int64_t token, std::string_view value, const LeaseOptions& options);

// The queue's designs: claim under FOR UPDATE SKIP LOCKED, or the planted bug, a plain
// SELECT that locks nothing (two workers can read the same queued job and both claim it).
enum class QueueVariant { skip_locked, no_row_lock };

// "skip_locked", "no_row_lock" (std::invalid_argument otherwise).
QueueVariant queue_variant(std::string_view name);

// Creates (after dropping) `jobs` with jobs 1..jobs queued.
void create_queue_schema(lockstep::pg::Connection& conn, int jobs);

// Claims the first queued job for `worker` (status 'running'): its id, or nothing when no
// queued job is left (or, with SKIP LOCKED, every one is being claimed by another worker).
std::optional<std::int64_t> claim_job(lockstep::pg::Connection& conn, std::string_view worker, QueueVariant variant);

// Every function above throws lockstep::ModelError on an unexpected server error (a model's
// verdict is then model_error).

}  // namespace leases
