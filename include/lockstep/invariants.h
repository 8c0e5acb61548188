// lockstep/invariants.h: ready-made invariants for a lock service over PostgreSQL, for
// Model::invariant (checked once every actor has finished):
//
//   .invariant("no_lock_left", lockstep::no_advisory_lock_left<Jobs>(
//       [](Jobs& s) -> lockstep::pg::Pool& { return *s.pool; },
//       [](const lockstep::pg::AdvisoryLockRow& r) { return r.classid == 7 && r.objsubid == 2; }))
//   .invariant("no_checkout_left", lockstep::no_connection_checked_out<Jobs>(
//       [](Jobs& s) -> lockstep::pg::Pool& { return *s.pool; }))
//
// no_advisory_lock_left scans the server's advisory locks (pg_locks, through a connection of
// the pool, as seed 000's monitoring query does) and names the first lock still granted
// that `ours` accepts (all of them without a filter: a shared server may hold other
// clients' locks, so a filter is usual against a real one). A pool with no connection left
// to scan with is itself a violation. no_connection_checked_out asks the pool
// (QueuePool.checkedout()): a connection an actor never returned. Both work the same on
// the simulated server and through libpq.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "lockstep/model/pg.h"

namespace lockstep {

// The key of a pg_locks row as the service wrote it: "key K" (bigint form) or "(K1, K2)".
inline std::string advisory_key_text(const pg::AdvisoryLockRow& row) {
  if (row.objsubid == 1) {
    const auto key = static_cast<std::int64_t>((std::uint64_t{row.classid} << 32) | row.objid);
    return fmt::format("key {}", key);
  }
  return fmt::format("({}, {})", static_cast<std::int32_t>(row.classid), static_cast<std::int32_t>(row.objid));
}

template <typename State>
std::function<std::optional<std::string>(State&)> no_advisory_lock_left(
    std::function<pg::Pool&(State&)> pool_of, std::function<bool(const pg::AdvisoryLockRow&)> ours = nullptr) {
  return [pool_of = std::move(pool_of), ours = std::move(ours)](State& s) -> std::optional<std::string> {
    auto conn = pool_of(s).checkout();
    if (!conn.ok()) return "no connection to look at pg_locks with: " + conn.error().message;
    auto rows = conn.value()->advisory_locks();
    if (!rows.ok()) return "pg_locks could not be read: " + rows.error().message;
    for (const auto& row : rows.value()) {
      if (!row.granted || (ours && !ours(row))) continue;
      return fmt::format("advisory lock {} is still held by pid {} ({})", advisory_key_text(row), row.pid, row.mode);
    }
    return std::nullopt;
  };
}

template <typename State>
std::function<std::optional<std::string>(State&)> no_connection_checked_out(std::function<pg::Pool&(State&)> pool_of) {
  return [pool_of = std::move(pool_of)](State& s) -> std::optional<std::string> {
    const int n = pool_of(s).checked_out();
    if (n == 0) return std::nullopt;
    return fmt::format("{} connection{} still checked out of the pool", n, n == 1 ? " is" : "s are");
  };
}

}  // namespace lockstep
