// real/confirm.h: confirmation runs: a scenario's actors on real threads against a real
// PostgreSQL, many times, with the same invariants the simulation checks.
//
// Each iteration drops the row tables (real/libpq_backend.h), builds a fresh Instance on a
// ThreadEnv (seeded jitter: seed + iteration), runs every actor on its own thread, hands
// every observed event to Instance::on_event in the order they happened, then asks at_end.
// The first violation of an iteration is kept with the history of events that led to it.
// Nothing here can prove the absence of a bug: it samples real interleavings; the
// simulation is what explores them all.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/system.h"
#include "lockstep/model/timing.h"
#include "lockstep/model/verdict.h"
#include "lockstep/real/thread_env.h"

namespace lockstep::real {

struct ConfirmOptions {
  std::string conninfo;
  int iterations = 20;
  std::uint64_t seed = 1;
  Duration max_jitter = std::chrono::microseconds(500);
  // An iteration still running after this long is reported as a hang (a deadlock, or a
  // wait the design never ends) and the run stops: threads cannot be stopped from outside.
  Duration iteration_limit = std::chrono::seconds(120);
  // The crash fault (Env::crash_points) in the actor's own thread, as the simulation has it
  // (ThreadEnvOptions::crashes): the first iteration crashes nothing and counts its crash
  // points; each later one crashes at one drawn uniformly (seeded) from as many as the most
  // an iteration passed. An iteration whose actors never reach the drawn point crashes
  // nothing, and is not counted as a crash. Off: crash_points does nothing.
  bool crashes = true;
  // Aimed runs: a simulated trace's acting actor per step (ModelReport::order, a trace's run
  // decisions), which every iteration's actors follow (ThreadEnvOptions::order). A step
  // still running after `blocked_after` counts as waiting for a lock: iterations try 10,
  // 2 and 50 ms in turn when it is zero (the default), so that slow statements and quick
  // lock waits are each read right in some iteration.
  std::vector<ActorId> aim{};
  Duration blocked_after{0};
  // The scenario's timing model, drawn on real threads (ThreadEnvOptions::timing).
  Timing timing;
  // The session faults (a scenario's backend_terminated and server_restart: PoolConfig) on
  // the server: the first iteration runs without them and counts the statements its actors
  // send on the faulty pools; each later one ends sessions before a statement drawn
  // uniformly (seeded) from that many, by pg_terminate_backend, by closing the client's
  // socket or by restarting the server, in turn (ThreadEnvOptions::fault_variant). Off:
  // no fault is injected.
  bool session_faults = true;
  // The server_restart fault's way to restart the server (ThreadEnvOptions::restart_server;
  // confirm --pg auto gives its throwaway server's); empty: that fault is not injected.
  std::function<bool()> restart_server;
  // End the run after the first iteration with a violation (`iterations` is then a bound):
  // a narrow race shows in a few of hundreds of iterations.
  bool until_violation = false;
  // With until_violation: only a violation of this invariant ends the run (empty: any). An
  // expected failure is hunted past another one that timing on a loaded machine shows first.
  std::string until_invariant;
  // Asked before each iteration: true ends the run there (Ctrl-C), `interrupted` set.
  std::function<bool()> stop_requested;
};

// The server or a session was lost during an iteration (real::connection_lost): that
// iteration is not counted and the run stops; the finished ones stand.
struct ServerLost {
  int iteration = 0;   // 1-based
  std::string actor;   // "" outside any actor (setting up, the end-of-iteration checks)
  std::string op;      // the statement, or "connect"
  std::string sqlstate;
  std::string message;
};

struct HistoryEntry {
  Time at{0};
  std::string actor;  // "" outside any actor
  std::string event;
  std::int64_t subject = 0;
  std::int64_t value = 0;
  std::string fields;  // the named fields as traces show them (event_values_text); "" for none
  // What it carries: its fields, or `subject value`.
  std::string values() const { return fields.empty() ? std::to_string(subject) + " " + std::to_string(value) : fields; }
};

struct ConfirmedViolation {
  int iteration = 0;  // 1-based
  Violation violation;
  std::vector<HistoryEntry> history;
  std::string fault;  // the session a fault ended in it (and how), or ""
};

struct ConfirmReport {
  int iterations = 0;   // finished
  bool hung = false;    // the last iteration did not finish within iteration_limit
  std::vector<ConfirmedViolation> violations;  // the first of each failing iteration
  std::map<std::string, int> by_invariant;     // failing iterations per invariant
  std::map<std::string, int> marks;            // Instance::marks() per iteration
  LockWaitStats memory_locks, pg_locks;
  CrashStats crashes;                          // the crash fault, over all iterations (points: the most one passed)
  int sessions_terminated = 0, sessions_closed = 0;  // the backend_terminated fault, over all iterations
  int server_restarts = 0;                            // the server_restart fault, over all iterations
  Duration total{0}, longest{0};               // wall time of the iterations
  // Aimed runs (ConfirmOptions::aim): the order's steps, and over all iterations those taken
  // at their turn and those skipped (their actor took another path).
  std::uint64_t aim_steps = 0, aim_followed = 0, aim_skipped = 0;
  bool interrupted = false;                    // stop_requested ended the run early
  std::optional<ServerLost> lost;              // the server or a session went away

  // No violation, no hang, no lost server, at least one iteration.
  bool passed() const { return violations.empty() && !hung && !lost && iterations > 0; }
  // A few lines: iterations, violations per invariant, the first one with the last events
  // before it, marks, and a lost server.
  std::string describe() const;
};

// Whether the iterations showed the verdict `kind` named `name` ("" names any): a
// violation of that invariant; a liveness verdict as that obligation still hot or late at
// the end, or an iteration that never finished (no progress within the limit); a livelock
// or a deadlock as an iteration that never finished; a pass as no violation at all.
inline bool shows(const ConfirmReport& r, Verdict kind, std::string_view name) {
  if (kind == Verdict::pass) return r.violations.empty() && !r.hung;
  if (r.hung && (kind == Verdict::liveness || kind == Verdict::livelock || kind == Verdict::deadlock)) return true;
  if (kind != Verdict::violation && kind != Verdict::liveness) return false;
  for (const ConfirmedViolation& v : r.violations) {
    if (v.violation.invariant == "hang" || v.violation.invariant == "model_error") continue;
    if (name.empty() || v.violation.invariant == name) return true;
  }
  return false;
}

// Runs `system` as above. `progress` (may be empty) is called after each iteration. Never
// throws for what the server does: a lost server ends the run with `lost` set.
ConfirmReport confirm(const System& system, const ConfirmOptions& options,
                      const std::function<void(const ConfirmReport&)>& progress = {});

}  // namespace lockstep::real
