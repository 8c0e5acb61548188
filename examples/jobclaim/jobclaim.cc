#include "jobclaim.h"

namespace jobclaim {

using lockstep::pg::LockMode;

lockstep::pg::AdvisoryKey job_key(std::int64_t id) { return lockstep::pg::AdvisoryKey::pair(7, static_cast<std::int32_t>(id)); }

namespace {

bool queued(lockstep::pg::Connection& conn, std::int64_t id) {
  auto row = conn.read_row("jobs", id).value();
  return row && row->at("status") == "queued";
}

}  // namespace

int claim_jobs(lockstep::pg::Pool& pool, int jobs, const ClaimOptions& options,
               const std::function<void(std::int64_t id)>& run) {
  auto conn = pool.checkout().value();
  int ran = 0;
  for (std::int64_t id = 1; id <= jobs; ++id) {
    const bool seen_queued = options.check_before_lock && queued(*conn, id);
    if (options.check_before_lock && !seen_queued) continue;
    const auto locked = conn->advisory_lock_with_timeout(job_key(id), LockMode::exclusive, options.lock_timeout);
    if (!locked.ok() && !locked.is(lockstep::pg::sqlstate::kLockNotAvailable)) {
      throw lockstep::ModelError("lock of job " + std::to_string(id) + ": " + locked.error().sqlstate + " " + locked.error().message);
    }
    if (locked.ok() && (seen_queued || queued(*conn, id))) {
      run(id);
      (void)conn->update_row("jobs", id, {{"status", "done"}}).value();
      ++ran;
    }
    // After a timeout the session may hold the lock anyway (Bug #17686): unlock regardless.
    if (locked.ok() || !options.unlock_only_if_granted) (void)conn->advisory_unlock(job_key(id), LockMode::exclusive).value();
    (void)conn->take_warnings();  // "you don't own a lock" after a plain timeout
  }
  return ran;
}

}  // namespace jobclaim
