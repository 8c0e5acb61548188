// model/headspace/db_session.h: the application's `db.session` (a SQLAlchemy Session).
//
// One per request or background thread. It borrows a connection on its first statement and
// keeps it until close() (SQLAlchemy gives it back at each commit and borrows again at the
// next statement; keeping it is the same peak use of the pool and fewer steps). Its
// identity map caches every row it loaded: get() returns the cached row, stale or not, and
// only refresh() reads the database again, as SQLAlchemy does between commits with
// expire_on_commit disabled (the stale reads of seed 001's "Pattern #4"). Writes go to the
// database at once (autoflush) and into the cache.
//
// Errors from the database throw DbError (SQLAlchemy's OperationalError), carrying the
// SQLSTATE.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "lockstep/model/pg.h"

namespace lockstep::headspace {

class DbError : public std::runtime_error {
 public:
  explicit DbError(const pg::Error& e) : std::runtime_error(e.sqlstate + " " + e.message), sqlstate(e.sqlstate) {}
  std::string sqlstate;
};

// Any other failure of application code (a bug, a failed HTTP call): propagates.
class AppError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DbSession {
 public:
  explicit DbSession(pg::Pool& pool) : pool_(pool) {}

  // The row as this session last saw it (read from the database on first use). The
  // reference is the identity map's entry: the next refresh of the row changes it.
  const pg::Row& get(const std::string& table, std::int64_t id) {
    auto it = cache_.find({table, id});
    if (it != cache_.end()) return it->second;
    return refresh(table, id);
  }

  // db.session.refresh(obj): reads the row again.
  const pg::Row& refresh(const std::string& table, std::int64_t id) {
    auto r = conn().read_row(table, id);
    if (!r.ok()) throw DbError(r.error());
    return cache_[{table, id}] = std::move(r).value().value_or(pg::Row{});
  }

  // SELECT ... FOR UPDATE [NOWAIT] (with_for_update(nowait=...)).
  const pg::Row& lock_row(const std::string& table, std::int64_t id, bool nowait) {
    auto r = conn().select_for_update(table, id, nowait);
    if (!r.ok()) throw DbError(r.error());
    return cache_[{table, id}] = std::move(r).value().value_or(pg::Row{});
  }

  void update(const std::string& table, std::int64_t id, const pg::Row& values) {
    auto r = conn().update_row(table, id, values);
    if (!r.ok()) throw DbError(r.error());
    auto& cached = cache_[{table, id}];
    for (const auto& [k, v] : values) cached[k] = v;
  }

  void insert(const std::string& table, std::int64_t id, const pg::Row& values) {
    if (pg::Status st = conn().insert_row(table, id, values); !st.ok()) throw DbError(st.error());
  }

  void begin() { check(conn().begin()); }
  void commit() { check(conn().commit()); }
  void rollback() {
    if (conn_) check(conn_->rollback());
  }

  // The connection, borrowed on first use (pool checkout errors throw DbError).
  pg::Connection& conn() {
    if (!conn_) {
      auto c = pool_.checkout();
      if (!c.ok()) throw DbError(c.error());
      conn_ = std::move(c).value();
    }
    return *conn_;
  }

  // Gives the connection back (ROLLBACK on return). Also done by the destructor.
  void close() { conn_.release(); }

 private:
  static void check(const pg::Status& st) {
    if (!st.ok()) throw DbError(st.error());
  }

  pg::Pool& pool_;
  pg::PooledConnection conn_;
  std::map<std::pair<std::string, std::int64_t>, pg::Row> cache_;
};

}  // namespace lockstep::headspace
