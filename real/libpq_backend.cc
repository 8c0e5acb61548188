#include "real/libpq_backend.h"

#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <regex>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace lockstep::real {
namespace {

using pg::Error;

// The row tables this process created, per conninfo (see LibpqConnection::ensure_table).
class TableRegistry {
 public:
  bool known(const std::string& conninfo, std::string_view table) {
    std::lock_guard lock(m_);
    return made_.count({conninfo, std::string(table)}) > 0;
  }
  void add(const std::string& conninfo, std::string_view table) {
    std::lock_guard lock(m_);
    made_.emplace(conninfo, std::string(table));
  }
  // After a DROP SCHEMA: every entry (pools add application_name to their conninfo, so
  // one server has several).
  void forget_all() {
    std::lock_guard lock(m_);
    made_.clear();
  }

 private:
  std::mutex m_;
  std::set<std::pair<std::string, std::string>> made_;
};

TableRegistry& tables() {
  static TableRegistry registry;
  return registry;
}
using pg::Result;
using pg::Status;

struct ResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::shared_ptr<PGresult>;

std::string lock_function(const char* base, pg::LockMode mode) {
  return mode == pg::LockMode::exclusive ? base : std::string(base) + "_shared";
}

// The SQL arguments of a key, and its parameters: ($1::int8) or ($1::int4, $2::int4).
std::pair<std::string, std::vector<std::string>> key_args(pg::AdvisoryKey key) {
  if (key.objsubid() == 1) {
    const auto k = static_cast<std::int64_t>((static_cast<std::uint64_t>(key.classid()) << 32) | key.objid());
    return {"$1::int8", {std::to_string(k)}};
  }
  return {"$1::int4, $2::int4",
          {std::to_string(static_cast<std::int32_t>(key.classid())), std::to_string(static_cast<std::int32_t>(key.objid()))}};
}

class LibpqConnection final : public pg::Connection {
 public:
  LibpqConnection(PGconn* c, std::string conninfo, StatementHooks hooks)
      : conn_(c), conninfo_(std::move(conninfo)), hooks_(std::move(hooks)) {
    PQsetNoticeReceiver(conn_, &LibpqConnection::on_notice, this);
  }
  ~LibpqConnection() override { PQfinish(conn_); }
  LibpqConnection(const LibpqConnection&) = delete;
  LibpqConnection& operator=(const LibpqConnection&) = delete;

  bool alive() const { return PQstatus(conn_) == CONNECTION_OK; }
  Status drop_schema() { return status(exec("drop_schema", "DROP SCHEMA IF EXISTS lockstep CASCADE", {})); }

  int backend_pid() const override { return PQbackendPID(conn_); }

  Status advisory_lock(pg::AdvisoryKey key, pg::LockMode mode) override {
    return status(call(lock_function("pg_advisory_lock", mode), key));
  }
  Result<bool> try_advisory_lock(pg::AdvisoryKey key, pg::LockMode mode) override {
    return boolean(call(lock_function("pg_try_advisory_lock", mode), key));
  }
  Result<bool> advisory_unlock(pg::AdvisoryKey key, pg::LockMode mode) override {
    return boolean(call(lock_function("pg_advisory_unlock", mode), key));
  }
  Status advisory_unlock_all() override { return status(exec("advisory_unlock_all", "SELECT pg_advisory_unlock_all()", {})); }
  Status advisory_xact_lock(pg::AdvisoryKey key, pg::LockMode mode) override {
    return status(call(lock_function("pg_advisory_xact_lock", mode), key));
  }

  Status set_lock_timeout(Duration t) override { return set("lock_timeout", t); }
  Status set_statement_timeout(Duration t) override { return set("statement_timeout", t); }

  Result<std::optional<pg::Row>> read_row(std::string_view table, std::int64_t id) override {
    if (Status made = ensure_table(table); !made.ok()) return made.error();
    return first_row(exec("read_row", fmt::format("SELECT data FROM {} WHERE id = $1", qualified(table)), {std::to_string(id)}));
  }

  Status insert_row(std::string_view table, std::int64_t id, const pg::Row& values) override {
    if (Status made = ensure_table(table); !made.ok()) return made;
    pg::Row row = values;
    row["id"] = std::to_string(id);
    return status(exec("insert_row", fmt::format("INSERT INTO {} (id, data) VALUES ($1, $2::jsonb)", qualified(table)),
                       {std::to_string(id), to_json(row)}));
  }

  Result<int> update_row(std::string_view table, std::int64_t id, const pg::Row& values) override {
    if (Status made = ensure_table(table); !made.ok()) return made.error();
    auto r = exec("update_row", fmt::format("UPDATE {} SET data = data || $2::jsonb WHERE id = $1", qualified(table)),
                  {std::to_string(id), to_json(values)});
    if (!r.ok()) return r.error();
    return std::atoi(PQcmdTuples(r.value().get()));
  }

  Result<std::optional<pg::Row>> select_for_update(std::string_view table, std::int64_t id, bool nowait) override {
    if (Status made = ensure_table(table); !made.ok()) return made.error();
    return first_row(exec(nowait ? "select_for_update_nowait" : "select_for_update",
                          fmt::format("SELECT data FROM {} WHERE id = $1 FOR UPDATE{}", qualified(table), nowait ? " NOWAIT" : ""),
                          {std::to_string(id)}));
  }

  Status begin() override { return status(exec("begin", "BEGIN", {})); }
  Status commit() override { return status(exec("commit", "COMMIT", {})); }
  Status rollback() override { return status(exec("rollback", "ROLLBACK", {})); }

  Result<std::vector<pg::AdvisoryLockRow>> advisory_locks() override {
    auto r = exec(
        "pg_locks",
        "SELECT l.pid, coalesce(a.application_name, ''), coalesce(a.state, ''),"
        " (extract(epoch FROM a.query_start) * 1000)::int8, l.classid, l.objid, l.objsubid, l.mode, l.granted,"
        " (extract(epoch FROM now() - a.query_start) * 1000)::int8"
        " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        " ORDER BY l.pid, l.classid, l.objid, l.objsubid, l.mode",
        {});
    if (!r.ok()) return r.error();
    PGresult* res = r.value().get();
    std::vector<pg::AdvisoryLockRow> rows;
    for (int i = 0; i < PQntuples(res); ++i) {
      auto text = [&](int c) { return std::string(PQgetvalue(res, i, c)); };
      pg::AdvisoryLockRow row;
      row.pid = std::stoi(text(0));
      row.application_name = text(1);
      row.state = text(2);
      row.query_start = std::chrono::milliseconds(PQgetisnull(res, i, 3) ? 0 : std::stoll(text(3)));
      row.classid = static_cast<std::uint32_t>(std::stoul(text(4)));
      row.objid = static_cast<std::uint32_t>(std::stoul(text(5)));
      row.objsubid = static_cast<std::uint16_t>(std::stoi(text(6)));
      row.mode = text(7);
      row.granted = text(8) == "t";
      row.duration = std::chrono::milliseconds(PQgetisnull(res, i, 9) ? 0 : std::stoll(text(9)));
      rows.push_back(std::move(row));
    }
    return rows;
  }

  Result<bool> terminate_backend(int pid) override {
    return boolean(exec("pg_terminate_backend", "SELECT pg_terminate_backend($1::int4)", {std::to_string(pid)}));
  }

  std::vector<Error> take_warnings() override { return std::exchange(warnings_, {}); }

 private:
  static void on_notice(void* self, const PGresult* r) {
    const char* severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
    if (severity == nullptr || std::string_view(severity) != "WARNING") return;
    const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
    const char* message = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
    static_cast<LibpqConnection*>(self)->warnings_.push_back({code ? code : "01000", message ? message : ""});
  }

  std::string ident(std::string_view name) const {
    char* quoted = PQescapeIdentifier(conn_, name.data(), name.size());
    if (quoted == nullptr) return "\"\"";
    std::string out(quoted);
    PQfreemem(quoted);
    return out;
  }

  // One statement, one round trip. `op` names it for the hooks.
  Result<PgResult> exec(const char* op, const std::string& sql, const std::vector<std::string>& params) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const auto& p : params) values.push_back(p.c_str());
    if (hooks_.before) hooks_.before();
    const auto start = std::chrono::steady_clock::now();
    PgResult r(PQexecParams(conn_, sql.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0),
               ResultDeleter());
    if (hooks_.after) hooks_.after(op, std::chrono::steady_clock::now() - start);
    const ExecStatusType st = r ? PQresultStatus(r.get()) : PGRES_FATAL_ERROR;
    if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return r;
    const char* code = r ? PQresultErrorField(r.get(), PG_DIAG_SQLSTATE) : nullptr;
    const char* message = r ? PQresultErrorField(r.get(), PG_DIAG_MESSAGE_PRIMARY) : nullptr;
    if (code == nullptr) return Error{std::string(pg::sqlstate::kConnectionFailure), PQerrorMessage(conn_)};
    return Error{code, message ? message : ""};
  }

  Result<PgResult> call(const std::string& function, pg::AdvisoryKey key) {
    auto [args, params] = key_args(key);
    return exec(function.c_str(), fmt::format("SELECT {}({})", function, args), params);
  }

  Status set(const char* setting, Duration t) {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t).count();
    return status(exec(setting, "SELECT set_config($1, $2, false)", {setting, fmt::format("{}ms", ms)}));
  }

  static Status status(const Result<PgResult>& r) { return r.ok() ? Status() : Status(r.error()); }
  static Result<bool> boolean(const Result<PgResult>& r) {
    if (!r.ok()) return r.error();
    return std::string_view(PQgetvalue(r.value().get(), 0, 0)) == "t";
  }
  static Result<std::optional<pg::Row>> first_row(const Result<PgResult>& r) {
    if (!r.ok()) return r.error();
    PGresult* res = r.value().get();
    if (PQntuples(res) == 0) return std::optional<pg::Row>();
    pg::Row row;
    const nlohmann::json data = nlohmann::json::parse(PQgetvalue(res, 0, 0));
    for (auto it = data.begin(); it != data.end(); ++it) row[it.key()] = it.value().get<std::string>();
    return std::optional<pg::Row>(std::move(row));
  }

  // The row tables live in schema lockstep as (id int8 primary key, data jsonb): a Row is
  // the jsonb object (with "id"), so no column list is needed. Created on first use, on a
  // connection of their own (outside this session's transaction).
  std::string qualified(std::string_view table) const { return "lockstep." + ident(table); }
  Status ensure_table(std::string_view table) {
    if (tables().known(conninfo_, table)) return {};
    auto admin = connect(conninfo_);
    if (!admin.ok()) return admin.error();
    auto* c = static_cast<LibpqConnection*>(admin.value().get());
    for (const std::string& sql :
         {std::string("CREATE SCHEMA IF NOT EXISTS lockstep"),
          fmt::format("CREATE TABLE IF NOT EXISTS {} (id int8 PRIMARY KEY, data jsonb NOT NULL)", c->qualified(table))}) {
      auto r = c->exec("create_table", sql, {});
      // Two sessions creating one table at once: one of them loses the catalog race (23505).
      if (!r.ok() && r.error().sqlstate != pg::sqlstate::kUniqueViolation) return r.error();
    }
    tables().add(conninfo_, table);
    return {};
  }
  static std::string to_json(const pg::Row& row) {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [k, v] : row) j[k] = v;
    return j.dump();
  }

  PGconn* conn_;
  std::string conninfo_;
  StatementHooks hooks_;
  std::vector<Error> warnings_;
};

class LibpqPool final : public pg::Pool {
 public:
  LibpqPool(std::string conninfo, pg::PoolConfig config, StatementHooks hooks)
      : conninfo_(std::move(conninfo)), config_(std::move(config)), hooks_(std::move(hooks)) {}

  Result<pg::PooledConnection> checkout() override {
    std::unique_ptr<pg::Connection> c;
    {
      std::unique_lock lock(m_);
      const auto deadline = std::chrono::steady_clock::now() + config_.timeout;
      while (idle_.empty() && open_ >= config_.pool_size + config_.max_overflow) {
        if (ready_.wait_until(lock, deadline) == std::cv_status::timeout && idle_.empty() &&
            open_ >= config_.pool_size + config_.max_overflow) {
          return Error{std::string(pg::sqlstate::kPoolTimeout),
                       fmt::format("QueuePool limit of size {} overflow {} reached, connection timed out, timeout {:.2f}",
                                   config_.pool_size, config_.max_overflow,
                                   std::chrono::duration<double>(config_.timeout).count())};
        }
      }
      if (!idle_.empty()) {
        c = std::move(idle_.front());
        idle_.pop_front();
      } else {
        ++open_;
      }
      ++checked_out_;
    }
    if (!c) {
      auto opened = connect(with_application_name(), hooks_);
      if (!opened.ok()) {
        std::lock_guard lock(m_);
        --open_;
        --checked_out_;
        ready_.notify_one();
        return opened.error();
      }
      c = std::move(opened).value();
    }
    return pg::PooledConnection(std::move(c), [this](std::unique_ptr<pg::Connection> back) { give_back(std::move(back)); });
  }

  pg::PoolConfig config() const override { return config_; }
  int checked_out() const override {
    std::lock_guard lock(m_);
    return checked_out_;
  }

 private:
  std::string with_application_name() const {
    if (conninfo_.find("://") != std::string::npos) {  // a URI
      return fmt::format("{}{}application_name={}", conninfo_, conninfo_.find('?') == std::string::npos ? "?" : "&",
                         config_.application_name);
    }
    return fmt::format("{}{}application_name='{}'", conninfo_, conninfo_.empty() ? "" : " ", config_.application_name);
  }

  // QueuePool's return: ROLLBACK (session locks stay), back to the queue, or closed beyond
  // pool_size or when the connection is gone.
  void give_back(std::unique_ptr<pg::Connection> c) {
    (void)c->rollback();
    auto* raw = static_cast<LibpqConnection*>(c.get());
    std::unique_ptr<pg::Connection> to_close;
    {
      std::lock_guard lock(m_);
      --checked_out_;
      if (raw->alive() && static_cast<int>(idle_.size()) < config_.pool_size) {
        idle_.push_back(std::move(c));
      } else {
        --open_;
        to_close = std::move(c);
      }
      ready_.notify_one();
    }
  }

  std::string conninfo_;
  pg::PoolConfig config_;
  StatementHooks hooks_;
  mutable std::mutex m_;
  std::condition_variable ready_;
  std::deque<std::unique_ptr<pg::Connection>> idle_;
  int open_ = 0;
  int checked_out_ = 0;
};

}  // namespace

Result<std::unique_ptr<pg::Connection>> connect(const std::string& conninfo, StatementHooks hooks) {
  PGconn* c = PQconnectdb(conninfo.c_str());
  if (c == nullptr || PQstatus(c) != CONNECTION_OK) {
    std::string message = c ? PQerrorMessage(c) : "out of memory";
    if (c) PQfinish(c);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return Error{std::string(pg::sqlstate::kConnectionFailure),
                 fmt::format("cannot connect to PostgreSQL ({}): {}", conninfo.empty() ? "PG* environment" : redact_conninfo(conninfo),
                             message)};
  }
  return std::unique_ptr<pg::Connection>(std::make_unique<LibpqConnection>(c, conninfo, std::move(hooks)));
}

std::unique_ptr<pg::Pool> make_libpq_pool(const std::string& conninfo, const pg::PoolConfig& config, StatementHooks hooks) {
  return std::make_unique<LibpqPool>(conninfo, config, std::move(hooks));
}

pg::Status drop_row_tables(const std::string& conninfo) {
  auto c = connect(conninfo);
  if (!c.ok()) return c.error();
  tables().forget_all();
  return static_cast<LibpqConnection*>(c.value().get())->drop_schema();
}

std::string redact_conninfo(const std::string& conninfo) {
  static const std::regex keyword(R"((password\s*=\s*)('[^']*'|\S+))", std::regex::icase);
  static const std::regex uri(R"((://[^:/@]*:)[^@]*@)");
  return std::regex_replace(std::regex_replace(conninfo, keyword, "$1***"), uri, "$1***@");
}

}  // namespace lockstep::real
