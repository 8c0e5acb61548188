#include "lockstep/real/conform.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

#include <fmt/format.h>

#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/pg_result.h"
#include "lockstep/real/statements.h"

namespace lockstep::real {
namespace {

using Clock = std::chrono::steady_clock;
using pg::Stmt;

// Where SQL as written runs (Stmt::sql): a schema of its own, made afresh.
constexpr std::string_view kSqlSchema = "lockstep_conform";
using sim::pg::LoggedStatement;

struct Outcome {
  std::optional<pg::Error> error;
  std::string value;
  std::vector<pg::Error> warnings;
};

std::string describe(const Outcome& o) {
  std::string s = o.error ? fmt::format("error {} ({})", o.error->sqlstate, o.error->message)
                          : o.value.empty() ? std::string("ok") : fmt::format("ok, {}", o.value);
  for (const auto& w : o.warnings) s += fmt::format(", WARNING {} ({})", w.sqlstate, w.message);
  return s;
}

Outcome sim_outcome(const LoggedStatement& s) { return {s.error, s.value, s.warnings}; }

std::string key_text(const pg::AdvisoryKey& k) {
  if (k.objsubid() == 2) return fmt::format("{}, {}", static_cast<std::int32_t>(k.classid()), static_cast<std::int32_t>(k.objid()));
  return std::to_string(static_cast<std::int64_t>((static_cast<std::uint64_t>(k.classid()) << 32) | k.objid()));
}

std::string statement_text(const LoggedStatement& s) {
  if (s.op == Stmt::sql) {
    std::string text = s.sql;
    for (char& ch : text) ch = ch == '\n' || ch == '\t' ? ' ' : ch;
    if (text.size() > 120) text = text.substr(0, 117) + "...";
    return fmt::format("session {} ({}): {}", s.pid, s.application_name, text);
  }
  std::string args;
  if (s.key) args = key_text(*s.key);
  if (!s.table.empty()) args = fmt::format("{}, {}", s.table, s.id);
  if (s.op == Stmt::set_lock_timeout || s.op == Stmt::set_statement_timeout) {
    args = fmt::format("{} ms", std::chrono::duration_cast<std::chrono::milliseconds>(s.timeout).count());
  }
  if (s.op == Stmt::pg_terminate_backend) args = std::to_string(s.target_pid);
  return fmt::format("session {} ({}): {}({})", s.pid, s.application_name, pg::name(s.op), args);
}

// A connection of ours: the observer, or one per simulated session.
class Conn {
 public:
  Conn(const std::string& conninfo, const std::string& application_name) {
    const char* keys[] = {"dbname", "application_name", nullptr};
    const char* values[] = {conninfo.c_str(), application_name.c_str(), nullptr};
    c_ = PQconnectdbParams(keys, values, 1);
    if (c_ == nullptr || PQstatus(c_) != CONNECTION_OK) {
      std::string message = c_ ? PQerrorMessage(c_) : "out of memory";
      while (!message.empty() && message.back() == '\n') message.pop_back();
      throw ServerError(fmt::format("cannot connect to PostgreSQL: {}", message));
    }
    PQsetNoticeReceiver(c_, &Conn::on_notice, this);
  }
  ~Conn() { finish(); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void finish() {
    if (c_) PQfinish(c_);
    c_ = nullptr;
  }
  bool open() const { return c_ != nullptr; }
  int pid() const { return c_ ? PQbackendPID(c_) : 0; }
  bool busy() const { return busy_; }

  // Blocking: one statement, its result (for the harness's own statements).
  PgResult exec(const sql::Statement& st) {
    send(st);
    while (!collect()) std::this_thread::sleep_for(std::chrono::microseconds(100));
    return std::move(result_);
  }
  std::optional<pg::Error> error_of(const PgResult& r) const { return sql::error_of(c_, r.get()); }

  // SQL as the model wrote it: with parameters one statement (NULL as NULL), without them
  // the simple query protocol (several statements allowed), as the libpq backend sends it.
  void send_sql(const std::string& text, const std::vector<pg::Param>& params) {
    notices_.clear();
    result_.reset();
    busy_ = true;
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p ? p->c_str() : nullptr);
    const int sent = params.empty() ? PQsendQuery(c_, text.c_str())
                                    : PQsendQueryParams(c_, text.c_str(), static_cast<int>(values.size()), nullptr,
                                                        values.data(), nullptr, nullptr, 0);
    if (sent == 0) send_failed_ = true;  // the connection is gone: collect() reports it
  }

  void send(const sql::Statement& st) {
    std::vector<const char*> values;
    for (const auto& p : st.params) values.push_back(p.c_str());
    notices_.clear();
    result_.reset();
    busy_ = true;
    if (PQsendQueryParams(c_, st.text.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0) == 0) {
      send_failed_ = true;  // the connection is gone: collect() reports it
    }
  }
  // True once the statement's results are all in (then result() holds the last one).
  bool collect() {
    if (!busy_) return true;
    if (send_failed_) {
      busy_ = false;
      send_failed_ = false;
      return true;
    }
    if (PQconsumeInput(c_) == 0) {
      // The connection broke: take whatever libpq made of it (an ErrorResponse read
      // before the end carries its SQLSTATE), without waiting for more.
      while (PGresult* r = PQgetResult(c_)) result_.reset(r);
      busy_ = false;
      return true;
    }
    while (!PQisBusy(c_)) {
      PGresult* r = PQgetResult(c_);
      if (r == nullptr) {
        busy_ = false;
        return true;
      }
      result_.reset(r);
    }
    return false;
  }
  std::string ident(const std::string& name) const {
    char* q = PQescapeIdentifier(c_, name.data(), name.size());
    if (q == nullptr) throw std::runtime_error(fmt::format("cannot quote the table name \"{}\"", name));
    std::string out(q);
    PQfreemem(q);
    return out;
  }
  void cancel() {
    PGcancel* c = PQgetCancel(c_);
    if (c == nullptr) return;
    char buf[256];
    (void)PQcancel(c, buf, sizeof buf);
    PQfreeCancel(c);
  }
  Outcome outcome(const LoggedStatement& s) {
    Outcome o;
    o.warnings = notices_;
    if (auto e = sql::error_of(c_, result_.get())) {
      o.error = e;
      return o;
    }
    const PGresult* r = result_.get();
    switch (pg::info(s.op).returns) {
      case pg::Returns::boolean: o.value = sql::read_bool(r) ? "t" : "f"; break;
      case pg::Returns::count: o.value = std::to_string(sql::read_count(r)); break;
      case pg::Returns::row:
        if (auto row = sql::read_row_result(r)) o.value = sql::to_json(*row);
        break;
      case pg::Returns::rows: o.value = sim::pg::rows_text(sql::read_rows(r)); break;
      case pg::Returns::nothing:
      case pg::Returns::lock_rows: break;  // the lock rows are compared as views (lock_views)
    }
    return o;
  }

 private:
  static void on_notice(void* self, const PGresult* r) {
    if (auto w = sql::warning_of(r)) static_cast<Conn*>(self)->notices_.push_back(*w);
  }

  PGconn* c_ = nullptr;
  bool busy_ = false;
  bool send_failed_ = false;
  PgResult result_;
  std::vector<pg::Error> notices_;
};

class Replayer {
 public:
  Replayer(const sim::pg::StatementLog& log, const ConformOptions& o) : log_(log), o_(o), observer_(o.conninfo, "lockstep-observer") {}

  ConformReport run() {
    prepare_tables();
    struct Event {
      std::uint64_t step;
      std::size_t index;
      int kind;  // 0 send, 1 finish
    };
    std::vector<Event> events;
    for (std::size_t i = 0; i < log_.size(); ++i) {
      if (log_[i].op != Stmt::close) events.push_back({log_[i].first_step, i, 0});
      if (!log_[i].unfinished) events.push_back({log_[i].last_step, i, 1});
    }
    std::sort(events.begin(), events.end(),
              [](const Event& a, const Event& b) { return std::tie(a.step, a.index, a.kind) < std::tie(b.step, b.index, b.kind); });
    for (const Event& e : events) {
      if (stopped()) break;
      const LoggedStatement& s = log_[e.index];
      // A statement that queues for a lock is sent at its first step (that is where it
      // joins the queue); any other at its last, where the simulation has applied all of
      // it: a COMMIT publishes its rows and releases its locks over several steps there,
      // where the server's is one atomic moment.
      if (s.op == Stmt::close) {
        close(s);
      } else if (e.kind == 0) {
        mid_[s.pid] = s.waited;
        if (s.unfinished) unfinished_.insert(s.pid);
        if (s.waited || s.unfinished) send(s);  // an unfinished one never reaches its last step
      } else {
        if (!s.waited) send(s);
        mid_.erase(s.pid);
        finish(s);
      }
    }
    for (auto& [pid, c] : sessions_) {
      if (c->open() && c->busy()) c->cancel();
    }
    report_.sessions = static_cast<int>(sessions_.size());
    return report_;
  }

 private:
  bool stopped() const { return report_.diverged_at || (o_.stop_at_first && !report_.disagreements.empty()); }

  // The replay cannot follow the simulation any further (see overlapped): stop comparing.
  void diverge(const LoggedStatement& s) { report_.diverged_at = s.last_step; }

  void disagree(std::uint64_t step, const LoggedStatement& s, std::string sim, std::string server) {
    report_.disagreements.push_back({step, statement_text(s), std::move(sim), std::move(server)});
  }

  void prepare_tables() {
    std::set<std::string> tables;
    for (const auto& s : log_) {
      if (!s.table.empty()) tables.insert(s.table);
    }
    must(observer_.exec(sql::drop_schema()), "DROP SCHEMA lockstep");
    // SQL as written runs in a schema of its own, empty at the start, first on each session's
    // search_path: what a model's SQL creates does not meet what an earlier run left.
    must(observer_.exec({fmt::format("DROP SCHEMA IF EXISTS {} CASCADE", kSqlSchema), {}}), "DROP SCHEMA");
    if (std::any_of(log_.begin(), log_.end(), [](const LoggedStatement& s) { return s.op == Stmt::sql; })) {
      must(observer_.exec({fmt::format("CREATE SCHEMA {}", kSqlSchema), {}}), "CREATE SCHEMA");
    }
    if (tables.empty()) return;
    must(observer_.exec(sql::create_schema()), "CREATE SCHEMA lockstep");
    for (const auto& t : tables) must(observer_.exec(sql::create_table(observer_.ident(t))), "CREATE TABLE");
  }

  void must(const PgResult& r, std::string_view what) {
    if (auto e = observer_.error_of(r)) throw ServerError(fmt::format("{}: {} {}", what, e->sqlstate, e->message));
  }

  Conn& session(const LoggedStatement& s) {
    auto& c = sessions_[s.pid];
    if (!c) {
      c = std::make_unique<Conn>(o_.conninfo, s.application_name);
      real_pid_[s.pid] = c->pid();
      sim_pid_[c->pid()] = s.pid;
      // Timing is the simulation's: no timer of the server's own may end a statement.
      for (const char* setting : {"lock_timeout", "statement_timeout"}) (void)c->exec(sql::set(setting, "0"));
      (void)c->exec(sql::set("deadlock_timeout", "1h"));  // superuser only; else the default
      (void)c->exec(sql::set("search_path", std::string(kSqlSchema)));  // see prepare_tables
    }
    return *c;
  }

  sql::Statement statement(const LoggedStatement& s) {
    const std::string table = s.table.empty() ? std::string() : observer_.ident(s.table);
    sql::Args args{.quoted_table = table, .id = s.id, .values = s.values, .column = s.column, .expected = s.expected};
    if (s.key) args.key = *s.key;
    // Timing is the simulation's: timeouts stay off on the server (see session()).
    args.timeout = Duration{0};
    if (s.op == Stmt::pg_terminate_backend) {
      auto it = real_pid_.find(s.target_pid);
      args.pid = it != real_pid_.end() ? it->second : -s.target_pid;  // no such backend either way
    }
    return sql::statement(s.op, args);
  }

  // Waits until the statement answers (true) or shows a lock wait (false); nullopt when
  // neither happened within the patience.
  std::optional<bool> settle(Conn& c) {
    const auto deadline = Clock::now() + o_.patience;
    for (;;) {
      if (c.collect()) return true;
      if (lock_waiting(c.pid())) return c.collect() ? std::optional<bool>(true) : std::optional<bool>(false);
      if (Clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  bool lock_waiting(int pid) {
    auto r = observer_.exec({"SELECT 1 FROM pg_locks WHERE pid = $1 AND NOT granted", {std::to_string(pid)}});
    must(r, "pg_locks");
    return PQntuples(r.get()) > 0;
  }

  void send(const LoggedStatement& s) {
    Conn& c = session(s);
    ++report_.statements;
    if (!c.open()) return;  // closed: the simulation's connection is dead too (its outcome is compared at finish)
    if (c.busy()) {
      // An unfinished statement (the execution ended while it waited) is still in flight:
      // the simulation's actor unwound past it, so it is cancelled before the next one.
      c.cancel();
      const auto deadline = Clock::now() + o_.patience;
      while (!c.collect() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (s.op == Stmt::sql) {
      c.send_sql(s.sql, s.params);
    } else {
      c.send(statement(s));
    }
    const auto answered = settle(c);
    if (!answered) {
      disagree(s.first_step, s, s.waited ? "waits for a lock" : "returns", fmt::format("neither returned nor waited on a lock within {} s",
                                                                              std::chrono::duration_cast<std::chrono::seconds>(o_.patience).count()));
      c.cancel();
      return;
    }
    if (overlapped(s)) {
      // Whether it waits may depend on another statement's half-done steps (see overlapped);
      // if the server went the other way, the two are in different states from here on.
      if (s.waited == *answered) diverge(s);
    } else if (s.waited && *answered) {
      disagree(s.first_step, s, "waits for a lock", fmt::format("returned at once: {}", describe(c.outcome(s))));
    } else if (!s.waited && !*answered) {
      disagree(s.first_step, s, fmt::format("returns at once: {}", describe(sim_outcome(s))), "waits for a lock");
    } else if (s.waited) {
      ++report_.waits;
    }
  }

  void finish(const LoggedStatement& s) {
    Conn& c = session(s);
    Outcome real;
    if (!c.open()) {
      real.error = pg::Error{std::string(pg::sqlstate::kConnectionFailure), "connection closed"};
    } else {
      if (c.busy() && s.by_timer && !s.phantom) {
        c.cancel();  // the simulation's timer fired here
        ++report_.cancelled;
      }
      const auto deadline = Clock::now() + (overlapped(s) ? std::chrono::milliseconds(100) : o_.patience);
      while (!c.collect()) {
        if (Clock::now() > deadline) {
          if (overlapped(s)) {  // waits on the server for what the simulation had let go (see overlapped)
            diverge(s);
            return;
          }
          disagree(s.last_step, s, fmt::format("ends: {}", describe(sim_outcome(s))),
                   fmt::format("still waiting after {} s", std::chrono::duration_cast<std::chrono::seconds>(o_.patience).count()));
          c.cancel();
          return;
        }
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      real = c.outcome(s);
    }
    compare(s, real);
    if (s.op == Stmt::pg_terminate_backend && real.value == "t") await_exit(real_pid_.count(s.target_pid) ? real_pid_[s.target_pid] : 0);
    if (!overlapped(s)) compare_locks(s);  // else the locks after it depend on the same order
  }

  // pg_terminate_backend only signals: the victim lets go of its locks when its backend
  // exits, a moment later. The simulation's happens at once; wait for the server's.
  void await_exit(int pid) {
    const auto deadline = Clock::now() + o_.patience;
    while (Clock::now() < deadline) {
      auto r = observer_.exec({"SELECT 1 FROM pg_stat_activity WHERE pid = $1", {std::to_string(pid)}});
      must(r, "pg_stat_activity");
      if (PQntuples(r.get()) == 0) return;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  // Whether `s` and another session's statement ran at once in the simulation, one of them
  // spread over several steps with effects after its first: then the outcome of `s` may
  // depend on a half-done statement the server cannot show, and it is not compared (counted
  // instead). The simulation ends a statement at one moment as the server does (a COMMIT's
  // releases, an autocommit publish and an xact lock's release are part of its last step),
  // so only a statement that waited spans steps. A session lock that waited has nothing
  // after its grant; an xact lock or a row update that waited ends its statement (a
  // release, a commit) in its wait's step, after the grant the releasing step made, where
  // the server's woken backend does it at a moment of its own.
  static bool spread(const LoggedStatement& a) {
    if (a.first_step >= a.last_step) return false;
    return !(a.waited && (a.op == Stmt::advisory_lock || a.op == Stmt::advisory_lock_shared ||
                          a.op == Stmt::advisory_lock_timed || a.op == Stmt::advisory_lock_timed_shared));
  }
  bool overlapped(const LoggedStatement& s) const {
    for (const LoggedStatement& a : log_) {
      if (a.pid == s.pid || a.op == Stmt::close || !(spread(a) || spread(s))) continue;
      if (a.first_step <= s.last_step && s.first_step <= a.last_step) return true;
    }
    return false;
  }

  void compare(const LoggedStatement& s, const Outcome& real) {
    const Outcome sim = sim_outcome(s);
    const bool overlap = overlapped(s);
    if (overlap) ++report_.overlapped;
    const std::size_t before = report_.disagreements.size();
    compare_outcomes(s, sim, real);
    if (overlap && report_.disagreements.size() > before) {
      // Not a disagreement: the order decided it (see overlapped). The states part here.
      report_.disagreements.resize(before);
      diverge(s);
    }
  }

  void compare_outcomes(const LoggedStatement& s, const Outcome& sim, const Outcome& real) {
    if (real.error && connection_lost(*real.error) && !(sim.error && connection_lost(*sim.error))) {
      throw ServerError(fmt::format("step {}: {}: the server lost the session ({} {}); nothing after it is compared",
                                    s.last_step, statement_text(s), real.error->sqlstate, real.error->message));
    }
    if (s.phantom) {  // the fault's 55P03 stands for a grant the client never heard of
      ++report_.phantoms;
      if (real.error) disagree(s.last_step, s, "the lock granted (the phantom grant: reported as 55P03)", describe(real));
      return;
    }
    if (s.by_timer) {  // cancelled here: any error agrees, as long as it failed
      if (!real.error) disagree(s.last_step, s, describe(sim), describe(real));
      return;
    }
    // A terminated backend: whether the client reads 57P01 or a lost connection (08006)
    // depends on whether the FATAL message arrives inside a statement, which the order of
    // steps cannot fix (the simulation releases a statement's locks over several steps).
    auto killed = [](const std::optional<pg::Error>& e) {
      return e && (e->sqlstate == pg::sqlstate::kAdminShutdown ||
                   (e->sqlstate == pg::sqlstate::kConnectionFailure && e->message.find("terminating connection") != std::string::npos));
    };
    const bool same_error = (killed(sim.error) && killed(real.error)) ||
                            (sim.error.has_value() == real.error.has_value() && (!sim.error || sim.error->sqlstate == real.error->sqlstate));
    const bool same_value = sim.error || s.op == Stmt::pg_locks || sim.value == real.value;
    auto codes = [](const std::vector<pg::Error>& w) {
      std::vector<std::string> out;
      for (const auto& e : w) out.push_back(e.sqlstate + " " + e.message);
      return out;
    };
    // pg_terminate_backend's warning names a pid: the server's, mapped back to the simulation's.
    std::vector<pg::Error> real_warnings = real.warnings;
    for (auto& w : real_warnings) {
      int pid = 0;
      if (std::sscanf(w.message.c_str(), "PID %d is not", &pid) == 1) {
        const auto it = sim_pid_.find(pid);
        const int shown = it != sim_pid_.end() ? it->second : std::abs(pid);  // unknown ones were sent negated
        w.message.replace(0, w.message.find(" is not"), fmt::format("PID {}", shown));
      }
    }
    const bool same_warnings = codes(sim.warnings) == codes(real_warnings);
    if (!same_error || !same_value || !same_warnings) disagree(s.last_step, s, describe(sim), describe(real));
  }

  using LockRow = std::tuple<int, std::uint32_t, std::uint32_t, std::uint16_t, std::string, bool>;

  std::string rows_text(const std::set<LockRow>& rows) const {
    if (rows.empty()) return "no advisory locks";
    std::string out;
    for (const auto& [pid, c, o, sub, mode, granted] : rows) {
      out += fmt::format("{}session {} {} ({}, {}, {}) {}", out.empty() ? "" : "; ", pid, mode, c, o, sub, granted ? "granted" : "waiting");
    }
    return out;
  }

  // The advisory rows of pg_locks, per simulated session, leaving out sessions whose
  // statement is under way without a lock wait (the simulation may be between its steps).
  void compare_locks(const LoggedStatement& s) {
    // A session inside a statement is compared only while both sides show it waiting: once
    // the server has answered, the simulation may still be between the statement's steps
    // (the release at the end of pg_advisory_xact_lock outside a transaction, say).
    // A grant the last statement caused reaches the waiter a moment later: settle first.
    // A session whose statement the end of the execution interrupted keeps its waiting row in
    // the simulation, while the replay cancels it: those sessions are not compared.
    std::set<int> skip = unfinished_;
    for (const auto& [pid, waits] : mid_) {
      auto c = sessions_.find(pid);
      if (!waits || c == sessions_.end() || !c->second->open() || settle(*c->second).value_or(true)) skip.insert(pid);
    }
    std::set<LockRow> sim, real;
    for (const auto& r : s.locks_after) {
      if (!skip.count(r.pid) && sessions_.count(r.pid)) sim.insert({r.pid, r.classid, r.objid, r.objsubid, r.mode, r.granted});
    }
    auto result = observer_.exec(sql::advisory_locks());
    must(result, "pg_locks");
    for (const auto& r : sql::read_lock_rows(result.get())) {
      auto it = sim_pid_.find(r.pid);
      if (it == sim_pid_.end() || skip.count(it->second)) continue;
      real.insert({it->second, r.classid, r.objid, r.objsubid, r.mode, r.granted});
    }
    ++report_.lock_views;
    if (sim != real) disagree(s.last_step, s, "pg_locks after it: " + rows_text(sim), "pg_locks after it: " + rows_text(real));
  }

  void close(const LoggedStatement& s) {
    auto it = sessions_.find(s.pid);
    if (it != sessions_.end()) it->second->finish();
    compare_locks(s);
  }

  const sim::pg::StatementLog& log_;
  ConformOptions o_;
  Conn observer_;
  std::map<int, std::unique_ptr<Conn>> sessions_;  // by simulated pid
  std::map<int, int> real_pid_, sim_pid_;
  std::set<int> unfinished_;  // sessions with a statement the execution's end interrupted
  std::map<int, bool> mid_;  // sessions inside a statement of the simulation: whether it queued
  ConformReport report_;
};

}  // namespace

ConformReport conform(const sim::pg::StatementLog& log, const ConformOptions& options) {
  Replayer r(log, options);
  return r.run();
}

}  // namespace lockstep::real
