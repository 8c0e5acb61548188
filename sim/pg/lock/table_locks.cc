// sim/pg/lock/table_locks.cc: table locks on the simulated server (sim/pg/server/connection.h): LOCK TABLE,
// and the weak lock every SQL statement takes on its table, with lock.c's rules (the
// server's LockTable for them: FIFO queue, queued waiters holding off later conflicting
// requests, the early deadlock of ProcSleep, the deadlock check after deadlock_timeout).
#include "lockstep/sim/pg/server/connection.h"

namespace lockstep::sim::pg {

std::optional<Error> SimConnection::take_table_lock(const TableLockRequest& request, bool* waited) {
  LockTable& locks = server_.table_locks();
  if (locks.deadlocks_at_once(pid_, request.key, request.mode)) {
    s_.note_result({Kind::failed});
    return abort_with({std::string(sqlstate::kDeadlockDetected), "deadlock detected"});
  }
  auto waiter = locks.request(pid_, request.key, request.mode, Scope::transaction);
  if (!waiter) return std::nullopt;
  if (waited != nullptr) *waited = true;
  note_queued(locks, request.key, request.mode);
  if (Status waited = wait_for(locks, waiter, kNoObject, Access::acquire, "table_lock_wait", fmt::format("the lock on table {}", request.table));
      !waited.ok()) {
    return waited.error();
  }
  return std::nullopt;
}

Status SimConnection::lock_tables(const std::vector<std::pair<std::string, AdvisoryKey>>& tables, Mode mode, bool nowait) {
  // LOCK TABLE takes no snapshot (PostgreSQL's PlannedStmtRequiresSnapshot): a REPEATABLE READ
  // transaction that locks its tables first takes its snapshot after the locks are granted.
  if (auto refused = begin_statement({"lock_table", whole_server(Access::acquire), pid_, true}, false)) return *refused;
  if (!session_.in_transaction) return Error{"25P01", "LOCK TABLE can only be used in transaction blocks"};
  strong_table_lock_ = true;
  for (const auto& [name, key] : tables) {
    if (nowait) {
      if (!server_.table_locks().try_request(pid_, key, mode, Scope::transaction)) {
        s_.note_result({Kind::failed});
        return abort_with({std::string(sqlstate::kLockNotAvailable), fmt::format("could not obtain lock on relation \"{}\"", name)});
      }
      continue;
    }
    if (auto e = take_table_lock({key, mode, name})) return *e;
  }
  s_.note_result({Kind::ok});
  return {};
}

Status SimConnection::maintain_tables(const std::vector<std::pair<std::string, AdvisoryKey>>& tables, Mode mode, std::string_view verb) {
  if (auto refused = begin_statement({verb, whole_server(Access::acquire), pid_, true}, false)) return *refused;
  if (verb == "vacuum" && session_.in_transaction) return abort_with({"25001", "VACUUM cannot run inside a transaction block"});
  strong_table_lock_ = true;
  for (const auto& [name, key] : tables) {
    if (auto e = take_table_lock({key, mode, name})) return *e;
  }
  s_.note_result({Kind::ok});
  return {};
}

}  // namespace lockstep::sim::pg
