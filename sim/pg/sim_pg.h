// sim/pg/sim_pg.h: a simulated PostgreSQL server behind model/pg.h, for one execution.
//
// Every statement is a visible operation on the scheduler with the footprint of the lock it
// touches. A blocking advisory lock is two steps: the request (granted at once, or queued),
// then the wait, parked until the releasing backend grants it (sim/pg/lock_table.h) or its
// lock_timeout / statement_timeout fires (a timer transition: in untimed mode at any
// moment of the wait). With PoolConfig::phantom_grant, a timeout that fires after the grant
// returns 55P03 with the lock held, as Bug #17686 does; without it the grant wins. A waiter
// checks once for a deadlock, deadlock_timeout into its wait (a timer too); on a cycle it
// gets 40P01 and keeps the session locks it holds. With backend_terminated, any one
// statement may find its backend killed (a recorded choice).
// COMMIT, ROLLBACK, pg_advisory_unlock_all and closing release their locks one key per
// step (a footprint names one object): a sound over-approximation of the atomic release.
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "model/pg.h"
#include "sim/pg/lock_table.h"
#include "sim/scheduler.h"

namespace lockstep::sim::pg {

// A row's committed version, and the versions transactions wrote but did not commit.
struct RowState {
  std::optional<lockstep::pg::Row> committed;
  std::map<int, std::optional<lockstep::pg::Row>> pending;  // per session
};

class Server {
 public:
  explicit Server(Scheduler& s) : s_(s), pool_object_(s.new_object("pool")) {}
  Scheduler& scheduler() { return s_; }
  LockTable& locks() { return locks_; }
  LockTable& row_locks() { return row_locks_; }
  // The lock-table key and scheduler object of a row (tables numbered as first used).
  AdvisoryKey row_key(std::string_view table, std::int64_t id);
  ObjectId row_object(std::string_view table, std::int64_t id);
  RowState& row(std::string_view table, std::int64_t id) { return tables_[std::string(table)][id]; }
  std::map<std::string, std::map<std::int64_t, RowState>>& tables() { return tables_; }
  int open_session() { return next_pid_++; }
  // The backend_terminated fault strikes at most once per execution.
  bool termination_used() const { return termination_used_; }
  void use_termination() { termination_used_ = true; }
  ObjectId object_for(AdvisoryKey key);
  ObjectId pool_object() const { return pool_object_; }

 private:
  Scheduler& s_;
  LockTable locks_;
  LockTable row_locks_;
  std::map<AdvisoryKey, ObjectId> objects_;
  std::map<std::string, int> table_numbers_;
  std::map<std::pair<std::string, std::int64_t>, ObjectId> row_objects_;
  std::map<std::string, std::map<std::int64_t, RowState>> tables_;
  int next_pid_ = 1001;
  ObjectId pool_object_;
  bool termination_used_ = false;
};

std::unique_ptr<lockstep::pg::Pool> make_pool(Server& server, const lockstep::pg::PoolConfig& config);

}  // namespace lockstep::sim::pg
