// The simulated Env objects: RWMutex writer preference, asyncio Lock, flock semantics,
// compare-and-swap, and each object's misuse errors.
#include "lockstep/sim/sched/sim_env.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace lockstep {
namespace {

using testing::check;
using testing::LambdaSystem;
using testing::NoState;
using testing::scenario_from_json;
using testing::script_scenario;

TEST(RWMutex, AWaitingWriterHoldsOffNewReaders) {
  // r read-locks twice; a writer announcing itself in between makes the second rlock wait
  // behind it while the writer waits for the first: Go's documented deadlock.
  auto doc = script_scenario({{"r", {"rlock m", "rlock m", "runlock m", "runlock m"}}, {"w", {"lock m", "unlock m"}}});
  const auto report = check(scenario_from_json(doc));
  ASSERT_EQ(report.result.verdict, Verdict::deadlock);
  EXPECT_NE(report.result.first_failure->result.message.find("writers waiting: 1"), std::string::npos);
  // Without the writer, recursive read locking is fine.
  auto alone = script_scenario({{"r", {"rlock m", "rlock m", "runlock m", "runlock m"}}, {"q", {"rlock m", "runlock m"}}});
  EXPECT_EQ(check(scenario_from_json(alone)).result.verdict, Verdict::pass);
}

TEST(RWMutex, ReadersShareWritersExclude) {
  struct State {
    explicit State(Env& env) : rw(env.new_rwmutex("rw")) {
      inside.push_back(env.new_shared_var("inside_a", 0));
      inside.push_back(env.new_shared_var("inside_b", 0));
    }
    std::unique_ptr<RWMutex> rw;
    std::vector<std::unique_ptr<SharedVar>> inside;  // reader a / b holds the read lock
    bool two_readers_seen = false;
    bool writer_saw_reader = false;
  };
  bool any_two_readers = false;
  LambdaSystem<State> system(3, [](State& s, Env&, ActorId a) {
    if (a < 2) {
      s.rw->rlock();
      s.inside[a]->store(1);
      if (s.inside[1 - a]->load() == 1) s.two_readers_seen = true;
      s.inside[a]->store(0);
      s.rw->runlock();
    } else {
      s.rw->lock();
      if (s.inside[0]->load() != 0 || s.inside[1]->load() != 0) s.writer_saw_reader = true;
      s.rw->unlock();
    }
  }, [&any_two_readers](State& s) -> std::optional<Violation> {
    any_two_readers = any_two_readers || s.two_readers_seen;
    if (s.writer_saw_reader) return Violation{"exclusion", "a writer ran alongside a reader"};
    return std::nullopt;
  });
  const auto result = testing::explore(system);
  EXPECT_EQ(result.verdict, Verdict::pass);
  EXPECT_TRUE(any_two_readers) << "two readers never held the lock together";
}

TEST(RWMutex, RunlockWithoutReadLockIsAModelError) {
  auto doc = script_scenario({{"a", {"rlock m", "runlock m", "runlock m"}}});
  const auto report = check(scenario_from_json(doc));
  ASSERT_EQ(report.result.verdict, Verdict::model_error);
  EXPECT_NE(report.result.first_failure->result.message.find("does not hold for reading"), std::string::npos);
}

TEST(Lock, IsNotReentrant) {
  struct State {
    explicit State(Env& env) : lock(env.new_lock("L")) {}
    std::unique_ptr<Lock> lock;
  };
  LambdaSystem<State> system(1, [](State& s, Env&, ActorId) {
    s.lock->acquire();
    s.lock->acquire();  // asyncio.Lock: waits for itself forever
  });
  const auto result = testing::explore(system);
  ASSERT_EQ(result.verdict, Verdict::deadlock);
  EXPECT_NE(result.first_failure->result.message.find("lock L acquired by a (itself)"), std::string::npos)
      << result.first_failure->result.message;
}

TEST(Lock, LockedTryAcquireAndReleaseByAnotherActor) {
  struct State {
    explicit State(Env& env) : lock(env.new_lock("L")), phase(env.new_shared_var("phase", 0)) {}
    std::unique_ptr<Lock> lock;
    std::unique_ptr<SharedVar> phase;
    bool ok = true;
  };
  LambdaSystem<State> system(1, [](State& s, Env&, ActorId) {
    s.ok = s.ok && !s.lock->locked() && s.lock->try_acquire() && s.lock->locked() && !s.lock->try_acquire();
    s.lock->release();
    s.ok = s.ok && !s.lock->locked();
  }, [](State& s) -> std::optional<Violation> {
    if (!s.ok) return Violation{"lock", "asyncio lock semantics broken"};
    return std::nullopt;
  });
  EXPECT_EQ(testing::explore(system).verdict, Verdict::pass);

  LambdaSystem<State> twice(1, [](State& s, Env&, ActorId) {
    s.lock->acquire();
    s.lock->release();
    s.lock->release();
  });
  const auto result = testing::explore(twice);
  ASSERT_EQ(result.verdict, Verdict::model_error);
  EXPECT_NE(result.first_failure->result.message.find("not locked"), std::string::npos);
}

TEST(Lock, AcquireForTimesOutOnlyWhileWaiting) {
  struct State {
    explicit State(Env& env) : lock(env.new_lock("L")) {}
    std::unique_ptr<Lock> lock;
    bool got = false;
  };
  LambdaSystem<State> system(1, [](State& s, Env&, ActorId) { s.got = s.lock->acquire_for(std::chrono::seconds(1)); },
                             [](State& s) -> std::optional<Violation> {
                               if (!s.got) return Violation{"free_lock", "timed out on a free lock"};
                               return std::nullopt;
                             });
  // A free lock is ready at once: no timeout transition is offered in untimed mode.
  const auto result = testing::explore(system);
  EXPECT_EQ(result.verdict, Verdict::pass);
  EXPECT_EQ(result.stats.executions, 1u);
}

TEST(Flock, TwoOpensOfOnePathConflictEvenInOneActor) {
  LambdaSystem<NoState> system(1, [](NoState&, Env& env, ActorId) {
    auto f1 = env.open_file("/tmp/config.lock");
    auto f2 = env.open_file("/tmp/config.lock");
    f1->flock(FlockMode::exclusive);
    f2->flock(FlockMode::exclusive);  // flock locks belong to the open file: this waits on f1
  });
  const auto result = testing::explore(system);
  ASSERT_EQ(result.verdict, Verdict::deadlock);
  EXPECT_NE(result.first_failure->result.message.find("flock on /tmp/config.lock held by file #0 (exclusive)"),
            std::string::npos)
      << result.first_failure->result.message;
}

TEST(Flock, SharedLocksCoexistAndAFailedUpgradeLeavesNoLock) {
  struct State {
    explicit State(Env&) {}
    std::vector<bool> results;
  };
  LambdaSystem<State> system(1, [](State& s, Env& env, ActorId) {
    auto f1 = env.open_file("p");
    auto f2 = env.open_file("p");
    f1->flock(FlockMode::shared);
    s.results.push_back(f2->try_flock(FlockMode::shared));     // shared + shared: fine
    s.results.push_back(f1->try_flock(FlockMode::exclusive));  // f2 holds shared: fails...
    s.results.push_back(f2->try_flock(FlockMode::exclusive));  // ...and f1's lock is gone
    f2->close();
    s.results.push_back(f1->try_flock(FlockMode::exclusive));  // closing released f2's
  }, [](State& s) -> std::optional<Violation> {
    if (s.results != std::vector<bool>{true, false, true, true}) return Violation{"flock", "unexpected results"};
    return std::nullopt;
  });
  EXPECT_EQ(testing::explore(system).verdict, Verdict::pass);
}

TEST(Flock, UseAfterCloseIsAModelError) {
  LambdaSystem<NoState> system(1, [](NoState&, Env& env, ActorId) {
    auto f = env.open_file("p");
    f->close();
    f->flock(FlockMode::shared);
  });
  EXPECT_EQ(testing::explore(system).verdict, Verdict::model_error);
}

TEST(SharedVar, FailedCompareExchangeLeavesTheValue) {
  auto doc = script_scenario({{"a", {"cas x 5 9 ok", "read x v"}}}, {{"vars", {{"x", 1}}}, {"check", {"a.ok == 0", "a.v == 1"}}});
  EXPECT_EQ(check(scenario_from_json(doc)).result.verdict, Verdict::pass);
}

TEST(SharedVar, ExactlyOneCompareExchangeWins) {
  auto doc = script_scenario({{"a", {"cas x 0 1 ok"}}, {"b", {"cas x 0 2 ok"}}, {"c", {"cas x 0 3 ok"}}},
                             {{"check", {"x != 0"}}});
  const auto dfs = check(scenario_from_json(doc), {.settings = {.strategy = "dfs"}});
  EXPECT_EQ(dfs.result.verdict, Verdict::pass);
  EXPECT_EQ(dfs.result.stats.executions, 6u);  // every order of the three
  const auto dpor = check(scenario_from_json(doc), {.settings = {.strategy = "dpor"}});
  EXPECT_EQ(dpor.result.verdict, Verdict::pass);
  EXPECT_EQ(dpor.result.stats.executions, 3u);  // who wins; the losers' failed CAS only read
}

}  // namespace
}  // namespace lockstep
