// The advisory lock service of seed 000 on the simulated PostgreSQL, under every
// interleaving: mutual exclusion, timeouts, skipping, reentrancy, the phantom grant
// cleaned up (and leaked by the conditional_unlock variant), exceptions, the key hash.
#include "lockstep/model/advisory_lock.h"

#include <gtest/gtest.h>

#include <set>

#include <fmt/format.h>

#include "test_support.h"

namespace lockstep {
namespace {

using testing::LambdaSystem;
using namespace std::chrono_literals;

struct Service {
  Service(Env& env, pg::PoolConfig config, AdvisoryLockOptions options)
      : pool(env.new_pg_pool(config)), locks(env, *pool, options), work(env.new_shared_var("work", 0)) {}
  std::unique_ptr<pg::Pool> pool;
  AdvisoryLockService locks;
  std::unique_ptr<SharedVar> work;
  int inside = 0;
  std::vector<std::string> log;
};

// The pool and service settings the next system is built with.
struct Config {
  pg::PoolConfig pool{.pool_size = 5, .max_overflow = 10, .timeout = 30s};
  AdvisoryLockOptions options;
};

class ServiceState : public Service {
 public:
  static Config& config() {
    static Config c;
    return c;
  }
  explicit ServiceState(Env& env) : Service(env, config().pool, config().options) {}
};

std::optional<Violation> one_inside(ServiceState& s, const Event& e) {
  s.inside += e.name == "enter" ? 1 : e.name == "leave" ? -1 : 0;
  if (s.inside > 1) return Violation{"agent_mutual_exclusion", "two actors hold the agent lock"};
  return std::nullopt;
}

std::optional<Violation> no_leaked_locks(ServiceState& s) {
  auto probe = s.pool->checkout();
  if (!probe.ok()) return Violation{"no_leaked_locks", "no connection left to probe with"};
  // Outside any actor: the probe's statements take effect at once.
  const auto free = probe.value()->try_advisory_lock(pg::AdvisoryKey::pair(1, 7), pg::LockMode::exclusive);
  if (free.ok() && !free.value()) return Violation{"no_leaked_locks", "the AGENT lock of agent 7 is still held"};
  return std::nullopt;
}

void critical_section(ServiceState& s, Env& env, ActorId self) {
  env.observe({"enter", self, 0});
  s.work->store(self + 1);
  env.observe({"leave", self, 0});
}

sim::ExploreResult explore(LambdaSystem<ServiceState>& system, TimeMode time = TimeMode::untimed) {
  sim::ExploreOptions options;
  options.limits.time = time;
  options.stop_at_first = false;
  return testing::explore(system, "dpor", options);
}

TEST(AdvisoryLock, HooksOfOneAgentAreSerialised) {
  ServiceState::config() = {};
  LambdaSystem<ServiceState> system(
      3, [](ServiceState& s, Env& env, ActorId self) {
        try {
          s.locks.advisory_lock(LockNamespace::agent, 7, [&] { critical_section(s, env, self); });
        } catch (const AdvisoryLockError&) {
          // Untimed, a waiter's 15 s timeout may fire at any moment: the hook fails visibly.
        }
      },
      no_leaked_locks, one_inside);
  const auto r = explore(system);
  EXPECT_EQ(r.verdict, Verdict::pass) << (r.first_failure ? r.first_failure->result.message : "");
  EXPECT_GT(r.stats.executions, 1u);
}

TEST(AdvisoryLock, ATimeoutRaisesAndReturnsTheConnection) {
  ServiceState::config() = {};
  std::set<std::string> seen;
  LambdaSystem<ServiceState> system(
      2, [](ServiceState& s, Env& env, ActorId self) {
        if (self == 0) {
          s.locks.advisory_lock(LockNamespace::agent, 7, [&] { env.sleep_for(20s); });
        } else {
          env.sleep_for(1s);
          try {
            s.locks.advisory_lock(LockNamespace::agent, 7, [] {}, 5s);
            s.log.push_back("got it");
          } catch (const AdvisoryLockError& e) {
            s.log.push_back(e.what());
          }
        }
      },
      [&seen](ServiceState& s) -> std::optional<Violation> {
        for (const auto& l : s.log) seen.insert(l);
        return no_leaked_locks(s);
      });
  EXPECT_EQ(explore(system, TimeMode::timed).verdict, Verdict::pass);
  EXPECT_EQ(seen, (std::set<std::string>{"advisory_lock(1, 7) failed: 55P03 canceling statement due to lock timeout"}));
}

TEST(AdvisoryLock, BackgroundWorkSkipsALockedAgent) {
  ServiceState::config() = {};
  std::set<std::string> seen;
  LambdaSystem<ServiceState> system(
      2, [](ServiceState& s, Env& env, ActorId self) {
        if (self == 0) {
          try {
            s.locks.advisory_lock(LockNamespace::agent, 7, [&] { critical_section(s, env, self); });
          } catch (const AdvisoryLockError&) {
            // It waits while the background try holds the lock; untimed, it may time out.
          }
        } else {
          s.locks.advisory_lock_or_skip(LockNamespace::agent, 7, [&](bool held) {
            s.log.push_back(held ? "processed" : "skipped");
            if (held) critical_section(s, env, self);
          });
        }
      },
      [&seen](ServiceState& s) -> std::optional<Violation> {
        for (const auto& l : s.log) seen.insert(l);
        return no_leaked_locks(s);
      },
      one_inside);
  EXPECT_EQ(explore(system).verdict, Verdict::pass);
  EXPECT_EQ(seen, (std::set<std::string>{"processed", "skipped"}));
}

TEST(AdvisoryLock, ReentrancyRaisesAtOnceAndTheOuterLockStaysHeld) {
  ServiceState::config() = {};
  std::set<std::string> seen;
  LambdaSystem<ServiceState> system(
      1, [](ServiceState& s, Env&, ActorId) {
        s.locks.advisory_lock(LockNamespace::agent, 7, [&] {
          try {
            s.locks.advisory_lock(LockNamespace::agent, 7, [] {});
            s.log.push_back("nested lock granted");
          } catch (const AdvisoryLockError&) {
            s.log.push_back("nested lock raised");
          }
          s.locks.advisory_lock_or_skip(LockNamespace::agent, 7, [&](bool held) {
            s.log.push_back(held ? "nested skip held" : "nested skip false");
          });
          s.log.push_back(s.locks.holds(LockNamespace::agent, 7) ? "outer held" : "outer lost");
        });
      },
      [&seen](ServiceState& s) -> std::optional<Violation> {
        std::string all;
        for (const auto& l : s.log) all += l + "; ";
        seen.insert(all);
        return no_leaked_locks(s);
      });
  EXPECT_EQ(explore(system).verdict, Verdict::pass);
  EXPECT_EQ(seen, (std::set<std::string>{"nested lock raised; nested skip false; outer held; "}));
}

TEST(AdvisoryLock, WithoutTheCheckANestedLockWaitsForItselfUntilItsTimeout) {
  ServiceState::config() = {};
  ServiceState::config().options.reentrancy_check = false;
  LambdaSystem<ServiceState> system(1, [](ServiceState& s, Env&, ActorId) {
    s.locks.advisory_lock(LockNamespace::agent, 7, [&] { s.locks.advisory_lock(LockNamespace::agent, 7, [] {}); });
  });
  // The inner call waits on another connection for the lock its own actor holds; the
  // deadlock check finds no cycle (the outer session waits for nothing), so only the 15 s
  // lock_timeout ends it, and the error escapes the actor.
  const auto r = explore(system, TimeMode::timed);
  EXPECT_EQ(r.verdict, Verdict::model_error) << "the inner call should time out after 15 s and raise";
  EXPECT_NE(r.first_failure->result.message.find("55P03"), std::string::npos) << r.first_failure->result.message;
}

// B waits for the agent lock with a short timeout while A holds it; untimed, so B's timeout
// may fire before or after the grant. With the phantom grant of Bug #17686 enabled...
Verdict phantom_run(bool conditional_unlock, std::string* message) {
  ServiceState::config() = {};
  ServiceState::config().pool.phantom_grant = true;
  ServiceState::config().options.conditional_unlock = conditional_unlock;
  LambdaSystem<ServiceState> system(
      2, [](ServiceState& s, Env& env, ActorId self) {
        try {
          s.locks.advisory_lock(LockNamespace::agent, 7, [&] { critical_section(s, env, self); }, self == 1 ? 1s : 15s);
        } catch (const AdvisoryLockError&) {
        }
      },
      no_leaked_locks, one_inside);
  const auto r = explore(system);
  if (r.first_failure) *message = r.first_failure->result.invariant + ": " + r.first_failure->result.message;
  return r.verdict;
}

TEST(AdvisoryLock, TheUnconditionalUnlockCleansUpThePhantomGrant) {
  std::string message;
  EXPECT_EQ(phantom_run(false, &message), Verdict::pass) << message;
}

TEST(AdvisoryLock, TheConditionalUnlockVariantLeaksThePhantomLock) {
  std::string message;
  EXPECT_EQ(phantom_run(true, &message), Verdict::violation);
  EXPECT_EQ(message, "no_leaked_locks: the AGENT lock of agent 7 is still held");
}

TEST(AdvisoryLock, ExceptionsPropagateAndTheLockIsReleased) {
  ServiceState::config() = {};
  std::set<std::string> seen;
  LambdaSystem<ServiceState> system(
      1, [](ServiceState& s, Env&, ActorId) {
        try {
          s.locks.advisory_lock(LockNamespace::agent, 7, [] { throw std::runtime_error("hook failed"); });
        } catch (const std::runtime_error& e) {
          s.log.push_back(e.what());
        }
      },
      [&seen](ServiceState& s) -> std::optional<Violation> {
        for (const auto& l : s.log) seen.insert(l);
        return no_leaked_locks(s);
      });
  EXPECT_EQ(explore(system).verdict, Verdict::pass);
  EXPECT_EQ(seen, (std::set<std::string>{"hook failed"}));
}

TEST(AdvisoryLock, TheMonitoringQueryNamesNamespaceEntityAndATotal) {
  ServiceState::config() = {};
  std::set<std::string> seen;
  LambdaSystem<ServiceState> system(1, [&seen](ServiceState& s, Env&, ActorId) {
    s.locks.advisory_lock(LockNamespace::agent, -7, [&] {
      auto conn = s.pool->checkout().value();
      (void)conn->advisory_lock(pg::AdvisoryKey::single(std::int64_t{5} << 32 | 9), pg::LockMode::shared);
      const auto report = monitor_advisory_locks(*conn).value();
      std::string text = fmt::format("total {}", report.total);
      for (const auto& l : report.locks) {
        text += fmt::format("; {} {} ns {} entity {} {} {}", l.pid, l.application_name, l.namespace_id, l.entity_id, l.mode,
                            l.granted ? l.state : "waiting");
      }
      seen.insert(text);
      (void)conn->advisory_unlock_all();
    });
  });
  const auto r = explore(system);
  EXPECT_EQ(r.verdict, Verdict::pass) << (r.first_failure ? r.first_failure->result.message : "");
  // The service's lock on its own connection (idle), the bigint key on the querying one.
  EXPECT_EQ(seen, (std::set<std::string>{"total 2; 1001 lockstep ns 1 entity -7 ExclusiveLock idle; "
                                         "1002 lockstep ns 5 entity 9 ShareLock active"}));
}

TEST(AdvisoryLock, LockKeyFromStringIsDeterministicAndDocumented) {
  // FNV-1a 32-bit, as a signed int4.
  EXPECT_EQ(lock_key_from_string(""), static_cast<std::int32_t>(2166136261u));
  EXPECT_EQ(lock_key_from_string("a"), static_cast<std::int32_t>(0xe40c292cu));
  EXPECT_EQ(lock_key_from_string("agent-42"), lock_key_from_string(std::string("agent-") + "42"));
  EXPECT_NE(lock_key_from_string("agent-42"), lock_key_from_string("agent-43"));
}

}  // namespace
}  // namespace lockstep
