// sim/pg/server/logged_connection.cc: a SimConnection that records each statement, its outcome
// and the locks after it in the server's StatementLog (sim/pg/server/statement_log.h).
#include "lockstep/sim/pg/server/connection.h"

#include <map>
#include <string>

namespace lockstep::sim::pg {
namespace {

using lockstep::pg::Param;
using lockstep::pg::Rows;

// A SimConnection that records every statement in the server's StatementLog.
class LoggedSimConnection final : public SimConnection {
 public:
  LoggedSimConnection(Server& server, const PoolConfig& config, StatementLog& log)
      : SimConnection(server, config), log_(log) {}

  Status advisory_lock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::advisory_lock, mode), key), [&] { return SimConnection::advisory_lock(key, mode); });
  }
  Status advisory_lock_with_timeout(AdvisoryKey key, LockMode mode, Duration t) override {
    LoggedStatement e = keyed(in_mode(Stmt::advisory_lock_timed, mode), key);
    e.timeout = t;
    return record(std::move(e), [&] { return SimConnection::advisory_lock_with_timeout(key, mode, t); });
  }
  Result<bool> try_advisory_lock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::try_advisory_lock, mode), key),
                  [&] { return SimConnection::try_advisory_lock(key, mode); });
  }
  Result<bool> advisory_unlock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::advisory_unlock, mode), key),
                  [&] { return SimConnection::advisory_unlock(key, mode); });
  }
  Status advisory_unlock_all() override { return record(named(Stmt::advisory_unlock_all), [&] { return SimConnection::advisory_unlock_all(); }); }
  Status advisory_xact_lock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::advisory_xact_lock, mode), key),
                  [&] { return SimConnection::advisory_xact_lock(key, mode); });
  }
  Result<bool> try_advisory_xact_lock(AdvisoryKey key, LockMode mode) override {
    return record(keyed(in_mode(Stmt::try_advisory_xact_lock, mode), key), [&] { return SimConnection::try_advisory_xact_lock(key, mode); });
  }
  Status set_lock_timeout(Duration t) override {
    LoggedStatement e = named(Stmt::set_lock_timeout);
    e.timeout = t;
    return record(std::move(e), [&] { return SimConnection::set_lock_timeout(t); });
  }
  Status set_statement_timeout(Duration t) override {
    LoggedStatement e = named(Stmt::set_statement_timeout);
    e.timeout = t;
    return record(std::move(e), [&] { return SimConnection::set_statement_timeout(t); });
  }
  Result<std::optional<Row>> read_row(std::string_view table, std::int64_t id) override {
    return record(row_op(Stmt::read_row, table, id, {}), [&] { return SimConnection::read_row(table, id); });
  }
  Status insert_row(std::string_view table, std::int64_t id, const Row& values) override {
    return record(row_op(Stmt::insert_row, table, id, values), [&] { return SimConnection::insert_row(table, id, values); });
  }
  Result<bool> insert_row_if_absent(std::string_view table, std::int64_t id, const Row& values) override {
    return record(row_op(Stmt::insert_row_if_absent, table, id, values),
                  [&] { return SimConnection::insert_row_if_absent(table, id, values); });
  }
  Result<int> update_row_if(std::string_view table, std::int64_t id, std::string_view column, std::string_view expected,
                            const Row& values) override {
    LoggedStatement e = row_op(Stmt::update_row_if, table, id, values);
    e.column = std::string(column);
    e.expected = std::string(expected);
    return record(std::move(e), [&] { return SimConnection::update_row_if(table, id, column, expected, values); });
  }
  Result<std::optional<Row>> select_for_update_skip_locked(std::string_view table, std::int64_t id) override {
    return record(row_op(Stmt::select_for_update_skip_locked, table, id, {}),
                  [&] { return SimConnection::select_for_update_skip_locked(table, id); });
  }
  Result<std::optional<Row>> select_for_share(std::string_view table, std::int64_t id) override {
    return record(row_op(Stmt::select_for_share, table, id, {}), [&] { return SimConnection::select_for_share(table, id); });
  }
  Result<int> update_row(std::string_view table, std::int64_t id, const Row& values) override {
    return record(row_op(Stmt::update_row, table, id, values), [&] { return SimConnection::update_row(table, id, values); });
  }
  Result<std::optional<Row>> select_for_update(std::string_view table, std::int64_t id, bool nowait) override {
    return record(row_op(nowait ? Stmt::select_for_update_nowait : Stmt::select_for_update, table, id, {}),
                  [&] { return SimConnection::select_for_update(table, id, nowait); });
  }
  Status begin() override { return record(named(Stmt::begin), [&] { return SimConnection::begin(); }); }
  Status commit() override { return record(named(Stmt::commit), [&] { return SimConnection::commit(); }); }
  Status rollback() override { return record(named(Stmt::rollback), [&] { return SimConnection::rollback(); }); }
  Result<std::vector<AdvisoryLockRow>> advisory_locks() override {
    return record(named(Stmt::pg_locks), [&] { return SimConnection::advisory_locks(); });
  }
  Result<bool> terminate_backend(int pid) override {
    LoggedStatement e = named(Stmt::pg_terminate_backend);
    e.target_pid = pid;
    return record(std::move(e), [&] { return SimConnection::terminate_backend(pid); });
  }
  // SQL is one statement of the log: what it runs through the typed operations (its BEGIN,
  // COMMIT, ...) is not logged again.
  Result<Rows> exec(std::string_view text, const std::vector<Param>& params) override {
    if (inside_sql_) return SimConnection::exec(text, params);
    return record(sql_op(text, params), [&] {
      const InsideSql in(inside_sql_);
      return SimConnection::exec(text, params);
    });
  }
  Status prepare(std::string_view name, std::string_view text) override {
    Status made = SimConnection::prepare(name, text);
    if (made.ok()) prepared_text_[std::string(name)] = std::string(text);
    return made;
  }
  Result<Rows> exec_prepared(std::string_view name, const std::vector<Param>& params) override {
    const auto text = prepared_text_.find(std::string(name));
    if (inside_sql_ || text == prepared_text_.end()) return SimConnection::exec_prepared(name, params);  // an unknown name: its error
    return record(sql_op(text->second, params), [&] {
      const InsideSql in(inside_sql_);
      return SimConnection::exec_prepared(name, params);
    });
  }
  void close() override {
    if (dead()) return;
    const std::uint64_t before = server().scheduler().step_count();
    SimConnection::close();
    LoggedStatement e = named(Stmt::close);
    e.first_step = before + 1;
    e.last_step = std::max(before + 1, server().scheduler().step_count());
    e.locks_after = server().advisory_lock_rows(server().scheduler().now());
    log_.push_back(std::move(e));
  }

 private:
  LoggedStatement named(Stmt op) const {
    LoggedStatement e;
    e.op = op;
    e.pid = backend_pid();
    e.application_name = session().application_name;
    return e;
  }
  LoggedStatement keyed(Stmt op, AdvisoryKey key) const {
    LoggedStatement e = named(op);
    e.key = key;
    return e;
  }
  LoggedStatement row_op(Stmt op, std::string_view table, std::int64_t id, const Row& values) const {
    LoggedStatement e = named(op);
    e.table = std::string(table);
    e.id = id;
    e.values = values;
    return e;
  }

  LoggedStatement sql_op(std::string_view text, const std::vector<Param>& params) const {
    LoggedStatement e = named(Stmt::sql);
    e.sql = std::string(text);
    e.params = params;
    return e;
  }

  static std::string text(const Rows& rows) { return rows_text(rows); }
  static std::string text(const bool& v) { return v ? "t" : "f"; }
  static std::string text(const int& v) { return std::to_string(v); }
  static std::string text(const std::optional<Row>& row) {
    if (!row) return "";
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, v] : *row) j[k] = v;
    return j.dump();
  }
  static std::string text(const std::vector<AdvisoryLockRow>& rows) { return std::to_string(rows.size()) + " rows"; }

  // Runs the statement and records it; a statement the end of the execution interrupts
  // (still waiting, say) is recorded as unfinished.
  template <typename F>
  auto record(LoggedStatement e, F statement) -> decltype(statement()) {
    if (inside_sql_) return statement();  // part of the SQL statement being logged
    using R = decltype(statement());
    std::optional<R> result;
    try {
      result.emplace(statement());
    } catch (const ExecutionAborted&) {
      const LastStatement& last = last_statement();
      e.last_step = server().scheduler().step_count();
      e.first_step = last.first_step.value_or(e.last_step);
      e.waited = last.waited;
      e.unfinished = true;
      log_.push_back(std::move(e));
      throw;
    }
    return finish(std::move(e), std::move(*result));
  }

  template <typename R>
  R finish(LoggedStatement e, R result) {
    const LastStatement& last = last_statement();
    Scheduler& s = server().scheduler();
    e.last_step = s.step_count();
    e.first_step = last.first_step.value_or(e.last_step);
    e.waited = last.waited;
    e.by_timer = last.by_timer;
    e.phantom = last.phantom;
    if (!result.ok()) {
      e.error = result.error();
    } else if constexpr (!std::is_same_v<R, Status>) {
      e.value = text(result.value());
    }
    const auto& warnings = pending_warnings();
    e.warnings.assign(warnings.begin() + static_cast<std::ptrdiff_t>(std::min(last.warnings_before, warnings.size())), warnings.end());
    e.locks_after = server().advisory_lock_rows(s.now());
    log_.push_back(std::move(e));
    return result;
  }

  // Set while SQL runs (exec, exec_prepared), restored however it ends.
  class InsideSql {
   public:
    explicit InsideSql(bool& flag) : flag_(flag) { flag_ = true; }
    ~InsideSql() { flag_ = false; }
    InsideSql(const InsideSql&) = delete;
    InsideSql& operator=(const InsideSql&) = delete;

   private:
    bool& flag_;
  };

  StatementLog& log_;
  std::map<std::string, std::string> prepared_text_;  // by name: what exec_prepared runs
  bool inside_sql_ = false;
};

}  // namespace

std::unique_ptr<SimConnection> make_logged_connection(Server& server, const lockstep::pg::PoolConfig& config, StatementLog& log) {
  return std::make_unique<LoggedSimConnection>(server, config, log);
}

}  // namespace lockstep::sim::pg
