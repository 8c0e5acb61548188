#include "lockstep/model/advisory_lock.h"

#include <fmt/format.h>

namespace lockstep {

std::int32_t lock_key_from_string(std::string_view text) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : text) h = (h ^ c) * 16777619u;
  return static_cast<std::int32_t>(h);
}

pg::Result<AdvisoryLockReport> monitor_advisory_locks(pg::Connection& conn) {
  auto rows = conn.advisory_locks();
  if (!rows.ok()) return rows.error();
  AdvisoryLockReport report;
  for (const pg::AdvisoryLockRow& r : rows.value()) {
    // The (int4, int4) form keeps its keys as signed values; a bigint key splits in halves.
    const bool pair = r.objsubid == 2;
    report.locks.push_back({r.pid, r.application_name, r.state, r.query_start,
                            pair ? static_cast<std::int32_t>(r.classid) : static_cast<std::int64_t>(r.classid),
                            pair ? static_cast<std::int32_t>(r.objid) : static_cast<std::int64_t>(r.objid), r.mode, r.granted,
                            r.duration});
  }
  report.total = report.locks.size();
  return report;
}

namespace {

// Runs `cleanup` when the scope ends, on every path (the seed's finally block).
template <typename F>
class Finally {
 public:
  explicit Finally(F f) : f_(std::move(f)) {}
  ~Finally() { f_(); }
  Finally(const Finally&) = delete;
  Finally& operator=(const Finally&) = delete;

 private:
  F f_;
};

// Reports the span in which the calling actor may hold (namespace, id) through the service:
// from before its checkout to after its finally block (Event "lock_window", value
// actor + 1 at the start, -(actor + 1) at the end).
class LockWindow {
 public:
  LockWindow(Env& env, std::int32_t id) : env_(env), id_(id), actor_(env.current_actor()) {
    env_.observe({"lock_window", id_, actor_ + 1, false, kGlobalScope, kLockWindowEvent});
  }
  ~LockWindow() { env_.observe({"lock_window", id_, -(actor_ + 1), false, kGlobalScope, kLockWindowEvent}); }
  LockWindow(const LockWindow&) = delete;
  LockWindow& operator=(const LockWindow&) = delete;

 private:
  Env& env_;
  std::int32_t id_;
  ActorId actor_;
};

}  // namespace

void AdvisoryLockService::advisory_lock(LockNamespace ns, std::int32_t id, const std::function<void()>& body,
                                        Duration timeout) {
  if (options_.reentrancy_check && holds(ns, id)) {
    throw AdvisoryLockError(fmt::format("reentrant advisory_lock({}, {}): this thread already holds it", static_cast<int>(ns), id),
                            AdvisoryLockError::Reason::reentrant);
  }
  const LockWindow window(env_, id);
  auto checkout = pool_.checkout();
  if (!checkout.ok()) {
    throw AdvisoryLockError(fmt::format("no connection for the lock: {}", checkout.error().message),
                            AdvisoryLockError::Reason::no_connection);
  }
  pg::PooledConnection conn = std::move(checkout).value();
  const pg::AdvisoryKey key = pg_key(ns, id);
  bool acquired = false;
  {
    // The finally block: runs whether the lock was taken, refused, or the body threw.
    auto unlock = [&] {
      if (!options_.xact_lock && (acquired || !options_.conditional_unlock)) {
        const auto unlocked = conn->advisory_unlock(key, pg::LockMode::exclusive);
        if (!acquired && unlocked.ok() && unlocked.value()) env_.observe({"phantom_cleaned", id, 0, false, kGlobalScope, kPhantomCleanedEvent});
      }
      held_.get().erase({ns, id});
    };
    Finally<decltype(unlock)> finally(unlock);
    // The session variant sets its lock_timeout in the lock's own statement: a scope is two
    // round trips (lock, unlock), the pool sends no ROLLBACK after it.
    if (options_.xact_lock) {
      (void)conn->set_lock_timeout(timeout);
      (void)conn->begin();
    }
    const pg::Status st = options_.xact_lock ? conn->advisory_xact_lock(key, pg::LockMode::exclusive)
                                             : conn->advisory_lock_with_timeout(key, pg::LockMode::exclusive, timeout);
    if (!st.ok()) {
      const bool timed_out = st.is(pg::sqlstate::kLockNotAvailable) || st.is(pg::sqlstate::kQueryCanceled);
      throw AdvisoryLockError(fmt::format("advisory_lock({}, {}) failed: {} {}", static_cast<int>(ns), id, st.error().sqlstate,
                                          st.error().message),
                              timed_out ? AdvisoryLockError::Reason::timeout : AdvisoryLockError::Reason::failed);
    }
    acquired = true;
    held_.get().insert({ns, id});
    body();
  }
}

void AdvisoryLockService::advisory_lock_or_skip(LockNamespace ns, std::int32_t id, const std::function<void(bool)>& body) {
  if (options_.reentrancy_check && holds(ns, id)) {
    body(false);
    return;
  }
  const LockWindow window(env_, id);
  auto checkout = pool_.checkout();
  if (!checkout.ok()) {
    body(false);
    return;
  }
  pg::PooledConnection conn = std::move(checkout).value();
  const pg::AdvisoryKey key = pg_key(ns, id);
  const auto got = conn->try_advisory_lock(key, pg::LockMode::exclusive);
  if (!got.ok() || !got.value()) {
    body(false);
    return;
  }
  auto unlock = [&] {
    (void)conn->advisory_unlock(key, pg::LockMode::exclusive);
    held_.get().erase({ns, id});
  };
  Finally<decltype(unlock)> finally(unlock);
  held_.get().insert({ns, id});
  body(true);
}

}  // namespace lockstep
