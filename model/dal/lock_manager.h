// model/dal/lock_manager.h: seed 002's DAL locks, leases in a database table, over
// model/pg.h.
//
// Table dal_locks, one row per lock_id: mode ("" free, "read", "write", "upgradeable"),
// owners (comma-separated), lease_expires and heartbeat_ts (virtual milliseconds), epoch
// (incremented at every grant: the fencing token of the holder) and metadata. Every
// operation is one transaction that first takes the row with SELECT ... FOR UPDATE, so
// deciding and writing are atomic:
//  - try_acquire(lock, mode, owner): read and upgradeable are shared with read (at most one
//    upgradeable holder), write is exclusive; a lease is taken: now + lease, heartbeat now.
//    A holder whose lease passed still holds until recovery releases it (seed: "becomes
//    stale", recovery is explicit);
//  - acquire: try_acquire with bounded retries and exponential backoff (seed 8.3);
//  - upgrade: the sole holder of an upgradeable lock becomes its writer, in the same
//    transaction (seed 3.4); variant release_then_acquire does release, then acquire write;
//  - heartbeat: renews the lease of every lock the owner still holds;
//  - recover(lock): force-releases a lock whose lease passed, whose heartbeat is older than
//    the grace period and that no active job claims, writing an audit row in the same
//    transaction (seed 3.3 / 8.2); variant recovery_skips_heartbeat omits the heartbeat
//    test.
// Reports: "granted" (lock, epoch), "released" (lock, owner), "recovered" (lock, epoch),
// "attempt" (lock, its number within this acquire) for every try of acquire.
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>

#include "lockstep/model/env.h"
#include "lockstep/model/pg.h"

namespace lockstep::dal {

// The tables of the lock manager: its locks, and the audit log of their epochs.
inline const std::string kLocks = "dal_locks";
inline const std::string kAudit = "dal_audit";

// What the DAL reports for its invariants (subject, value).
namespace events {
inline constexpr EventName kGranted{"granted", 1};            // lock, epoch (ordered per lock)
inline constexpr EventName kAttempt{"attempt", 2};            // lock, attempt number
inline constexpr EventName kReleased{"released", 3};          // lock, owner
inline constexpr EventName kRecovered{"recovered", 4};        // lock, epoch of the stale row
inline constexpr EventName kWriteFenced{"write_fenced", 5};   // lock, epoch refused
inline constexpr EventName kUpgradeLost{"upgrade_lost", 6};   // lock, the value found
inline constexpr EventName kWrote{"wrote", 7};                // lock, epoch (ordered per lock)
inline constexpr EventName kReadChanged{"read_changed", 8};   // lock, reader
inline constexpr EventName kJobRefused{"job_refused", 9};     // actor
inline constexpr EventName kGaveUpHolding{"gave_up_holding", 10};  // lock, actor
inline constexpr EventName kJobs{"jobs", 11};                 // running, in the project
inline constexpr EventName kMapJobs{"map_jobs", 12};          // -, map jobs in the project
}  // namespace events


enum class Mode { read, write, upgradeable };

struct DalOptions {
  Duration lease = std::chrono::seconds(30);
  Duration grace = std::chrono::seconds(15);  // a heartbeat older than this is stale
  int max_attempts = 5;
  Duration backoff = std::chrono::seconds(1);  // doubled after each failed attempt
  bool recovery_checks_heartbeat = true;
  bool atomic_upgrade = true;
};

class DalLockManager {
 public:
  DalLockManager(Env& env, pg::Connection& conn, DalOptions options) : env_(env), conn_(conn), o_(options) {}

  // The epoch granted (> 0), or 0 when the lock is held incompatibly.
  std::int64_t try_acquire(int lock, Mode mode, int owner);
  // try_acquire with bounded retries and exponential backoff; 0 after max_attempts.
  std::int64_t acquire(int lock, Mode mode, int owner);
  void release(int lock, int owner);
  // The new epoch (> 0), or 0 when other holders remain.
  std::int64_t upgrade(int lock, int owner);
  void heartbeat(int lock, int owner);
  // `claimed`: an active job claims the lock. True when the lock was force-released.
  bool recover(int lock, bool claimed);

 private:
  pg::Row lock_row(int lock);  // BEGIN; SELECT ... FOR UPDATE
  void commit();
  std::int64_t now_ms() const { return std::chrono::duration_cast<std::chrono::milliseconds>(env_.now()).count(); }

  Env& env_;
  pg::Connection& conn_;
  DalOptions o_;
};

// The owners column as a set, and back.
std::set<int> parse_owners(const std::string& text);
std::string format_owners(const std::set<int>& owners);

}  // namespace lockstep::dal
