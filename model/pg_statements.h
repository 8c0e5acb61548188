// model/pg_statements.h: the one table of the statements lockstep sends to PostgreSQL.
//
// Every operation of model/pg.h's Connection is one Stmt (a shared-mode lock is a statement
// of its own: another SQL function). Its row in the table gives its name (in traces, the
// statement log and conform's reports), the SQL it sends (a function, or the statement's
// shape; real/statements.h builds the text with parameters), whether it may wait for a
// lock (the thread Env's wait accounting, conform's wait detection) and what its result
// reads back as. The simulator, the libpq backend, the statement log, conform and the
// thread Env all take a Stmt and dispatch on it with a switch that has no default: a
// statement added here and handled somewhere not is a compile error (-Wswitch, -Werror).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "lockstep/model/pg.h"

namespace lockstep::pg {

enum class Stmt : std::uint8_t {
  advisory_lock,
  advisory_lock_shared,
  advisory_lock_timed,
  advisory_lock_timed_shared,
  try_advisory_lock,
  try_advisory_lock_shared,
  advisory_unlock,
  advisory_unlock_shared,
  advisory_unlock_all,
  advisory_xact_lock,
  advisory_xact_lock_shared,
  try_advisory_xact_lock,
  try_advisory_xact_lock_shared,
  set_lock_timeout,
  set_statement_timeout,
  read_row,
  insert_row,
  insert_row_if_absent,
  update_row,
  update_row_if,
  select_for_update,
  select_for_update_nowait,
  select_for_update_skip_locked,
  select_for_share,
  begin,
  commit,
  rollback,
  pg_locks,
  pg_terminate_backend,
  sql,    // SQL as written (Connection::exec, exec_prepared)
  close,  // the session ends (not SQL: the connection is closed)
};

// What a statement's result reads back as.
enum class Returns : std::uint8_t {
  nothing,    // a status
  boolean,    // "t" / "f"
  count,      // rows changed
  row,        // a row or none
  lock_rows,  // the monitoring query's rows
  rows,       // SQL's own result: its command tag and rows
};

struct StmtInfo {
  Stmt id;
  std::string_view name;
  std::string_view sql;  // the function called, or the statement's shape
  bool may_wait;         // may queue behind another session's lock
  Returns returns;
};

inline constexpr std::array<StmtInfo, 31> kStatements = {{
    {Stmt::advisory_lock, "advisory_lock", "pg_advisory_lock", true, Returns::nothing},
    {Stmt::advisory_lock_shared, "advisory_lock_shared", "pg_advisory_lock_shared", true, Returns::nothing},
    {Stmt::advisory_lock_timed, "advisory_lock_timed", "pg_advisory_lock", true, Returns::nothing},
    {Stmt::advisory_lock_timed_shared, "advisory_lock_timed_shared", "pg_advisory_lock_shared", true, Returns::nothing},
    {Stmt::try_advisory_lock, "try_advisory_lock", "pg_try_advisory_lock", false, Returns::boolean},
    {Stmt::try_advisory_lock_shared, "try_advisory_lock_shared", "pg_try_advisory_lock_shared", false, Returns::boolean},
    {Stmt::advisory_unlock, "advisory_unlock", "pg_advisory_unlock", false, Returns::boolean},
    {Stmt::advisory_unlock_shared, "advisory_unlock_shared", "pg_advisory_unlock_shared", false, Returns::boolean},
    {Stmt::advisory_unlock_all, "advisory_unlock_all", "pg_advisory_unlock_all", false, Returns::nothing},
    {Stmt::advisory_xact_lock, "advisory_xact_lock", "pg_advisory_xact_lock", true, Returns::nothing},
    {Stmt::advisory_xact_lock_shared, "advisory_xact_lock_shared", "pg_advisory_xact_lock_shared", true, Returns::nothing},
    {Stmt::try_advisory_xact_lock, "try_advisory_xact_lock", "pg_try_advisory_xact_lock", false, Returns::boolean},
    {Stmt::try_advisory_xact_lock_shared, "try_advisory_xact_lock_shared", "pg_try_advisory_xact_lock_shared", false,
     Returns::boolean},
    {Stmt::set_lock_timeout, "set_lock_timeout", "SET lock_timeout", false, Returns::nothing},
    {Stmt::set_statement_timeout, "set_statement_timeout", "SET statement_timeout", false, Returns::nothing},
    {Stmt::read_row, "read_row", "SELECT data FROM t WHERE id = $1", false, Returns::row},
    {Stmt::insert_row, "insert_row", "INSERT INTO t (id, data) VALUES ($1, $2)", true, Returns::nothing},
    {Stmt::insert_row_if_absent, "insert_row_if_absent",
     "WITH i AS (INSERT INTO t (id, data) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING 1) SELECT count(*) = 1 FROM i",
     true, Returns::boolean},
    {Stmt::update_row, "update_row", "UPDATE t SET data = data || $2 WHERE id = $1", true, Returns::count},
    {Stmt::update_row_if, "update_row_if", "UPDATE t SET data = data || $2 WHERE id = $1 AND data->>$3 = $4", true,
     Returns::count},
    {Stmt::select_for_update, "select_for_update", "SELECT data FROM t WHERE id = $1 FOR UPDATE", true, Returns::row},
    {Stmt::select_for_update_nowait, "select_for_update_nowait", "SELECT data FROM t WHERE id = $1 FOR UPDATE NOWAIT",
     false, Returns::row},
    {Stmt::select_for_update_skip_locked, "select_for_update_skip_locked",
     "SELECT data FROM t WHERE id = $1 FOR UPDATE SKIP LOCKED", false, Returns::row},
    {Stmt::select_for_share, "select_for_share", "SELECT data FROM t WHERE id = $1 FOR SHARE", true, Returns::row},
    {Stmt::begin, "begin", "BEGIN", false, Returns::nothing},
    {Stmt::commit, "commit", "COMMIT", false, Returns::nothing},
    {Stmt::rollback, "rollback", "ROLLBACK", false, Returns::nothing},
    {Stmt::pg_locks, "pg_locks", "the monitoring query over pg_locks", false, Returns::lock_rows},
    {Stmt::pg_terminate_backend, "pg_terminate_backend", "pg_terminate_backend", false, Returns::boolean},
    {Stmt::sql, "sql", "SQL as written (Connection::exec)", true, Returns::rows},
    {Stmt::close, "close", "(the connection closes)", false, Returns::nothing},
}};

// The table is in enumerator order, one row each (checked at compile time).
constexpr bool statement_table_in_order() {
  for (std::size_t i = 0; i < kStatements.size(); ++i) {
    if (static_cast<std::size_t>(kStatements[i].id) != i) return false;
  }
  return static_cast<std::size_t>(Stmt::close) + 1 == kStatements.size();
}
static_assert(statement_table_in_order(), "kStatements lists every Stmt once, in enumerator order");

constexpr const StmtInfo& info(Stmt s) { return kStatements[static_cast<std::size_t>(s)]; }
constexpr std::string_view name(Stmt s) { return info(s).name; }

// The statement of that name; nullopt for none.
constexpr std::optional<Stmt> stmt_named(std::string_view n) {
  for (const StmtInfo& i : kStatements) {
    if (i.name == n) return i.id;
  }
  return std::nullopt;
}

// The mode's form of an advisory statement: `exclusive` names the exclusive one, whose
// shared form follows it in the table.
constexpr Stmt in_mode(Stmt exclusive, LockMode mode) {
  return mode == LockMode::exclusive ? exclusive : static_cast<Stmt>(static_cast<std::uint8_t>(exclusive) + 1);
}
constexpr bool is_shared(Stmt s) { return name(s).ends_with("_shared"); }

}  // namespace lockstep::pg
