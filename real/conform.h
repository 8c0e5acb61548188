// real/conform.h: the simulated PostgreSQL against a real one, statement by statement.
//
// Given the statements a simulated execution ran (sim/pg/server/statement_log.h), conform() runs
// them again on real connections (one per simulated session, opened at its first
// statement with its application_name, closed where the simulation closed it), in the
// simulation's global order, with at most one statement in flight per connection (libpq's
// asynchronous API). After sending a statement it waits until the server either answers
// or shows the session waiting on a lock (pg_locks, granted = f, seen from an observer
// connection), and compares that with the simulation; where the simulation's statement
// ends, it compares the outcome (error SQLSTATE, value, row, WARNINGs) and the advisory
// pg_locks rows of every session (pids mapped, sessions mid-statement left out).
//
// Timing is not replayed: the real sessions run with lock_timeout, statement_timeout and
// deadlock checks off, and a statement the simulation ended by a timer (a timeout or the
// deadlock check) is cancelled at that point (it must then fail, and the locks must
// agree). A Bug #17686 phantom grant (a simulated fault) is compared as what it leaves:
// the session holds the lock, which the server shows as a plain grant. A statement that
// waited spans several simulated steps: an outcome that another session's half-done
// statement may have decided is counted as overlapped and not compared; if the server then
// goes another way (waits where the simulation did not), the replay stops there
// (diverged_at).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/sim/pg/server/statement_log.h"

namespace lockstep::real {

struct Disagreement {
  std::uint64_t step = 0;  // the simulation's step (as `lockstep replay` numbers them)
  std::string statement;   // "session 1002 (pre_tool_use#1): advisory_lock(1, 1)"
  std::string sim;
  std::string server;
};

struct ConformReport {
  int statements = 0;  // replayed
  int sessions = 0;
  int waits = 0;        // statements both sides queued behind a lock
  int cancelled = 0;    // ended by a timer in the simulation: cancelled on the server
  int phantoms = 0;     // phantom grants compared by their locks
  int lock_views = 0;   // pg_locks comparisons
  int overlapped = 0;   // outcomes not compared: another statement was half-way through (conform.cc)
  // Set when an overlapped statement went the other way on the server (it waited where the
  // simulation did not, or not where it did): the states part there, the replay stops at
  // that step, and what follows is not compared. Not a disagreement.
  std::optional<std::uint64_t> diverged_at;
  std::vector<Disagreement> disagreements;
};

struct ConformOptions {
  std::string conninfo;
  // How long to wait for the server to answer, or to show a wait, before calling it a
  // disagreement.
  Duration patience = std::chrono::seconds(5);
  bool stop_at_first = true;  // stop at the first disagreement
};

// Drops and recreates the row tables the log names (real/libpq_backend.h's schema) first.
// Throws std::runtime_error when the server cannot be reached.
ConformReport conform(const sim::pg::StatementLog& log, const ConformOptions& options);

}  // namespace lockstep::real
