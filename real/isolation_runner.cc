#include "lockstep/real/isolation_runner.h"

#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <libpq-fe.h>

#include "lockstep/model/json_cursor.h"
#include "lockstep/model/systems/sql_spec.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/pg_result.h"
#include "lockstep/real/statements.h"

namespace lockstep::real {
// A named namespace, not an anonymous one: the unity build puts this file beside conform.cc,
// whose anonymous namespace has a Conn and a Session of its own.
namespace isolation_runner {

using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 10;                                  // isolationtester checks for lock waits every 10 ms
constexpr auto kMaxStepWait = std::chrono::minutes(5);        // then the step is canceled
constexpr unsigned kNonblock = 1, kRetry = 2;                // isolationtester's STEP_NONBLOCK, STEP_RETRY

struct ConnDeleter {
  void operator()(PGconn* c) const { PQfinish(c); }
};
using Conn = std::unique_ptr<PGconn, ConnDeleter>;

// A session's connection, and what its notices are printed into.
struct Session {
  std::string name;
  Conn conn;
  std::string* out = nullptr;
  const ::lockstep::sql::SpecStep* active = nullptr;  // the step it runs, until its results are printed
};

// isolationtester's notice processor: the backend's message, prefixed with the session.
void print_notice(void* arg, const char* message) {
  auto* s = static_cast<Session*>(arg);
  *s->out += fmt::format("{}: {}", s->name, message);
}

class Runner {
 public:
  Runner(const ::lockstep::sql::Spec& spec, const std::string& conninfo) : spec_(spec) {
    static std::atomic<int> runs{0};
    schema_ = fmt::format("lockstep_isolation_{}_{}", ::getpid(), runs++);
    control_.name = "control connection";  // as isolationtester names it in notices
    control_.conn = connect(conninfo, control_);
    must(control_, fmt::format("CREATE SCHEMA {}", schema_), "creating the run's schema");
    set_search_path(control_);
    for (const ::lockstep::sql::SpecSession& s : spec.sessions) {
      auto& session = sessions_.emplace_back(std::make_unique<Session>());
      session->name = s.name;
      session->conn = connect(conninfo, *session);
      set_search_path(*session);
      pids_.push_back(PQbackendPID(session->conn.get()));
    }
  }

  ~Runner() {
    // The run's tables go with its schema; a failure here leaves nothing a later run sees.
    for (auto& s : sessions_) s->conn.reset();
    PgResult(PQexec(control_.conn.get(), fmt::format("DROP SCHEMA IF EXISTS {} CASCADE", schema_).c_str()));
  }

  std::string run(const std::vector<std::string>& steps) {
    for (const ::lockstep::sql::SqlBlock& block : spec_.setup) setup_block(control_, block, "setup");
    for (std::size_t s = 0; s < spec_.sessions.size(); ++s) {
      for (const ::lockstep::sql::SqlBlock& block : spec_.sessions[s].setup) setup_block(*sessions_[s], block, "session setup");
    }
    out_ += fmt::format("\nstarting permutation: {}\n", fmt::join(steps, " "));
    std::vector<Session*> waiting;
    for (const std::string& name : steps) {
      int index = -1;
      const ::lockstep::sql::SpecStep* step = spec_.find_step(name, &index);
      Session& s = *sessions_[static_cast<std::size_t>(index)];
      // A session still busy with an earlier step finishes it first, others polled meanwhile.
      while (s.active != nullptr) {
        if (!try_complete(s, kRetry)) std::erase(waiting, &s);
        complete_waiting(waiting);
      }
      if (PQsendQuery(s.conn.get(), step->sql.text.c_str()) == 0) lost(s);
      s.active = step;
      const bool blocked = try_complete(s, kNonblock);
      complete_waiting(waiting);
      if (blocked) waiting.push_back(&s);
    }
    while (!waiting.empty()) {
      for (auto it = waiting.begin(); it != waiting.end();) it = try_complete(**it, kRetry) ? it + 1 : waiting.erase(it);
    }
    for (std::size_t s = 0; s < spec_.sessions.size(); ++s) {
      for (const ::lockstep::sql::SqlBlock& block : spec_.sessions[s].teardown) setup_block(*sessions_[s], block, "session teardown");
    }
    for (const ::lockstep::sql::SqlBlock& block : spec_.teardown) setup_block(control_, block, "teardown");
    return out_;
  }

 private:
  Conn connect(const std::string& conninfo, Session& s) {
    Conn c(PQconnectdb(conninfo.c_str()));
    if (PQstatus(c.get()) != CONNECTION_OK) {
      throw InputError(fmt::format("{}: cannot connect to {}: {}", spec_.file, redact_conninfo(conninfo), PQerrorMessage(c.get())));
    }
    s.out = &out_;
    PQsetNoticeProcessor(c.get(), print_notice, &s);
    return c;
  }

  void set_search_path(Session& s) { must(s, fmt::format("SET search_path = {}, public", schema_), "setting the run's schema"); }

  void must(Session& s, const std::string& sql, const char* what) {
    const PgResult r(PQexec(s.conn.get(), sql.c_str()));
    if (PQresultStatus(r.get()) != PGRES_COMMAND_OK) {
      throw InputError(fmt::format("{}: {} failed: {}", spec_.file, what, PQerrorMessage(s.conn.get())));
    }
  }

  // A setup or teardown block: its rows printed, a failure bad input (as isolationtester stops).
  void setup_block(Session& s, const ::lockstep::sql::SqlBlock& block, const char* what) {
    const PgResult r(PQexec(s.conn.get(), block.text.c_str()));
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

  // isolationtester's try_complete_step: true while the step waits for a lock (shown
  // "<waiting ...>" the first time, unless kRetry); false once it finished and its results
  // are printed.
  bool try_complete(Session& s, unsigned flags) {
    const ::lockstep::sql::SpecStep& step = *s.active;
    const auto start = Clock::now();
    bool canceled = false;
    while (PQisBusy(s.conn.get()) != 0) {
      pollfd p{PQsocket(s.conn.get()), POLLIN, 0};
      const int ready = ::poll(&p, 1, kPollMs);
      if (ready < 0 && errno != EINTR) lost(s);
      if (ready > 0) {
        if (PQconsumeInput(s.conn.get()) == 0) lost(s);
        continue;
      }
      if ((flags & kNonblock) != 0 && blocked(s)) {
        // Notices may have come while asking: collect them, and a result that came too.
        if (PQconsumeInput(s.conn.get()) == 0) lost(s);
        if (PQisBusy(s.conn.get()) == 0) break;
        if ((flags & kRetry) == 0) out_ += fmt::format("step {}: {} <waiting ...>\n", step.name, step.sql.text);
        return true;
      }
      if (!canceled && Clock::now() - start > kMaxStepWait) {
        char message[256];
        PGcancel* cancel = PQgetCancel(s.conn.get());
        if (cancel != nullptr) {
          (void)PQcancel(cancel, message, sizeof message);
          PQfreeCancel(cancel);
        }
        canceled = true;
      }
    }
    out_ += (flags & kRetry) != 0 ? fmt::format("step {}: <... completed>\n", step.name) : fmt::format("step {}: {}\n", step.name, step.sql.text);
    while (PGresult* raw = PQgetResult(s.conn.get())) {
      const PgResult r(raw);
      switch (PQresultStatus(r.get())) {
        case PGRES_COMMAND_OK:
        case PGRES_EMPTY_QUERY: break;
        case PGRES_TUPLES_OK: out_ += sql_spec::printed_result(sql::read_rows(r.get())); break;
        case PGRES_FATAL_ERROR: {
          const char* severity = PQresultErrorField(r.get(), PG_DIAG_SEVERITY);
          const char* message = PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY);
          out_ += severity != nullptr && message != nullptr ? fmt::format("{}:  {}\n", severity, message)
                                                            : fmt::format("{}\n", PQresultErrorMessage(r.get()));
          break;
        }
        default: out_ += fmt::format("unexpected result status: {}\n", PQresStatus(PQresultStatus(r.get())));
      }
    }
    s.active = nullptr;
    return false;
  }

  // Polls every waiting step once: those finished are shown and leave the list.
  void complete_waiting(std::vector<Session*>& waiting) {
    for (auto it = waiting.begin(); it != waiting.end();) it = try_complete(**it, kNonblock | kRetry) ? it + 1 : waiting.erase(it);
  }

  const ::lockstep::sql::Spec& spec_;
  std::string schema_;
  Session control_;
  std::vector<std::unique_ptr<Session>> sessions_;  // stable: notices point at them
  std::vector<int> pids_;
  std::string out_;
};

}  // namespace isolation_runner

std::string run_permutation_on_server(const ::lockstep::sql::Spec& spec, const std::vector<std::string>& steps, const std::string& conninfo) {
  isolation_runner::Runner runner(spec, conninfo);
  return runner.run(steps);
}

}  // namespace lockstep::real
