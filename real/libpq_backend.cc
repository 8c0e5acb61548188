#include "lockstep/real/libpq_backend.h"

#include <sys/socket.h>
#include <unistd.h>

#include <atomic>

#include "lockstep/real/pg_result.h"
#include "lockstep/real/startup_settings.h"
#include "lockstep/real/statements.h"

#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <mutex>
#include <regex>
#include <set>
#include <vector>

#include <fmt/format.h>

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
using pg::Stmt;
using pg::Status;

using SharedResult = std::shared_ptr<PGresult>;  // PgResultDeleter clears it

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
  // Outside any transaction block: nothing for a ROLLBACK to end.
  bool idle() const { return PQtransactionStatus(conn_) == PQTRANS_IDLE; }
  Status drop_schema() { return status(exec(std::nullopt, sql::drop_schema())); }
  // A statement of the harness's own (not counted as the code's: StatementHooks).
  Status harness_exec(std::string text) { return status(exec(std::nullopt, sql::Statement{std::move(text), {}})); }
  void close_socket() {
    if (const int fd = PQsocket(conn_); fd >= 0) ::shutdown(fd, SHUT_RDWR);
  }

  int backend_pid() const override { return PQbackendPID(conn_); }

  Status advisory_lock(pg::AdvisoryKey key, pg::LockMode mode) override { return status(run(in_mode(Stmt::advisory_lock, mode), {.key = key})); }
  Status advisory_lock_with_timeout(pg::AdvisoryKey key, pg::LockMode mode, Duration lock_timeout) override {
    return status(run(in_mode(Stmt::advisory_lock_timed, mode), {.key = key, .timeout = lock_timeout}));
  }
  Result<bool> try_advisory_lock(pg::AdvisoryKey key, pg::LockMode mode) override {
    return boolean(run(in_mode(Stmt::try_advisory_lock, mode), {.key = key}));
  }
  Result<bool> advisory_unlock(pg::AdvisoryKey key, pg::LockMode mode) override {
    return boolean(run(in_mode(Stmt::advisory_unlock, mode), {.key = key}));
  }
  Status advisory_unlock_all() override { return status(run(Stmt::advisory_unlock_all, {})); }
  Status advisory_xact_lock(pg::AdvisoryKey key, pg::LockMode mode) override {
    return status(run(in_mode(Stmt::advisory_xact_lock, mode), {.key = key}));
  }

  Result<bool> try_advisory_xact_lock(pg::AdvisoryKey key, pg::LockMode mode) override {
    return boolean(run(in_mode(Stmt::try_advisory_xact_lock, mode), {.key = key}));
  }

  Status set_lock_timeout(Duration t) override { return status(run(Stmt::set_lock_timeout, {.timeout = t})); }
  Status set_statement_timeout(Duration t) override { return status(run(Stmt::set_statement_timeout, {.timeout = t})); }

  Result<std::optional<pg::Row>> read_row(std::string_view table, std::int64_t id) override {
    if (Status made = ensure_table(table); !made.ok()) return made.error();
    const std::string t = ident(table);
    auto r = run(Stmt::read_row, {.quoted_table = t, .id = id});
    if (!r.ok()) return r.error();
    return sql::read_row_result(r.value().get());
  }

  Status insert_row(std::string_view table, std::int64_t id, const pg::Row& values) override {
    if (Status made = ensure_table(table); !made.ok()) return made;
    const std::string t = ident(table);
    return status(run(Stmt::insert_row, {.quoted_table = t, .id = id, .values = values}));
  }

  Result<bool> insert_row_if_absent(std::string_view table, std::int64_t id, const pg::Row& values) override {
    if (Status made = ensure_table(table); !made.ok()) return made.error();
    const std::string t = ident(table);
    return boolean(run(Stmt::insert_row_if_absent, {.quoted_table = t, .id = id, .values = values}));
  }

  Result<int> update_row_if(std::string_view table, std::int64_t id, std::string_view column, std::string_view expected,
                            const pg::Row& values) override {
    if (Status made = ensure_table(table); !made.ok()) return made.error();
    const std::string t = ident(table);
    auto r = run(Stmt::update_row_if, {.quoted_table = t, .id = id, .values = values, .column = column, .expected = expected});
    if (!r.ok()) return r.error();
    return sql::read_count(r.value().get());
  }

  Result<std::optional<pg::Row>> select_for_update_skip_locked(std::string_view table, std::int64_t id) override {
    return select_row(Stmt::select_for_update_skip_locked, table, id);
  }
  Result<std::optional<pg::Row>> select_for_share(std::string_view table, std::int64_t id) override {
    return select_row(Stmt::select_for_share, table, id);
  }

  Result<int> update_row(std::string_view table, std::int64_t id, const pg::Row& values) override {
    if (Status made = ensure_table(table); !made.ok()) return made.error();
    const std::string t = ident(table);
    auto r = run(Stmt::update_row, {.quoted_table = t, .id = id, .values = values});
    if (!r.ok()) return r.error();
    return sql::read_count(r.value().get());
  }

  Result<std::optional<pg::Row>> select_for_update(std::string_view table, std::int64_t id, bool nowait) override {
    return select_row(nowait ? Stmt::select_for_update_nowait : Stmt::select_for_update, table, id);
  }

  Status begin() override { return status(run(Stmt::begin, {})); }
  Status commit() override { return status(run(Stmt::commit, {})); }
  Status rollback() override { return status(run(Stmt::rollback, {})); }

  Result<std::vector<pg::AdvisoryLockRow>> advisory_locks() override {
    auto r = run(Stmt::pg_locks, {});
    if (!r.ok()) return r.error();
    return sql::read_lock_rows(r.value().get());
  }

  Result<bool> terminate_backend(int pid) override { return boolean(run(Stmt::pg_terminate_backend, {.pid = pid})); }

  std::vector<Error> take_warnings() override { return std::exchange(warnings_, {}); }

  // SQL as written: with parameters one statement (PQexecParams, text format), without them
  // the text as one simple query (several statements allowed; the last one's result).
  Result<pg::Rows> exec(std::string_view text, const std::vector<pg::Param>& params) override {
    const std::string owned(text);
    const std::vector<const char*> values = param_values(params);
    Result<pg::Rows> rows = rows_of("exec", owned, [&] {
      return params.empty() ? PQexec(conn_, owned.c_str())
                            : PQexecParams(conn_, owned.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr,
                                           nullptr, 0);
    });
    if (rows.ok() && (rows.value().tag == "DISCARD ALL" || rows.value().tag == "DEALLOCATE ALL")) prepared_.clear();  // the typed operations' went
    return rows;
  }

  Status prepare(std::string_view name, std::string_view text) override {
    const std::string owned_name(name), owned(text);
    auto r = rows_of("prepare", "", [&] { return PQprepare(conn_, owned_name.c_str(), owned.c_str(), 0, nullptr); });
    if (!r.ok()) return r.error();
    return {};
  }

  Result<pg::Rows> exec_prepared(std::string_view name, const std::vector<pg::Param>& params) override {
    const std::string owned_name(name);
    const std::vector<const char*> values = param_values(params);
    return rows_of("exec_prepared", "exec_prepared", [&] {
      return PQexecPrepared(conn_, owned_name.c_str(), static_cast<int>(values.size()), values.data(), nullptr, nullptr, 0);
    });
  }

 private:
  static std::vector<const char*> param_values(const std::vector<pg::Param>& params) {
    std::vector<const char*> values;
    values.reserve(params.size());
    for (const pg::Param& p : params) values.push_back(p ? p->c_str() : nullptr);
    return values;
  }

  // Sends one request (send() returns its PGresult) and reads its result: the server's
  // error, or the columns, rows (text, NULL as nullopt) and command tag.
  template <typename Send>
  Result<pg::Rows> rows_of(const char* what, std::string_view statement, const Send& send) {
    if (hooks_.before) hooks_.before(*this, statement);
    const auto start = std::chrono::steady_clock::now();
    SharedResult r(send(), PgResultDeleter());
    if (hooks_.after) hooks_.after(std::nullopt, std::chrono::steady_clock::now() - start);
    if (auto e = sql::error_of(conn_, r.get())) {
      if (hooks_.failed) hooks_.failed(what, *e);
      return *e;
    }
    return sql::read_rows(r.get());
  }

  static void on_notice(void* self, const PGresult* r) {
    if (auto w = sql::warning_of(r)) static_cast<LibpqConnection*>(self)->warnings_.push_back(*w);
  }

  std::string ident(std::string_view name) const {
    char* quoted = PQescapeIdentifier(conn_, name.data(), name.size());
    if (quoted == nullptr) return "\"\"";
    std::string out(quoted);
    PQfreemem(quoted);
    return out;
  }

  // A SELECT of one row (FOR UPDATE, FOR SHARE, ...).
  Result<std::optional<pg::Row>> select_row(Stmt s, std::string_view table, std::int64_t id) {
    if (Status made = ensure_table(table); !made.ok()) return made.error();
    const std::string t = ident(table);
    auto r = run(s, {.quoted_table = t, .id = id});
    if (!r.ok()) return r.error();
    return sql::read_row_result(r.value().get());
  }

  // A statement of the table, one round trip.
  Result<SharedResult> run(Stmt s, const sql::Args& args) { return exec(s, sql::statement(s, args)); }

  // One statement, one round trip. `op` names it for the hooks (nullopt: the harness's own
  // statements, such as creating a table).
  // The statements of the table are prepared once per connection (by their text; the
  // first use costs one more round trip) and then executed by name: no parse and plan per
  // round trip, as a driver with server-side prepared statements does. (Not for a
  // transaction-pooling proxy such as pgbouncer, where a session's prepared statements do
  // not follow it; lockstep talks to the server.) The harness's own statements are not.
  Result<SharedResult> exec(std::optional<Stmt> op, const sql::Statement& st) {
    std::vector<const char*> values;
    values.reserve(st.params.size());
    for (const auto& p : st.params) values.push_back(p.c_str());
    if (hooks_.before) hooks_.before(*this, op ? pg::name(*op) : std::string_view());
    const auto start = std::chrono::steady_clock::now();
    const std::string* name = op ? prepared(st) : nullptr;
    SharedResult r(name == nullptr
                   ? PQexecParams(conn_, st.text.c_str(), static_cast<int>(values.size()), nullptr, values.data(), nullptr, nullptr, 0)
                   : PQexecPrepared(conn_, name->c_str(), static_cast<int>(values.size()), values.data(), nullptr, nullptr, 0),
               PgResultDeleter());
    if (hooks_.after) hooks_.after(op, std::chrono::steady_clock::now() - start);
    if (auto e = sql::error_of(conn_, r.get())) {
      if (hooks_.failed) hooks_.failed(op ? pg::name(*op) : "a statement of lockstep's own", *e);
      return *e;
    }
    return r;
  }

  // The name of st's prepared statement, prepared now if it is not yet; nullptr when the
  // server refused to prepare it (the statement then runs unprepared, and fails as it would).
  const std::string* prepared(const sql::Statement& st) {
    auto it = prepared_.find(st.text);
    if (it != prepared_.end()) return &it->second;
    std::string name = fmt::format("lockstep_{}", prepared_.size());
    SharedResult p(PQprepare(conn_, name.c_str(), st.text.c_str(), static_cast<int>(st.params.size()), nullptr), PgResultDeleter());
    if (sql::error_of(conn_, p.get())) return nullptr;
    return &prepared_.emplace(st.text, std::move(name)).first->second;
  }

  static Status status(const Result<SharedResult>& r) { return r.ok() ? Status() : Status(r.error()); }
  static Result<bool> boolean(const Result<SharedResult>& r) {
    if (!r.ok()) return r.error();
    return sql::read_bool(r.value().get());
  }

  // The row tables live in schema lockstep as (id int8 primary key, data jsonb): a Row is
  // the jsonb object (with "id"), so no column list is needed. Created on first use, on a
  // connection of their own (outside this session's transaction).
  Status ensure_table(std::string_view table) {
    if (tables().known(conninfo_, table)) return {};
    static std::mutex creating;  // one creation at a time in this process
    const std::lock_guard lock(creating);
    if (tables().known(conninfo_, table)) return {};
    auto admin = connect(conninfo_);
    if (!admin.ok()) return admin.error();
    auto* c = static_cast<LibpqConnection*>(admin.value().get());
    for (const sql::Statement& st : {sql::create_schema(), sql::create_table(c->ident(table))}) {
      auto r = c->exec(std::nullopt, st);
      // Two sessions (of this process or another) creating one table or the schema at once:
      // the loser of the catalog race gets 23505, 42710 (its row type) or 42P07, and the
      // object exists.
      const bool raced = !r.ok() && (r.error().sqlstate == pg::sqlstate::kUniqueViolation || r.error().sqlstate == "42710" ||
                                     r.error().sqlstate == "42P07" || r.error().sqlstate == "42P06");
      if (!r.ok() && !raced) return r.error();
    }
    tables().add(conninfo_, table);
    return {};
  }

  PGconn* conn_;
  std::string conninfo_;
  StatementHooks hooks_;
  std::vector<Error> warnings_;
  std::map<std::string, std::string> prepared_;  // statement text -> prepared statement name
};

class LibpqPool final : public pg::Pool {
 public:
  LibpqPool(std::string conninfo, pg::PoolConfig config, StatementHooks hooks)
      : conninfo_(std::move(conninfo)), config_(std::move(config)), hooks_(std::move(hooks)) {
    static std::atomic<int> pools{0};
    if (config_.own_schema) {
      schema_ = config_.schema = fmt::format("lockstep_run_{}_{}", ::getpid(), pools++);
    } else if (!config_.schema.empty()) {
      schema_ = config_.schema;
      schema_made_ = true;  // by the pool that owns it
      borrowed_ = true;
    }
  }

  ~LibpqPool() override {
    if (!schema_made_ || borrowed_) return;
    idle_.clear();  // their sessions end first
    if (auto c = connect(conninfo_); c.ok()) (void)c.value()->exec(fmt::format("DROP SCHEMA IF EXISTS {} CASCADE", schema_));
  }

  Result<pg::PooledConnection> checkout() override {
    if (hooks_.pool_op) hooks_.pool_op(false);
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
      auto opened = connect(with_application_name(), hooks_, config_.settings);
      if (!opened.ok()) {
        if (hooks_.failed) hooks_.failed("connect", opened.error());
        std::lock_guard lock(m_);
        --open_;
        --checked_out_;
        ready_.notify_one();
        return opened.error();
      }
      c = std::move(opened).value();
      if (!schema_.empty()) {
        if (auto made = use_own_schema(*c); !made.ok()) {
          std::lock_guard lock(m_);
          --open_;
          --checked_out_;
          ready_.notify_one();
          return made.error();
        }
      }
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

  // QueuePool's return: ROLLBACK when a transaction is open (psycopg2's rollback sends
  // nothing otherwise; session locks stay either way), back to the queue, or closed beyond
  // pool_size or when the connection is gone.
  void give_back(std::unique_ptr<pg::Connection> c) {
    if (hooks_.pool_op) hooks_.pool_op(true);
    auto* raw = static_cast<LibpqConnection*>(c.get());
    if (!raw->idle()) (void)c->rollback();
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

  // The pool's schema: made by its first connection, then first on every one's search_path.
  pg::Status use_own_schema(pg::Connection& c) {
    {
      std::lock_guard lock(schema_m_);
      if (!schema_made_) {
        if (auto made = harness(c).harness_exec(fmt::format("CREATE SCHEMA {}", schema_)); !made.ok()) return made.error();
        schema_made_ = true;
      }
    }
    return harness(c).harness_exec(fmt::format("SET search_path = {}, public", schema_));
  }
  static LibpqConnection& harness(pg::Connection& c) { return static_cast<LibpqConnection&>(c); }

  std::string conninfo_;
  pg::PoolConfig config_;
  StatementHooks hooks_;
  std::string schema_;  // own_schema's name, or ""
  std::mutex schema_m_;
  bool schema_made_ = false;
  bool borrowed_ = false;  // config.schema: another pool's, not dropped here
  mutable std::mutex m_;
  std::condition_variable ready_;
  std::deque<std::unique_ptr<pg::Connection>> idle_;
  int open_ = 0;
  int checked_out_ = 0;
};

}  // namespace

Result<std::unique_ptr<pg::Connection>> connect(const std::string& conninfo, StatementHooks hooks,
                                                const std::vector<std::pair<std::string, std::string>>& settings) {
  PGconn* c = connect_with_settings(conninfo, settings);
  if (c == nullptr || PQstatus(c) != CONNECTION_OK) {
    std::string message = c ? PQerrorMessage(c) : "out of memory";
    if (c) PQfinish(c);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    // libpq may quote the conninfo in its message (a malformed URI): never its password.
    for (std::size_t at; !conninfo.empty() && (at = message.find(conninfo)) != std::string::npos;) {
      message.replace(at, conninfo.size(), "(the conninfo)");
    }
    message = redact_conninfo(message);
    return Error{std::string(pg::sqlstate::kConnectionFailure),
                 fmt::format("cannot connect to PostgreSQL ({}): {}", describe_conninfo(conninfo),
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

void close_socket(pg::Connection& c) { static_cast<LibpqConnection&>(c).close_socket(); }

bool connection_lost(const pg::Error& error) {
  const std::string_view s = error.sqlstate;
  return s.starts_with("08") || s == "57P01" || s == "57P02" || s == "57P03";
}

std::string describe_conninfo(const std::string& conninfo) {
  if (conninfo.empty()) return "the PG* environment";
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(conninfo.c_str(), &error);
  if (error != nullptr) PQfreemem(error);
  if (options == nullptr) return "a conninfo libpq cannot parse";
  std::string out;
  for (const char* key : {"host", "hostaddr", "port", "dbname", "user"}) {
    for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
      if (std::string_view(o->keyword) == key && o->val != nullptr && *o->val != '\0') {
        out += fmt::format("{}{} {}", out.empty() ? "" : ", ", std::string_view(key) == "dbname" ? "database" : key, o->val);
      }
    }
  }
  PQconninfoFree(options);
  return out.empty() ? "libpq's defaults" : out;
}

std::string redact_conninfo(const std::string& conninfo) {
  static const std::regex keyword(R"((password\s*=\s*)('[^']*'|\S+))", std::regex::icase);
  static const std::regex uri(R"((://[^:/@]*:)[^@]*@)");
  return std::regex_replace(std::regex_replace(conninfo, keyword, "$1***"), uri, "$1***@");
}

}  // namespace lockstep::real
