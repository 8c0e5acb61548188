#include "lockstep/model/dal/lock_manager.h"

#include <sstream>

#include <fmt/format.h>

namespace lockstep::dal {

std::set<int> parse_owners(const std::string& text) {
  std::set<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    if (!item.empty()) out.insert(std::stoi(item));
  }
  return out;
}

std::string format_owners(const std::set<int>& owners) {
  std::string out;
  for (int o : owners) out += fmt::format("{}{}", out.empty() ? "" : ",", o);
  return out;
}

pg::Row DalLockManager::lock_row(int lock) {
  if (pg::Status st = conn_.begin(); !st.ok()) throw ModelError("dal: BEGIN failed: " + st.error().message);
  auto row = conn_.select_for_update(kLocks, lock, false);
  if (!row.ok()) throw ModelError("dal: SELECT ... FOR UPDATE failed: " + row.error().message);
  if (!row.value()) throw ModelError(fmt::format("dal: no dal_locks row for lock {}", lock));
  return *row.value();
}

void DalLockManager::commit() {
  if (pg::Status st = conn_.commit(); !st.ok()) throw ModelError("dal: COMMIT failed: " + st.error().message);
}

std::int64_t DalLockManager::try_acquire(int lock, Mode mode, int owner) {
  pg::Row row = lock_row(lock);
  std::set<int> owners = parse_owners(row["owners"]);
  bool ok = owners.empty();
  if (!ok && mode != Mode::write) ok = row["mode"] == "read" && (mode == Mode::read || row["upgrader"].empty());
  if (!ok) {
    (void)conn_.rollback();
    return 0;
  }
  owners.insert(owner);
  const std::int64_t epoch = std::stoll(row["epoch"]) + 1;
  const std::int64_t now = now_ms();
  (void)conn_.update_row(kLocks, lock,
                         {{"mode", mode == Mode::write ? "write" : "read"},
                          {"owners", format_owners(owners)},
                          {"upgrader", mode == Mode::upgradeable ? std::to_string(owner) : row["upgrader"]},
                          {"lease_expires", std::to_string(now + std::chrono::duration_cast<std::chrono::milliseconds>(o_.lease).count())},
                          {"heartbeat_ts", std::to_string(now)},
                          {"epoch", std::to_string(epoch)}});
  commit();
  env_.observe(events::kGranted.scoped(lock, epoch));
  return epoch;
}

std::int64_t DalLockManager::acquire(int lock, Mode mode, int owner) {
  Duration wait = o_.backoff;
  for (int attempt = 1; attempt <= o_.max_attempts; ++attempt) {
    env_.observe(events::kAttempt.fact(lock, attempt));
    if (const std::int64_t epoch = try_acquire(lock, mode, owner)) return epoch;
    if (attempt == o_.max_attempts) break;
    env_.sleep_for(wait);
    wait *= 2;
  }
  return 0;  // the caller fails gracefully and logs why
}

void DalLockManager::release(int lock, int owner) {
  pg::Row row = lock_row(lock);
  std::set<int> owners = parse_owners(row["owners"]);
  if (owners.erase(owner) == 0) {
    (void)conn_.rollback();  // not held (recovered meanwhile)
    return;
  }
  (void)conn_.update_row(kLocks, lock,
                         {{"mode", owners.empty() ? "" : row["mode"]},
                          {"owners", format_owners(owners)},
                          {"upgrader", row["upgrader"] == std::to_string(owner) ? "" : row["upgrader"]}});
  commit();
  env_.observe(events::kReleased.fact(lock, owner));
}

std::int64_t DalLockManager::upgrade(int lock, int owner) {
  if (!o_.atomic_upgrade) {
    release(lock, owner);  // the window in which another writer may take it
    return acquire(lock, Mode::write, owner);
  }
  pg::Row row = lock_row(lock);
  if (parse_owners(row["owners"]) != std::set<int>{owner} || row["upgrader"] != std::to_string(owner)) {
    (void)conn_.rollback();
    return 0;
  }
  const std::int64_t epoch = std::stoll(row["epoch"]) + 1;
  (void)conn_.update_row(kLocks, lock, {{"mode", "write"}, {"upgrader", ""}, {"epoch", std::to_string(epoch)}});
  commit();
  env_.observe(events::kGranted.scoped(lock, epoch));
  return epoch;
}

void DalLockManager::heartbeat(int lock, int owner) {
  pg::Row row = lock_row(lock);
  if (parse_owners(row["owners"]).count(owner) == 0) {
    (void)conn_.rollback();
    return;
  }
  (void)conn_.update_row(kLocks, lock, {{"heartbeat_ts", std::to_string(now_ms())}});
  commit();
}

bool DalLockManager::recover(int lock, bool claimed) {
  pg::Row row = lock_row(lock);
  const std::int64_t now = now_ms();
  const auto grace = std::chrono::duration_cast<std::chrono::milliseconds>(o_.grace).count();
  const bool held = !parse_owners(row["owners"]).empty();
  const bool lease_passed = held && now > std::stoll(row["lease_expires"]);
  const bool heartbeat_stale = !o_.recovery_checks_heartbeat || now - std::stoll(row["heartbeat_ts"]) > grace;
  if (!lease_passed || !heartbeat_stale || claimed) {
    (void)conn_.rollback();
    return false;
  }
  (void)conn_.update_row(kLocks, lock, {{"mode", ""}, {"owners", ""}, {"upgrader", ""}});
  // The audit row, in the same transaction: who, when, why.
  (void)conn_.insert_row(kAudit, std::stoll(row["epoch"]) * 1000 + lock,
                         {{"lock_id", std::to_string(lock)}, {"owners", row["owners"]}, {"at", std::to_string(now)},
                          {"why", "lease passed, heartbeat stale, no active job"}});
  commit();
  env_.observe(events::kRecovered.fact(lock, std::stoll(row["epoch"])));
  return true;
}

}  // namespace lockstep::dal
