#include "lockstep/model/systems/sql_spec.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/format.h>

#include "lockstep/model/sql/isolation_driver.h"

namespace lockstep::sql_spec {
namespace {

using sql::Spec;

// What a failed statement says, on one line.
std::string error_text(const pg::Error& e) { return fmt::format("ERROR {}: {}", e.sqlstate, e.message); }

// The spec's setup blocks on a connection of their own, outside the sessions; a failure is
// the model's error (isolationtester stops the test too). Returns what isolationtester prints
// of them: a block's last result when it has rows.
std::string run_setup(const Spec& spec, pg::Pool& pool) {
  auto c = pool.checkout().value();
  std::string printed;
  for (const sql::SqlBlock& block : spec.setup) {
    const auto r = c->exec(block.text);
    if (!r.ok()) throw ModelError(fmt::format("{}:{}: the spec's setup failed: {}", spec.file, block.line, error_text(r.error())));
    printed += printed_result(r.value());
  }
  (void)c->take_warnings();  // the setup's notices are isolationtester's control connection's: never printed
  return printed;
}

struct SpecFaults {
  bool backend_terminated = false;
  bool server_restart = false;
};

// Whether an error says the session is gone (connection exception, or the server shutting
// down or starting up): after a server_restart, the checks take a new connection.
bool session_gone(const pg::Error& e) {
  return e.sqlstate.starts_with("08") || e.sqlstate == "57P01" || e.sqlstate == "57P02" || e.sqlstate == "57P03";
}

// The spec's setup and checks run on a pool of their own, which the faults never strike;
// the sessions' pool shares its schema on a real server.
class SpecInstance final : public Instance {
 public:
  SpecInstance(const Spec& spec, SpecFaults faults, Env& env)
      : spec_(spec),
        env_(env),
        harness_(env.new_pg_pool(pg::PoolConfig{.application_name = "lockstep-harness",
                                                 .pool_size = 1,
                                                 .max_overflow = 0,
                                                 .own_schema = true})) {
    run_setup(spec_, *harness_);
    // One connection per session for the whole run, as isolationtester keeps: a pool of one
    // each, so a session that ended keeps its backend (and its session locks) to itself.
    for (std::size_t s = 0; s < spec.sessions.size(); ++s) {
      pools_.push_back(env.new_pg_pool(pg::PoolConfig{.application_name = "isolation",
                                                      .pool_size = 1,
                                                      .max_overflow = 0,
                                                      .backend_terminated = faults.backend_terminated,
                                                      .server_restart = faults.server_restart,
                                                      .schema = harness_->config().schema}));
    }
  }

  int actor_count() const override { return static_cast<int>(spec_.sessions.size()); }
  std::string_view actor_name(ActorId actor) const override { return spec_.sessions[static_cast<std::size_t>(actor)].name; }

  void run_actor(ActorId actor) override {
    const sql::SpecSession& session = spec_.sessions[static_cast<std::size_t>(actor)];
    auto c = checkout_session(actor);
    for (const sql::SqlBlock& block : session.setup) (void)c->exec(block.text);
    std::int64_t index = first_step_index(actor);
    for (const sql::SpecStep& step : session.steps) {
      env_.observe(step_started(index++));  // where the step begins (a fact: no step of the schedule)
      (void)c->exec(step.sql.text);  // an error is the step's outcome
    }
    for (const sql::SqlBlock& block : session.teardown) (void)c->exec(block.text);
  }

  std::optional<Violation> at_end() override {
    auto c = harness_->checkout().value();
    std::optional<Violation> v = checked(c);
    // The spec's teardown, as isolationtester runs it after each permutation: objects outside
    // the run's own schema (CREATE SCHEMA, CREATE TYPE) are gone before the next execution.
    if (!spec_.teardown.empty()) {
      if (!c) c = harness_->checkout().value();
      for (const sql::SqlBlock& block : spec_.teardown) (void)c->exec(block.text);
    }
    return v;
  }

  std::optional<Violation> checked(pg::PooledConnection& c) {
    for (const sql::SpecCheck& check : spec_.checks) {
      auto r = c->exec(check.sql.text);
      if (!r.ok() && session_gone(r.error())) {  // the server restarted: a new connection
        c.release();
        c = harness_->checkout().value();
        r = c->exec(check.sql.text);
      }
      if (!r.ok()) return Violation{check.name, fmt::format("check \"{}\" failed: {}", check.name, error_text(r.error()))};
      const pg::Rows& rows = r.value();
      const bool holds = rows.size() == 1 && rows.columns.size() == 1 && rows.rows[0][0] == std::optional<std::string>("t");
      if (!holds) {
        const std::string got = rows.empty() ? "no row" : rows.rows[0][0].value_or("NULL");
        return Violation{check.name, fmt::format("check \"{}\" is not true (it returned {}): {}", check.name, got, check.sql.text)};
      }
    }
    return std::nullopt;
  }

 private:
  // A session's connection. A real server restarting (the server_restart fault, struck by
  // another session) refuses connections until it is up again: the session waits for it,
  // for up to 30 s, as it never has to on the simulated server, which restarts at once.
  pg::PooledConnection checkout_session(ActorId actor) {
    for (int attempt = 0;; ++attempt) {
      auto got = pools_[static_cast<std::size_t>(actor)]->checkout();
      if (got.ok()) return std::move(got).value();
      if (!session_gone(got.error()) || attempt == 3000) {
        throw ModelError(fmt::format("a session cannot connect: {}", error_text(got.error())));
      }
      env_.sleep_for(std::chrono::milliseconds(10));
    }
  }

  // The index (step_started's) of the first step of session `actor`.
  std::int64_t first_step_index(ActorId actor) const {
    std::int64_t index = 0;
    for (ActorId a = 0; a < actor; ++a) index += static_cast<std::int64_t>(spec_.sessions[static_cast<std::size_t>(a)].steps.size());
    return index;
  }

  const Spec& spec_;
  Env& env_;
  std::unique_ptr<pg::Pool> harness_;
  std::vector<std::unique_ptr<pg::Pool>> pools_;  // a session's each; destroyed before harness_, which owns the schema
};

class SpecSystem final : public System {
 public:
  SpecSystem(Spec spec, SpecFaults faults) : spec_(std::move(spec)), faults_(faults) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override { return std::make_unique<SpecInstance>(spec_, faults_, env); }

 private:
  Spec spec_;
  SpecFaults faults_;
};

}  // namespace

Event step_started(std::int64_t index) { return Event{kStepStarted, index, 0, false}; }

std::vector<std::string> steps_in_order(const Spec& spec, const std::vector<std::int64_t>& started) {
  std::vector<const sql::SpecStep*> all;
  for (const sql::SpecSession& session : spec.sessions) {
    for (const sql::SpecStep& step : session.steps) all.push_back(&step);
  }
  std::vector<std::string> names;
  for (const std::int64_t index : started) {
    if (index < 0 || static_cast<std::size_t>(index) >= all.size()) {
      throw InputError(fmt::format("{}: a step numbered {} (of {}): the trace is not of this spec", spec.file, index, all.size()));
    }
    names.push_back(all[static_cast<std::size_t>(index)]->name);
  }
  return names;
}

SystemInfo system_info() {
  SystemInfo info;
  info.name = "sql";
  info.description = "a PostgreSQL isolation spec (.spec): SQL sessions on the simulated server, with lockstep's checks";
  info.variants = {{"default", "the spec exactly as written"}};
  info.faults = {{"backend_terminated",
                  "any one statement of the sessions (COMMIT and ROLLBACK excepted) may find its backend terminated: it "
                  "fails with 57P01, the transaction is rolled back, the session's locks go, and its later statements fail "
                  "with 08006 (on a real server, confirm ends a session by pg_terminate_backend or by closing the client's "
                  "socket)"},
                 {"server_restart",
                  "at any one statement of the sessions (COMMIT and ROLLBACK excepted) the server may restart: every "
                  "session ends at once, committed rows stay; the checks run on a new connection (on a real server, "
                  "confirm --pg auto restarts its throwaway server with pg_ctl restart -m fast)"}};
  info.configure = [](const SystemInput& input) -> std::unique_ptr<System> {
    const std::vector<std::string> faults = enabled_faults(system_info(), input.faults);
    const auto on = [&](std::string_view name) { return std::find(faults.begin(), faults.end(), name) != faults.end(); };
    if (!input.config) input.fail("", "a sql scenario needs config.spec, the spec's text");
    input.config->expect_keys({"spec", "file"});
    const std::string file = input.config->find("file") ? input.config->at("file").as_string() : input.config->file();
    Spec spec = sql::parse_spec(input.config->at("spec").as_string(), file);
    for (const std::string& name : input.invariants_off) {  // the spec's checks are its invariants
      if (std::erase_if(spec.checks, [&](const sql::SpecCheck& c) { return c.name == name; }) == 0) {
        input.fail("/invariants", fmt::format("the spec has no check \"{}\"", name));
      }
    }
    return std::make_unique<SpecSystem>(std::move(spec), SpecFaults{on("backend_terminated"), on("server_restart")});
  };
  return info;
}

nlohmann::json scenario_document(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path)) throw InputError(fmt::format("{}: cannot read the file", path));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().size() > kMaxInputBytes) throw InputError(fmt::format("{}: larger than {} bytes", path, kMaxInputBytes));
  const Spec spec = sql::parse_spec(text.str(), path);  // errors name the file's line and column
  nlohmann::json doc = {{"format", "lockstep-scenario/1"},
                        {"name", std::filesystem::path(path).stem().string()},
                        {"description", fmt::format("PostgreSQL isolation spec {}", std::filesystem::path(path).filename().string())},
                        {"system", "sql"},
                        {"config", {{"spec", text.str()}, {"file", path}}}};
  for (std::size_t i = 0; i < spec.faults.size(); ++i) {
    const std::string& fault = spec.faults[i];
    bool known = false;
    std::string list;
    for (const NamedDoc& f : system_info().faults) {
      known = known || f.name == fault;
      list += fmt::format("{}{}", list.empty() ? "" : ", ", f.name);
    }
    if (!known) {
      throw InputError(fmt::format("{}:{}: fault \"{}\": the sql system has no such fault (it has: {})", path, spec.fault_lines[i], fault, list));
    }
    doc["faults"][fault] = true;
  }
  if (spec.expect) {
    doc["expect"] = {{"verdict", std::string(verdict_name(spec.expect->verdict))}};
    if (spec.expect->violation) doc["expect"]["violation"] = *spec.expect->violation;
  }
  return doc;
}

}  // namespace lockstep::sql_spec

namespace lockstep::sql_spec {
namespace {

// PQprint's test for a numeric-looking value: digits, '.', 'e', 'E', ' ', '-' only, ending
// in a digit and not starting with an exponent.
bool looks_numeric(const std::string& v) {
  if (v.empty()) return true;  // empty values do not decide
  char last = '0';
  for (const char ch : v) {
    last = ch;
    if (!((ch >= '0' && ch <= '9') || ch == '.' || ch == 'E' || ch == 'e' || ch == ' ' || ch == '-')) return false;
  }
  return !(v.front() == 'E' || v.front() == 'e') && last >= '0' && last <= '9';
}

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (const unsigned char c : s) n += (c & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

std::string padded(const std::string& s, std::size_t width, bool right) {
  const std::size_t w = display_width(s);
  const std::string fill(width > w ? width - w : 0, ' ');
  return right ? fill + s : s + fill;
}

// The shared state of one permutation's run: the driver hands a session its next step and
// reads its result; plain memory, as one schedule runs (no exploration).
struct Board {
  std::vector<const sql::SqlBlock*> next;  // per session: the SQL to run, or nullptr
  std::vector<bool> busy;                  // per session: running a step
  std::vector<std::vector<pg::Result<pg::Rows>>> result;  // per session: each statement's, up to the first error
  std::vector<int> pid;                    // per session: its backend's
  Time driver_wakes_at{0};                 // when the driver's current sleep ends (in the past while it runs)
  std::vector<bool> sleeping;              // per session: running a statement that calls pg_sleep
  std::vector<const pg::Connection*> connection;  // per session: its own (whether it is in pg_sleep now)
  std::vector<std::string> notices;        // per session: notices received, not yet printed
  // per session, per statement of its step after the first: the notices it raised, printed
  // after the step's header, before its result (isolationtester reads them once the first
  // statement's result has been taken).
  std::vector<std::vector<std::string>> later_notices;
  std::vector<int> notice_count;           // per session: all it received
  std::vector<std::vector<pg::Notification>> notifications;  // per session: NOTIFY messages read, not yet printed
  bool finished = false;
  std::string output;
};

constexpr Duration kSessionPoll = std::chrono::milliseconds(1);
// The driver's wait for a step: isolationtester's 10 ms, plus the session's pickup (up to one
// session poll: on the server the backend starts at once), so that a step the server ends
// within 10 ms of starting it (a deadlock_timeout of 10 ms, as PostgreSQL's deadlock specs
// set) is seen finished; and off the sessions' grid of whole milliseconds, so that the two
// never wake at one instant.
constexpr Duration kDriverPoll = std::chrono::milliseconds(10) + kSessionPoll + std::chrono::microseconds(1);

class PermutationInstance final : public Instance, private sql::IsolationSessions {
 public:
  PermutationInstance(const Spec& spec, const std::vector<sql::PermutationStep>& steps, bool with_checks, Duration max_step_wait,
                      Env& env)
      : spec_(spec),
        steps_(steps),
        with_checks_(with_checks),
        max_step_wait_(max_step_wait),
        env_(env),
        pool_(env.new_pg_pool(pg::PoolConfig{.application_name = "isolation",
                                              .pool_size = static_cast<int>(spec.sessions.size()) + 1,
                                              .max_overflow = 0,
                                              .settings = sql::regress_settings()})),
        // isolationtester's control connection: the setup and teardown blocks' own, so that
        // what a setup block SETs is no session's (and the teardown's again).
        control_(env.new_pg_pool(pg::PoolConfig{.application_name = "isolation", .pool_size = 1, .max_overflow = 0, .settings = sql::regress_settings()})) {
    const std::size_t n = spec.sessions.size();
    board_.next.assign(n, nullptr);
    board_.busy.assign(n, false);
    board_.result.assign(n, {});
    board_.pid.assign(n, 0);
    board_.notices.assign(n, {});
    board_.later_notices.assign(n, {});
    board_.sleeping.assign(n, false);
    board_.connection.assign(n, nullptr);
    board_.notice_count.assign(n, 0);
    board_.notifications.assign(n, {});
    canceled_after_.assign(n, std::nullopt);
    setup_output_ = run_setup(spec_, *control_);
  }

  int actor_count() const override { return static_cast<int>(spec_.sessions.size()) + 1; }
  std::string_view actor_name(ActorId actor) const override {
    return static_cast<std::size_t>(actor) < spec_.sessions.size() ? std::string_view(spec_.sessions[static_cast<std::size_t>(actor)].name)
                                                                  : std::string_view("isolationtester");
  }

  void run_actor(ActorId actor) override {
    if (static_cast<std::size_t>(actor) == spec_.sessions.size()) {
      drive();
      return;
    }
    const auto s = static_cast<std::size_t>(actor);
    auto c = pool_->checkout().value();
    board_.pid[s] = c->backend_pid();
    board_.connection[s] = &*c;
    while (true) {
      while (board_.next[s] == nullptr && !board_.finished) idle_poll();
      if (board_.next[s] == nullptr) break;
      const sql::SqlBlock& block = *board_.next[s];
      board_.next[s] = nullptr;
      // Each statement of the block in turn, as the server runs a query string, up to the
      // first that fails; each result is printed.
      if (block.statements.size() <= 1) {
        board_.sleeping[s] = calls_pg_sleep(block.text);
        board_.result[s].push_back(c->exec(block.text));
        receive_notices(s, *c);
      } else {
        c->begin_query_string(block.text);
        for (const sql::Statement& st : block.statements) {
          board_.sleeping[s] = calls_pg_sleep(st.text);
          board_.result[s].push_back(c->exec(st.text));
          const std::size_t i = board_.result[s].size() - 1;
          // libpq hands a notice to isolationtester as soon as it parses it: one a statement
          // raises before sending rows' description (a statement without rows: COMMIT, an
          // INSERT; and an INSERT, UPDATE or DELETE ... RETURNING, or a SELECT with a
          // data-modifying WITH, which the server runs to its end before describing its rows:
          // FillPortalStore) follows the statement before's result at once and prints before
          // that result (the first's: before the step's line); one after it, before its own result.
          std::string* into = nullptr;
          if (i > 0) {
            board_.later_notices[s].emplace_back();
            const auto* select = std::get_if<sql::Select>(&st.body);
            const bool streams = select != nullptr && std::none_of(select->with.begin(), select->with.end(),
                                                                   [](const sql::CommonTable& w) { return w.modifying != nullptr; });
            const bool described = streams && board_.result[s].back().ok() && !board_.result[s].back().value().columns.empty();
            into = described ? &board_.later_notices[s].back() : i >= 2 ? &board_.later_notices[s][i - 2] : nullptr;
          }
          receive_notices(s, *c, into);
          if (!board_.result[s].back().ok()) break;
        }
        c->end_query_string();
        // The string's implicit block commits at its end: NOTIFYs in it reach a session
        // listening to itself with the string's last result (found by the async-notify survey).
        for (pg::Notification& n : c->take_notifications()) board_.notifications[s].push_back(std::move(n));
      }
      board_.sleeping[s] = false;
      board_.busy[s] = false;
      // A construct the simulated server refuses while running (a function it does not have,
      // say) is the spec's refusal, not an ERROR line the server would not print.
      for (const pg::Result<pg::Rows>& r : board_.result[s]) {
        if (!r.ok() && r.error().sqlstate == "0A000" && r.error().message.find("lockstep's SQL subset") != std::string::npos) {
          throw ModelError(fmt::format("{}:{}: {}", spec_.file, block.line, r.error().message));
        }
      }
    }
  }

  // What isolationtester prints, the spec's teardown last: run here, after every session
  // ended and outside them (its DDL is no step of the run), its block's rows printed.
  std::string final_state() override {
    if (!spec_.teardown.empty() && !torn_down_ && board_.finished) {
      torn_down_ = true;
      auto c = control_->checkout().value();
      for (const sql::SqlBlock& block : spec_.teardown) {
        const auto r = c->exec(block.text);
        if (r.ok()) board_.output += printed_result(r.value());
      }
    }
    return board_.output;
  }

 private:
  // sql::IsolationSessions, on the simulated sessions. A step still running one poll (10 ms
  // of virtual time) after it was sent waits for a lock: nothing else keeps a simulated
  // statement busy while its session's clock stands still.
  void send(std::size_t s, const sql::SqlBlock& sql) override {
    board_.busy[s] = true;
    board_.result[s].clear();
    board_.later_notices[s].clear();
    board_.next[s] = &sql;
  }
  // An idle session's poll: its next grid point (a whole number of session polls on) at or
  // after the driver's wake-up, where it would first find a new step, without the polls
  // between that could find nothing (a step canceled after 300 virtual seconds would take
  // each idle session 300,000 of them). It wakes at the instant it would have, so the run
  // and its output are those of polling every millisecond.
  void idle_poll() {
    const Duration gap = board_.driver_wakes_at - env_.now();
    const auto polls = gap > kSessionPoll ? (gap + kSessionPoll - Duration(1)) / kSessionPoll : 1;
    env_.sleep_for(polls * kSessionPoll);
  }
  void driver_sleep(Duration d) {
    board_.driver_wakes_at = env_.now() + d;
    env_.sleep_for(d);
  }

  static bool calls_pg_sleep(std::string_view sql) {
    std::string lower(sql);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    return lower.find("pg_sleep") != std::string::npos;
  }
  // The warnings and notices a statement raised, as the session's notice processor prints
  // them: "NAME: SEVERITY:  message" (class 01 and 25 are warnings, the rest notices).
  // `later`: a statement after the step's first, whose notices print after the header.
  void receive_notices(std::size_t s, pg::Connection& c, std::string* later = nullptr) {
    for (const pg::Error& w : c.take_warnings()) {
      const bool warning = w.sqlstate.starts_with("01") || w.sqlstate.starts_with("25");
      (later != nullptr ? *later : board_.notices[s]) += fmt::format("{}: {}:  {}\n", spec_.sessions[s].name, warning ? "WARNING" : "NOTICE", w.message);
      ++board_.notice_count[s];
    }
    for (pg::Notification& n : c.take_notifications()) board_.notifications[s].push_back(std::move(n));
  }
  // isolationtester prints a session's notices as it reads from the session's connection.
  void print_notices(std::size_t s) { board_.output += std::exchange(board_.notices[s], {}); }

  bool wait(std::size_t s, bool may_block) override {
    print_notices(s);
    if (!board_.busy[s]) return true;
    driver_sleep(kDriverPoll);
    Duration waited = kDriverPoll;
    bool canceled = false;
    // A session in pg_sleep is busy without waiting for a lock: isolationtester, asking the
    // server, waits for it; once the statement waits for a lock instead, it is seen waiting.
    const auto in_sleep = [&] { return board_.sleeping[s] && board_.connection[s] != nullptr && board_.connection[s]->in_pg_sleep(); };
    while ((!may_block || in_sleep()) && board_.busy[s]) {
      if (!canceled && waited > max_step_wait_) {  // isolationtester's PQcancel, from its control connection
        auto control = pool_->checkout().value();
        const auto sent = control->exec(fmt::format("SELECT pg_cancel_backend({})", board_.pid[s]));
        if (!sent.ok()) throw ModelError(fmt::format("isolationtester could not cancel a step: {}", error_text(sent.error())));
        canceled_after_[s] = static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(waited).count());
        canceled = true;
      }
      driver_sleep(kDriverPoll);
      waited += kDriverPoll;
    }
    print_notices(s);
    return !board_.busy[s];
  }
  // A failed statement as isolationtester prints its PQresultErrorMessage: a server's ERROR,
  // or libpq's own report of a connection the server ended while the session was idle (the
  // FATAL it read, then the loss, over several lines).
  static std::string printed_error(const pg::Error& e) {
    static constexpr std::string_view kLost = "; server closed the connection unexpectedly";
    if (e.sqlstate != pg::sqlstate::kConnectionFailure || !e.message.ends_with(kLost)) return fmt::format("ERROR:  {}\n", e.message);
    return fmt::format("FATAL:  {}\nserver closed the connection unexpectedly\n\tThis probably means the server terminated abnormally\n"
                       "\tbefore or while processing the request.\n\n",
                       std::string_view(e.message).substr(0, e.message.size() - kLost.size()));
  }
  std::optional<int> canceled_after(std::size_t s) override { return std::exchange(canceled_after_[s], std::nullopt); }
  void print_results(std::size_t s, std::string& out) override {
    for (std::size_t i = 0; i < board_.result[s].size(); ++i) {
      if (i > 0 && i - 1 < board_.later_notices[s].size()) out += board_.later_notices[s][i - 1];
      const pg::Result<pg::Rows>& r = board_.result[s][i];
      out += r.ok() ? printed_result(r.value()) : printed_error(r.error());
    }
    // The NOTIFY messages its connection read, named by their sender, as isolationtester prints them.
    for (const pg::Notification& n : std::exchange(board_.notifications[s], {})) {
      std::string sender = fmt::format("PID {}", n.pid);
      for (std::size_t k = 0; k < board_.pid.size(); ++k) {
        if (board_.pid[k] == n.pid) sender = spec_.sessions[k].name;
      }
      out += fmt::format("{}: NOTIFY \"{}\" with payload \"{}\" from {}\n", spec_.sessions[s].name, n.channel, n.payload, sender);
    }
  }
  int notices(std::size_t s) const override { return board_.notice_count[s]; }
  std::chrono::nanoseconds pause() override {
    driver_sleep(kDriverPoll);
    return kDriverPoll;
  }
  std::chrono::seconds max_step_wait() const override { return std::chrono::duration_cast<std::chrono::seconds>(max_step_wait_); }

  // A setup or teardown block on session s, waited for; its last result printed when it has
  // rows (isolationtester's PQexec of the block).
  void run_block(std::size_t s, const sql::SqlBlock& sql) {
    send(s, sql);
    (void)wait(s, false);
    if (!board_.result[s].empty() && board_.result[s].back().ok()) board_.output += printed_result(board_.result[s].back().value());
  }

  void drive() {
    std::string names;
    for (const auto& step : steps_) names += " " + step.step;
    board_.output += fmt::format("\nstarting permutation:{}\n", names);
    board_.output += setup_output_;
    for (std::size_t s = 0; s < spec_.sessions.size(); ++s) {
      for (const sql::SqlBlock& block : spec_.sessions[s].setup) run_block(s, block);
    }
    sql::drive_permutation(spec_, steps_, *this, board_.output);
    for (std::size_t s = 0; s < spec_.sessions.size(); ++s) {
      for (const sql::SqlBlock& block : spec_.sessions[s].teardown) run_block(s, block);
    }
    if (with_checks_) {
      auto c = pool_->checkout().value();
      for (const sql::SpecCheck& check : spec_.checks) board_.output += checked_line(check.name, c->exec(check.sql.text));
    }
    board_.finished = true;
  }

  const Spec& spec_;
  std::vector<sql::PermutationStep> steps_;
  bool with_checks_;
  std::string setup_output_;  // what the spec's setup blocks print, after the permutation's header
  Duration max_step_wait_;
  Env& env_;
  std::unique_ptr<pg::Pool> pool_;
  std::unique_ptr<pg::Pool> control_;
  Board board_;
  std::vector<std::optional<int>> canceled_after_;
  bool torn_down_ = false;
};

class PermutationSystem final : public System {
 public:
  PermutationSystem(const Spec& spec, std::vector<sql::PermutationStep> steps, bool with_checks, Duration max_step_wait)
      : spec_(spec), steps_(std::move(steps)), with_checks_(with_checks), max_step_wait_(max_step_wait) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override {
    return std::make_unique<PermutationInstance>(spec_, steps_, with_checks_, max_step_wait_, env);
  }

 private:
  const Spec& spec_;
  std::vector<sql::PermutationStep> steps_;
  bool with_checks_;
  std::string setup_output_;  // what the spec's setup blocks print, after the permutation's header
  Duration max_step_wait_;
};

void interleavings(const Spec& spec, std::vector<std::size_t>& at, std::vector<sql::PermutationStep>& current,
                   std::vector<std::vector<sql::PermutationStep>>& out) {
  bool any = false;
  for (std::size_t s = 0; s < spec.sessions.size(); ++s) {
    if (at[s] == spec.sessions[s].steps.size()) continue;
    any = true;
    current.push_back(sql::PermutationStep{spec.sessions[s].steps[at[s]].name, {}, {}});
    ++at[s];
    interleavings(spec, at, current, out);
    --at[s];
    current.pop_back();
  }
  if (!any) out.push_back(current);
}

}  // namespace

std::uint64_t interleaving_count(const Spec& spec) {
  // The multinomial (n1 + ... + nk)! / (n1! ... nk!), one binomial C(m + k, k) at a time:
  // count * (m + k) / k is exact at each k (it is the previous sessions' count times
  // C(m + k, k)), and wide enough in 128 bits; saturating.
  constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t count = 1, steps = 0;
  for (const sql::SpecSession& s : spec.sessions) {
    for (std::uint64_t k = 1; k <= s.steps.size(); ++k) {
      ++steps;
      const unsigned __int128 wide = static_cast<unsigned __int128>(count) * steps / k;
      if (wide > kSaturated) return kSaturated;
      count = static_cast<std::uint64_t>(wide);
    }
  }
  return count;
}

std::vector<std::vector<sql::PermutationStep>> permutations(const Spec& spec) {
  if (!spec.permutations.empty()) return spec.permutations;
  if (const std::uint64_t n = interleaving_count(spec); n > kMaxInterleavings) {
    throw InputError(fmt::format("{}: without permutation lines its sessions' steps interleave in {} ways, more than {} to run one by one: "
                                 "add permutation lines, or explore every order with `lockstep check`",
                                 spec.file, n == std::numeric_limits<std::uint64_t>::max() ? std::string("over 1.8e19") : fmt::format("{}", n),
                                 kMaxInterleavings));
  }
  std::vector<std::vector<sql::PermutationStep>> out;
  std::vector<std::size_t> at(spec.sessions.size(), 0);
  std::vector<sql::PermutationStep> current;
  interleavings(spec, at, current, out);
  return out;
}

std::unique_ptr<System> permutation_system(const Spec& spec, const std::vector<sql::PermutationStep>& steps, bool with_checks,
                                           std::chrono::seconds max_step_wait) {
  return std::make_unique<PermutationSystem>(spec, steps, with_checks, max_step_wait);
}

std::string checked_line(const std::string& name, const pg::Result<pg::Rows>& result) {
  if (!result.ok()) return fmt::format("check \"{}\": ERROR:  {}\n", name, result.error().message);
  const pg::Rows& rows = result.value();
  const std::string got = rows.empty() || rows.columns.empty() ? "no row" : rows.rows[0][0].value_or("NULL");
  return fmt::format("check \"{}\": {}\n", name, got);
}

std::string printed_result(const pg::Rows& rows) {
  if (rows.columns.empty()) return "";
  const std::size_t n = rows.columns.size();
  std::vector<std::size_t> width(n, 0);
  std::vector<bool> numeric(n, true);
  for (std::size_t j = 0; j < n; ++j) width[j] = display_width(rows.columns[j]);
  for (const auto& row : rows.rows) {
    for (std::size_t j = 0; j < n; ++j) {
      const std::string v = row[j].value_or("");
      width[j] = std::max(width[j], display_width(v));
      if (!looks_numeric(v)) numeric[j] = false;
    }
  }
  std::string out;
  for (std::size_t j = 0; j < n; ++j) out += padded(rows.columns[j], width[j], false) + (j + 1 < n ? "|" : "\n");
  for (std::size_t j = 0; j < n; ++j) out += std::string(width[j], '-') + (j + 1 < n ? "+" : "\n");
  for (const auto& row : rows.rows) {
    for (std::size_t j = 0; j < n; ++j) out += padded(row[j].value_or(""), width[j], numeric[j]) + (j + 1 < n ? "|" : "\n");
  }
  out += fmt::format("({} row{})\n\n", rows.rows.size(), rows.rows.size() == 1 ? "" : "s");
  return out;
}

}  // namespace lockstep::sql_spec
