#include "sim/pg/sim_pg.h"

#include <algorithm>
#include <deque>
#include <set>

#include <fmt/format.h>

namespace lockstep::sim::pg {
namespace {

using lockstep::pg::Error;
using lockstep::pg::PooledConnection;
using lockstep::pg::PoolConfig;
using lockstep::pg::Result;
using lockstep::pg::Row;
using lockstep::pg::Status;
namespace sqlstate = lockstep::pg::sqlstate;
using Kind = StepResult::Kind;

std::string_view lock_type(LockMode mode) { return mode == LockMode::exclusive ? "ExclusiveLock" : "ShareLock"; }
Access acquire_access(LockMode mode) { return mode == LockMode::exclusive ? Access::acquire : Access::acquire_shared; }

class WaiterReady final : public WaitCondition {
 public:
  explicit WaiterReady(const Waiter& w) : w_(w) {}
  bool ready(ActorId) const override { return w_.state != Waiter::State::waiting; }
  std::string describe(ActorId) const override {
    return fmt::format("advisory lock ({}, {}, {}) in {} mode", w_.key.classid(), w_.key.objid(), w_.key.objsubid(),
                       w_.mode == LockMode::exclusive ? "exclusive" : "shared");
  }

 private:
  const Waiter& w_;
};

class SimConnection final : public lockstep::pg::Connection {
 public:
  SimConnection(Server& server, const PoolConfig& config)
      : server_(server), s_(server.scheduler()), pid_(server.open_session()), config_(config) {}

  bool dead() const { return dead_; }

  int backend_pid() const override { return pid_; }

  Status advisory_lock(AdvisoryKey key, LockMode mode) override { return lock(key, mode, Scope::session); }

  Result<bool> try_advisory_lock(AdvisoryKey key, LockMode mode) override {
    if (dead_) return lost();
    s_.yield({mode == LockMode::exclusive ? "try_advisory_lock" : "try_advisory_lock_shared",
              {server_.object_for(key), acquire_access(mode)}, pid_, true});
    if (killed()) return terminated();
    const bool got = server_.locks().try_request(pid_, key, mode, Scope::session);
    if (!got) s_.refine_access(Access::read);
    s_.note_result({Kind::value, got ? 1 : 0});
    return got;
  }

  Result<bool> advisory_unlock(AdvisoryKey key, LockMode mode) override {
    if (dead_) return lost();
    s_.yield({mode == LockMode::exclusive ? "advisory_unlock" : "advisory_unlock_shared",
              {server_.object_for(key), Access::release}, pid_, true});
    if (killed()) return terminated();
    const bool held = server_.locks().release(pid_, key, mode);
    if (!held) {
      s_.refine_access(Access::read);
      warnings_.push_back({std::string(sqlstate::kWarning), fmt::format("you don't own a lock of type {}", lock_type(mode))});
    }
    s_.note_result({Kind::value, held ? 1 : 0});
    return held;
  }

  Status advisory_unlock_all() override {
    if (dead_) return lost();
    release_stepwise(Scope::session, "advisory_unlock_all");
    return {};
  }

  Status advisory_xact_lock(AdvisoryKey key, LockMode mode) override {
    Status st = lock(key, mode, Scope::transaction);
    if (st.ok() && !in_transaction_) release_stepwise(Scope::transaction, "end of statement");
    return st;
  }

  Status set_lock_timeout(Duration t) override {
    if (dead_) return lost();
    s_.yield({"set_lock_timeout", {}, std::chrono::duration_cast<std::chrono::milliseconds>(t).count(), true});
    lock_timeout_ = t;
    return {};
  }
  Status set_statement_timeout(Duration t) override {
    if (dead_) return lost();
    s_.yield({"set_statement_timeout", {}, std::chrono::duration_cast<std::chrono::milliseconds>(t).count(), true});
    statement_timeout_ = t;
    return {};
  }

  Result<std::optional<Row>> read_row(std::string_view table, std::int64_t id) override {
    if (dead_) return lost();
    s_.yield({"read_row", {server_.row_object(table, id), Access::read}, id, true});
    if (killed()) return terminated();
    return visible(table, id);
  }

  Status insert_row(std::string_view table, std::int64_t id, const Row& values) override {
    if (dead_) return lost();
    s_.yield({"insert_row", {server_.row_object(table, id), Access::write}, id, true});
    if (killed()) return terminated();
    RowState& r = server_.row(table, id);
    const bool taken = r.committed || std::any_of(r.pending.begin(), r.pending.end(), [](const auto& p) { return p.second.has_value(); });
    if (taken || !server_.row_locks().try_request(pid_, server_.row_key(table, id), LockMode::exclusive, Scope::transaction)) {
      // (A concurrent uncommitted insert of the same id is reported at once here; the
      // server would wait for that transaction first.)
      return Error{std::string(sqlstate::kUniqueViolation),
                   fmt::format("duplicate key value violates unique constraint \"{}_pkey\"", table)};
    }
    Row row = values;
    row["id"] = std::to_string(id);
    r.pending[pid_] = row;
    written_.emplace(std::string(table), id);
    end_statement();
    return {};
  }

  Result<int> update_row(std::string_view table, std::int64_t id, const Row& values) override {
    if (dead_) return lost();
    if (Status st = lock_row(table, id, false, "update_row"); !st.ok()) return st.error();
    std::optional<Row> row = visible(table, id);  // the newest committed version, after the wait
    if (!row) {
      end_statement();
      return 0;
    }
    for (const auto& [k, v] : values) (*row)[k] = v;
    server_.row(table, id).pending[pid_] = row;
    written_.emplace(std::string(table), id);
    end_statement();
    return 1;
  }

  Result<std::optional<Row>> select_for_update(std::string_view table, std::int64_t id, bool nowait) override {
    if (dead_) return lost();
    if (Status st = lock_row(table, id, nowait, nowait ? "select_for_update_nowait" : "select_for_update"); !st.ok()) {
      return st.error();
    }
    std::optional<Row> row = visible(table, id);
    end_statement();
    return row;
  }

  Status begin() override {
    if (dead_) return lost();
    s_.yield({"begin", {}, pid_, true});
    if (killed()) return terminated();
    in_transaction_ = true;
    return {};
  }
  Status commit() override { return end_transaction("commit"); }
  Status rollback() override { return end_transaction("rollback"); }

  std::vector<Error> take_warnings() override { return std::exchange(warnings_, {}); }

  // Closing ends the session: every lock it holds goes.
  void close() {
    if (dead_) return;
    release_stepwise(Scope::transaction, "close");
    release_stepwise(Scope::session, "close");
  }

 private:
  Status lock(AdvisoryKey key, LockMode mode, Scope scope) {
    if (dead_) return lost();
    const ObjectId obj = server_.object_for(key);
    const std::string_view verb = scope == Scope::session ? (mode == LockMode::exclusive ? "advisory_lock" : "advisory_lock_shared")
                                                          : (mode == LockMode::exclusive ? "advisory_xact_lock" : "advisory_xact_lock_shared");
    s_.yield({verb, {obj, acquire_access(mode)}, pid_, true});
    if (killed()) return terminated();
    auto waiter = server_.locks().request(pid_, key, mode, scope);
    if (!waiter) {
      s_.note_result({Kind::ok});
      return {};
    }
    s_.note_result({Kind::failed});  // queued
    return wait_for(server_.locks(), waiter, obj, acquire_access(mode), "advisory_lock_wait");
  }

  // Waits for a queued request: granted (ok), or lock_timeout / statement_timeout, or a
  // deadlock found by the one check deadlock_timeout into the wait.
  Status wait_for(LockTable& table, const std::shared_ptr<Waiter>& waiter, ObjectId obj, Access access,
                  std::string_view verb) {
    // lock_timeout counts from the start of the wait; statement_timeout from the statement,
    // which started this step: both from now. The deadlock check comes deadlock_timeout in.
    const bool lock_first = lock_timeout_.count() > 0 && (statement_timeout_.count() == 0 || lock_timeout_ <= statement_timeout_);
    const Duration limit = lock_first ? lock_timeout_ : statement_timeout_.count() > 0 ? statement_timeout_ : kForever;
    const Time start = s_.now();
    bool deadlock_checked = false;
    const WaiterReady ready(*waiter);
    for (;;) {
      const bool check_next = !deadlock_checked && config_.deadlock_timeout < limit;
      const Duration waited = s_.now() - start;
      const Duration wait = check_next ? config_.deadlock_timeout - std::min(waited, config_.deadlock_timeout)
                                       : (limit == kForever ? kForever : limit - std::min(waited, limit));
      const Wake wake = s_.yield({verb, {obj, access}, pid_, true}, &ready, wait);
      if (wake == Wake::run) break;
      if (check_next) {  // the deadlock check, once per wait
        deadlock_checked = true;
        if (waiter->state == Waiter::State::waiting && table.in_deadlock(*waiter)) {
          table.cancel(waiter);
          s_.note_result({Kind::failed});
          return Error{std::string(sqlstate::kDeadlockDetected), "deadlock detected"};
        }
        if (waiter->state == Waiter::State::waiting) continue;
        break;  // granted meanwhile
      }
      if (waiter->state == Waiter::State::waiting || config_.phantom_grant) {
        // Timed out; with the phantom grant fault, also after the grant: the lock stays held.
        if (waiter->state == Waiter::State::waiting) table.cancel(waiter);
        s_.note_result({Kind::timeout});
        if (lock_first) return Error{std::string(sqlstate::kLockNotAvailable), "canceling statement due to lock timeout"};
        return Error{std::string(sqlstate::kQueryCanceled), "canceling statement due to statement timeout"};
      }
      break;  // the grant won the race with the timeout
    }
    s_.note_result({Kind::ok});
    return {};
  }

  // The backend_terminated fault: this statement may find its backend killed.
  bool killed() {
    if (!config_.backend_terminated || server_.termination_used()) return false;
    if (s_.choose(2, "backend_terminated") == 0) return false;
    server_.use_termination();
    return true;
  }

  // The session ends: its locks go (one key per step), the connection is dead.
  Error terminated() {
    finish_rows(false, "backend terminated");
    release_stepwise(Scope::transaction, "backend terminated");
    release_stepwise(Scope::session, "backend terminated");
    dead_ = true;
    return Error{std::string(sqlstate::kAdminShutdown), "terminating connection due to administrator command"};
  }

  static Error lost() { return Error{std::string(sqlstate::kConnectionFailure), "server closed the connection unexpectedly"}; }

  Status end_transaction(std::string_view verb) {
    if (dead_) return lost();
    // A release: a pooled connection's return rolls back from a destructor.
    s_.yield({verb, {kNoObject, Access::release}, pid_, true});
    in_transaction_ = false;
    finish_rows(verb == "commit", verb);
    release_stepwise(Scope::transaction, verb);  // session advisory locks survive
    return {};
  }

  // What this session sees of a row: its own uncommitted version, else the committed one.
  std::optional<Row> visible(std::string_view table, std::int64_t id) {
    RowState& r = server_.row(table, id);
    if (auto mine = r.pending.find(pid_); mine != r.pending.end()) return mine->second;
    return r.committed;
  }

  // Takes the row lock (transaction scope), waiting as for an advisory lock.
  Status lock_row(std::string_view table, std::int64_t id, bool nowait, std::string_view verb) {
    const ObjectId obj = server_.row_object(table, id);
    s_.yield({verb, {obj, Access::acquire}, id, true});
    if (killed()) return terminated();
    const AdvisoryKey key = server_.row_key(table, id);
    if (server_.row_locks().held(pid_, key, LockMode::exclusive) > 0) return {};
    locked_rows_.emplace(std::string(table), id);
    if (nowait) {
      if (server_.row_locks().try_request(pid_, key, LockMode::exclusive, Scope::transaction)) return {};
      locked_rows_.erase({std::string(table), id});
      s_.refine_access(Access::read);
      s_.note_result({Kind::failed});
      return Error{std::string(sqlstate::kLockNotAvailable), fmt::format("could not obtain lock on row in relation \"{}\"", table)};
    }
    auto waiter = server_.row_locks().request(pid_, key, LockMode::exclusive, Scope::transaction);
    if (!waiter) return {};
    s_.note_result({Kind::failed});
    Status st = wait_for(server_.row_locks(), waiter, obj, Access::acquire, "row_lock_wait");
    if (!st.ok()) locked_rows_.erase({std::string(table), id});
    return st;
  }

  // Outside an explicit transaction a statement commits when it ends.
  void end_statement() {
    if (!in_transaction_) finish_rows(true, "autocommit");
  }

  // Commit publishes this session's row versions, rollback drops them; either way its row
  // locks go. One step per row (a footprint names one object).
  void finish_rows(bool commit, std::string_view verb) {
    std::set<std::pair<std::string, std::int64_t>> rows = locked_rows_;
    rows.insert(written_.begin(), written_.end());
    for (const auto& [table, id] : rows) {
      s_.yield({verb, {server_.row_object(table, id), Access::write}, id, true});
      RowState& r = server_.row(table, id);
      if (auto mine = r.pending.find(pid_); mine != r.pending.end()) {
        if (commit) r.committed = mine->second;
        r.pending.erase(mine);
      }
      server_.row_locks().release_key(pid_, server_.row_key(table, id), Scope::transaction);
    }
    locked_rows_.clear();
    written_.clear();
  }

  // Releases the session's holds in `scope`, one key per step.
  void release_stepwise(Scope scope, std::string_view verb) {
    for (const AdvisoryKey& key : server_.locks().keys()) {
      if (server_.locks().held(pid_, key, LockMode::exclusive) + server_.locks().held(pid_, key, LockMode::shared) == 0) continue;
      s_.yield({verb, {server_.object_for(key), Access::release}, pid_, true});
      server_.locks().release_key(pid_, key, scope);
    }
  }

  Server& server_;
  Scheduler& s_;
  int pid_;
  PoolConfig config_;
  std::set<std::pair<std::string, std::int64_t>> locked_rows_, written_;  // this transaction's
  bool dead_ = false;
  bool in_transaction_ = false;
  Duration lock_timeout_{0};
  Duration statement_timeout_{0};
  std::vector<Error> warnings_;
};

class SimPool final : public lockstep::pg::Pool, public WaitCondition {
 public:
  SimPool(Server& server, PoolConfig config) : server_(server), s_(server.scheduler()), config_(config) {}

  Result<PooledConnection> checkout() override {
    s_.yield({"checkout", {server_.pool_object(), Access::acquire}});
    if (!available()) {
      s_.note_result({Kind::failed});
      if (s_.yield({"checkout_wait", {server_.pool_object(), Access::acquire}}, this, config_.timeout) == Wake::timer) {
        s_.note_result({Kind::timeout});
        return Error{std::string(lockstep::pg::sqlstate::kPoolTimeout),
                     fmt::format("QueuePool limit of size {} overflow {} reached, connection timed out, timeout {:.2f}",
                                 config_.pool_size, config_.max_overflow,
                                 std::chrono::duration<double>(config_.timeout).count())};
      }
    }
    std::unique_ptr<SimConnection> c;
    if (!idle_.empty()) {
      c = std::move(idle_.front());
      idle_.pop_front();
    } else {
      c = std::make_unique<SimConnection>(server_, config_);
      ++open_;
    }
    s_.note_result({Kind::value, c->backend_pid()});
    ++checked_out_;
    return PooledConnection(std::move(c), [this](std::unique_ptr<lockstep::pg::Connection> back) {
      give_back(std::unique_ptr<SimConnection>(static_cast<SimConnection*>(back.release())));
    });
  }

  PoolConfig config() const override { return config_; }

  bool ready(ActorId) const override { return available(); }
  std::string describe(ActorId) const override {
    return fmt::format("a connection from the pool ({} open, {} checked out, size {} overflow {})", open_, checked_out_,
                       config_.pool_size, config_.max_overflow);
  }

 private:
  bool available() const { return !idle_.empty() || open_ < config_.pool_size + config_.max_overflow; }

  // QueuePool's return: ROLLBACK (session locks stay), then back to the queue, or closed
  // when the pool already keeps pool_size idle connections.
  void give_back(std::unique_ptr<SimConnection> c) {
    (void)c->rollback();
    s_.yield({"return", {server_.pool_object(), Access::release}, c->backend_pid(), true});
    --checked_out_;
    if (c->dead()) {
      --open_;  // the pool discards a connection whose backend died
    } else if (static_cast<int>(idle_.size()) < config_.pool_size) {
      idle_.push_back(std::move(c));
    } else {
      c->close();
      --open_;
    }
  }

  Server& server_;
  Scheduler& s_;
  PoolConfig config_;
  std::deque<std::unique_ptr<SimConnection>> idle_;
  int open_ = 0;
  int checked_out_ = 0;
};

}  // namespace

ObjectId Server::object_for(AdvisoryKey key) {
  auto [it, inserted] = objects_.emplace(key, kNoObject);
  if (inserted) it->second = s_.new_object(fmt::format("advisory({},{},{})", key.classid(), key.objid(), key.objsubid()));
  return it->second;
}

AdvisoryKey Server::row_key(std::string_view table, std::int64_t id) {
  auto [it, inserted] = table_numbers_.emplace(std::string(table), static_cast<int>(table_numbers_.size()));
  return AdvisoryKey::pair(it->second, static_cast<std::int32_t>(id));
}

ObjectId Server::row_object(std::string_view table, std::int64_t id) {
  auto [it, inserted] = row_objects_.emplace(std::make_pair(std::string(table), id), kNoObject);
  if (inserted) it->second = s_.new_object(fmt::format("{}#{}", table, id));
  return it->second;
}

std::unique_ptr<lockstep::pg::Pool> make_pool(Server& server, const PoolConfig& config) {
  return std::make_unique<SimPool>(server, config);
}

}  // namespace lockstep::sim::pg
