// real/pg_work_queue.cc: the subtree exchange on PostgreSQL (see pg_work_queue.h).
#include "lockstep/real/pg_work_queue.h"

#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <libpq-fe.h>
#include <nlohmann/json.hpp>

#include "lockstep/model/json_cursor.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/pg_result.h"

namespace lockstep::real {
namespace {

constexpr auto kPoll = std::chrono::milliseconds(20);        // a result not finished yet
constexpr auto kIdle = std::chrono::milliseconds(50);        // a worker with nothing queued
// How often a worker asks whether its task was withdrawn: the work it does for a task
// withdrawn meanwhile is redundant (500 ms: 39.7% redundant on 2 agents x 3 hooks with 3
// processes; 25 ms: 29%).
constexpr auto kWithdrawnEvery = std::chrono::milliseconds(25);
constexpr auto kRedundantEvery = std::chrono::milliseconds(100);  // the coordinator's redundant()
constexpr auto kRunWait = std::chrono::minutes(10);          // for the coordinator to begin the run

// A question asked often and answered from the server at most once per `period`.
struct AtMostEvery {
  std::chrono::steady_clock::duration period;
  std::chrono::steady_clock::time_point last{};
  bool due() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last < period) return false;
    last = now;
    return true;
  }
};

using Rows = PgResult;

// One connection, blocking statements with text parameters.
class Db {
 public:
  explicit Db(const std::string& conninfo) : c_(PQconnectdb(conninfo.c_str())) {
    if (c_ == nullptr || PQstatus(c_) != CONNECTION_OK) {
      std::string message = c_ ? PQerrorMessage(c_) : "out of memory";
      PQfinish(c_);  // no destructor runs for a constructor that throws
      while (!message.empty() && message.back() == '\n') message.pop_back();
      throw ServerError(fmt::format("--queue: cannot connect to PostgreSQL ({}): {}", describe_conninfo(conninfo),
                                    redact_conninfo(message)));
    }
    PQsetNoticeProcessor(c_, [](void*, const char*) {}, nullptr);  // "already exists, skipping"
  }
  ~Db() { PQfinish(c_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  Rows exec(const char* sql, const std::vector<std::string>& params = {}) {
    std::vector<const char*> values;
    for (const auto& p : params) values.push_back(p.c_str());
    Rows r(PQexecParams(c_, sql, static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0));
    const auto status = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
      std::string message = PQerrorMessage(c_);
      while (!message.empty() && message.back() == '\n') message.pop_back();
      throw ServerError(fmt::format("--queue: {}", message));
    }
    return r;
  }
  static std::uint64_t affected(const Rows& r) { return std::stoull(PQcmdTuples(r.get())); }

 private:
  PGconn* c_;
};

void create_tables(Db& db) {
  db.exec("SELECT pg_advisory_lock(hashtext('lockstep work queue'))");
  db.exec(
      "CREATE TABLE IF NOT EXISTS lockstep_runs (run text PRIMARY KEY, settings text NOT NULL, "
      "over boolean NOT NULL DEFAULT false)");
  db.exec(
      "CREATE TABLE IF NOT EXISTS lockstep_tasks (run text NOT NULL, id bigint NOT NULL, done boolean NOT NULL "
      "DEFAULT false, task text NOT NULL, result text, worker text, PRIMARY KEY (run, id))");
  // `explored`: a finished task's executions (a table of an older lockstep lacks it).
  db.exec("ALTER TABLE lockstep_tasks ADD COLUMN IF NOT EXISTS explored bigint NOT NULL DEFAULT 0");
  db.exec("CREATE TABLE IF NOT EXISTS lockstep_withdrawn (run text NOT NULL, id bigint NOT NULL, PRIMARY KEY (run, id))");
  db.exec("SELECT pg_advisory_unlock(hashtext('lockstep work queue'))");
}

class Coordinator final : public sim::SubtreeExchange {
 public:
  Coordinator(const std::string& conninfo, std::string run, const std::string& settings, int capacity)
      : db_(conninfo), run_(std::move(run)), capacity_(capacity) {
    create_tables(db_);
    db_.exec("BEGIN");
    db_.exec(
        "INSERT INTO lockstep_runs (run, settings, over) VALUES ($1, $2, false) ON CONFLICT (run) DO UPDATE SET "
        "settings = excluded.settings, over = false",
        {run_, settings});
    db_.exec("DELETE FROM lockstep_tasks WHERE run = $1", {run_});
    db_.exec("DELETE FROM lockstep_withdrawn WHERE run = $1", {run_});
    db_.exec("COMMIT");
  }
  ~Coordinator() override {
    try {
      db_.exec("UPDATE lockstep_runs SET over = true WHERE run = $1", {run_});
    } catch (const std::exception&) {  // the workers then stop at their own bounds
    }
  }

  int capacity() const override { return capacity_; }

  std::uint64_t publish(const std::string& task) override {
    const std::uint64_t id = ++last_id_;
    db_.exec("INSERT INTO lockstep_tasks (run, id, task) VALUES ($1, $2, $3)", {run_, std::to_string(id), task});
    return id;
  }

  bool take_back(std::uint64_t id) override {
    // A task a worker holds is locked: SKIP LOCKED passes it by, and nothing is deleted.
    const Rows r = db_.exec(
        "DELETE FROM lockstep_tasks WHERE (run, id) IN (SELECT run, id FROM lockstep_tasks WHERE run = $1 AND id = $2 "
        "AND NOT done FOR UPDATE SKIP LOCKED)",
        {run_, std::to_string(id)});
    return Db::affected(r) == 1;
  }

  std::optional<std::string> result(std::uint64_t id) override {
    const Rows r = db_.exec("SELECT result FROM lockstep_tasks WHERE run = $1 AND id = $2 AND done",
                            {run_, std::to_string(id)});
    if (PQntuples(r.get()) == 1) return std::string(PQgetvalue(r.get(), 0, 0));
    std::this_thread::sleep_for(kPoll);
    return std::nullopt;
  }

  void withdraw(std::uint64_t id) override {
    db_.exec("INSERT INTO lockstep_withdrawn (run, id) VALUES ($1, $2) ON CONFLICT DO NOTHING",
             {run_, std::to_string(id)});
    take_back(id);
  }

  std::uint64_t redundant() override {
    if (!redundant_asked_.due()) return redundant_;
    const Rows r = db_.exec(
        "SELECT coalesce(sum(t.explored), 0) FROM lockstep_tasks t JOIN lockstep_withdrawn w USING (run, id) "
        "WHERE t.run = $1 AND t.done",
        {run_});
    redundant_ = std::stoull(PQgetvalue(r.get(), 0, 0));
    return redundant_;
  }

 private:
  Db db_;
  std::string run_;
  int capacity_;
  std::uint64_t last_id_ = 0;
  std::uint64_t redundant_ = 0;  // redundant()'s last answer
  AtMostEvery redundant_asked_{kRedundantEvery};
};

class Worker final : public sim::SubtreeSource {
 public:
  Worker(const std::string& conninfo, std::string run) : db_(conninfo), run_(std::move(run)) {}

  void wait_for_run(const std::string& settings, const std::function<bool()>& stop) {
    create_tables(db_);
    const auto since = std::chrono::steady_clock::now();
    for (;;) {
      const Rows r = db_.exec("SELECT settings FROM lockstep_runs WHERE run = $1", {run_});
      if (PQntuples(r.get()) == 1) {
        const std::string theirs = PQgetvalue(r.get(), 0, 0);
        if (theirs != settings) {
          throw InputError(fmt::format(
              "--queue: run {} has other settings than this worker's: coordinator {}, worker {} (same scenario, "
              "strategy, bounds per execution and lockstep version, please)",
              run_, theirs, settings));
        }
        return;
      }
      if (stop()) return;
      if (std::chrono::steady_clock::now() - since > kRunWait) {
        throw InputError(fmt::format("--queue: run {} did not begin within 10 minutes: is its coordinator (--shard 1/N, "
                                     "the same --run-id) running?",
                                     run_));
      }
      std::this_thread::sleep_for(kIdle);
    }
  }

  std::optional<Task> next(const std::function<bool()>& stop) override {
    for (;;) {
      db_.exec("BEGIN");
      const Rows r = db_.exec(
          "SELECT t.id, t.task FROM lockstep_tasks t WHERE t.run = $1 AND NOT t.done AND NOT EXISTS (SELECT 1 FROM "
          "lockstep_withdrawn w WHERE w.run = t.run AND w.id = t.id) ORDER BY t.id LIMIT 1 FOR UPDATE SKIP LOCKED",
          {run_});
      if (PQntuples(r.get()) == 1) {
        withdrawn_asked_.last = std::chrono::steady_clock::now();  // just taken: not withdrawn yet
        withdrawn_ = false;
        return Task{std::stoull(PQgetvalue(r.get(), 0, 0)), PQgetvalue(r.get(), 0, 1)};
      }
      db_.exec("COMMIT");
      const Rows over = db_.exec("SELECT over FROM lockstep_runs WHERE run = $1", {run_});
      if (PQntuples(over.get()) != 1 || std::string(PQgetvalue(over.get(), 0, 0)) == "t" || stop()) return std::nullopt;
      std::this_thread::sleep_for(kIdle);
    }
  }

  bool withdrawn(std::uint64_t id) override {
    if (withdrawn_) return true;
    if (!withdrawn_asked_.due()) return false;
    const Rows r = db_.exec(
        "SELECT EXISTS (SELECT 1 FROM lockstep_withdrawn WHERE run = $1 AND id = $2) OR (SELECT over FROM "
        "lockstep_runs WHERE run = $1)",
        {run_, std::to_string(id)});
    withdrawn_ = std::string(PQgetvalue(r.get(), 0, 0)) == "t";
    return withdrawn_;
  }

  void finish(std::uint64_t id, const std::string& result, std::uint64_t explored) override {
    db_.exec("UPDATE lockstep_tasks SET done = true, result = $3, explored = $4 WHERE run = $1 AND id = $2",
             {run_, std::to_string(id), result, std::to_string(explored)});
    db_.exec("COMMIT");
  }

 private:
  Db db_;
  std::string run_;
  AtMostEvery withdrawn_asked_{kWithdrawnEvery};
  bool withdrawn_ = false;
};

}  // namespace

std::shared_ptr<sim::SubtreeExchange> coordinate_run(const std::string& conninfo, const std::string& run,
                                                     const std::string& settings, int capacity) {
  return std::make_shared<Coordinator>(conninfo, run, settings, capacity);
}

std::unique_ptr<sim::SubtreeSource> serve_run(const std::string& conninfo, const std::string& run,
                                              const std::string& settings, const std::function<bool()>& stop) {
  auto w = std::make_unique<Worker>(conninfo, run);
  w->wait_for_run(settings, stop);
  return w;
}

}  // namespace lockstep::real
