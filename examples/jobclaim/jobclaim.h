// jobclaim.h: a job-claim service of our own, written against <lockstep/pg.h> only, so the
// same code runs on lockstep's simulated PostgreSQL and on a real one.
//
// Jobs are rows of table `jobs` (id 1..n, status "queued" or "done"). A worker walks the
// jobs; for each it takes the job's advisory lock (waiting at most lock_timeout), checks the
// row is still queued, runs the job, marks the row done and unlocks. A job must run once.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <lockstep/pg.h>

namespace jobclaim {

struct ClaimOptions {
  // The planted bugs: read the status before taking the lock (and trust it), and unlock
  // only after a lock that was granted (a phantom grant, Bug #17686, then stays held).
  bool check_before_lock = false;
  bool unlock_only_if_granted = false;
  lockstep::Duration lock_timeout = std::chrono::milliseconds(50);
};

// The service's designs: the correct one first, then the planted bugs. The only list of
// them: the model's registration takes its names and descriptions from here.
struct Variant {
  const char* name;
  const char* description;
  bool check_before_lock = false;
  bool unlock_only_if_granted = false;
};
inline constexpr Variant kVariants[] = {
    {.name = "correct", .description = "re-checks the row under the lock; always unlocks"},
    {.name = "check_before_lock",
     .description = "checks the row before taking the lock and trusts it",
     .check_before_lock = true},
    {.name = "unlock_only_if_granted",
     .description = "unlocks only after a granted lock: a phantom grant stays held",
     .unlock_only_if_granted = true},
};

// The options of a variant of kVariants (std::invalid_argument for another name).
ClaimOptions claim_options(const std::string& variant, lockstep::Duration lock_timeout);

// The advisory key of job `id`: (namespace 7, id) in the two-int4 form (std::out_of_range
// for an id outside 1..2^31-1).
lockstep::pg::AdvisoryKey job_key(std::int64_t id);

// Takes job `id`'s lock on `conn`, waiting at most options.lock_timeout: true when granted,
// false when the wait timed out (55P03).
bool lock_job(lockstep::pg::Connection& conn, std::int64_t id, const ClaimOptions& options);

// Lets go of job `id`'s lock after lock_job returned `granted`. After a timeout the session
// may hold the lock anyway (Bug #17686), so the correct design unlocks regardless.
void unlock_job(lockstep::pg::Connection& conn, std::int64_t id, bool granted, const ClaimOptions& options);

// Runs every queued job it can claim among 1..jobs; `run` is the job's side effect.
// Returns the number of jobs this worker ran. Throws lockstep::ModelError on an
// unexpected server error (the model's verdict is then model_error).
int claim_jobs(lockstep::pg::Pool& pool, int jobs, const ClaimOptions& options,
               const std::function<void(std::int64_t id)>& run);

}  // namespace jobclaim
