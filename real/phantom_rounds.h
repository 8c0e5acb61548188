// real/phantom_rounds.h: PostgreSQL Bug #17686 on a real server, round after round.
//
// A round: session H holds advisory key (1, K); a waiter asks for it with a short
// lock_timeout while H releases it close to that deadline (the release is seeded to land
// within +-max_offset of it). When the timeout fires after H's release granted the lock,
// the waiter gets 55P03 and its session holds the lock anyway: a phantom.
//  - naive client: unlocks only after a successful acquire, so a phantom stays held (a
//    leak, counted from pg_locks after the client is done);
//  - service: model/advisory_lock.h's AdvisoryLockService on the real Env, whose
//    unconditional unlock cleans the phantom up (phantom_cleaned events), so nothing leaks.
// Every round ends with the waiter's session cleared, so rounds are independent.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "lockstep/model/env.h"
#include "lockstep/model/pg.h"
#include "lockstep/model/system.h"

namespace lockstep::real {

struct PhantomOptions {
  std::string conninfo;
  int rounds = 1000;
  Duration lock_timeout = std::chrono::milliseconds(20);
  Duration max_offset = std::chrono::microseconds(1500);
  std::uint64_t seed = 1;
};

struct PhantomCounts {
  int rounds = 0;
  int acquired = 0;   // the waiter got the lock
  int timed_out = 0;  // the waiter's statement failed with 55P03
  int phantoms = 0;   // timed out, yet its session held the lock (seen in pg_locks, or cleaned)
  int leaked = 0;     // still held by the waiter's session once the client was done
};

struct PhantomReport {
  PhantomCounts naive, service;
};

// Runs options.rounds rounds with each client. Throws std::runtime_error when the server
// cannot be reached or a statement of the harness itself fails. `progress` (may be empty)
// gets the client's name and its counts every 50 rounds.
PhantomReport run_phantom_rounds(const PhantomOptions& options,
                                 const std::function<void(std::string_view client, const PhantomCounts&)>& progress = {});

// Your own lock client in the same rounds: the holder takes `key`; `round` runs on the
// waiter's connection (lock_timeout already set on it) and does what your code does:
// acquire `key` waiting at most `lock_timeout`, then release as it would; it returns
// whether your code believed it got the lock. Counted: acquired (true), timed_out
// (false), leaked (the waiter's session still holds `key` afterwards; the harness then
// clears it), phantoms (leaked after a timeout). A phantom your client cleaned up leaves
// no trace the harness can see: it counts as timed_out only.
struct PhantomClient {
  std::string name;
  pg::AdvisoryKey key = pg::AdvisoryKey::pair(1, 17686);
  std::function<bool(pg::Connection& conn, Duration lock_timeout)> round;
};
PhantomCounts run_phantom_rounds(const PhantomOptions& options, const PhantomClient& client,
                                 const std::function<void(const PhantomCounts&)>& progress = {});

// A registered system's own client for `variant` (SystemInfo::phantom_round and
// phantom_key, which ModelSystem fills in). Throws std::invalid_argument when the system
// declares no phantom round or no such variant.
PhantomClient phantom_client(const SystemInfo& system, const std::string& variant);

}  // namespace lockstep::real
