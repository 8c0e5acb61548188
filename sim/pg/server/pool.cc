// sim/pg/server/pool.cc: the simulated connection pool (SQLAlchemy's QueuePool): checkout, waiting
// for a connection with a timeout, and the return (ROLLBACK, back to the queue or closed).
#include <deque>
#include <stdexcept>

#include "lockstep/sim/pg/server/connection.h"

namespace lockstep::sim::pg {
namespace {

class SimPool final : public lockstep::pg::Pool, public WaitCondition {
 public:
  SimPool(Server& server, PoolConfig config)
      : server_(server), s_(server.scheduler()), config_(config), object_(server.new_pool_object()) {
    if (config_.owner >= 0) s_.own(object_, config_.owner);
    try {
      (void)sql::startup_style(config_.settings);  // refused here, not in a checkout's step
    } catch (const std::invalid_argument& e) {
      throw ModelError(fmt::format("PoolConfig::settings: {}", e.what()));
    }
  }

  Result<PooledConnection> checkout() override {
    if (config_.owner >= 0 && s_.in_actor() && s_.current() != config_.owner) {
      throw ModelError(fmt::format("a pool of actor {}'s own (PoolConfig::owner = {}) checked out by {}", config_.owner,
                                   config_.owner, s_.actor_name(s_.current())));
    }
    s_.yield({"checkout", server_.on(object_, Access::acquire)});
    if (!available()) {
      s_.note_result({Kind::failed});
      if (s_.yield({"checkout_wait", server_.on(object_, Access::acquire)}, this, config_.timeout) == Wake::timer) {
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
      c = server_.statement_log() ? make_logged_connection(server_, config_, *server_.statement_log())
                                  : std::make_unique<SimConnection>(server_, config_);
      ++open_;
    }
    s_.note_result({Kind::value, c->backend_pid()});
    ++checked_out_;
    LOCKSTEP_INVARIANT(checked_out_ <= open_ && open_ <= config_.pool_size + config_.max_overflow,
                       "pool: no more connections out than open, nor open than its size and overflow");
    return PooledConnection(std::move(c), [this](std::unique_ptr<lockstep::pg::Connection> back) {
      give_back(std::unique_ptr<SimConnection>(static_cast<SimConnection*>(back.release())));
    });
  }

  PoolConfig config() const override { return config_; }
  int checked_out() const override { return checked_out_; }

  bool ready(ActorId) const override { return available(); }
  std::string describe(ActorId) const override {
    return fmt::format("a connection from the pool ({} open, {} checked out, size {} overflow {})", open_, checked_out_,
                       config_.pool_size, config_.max_overflow);
  }

 private:
  bool available() const { return !idle_.empty() || open_ < config_.pool_size + config_.max_overflow; }

  // QueuePool's return: ROLLBACK when a transaction is open (psycopg2's rollback sends
  // nothing otherwise; session locks stay either way), then back to the queue, or closed
  // when the pool already keeps pool_size idle connections.
  void give_back(std::unique_ptr<SimConnection> c) {
    if (c->in_transaction()) (void)c->rollback();
    s_.yield({"return", server_.on(object_, Access::release), c->backend_pid(), true});
    --checked_out_;
    LOCKSTEP_INVARIANT(checked_out_ >= 0, "pool: a connection comes back only once");
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
  ObjectId object_;  // this pool's queue
  std::deque<std::unique_ptr<SimConnection>> idle_;
  int open_ = 0;
  int checked_out_ = 0;
};

}  // namespace

std::unique_ptr<lockstep::pg::Pool> make_pool(Server& server, const PoolConfig& config) {
  return std::make_unique<SimPool>(server, config);
}

}  // namespace lockstep::sim::pg
