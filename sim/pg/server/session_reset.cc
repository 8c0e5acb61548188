// sim/pg/server/session_reset.cc: RESET ALL and DISCARD on the simulated server, as PostgreSQL's
// ResetAllOptions and DiscardAll do them: the session's settings back to its connection's
// start (the display settings to the server's defaults, application_name to the pool's);
// DISCARD ALL, never in a transaction block (25001, a string's implicit block too), also
// forgets its prepared statements, UNLISTENs everything, releases its session advisory locks
// (pgbouncer's reset query ends a pooled client's locks), drops its pg_temp functions and
// forgets its sequences' currval.
#include "lockstep/sim/pg/server/connection.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

void SimConnection::reset_settings() {
  session_settings_.lock_timeout = lock_timeout_ = Duration{0};
  session_settings_.statement_timeout = statement_timeout_ = Duration{0};
  session_settings_.idle_timeout = idle_timeout_ = Duration{0};
  session_settings_.idle_session_timeout = idle_session_timeout_ = Duration{0};
  session_settings_.deadlock_timeout = deadlock_timeout_ = config_.deadlock_timeout;
  session_settings_.planner_off = planner_off_ = 0;
  for (const std::string& name : placeholders_) session_settings_.custom[name] = custom_[name] = "";  // a placeholder's default
  style_ = start_style_;
  session_.application_name = config_.application_name;
  if (style_of_session_) *style_of_session_ = {style_, session_.application_name};
}

Result<Rows> SqlRun::statement(const sql::SessionReset& r) {
  using Kind = sql::SessionReset::Kind;
  SimConnection::Statement guard(c_);
  const std::string tag = sql::Statement{.body = r}.tag();
  const std::string what = r.kind == Kind::reset_all ? "RESET ALL" : tag;
  if (nested_) throw SqlError("0A000", fmt::format("{} in a function is not in lockstep's SQL subset (docs/sql.md)", what));
  const bool in_block = c_.session_.in_transaction;
  const bool all = r.kind == Kind::discard_all;
  // DISCARD ALL lets go of the session's advisory locks in its step (and queues UNLISTEN * for
  // its commit: the notification object).
  const SimConnection::Release session_locks{.session_scope = true};
  Footprint fp;
  if (all && !in_block) {
    fp = c_.release_footprint(session_locks);
    add_object(fp, server_.notify_object());
  }
  if (auto refused = begin("sql_reset", fp, 0, false)) return *refused;
  if (all && in_block) throw SqlError("25001", "DISCARD ALL cannot run inside a transaction block");  // PreventInTransactionBlock
  // The display settings are undone by an implicit block's rollback only; a temporary object's
  // drop is a catalog change the transaction would undo.
  const bool style_change = r.kind == Kind::reset_all || r.kind == Kind::discard_temp;
  if (style_change && in_block && (!c_.implicit_block_ || r.kind == Kind::discard_temp)) {
    throw SqlError("0A000", fmt::format("{} inside a transaction block is not in lockstep's SQL subset (docs/sql.md)", what));
  }
  if (r.kind == Kind::reset_all || all) c_.reset_settings();
  if (r.kind == Kind::discard_sequences || all) c_.currvals_.clear();
  if (r.kind == Kind::discard_temp || all) c_.session_.temp_functions.clear();  // (its schema stays: 42883 after, not 3F000)
  if (all) {
    c_.prepared_.clear();
    c_.queue_listen(false, "");
    if (s_.logging()) s_.note_detail(c_.release_detail(session_locks));
    c_.apply_release(session_locks);
  }
  return done(Rows{{}, {}, tag});
}

}  // namespace lockstep::sim::pg
