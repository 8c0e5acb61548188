// sim/pg/server/connection.cc: a session's own statements (timeouts, pg_locks, pg_terminate_backend)
// and the step every statement takes through the scheduler.
#include "lockstep/sim/pg/server/connection.h"

namespace lockstep::sim::pg {

Status SimConnection::set_lock_timeout(Duration t) { return set_timeout(Timeout::lock, t, false); }

Status SimConnection::set_statement_timeout(Duration t) { return set_timeout(Timeout::statement, t, false); }

Status SimConnection::set_timeout(Timeout which, Duration t, bool local) {
  Statement st(*this);
  const std::string_view verb = which == Timeout::lock        ? name(Stmt::set_lock_timeout)
                                : which == Timeout::statement ? name(Stmt::set_statement_timeout)
                                : which == Timeout::deadlock  ? "set_deadlock_timeout"
                                : which == Timeout::idle      ? "set_idle_in_transaction_session_timeout"
                                                              : "set_idle_session_timeout";
  const OpDesc first{verb, {}, std::chrono::duration_cast<std::chrono::milliseconds>(t).count(), true};
  if (auto refused = begin_statement(first, false)) return *refused;
  apply_timeout(which, t, local);
  return {};
}

void SimConnection::apply_timeout(Timeout which, Duration t, bool local) {
  if (local && !session_.in_transaction && !in_set_config_) {
    // As the server says: a WARNING, and nothing changes.
    warnings_.push_back({"25P01", "SET LOCAL can only be used in transaction blocks"});
    return;
  }
  if (!local) session_settings_.of(which) = t;
  (which == Timeout::lock ? lock_timeout_ : which == Timeout::statement ? statement_timeout_ : which == Timeout::deadlock ? deadlock_timeout_ : which == Timeout::idle ? idle_timeout_ : idle_session_timeout_) = t;
}

void SimConnection::set_style(bool local, const std::function<void(sql::SessionStyle&, std::string&)>& change) {
  if (local && !session_.in_transaction) {
    if (!in_set_config_) warnings_.push_back({"25P01", "SET LOCAL can only be used in transaction blocks"});
    return;
  }
  if (session_.in_transaction && !style_at_block_) style_at_block_.emplace(style_, session_.application_name);
  if (local && !style_of_session_) style_of_session_.emplace(style_, session_.application_name);
  if (!local && style_of_session_) change(style_of_session_->first, style_of_session_->second);
  change(style_, session_.application_name);
}

Status SimConnection::set_custom(const std::string& name, std::optional<std::string> value, bool local) {
  Statement st(*this);
  if (auto refused = begin_statement({"set_custom", {}, 0, true}, false)) return *refused;
  if (local && !session_.in_transaction && !in_set_config_) {
    warnings_.push_back({"25P01", "SET LOCAL can only be used in transaction blocks"});
    return {};
  }
  placeholders_.insert(name);  // defined from now on, whatever becomes of the transaction
  if (!local) session_settings_.custom[name] = value.value_or("");
  custom_[name] = value.value_or("");
  return {};
}

std::optional<std::string> SimConnection::custom_setting(const std::string& name) const {
  if (const auto it = custom_.find(name); it != custom_.end()) return it->second;
  if (placeholders_.contains(name)) return std::string();
  return std::nullopt;
}

Status SimConnection::set_planner_switch(int which, bool on, bool local) {
  Statement st(*this);
  if (auto refused = begin_statement({"set_planner_switch", {}, which, true}, false)) return *refused;
  if (local && !session_.in_transaction) {
    warnings_.push_back({"25P01", "SET LOCAL can only be used in transaction blocks"});
    return {};
  }
  const auto set = [&](std::uint8_t& bits) { bits = on ? bits & ~(1U << which) : bits | (1U << which); };
  if (!local) set(session_settings_.planner_off);
  set(planner_off_);
  return {};
}

std::optional<Error> SimConnection::idle_timeout_refusal() const {
  const Duration limit = session_.in_transaction ? idle_timeout_ : idle_session_timeout_;
  if (!idle_since_ || limit.count() == 0 || !s_.in_actor()) return std::nullopt;
  const bool timed = s_.time_mode() == TimeMode::timed;
  if (timed && s_.now() - *idle_since_ <= limit) return std::nullopt;
  return Error{"0A000", fmt::format("a session idle {} {} its {} ({} ms: the server ends the session) is not in lockstep's SQL "
                                    "subset (docs/sql.md): {}",
                                    session_.in_transaction ? "in a transaction" : "outside a transaction",
                                    timed ? "after a typed operation longer than" : "while untimed time may pass",
                                    session_.in_transaction ? "idle_in_transaction_session_timeout" : "idle_session_timeout",
                                    std::chrono::duration_cast<std::chrono::milliseconds>(limit).count(),
                                    timed                      ? "its SQL text goes idle as the server's does, the typed operations do not"
                                    : session_.in_transaction ? "explore in timed mode, or send the transaction as one string"
                                                              : "explore in timed mode")};
}

void SimConnection::end_idle_sessions() {
  if (s_.in_actor() && server_.next_idle_end() <= s_.now()) {
    // Sessions idle past their timeout were ended then; nothing but a statement (this one,
    // or a lock wait's timer) could tell, so this step ends them, and writes the server.
    // (Whether one is due changes only as time moves on, or by a step that ended them.)
    s_.also_touch_domain();
    server_.end_idle_sessions(s_.now());
    if (s_.logging()) s_.note_detail("idle timeouts: sessions idle past theirs ended");
  }
  if (session_.idle_until != kForever && s_.in_actor()) {
    // No longer idle: a lock waiter's timer counts to its deadline no more (what a waiter
    // reads: the step writes the server).
    s_.also_touch_domain();
    session_.idle_until = kForever;
  }
}


namespace {
// pg_sleep's wait: its time, or a pg_cancel_backend / pg_terminate_backend of its session
// (the server's pg_sleep checks for interrupts as it sleeps).
class SleepEnds final : public WaitCondition {
 public:
  explicit SleepEnds(const Session& s) : s_(s) {}
  bool ready(ActorId) const override { return s_.canceled || s_.terminated; }
  std::string describe(ActorId) const override { return "its pg_sleep to end"; }

 private:
  const Session& s_;
};
}  // namespace

Status SimConnection::sleep_statement(Duration d) {
  Statement st(*this);
  const std::int64_t ms = std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
  if (auto refused = begin_statement({"pg_sleep", {}, ms, true})) return *refused;
  const auto [timeout, started] = statement_limit();
  const Duration left = timeout - (s_.now() - started);  // statement_timeout counts from the statement's start
  const bool canceled = timeout.count() > 0 && left < d;
  const Duration wait = canceled ? std::max(left, Duration{0}) : d;
  const SleepEnds ends(session_);
  {
    struct Sleeping {  // also when the actor unwinds from the wait
      bool& flag;
      explicit Sleeping(bool& f) : flag(f) { flag = true; }
      ~Sleeping() { flag = false; }
      Sleeping(const Sleeping&) = delete;
      Sleeping& operator=(const Sleeping&) = delete;
    } sleeping(session_.sleeping);
    step({"pg_sleep_end", {}, ms, true}, &ends, wait);
  }
  if (session_.terminated) return terminated();
  if (session_.canceled) {
    session_.canceled = false;
    s_.note_result({Kind::failed});
    if (s_.logging()) s_.note_detail("57014 canceled");
    return abort_with({std::string(sqlstate::kQueryCanceled), "canceling statement due to user request"});
  }
  if (canceled) {
    last_.by_timer = true;
    s_.note_result({Kind::timeout, 0});
    if (s_.logging()) s_.note_detail("57014 statement_timeout");
    return abort_with({std::string(sqlstate::kQueryCanceled), "canceling statement due to statement timeout"});
  }
  s_.note_result({Kind::woke});
  return {};
}

Result<std::vector<AdvisoryLockRow>> SimConnection::advisory_locks() {
  Statement st(*this);
  const OpDesc first{name(Stmt::pg_locks), whole_server(Access::read), pid_, true};
  if (auto refused = begin_statement(first)) return *refused;
  std::vector<AdvisoryLockRow> rows = server_.advisory_lock_rows(s_.now());
  s_.note_result({Kind::value, static_cast<std::int64_t>(rows.size())});
  return rows;
}

Result<Session*> SimConnection::signal_step(std::string_view verb, int pid) {
  const OpDesc first{verb, whole_server(Access::write), pid, true};
  if (auto refused = begin_statement(first)) return *refused;
  Session* victim = server_.live_session(pid);
  s_.note_result({Kind::value, victim != nullptr ? 1 : 0});
  if (victim == nullptr) {
    warnings_.push_back({std::string(sqlstate::kWarning), fmt::format("PID {} is not a PostgreSQL backend process", pid)});
  }
  return victim;
}

Result<bool> SimConnection::cancel_backend(int pid) {
  Statement st(*this);
  const Result<Session*> victim = signal_step("pg_cancel_backend", pid);
  if (!victim.ok()) return victim.error();
  if (victim.value() == nullptr) return false;
  server_.cancel(*victim.value());
  return true;
}

Result<bool> SimConnection::terminate_backend(int pid) {
  Statement st(*this);
  const Result<Session*> found = signal_step(name(Stmt::pg_terminate_backend), pid);
  if (!found.ok()) return found.error();
  Session* victim = found.value();
  if (victim == nullptr) return false;
  server_.terminate(*victim);
  if (victim == &session_) {
    // Its own backend: this statement ends with it, and libpq reports the connection lost
    // without a SQLSTATE, as after an idle termination (checked by lockstep conform).
    session_.terminated_idle = true;
    return terminated();
  }
  return true;
}

Wake SimConnection::step(OpDesc op, const WaitCondition* guard, Duration timeout, bool server_timer) {
  op.footprint.domain = server_.domain();
  if ((op.narrows && !op.tries) || op.handed_over) op.may_write = may_write_;  // (a lock call's try in WHERE: not)
  const Wake wake = server_timer ? s_.yield_exact(op, guard, timeout) : s_.yield(op, guard, timeout);
  last_step_ = {op.footprint, s_.step_count()};
  if (in_statement_ && !session_.active && !last_.first_step) {
    session_.active = true;
    session_.query_start = s_.now();
    session_.query.assign(in_query_string_ && !string_text_.empty() ? string_text_ : query_text_);
    last_.first_step = s_.step_count();
  }
  return wake;
}

namespace {
const TimerOnly kRoundTrip("its stall or round trip to end");
}  // namespace

void SimConnection::statement_timing() {
  const Timing& t = s_.limits().timing;
  if (!s_.in_actor()) return;
  Duration wait{0};
  const bool stalled = s_.choose_stall("");
  if (stalled) wait += std::chrono::milliseconds(t.stall_ms);
  if (t.statement_high > Duration{0}) {
    Duration trip = t.statement_low;
    if (t.statement_low != t.statement_high) {
      s_.touch_pending_timers();  // a round trip of 0 arms no timer: the step's footprint is the same for either value
      if (s_.choose(2, "latency", /*keeps_footprint=*/true) == 1) trip = t.statement_high;
      s_.describe_choice("round trip " + duration_text(trip));
    }
    wait += trip;
  }
  if (wait <= Duration{0}) return;
  const std::int64_t us = std::chrono::duration_cast<std::chrono::microseconds>(wait).count();
  s_.yield_exact({stalled ? "stall" : "round_trip", {}, us, true}, &kRoundTrip, wait);
  s_.note_result({Kind::woke});
}

std::optional<Error> SimConnection::take_repeatable_read_snapshot() {
  if (!repeatable_read_ || snapshot_ || !session_.in_transaction || session_.aborted) return std::nullopt;
  step({"snapshot", whole_server(Access::write), pid_, true});
  if (serializable_) {
    if (auto refused = begin_ssi()) return refused;
  }
  snapshot_ = server_.open_snapshot();
  if (s_.logging()) s_.note_detail(fmt::format("REPEATABLE READ snapshot at commit {}", *snapshot_));
  return std::nullopt;
}

std::optional<Error> SimConnection::begin_statement(OpDesc op, bool snapshot) {
  if (dead_) return lost();
  if (sql_depth_ == 0) {  // a typed operation (SQL text was weighed as it began)
    if (std::optional<Error> refused = idle_timeout_refusal()) return refused;
  }
  if (s_.times_statements()) [[unlikely]] {
    statement_timing();
    if (dead_) return lost();
  }
  const bool first_snapshot = snapshot && repeatable_read_ && !snapshot_ && session_.in_transaction && !session_.aborted;
  if (first_snapshot) {
    if (auto refused = take_repeatable_read_snapshot()) return refused;
  }
  step(op);
  end_idle_sessions();  // may end this session too (killed)
  if (killed()) return terminated();
  if (session_.aborted) return in_failed_transaction();
  if (snapshot && session_.in_transaction) queried_ = true;
  if (!implicit_table_locks_.empty()) {
    const std::vector<TableLockRequest> requests = std::move(implicit_table_locks_);
    implicit_table_locks_.clear();
    bool waited = false;
    for (const TableLockRequest& request : requests) {
      if (auto e = take_table_lock(request, &waited)) return e;
    }
    // PostgreSQL 15 finds no conflict where the model finds one (a 40001 it does not raise:
    // SqlConformance seed 95015) when a SERIALIZABLE transaction's first statement waited for
    // a table lock another SERIALIZABLE transaction held: refused there, not answered.
    if (waited && first_snapshot && serializable_) {
      if (auto e = ssi_unsupported("waited for a table lock in the statement that took its snapshot")) return e;
    }
    // The statement ran nothing while it waited for its table: its first step, with the
    // footprint it declared (and the access it may narrow), is taken again now.
    if (waited) {
      step(op);
      if (killed()) return terminated();
      if (session_.aborted) return in_failed_transaction();
    }
  }
  return std::nullopt;
}

bool SimConnection::killed() {
  if (session_.terminated) return true;
  if (config_.server_restart && !server_.restart_used() && s_.choose(2, "server_restart") == 1) {
    step({"server_restart", whole_server(Access::write), pid_, true});
    server_.restart();  // this session too: terminated() below finds it released
    return true;
  }
  if (!config_.backend_terminated || server_.termination_used()) return false;
  if (s_.choose(2, "backend_terminated") == 0) return false;
  server_.use_termination();
  return true;
}

void SimConnection::end_snapshot() {
  if (snapshot_) server_.close_snapshot();
  snapshot_.reset();
  repeatable_read_ = false;
  serializable_ = false;
  read_only_ = false;
  queried_ = false;
  activity_.reset();
}

Error SimConnection::terminated() {
  end_snapshot();
  savepoints_.clear();
  if (!session_.terminated) {
    release_now({.rows = true, .session_scope = true, .xact_scope = true}, "backend terminated");
  }
  end_ssi(false);
  locked_rows_.clear();
  written_.clear();
  session_.in_transaction = false;
  session_.live = false;
  dead_ = true;
  if (session_.terminated_idle || session_.idle_timed_out) {
    // The FATAL message arrived while no statement was running: libpq reports the
    // connection lost, without a SQLSTATE (checked by lockstep conform; psql prints the
    // FATAL as a notice).
    return Error{std::string(sqlstate::kConnectionFailure),
                 fmt::format("terminating connection due to {}; server closed the connection unexpectedly",
                             !session_.idle_timed_out ? "administrator command"
                             : session_.idle_session  ? "idle-session timeout"
                                                      : "idle-in-transaction timeout")};
  }
  return Error{std::string(sqlstate::kAdminShutdown), "terminating connection due to administrator command"};
}

Error SimConnection::abort_with(Error e) {
  if ((session_.in_transaction || !savepoints_.empty()) && !session_.aborted) {
    session_.aborted = true;
    // Inside a savepoint (a plpgsql EXCEPTION block's too, also in an autocommit statement)
    // the error aborts its subtransaction only; else the transaction's locks and rows go at
    // once (AbortTransaction), before its ROLLBACK.
    if (!savepoints_.empty()) {
      abort_subtransaction();
    } else {
      release_now({.rows = true, .commit = false, .xact_scope = true}, "abort");
      idle_timeout_ = settings_at_begin_.idle_timeout;  // AtEOXact_GUC: the block idles failed without its SETs
      end_ssi(false);  // AbortTransaction: its SIREAD locks and conflicts go too
    }
  }
  return e;
}

}  // namespace lockstep::sim::pg
