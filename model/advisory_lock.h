// model/advisory_lock.h: the advisory lock service of seed 000, over model/pg.h.
//
//   AdvisoryLockService locks(env, pool);
//   locks.advisory_lock(LockNamespace::agent, agent_id, [&] { ... });        // may throw
//   locks.advisory_lock_or_skip(LockNamespace::agent, agent_id, [&](bool held) { ... });
//
// advisory_lock(namespace, id, body, timeout = 15 s):
//  1. reentrancy: if this actor (the seed's thread) already holds (namespace, id) through
//     the service, throw AdvisoryLockError at once; the outer lock stays held;
//  2. check out a dedicated connection, SET lock_timeout, SELECT pg_advisory_lock(ns, id);
//     on 55P03 (or any failure) throw AdvisoryLockError;
//  3. run the body; in a finally block, SELECT pg_advisory_unlock(ns, id)
//     unconditionally: true cleans up a phantom lock of Bug #17686, false is a no-op;
//     the connection goes back to the pool on every path; exceptions propagate.
// When the unconditional unlock returns true after a failed acquire it has cleaned up a
// phantom lock: the service reports Event{"phantom_cleaned", id} to the invariants. Both
// calls report Event{"lock_window", id, actor + 1} before their checkout and
// Event{"lock_window", id, -(actor + 1)} after their finally block: the span in which the
// actor may hold the lock, for invariants that ask whether anybody did.
// advisory_lock_or_skip(namespace, id, body): pg_try_advisory_lock; body(false) when the
// lock is held elsewhere or by this actor already, body(true) with the lock held.
//
// Bug-zoo switches (each a design the seeds rejected): xact_lock (pg_advisory_xact_lock,
// released at the first intermediate commit), conditional_unlock (unlock only after a
// successful acquire: a phantom lock leaks with the connection), no_reentrancy_check.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/model/pg.h"

namespace lockstep {

// The one namespace the seed settled on: pg_advisory_lock(1, agent_id).
enum class LockNamespace : std::int32_t { agent = 1 };

class AdvisoryLockError : public std::runtime_error {
 public:
  // reentrant: raised at once by the reentrancy check; the others after trying: no
  // connection from the pool, the lock's timeout (55P03 / 57014), any other error.
  enum class Reason { reentrant, no_connection, timeout, failed };
  explicit AdvisoryLockError(const std::string& what, Reason reason = Reason::failed)
      : std::runtime_error(what), reason_(reason) {}
  Reason reason() const { return reason_; }

 private:
  Reason reason_;
};

struct AdvisoryLockOptions {
  bool xact_lock = false;
  bool conditional_unlock = false;
  bool reentrancy_check = true;
};

// GET /api/advisory-locks (seed 000): every advisory lock in pg_locks with its session,
// the seed's namespace and entity_id (the (int4, int4) key form; for a bigint key,
// namespace is its high half and entity_id its low half), and a total.
struct MonitoredLock {
  int pid = 0;
  std::string application_name;
  std::string state;
  Time query_start{0};
  std::int64_t namespace_id = 0;
  std::int64_t entity_id = 0;
  std::string mode;
  bool granted = false;
  Duration duration{0};
};
struct AdvisoryLockReport {
  std::vector<MonitoredLock> locks;
  std::size_t total = 0;
};
// Runs the monitoring query on `conn`; the error of the query when it fails.
pg::Result<AdvisoryLockReport> monitor_advisory_locks(pg::Connection& conn);

// A stable int4 for a string key: FNV-1a (32-bit) over its bytes, as a signed integer.
// Deterministic across runs, processes and platforms.
std::int32_t lock_key_from_string(std::string_view text);

class AdvisoryLockService {
 public:
  static constexpr Duration kDefaultTimeout = std::chrono::seconds(15);

  AdvisoryLockService(Env& env, pg::Pool& pool, AdvisoryLockOptions options = {})
      : env_(env), pool_(pool), options_(options), held_(env) {}

  void advisory_lock(LockNamespace ns, std::int32_t id, const std::function<void()>& body,
                     Duration timeout = kDefaultTimeout);
  void advisory_lock_or_skip(LockNamespace ns, std::int32_t id, const std::function<void(bool held)>& body);

  // Whether the calling actor holds (ns, id) through this service.
  bool holds(LockNamespace ns, std::int32_t id) { return held_.get().count({ns, id}) > 0; }

 private:
  using Key = std::pair<LockNamespace, std::int32_t>;
  static pg::AdvisoryKey pg_key(LockNamespace ns, std::int32_t id) { return pg::AdvisoryKey::pair(static_cast<std::int32_t>(ns), id); }

  Env& env_;
  pg::Pool& pool_;
  AdvisoryLockOptions options_;
  ActorLocal<std::set<Key>> held_;  // the seed's thread-local reentrancy tracking
};

}  // namespace lockstep
