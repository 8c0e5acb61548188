// real/thread_env.h: the real Env (model/env.h): threads, steady_clock, real flock(2).
//
// The same model code that runs on simulated fibers runs here on one OS thread per actor:
//  now()        steady_clock since the Env was made;   sleep_for  a real sleep
//  Mutex        std::timed_mutex, owned (unlock by another actor is a ModelError)
//  RWMutex      Go's sync.RWMutex: a waiting writer holds off new readers
//  Lock         asyncio.Lock: not reentrant, not owned
//  File         open(2) of a file in the Env's private directory, flock(2) on it
//  filesystem   real/posix_fs.h in <private directory>/fs
//  SharedVar    std::atomic (sequentially consistent)
//  new_pg_pool  the libpq backend (real/libpq_backend.h) against `conninfo`
//  random / choose  a seeded generator (runs are not reproducible: the threads are real)
// Every visible operation first sleeps a seeded random jitter in [0, max_jitter), so that
// repeated runs try different interleavings. observe() hands each event to the sink under
// one mutex, in the order the events happened. Lock statistics (how often an acquisition
// had to wait, and how long) are collected for the confirmation report.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>

#include "lockstep/model/env.h"
#include "lockstep/model/system.h"
#include "lockstep/model/pg.h"
#include "lockstep/model/pg_statements.h"
#include "lockstep/model/timing.h"
#include "lockstep/real/schedule_gate.h"

namespace lockstep::real {

struct ThreadEnvOptions {
  std::string conninfo;           // for new_pg_pool; empty: libpq's PG* environment
  std::uint64_t seed = 1;
  Duration max_jitter = std::chrono::microseconds(500);
  // Aimed runs (confirm --aim): the acting actor of each step of a simulated trace; the
  // actors take their visible operations in that order (real/schedule_gate.h: a step still
  // running after `blocked_after` counts as waiting for a lock), without jitter, then run
  // free. Empty: free from the start.
  std::vector<ActorId> order{};
  Duration blocked_after = std::chrono::milliseconds(10);
  Duration missing_after = std::chrono::milliseconds(100);
  // A blocking pg statement (advisory_lock, select_for_update, ...) counts as a lock wait
  // when its round trip exceeds this: an uncontended one takes well under a millisecond.
  Duration pg_wait_threshold = std::chrono::milliseconds(2);
  // The crash fault (Env::crash_points) as the simulation has it, in the actor's own thread.
  // Off: crash_points does nothing. On: from crash_points(kind) to no_crash_points() each
  // visible operation of the actor is a crash point (but a release, an observation, or one
  // while it unwinds), counted over the iteration's armed actors in the order they happen;
  // the crash_at-th (1-based; 0: none) crashes instead of running: its actor unwinds with
  // Crashed{kind} and is disarmed, as in the simulation. A machine crash is its actor's
  // alone here: other actors run on and the files stay (the page cache survives).
  bool crashes = false;
  std::uint64_t crash_at = 0;
  // The session faults on the real server (PoolConfig::backend_terminated and
  // server_restart, as the simulation's): the fault_at-th statement (1-based) that actors
  // send on such pools finds its session ended first; 0: never. How: one of the ways the
  // pool's faults allow (backend_terminated: terminate, close; server_restart with
  // restart_server: restart), the (fault_variant mod their number)-th. The lost
  // connections that follow are the fault's doing, not a lost server (lost_connection()):
  // the struck actor's, and after a restart everyone's.
  enum class SessionFault {
    terminate,  // SELECT pg_terminate_backend(pid, 5000) on a connection of its own
    close,      // the client closes its socket (real::close_socket), as a crashed client
    restart,    // restart_server(): every session ends
  };
  std::uint64_t fault_at = 0;
  std::uint64_t fault_variant = 0;
  // Restarts the server and waits until it accepts connections (confirm --pg auto:
  // pg_ctl restart -m fast on its throwaway server); false when it failed. Empty: no restart.
  std::function<bool()> restart_server;
  // The scenario's timing model (model/timing.h) on real threads, drawn (seeded) where the
  // simulation explores: each sleep lasts within its jitter range; each actor's now() is
  // behind, right or ahead by skew_ms; before a statement an actor may pause for stall_ms
  // (probability 1/4, at most `stalls` times in this env). Statement latency is the real one.
  Timing timing;
};

// The session faults in one ThreadEnv.
struct SessionFaultStats {
  std::uint64_t statements = 0;  // the actors' statements on pools with a fault
  int struck = 0;                // sessions ended by it (0 or 1)
  ThreadEnvOptions::SessionFault kind = ThreadEnvOptions::SessionFault::terminate;
  ActorId actor = -1;            // whose session it ended
  int pid = 0;                   // its backend
  std::string how;               // "pg_terminate_backend ended its backend", ...
};

// The crash fault in one ThreadEnv (ThreadEnvOptions::crashes).
struct CrashStats {
  int armed = 0;                // crash_points() calls
  std::uint64_t points = 0;     // crash points passed (the next iteration draws among them)
  int injected = 0;             // crashes thrown (0 or 1)
  int finished = 0;             // armed runs that reached no_crash_points() uncrashed
};

// Unwinds an abandoned actor (ThreadEnv::abandon). Not a std::exception;
// ThreadEnv::run_actors catches it.
struct ActorDone {};

// How often acquisitions waited, and for how long in all.
struct LockWaitStats {
  std::uint64_t acquisitions = 0;
  std::uint64_t waits = 0;
  Duration waited{0};
  Duration longest{0};
};

class ThreadEnv final : public Env {
 public:
  using EventSink = std::function<void(ActorId actor, Time at, const Event& event)>;

  ThreadEnv(ThreadEnvOptions options, EventSink sink);
  ~ThreadEnv() override;  // removes the private directory

  // Runs `body(actor)` for actors 0..n-1, each on its own thread, and joins them. The
  // calling thread is "outside any actor". An exception thrown by a body never escapes
  // its thread: once all are joined, the first one is rethrown here.
  void run_actors(int n, const std::function<void(ActorId)>& body);

  // The first statement of this Env's pools that failed because the session or server
  // was gone (real::connection_lost), and the actor that ran it (-1: outside any actor).
  struct LostConnection {
    ActorId actor = -1;
    std::string op;
    pg::Error error;
  };
  std::optional<LostConnection> lost_connection() const;

  Time now() override;  // the actor's clock: the timing model's skew included
  Time now_without_skew() const { return wall_now(); }
  void sleep_for(Duration duration) override;
  ActorId current_actor() override;
  static bool in_actor();  // whether the calling thread runs an actor
  std::uint64_t random(std::uint64_t bound) override;
  int choose(int n, std::string_view label) override;
  using Env::observe;
  void observe(const Event& event) override;
  // Progress obligations in real time: kept, so that the end of an iteration can judge them
  // as the simulation does (obligation_at_end).
  void hot(std::string_view obligation, Duration within) override;
  void cold(std::string_view obligation) override;
  // A liveness violation when the iteration ends: an obligation still hot once every actor
  // finished, or one met later than its `within` (wall time); nullopt otherwise.
  std::optional<Violation> obligation_at_end() const;

  std::unique_ptr<Mutex> new_mutex(std::string name) override;
  std::unique_ptr<RWMutex> new_rwmutex(std::string name) override;
  std::unique_ptr<Lock> new_lock(std::string name) override;
  std::unique_ptr<SharedVar> new_shared_var(std::string name, std::int64_t initial) override;
  std::unique_ptr<File> open_file(std::string path) override;
  std::unique_ptr<pg::Pool> new_pg_pool(const pg::PoolConfig& config) override;
  // real/posix_fs.h rooted in <private directory>/fs (empty at the start).
  Filesystem& filesystem() override;

  void crash_points(CrashKind kind) override;
  void no_crash_points() override;
  CrashStats crash_stats() const;
  SessionFaultStats session_fault_stats() const;
  std::uint64_t fault_at() const { return options_.fault_at; }

  // In-memory locks and flock (what this Env's objects saw), and pg lock statements.
  LockWaitStats memory_lock_stats() const;
  LockWaitStats pg_lock_stats() const;

  // Gives up on the actors (confirm's hung iteration): from now on each visible operation
  // but a statement (which may run in a destructor) unwinds its actor (ActorDone) instead of
  // running, so that actors that loop end; those blocked in a wait stay blocked.
  void abandon() { abandoned_ = true; }

  // How much of options().order the actors followed (ScheduleGate); 0, 0 without one.
  std::size_t followed_steps() const { return gate_ ? gate_->followed() : 0; }
  std::size_t skipped_steps() const { return gate_ ? gate_->skipped() : 0; }

  // Internal, for the objects: sleeps the jitter (unwinds an abandoned actor); records an
  // acquisition.
  void jitter(bool may_unwind = true);
  void record_acquisition(bool waited, Duration how_long);

 private:
  void record_pg(std::optional<pg::Stmt> op, Duration took);
  // Before an actor's statement on a pool with the fault: counts it, and at fault_at ends
  // its session (real/thread_env_fault.cc).
  void maybe_end_session(pg::Connection& c, const std::vector<ThreadEnvOptions::SessionFault>& ways);
  // Whether the fault may strike before `statement` (StatementHooks::before's): the code's
  // own statements except COMMIT and ROLLBACK, as in the simulation (PoolConfig).
  static bool may_end_session_at(std::string_view statement);
  // A crash point of the calling actor (real/thread_env_crash.cc): throws Crashed at the
  // drawn one. disarm_crash_points: the actor ended.
  void maybe_crash();
  static void disarm_crash_points();
  Time wall_now() const;  // since start_, without the actor's clock skew
  void maybe_stall();
  Time skewed_now();  // the wall clock plus the actor's skew

  ThreadEnvOptions options_;
  std::atomic<bool> abandoned_{false};
  std::unique_ptr<ScheduleGate> gate_;  // when options_.order is not empty
  EventSink sink_;
  std::chrono::steady_clock::time_point start_;
  std::filesystem::path dir_;
  mutable std::mutex m_;  // guards rng_, the stats, lost_, and serialises sink_
  std::mt19937_64 rng_;
  LockWaitStats memory_, pg_;
  std::optional<LostConnection> lost_;
  SessionFaultStats fault_;
  std::set<ActorId> faulted_;  // actors whose session the fault ended
  bool restarted_ = false;     // the server was restarted: every lost connection is the fault's
  std::map<ActorId, Duration> skew_;  // the timing model's clock skew, per actor (guarded by m_)
  int stalls_taken_ = 0;              // the timing model's stalls so far (guarded by m_)
  std::unique_ptr<Filesystem> fs_;
  CrashStats crashes_;  // guarded by m_
  struct HotObligation {
    std::string name;
    Time since{0};
    Duration within = Duration::max();
  };
  std::vector<HotObligation> hot_;     // guarded by m_
  std::optional<Violation> late_;      // the first obligation met too late, guarded by m_
};

}  // namespace lockstep::real
