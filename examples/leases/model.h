// model.h: the lease service and the job queue (leases.h) as lockstep models: their
// configurations, the state of one execution, and the models (actors and invariants).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <lockstep/lockstep.h>

#include "leases.h"

namespace leases {

// Clients a, b, ... each on a pool of its own, racing for the lease "job". Each tries to
// acquire it (up to `attempts` times, a TTL apart); once it holds it, it renews it half a TTL
// later (giving up if that fails), may stall for two TTLs (an explored choice: a GC pause),
// writes the resource under its token and releases the lease.
struct LeaseConfig {
  std::string variant = "correct";  // a LeaseVariant's name (leases.h)
  int clients = 2;
  int attempts = 3;
  std::int64_t ttl_ms = 100;
  std::int64_t clock_skew_ms = 150;  // client b's clock runs this far ahead (read by client_clock only)
  bool stall = true;                 // a holder may stall past its lease before it writes
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(LeaseConfig, variant, clients, attempts, ttl_ms, clock_skew_ms, stall)

struct LeaseRun {
  LeaseRun(lockstep::Env& env, const LeaseConfig& config);
  LeaseConfig config;
  std::vector<std::unique_ptr<lockstep::pg::Pool>> pools;          // pools[client]
  std::vector<std::unique_ptr<lockstep::SharedVar>> token_of;      // the token client i acquired (0: none)
  std::vector<std::unique_ptr<lockstep::SharedVar>> wrote_with;    // the token of client i's accepted write (0: none)
  std::vector<std::unique_ptr<lockstep::SharedVar>> lost_lease;    // 1: client i's renewal, half a TTL in, failed
};

// Timed exploration: leases are durations.
lockstep::Model<LeaseRun, LeaseConfig> lease_model(const LeaseConfig& config);

// Workers a, b, ... each on a pool of its own, claiming jobs until none is left.
struct QueueConfig {
  std::string variant = "skip_locked";  // a QueueVariant's name (leases.h)
  int workers = 2;
  int jobs = 2;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(QueueConfig, variant, workers, jobs)

struct QueueRun {
  QueueRun(lockstep::Env& env, const QueueConfig& config);
  QueueConfig config;
  std::vector<std::unique_ptr<lockstep::pg::Pool>> pools;     // pools[worker]
  std::vector<std::unique_ptr<lockstep::SharedVar>> claims;   // claims[id - 1]: times job id was claimed
};

lockstep::Model<QueueRun, QueueConfig> queue_model(const QueueConfig& config);

}  // namespace leases
