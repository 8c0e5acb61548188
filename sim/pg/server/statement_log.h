// sim/pg/server/statement_log.h: what the simulated server did, statement by statement, for the
// conformance runner (real/conform.h) to do again on a real server.
//
// With a log attached (SimEnv::set_statement_log), every statement of every session is
// recorded once it returns: its operation and arguments, the scheduler steps at which it
// began and ended, whether it was queued behind a lock at its first step, whether a timer
// ended it (lock_timeout, statement_timeout, the deadlock check) or Bug #17686's phantom
// grant, its outcome, the WARNINGs it raised, and the pg_locks advisory rows right after
// it. SQL as written (exec, exec_prepared) is recorded as Stmt::sql with its text and
// parameters. A statement the end of the execution interrupted is recorded as unfinished. Closing a session is recorded too (op "close"). Entries are in the order statements
// returned; `first_step` / `last_step` give the global order of the simulation.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockstep/model/pg.h"
#include "lockstep/model/pg_statements.h"

namespace lockstep::sim::pg {

struct LoggedStatement {
  std::uint64_t first_step = 0;  // the step that began it (that step's number)
  std::uint64_t last_step = 0;   // the step that ended it
  int pid = 0;                   // the simulated session
  std::string application_name;
  // The statement (model/pg_statements.h); Stmt::close when the session closed.
  lockstep::pg::Stmt op = lockstep::pg::Stmt::close;
  std::optional<lockstep::pg::AdvisoryKey> key;
  std::string table;
  std::int64_t id = 0;
  lockstep::pg::Row values;
  std::string column, expected;  // update_row_if's condition
  Duration timeout{0};
  int target_pid = 0;  // pg_terminate_backend's argument
  std::string sql;     // Stmt::sql: the text as written (a prepared statement's, for exec_prepared)
  std::vector<lockstep::pg::Param> params;

  bool waited = false;   // queued behind another session's lock at its first step
  bool by_timer = false; // ended by lock_timeout, statement_timeout or the deadlock check
  bool phantom = false;  // Bug #17686: the timeout won after the lock was granted
  bool unfinished = false;  // the execution ended while it ran (waiting, say): no outcome
  std::optional<lockstep::pg::Error> error;
  std::string value;     // "t" / "f", a count, a row as JSON ("" for none), pg_locks rows, rows_text
  std::vector<lockstep::pg::Error> warnings;
  std::vector<lockstep::pg::AdvisoryLockRow> locks_after;
};

using StatementLog = std::vector<LoggedStatement>;

// SQL's result in one line, the same for both servers: its command tag, then each row's
// values in parentheses ("SELECT 2: (1, a), (2, NULL)").
inline std::string rows_text(const lockstep::pg::Rows& r) {
  std::string out = r.tag;
  for (std::size_t i = 0; i < r.rows.size(); ++i) {
    out += i == 0 ? ": (" : ", (";
    for (std::size_t j = 0; j < r.rows[i].size(); ++j) out += (j == 0 ? "" : ", ") + r.rows[i][j].value_or("NULL");
    out += ')';
  }
  return out;
}

}  // namespace lockstep::sim::pg
