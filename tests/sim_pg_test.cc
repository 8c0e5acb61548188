// The simulated PostgreSQL: one test per fact of docs/postgres.md covered so far
// (advisory locks, timeouts, the phantom grant, transactions, the pool, the pg_locks view,
// pg_terminate_backend). Orders that matter are forced with sleeps in timed mode, where
// each program has one schedule per instant. Untimed explorations check that dpor, through
// the server's domain, reaches every outcome dfs does (also on random programs).
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "lockstep/model/pg.h"
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/pg/executor/pg_sort.h"
#include "test_support.h"
#include "trace_forms.h"

namespace lockstep {
namespace {

using pg::AdvisoryKey;
using pg::LockMode;
using testing::LambdaSystem;
using namespace std::chrono_literals;

const AdvisoryKey kKey = AdvisoryKey::pair(7, 42);

struct Db {
  explicit Db(Env& env)
      : pool(env.new_pg_pool(pg::PoolConfig{.application_name = "seed", .pool_size = 5, .max_overflow = 10, .timeout = 30s})),
        phantom_pool(env.new_pg_pool(
            pg::PoolConfig{.application_name = "seed", .pool_size = 5, .max_overflow = 10, .timeout = 30s, .phantom_grant = true})) {}
  std::unique_ptr<pg::Pool> pool;
  std::unique_ptr<pg::Pool> phantom_pool;  // its sessions take Bug #17686's phantom grant
  std::vector<std::string> log;  // what the actors saw, for the checks
  std::vector<pg::PooledConnection> kept;  // connections actors did not give back
};

// What one execution's actors saw, in order: a log's entries joined by "; ".
std::string joined_log(const std::vector<std::string>& log) {
  std::string out;
  for (const auto& l : log) out += (out.empty() ? "" : "; ") + l;
  return out;
}

std::int64_t ms_now(Env& env) { return std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count(); }

// Runs one actor body per entry (timed mode by default), every execution of them, and
// returns the distinct logs the executions produced.
std::set<std::string> run_timed(std::vector<std::function<void(Db&, Env&)>> actors, bool timed = true) {
  std::set<std::string> logs;
  LambdaSystem<Db> system(
      static_cast<int>(actors.size()), [&](Db& db, Env& env, ActorId a) { actors[a](db, env); },
      [&](Db& db) -> std::optional<Violation> {
        logs.insert(joined_log(db.log));
        return std::nullopt;
      });
  sim::ExploreOptions options;
  options.limits.time = timed ? TimeMode::timed : TimeMode::untimed;
  options.stop_at_first = false;
  const auto result = testing::explore(system, "dfs", options);
  EXPECT_EQ(result.stats.failures, 0u) << (result.first_failure ? result.first_failure->result.message : "");
  return logs;
}

// idle_in_transaction_session_timeout ends a session idle in a transaction at that moment
// (checked on PostgreSQL 15: idle-in-transaction-timeout.spec): a waiter behind its lock goes on
// then, and its client learns it at its next statement, as libpq reports a FATAL that came
// while idle (the connection lost, no SQLSTATE). Back in time, nothing ends.
TEST(SimPg, AnIdleTimeoutEndsTheSessionThenAndFreesItsWaiters) {
  // (A string of two statements: b may wait before a goes idle, and wakes at its deadline.)
  for (const int idle_ms : {50, 200, 201}) {
    const auto logs = run_timed({[idle_ms](Db& db, Env& env) {
                                   auto c = db.pool->checkout().value();
                                   (void)c->exec("BEGIN");
                                   (void)c->exec("SET LOCAL idle_in_transaction_session_timeout = 100");
                                   (void)c->exec(idle_ms == 201 ? "SELECT pg_advisory_xact_lock(1); SELECT 1" : "SELECT pg_advisory_xact_lock(1)");
                                   env.sleep_for(std::chrono::milliseconds(idle_ms));
                                   const auto r = c->exec("COMMIT");
                                   db.log.push_back(fmt::format("a at {}: {}", ms_now(env),
                                                                r.ok() ? std::string("COMMIT") : r.error().sqlstate + " " + r.error().message));
                                   if (!r.ok()) db.log.push_back("a then: " + c->exec("SELECT 1").error().sqlstate);
                                   db.kept.push_back(std::move(c));
                                 },
                                 [](Db& db, Env& env) {
                                   auto c = db.pool->checkout().value();
                                   const auto r = c->exec("SELECT pg_advisory_xact_lock(1)");
                                   db.log.push_back(fmt::format("b at {}: {}", ms_now(env), r.ok() ? "locked" : r.error().sqlstate));
                                   db.kept.push_back(std::move(c));
                                 }});
    if (idle_ms == 50) {
      EXPECT_EQ(logs, (std::set<std::string>{"a at 50: COMMIT; b at 50: locked", "b at 0: locked; a at 50: COMMIT"}));
    } else if (idle_ms == 201) {
      EXPECT_EQ(logs, (std::set<std::string>{"b at 100: locked; a at 201: 08006 terminating connection due to idle-in-transaction "
                                             "timeout; server closed the connection unexpectedly; a then: 08006",
                                             "b at 0: locked; a at 201: 08006 terminating connection due to idle-in-transaction timeout; "
                                             "server closed the connection unexpectedly; a then: 08006"}));
    } else {
      EXPECT_EQ(logs, (std::set<std::string>{"b at 100: locked; a at 200: 08006 terminating connection due to idle-in-transaction "
                                             "timeout; server closed the connection unexpectedly; a then: 08006",
                                             "b at 0: locked; a at 200: 08006 terminating connection due to idle-in-transaction timeout; "
                                             "server closed the connection unexpectedly; a then: 08006"}));
    }
  }
}

// The typed operations do not go idle as SQL text does: after one, an idle moment longer
// than the session's idle timeout is refused at the next statement, not answered as if the
// server had kept the session (and its session lock).
TEST(SimPg, ATypedOperationsIdleMomentPastAnIdleTimeoutIsRefused) {
  const auto logs = run_timed({[](Db& db, Env& env) {
    auto c = db.pool->checkout().value();
    (void)c->exec("SET idle_session_timeout = 100");
    (void)c->advisory_lock(AdvisoryKey::pair(1, 0), LockMode::exclusive);
    env.sleep_for(std::chrono::milliseconds(50));
    const auto kept = c->advisory_unlock(AdvisoryKey::pair(1, 0), LockMode::exclusive);
    db.log.push_back(kept.ok() ? fmt::format("unlock {}", kept.value()) : kept.error().sqlstate);
    (void)c->advisory_lock(AdvisoryKey::pair(1, 0), LockMode::exclusive);
    env.sleep_for(std::chrono::milliseconds(150));
    const auto r = c->advisory_unlock(AdvisoryKey::pair(1, 0), LockMode::exclusive);
    db.log.push_back(r.ok() ? "answered" : r.error().sqlstate + " " + r.error().message.substr(0, 80));
    db.kept.push_back(std::move(c));
  }});
  EXPECT_EQ(logs, (std::set<std::string>{"unlock true; 0A000 a session idle outside a transaction after a typed operation longer than its idl"}));
}

// Found by lockstep conform against PostgreSQL 15: COMMIT or ROLLBACK outside a
// transaction is not an error but raises WARNING 25P01; BEGIN inside one, WARNING 25001.
TEST(SimPg, TransactionVerbsInTheWrongStateWarn) {
  const auto logs = run_timed({[](Db& db, Env&) {
    auto c = db.pool->checkout().value();
    (void)c->take_warnings();
    const bool ok = c->rollback().ok() && c->commit().ok();
    const auto warnings = c->take_warnings();
    (void)c->begin();
    (void)c->commit();
    const auto inside = c->take_warnings().size();
    (void)c->begin();
    (void)c->begin();  // BEGIN inside a transaction: WARNING 25001
    const auto again = c->take_warnings();
    db.log.push_back(fmt::format("{} {} {} {} inside: {}; {} {}", ok, warnings.size(), warnings.at(0).sqlstate, warnings.at(0).message,
                                 inside, again.at(0).sqlstate, again.at(0).message));
  }});
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(*logs.begin(), "true 2 25P01 there is no transaction in progress inside: 0; 25001 there is already a transaction in progress");
}

TEST(SimPg, SessionLocksAreReentrantAndNeedAsManyUnlocks) {
  const auto logs = run_timed({[](Db& db, Env&) {
    auto c = db.pool->checkout().value();
    (void)c->advisory_lock(kKey, LockMode::exclusive);
    const bool again = c->try_advisory_lock(kKey, LockMode::exclusive).value();
    const bool u1 = c->advisory_unlock(kKey, LockMode::exclusive).value();
    const bool u2 = c->advisory_unlock(kKey, LockMode::exclusive).value();
    const bool u3 = c->advisory_unlock(kKey, LockMode::exclusive).value();
    const auto warnings = c->take_warnings();
    db.log.push_back(fmt::format("{} {} {} {} {} {}", again, u1, u2, u3, warnings.size(),
                                 warnings.empty() ? "" : warnings[0].sqlstate + " " + warnings[0].message));
  }});
  ASSERT_EQ(logs.size(), 1u) << "every execution must see the same";
  EXPECT_EQ(*logs.begin(), "true true true false 1 01000 you don't own a lock of type ExclusiveLock");
}

TEST(SimPg, BothModesOnOneKeyAndBothKeyForms) {
  const auto logs = run_timed({[](Db& db, Env&) {
    auto c = db.pool->checkout().value();
    (void)c->advisory_lock(kKey, LockMode::exclusive);
    const bool shared_too = c->try_advisory_lock(kKey, LockMode::shared).value();
    const bool other_form = c->try_advisory_lock(AdvisoryKey::single((std::int64_t{7} << 32) | 42), LockMode::exclusive).value();
    db.log.push_back(fmt::format("{} {}", shared_too, other_form));
  }});
  EXPECT_EQ(*logs.begin(), "true true");  // (7,42) as int4 pair and as bigint are different locks
  EXPECT_EQ(AdvisoryKey::single(-1).classid(), 0xFFFFFFFFu);
  EXPECT_EQ(AdvisoryKey::single(-1).objid(), 0xFFFFFFFFu);
  EXPECT_EQ(AdvisoryKey::single(-1).objsubid(), 1);
  EXPECT_EQ(AdvisoryKey::pair(-2, 5).classid(), 0xFFFFFFFEu);
  EXPECT_EQ(AdvisoryKey::pair(-2, 5).objsubid(), 2);
}

TEST(SimPg, AQueuedWaiterBlocksLaterConflictingRequests) {
  // A holds S; B waits for X; C asks for S: try fails, and a blocking request waits too.
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::shared);
        env.sleep_for(30ms);
        (void)c->advisory_unlock(kKey, LockMode::shared);
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        db.log.push_back(fmt::format("B got X at {}", std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count()));
        (void)c->advisory_unlock(kKey, LockMode::exclusive);
      },
      [](Db& db, Env& env) {
        env.sleep_for(2ms);
        auto c = db.pool->checkout().value();
        db.log.push_back(fmt::format("C try S {}", c->try_advisory_lock(kKey, LockMode::shared).value()));
        (void)c->advisory_lock(kKey, LockMode::shared);
        db.log.push_back(fmt::format("C got S at {}", std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count()));
      },
  });
  ASSERT_EQ(logs.size(), 1u) << "every execution must see the same";
  EXPECT_EQ(*logs.begin(), "C try S false; B got X at 30; C got S at 30");
}

// Two sessions share a key and both ask for it exclusively: the second request finds the
// first waiting for what it holds and fails with 40P01 at once (ProcSleep's early
// deadlock), not deadlock_timeout later. Found by lockstep conform.
TEST(SimPg, TwoSharedHoldersUpgradingDeadlockAtOnce) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::shared);
        env.sleep_for(1ms);
        const pg::Status st = c->advisory_lock(kKey, LockMode::exclusive);
        db.log.push_back(fmt::format("A upgrade {} at {}", st.ok() ? "ok" : st.error().sqlstate,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count()));
        (void)c->advisory_unlock_all();
      },
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::shared);
        env.sleep_for(2ms);
        const pg::Status st = c->advisory_lock(kKey, LockMode::exclusive);
        db.log.push_back(fmt::format("B upgrade {} at {}", st.ok() ? "ok" : st.error().sqlstate,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count()));
        (void)c->advisory_unlock_all();
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"B upgrade 40P01 at 2; A upgrade ok at 2"}));
}

TEST(SimPg, AHolderAsksAgainAndIsGrantedAtOnceDespiteTheQueue) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::shared);
        env.sleep_for(2ms);  // B is queued for X by now
        db.log.push_back(fmt::format("A again S {}", c->try_advisory_lock(kKey, LockMode::shared).value()));
        // A try of another mode does not pass the queued waiter (LockAcquire's waitMask);
        // a blocking request does and is granted at once (ProcSleep). Found by conform.
        db.log.push_back(fmt::format("A try X {}", c->try_advisory_lock(kKey, LockMode::exclusive).value()));
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        db.log.push_back(fmt::format("A upgraded to X at {}", std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count()));
        (void)c->advisory_unlock_all();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        db.log.push_back("B got X");
      },
  });
  EXPECT_EQ(*logs.begin(), "A again S true; A try X false; A upgraded to X at 2; B got X");
}

// A holder that must wait goes ahead of the first waiter that waits for what it holds
// (ProcSleep): A holds S and asks for X while B also holds S and C waits for X; A queues
// in front of C, and B's release grants A, not a deadlock. Found by lockstep conform.
TEST(SimPg, AHolderThatMustWaitQueuesAheadOfWaitersForItsLock) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::shared);
        env.sleep_for(2ms);  // C is queued for X by now
        const auto st = c->advisory_lock(kKey, LockMode::exclusive);
        db.log.push_back(fmt::format("A upgraded: {} at {}", st.ok() ? "ok" : st.error().sqlstate, ms_now(env)));
        env.sleep_for(1ms);
        (void)c->advisory_unlock_all();
      },
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::shared);
        env.sleep_for(5ms);
        (void)c->advisory_unlock_all();
        db.log.push_back("B let go at 5");
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        db.log.push_back(fmt::format("C got X at {}", ms_now(env)));
        (void)c->advisory_unlock_all();
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"B let go at 5; A upgraded: ok at 5; C got X at 6"}));
}

TEST(SimPg, ReleaseGrantsInQueueOrderSkippingConflicts) {
  // A holds X; B waits S, C waits X, D waits S. A's release grants B only: C conflicts
  // with B, and D is behind C, which still waits.
  struct Order {
    static std::function<void(Db&, Env&)> waiter(int at_ms, LockMode mode, const char* name) {
      return [=](Db& db, Env& env) {
        env.sleep_for(std::chrono::milliseconds(at_ms));
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, mode);
        db.log.push_back(fmt::format("{}@{}", name, std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count()));
        env.sleep_for(10ms);
        (void)c->advisory_unlock(kKey, mode);
      };
    }
  };
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        env.sleep_for(50ms);
        (void)c->advisory_unlock(kKey, LockMode::exclusive);
      },
      Order::waiter(1, LockMode::shared, "B"),
      Order::waiter(2, LockMode::exclusive, "C"),
      Order::waiter(3, LockMode::shared, "D"),
  });
  ASSERT_EQ(logs.size(), 1u) << "every execution must see the same";
  EXPECT_EQ(*logs.begin(), "B@50; C@60; D@70");
}

TEST(SimPg, TheGrantHappensInTheReleasingBackend) {
  // Untimed: between A's unlock and B's return, B already holds the lock: a try by A fails.
  std::set<std::string> seen;
  LambdaSystem<Db> system(2, [](Db& db, Env& env, ActorId a) {
    auto c = db.pool->checkout().value();
    if (a == 0) {
      (void)c->advisory_lock(kKey, LockMode::exclusive);
      env.sleep_for(1ms);
      (void)c->advisory_unlock(kKey, LockMode::exclusive);
      db.log.push_back(fmt::format("A retry {}", c->try_advisory_lock(kKey, LockMode::exclusive).value()));
    } else {
      (void)c->advisory_lock(kKey, LockMode::exclusive);
      db.log.push_back("B got it");
    }
  }, [&seen](Db& db) -> std::optional<Violation> {
    std::string joined;
    for (const auto& l : db.log) joined += l + "; ";
    seen.insert(joined);
    return std::nullopt;
  });
  sim::ExploreOptions options;
  options.stop_at_first = false;
  testing::explore(system, "dpor", options);
  EXPECT_TRUE(seen.count("A retry false; B got it; ")) << "the releaser should see the lock granted to the waiter";
}

TEST(SimPg, LockTimeoutAndStatementTimeout) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        env.sleep_for(100ms);
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->set_lock_timeout(20ms);
        const auto st = c->advisory_lock(kKey, LockMode::exclusive);
        db.log.push_back(fmt::format("lock_timeout: {} {} at {} held {}", st.error().sqlstate, st.error().message,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count(),
                                     c->try_advisory_lock(AdvisoryKey::pair(0, 0), LockMode::exclusive).value()));
        (void)c->set_lock_timeout(0ms);
        (void)c->set_statement_timeout(10ms);
        const auto st2 = c->advisory_lock(kKey, LockMode::exclusive);
        db.log.push_back(fmt::format("statement_timeout: {} {}", st2.error().sqlstate, st2.error().message));
      },
  });
  ASSERT_EQ(logs.size(), 1u) << "every execution must see the same";
  EXPECT_EQ(*logs.begin(),
            "lock_timeout: 55P03 canceling statement due to lock timeout at 21 held true; "
            "statement_timeout: 57014 canceling statement due to statement timeout");
}

// B waits with a lock_timeout while A holds the lock and releases it; untimed, so the
// timeout may fire before or after the grant. Returns what B saw, over all executions.
std::set<std::string> phantom_outcomes(bool fault) {
  std::set<std::string> seen;
  struct State {
    explicit State(Env& env) : phantom(false), pool(nullptr) { (void)env; }
    bool phantom;
    std::unique_ptr<pg::Pool> pool;
    std::string b;
  };
  LambdaSystem<State> system(2, [fault](State& s, Env& env, ActorId a) {
    if (!s.pool) {
      s.pool = env.new_pg_pool(pg::PoolConfig{.pool_size = 5, .max_overflow = 10, .timeout = 30s, .phantom_grant = fault});
    }
    auto c = s.pool->checkout().value();
    if (a == 0) {
      (void)c->advisory_lock(kKey, LockMode::exclusive);
      (void)c->advisory_unlock(kKey, LockMode::exclusive);
    } else {
      (void)c->set_lock_timeout(20ms);
      const auto st = c->advisory_lock(kKey, LockMode::exclusive);
      // Holding it now? A try would be granted at once either way; ask the lock table by
      // unlocking: true means the session held it.
      const bool held = c->advisory_unlock(kKey, LockMode::exclusive).value();
      s.b = fmt::format("{} held={}", st.ok() ? "ok" : st.error().sqlstate, held);
    }
  }, [&seen](State& s) -> std::optional<Violation> {
    seen.insert(s.b);
    return std::nullopt;
  });
  sim::ExploreOptions options;
  options.stop_at_first = false;
  testing::explore(system, "dfs", options);
  return seen;
}

TEST(SimPg, ThePhantomGrantOnlyWithItsFault) {
  EXPECT_EQ(phantom_outcomes(false), (std::set<std::string>{"ok held=true", "55P03 held=false"}));
  EXPECT_EQ(phantom_outcomes(true), (std::set<std::string>{"ok held=true", "55P03 held=false", "55P03 held=true"}));
}

TEST(SimPg, SessionLocksSurviveTransactionsAndTransactionLocksDoNot) {
  const auto logs = run_timed({[](Db& db, Env&) {
    auto c = db.pool->checkout().value();
    const AdvisoryKey other = AdvisoryKey::pair(1, 1);
    (void)c->begin();
    (void)c->advisory_lock(kKey, LockMode::exclusive);
    (void)c->advisory_xact_lock(other, LockMode::exclusive);
    (void)c->rollback();
    auto probe = db.pool->checkout().value();
    db.log.push_back(fmt::format("after rollback: session lock free {}, xact lock free {}",
                                 probe->try_advisory_lock(kKey, LockMode::exclusive).value(),
                                 probe->try_advisory_lock(other, LockMode::exclusive).value()));
  }});
  EXPECT_EQ(*logs.begin(), "after rollback: session lock free false, xact lock free true");
}

TEST(SimPg, AnUnlockInsideATransactionThatRollsBackStillTookEffect) {
  const auto logs = run_timed({[](Db& db, Env&) {
    auto c = db.pool->checkout().value();
    (void)c->advisory_lock(kKey, LockMode::exclusive);
    (void)c->begin();
    const bool unlocked = c->advisory_unlock(kKey, LockMode::exclusive).value();
    (void)c->rollback();
    auto probe = db.pool->checkout().value();
    db.log.push_back(fmt::format("unlocked {}, free after rollback {}", unlocked,
                                 probe->try_advisory_lock(kKey, LockMode::exclusive).value()));
  }});
  EXPECT_EQ(*logs.begin(), "unlocked true, free after rollback true");
}

TEST(SimPg, SessionLocksSurviveATransactionAbortedByAnError) {
  const auto logs = run_timed({[](Db& db, Env&) {
    auto c = db.pool->checkout().value();
    (void)c->insert_row("t", 1, {});
    (void)c->begin();
    (void)c->advisory_lock(kKey, LockMode::exclusive);
    const pg::Status dup = c->insert_row("t", 1, {});  // 23505 aborts the transaction
    (void)c->rollback();
    auto probe = db.pool->checkout().value();
    db.log.push_back(fmt::format("{}, session lock free {}", dup.ok() ? "ok" : dup.error().sqlstate,
                                 probe->try_advisory_lock(kKey, LockMode::exclusive).value()));
  }});
  EXPECT_EQ(*logs.begin(), "23505, session lock free false");
}

TEST(SimPg, ThePoolKeepsSessionLocksAcrossBorrowers) {
  // A borrows, locks, returns without unlocking; the next borrower gets the same backend,
  // which still holds the lock: the leak a phantom grant causes.
  const auto logs = run_timed({[](Db& db, Env&) {
    int pid = 0;
    {
      auto c = db.pool->checkout().value();
      pid = c->backend_pid();
      (void)c->advisory_lock(kKey, LockMode::exclusive);
    }
    auto again = db.pool->checkout().value();
    db.log.push_back(fmt::format("same backend {} still holds {}", again->backend_pid() == pid,
                                 again->advisory_unlock(kKey, LockMode::exclusive).value()));
  }});
  EXPECT_EQ(*logs.begin(), "same backend true still holds true");
}

std::string show(const std::optional<pg::Row>& row) {
  if (!row) return "none";
  std::string out;
  for (const auto& [k, v] : *row) out += fmt::format("{}{}={}", out.empty() ? "" : ",", k, v);
  return out;
}

TEST(SimPgRows, ForUpdateNowaitFailsAtOnceOnALockedRow) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->insert_row("turns", 1, {{"summary", ""}});
        (void)c->begin();
        (void)c->select_for_update("turns", 1, false);
        env.sleep_for(10ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->begin();
        const auto r = c->select_for_update("turns", 1, true);
        db.log.push_back(fmt::format("{} {} at {}", r.error().sqlstate, r.error().message,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count()));
        (void)c->rollback();
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"55P03 could not obtain lock on row in relation \"turns\" at 1"}));
}

TEST(SimPgRows, ForUpdateWaitsWithLockTimeout) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->insert_row("turns", 1, {});
        (void)c->begin();
        (void)c->select_for_update("turns", 1, false);
        env.sleep_for(50ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->set_lock_timeout(10ms);
        (void)c->begin();
        const auto r = c->select_for_update("turns", 1, false);
        db.log.push_back(fmt::format("{} at {}", r.ok() ? "locked" : r.error().sqlstate,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count()));
        (void)c->rollback();
        (void)c->set_lock_timeout(0ms);
        (void)c->begin();
        const auto r2 = c->select_for_update("turns", 1, false);
        db.log.push_back(fmt::format("{} at {}", r2.ok() ? "locked" : r2.error().sqlstate,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count()));
        (void)c->commit();
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"55P03 at 11; locked at 50"}));
}

TEST(SimPgRows, ReadCommittedSeesOnlyCommittedRowsOfOthers) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->insert_row("agents", 7, {{"state", "idle"}});
        (void)c->begin();
        (void)c->update_row("agents", 7, {{"state", "busy"}});
        db.log.push_back("own: " + show(c->read_row("agents", 7).value()));
        env.sleep_for(10ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(5ms);
        auto c = db.pool->checkout().value();
        db.log.push_back("other before commit: " + show(c->read_row("agents", 7).value()));
        env.sleep_for(10ms);
        db.log.push_back("other after commit: " + show(c->read_row("agents", 7).value()));
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{
                      "own: id=7,state=busy; other before commit: id=7,state=idle; other after commit: id=7,state=busy"}));
}

TEST(SimPgRows, AnUpdateWaitsThenWorksOnTheNewestCommittedVersion) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->insert_row("agents", 7, {{"state", "idle"}, {"turns", "0"}});
        (void)c->begin();
        (void)c->update_row("agents", 7, {{"state", "busy"}});
        env.sleep_for(10ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        const int changed = c->update_row("agents", 7, {{"turns", "1"}}).value();  // waits for A
        db.log.push_back(fmt::format("changed {} at {}: {}", changed,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count(),
                                     show(c->read_row("agents", 7).value())));
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"changed 1 at 10: id=7,state=busy,turns=1"}));
}

TEST(SimPgRows, DuplicateInsertsFailAndRollbackDropsAnInsert) {
  const auto logs = run_timed({[](Db& db, Env&) {
    auto c = db.pool->checkout().value();
    (void)c->insert_row("agents", 1, {});
    const auto dup = c->insert_row("agents", 1, {});
    (void)c->begin();
    (void)c->insert_row("agents", 2, {});
    (void)c->rollback();
    db.log.push_back(fmt::format("{} {}; after rollback: {}", dup.error().sqlstate, dup.error().message,
                                 show(c->read_row("agents", 2).value())));
  }});
  EXPECT_EQ(logs, (std::set<std::string>{
                      "23505 duplicate key value violates unique constraint \"agents_pkey\"; after rollback: none"}));
}

// Rows a model inserts while it is built, outside any actor, are there from the start:
// committed, with their id, a duplicate of one fails as it would in an actor, and the
// actors' statements find them (the setup's inserts take no step: sim/pg, seed).
TEST(SimPgRows, RowsInsertedOutsideAnyActorAreCommittedAtOnce) {
  struct Seeded : Db {
    explicit Seeded(Env& env) : Db(env) {
      auto c = pool->checkout().value();
      (void)c->insert_row("agents", 1, {{"status", "idle"}});
      const auto dup = c->insert_row("agents", 1, {});
      log.push_back(fmt::format("setup: {}; {}", dup.ok() ? "no error" : dup.error().sqlstate, show(c->read_row("agents", 1).value())));
    }
  };
  std::set<std::string> logs;
  LambdaSystem<Seeded> system(
      2,
      [](Seeded& db, Env&, ActorId a) {
        auto c = db.pool->checkout().value();
        if (a == 0) {
          db.log.push_back("read: " + show(c->read_row("agents", 1).value()));
        } else {
          const auto dup = c->insert_row("agents", 1, {{"status", "busy"}});
          db.log.push_back("insert: " + (dup.ok() ? std::string("no error") : dup.error().sqlstate));
        }
      },
      [&](Seeded& db) -> std::optional<Violation> {
        logs.insert(joined_log(db.log));
        return std::nullopt;
      });
  sim::ExploreOptions options;
  options.stop_at_first = false;
  EXPECT_EQ(testing::explore(system, "dfs", options).stats.failures, 0u);
  EXPECT_EQ(logs, (std::set<std::string>{
                      "setup: 23505; id=1,status=idle; read: id=1,status=idle; insert: 23505",
                      "setup: 23505; id=1,status=idle; insert: 23505; read: id=1,status=idle",
                  }));
}

// ---- Gaps found by reading sim/pg against the server ----------------------------------

// SELECT ... FOR UPDATE and UPDATE of an id with no row lock nothing: another session's
// INSERT of that id goes through at once, and its UPDATE does not wait.
TEST(SimPgRows, ForUpdateOfAMissingRowLocksNothing) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->begin();
        db.log.push_back("for update: " + show(c->select_for_update("jobs", 5, false).value()));
        db.log.push_back(fmt::format("update changed {}", c->update_row("jobs", 6, {{"state", "x"}}).value()));
        env.sleep_for(10ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        const auto inserted = c->insert_row("jobs", 5, {});
        db.log.push_back(fmt::format("insert {} at {}", inserted.ok() ? "ok" : inserted.error().sqlstate, ms_now(env)));
        const auto updated = c->update_row("jobs", 6, {{"state", "y"}});
        db.log.push_back(fmt::format("update changed {} at {}", updated.value(), ms_now(env)));
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"for update: none; update changed 0; insert ok at 1; update changed 0 at 1"}));
}

// Row locks are per row: ids that agree in their low 32 bits are different rows.
TEST(SimPgRows, RowLocksKeepTheWholeSixtyFourBitId) {
  const std::int64_t far = (std::int64_t{1} << 32) + 1;
  const auto logs = run_timed({
      [far](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->insert_row("jobs", 1, {});
        (void)c->insert_row("jobs", far, {});
        (void)c->begin();
        (void)c->select_for_update("jobs", 1, false);
        env.sleep_for(10ms);
        (void)c->commit();
      },
      [far](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->begin();
        const auto r = c->select_for_update("jobs", far, true);
        db.log.push_back(r.ok() ? "locked " + show(r.value()) : r.error().sqlstate);
        (void)c->commit();
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"locked id=4294967297"}));
}

// A second INSERT of an id another transaction inserted and has not committed waits for
// that transaction: 23505 once it commits, success once it rolls back.
TEST(SimPgRows, AnInsertOfAnIdAnotherTransactionInsertedWaitsForIt) {
  for (const bool commit : {true, false}) {
    SCOPED_TRACE(commit ? "commit" : "rollback");
    const auto logs = run_timed({
        [commit](Db& db, Env& env) {
          auto c = db.pool->checkout().value();
          (void)c->begin();
          (void)c->insert_row("jobs", 5, {{"by", "a"}});
          env.sleep_for(10ms);
          (void)(commit ? c->commit() : c->rollback());
        },
        [](Db& db, Env& env) {
          env.sleep_for(1ms);
          auto c = db.pool->checkout().value();
          const auto r = c->insert_row("jobs", 5, {{"by", "b"}});
          db.log.push_back(fmt::format("{} at {}: {}", r.ok() ? "inserted" : r.error().sqlstate, ms_now(env),
                                       show(c->read_row("jobs", 5).value())));
        },
    });
    EXPECT_EQ(logs, (std::set<std::string>{commit ? "23505 at 10: by=a,id=5" : "inserted at 10: by=b,id=5"}));
  }
}

// An INSERT of the id of a committed row another transaction has updated (not committed)
// waits for that transaction, then fails with 23505 whichever way it ended; a row only
// locked FOR UPDATE fails it at once.
TEST(SimPgRows, AnInsertOfARowBeingUpdatedWaitsThenFails) {
  for (const bool update : {true, false}) {
    SCOPED_TRACE(update ? "updated" : "locked for update");
    const auto logs = run_timed({
        [update](Db& db, Env& env) {
          auto c = db.pool->checkout().value();
          (void)c->insert_row("jobs", 5, {{"by", "a"}});
          (void)c->begin();
          if (update) {
            (void)c->update_row("jobs", 5, {{"by", "a2"}});
          } else {
            (void)c->select_for_update("jobs", 5, false);
          }
          env.sleep_for(10ms);
          (void)c->rollback();
        },
        [](Db& db, Env& env) {
          env.sleep_for(1ms);
          auto c = db.pool->checkout().value();
          const auto r = c->insert_row("jobs", 5, {{"by", "b"}});
          db.log.push_back(fmt::format("{} at {}", r.ok() ? "inserted" : r.error().sqlstate, ms_now(env)));
        },
    });
    EXPECT_EQ(logs, (std::set<std::string>{update ? "23505 at 10" : "23505 at 1"}));
  }
}

// An error inside a transaction aborts it at once (AbortTransaction): its transaction-scope
// advisory locks and row locks go before the ROLLBACK; session locks stay.
TEST(SimPg, AnErrorInATransactionReleasesItsTransactionLocksAtOnce) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->insert_row("jobs", 1, {});
        (void)c->advisory_lock(AdvisoryKey::single(9), LockMode::exclusive);
        (void)c->begin();
        (void)c->advisory_xact_lock(kKey, LockMode::exclusive);
        (void)c->select_for_update("jobs", 1, false);
        const auto dup = c->insert_row("jobs", 1, {});  // 23505: the transaction is aborted
        db.log.push_back("a: " + dup.error().sqlstate);
        env.sleep_for(10ms);
        (void)c->rollback();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        const bool xact = c->try_advisory_lock(kKey, LockMode::exclusive).value();
        const bool session = c->try_advisory_lock(AdvisoryKey::single(9), LockMode::exclusive).value();
        (void)c->begin();
        const auto row = c->select_for_update("jobs", 1, true);
        db.log.push_back(fmt::format("b at {}: xact lock free {}, session lock free {}, row {}", ms_now(env), xact, session,
                                     row.ok() ? "locked" : row.error().sqlstate));
        (void)c->rollback();
        (void)c->advisory_unlock_all();
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"a: 23505; b at 1: xact lock free true, session lock free false, row locked"}));
}

// The lock_timeout bounds that wait like any lock wait.
TEST(SimPgRows, TheWaitOfADuplicateInsertHasTheLockTimeout) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->begin();
        (void)c->insert_row("jobs", 5, {});
        env.sleep_for(50ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->set_lock_timeout(5ms);
        const auto r = c->insert_row("jobs", 5, {});
        db.log.push_back(fmt::format("{} at {}", r.ok() ? "inserted" : r.error().sqlstate, ms_now(env)));
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"55P03 at 6"}));
}

// The backend_terminated fault can hit every statement: SET lock_timeout included.
TEST(SimPgTerminate, TheFaultCanHitASet) {
  struct Faulty {
    explicit Faulty(Env& env)
        : pool(env.new_pg_pool({.application_name = "f", .pool_size = 1, .max_overflow = 0, .backend_terminated = true})) {}
    std::unique_ptr<pg::Pool> pool;
    std::set<std::string> seen;
  };
  std::set<std::string> outcomes;
  LambdaSystem<Faulty> system(
      1,
      [](Faulty& f, Env&, ActorId) {
        auto c = f.pool->checkout().value();
        const auto st = c->set_lock_timeout(5ms);
        f.seen.insert(st.ok() ? "set ok" : "set " + st.error().sqlstate);
      },
      [&](Faulty& f) -> std::optional<Violation> {
        for (const auto& s : f.seen) outcomes.insert(s);
        return std::nullopt;
      });
  sim::ExploreOptions options;
  options.stop_at_first = false;
  (void)testing::explore(system, "dfs", options);
  EXPECT_EQ(outcomes, (std::set<std::string>{"set ok", "set 57P01"}));
}

// ---- What lock services write --------------------------------------------------------

// The queue-claim pattern: FOR UPDATE SKIP LOCKED passes over a row another transaction
// holds, and never waits.
TEST(SimPgRows, SkipLockedPassesOverALockedRow) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->insert_row("jobs", 1, {{"state", "new"}});
        (void)c->insert_row("jobs", 2, {{"state", "new"}});
        (void)c->begin();
        (void)c->select_for_update("jobs", 1, false);
        env.sleep_for(10ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->begin();
        const auto first = c->select_for_update_skip_locked("jobs", 1).value();
        const auto second = c->select_for_update_skip_locked("jobs", 2).value();
        const auto absent = c->select_for_update_skip_locked("jobs", 3).value();
        db.log.push_back(fmt::format("at {}: 1 {}, 2 {}, 3 {}", ms_now(env), show(first), show(second), show(absent)));
        (void)c->commit();
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"at 1: 1 none, 2 id=2,state=new, 3 none"}));
}

// FOR SHARE: sharers go together; an UPDATE waits for all of them.
TEST(SimPgRows, ForShareLocksAreSharedAndBlockAnUpdate) {
  auto sharer = [](int at_ms, int until_ms) {
    return [at_ms, until_ms](Db& db, Env& env) {
      env.sleep_for(std::chrono::milliseconds(at_ms));
      auto c = db.pool->checkout().value();
      (void)c->begin();
      const auto row = c->select_for_share("jobs", 1).value();
      db.log.push_back(fmt::format("share at {}: {}", ms_now(env), show(row)));
      env.sleep_for(std::chrono::milliseconds(until_ms - at_ms));
      (void)c->commit();
    };
  };
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->insert_row("jobs", 1, {{"state", "new"}});
        env.sleep_for(3ms);
        const int changed = c->update_row("jobs", 1, {{"state", "taken"}}).value();
        db.log.push_back(fmt::format("update at {}: {}", ms_now(env), changed));
      },
      sharer(1, 10),
      sharer(2, 20),
  });
  EXPECT_EQ(logs, (std::set<std::string>{"share at 1: id=1,state=new; share at 2: id=1,state=new; update at 20: 1"}));
}

// Compare-and-set on a row (the lease takeover): it changes the row only while the column
// holds the expected value; after a wait it checks the newest version, and a row that no
// longer matches stays locked (EvalPlanQual's lock) but unchanged.
TEST(SimPgRows, AConditionalUpdateIsACompareAndSet) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->insert_row("leases", 1, {{"owner", "a"}});
        (void)c->begin();
        (void)c->update_row_if("leases", 1, "owner", "a", {{"owner", "x"}});  // renews to x, not committed yet
        env.sleep_for(10ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->begin();
        const int stale = c->update_row_if("leases", 1, "owner", "a", {{"owner", "b"}}).value();  // waits for x
        const int missing = c->update_row_if("leases", 1, "holder", "a", {{"owner", "b"}}).value();
        db.log.push_back(fmt::format("b at {}: takeover from a {}, on a column it lacks {}", ms_now(env), stale, missing));
        env.sleep_for(5ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(12ms);
        auto c = db.pool->checkout().value();
        (void)c->begin();
        const auto locked = c->select_for_update("leases", 1, true);
        (void)c->rollback();
        const int taken = c->update_row_if("leases", 1, "owner", "x", {{"owner", "c"}}).value();  // waits for b's end
        db.log.push_back(fmt::format("c at 12: {}; takeover from x at {}: {}, {}", locked.ok() ? "locked" : locked.error().sqlstate,
                                     ms_now(env), taken, show(c->read_row("leases", 1).value())));
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"b at 10: takeover from a 0, on a column it lacks 0; "
                                         "c at 12: 55P03; takeover from x at 15: 1, id=1,owner=c"}));
}

// INSERT ... ON CONFLICT DO NOTHING: false for an existing id, no error (a transaction goes
// on); it waits for another transaction's insert of the id like a plain insert.
TEST(SimPgRows, InsertIfAbsentWaitsAndNeverFails) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->begin();
        (void)c->insert_row("jobs", 5, {{"by", "a"}});
        env.sleep_for(10ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->begin();
        const bool five = c->insert_row_if_absent("jobs", 5, {{"by", "b"}}).value();
        const bool six = c->insert_row_if_absent("jobs", 6, {{"by", "b"}}).value();
        const auto committed = c->commit();
        db.log.push_back(fmt::format("at {}: 5 {}, 6 {}, commit {}", ms_now(env), five, six, committed.ok() ? "ok" : "failed"));
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"at 10: 5 false, 6 true, commit ok"}));
}

// pg_try_advisory_xact_lock: held to the end of the transaction; outside one, let go at once.
TEST(SimPg, TryXactLockIsHeldUntilTheTransactionEnds) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        const bool alone = c->try_advisory_xact_lock(kKey, LockMode::exclusive).value();  // its own transaction
        (void)c->begin();
        const bool in_tx = c->try_advisory_xact_lock(kKey, LockMode::exclusive).value();
        db.log.push_back(fmt::format("a: {} {}", alone, in_tx));
        env.sleep_for(10ms);
        (void)c->commit();
      },
      [](Db& db, Env& env) {
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        const bool during = c->try_advisory_xact_lock(kKey, LockMode::exclusive).value();
        env.sleep_for(10ms);
        const bool after = c->try_advisory_xact_lock(kKey, LockMode::exclusive).value();
        db.log.push_back(fmt::format("b: {} {}", during, after));
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"a: true true; b: false true"}));
}

TEST(SimPg, UsingTheValueOfAFailedResultIsAModelError) {
  struct One {
    explicit One(Env& env) : pool(env.new_pg_pool(pg::PoolConfig{.pool_size = 1, .max_overflow = 0, .timeout = 1s})) {}
    std::unique_ptr<pg::Pool> pool;
  };
  LambdaSystem<One> system(1, [](One& s, Env&, ActorId) {
    auto a = s.pool->checkout().value();
    auto b = s.pool->checkout().value();  // times out: value() of an error
  });
  sim::ExploreOptions options;
  options.limits.time = TimeMode::timed;
  const auto r = testing::explore(system, "dfs", options);
  ASSERT_EQ(r.verdict, Verdict::model_error);
  EXPECT_NE(r.first_failure->result.message.find("value() of a failed result: LS001"), std::string::npos)
      << r.first_failure->result.message;
}

TEST(SimPg, APoolTimesOutWhenExhausted) {
  struct Small {
    explicit Small(Env& env) : pool(env.new_pg_pool(pg::PoolConfig{.pool_size = 1, .max_overflow = 1, .timeout = 5s})) {}
    std::unique_ptr<pg::Pool> pool;
    std::string error;
  };
  LambdaSystem<Small> system(1, [](Small& s, Env&, ActorId) {
    auto a = s.pool->checkout().value();
    auto b = s.pool->checkout().value();  // the overflow connection
    auto c = s.pool->checkout();          // none left: waits 5 s, then fails
    s.error = c.ok() ? "got one" : c.error().sqlstate + " " + c.error().message;
  }, [](Small& s) -> std::optional<Violation> {
    if (s.error != "LS001 QueuePool limit of size 1 overflow 1 reached, connection timed out, timeout 5.00") {
      return Violation{"pool", s.error};
    }
    return std::nullopt;
  });
  sim::ExploreOptions options;
  options.limits.time = TimeMode::timed;
  EXPECT_EQ(testing::explore(system, "dfs", options).verdict, Verdict::pass);
}

TEST(SimPg, ADeadlockHasOneVictimThatKeepsItsSessionLocks) {
  const AdvisoryKey k1 = AdvisoryKey::pair(1, 1), k2 = AdvisoryKey::pair(1, 2);
  auto actor = [](AdvisoryKey first, AdvisoryKey second, const char* name) {
    return [=](Db& db, Env& env) {
      auto c = db.pool->checkout().value();
      (void)c->advisory_lock(first, LockMode::exclusive);
      env.sleep_for(1ms);
      const auto st = c->advisory_lock(second, LockMode::exclusive);
      if (!st.ok()) {
        // The victim still holds its first lock: the other stays blocked until it lets go.
        const bool still_held = c->advisory_unlock(first, LockMode::exclusive).value();
        db.log.push_back(fmt::format("{} {} at {} ms, kept its lock: {}", name, st.error().sqlstate,
                                     std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count(), still_held));
      } else {
        db.log.push_back(fmt::format("{} got both", name));
      }
    };
  };
  const auto logs = run_timed({actor(k1, k2, "A"), actor(k2, k1, "B")});
  // Both check at 1001 ms; whoever checks first is the victim.
  EXPECT_EQ(logs, (std::set<std::string>{"A 40P01 at 1001 ms, kept its lock: true; B got both",
                                         "B 40P01 at 1001 ms, kept its lock: true; A got both"}));
}

TEST(SimPg, ADeadlockMayMixRowAndAdvisoryLocks) {
  // A holds the advisory lock and waits for B's row; B holds the row and waits for the
  // advisory lock: one cycle across both kinds of lock, found by the first to check.
  auto a = [](Db& db, Env& env) {
    auto c = db.pool->checkout().value();
    (void)c->advisory_lock(kKey, LockMode::exclusive);
    env.sleep_for(1ms);
    (void)c->begin();
    const auto st = c->select_for_update("t", 1, false);
    db.log.push_back(fmt::format("A {}", st.ok() ? "got the row" : st.error().sqlstate));
    (void)c->rollback();
    (void)c->advisory_unlock(kKey, LockMode::exclusive);
  };
  auto b = [](Db& db, Env& env) {
    auto c = db.pool->checkout().value();
    (void)c->insert_row("t", 1, {});
    (void)c->begin();
    (void)c->select_for_update("t", 1, false);
    env.sleep_for(1ms);
    const auto st = c->advisory_lock(kKey, LockMode::exclusive);
    db.log.push_back(fmt::format("B {}", st.ok() ? "got the lock" : st.error().sqlstate));
    (void)c->rollback();
    if (st.ok()) (void)c->advisory_unlock(kKey, LockMode::exclusive);
  };
  const auto logs = run_timed({a, b});
  EXPECT_EQ(logs, (std::set<std::string>{"A 40P01; B got the lock", "B 40P01; A got the row"}));
}

TEST(SimPg, ATerminatedBackendLosesItsLocksAndItsConnection) {
  struct One {
    explicit One(Env& env)
        : pool(env.new_pg_pool(pg::PoolConfig{.pool_size = 5, .max_overflow = 10, .timeout = 30s, .backend_terminated = true})) {}
    std::unique_ptr<pg::Pool> pool;
    std::string seen;
  };
  std::set<std::string> outcomes;
  LambdaSystem<One> system(1, [](One& s, Env&, ActorId) {
    auto c = s.pool->checkout().value();
    const auto st = c->advisory_lock(kKey, LockMode::exclusive);
    const auto un = c->advisory_unlock(kKey, LockMode::exclusive);
    auto probe = s.pool->checkout().value();
    const auto free = probe->try_advisory_lock(kKey, LockMode::exclusive);  // the fault may strike here too
    s.seen = fmt::format("lock {} unlock {} free afterwards {}", st.ok() ? "ok" : st.error().sqlstate,
                         un.ok() ? std::to_string(un.value()) : un.error().sqlstate,
                         free.ok() ? std::to_string(free.value()) : free.error().sqlstate);
  }, [&outcomes](One& s) -> std::optional<Violation> {
    outcomes.insert(s.seen);
    return std::nullopt;
  });
  sim::ExploreOptions options;
  options.stop_at_first = false;
  EXPECT_EQ(testing::explore(system, "dfs", options).verdict, Verdict::pass);
  EXPECT_EQ(outcomes, (std::set<std::string>{"lock ok unlock 1 free afterwards 1",
                                             "lock 57P01 unlock 08006 free afterwards 1",
                                             "lock ok unlock 57P01 free afterwards 1",
                                             "lock ok unlock 1 free afterwards 57P01"}));
}


// ---- The pg_locks view (seed 000's monitoring query) and pg_terminate_backend ------------

long ms(Duration d) { return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()); }

// One line per row: pid, application_name, state, the key, mode, granted, query_start and
// duration in ms.
std::string show(const std::vector<pg::AdvisoryLockRow>& rows) {
  std::string out;
  for (const auto& r : rows) {
    out += fmt::format("{}{} {} \"{}\" {}/{}/{} {} {} start {} for {}", out.empty() ? "" : " | ", r.pid, r.application_name,
                       r.state, r.classid, r.objid, r.objsubid, r.mode, r.granted ? "granted" : "waiting",
                       ms(r.query_start), ms(r.duration));
  }
  return out.empty() ? "no rows" : out;
}

// The view as another session sees it `at` into the run, with the holder's body before.
std::set<std::string> view_at(Duration at, std::function<void(Db&, Env&)> holder) {
  return run_timed({std::move(holder), [at](Db& db, Env& env) {
                      env.sleep_for(at);
                      auto c = db.pool->checkout().value();
                      db.log.push_back(show(c->advisory_locks().value()));
                    }});
}

TEST(SimPgLocks, TheBigintFormShowsItsHalvesAndObjsubid1) {
  const auto logs = view_at(5ms, [](Db& db, Env& env) {
    auto c = db.pool->checkout().value();
    (void)c->advisory_lock(AdvisoryKey::single((std::int64_t{5} << 32) | 7), LockMode::exclusive);
    env.sleep_for(1ms);
    (void)c->advisory_lock(AdvisoryKey::single(-2), LockMode::exclusive);  // all bits set but the lowest
    env.sleep_for(10ms);
  });
  EXPECT_EQ(logs, (std::set<std::string>{
                      "1001 seed \"idle\" 5/7/1 ExclusiveLock granted start 1 for 4 | "
                      "1001 seed \"idle\" 4294967295/4294967294/1 ExclusiveLock granted start 1 for 4"}));
}

TEST(SimPgLocks, TheInt4PairFormShowsBothKeysAndObjsubid2) {
  const auto logs = view_at(5ms, [](Db& db, Env& env) {
    auto c = db.pool->checkout().value();
    (void)c->advisory_lock(AdvisoryKey::pair(-3, 9), LockMode::shared);
    env.sleep_for(10ms);
  });
  EXPECT_EQ(logs, (std::set<std::string>{"1001 seed \"idle\" 4294967293/9/2 ShareLock granted start 0 for 5"}));
}

TEST(SimPgLocks, BothModesOnOneKeyAreTwoRowsAndAReentrantLockIsOne) {
  const auto logs = view_at(5ms, [](Db& db, Env& env) {
    auto c = db.pool->checkout().value();
    (void)c->advisory_lock(kKey, LockMode::shared);
    (void)c->advisory_lock(kKey, LockMode::exclusive);
    (void)c->advisory_lock(kKey, LockMode::exclusive);  // reentrant: still one row
    (void)c->advisory_xact_lock(kKey, LockMode::exclusive);  // its own transaction: gone again
    env.sleep_for(10ms);
  });
  EXPECT_EQ(logs, (std::set<std::string>{"1001 seed \"idle\" 7/42/2 ExclusiveLock granted start 0 for 5 | "
                                         "1001 seed \"idle\" 7/42/2 ShareLock granted start 0 for 5"}));
}

TEST(SimPgLocks, AQueuedWaiterIsNotGrantedAndActive) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        env.sleep_for(20ms);
        (void)c->advisory_unlock(kKey, LockMode::exclusive);
      },
      [](Db& db, Env& env) {
        env.sleep_for(2ms);
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::shared);
        env.sleep_for(20ms);
      },
      [](Db& db, Env& env) {
        env.sleep_for(5ms);
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(AdvisoryKey::pair(7, 43), LockMode::exclusive);
        db.log.push_back(show(c->advisory_locks().value()));  // the querying session is active too
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{"1001 seed \"idle\" 7/42/2 ExclusiveLock granted start 0 for 5 | "
                                         "1002 seed \"active\" 7/42/2 ShareLock waiting start 2 for 3 | "
                                         "1003 seed \"active\" 7/43/2 ExclusiveLock granted start 5 for 0"}));
}

TEST(SimPgLocks, ASessionInATransactionIsIdleInTransaction) {
  const auto logs = view_at(5ms, [](Db& db, Env& env) {
    auto c = db.pool->checkout().value();
    (void)c->advisory_lock(kKey, LockMode::exclusive);
    env.sleep_for(1ms);
    (void)c->begin();
    (void)c->advisory_xact_lock(AdvisoryKey::single(3), LockMode::shared);
    env.sleep_for(10ms);
    (void)c->commit();
  });
  EXPECT_EQ(logs, (std::set<std::string>{"1001 seed \"idle in transaction\" 0/3/1 ShareLock granted start 1 for 4 | "
                                         "1001 seed \"idle in transaction\" 7/42/2 ExclusiveLock granted start 1 for 4"}));
}

TEST(SimPgLocks, RowLocksAreNotAdvisoryLocks) {
  const auto logs = view_at(5ms, [](Db& db, Env& env) {
    auto c = db.pool->checkout().value();
    (void)c->insert_row("jobs", 1, {});
    (void)c->begin();
    (void)c->select_for_update("jobs", 1, false);
    env.sleep_for(10ms);
    (void)c->commit();
  });
  EXPECT_EQ(logs, (std::set<std::string>{"no rows"}));
}

TEST(SimPgTerminate, ReleasesEveryLockOfTheVictimAndRollsItsTransactionBack) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {  // the victim, 1001
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        (void)c->advisory_lock(AdvisoryKey::single(1), LockMode::shared);
        (void)c->insert_row("jobs", 1, {{"state", "new"}});
        (void)c->begin();
        (void)c->advisory_xact_lock(AdvisoryKey::single(2), LockMode::exclusive);
        (void)c->select_for_update("jobs", 1, false);
        (void)c->insert_row("jobs", 2, {{"state", "new"}});
        env.sleep_for(20ms);
        const auto first = c->try_advisory_lock(AdvisoryKey::single(3), LockMode::exclusive);
        const auto second = c->commit();
        db.log.push_back(fmt::format("victim: {} {}; then {}", first.error().sqlstate, first.error().message,
                                     second.error().sqlstate));
      },
      [](Db& db, Env& env) {  // waits for the victim's session lock, 1002
        env.sleep_for(1ms);
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        const long at = ms(env.now());
        env.sleep_for(2ms);  // the log in a fixed order
        db.log.push_back(fmt::format("waiter got it at {}", at));
        env.sleep_for(20ms);
      },
      [](Db& db, Env& env) {  // waits for the victim's row lock, 1003
        env.sleep_for(2ms);
        auto c = db.pool->checkout().value();
        (void)c->begin();
        const auto row = c->select_for_update("jobs", 1, false);
        const long at = ms(env.now());
        env.sleep_for(3ms);
        db.log.push_back(fmt::format("row waiter at {}: {}; its insert: {}", at, show(row.value()),
                                     show(c->read_row("jobs", 2).value())));
        (void)c->commit();
      },
      [](Db& db, Env& env) {  // the terminator, 1004
        env.sleep_for(10ms);
        auto c = db.pool->checkout().value();
        const bool killed = c->terminate_backend(1001).value();
        const bool unknown = c->terminate_backend(4242).value();
        const auto warnings = c->take_warnings();
        db.log.push_back(fmt::format("terminate 1001 {}, 4242 {} ({} {})", killed, unknown, warnings.at(0).sqlstate,
                                     warnings.at(0).message));
        env.sleep_for(1ms);
        db.log.push_back(show(c->advisory_locks().value()));
        db.log.push_back(fmt::format("again {}", c->terminate_backend(1001).value()));
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{
                      "terminate 1001 true, 4242 false (01000 PID 4242 is not a PostgreSQL backend process); "
                      "1002 seed \"idle\" 7/42/2 ExclusiveLock granted start 1 for 10; again false; "
                      "waiter got it at 10; row waiter at 10: id=1,state=new; its insert: none; "
                      "victim: 08006 terminating connection due to administrator command; server closed the connection "
                      "unexpectedly; then 08006"}));
}

TEST(SimPgTerminate, AWaitingVictimGets57P01AndThePoolDiscardsItsConnection) {
  const auto logs = run_timed({
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        env.sleep_for(50ms);
      },
      [](Db& db, Env& env) {  // the victim, 1002
        env.sleep_for(1ms);
        int pid = 0;
        {
          auto c = db.pool->checkout().value();
          pid = c->backend_pid();
          const auto st = c->advisory_lock(kKey, LockMode::exclusive);
          db.log.push_back(fmt::format("victim at {}: {} {}", ms(env.now()), st.error().sqlstate, st.error().message));
          db.log.push_back(fmt::format("then {}", c->advisory_unlock_all().error().sqlstate));
        }
        auto again = db.pool->checkout().value();
        db.log.push_back(fmt::format("a new backend {}", again->backend_pid() != pid));
      },
      [](Db& db, Env& env) {
        env.sleep_for(5ms);
        auto c = db.pool->checkout().value();
        db.log.push_back(fmt::format("terminate {}", c->terminate_backend(1002).value()));
        env.sleep_for(1ms);
        db.log.push_back(show(c->advisory_locks().value()));
      },
  });
  EXPECT_EQ(logs, (std::set<std::string>{
                      "terminate true; victim at 5: 57P01 terminating connection due to administrator command; "
                      "then 08006; a new backend true; 1001 seed \"idle\" 7/42/2 ExclusiveLock granted start 0 for 6"}));
}

TEST(SimPgTerminate, ASessionCanTerminateItself) {
  const auto logs = run_timed({[](Db& db, Env&) {
    auto c = db.pool->checkout().value();
    (void)c->advisory_lock(kKey, LockMode::exclusive);
    const auto self = c->terminate_backend(c->backend_pid());
    auto probe = db.pool->checkout().value();
    db.log.push_back(fmt::format("{}, lock free {}", self.error().sqlstate,
                                 probe->try_advisory_lock(kKey, LockMode::exclusive).value()));
  }});
  EXPECT_EQ(logs, (std::set<std::string>{"08006, lock free true"})) << "libpq reports a lost connection (checked by lockstep conform)";
}

TEST(SimPg, ThePoolCountsItsCheckedOutConnections) {
  const auto logs = run_timed({[](Db& db, Env&) {
    std::string counts = std::to_string(db.pool->checked_out());
    {
      auto a = db.pool->checkout().value();
      auto b = db.pool->checkout().value();
      counts += fmt::format(" {}", db.pool->checked_out());
    }
    counts += fmt::format(" {}", db.pool->checked_out());
    db.log.push_back(counts);
  }});
  EXPECT_EQ(logs, (std::set<std::string>{"0 2 0"}));
}

// Every outcome of a small untimed program under a strategy, one text per execution: the
// lines the actors logged, sorted (the order of independent steps is no outcome), or the
// verdict of an execution that failed.
struct Explored {
  std::set<std::string> outcomes;
  std::set<std::string> traces;
  std::set<std::string> optimal_traces;  // under optimal DPOR's footprints (trace_forms.h)
  std::uint64_t executions = 0;
  std::uint64_t redundant = 0;
  bool restarted = false;  // dpor left its optimal mode
  std::string fallback;    // why (ExplorationResult::fallback)
  bool exhaustive = false;
  std::uint64_t failures = 0;
  std::string first_failure;  // its message, when there was one
};

Explored explore_program(const std::vector<std::function<void(Db&, Env&)>>& actors, const std::string& strategy,
                         TimeMode time) {
  Explored out;
  LambdaSystem<Db> system(
      static_cast<int>(actors.size()), [&](Db& db, Env& env, ActorId a) { actors[a](db, env); },
      [&](Db& db) -> std::optional<Violation> {
        std::sort(db.log.begin(), db.log.end());
        std::string joined;
        for (const auto& l : db.log) joined += l + "; ";
        out.outcomes.insert(joined);
        return std::nullopt;
      });
  testing::FoataRecorder recorder(sim::make_strategy(strategy, 1));
  sim::ExploreOptions options;
  options.stop_at_first = false;
  options.limits.time = time;
  options.on_execution = [&](const sim::ExecutionResult& r) {
    recorder.keep_last();
    if (r.verdict != Verdict::pass) out.outcomes.insert(fmt::format("{}: {}", verdict_name(r.verdict), r.message));
  };
  const auto result = sim::explore_system(system, recorder, options);
  recorder.flush();
  out.exhaustive = result.exhaustive;
  out.traces.insert(recorder.forms().begin(), recorder.forms().end());
  out.optimal_traces.insert(recorder.optimal_forms().begin(), recorder.optimal_forms().end());
  out.executions = result.stats.executions;
  out.redundant = result.stats.redundant;
  out.restarted = recorder.restarted();
  out.fallback = result.fallback;
  out.failures = result.stats.failures;
  if (result.first_failure) out.first_failure = result.first_failure->result.message;
  return out;
}

// The outcomes of every execution of the program (in the default time mode), which must
// all run and, unless failures are expected, none fail.
std::set<std::string> outcomes(const std::vector<std::function<void(Db&, Env&)>>& actors, const std::string& strategy,
                               bool failures_expected = false) {
  const Explored explored = explore_program(actors, strategy, sim::ExploreOptions{}.limits.time);
  EXPECT_TRUE(explored.exhaustive) << strategy;
  if (!failures_expected) {
    EXPECT_EQ(explored.failures, 0u) << explored.first_failure;
  }
  return explored.outcomes;
}

TEST(SimPgExplore, TheDeadlockCheckRacesWithARequestOnAnotherLock) {
  // a's deadlock check (a waits for b on key 0) and b's request on key 1 (held by a), which
  // closes the cycle, touch different locks; the check must still be ordered against the
  // request: before it nobody is the victim yet, after it a is. Found by the sim-pg
  // property (its step declared only a's own lock).
  for (LockMode first : {LockMode::exclusive, LockMode::shared}) {
    for (LockMode second : {LockMode::exclusive, LockMode::shared}) {
      const std::vector<std::function<void(Db&, Env&)>> actors = {
          [first](Db& db, Env&) {
            auto c = db.pool->checkout().value();
            db.log.push_back("a1 " + std::string(c->advisory_lock(AdvisoryKey::pair(1, 1), first).ok() ? "ok" : "err"));
            const auto r = c->advisory_lock(AdvisoryKey::pair(1, 0), LockMode::exclusive);
            db.log.push_back("a0 " + (r.ok() ? std::string("ok") : r.error().sqlstate));
            db.kept.push_back(std::move(c));
          },
          [second](Db& db, Env&) {
            auto c = db.pool->checkout().value();
            db.log.push_back("b0 " + std::string(c->advisory_lock(AdvisoryKey::pair(1, 0), LockMode::exclusive).ok() ? "ok" : "err"));
            const auto r = c->advisory_lock(AdvisoryKey::pair(1, 1), second);
            db.log.push_back("b1 " + (r.ok() ? std::string("ok") : r.error().sqlstate));
            db.kept.push_back(std::move(c));
          },
      };
      const auto dfs = outcomes(actors, "dfs", true);
      EXPECT_EQ(outcomes(actors, "dpor", true), dfs);
    }
  }
}

TEST(SimPgExplore, EachTransactionHasItsOwnTransactionLock) {
  // b's unique check waits for a's transaction, which rolls back; b is granted the wait at
  // that moment and lets it go at its next step. Before that, a's next transaction may
  // write: it takes a transaction lock of its own (PostgreSQL: a new transaction id). With
  // one key per session it found b still holding it (found by the sim-pg property).
  const std::vector<std::function<void(Db&, Env&)>> actors = {
      [](Db& db, Env&) {
        auto c = db.pool->checkout().value();
        (void)c->begin();
        db.log.push_back("a insert " + std::string(c->insert_row("r", 2, {{"v", "a"}}).ok() ? "ok" : "err"));
        (void)c->rollback();
        const auto r = c->insert_row_if_absent("r", 1, {{"v", "a"}});
        db.log.push_back("a insert_if_absent " + (r.ok() ? std::to_string(r.value()) : r.error().sqlstate));
        db.kept.push_back(std::move(c));
      },
      [](Db& db, Env&) {
        auto c = db.pool->checkout().value();
        const auto r = c->insert_row_if_absent("r", 2, {{"v", "b"}});
        db.log.push_back("b insert_if_absent " + (r.ok() ? std::to_string(r.value()) : r.error().sqlstate));
        db.kept.push_back(std::move(c));
      },
  };
  const auto dfs = outcomes(actors, "dfs");  // no failure (before: an internal invariant stopped the process)
  EXPECT_TRUE(dfs.contains("a insert ok; a insert_if_absent 1; b insert_if_absent 1; ")) << fmt::format("{}", fmt::join(dfs, " | "));
  EXPECT_EQ(outcomes(actors, "dpor"), dfs);
}

TEST(SimPgExplore, DporSeesTheViewInEveryStateOfTheLocksAsDfsDoes) {
  // The view names no lock, only the server: without the domain dpor would find it
  // independent of the lock steps and show one of these states only.
  const std::vector<std::function<void(Db&, Env&)>> actors = {
      [](Db& db, Env&) {
        auto c = db.pool->checkout().value();
        (void)c->advisory_lock(kKey, LockMode::exclusive);
        (void)c->begin();
        (void)c->commit();
        (void)c->advisory_unlock(kKey, LockMode::exclusive);
      },
      [](Db& db, Env&) {
        auto c = db.pool->checkout().value();
        const auto rows = c->advisory_locks().value();
        db.log.push_back(rows.empty() ? "not held" : "held, " + rows[0].state);
      },
  };
  const auto dfs = outcomes(actors, "dfs");
  // Never "held, active": the COMMIT is one step (it releases its transaction's locks at one
  // moment, as the server does), so no view sees it half-way.
  EXPECT_EQ(dfs, (std::set<std::string>{"not held; ", "held, idle; ", "held, idle in transaction; "}));
  EXPECT_EQ(outcomes(actors, "dpor"), dfs);
}

TEST(SimPgExplore, DporAndDfsAgreeOnTerminatingTheWaiters) {
  // Two sessions take one lock; a third terminates whoever it sees waiting.
  auto taker = [](const char* name) {
    return [name](Db& db, Env&) {
      auto c = db.pool->checkout().value();
      const auto st = c->advisory_lock(kKey, LockMode::exclusive);
      const auto un = c->advisory_unlock(kKey, LockMode::exclusive);
      db.log.push_back(fmt::format("{} {} {}", name, st.ok() ? "ok" : st.error().sqlstate,
                                   un.ok() ? std::to_string(un.value()) : un.error().sqlstate));
    };
  };
  const std::vector<std::function<void(Db&, Env&)>> actors = {
      taker("A"), taker("B"), [](Db& db, Env&) {
        auto c = db.pool->checkout().value();
        std::string killed;
        const auto rows = c->advisory_locks().value();  // (not a range over value() of a temporary)
        for (const auto& r : rows) {
          if (!r.granted) killed += fmt::format(" {}:{}", r.pid, c->terminate_backend(r.pid).value());
        }
        db.log.push_back("killed" + killed);
      }};
  const auto dfs = outcomes(actors, "dfs");
  EXPECT_GT(dfs.size(), 4u);
  EXPECT_EQ(outcomes(actors, "dpor"), dfs);
}

TEST(SimPgExplore, ATerminatedCommitIsAllOrNothing) {
  // The commit publishes its rows one step each; a termination between them completes it.
  std::set<std::string> seen;
  LambdaSystem<Db> system(
      2,
      [](Db& db, Env&, ActorId a) {
        auto c = db.pool->checkout().value();
        if (a == 0) {
          (void)c->begin();
          (void)c->insert_row("jobs", 1, {});
          (void)c->insert_row("jobs", 2, {});
          (void)c->commit();
        } else {
          (void)c->terminate_backend(c->backend_pid() == 1001 ? 1002 : 1001);
        }
      },
      [&seen](Db& db) -> std::optional<Violation> {
        auto probe = db.pool->checkout().value();  // outside any actor: at once
        seen.insert(fmt::format("rows {} {}", probe->read_row("jobs", 1).value().has_value(),
                                probe->read_row("jobs", 2).value().has_value()));
        return std::nullopt;
      });
  sim::ExploreOptions options;
  options.stop_at_first = false;
  testing::explore(system, "dfs", options);
  EXPECT_EQ(seen, (std::set<std::string>{"rows false false", "rows true true"}));
}

// ---- Random programs: dpor reaches what dfs reaches -----------------------------------

// One statement of a random program on two keys and two rows (which start absent); kill
// names a pid (maybe its own, maybe none).
struct PgOp {
  enum Kind { lock, try_lock, unlock, xact_lock, begin, commit, view, kill, unlock_all, rollback,
              insert, update, for_update, for_update_nowait, read, insert_if_absent, update_if, skip_locked, for_share,
              try_xact_lock, lock_timed, idle_timeout, pause, idle_session, kinds } kind = lock;
  int key = 0;  // also the row: 1 + key
  LockMode mode = LockMode::exclusive;
  int pid = 1001;
};

std::string run(pg::Connection& c, Env& env, const PgOp& op) {
  auto code = [](const auto& r) { return r.ok() ? std::string("ok") : r.error().sqlstate; };
  auto value = [](const auto& r) { return r.ok() ? std::to_string(r.value()) : r.error().sqlstate; };
  const AdvisoryKey key = AdvisoryKey::pair(1, op.key);
  switch (op.kind) {
    case PgOp::lock: return "lock " + code(c.advisory_lock(key, op.mode));
    case PgOp::try_lock: return "try " + value(c.try_advisory_lock(key, op.mode));
    case PgOp::unlock: return "unlock " + value(c.advisory_unlock(key, op.mode));
    case PgOp::xact_lock: return "xact " + code(c.advisory_xact_lock(key, op.mode));
    case PgOp::begin: return "begin " + code(c.begin());
    case PgOp::commit: return "commit " + code(c.commit());
    case PgOp::kill: return fmt::format("kill {} {}", op.pid, value(c.terminate_backend(op.pid)));
    case PgOp::unlock_all: return "unlock_all " + code(c.advisory_unlock_all());
    case PgOp::rollback: return "rollback " + code(c.rollback());
    case PgOp::insert: return "insert " + code(c.insert_row("r", 1 + op.key, {{"v", std::to_string(op.pid)}}));
    case PgOp::update: return "update " + value(c.update_row("r", 1 + op.key, {{"v", std::to_string(op.pid)}}));
    case PgOp::for_update:
    case PgOp::for_update_nowait:
    case PgOp::read:
    case PgOp::skip_locked:
    case PgOp::for_share: {
      const std::int64_t id = 1 + op.key;
      const auto r = op.kind == PgOp::read          ? c.read_row("r", id)
                     : op.kind == PgOp::skip_locked ? c.select_for_update_skip_locked("r", id)
                     : op.kind == PgOp::for_share   ? c.select_for_share("r", id)
                                                    : c.select_for_update("r", id, op.kind == PgOp::for_update_nowait);
      return fmt::format("select{} {}", static_cast<int>(op.kind), r.ok() ? show(r.value()) : r.error().sqlstate);
    }
    case PgOp::insert_if_absent:
      return "insert_if_absent " + value(c.insert_row_if_absent("r", 1 + op.key, {{"v", std::to_string(op.pid)}}));
    case PgOp::update_if:  // compare-and-set from a value some session may have written
      return "update_if " + value(c.update_row_if("r", 1 + op.key, "v", std::to_string(op.pid), {{"v", std::to_string(op.pid + 1)}}));
    case PgOp::try_xact_lock: return "try_xact " + value(c.try_advisory_xact_lock(key, op.mode));
    case PgOp::lock_timed: return "lock_timed " + code(c.advisory_lock_with_timeout(key, op.mode, 20ms));
    // idle_in_transaction_session_timeout, and the client idle past it (timed: the server
    // ends the session then, and a waiter behind it goes on; untimed: SQL after it refused).
    case PgOp::idle_timeout: return "idle_timeout " + code(c.exec("SET idle_in_transaction_session_timeout = 10"));
    case PgOp::pause: env.sleep_for(15ms); return "pause";
    case PgOp::idle_session: return "idle_session " + code(c.exec("SET idle_session_timeout = 10"));
    case PgOp::kinds: break;
    case PgOp::view: {
      const auto rows = c.advisory_locks();
      if (!rows.ok()) return "view " + rows.error().sqlstate;
      std::string out = "view";
      for (const auto& r : rows.value()) {
        out += fmt::format(" {}:{}:{}:{}:{}", r.pid, r.objid, r.mode, r.granted, r.state);
      }
      return out;
    }
  }
  return "";
}

PgOp gen_pg_op() {
  PgOp op;
  op.kind = static_cast<PgOp::Kind>(*rc::gen::resize(100, rc::gen::inRange(0, static_cast<int>(PgOp::kinds))));  // every kind from the start
  op.key = *rc::gen::element(0, 0, 1);  // mostly one key: more conflicts
  op.mode = *rc::gen::element(LockMode::exclusive, LockMode::shared);
  op.pid = *rc::gen::inRange(1001, 1004);
  return op;
}

// What one strategy explores of a program: its outcomes (and failure verdicts), the
// Mazurkiewicz traces of its complete executions, and its counts.

TEST(SimPgExplore, WaitsForAdvisoryLocksAndTheirTriesStayOptimal) {
  // Three sessions take one advisory lock, waiting behind each other (a queued request is
  // granted by the release ahead of it), and one of them tries it first. Timed: no wait
  // times out, since the clock never has to move on.
  const AdvisoryKey key = AdvisoryKey::pair(1, 0);
  std::vector<std::function<void(Db&, Env&)>> actors;
  for (int a = 0; a < 3; ++a) {
    actors.push_back([a, key](Db& db, Env&) {
      auto c = db.pool->checkout().value();
      if (a == 0) db.log.push_back(fmt::format("try {}", c->try_advisory_lock(key, LockMode::exclusive).value()));
      (void)c->advisory_lock(key, LockMode::exclusive);
      (void)c->advisory_unlock_all();
      db.kept.push_back(std::move(c));
    });
  }
  const auto dfs = explore_program(actors, "dfs", TimeMode::timed);
  const auto dpor = explore_program(actors, "dpor", TimeMode::timed);
  ASSERT_TRUE(dfs.exhaustive && dpor.exhaustive);
  EXPECT_FALSE(dpor.restarted);
  EXPECT_EQ(dpor.redundant, 0u);
  EXPECT_EQ(dpor.traces, dfs.traces);
  EXPECT_EQ(dpor.optimal_traces, dfs.optimal_traces);
  EXPECT_EQ(dpor.executions, dfs.optimal_traces.size());
  EXPECT_EQ(dpor.outcomes, dfs.outcomes);
  EXPECT_EQ(dfs.outcomes.size(), 2u);  // the try takes the lock or finds it held
}

// Timed, a wait's deadlock check reads every object of the server (OpDesc::
// timer_reads_every_object): one footprint wherever it fires, so optimal DPOR moves it as any
// step. Three sessions that each hold one lock and wait for the next one's close a cycle of
// three; which of them is the victim depends on the order of the requests and the checks.
// Before, the check read the locks held where it fired and optimal DPOR began again as
// source-DPOR at the first one.
TEST(SimPgExplore, ATimedDeadlockCheckOfACycleOfThreeStaysOptimal) {
  std::vector<std::function<void(Db&, Env&)>> actors;
  for (int a = 0; a < 3; ++a) {
    actors.push_back([a](Db& db, Env&) {
      auto c = db.pool->checkout().value();
      (void)c->advisory_lock(AdvisoryKey::pair(1, a), LockMode::exclusive);
      const auto r = c->advisory_lock(AdvisoryKey::pair(1, (a + 1) % 3), LockMode::exclusive);
      db.log.push_back(fmt::format("{} {}", a, r.ok() ? std::string("ok") : r.error().sqlstate));
      (void)c->advisory_unlock_all();
      db.kept.push_back(std::move(c));
    });
  }
  const auto dfs = explore_program(actors, "dfs", TimeMode::timed);
  const auto dpor = explore_program(actors, "dpor", TimeMode::timed);
  ASSERT_TRUE(dfs.exhaustive && dpor.exhaustive);
  EXPECT_FALSE(dpor.restarted) << dpor.fallback;
  EXPECT_EQ(dpor.redundant, 0u);
  EXPECT_EQ(dpor.traces, dfs.traces);
  EXPECT_EQ(dpor.optimal_traces, dfs.optimal_traces);
  EXPECT_EQ(dpor.executions, dfs.optimal_traces.size());
  EXPECT_EQ(dpor.outcomes, dfs.outcomes);
  bool some_victim = false;  // a deadlock is found in some executions
  for (const auto& o : dfs.outcomes) some_victim = some_victim || o.find("40P01") != std::string::npos;
  EXPECT_TRUE(some_victim) << fmt::format("{}", fmt::join(dfs.outcomes, " | "));
}

// A statement on a backend another session terminated takes its step before it fails: the
// step is what races with the termination. (A first version of the idle timeout returned
// before it; dpor then never ran the statement ahead of the termination: the SimPg property
// with a client's pause found it.)
TEST(SimPgExplore, AStatementOnATerminatedBackendIsAStepThatRaces) {
  const std::vector<std::function<void(Db&, Env&)>> actors = {
      [](Db& db, Env&) {
        auto c = db.pool->checkout().value();
        const auto k = c->terminate_backend(1001);
        db.log.push_back(fmt::format("a kill {}", k.ok() ? std::to_string(k.value()) : k.error().sqlstate));
        db.kept.push_back(std::move(c));
      },
      [](Db& db, Env& env) {
        auto c = db.pool->checkout().value();
        env.sleep_for(15ms);
        const auto r = c->advisory_locks();
        db.log.push_back("b view " + (r.ok() ? std::string("ok") : r.error().sqlstate));
        db.kept.push_back(std::move(c));
      }};
  const auto dfs = explore_program(actors, "dfs", TimeMode::untimed);
  const auto dpor = explore_program(actors, "dpor", TimeMode::untimed);
  EXPECT_EQ(dfs.outcomes, (std::set<std::string>{"a kill 08006; b view ok; ", "a kill 1; b view 08006; ", "a kill 1; b view ok; "}));
  EXPECT_EQ(dpor.outcomes, dfs.outcomes);
  EXPECT_EQ(dpor.traces, dfs.traces);
}

// Random programs of advisory locks (waits, with a lock_timeout too, tries, both modes, both
// scopes), transactions, rows, terminations and views, in both time modes, some with the
// phantom grant: dpor explores exactly dfs's traces, one complete execution each, with dfs's
// outcomes; none is sleep-set blocked while it stays optimal (a wait for a grant and its
// timeout, a failed pg try are in optimal mode).
RC_GTEST_PROP(SimPgProperties, DporRunsTheTracesAndOutcomesOfDfs, ()) {
  // 2-3 actors, 5 statements in all, at least one each; each actor keeps its connection
  // to the end (fewer steps).
  const int n = *rc::gen::inRange(2, 4);
  std::vector<std::vector<PgOp>> program(static_cast<std::size_t>(n));
  for (int i = 0; i < 5; ++i) {
    program[static_cast<std::size_t>(i < n ? i : *rc::gen::inRange(0, n))].push_back(gen_pg_op());
  }
  const bool phantom = *rc::gen::element(false, false, true);  // lock_timeout with the phantom grant fault
  std::vector<std::function<void(Db&, Env&)>> actors;
  for (int a = 0; a < n; ++a) {
    actors.push_back([a, phantom, ops = program[static_cast<std::size_t>(a)]](Db& db, Env& env) {
      auto c = (phantom ? db.phantom_pool : db.pool)->checkout().value();
      for (std::size_t i = 0; i < ops.size(); ++i) db.log.push_back(fmt::format("{}{} {}", a, i, run(*c, env, ops[i])));
      db.kept.push_back(std::move(c));  // returned when the execution ends, outside the actors
    });
  }
  const TimeMode time = *rc::gen::element(TimeMode::untimed, TimeMode::timed);
  for (int a = 0; a < n; ++a) {
    std::string ops;
    for (const PgOp& op : program[static_cast<std::size_t>(a)]) {
      ops += fmt::format(" [kind {} key {} {} pid {}]", static_cast<int>(op.kind), op.key,
                         op.mode == LockMode::exclusive ? "X" : "S", op.pid);
    }
    RC_LOG() << "actor " << a << ":" << ops << "\n";
  }
  const auto dfs = explore_program(actors, "dfs", time);
  const auto dpor = explore_program(actors, "dpor", time);
  RC_ASSERT(dfs.exhaustive && dpor.exhaustive);
  RC_TAG(dfs.outcomes.size() > 1 ? "several outcomes" : "one outcome");
  RC_TAG(time == TimeMode::timed ? "timed" : "untimed");
  if (phantom) RC_TAG("phantom grant");
  RC_TAG(dpor.restarted ? "dpor fell back to source-DPOR" : "dpor optimal throughout");
  RC_ASSERT(dpor.outcomes == dfs.outcomes);
  // One complete execution per trace: under optimal DPOR's footprints while it stays
  // optimal (then none is sleep-set blocked), else under the steps' own.
  RC_ASSERT(dpor.executions == (dpor.restarted ? dpor.traces : dpor.optimal_traces).size());
  if (!dpor.restarted) RC_ASSERT(dpor.redundant == 0u);
  // Untimed, a wait's deadlock check can run between any two steps, and its footprint (every
  // lock held then) depends on steps it commutes with: its trace's name differs, not what it
  // does. Timed, it runs once nothing else can, and traces compare exactly.
  if (time == TimeMode::untimed) return;
  std::vector<std::string> missing, extra;
  std::set_difference(dfs.traces.begin(), dfs.traces.end(), dpor.traces.begin(), dpor.traces.end(), std::back_inserter(missing));
  std::set_difference(dpor.traces.begin(), dpor.traces.end(), dfs.traces.begin(), dfs.traces.end(), std::back_inserter(extra));
  if (!missing.empty()) RC_LOG() << missing.size() << " of dfs's traces missing, the first: " << missing.front() << "\n";
  RC_ASSERT(missing.empty());
  RC_ASSERT(extra.empty());
  if (!dpor.restarted) RC_ASSERT(dpor.optimal_traces == dfs.optimal_traces);
}

}  // namespace
}  // namespace lockstep

// pg_sort (PostgreSQL's tuplesort order of ties, checked against the server by
// tests/sql-specs/order-by-ties.spec): whatever the input, a sorted permutation of it, and with a
// bound the `bound` least in order; ties in a fixed order (the same input gives the same output).
RC_GTEST_PROP(PgSort, SortsIntoAPermutationAndKeepsTheLeastUnderABound, ()) {
  const auto keys = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 4));
  const auto bound = *rc::gen::inRange<std::size_t>(0, 12);
  std::vector<std::pair<int, std::size_t>> items;
  for (std::size_t i = 0; i < keys.size(); ++i) items.emplace_back(keys[i], i);
  auto sorted = items;
  lockstep::sim::pg::pg_sort(sorted, [](const auto& a, const auto& b) { return a.first < b.first ? -1 : a.first > b.first ? 1 : 0; }, bound);
  auto expected = keys;
  std::sort(expected.begin(), expected.end());
  if (bound != 0 && expected.size() > bound) expected.resize(bound);
  std::vector<int> got;
  std::set<std::size_t> seen;
  for (const auto& [key, index] : sorted) {
    got.push_back(key);
    RC_ASSERT(index < keys.size() && keys[index] == key);
    RC_ASSERT(seen.insert(index).second);
  }
  RC_ASSERT(got == expected);
  auto again = items;
  lockstep::sim::pg::pg_sort(again, [](const auto& a, const auto& b) { return a.first < b.first ? -1 : a.first > b.first ? 1 : 0; }, bound);
  RC_ASSERT(again == sorted);
}
