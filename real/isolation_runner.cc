#include "lockstep/real/isolation_runner.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <libpq-fe.h>

#include "lockstep/model/json_cursor.h"
#include "lockstep/model/sql/isolation_driver.h"
#include "lockstep/model/systems/sql_spec.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/pg_result.h"
#include "lockstep/real/startup_settings.h"
#include "lockstep/real/statements.h"

namespace lockstep::real {
// A named namespace, not an anonymous one: the unity build puts this file beside conform.cc,
// whose anonymous namespace has a Conn and a Session of its own.
namespace isolation_runner {

using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 10;                            // isolationtester checks for lock waits every 10 ms
constexpr std::chrono::seconds kWaitNoted{10};         // a step running this long is said on stderr, once

struct ConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using Conn = std::unique_ptr<PGconn, ConnDeleter>;

// A session's connection, and what its notices are printed into.
struct Session {
  std::string name;
  Conn conn;
  std::string* out = nullptr;
  int notices = 0;
  std::optional<int> canceled_after;  // the seconds after which the latest wait canceled its step
};

// isolationtester's notice processor: the backend's message, prefixed with the session.
void print_notice(void* arg, const char* message) {
  auto* s = static_cast<Session*>(arg);
  *s->out += fmt::format("{}: {}", s->name, message);
  ++s->notices;
}

constexpr std::string_view kEmptyPublic =
    "DROP SCHEMA public CASCADE; CREATE SCHEMA public AUTHORIZATION pg_database_owner; GRANT USAGE ON SCHEMA public TO PUBLIC";

class Runner final : private ::lockstep::sql::IsolationSessions {
 public:
  Runner(const ::lockstep::sql::Spec& spec, const std::string& conninfo, std::chrono::seconds max_step_wait,
         std::function<bool()> stop, bool private_server)
      : spec_(spec), max_step_wait_(max_step_wait), stop_(std::move(stop)), in_public_(private_server) {
    static std::atomic<int> runs{0};
    schema_ = in_public_ ? "public" : fmt::format("lockstep_isolation_{}_{}", ::getpid(), runs++);
    control_.name = "control connection";
    control_.conn = connect(conninfo, control_);
    PQsetNoticeProcessor(control_.conn.get(), [](void*, const char*) {}, nullptr);  // isolationtester hides the control connection's notices
    // In public: emptied before the run too (a run before may have ended with its control
    // connection gone), and made as initdb makes it (owner pg_database_owner, USAGE for all).
    must(control_, in_public_ ? std::string(kEmptyPublic) : fmt::format("CREATE SCHEMA {}", schema_), "preparing the run's schema");
    for (const ::lockstep::sql::SpecSession& s : spec.sessions) {
      auto& session = sessions_.emplace_back(std::make_unique<Session>());
      session->name = s.name;
      session->conn = connect(conninfo, *session);
      pids_.push_back(PQbackendPID(session->conn.get()));
    }
  }

  ~Runner() override {
    // The run's tables go with its schema; a failure here leaves nothing a later run sees.
    for (auto& s : sessions_) s->conn.reset();
    const std::string drop = in_public_ ? std::string(kEmptyPublic) : fmt::format("DROP SCHEMA IF EXISTS {} CASCADE", schema_);
    PgResult(PQexec(control_.conn.get(), drop.c_str()));
  }

  std::string run(const std::vector<::lockstep::sql::PermutationStep>& steps, bool with_checks) {
    std::string names;
    for (const auto& step : steps) names += " " + step.step;
    out_ += fmt::format("\nstarting permutation:{}\n", names);
    for (const ::lockstep::sql::SqlBlock& block : spec_.setup) setup_block(control_, block, "setup");
    for (std::size_t s = 0; s < spec_.sessions.size(); ++s) {
      for (const ::lockstep::sql::SqlBlock& block : spec_.sessions[s].setup) setup_block(*sessions_[s], block, "session setup");
    }
    ::lockstep::sql::drive_permutation(spec_, steps, *this, out_);
    for (std::size_t s = 0; s < spec_.sessions.size(); ++s) {
      for (const ::lockstep::sql::SqlBlock& block : spec_.sessions[s].teardown) setup_block(*sessions_[s], block, "session teardown");
    }
    if (with_checks) {
      for (const ::lockstep::sql::SpecCheck& check : spec_.checks) {
        const PgResult r(exec(control_, check.sql.text));
        out_ += sql_spec::checked_line(check.name, PQresultStatus(r.get()) == PGRES_TUPLES_OK
                                                       ? pg::Result<pg::Rows>(sql::read_rows(r.get()))
                                                       : pg::Result<pg::Rows>(pg::Error{"", PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY) != nullptr
                                                                                               ? PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY)
                                                                                               : PQerrorMessage(control_.conn.get())}));
      }
    }
    for (const auto& s : sessions_) {  // its locks stay: a teardown that needs them waits, as isolationtester's does, for ever
      if (!spec_.teardown.empty() && PQtransactionStatus(s->conn.get()) != PQTRANS_IDLE) {
        std::cerr << fmt::format("lockstep isolation: session {} ends the permutation inside a transaction block; the teardown waits "
                                 "for any lock it holds (Ctrl-C stops the run)\n", s->name);
      }
    }
    for (const ::lockstep::sql::SqlBlock& block : spec_.teardown) setup_block(control_, block, "teardown");
    return out_;
  }

 private:
  // With the run's schema first on the search path, and the settings pg_regress gives every
  // isolation test (PGTZ, PGDATESTYLE, PGOPTIONS), as the connection's own: dates print as in
  // the expected files, and RESET ALL and DISCARD ALL keep the schema.
  Conn connect(const std::string& conninfo, Session& s) {
    auto settings = ::lockstep::sql::regress_settings();
    if (!in_public_) settings.emplace_back("search_path", fmt::format("{}, public", schema_));
    Conn c(connect_with_settings(conninfo, settings));
    if (PQstatus(c.get()) != CONNECTION_OK) {
      throw InputError(fmt::format("{}: cannot connect to {}: {}", spec_.file, redact_conninfo(conninfo), PQerrorMessage(c.get())));
    }
    s.out = &out_;
    PQsetNoticeProcessor(c.get(), print_notice, &s);
    return c;
  }

  // PQexec's last result, the wait stopped by Ctrl-C or SIGTERM (a teardown that waits for a
  // lock a session's open transaction holds would wait for ever): the statement canceled, then
  // PermutationInterrupted (the destructor closes the sessions, which frees their locks).
  PgResult exec(Session& s, const std::string& sql) {
    if (PQsendQuery(s.conn.get(), sql.c_str()) == 0) lost(s);
    while (PQisBusy(s.conn.get()) != 0) {
      if (stop_ && stop_()) {
        if (PGcancel* cancel = PQgetCancel(s.conn.get())) {
          char message[256];
          (void)PQcancel(cancel, message, sizeof message);
          PQfreeCancel(cancel);
        }
        while (PGresult* r = PQgetResult(s.conn.get())) PQclear(r);
        throw PermutationInterrupted();
      }
      pollfd p{PQsocket(s.conn.get()), POLLIN, 0};
      const int ready = ::poll(&p, 1, kPollMs);
      if (ready < 0 && errno != EINTR) lost(s);
      if (ready > 0 && PQconsumeInput(s.conn.get()) == 0) lost(s);
    }
    PgResult last;
    while (PGresult* r = PQgetResult(s.conn.get())) last.reset(r);
    return last;
  }

  void must(Session& s, const std::string& sql, const char* what) {
    const PgResult r(exec(s, sql));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      throw InputError(fmt::format("{}: {} failed: {}", spec_.file, what, PQerrorMessage(s.conn.get())));
    }
  }

  // A setup or teardown block: its rows printed, a failure bad input (as isolationtester stops).
  void setup_block(Session& s, const ::lockstep::sql::SqlBlock& block, const char* what) {
    const PgResult r(exec(s, block.text));
    const ExecStatusType status = PQresultStatus(r.get());
    if (status == PGRES_TUPLES_OK) {
      out_ += sql_spec::printed_result(sql::read_rows(r.get()));
    } else if (status != PGRES_COMMAND_OK && status != PGRES_EMPTY_QUERY) {
      throw InputError(fmt::format("{}:{}: {} failed on the server: {}", spec_.file, block.line, what, PQerrorMessage(s.conn.get())));
    }
  }

  [[noreturn]] void lost(const Session& s) const {
    throw InputError(fmt::format("{}: session {} lost its connection: {}", spec_.file, s.name, PQerrorMessage(s.conn.get())));
  }

  // Whether the server says session s waits for a lock another session holds.
  bool blocked(const Session& s) {
    const int pid = PQbackendPID(s.conn.get());
    const std::string sql =
        fmt::format("SELECT pg_catalog.pg_isolation_test_session_is_blocked({}, '{{{}}}')", pid, fmt::join(pids_, ","));
    const PgResult r(PQexec(control_.conn.get(), sql.c_str()));
    if (PQresultStatus(r.get()) != PGRES_TUPLES_OK) {
      throw InputError(fmt::format("{}: the lock-wait check failed: {}", spec_.file, PQerrorMessage(control_.conn.get())));
    }
    return PQgetvalue(r.get(), 0, 0)[0] == 't';
  }

  // sql::IsolationSessions on libpq connections.
  void send(std::size_t s, const ::lockstep::sql::SqlBlock& sql) override {
    if (PQsendQuery(sessions_[s]->conn.get(), sql.text.c_str()) == 0) lost(*sessions_[s]);
  }

  // isolationtester's wait in try_complete_step: poll every 10 ms; with may_block, ask the
  // server whether the session waits for a lock; cancel a step still running after 5 minutes.
  bool wait(std::size_t index, bool may_block) override {
    Session& s = *sessions_[index];
    const auto start = Clock::now();
    bool canceled = false, noted = false;
    while (PQisBusy(s.conn.get()) != 0) {
      if (!noted && max_step_wait_ > kWaitNoted && Clock::now() - start > kWaitNoted) {  // not a hang: say what it waits for
        noted = true;
        std::cerr << fmt::format("lockstep isolation: a step has run {} s on the server; it is canceled after {} s (--max-step-wait)\n",
                                 kWaitNoted.count(), max_step_wait_.count());
      }
      if (stop_ && stop_()) throw PermutationInterrupted();
      pollfd p{PQsocket(s.conn.get()), POLLIN, 0};
      const int ready = ::poll(&p, 1, kPollMs);
      if (ready < 0 && errno != EINTR) lost(s);
      if (ready > 0) {
        if (PQconsumeInput(s.conn.get()) == 0) lost(s);
        continue;
      }
      if (may_block && blocked(s)) {
        // Notices may have come while asking: collect them, and a result that came too.
        if (PQconsumeInput(s.conn.get()) == 0) lost(s);
        if (PQisBusy(s.conn.get()) == 0) break;
        return false;
      }
      if (!canceled && Clock::now() - start > max_step_wait_) {
        char message[256];
        PGcancel* cancel = PQgetCancel(s.conn.get());
        if (cancel != nullptr) {
          if (PQcancel(cancel, message, sizeof message) != 0) {
            s.canceled_after = static_cast<int>(std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count());
          }
          PQfreeCancel(cancel);
        }
        canceled = true;
      }
    }
    return true;
  }

  std::optional<int> canceled_after(std::size_t index) override { return std::exchange(sessions_[index]->canceled_after, std::nullopt); }

  void print_results(std::size_t index, std::string& out) override {
    Session& s = *sessions_[index];
    while (PGresult* raw = PQgetResult(s.conn.get())) {
      const PgResult r(raw);
      switch (PQresultStatus(r.get())) {
        case PGRES_COMMAND_OK:
        case PGRES_EMPTY_QUERY: break;
        case PGRES_TUPLES_OK: out += sql_spec::printed_result(sql::read_rows(r.get())); break;
        case PGRES_FATAL_ERROR: {
          const char* severity = PQresultErrorField(r.get(), PG_DIAG_SEVERITY);
          const char* message = PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY);
          out += severity != nullptr && message != nullptr ? fmt::format("{}:  {}\n", severity, message)
                                                           : fmt::format("{}\n", PQresultErrorMessage(r.get()));
          break;
        }
        default: out += fmt::format("unexpected result status: {}\n", PQresStatus(PQresultStatus(r.get())));
      }
    }
    // NOTIFY messages that came, named by the session that sent them, as isolationtester shows them.
    (void)PQconsumeInput(s.conn.get());
    while (PGnotify* n = PQnotifies(s.conn.get())) {
      std::string sender = fmt::format("PID {}", n->be_pid);
      for (std::size_t k = 0; k < pids_.size(); ++k) {
        if (pids_[k] == n->be_pid) sender = sessions_[k]->name;
      }
      out += fmt::format("{}: NOTIFY \"{}\" with payload \"{}\" from {}\n", s.name, n->relname, n->extra, sender);
      PQfreemem(n);
      (void)PQconsumeInput(s.conn.get());
    }
  }

  int notices(std::size_t s) const override { return sessions_[s]->notices; }
  std::chrono::nanoseconds pause() override {
    if (stop_ && stop_()) throw PermutationInterrupted();
    ::poll(nullptr, 0, kPollMs);
    return std::chrono::milliseconds(kPollMs);
  }
  std::chrono::seconds max_step_wait() const override { return max_step_wait_; }

  const ::lockstep::sql::Spec& spec_;
  std::chrono::seconds max_step_wait_;
  std::function<bool()> stop_;
  bool in_public_;
  std::string schema_;
  Session control_;
  std::vector<std::unique_ptr<Session>> sessions_;  // stable: notices point at them
  std::vector<int> pids_;
  std::string out_;
};

}  // namespace isolation_runner

std::string run_permutation_on_server(const ::lockstep::sql::Spec& spec, const std::vector<::lockstep::sql::PermutationStep>& steps,
                                      const std::string& conninfo, std::chrono::seconds max_step_wait, bool with_checks,
                                      std::function<bool()> stop, bool private_server) {
  isolation_runner::Runner runner(spec, conninfo, max_step_wait, std::move(stop), private_server);
  return runner.run(steps, with_checks);
}

}  // namespace lockstep::real
