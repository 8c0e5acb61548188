// sim/sched/sim_env.h: the simulated Env: every operation a scheduling point of a Scheduler.
//
// Object semantics (each one a visible operation with a footprint on its object):
//  Mutex     lock waits until free (then one step); not reentrant: relocking waits forever.
//  RWMutex   Go's sync.RWMutex: a writer that finds the lock busy first announces itself
//            (one step), then waits (a second step); from the announcement on, new readers
//            wait. Owned: unlock / runlock by an actor that does not hold it is a ModelError.
//  Lock      asyncio.Lock: not reentrant, not owned; release of an unlocked Lock is an error.
//  File      flock(2) per open file description; a mode change drops the old lock first, so
//            a failed LOCK_NB upgrade leaves no lock at all, as on Linux.
//  SharedVar sequentially consistent load / store / compare-and-swap.
//  Filesystem  sim/fs/sim_fs.h: one tree per execution, with what a machine crash keeps.
// Time is the scheduler's virtual clock; random() is seeded per execution.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/sim/pg/server/statement_log.h"
#include "lockstep/sim/sched/scheduler.h"

namespace lockstep::sim {

class SimEnv final : public Env {
 public:
  SimEnv();
  ~SimEnv() override;

  // Called by the scheduler before each execution builds its instance.
  void begin_execution(Scheduler& scheduler);
  Scheduler& scheduler() { return *scheduler_; }
  // Records the simulated PostgreSQL's statements of the executions to come (nullptr: off).
  void set_statement_log(pg::StatementLog* log) { statements_ = log; }

  // The actor's clock; with the timing model's stalls left, then an explored stall (model/timing.h).
  Time now() override;
  void sleep_for(Duration duration) override;
  ActorId current_actor() override;
  std::uint64_t random(std::uint64_t bound) override;
  int choose(int n, std::string_view label) override;
  using Env::observe;
  void observe(const Event& event) override;
  void hot(std::string_view obligation, Duration within) override;
  void cold(std::string_view obligation) override;

  std::unique_ptr<Mutex> new_mutex(std::string name) override;
  std::unique_ptr<RWMutex> new_rwmutex(std::string name) override;
  std::unique_ptr<Lock> new_lock(std::string name) override;
  std::unique_ptr<SharedVar> new_shared_var(std::string name, std::int64_t initial) override;
  std::unique_ptr<File> open_file(std::string path) override;
  std::unique_ptr<lockstep::pg::Pool> new_pg_pool(const lockstep::pg::PoolConfig& config) override;
  Filesystem& filesystem() override;
  void crash_points(CrashKind kind) override;
  void no_crash_points() override;

  // Inside the crashing step (Scheduler::maybe_crash): a machine crash reverts the
  // filesystem to what survives, explored (sim/fs/sim_fs.h).
  void crash(CrashKind kind);

  // The faults the simulated world injected in this execution, named as the pool option
  // that enables them ("backend_terminated"), for the execution's marks.
  std::vector<std::string> injected_faults() const;

  // The flock state of one path (what an inode's lock list is to the kernel).
  struct Inode;

 private:
  Time clock();  // the server's clock plus the actor's skew (an explored choice at its first read)
  Scheduler* scheduler_ = nullptr;
  std::map<std::string, std::unique_ptr<Inode>> inodes_;  // per execution
  std::unique_ptr<class PgServerHolder> pg_;              // the simulated PostgreSQL, per execution
  std::unique_ptr<class SimFilesystem> fs_;               // per execution, made on first use
  std::vector<CrashKind> crashes_;                        // in this execution
  int next_file_ = 0;
  pg::StatementLog* statements_ = nullptr;
  // The timing model's clock skew (model/timing.h): each actor's offset from the server's
  // clock, chosen at its first Env::now of the execution.
  std::array<std::optional<Duration>, kMaxActors> skew_{};
};

}  // namespace lockstep::sim
