#include "jobclaim.h"

#include <cstdint>
#include <stdexcept>

namespace jobclaim {

using lockstep::pg::LockMode;

ClaimOptions claim_options(const std::string& variant, lockstep::Duration lock_timeout) {
  for (const Variant& v : kVariants) {
    if (variant == v.name) return ClaimOptions{v.check_before_lock, v.unlock_only_if_granted, lock_timeout};
  }
  throw std::invalid_argument("jobclaim: unknown variant " + variant);
}

lockstep::pg::AdvisoryKey job_key(std::int64_t id) {
  if (id < 1 || id > INT32_MAX) throw std::out_of_range("job id " + std::to_string(id) + " does not fit the int4 key");
  return lockstep::pg::AdvisoryKey::pair(7, static_cast<std::int32_t>(id));
}

namespace {

bool queued(lockstep::pg::Connection& conn, std::int64_t id) {
  auto row = conn.read_row("jobs", id).value();
  return row && row->at("status") == "queued";
}

}  // namespace

bool lock_job(lockstep::pg::Connection& conn, std::int64_t id, const ClaimOptions& options) {
  const auto locked = conn.advisory_lock_with_timeout(job_key(id), LockMode::exclusive, options.lock_timeout);
  if (!locked.ok() && !locked.is(lockstep::pg::sqlstate::kLockNotAvailable)) {
    throw lockstep::ModelError("lock of job " + std::to_string(id) + ": " + locked.error().sqlstate + " " + locked.error().message);
  }
  return locked.ok();
}

void unlock_job(lockstep::pg::Connection& conn, std::int64_t id, bool granted, const ClaimOptions& options) {
  if (granted || !options.unlock_only_if_granted) (void)conn.advisory_unlock(job_key(id), LockMode::exclusive).value();
  (void)conn.take_warnings();  // "you don't own a lock" after a plain timeout
}

int claim_jobs(lockstep::pg::Pool& pool, int jobs, const ClaimOptions& options,
               const std::function<void(std::int64_t id)>& run) {
  auto conn = pool.checkout().value();
  int ran = 0;
  for (std::int64_t id = 1; id <= jobs; ++id) {
    const bool seen_queued = options.check_before_lock && queued(*conn, id);
    if (options.check_before_lock && !seen_queued) continue;
    const bool granted = lock_job(*conn, id, options);
    if (granted && (seen_queued || queued(*conn, id))) {
      run(id);
      (void)conn->update_row("jobs", id, {{"status", "done"}}).value();
      ++ran;
    }
    unlock_job(*conn, id, granted, options);
  }
  return ran;
}

}  // namespace jobclaim
