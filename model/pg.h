// model/pg.h: the PostgreSQL backend that lock-service code is written against.
//
// A Pool with SQLAlchemy QueuePool semantics hands out Connections; each operation stands
// for one SQL statement, named in its comment, so the simulated backend (sim/pg/) and the
// libpq one (real/) implement the same contract. Expected failures are
// values (Status / Result carrying the real SQLSTATE), never exceptions; warnings (an
// unlock of a lock not held) are collected as the notice receiver would.
//
// What it covers: advisory locks in both key forms and both modes, session and transaction
// scope; lock_timeout and statement_timeout; deadlock detection; a backend terminated
// (as a fault); rows (read, insert, update, FOR UPDATE [NOWAIT]) under READ COMMITTED;
// begin / commit / rollback; the pg_locks view joined with pg_stat_activity (seed 000's
// monitoring query); pg_terminate_backend; the pool.
//
// Thread-safety: a Connection is used by one actor at a time; a Pool by any.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/model/env.h"

namespace lockstep::pg {

// SQLSTATE codes lock services meet.
namespace sqlstate {
inline constexpr std::string_view kWarning = "01000";
inline constexpr std::string_view kLockNotAvailable = "55P03";  // lock_timeout, NOWAIT
inline constexpr std::string_view kQueryCanceled = "57014";     // statement_timeout
inline constexpr std::string_view kDeadlockDetected = "40P01";
inline constexpr std::string_view kAdminShutdown = "57P01";     // pg_terminate_backend
inline constexpr std::string_view kConnectionFailure = "08006";
inline constexpr std::string_view kUniqueViolation = "23505";
inline constexpr std::string_view kSerializationFailure = "40001";  // REPEATABLE READ
inline constexpr std::string_view kPoolTimeout = "LS001";       // QueuePool checkout timeout (not a server code)
}  // namespace sqlstate

// An error or warning as the server reports it.
struct Error {
  std::string sqlstate;
  std::string message;
};

// A NOTIFY message a listening session received: its channel, payload and sender's pid.
struct Notification {
  std::string channel;
  std::string payload;
  int pid = 0;
};

// Success, or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error e) : error_(std::move(e)) {}  // NOLINT(google-explicit-constructor): errors convert
  bool ok() const { return !error_; }
  const Error& error() const { return *error_; }
  bool is(std::string_view code) const { return error_ && error_->sqlstate == code; }

 private:
  std::optional<Error> error_;
};

// A value, or an Error.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error e) : error_(std::move(e)) {}      // NOLINT(google-explicit-constructor)
  bool ok() const { return value_.has_value(); }
  // REQUIRES: ok(). Otherwise throws ModelError naming the error: a model that ignores a
  // failure gets verdict model_error, not undefined behaviour.
  const T& value() const& { return checked(); }
  T& value() & { return checked(); }
  // By value from a temporary: `for (auto& r : conn->advisory_locks().value())` must not
  // iterate a destroyed result.
  T value() && { return std::move(checked()); }
  const Error& error() const { return *error_; }
  bool is(std::string_view code) const { return error_ && error_->sqlstate == code; }

 private:
  T& checked() const {
    if (!value_) throw ModelError("value() of a failed result: " + error_->sqlstate + " " + error_->message);
    return const_cast<T&>(*value_);
  }

  std::optional<T> value_;
  std::optional<Error> error_;
};

enum class LockMode { exclusive, shared };

// An advisory lock key: pg_advisory_lock(bigint) or pg_advisory_lock(int4, int4). In
// pg_locks the first shows classid = high 32 bits, objid = low 32 bits, objsubid = 1; the
// second classid = key1, objid = key2, objsubid = 2 (negative keys as unsigned 32 bits).
class AdvisoryKey {
 public:
  static AdvisoryKey single(std::int64_t key) {
    const auto u = static_cast<std::uint64_t>(key);
    return AdvisoryKey(static_cast<std::uint32_t>(u >> 32), static_cast<std::uint32_t>(u), 1);
  }
  static AdvisoryKey pair(std::int32_t key1, std::int32_t key2) {
    return AdvisoryKey(static_cast<std::uint32_t>(key1), static_cast<std::uint32_t>(key2), 2);
  }
  std::uint32_t classid() const { return classid_; }
  std::uint32_t objid() const { return objid_; }
  std::uint16_t objsubid() const { return objsubid_; }
  friend bool operator==(const AdvisoryKey&, const AdvisoryKey&) = default;
  friend auto operator<=>(const AdvisoryKey&, const AdvisoryKey&) = default;

 private:
  AdvisoryKey(std::uint32_t c, std::uint32_t o, std::uint16_t s) : classid_(c), objid_(o), objsubid_(s) {}
  std::uint32_t classid_;
  std::uint32_t objid_;
  std::uint16_t objsubid_;
};

// The simulated server's clock: virtual time 0 reads 2026-01-01 00:00:00+00 (microseconds
// from PostgreSQL's epoch 2000-01-01), so now() compares with the dates teams write as a
// server's does today: '2024-01-01' is past, '2099-01-01' future. Deterministic.
inline constexpr std::int64_t kSimulatedClockOrigin = 9'497LL * 86'400'000'000LL;

// The simulated clock's reading at t as timestamptz text in UTC ("2026-01-01
// 00:00:00.150000+00"): a client-side time to send as a parameter. Against a server, the
// same text (t counted from that origin).
std::string timestamptz_text(Time t);

// A row of a table with an integer primary key `id`: column name to text value.
using Row = std::map<std::string, std::string>;

// One row of seed 000's monitoring query (GET /api/advisory-locks):
//   SELECT l.pid, a.application_name, a.state, a.query_start, l.classid, l.objid,
//          l.objsubid, l.mode, l.granted, now() - a.query_start AS duration
//   FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
//   WHERE l.locktype = 'advisory' ORDER BY l.pid, l.classid, l.objid, l.objsubid, l.mode
// For the (int4, int4) key form the seed's namespace is classid and its entity_id objid.
struct AdvisoryLockRow {
  int pid = 0;
  std::string application_name;
  std::string state;  // pg_stat_activity.state: "active", "idle", "idle in transaction" [" (aborted)"]
  Time query_start{0};  // since the start of the run (simulation) or the Unix epoch (a server)
  std::uint32_t classid = 0;
  std::uint32_t objid = 0;
  std::uint16_t objsubid = 0;
  std::string mode;  // "ExclusiveLock" or "ShareLock"
  bool granted = false;
  Duration duration{0};  // now() - query_start

  friend bool operator==(const AdvisoryLockRow&, const AdvisoryLockRow&) = default;
};

// A statement's parameter in text form, as libpq sends it ($1, $2, ...): nullopt is NULL.
using Param = std::optional<std::string>;

// What a SQL statement returned (Connection::exec): its columns, its rows with each value as
// PostgreSQL prints it in text (NULL: nullopt), and its command tag ("SELECT 2", "INSERT 0
// 1", "UPDATE 1", "BEGIN"). The typed getters read a value by row and column name; a missing
// column, a row out of range, a NULL where a value is asked for, or text that is not of the
// type are model errors (ModelError), as value() of a failed Result is.
struct Rows {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
  std::string tag;

  std::size_t size() const { return rows.size(); }
  bool empty() const { return rows.empty(); }
  // The rows a command changed or returned: the tag's last number (0 when it has none).
  std::int64_t affected() const;
  bool is_null(std::size_t row, std::string_view column) const;
  const std::string& text(std::size_t row, std::string_view column) const;
  std::int64_t int64(std::size_t row, std::string_view column) const;
  bool boolean(std::size_t row, std::string_view column) const;
  // A timestamptz as an instant counted from kSimulatedClockOrigin: in the simulation, the
  // virtual time from the run's start (now() at time 0 is 2026-01-01 00:00:00+00); against a
  // server, time since that origin.
  Time timestamp(std::size_t row, std::string_view column) const;

 private:
  const std::optional<std::string>& cell(std::size_t row, std::string_view column) const;
};

class Connection {
 public:
  virtual ~Connection() = default;

  // Runs SQL as written, with PostgreSQL 15's semantics: one statement with parameters
  // ($1, ...), or several separated by semicolons without (the result is the last one's;
  // outside a transaction block they are one transaction, as the server runs a query string).
  // The simulated server runs lockstep's subset of SQL (docs/sql.md) and refuses the rest
  // with SQLSTATE 0A000 naming the construct and its position; the libpq backend sends it
  // to the server. Fails with the server's SQLSTATE and message.
  virtual Result<Rows> exec(std::string_view sql, const std::vector<Param>& params = {}) = 0;
  // A string of statements sent at once whose results are read one by one (isolationtester's
  // PQsendQuery): the caller execs its statements in turn between these two. Outside a
  // transaction block they are one transaction, as the server runs a query string (committed
  // after the last statement, rolled back after one that failed). The simulated server models
  // this; the libpq backend sends each statement on its own.
  // `whole` is the string's text (the simulated server's pg_stat_activity.query).
  virtual void begin_query_string(std::string_view whole) { (void)whole; }
  virtual void end_query_string() {}

  // A named statement of this connection (libpq's PQprepare / PQexecPrepared): parsed and
  // checked once, when prepared (the simulated server refuses what is outside its subset
  // here, 0A000, or a text of several statements, 42601), then run by name with parameters.
  // A name prepared twice fails with 42P05, an unknown one with 26000, as on the server.
  // Preparing is not a statement of the schedule: it touches nothing another session sees.
  virtual Status prepare(std::string_view name, std::string_view sql) = 0;
  virtual Result<Rows> exec_prepared(std::string_view name, const std::vector<Param>& params = {}) = 0;

  // SELECT pg_backend_pid()
  virtual int backend_pid() const = 0;

  // SELECT pg_advisory_lock($1) / pg_advisory_lock_shared($1) (or the ($1, $2) forms).
  // Waits; fails with 55P03 on lock_timeout, 57014 on statement_timeout, 57P01 if the
  // backend is terminated while waiting.
  virtual Status advisory_lock(AdvisoryKey key, LockMode mode) = 0;
  // SELECT set_config('lock_timeout', $1, false), pg_advisory_lock($2) / _shared: sets the
  // session's lock_timeout (as set_lock_timeout does) and waits for the lock under it, in
  // one statement: one round trip where the two statements take two.
  virtual Status advisory_lock_with_timeout(AdvisoryKey key, LockMode mode, Duration lock_timeout) = 0;
  // SELECT pg_try_advisory_lock($1) / _shared: false when it would wait.
  virtual Result<bool> try_advisory_lock(AdvisoryKey key, LockMode mode) = 0;
  // SELECT pg_advisory_unlock($1) / _shared: false, with WARNING 01000 "you don't own a
  // lock of type ExclusiveLock" (ShareLock), when not held.
  virtual Result<bool> advisory_unlock(AdvisoryKey key, LockMode mode) = 0;
  // SELECT pg_advisory_unlock_all()
  virtual Status advisory_unlock_all() = 0;
  // SELECT pg_advisory_xact_lock($1) / _shared: held until the transaction ends. Outside
  // an explicit transaction the statement is its own transaction: released at once.
  virtual Status advisory_xact_lock(AdvisoryKey key, LockMode mode) = 0;
  // SELECT pg_try_advisory_xact_lock($1) / _shared: false when it would wait; a lock it
  // takes is held until the transaction ends (outside one: released at once).
  virtual Result<bool> try_advisory_xact_lock(AdvisoryKey key, LockMode mode) = 0;

  // SET lock_timeout = '<n>ms' / SET statement_timeout = '<n>ms' (zero disables).
  virtual Status set_lock_timeout(Duration timeout) = 0;
  virtual Status set_statement_timeout(Duration timeout) = 0;

  // Rows, under READ COMMITTED: a statement sees what was committed when it ran, plus its
  // own transaction's changes. Writes lock the row until the transaction ends; outside an
  // explicit transaction every statement commits at once.
  // SELECT * FROM <table> WHERE id = $1 (no row: nullopt)
  virtual Result<std::optional<Row>> read_row(std::string_view table, std::int64_t id) = 0;
  // INSERT INTO <table> (id, ...) VALUES ($1, ...): 23505 when the id exists.
  // Another transaction that wrote the id (inserted it, or updated its row) and has not
  // ended is waited for first, as the server's unique check does.
  virtual Status insert_row(std::string_view table, std::int64_t id, const Row& values) = 0;
  // INSERT ... ON CONFLICT (id) DO NOTHING: true when it inserted, false when the id exists
  // (no error). Waits as insert_row does.
  virtual Result<bool> insert_row_if_absent(std::string_view table, std::int64_t id, const Row& values) = 0;
  // UPDATE <table> SET ... WHERE id = $1: the rows changed (0 or 1). Waits for a row
  // locked by another transaction, then works on its newest committed version.
  virtual Result<int> update_row(std::string_view table, std::int64_t id, const Row& values) = 0;
  // UPDATE <table> SET ... WHERE id = $1 AND <column> = $2: compare-and-set on a row (the
  // lease-takeover pattern); the rows changed (0 or 1). A row whose column does not match
  // in the version the statement sees is neither locked nor waited for; one that matches
  // but is locked is waited for and then checked again on its newest committed version
  // (READ COMMITTED's recheck). A column the row lacks matches nothing.
  virtual Result<int> update_row_if(std::string_view table, std::int64_t id, std::string_view column,
                                    std::string_view expected, const Row& values) = 0;
  // SELECT * FROM <table> WHERE id = $1 FOR UPDATE [NOWAIT]: locks the row until the
  // transaction ends. Waits for another transaction's lock (with lock_timeout: 55P03), or,
  // with NOWAIT, fails at once with 55P03 "could not obtain lock on row in relation".
  virtual Result<std::optional<Row>> select_for_update(std::string_view table, std::int64_t id, bool nowait) = 0;
  // ... FOR UPDATE SKIP LOCKED: the row, locked; none when another transaction holds a lock
  // on it that conflicts (the queue-claim pattern). Never waits.
  virtual Result<std::optional<Row>> select_for_update_skip_locked(std::string_view table, std::int64_t id) = 0;
  // ... FOR SHARE: a shared row lock until the transaction ends. Waits for a transaction
  // that locked the row FOR UPDATE or updated it; blocks their FOR UPDATE and UPDATE, not
  // their FOR SHARE.
  virtual Result<std::optional<Row>> select_for_share(std::string_view table, std::int64_t id) = 0;

  // BEGIN / COMMIT / ROLLBACK. Session advisory locks survive all three.
  virtual Status begin() = 0;
  virtual Status commit() = 0;
  virtual Status rollback() = 0;

  // The monitoring query above: every advisory lock row of pg_locks, granted or waited for.
  virtual Result<std::vector<AdvisoryLockRow>> advisory_locks() = 0;
  // SELECT pg_terminate_backend($1): true when a backend with that pid existed. Its
  // session ends: all its locks go, a statement it is waiting in fails with 57P01, its
  // next one with 08006.
  virtual Result<bool> terminate_backend(int pid) = 0;

  // The WARNINGs raised since the last call (what a notice receiver collects).
  virtual std::vector<Error> take_warnings() = 0;
  // The NOTIFY messages the server has sent this connection since the last call (LISTEN),
  // as PQnotifies gives them; none on a backend that does not model them.
  virtual std::vector<Notification> take_notifications() { return {}; }
  // Whether the statement running on this connection is in pg_sleep at this instant (not
  // waiting for a lock: what isolationtester's blocked-check tells apart); false where the
  // backend cannot tell from the client (a real one: the isolation runner asks the server).
  virtual bool in_pg_sleep() const { return false; }
};

// A connection borrowed from a Pool; returned when destroyed, with a ROLLBACK if a
// transaction is open (session locks stay). Returning is a release: it runs even while an actor unwinds.
class PooledConnection {
 public:
  PooledConnection() = default;
  PooledConnection(std::unique_ptr<Connection> c, std::function<void(std::unique_ptr<Connection>)> give_back)
      : connection_(std::move(c)), give_back_(std::move(give_back)) {}
  PooledConnection(PooledConnection&&) = default;
  PooledConnection& operator=(PooledConnection&& o) noexcept {
    if (this != &o) {
      release();
      connection_ = std::move(o.connection_);
      give_back_ = std::move(o.give_back_);
    }
    return *this;
  }
  ~PooledConnection() { release(); }
  Connection* operator->() const { return connection_.get(); }
  Connection& operator*() const { return *connection_; }
  explicit operator bool() const { return connection_ != nullptr; }
  void release() {
    if (connection_ && give_back_) give_back_(std::move(connection_));
    connection_.reset();
  }
  // Runs `hook` when the connection goes back, before the pool takes it (for bookkeeping
  // such as counting connections per thread).
  void on_return(std::function<void()> hook) {
    give_back_ = [back = std::move(give_back_), hook = std::move(hook)](std::unique_ptr<Connection> c) {
      hook();
      if (back) back(std::move(c));
    };
  }

 private:
  std::unique_ptr<Connection> connection_;
  std::function<void(std::unique_ptr<Connection>)> give_back_;
};

struct PoolConfig {
  std::string application_name = "lockstep";  // shown in pg_stat_activity
  int pool_size = 5;
  int max_overflow = 10;
  Duration timeout = std::chrono::seconds(30);  // checkout wait
  // Simulation only (a real server has Bug #17686 anyway): a waiter's timeout may fire
  // after the releasing backend granted its lock; the client then gets 55P03 while the
  // session holds the lock (the phantom grant).
  bool phantom_grant = false;
  // Simulation only: at any one statement of an execution (COMMIT and ROLLBACK excepted)
  // the backend may be terminated (a recorded choice): the statement fails with 57P01, the
  // session's locks go, and every later statement on that connection fails with 08006.
  bool backend_terminated = false;
  // At any one statement of an execution (COMMIT and ROLLBACK excepted) the server may
  // restart (a recorded choice; pg_ctl restart -m fast): every session ends at once, as by
  // pg_terminate_backend (the statement fails with 57P01, an idle session's next one with
  // 08006), committed rows stay, and new connections are accepted again at once. On a real
  // server, confirm --pg auto restarts its throwaway server (real/thread_env.h).
  bool server_restart = false;
  // The server's deadlock_timeout: a waiter checks for a deadlock once, this long after it
  // started waiting (untimed: at any moment of the wait).
  Duration deadlock_timeout = std::chrono::seconds(1);
  // Real servers only: the pool's connections get a schema of their own, first on their
  // search_path, made at the first connection and dropped with the pool, so that runs of
  // one scenario never see each other's tables (confirm of a .spec). The simulation has a
  // catalog per execution and ignores it.
  bool own_schema = false;
  // Real servers only: the schema the pool's connections put first on their search_path,
  // made by someone else (a second pool of one run shares the first's: with own_schema,
  // config() names the schema made). Empty: none.
  std::string schema;
  // Settings every connection starts with (libpq's `options`, -c name=value, as pg_regress's
  // PGTZ, PGDATESTYLE and PGOPTIONS give them): in effect from its start, and what RESET,
  // RESET ALL and DISCARD ALL go back to. The simulation takes TimeZone, DateStyle,
  // IntervalStyle and search_path, with values it models.
  std::vector<std::pair<std::string, std::string>> settings;
  // The one actor that checks out of this pool (a pool per actor), or -1: any actor. The
  // simulation then knows the pool's checkouts and returns commute with every other step, so
  // symmetry reduction orders interchangeable actors at their first statements, not at their
  // checkouts (sim/explore/symmetric_starts.h). Another actor's checkout is a ModelError.
  // Real servers ignore it.
  ActorId owner = -1;
};

// SQLAlchemy QueuePool: pool_size connections kept, up to max_overflow more opened on
// demand, a checkout waits up to `timeout` and then fails ("QueuePool limit of size N
// overflow M reached, connection timed out"). Idle connections are handed out in the
// order they came back (QueuePool's default). A returned connection is rolled back and
// keeps its session locks; one beyond pool_size is closed, which releases them.
class Pool {
 public:
  virtual ~Pool() = default;
  virtual Result<PooledConnection> checkout() = 0;
  virtual PoolConfig config() const = 0;
  // QueuePool.checkedout(): connections handed out and not yet returned. Bookkeeping of
  // the pool itself, not a statement: no scheduling point.
  virtual int checked_out() const = 0;
};

}  // namespace lockstep::pg
