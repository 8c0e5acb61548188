#include "sim/pg/sim_pg.h"

#include <deque>

#include <fmt/format.h>

namespace lockstep::sim::pg {
namespace {

using lockstep::pg::Error;
using lockstep::pg::PooledConnection;
using lockstep::pg::PoolConfig;
using lockstep::pg::Result;
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
      const Wake wake = s_.yield({check_next ? "advisory_lock_wait" : "advisory_lock_wait_on",
                                  {obj, acquire_access(mode)}, pid_, true},
                                 &ready, wait);
      if (wake == Wake::run) break;
      if (check_next) {  // the deadlock check, once per wait
        deadlock_checked = true;
        if (waiter->state == Waiter::State::waiting && server_.locks().in_deadlock(*waiter)) {
          server_.locks().cancel(waiter);
          s_.note_result({Kind::failed});
          return Error{std::string(sqlstate::kDeadlockDetected), "deadlock detected"};
        }
        if (waiter->state == Waiter::State::waiting) continue;
        break;  // granted meanwhile
      }
      if (waiter->state == Waiter::State::waiting || config_.phantom_grant) {
        // Timed out; with the phantom grant fault, also after the grant: the lock stays held.
        if (waiter->state == Waiter::State::waiting) server_.locks().cancel(waiter);
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
    release_stepwise(Scope::transaction, verb);  // session advisory locks survive
    return {};
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

std::unique_ptr<lockstep::pg::Pool> make_pool(Server& server, const PoolConfig& config) {
  return std::make_unique<SimPool>(server, config);
}

}  // namespace lockstep::sim::pg
