// model/sql/isolation_driver.h: isolationtester's run of one permutation's steps, written once
// for the simulated server (model/systems/sql_spec.h) and a real one (real/isolation_runner.h).
//
// It follows PostgreSQL 14's isolationtester (run_permutation, try_complete_step,
// try_complete_steps): each step is sent on its session's connection; a step seen waiting for
// a lock is shown "<waiting ...>" and the next one goes; after every step each waiting step is
// tried again, and shown "<... completed>" with its results once it finished; a step of a
// session still busy waits for that session first. Blocker annotations (spec.h's Blocker) keep
// a finished step shown waiting as isolationtester does. The output is its, byte for byte,
// given sessions that print results the same way.
#pragma once

#include <string_view>

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/model/sql/spec.h"

namespace lockstep::sql {

// The settings pg_regress gives every isolation test (PGTZ, PGDATESTYLE, PGOPTIONS), which
// both runners give every connection at its start (model/pg.h's PoolConfig::settings, libpq's
// options), so times print as in the expected files and RESET goes back to them.
inline std::vector<std::pair<std::string, std::string>> regress_settings() {
  return {{"TimeZone", "PST8PDT"}, {"DateStyle", "Postgres, MDY"}, {"IntervalStyle", "postgres_verbose"}};
}

// isolationtester's max_step_wait: a step waited for (its session's next step is due) that
// has not finished after this long is canceled, and the cancel is printed.
inline constexpr std::chrono::seconds kMaxStepWait{300};

// The sessions a permutation drives: a simulated pool or libpq connections.
class IsolationSessions {
 public:
  virtual ~IsolationSessions() = default;
  // Sends the step's SQL on session s, without waiting for it.
  virtual void send(std::size_t s, const SqlBlock& sql) = 0;
  // Waits for session s's step. Returns true once it has finished (its results ready). With
  // `may_block`, returns false instead when the step is seen waiting for a lock (polled as
  // isolationtester polls, every 10 ms); without it, waits until the step finishes, canceling
  // it (as PQcancel does) once it has waited the permutation's max_step_wait.
  virtual bool wait(std::size_t s, bool may_block) = 0;
  // When the latest wait canceled session s's step: the whole seconds it had waited then, as
  // isolationtester prints them. Cleared once read.
  virtual std::optional<int> canceled_after(std::size_t s) = 0;
  // Appends the finished step's results to `out` as isolationtester prints them.
  virtual void print_results(std::size_t s, std::string& out) = 0;
  // The notices session s has received so far (for `(STEP notices N)` blockers).
  virtual int notices(std::size_t s) const = 0;
  // One poll's pause (10 ms; virtual time on the simulation) while a finished step is held
  // back by its blockers; returns how long it paused.
  virtual std::chrono::nanoseconds pause() = 0;
  // The permutation's max_step_wait: a step held back twice that long ends the permutation.
  virtual std::chrono::seconds max_step_wait() const = 0;
};

// Runs the permutation's steps (every step named exists: parse_spec checks), appending to
// `out` from the first step on. Throws InputError naming the spec when steps block each
// other for good (isolationtester's "mutually-blocking steps"), or when a step its session
// must finish is held back by its blockers for twice max_step_wait (isolationtester's "step
// timed out": a `(STEP notices N)` whose notices never come).
void drive_permutation(const Spec& spec, const std::vector<PermutationStep>& steps, IsolationSessions& sessions, std::string& out);

}  // namespace lockstep::sql
