#include "lockstep/real/phantom_rounds.h"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "lockstep/model/advisory_lock.h"
#include "lockstep/model/pg.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/thread_env.h"

namespace lockstep::real {
namespace {

constexpr std::int32_t kEntity = 17686;
const pg::AdvisoryKey kKey = pg::AdvisoryKey::pair(static_cast<std::int32_t>(LockNamespace::agent), kEntity);

std::unique_ptr<pg::Connection> open(const std::string& conninfo) {
  auto c = connect(conninfo);
  if (!c.ok()) throw ServerError(c.error().message);
  return std::move(c).value();
}

template <typename T>
T must(pg::Result<T> r, std::string_view what) {
  if (!r.ok()) throw ServerError(fmt::format("{}: {} {}", what, r.error().sqlstate, r.error().message));
  return std::move(r).value();
}
void must(const pg::Status& s, std::string_view what) {
  if (!s.ok()) throw ServerError(fmt::format("{}: {} {}", what, s.error().sqlstate, s.error().message));
}

// Whether the session `pid` holds `key` (granted), as pg_locks shows it.
bool holds(pg::Connection& observer, int pid, pg::AdvisoryKey key = kKey) {
  for (const auto& row : must(observer.advisory_locks(), "pg_locks")) {
    if (row.pid == pid && row.granted && row.classid == key.classid() && row.objid == key.objid() && row.objsubid == key.objsubid()) return true;
  }
  return false;
}

class Rounds {
 public:
  explicit Rounds(const PhantomOptions& o, pg::AdvisoryKey key = kKey) : o_(o), key_(key), holder_(open(o.conninfo)), rng_(o.seed) {}

  // Runs one round: `waiter(env)` runs on its own thread while the holder releases near
  // the deadline. Returns nothing; the client updates the counts.
  void round(ThreadEnv& env, const std::function<void()>& waiter) {
    must(holder_->advisory_lock(key_, pg::LockMode::exclusive), "holder lock");
    const auto span = o_.max_offset.count();
    const Duration release_at = o_.lock_timeout + Duration(std::uniform_int_distribution<std::int64_t>(-span, span)(rng_));
    env.run_actors(2, [&](ActorId a) {
      if (a == 1) {
        waiter();
        return;
      }
      std::this_thread::sleep_for(release_at);
      must(holder_->advisory_unlock(key_, pg::LockMode::exclusive), "holder unlock");
    });
  }

  pg::Connection& observer() { return *holder_; }
  const PhantomOptions& options() const { return o_; }

 private:
  const PhantomOptions& o_;
  pg::AdvisoryKey key_;
  std::unique_ptr<pg::Connection> holder_;
  std::mt19937_64 rng_;
};

PhantomCounts naive_client(Rounds& rounds, const std::function<void(const PhantomCounts&)>& progress) {
  const PhantomOptions& o = rounds.options();
  PhantomCounts n;
  ThreadEnv env({o.conninfo, o.seed, Duration{0}}, nullptr);
  auto waiter = open(o.conninfo);
  must(waiter->set_lock_timeout(o.lock_timeout), "SET lock_timeout");
  for (int i = 0; i < o.rounds; ++i) {
    pg::Status got;
    rounds.round(env, [&] {
      got = waiter->advisory_lock(kKey, pg::LockMode::exclusive);
      if (got.ok()) (void)waiter->advisory_unlock(kKey, pg::LockMode::exclusive);  // only after a successful acquire
    });
    ++n.rounds;
    if (got.ok()) {
      ++n.acquired;
    } else if (got.is(pg::sqlstate::kLockNotAvailable)) {
      ++n.timed_out;
    } else {
      throw ServerError(fmt::format("naive waiter: {} {}", got.error().sqlstate, got.error().message));
    }
    if (holds(rounds.observer(), waiter->backend_pid())) {
      ++n.leaked;
      if (!got.ok()) ++n.phantoms;
      must(waiter->advisory_unlock_all(), "clean-up");  // the harness's, not the client's: rounds stay independent
    }
    if (progress && (i + 1) % 50 == 0) progress(n);
  }
  return n;
}

PhantomCounts service_client(Rounds& rounds, const std::function<void(const PhantomCounts&)>& progress) {
  const PhantomOptions& o = rounds.options();
  PhantomCounts n;
  int cleaned = 0;
  ThreadEnv env({o.conninfo, o.seed, Duration{0}}, [&](ActorId, Time, const Event& e) {
    if (e.kind == kPhantomCleanedEvent) ++cleaned;
  });
  auto pool = env.new_pg_pool(pg::PoolConfig{.application_name = "lockstep-phantom", .pool_size = 1, .max_overflow = 0});
  AdvisoryLockService service(env, *pool);
  for (int i = 0; i < o.rounds; ++i) {
    const int cleaned_before = cleaned;
    bool acquired = false, timed_out = false;
    rounds.round(env, [&] {
      try {
        service.advisory_lock(LockNamespace::agent, kEntity, [&] { acquired = true; }, o.lock_timeout);
      } catch (const AdvisoryLockError& e) {
        if (e.reason() != AdvisoryLockError::Reason::timeout) throw ServerError(fmt::format("service: {}", e.what()));
        timed_out = true;
      }
    });
    ++n.rounds;
    n.acquired += acquired ? 1 : 0;
    n.timed_out += timed_out ? 1 : 0;
    n.phantoms += cleaned - cleaned_before;
    auto conn = must(pool->checkout(), "checkout");  // the one connection the service used
    if (holds(rounds.observer(), conn->backend_pid())) {
      ++n.leaked;
      must(conn->advisory_unlock_all(), "clean-up");
    }
    if (progress && (i + 1) % 50 == 0) progress(n);
  }
  return n;
}

}  // namespace

PhantomCounts run_phantom_rounds(const PhantomOptions& o, const PhantomClient& client,
                                 const std::function<void(const PhantomCounts&)>& progress) {
  if (!client.round) throw std::invalid_argument("run_phantom_rounds: client " + client.name + " has no round function");
  Rounds rounds(o, client.key);
  PhantomCounts n;
  ThreadEnv env({o.conninfo, o.seed, Duration{0}}, nullptr);
  auto waiter = open(o.conninfo);
  must(waiter->set_lock_timeout(o.lock_timeout), "SET lock_timeout");
  for (int i = 0; i < o.rounds; ++i) {
    bool got = false;
    rounds.round(env, [&] { got = client.round(*waiter, o.lock_timeout); });
    ++n.rounds;
    (got ? n.acquired : n.timed_out) += 1;
    (void)waiter->take_warnings();
    if (holds(rounds.observer(), waiter->backend_pid(), client.key)) {
      ++n.leaked;
      if (!got) ++n.phantoms;
      must(waiter->advisory_unlock_all(), "clean-up");  // the harness's: rounds stay independent
    }
    if (progress && (i + 1) % 50 == 0) progress(n);
  }
  return n;
}

PhantomClient phantom_client(const SystemInfo& system, const std::string& variant) {
  if (!system.phantom_round) throw std::invalid_argument("system \"" + system.name + "\" declares no phantom round (ModelSystem::phantom_round)");
  if (std::none_of(system.variants.begin(), system.variants.end(), [&](const NamedDoc& v) { return v.name == variant; })) {
    throw std::invalid_argument("system \"" + system.name + "\" has no variant \"" + variant + "\"");
  }
  PhantomClient client;
  client.name = variant;
  client.key = system.phantom_key;
  client.round = [round = system.phantom_round, variant](pg::Connection& conn, Duration timeout) { return round(conn, timeout, variant); };
  return client;
}

PhantomReport run_phantom_rounds(const PhantomOptions& options,
                                 const std::function<void(std::string_view, const PhantomCounts&)>& progress) {
  Rounds rounds(options);
  PhantomReport report;
  report.naive = naive_client(rounds, [&](const PhantomCounts& c) { if (progress) progress("naive", c); });
  report.service = service_client(rounds, [&](const PhantomCounts& c) { if (progress) progress("service", c); });
  return report;
}

}  // namespace lockstep::real
