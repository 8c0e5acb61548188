// The real Env (real/thread_env.h) and what runs on it against a real PostgreSQL:
// confirmation runs of headspace scenarios (real/confirm.h) and Bug #17686 rounds
// (real/phantom_rounds.h). The server tests skip, saying why, without a throwaway server
// (LOCKSTEP_PG_CONNINFO).
#include <atomic>
#include <mutex>
#include <thread>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "lockstep/model/scenario.h"
#include "lockstep/real/confirm.h"
#include "lockstep/real/phantom_rounds.h"
#include "lockstep/real/schedule_gate.h"
#include "lockstep/real/thread_env.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

real::ThreadEnv quiet_env() { return real::ThreadEnv({.conninfo = "", .seed = 7, .max_jitter = std::chrono::microseconds(50)}, nullptr); }

TEST(ThreadEnv, AMutexMakesReadModifyWriteAtomicAcrossThreads) {
  auto env = quiet_env();
  auto m = env.new_mutex("m");
  auto x = env.new_shared_var("x", 0);
  env.run_actors(4, [&](ActorId) {
    for (int i = 0; i < 50; ++i) {
      m->lock();
      x->store(x->load() + 1);
      m->unlock();
    }
  });
  EXPECT_EQ(x->load(), 200);
}

// The timing model on real threads (confirm of a scenario with explore.timing): each
// actor's clock is behind, right or ahead by skew_ms, fixed for the env; a sleep lasts
// within its jitter range.
TEST(ThreadEnv, TheTimingModelSkewsEachActorsClockAndStretchesSleeps) {
  using std::chrono::milliseconds;
  real::ThreadEnv env({.conninfo = "", .seed = 3, .max_jitter = Duration{0}, .timing = {.jitter = 0.5, .skew_ms = 10'000}},
                      nullptr);
  std::vector<std::int64_t> offset_ms(12), again_ms(12);
  std::vector<Duration> slept(12);
  env.run_actors(12, [&](ActorId a) {
    const auto u = static_cast<std::size_t>(a);
    offset_ms[u] = std::chrono::duration_cast<milliseconds>(env.now() - env.now_without_skew()).count();
    const auto before = env.now_without_skew();
    env.sleep_for(milliseconds(20));
    slept[u] = env.now_without_skew() - before;
    again_ms[u] = std::chrono::duration_cast<milliseconds>(env.now() - env.now_without_skew()).count();
  });
  std::set<std::int64_t> seen;
  for (std::size_t a = 0; a < 12; ++a) {
    // The offset is -10 s, 0 or +10 s (give or take the moment between the two reads), and stays.
    const std::int64_t rounded = (offset_ms[a] + 5'000 + 100'000) / 10'000 * 10'000 - 100'000;
    EXPECT_TRUE(rounded == -10'000 || rounded == 0 || rounded == 10'000) << offset_ms[a];
    EXPECT_LE(std::abs(again_ms[a] - offset_ms[a]), 1) << a;
    seen.insert(rounded);
    EXPECT_GE(slept[a], milliseconds(10)) << a;  // at least 20 ms x 0.5
  }
  EXPECT_GE(seen.size(), 2u);  // 12 actors drawing among three offsets
}

TEST(ThreadEnv, UnlockingAMutexHeldByAnotherActorIsAModelError) {
  auto env = quiet_env();
  auto m = env.new_mutex("m");
  bool threw = false;
  env.run_actors(2, [&](ActorId a) {
    if (a == 0) m->lock();
  });
  env.run_actors(2, [&](ActorId a) {
    if (a == 1) {
      try {
        m->unlock();
      } catch (const ModelError&) {
        threw = true;
      }
    }
  });
  EXPECT_TRUE(threw);
}

TEST(ThreadEnv, TwoOpensOfOneFileConflictUnderFlock) {
  auto env = quiet_env();
  auto a = env.open_file("config.yaml");
  auto b = env.open_file("config.yaml");
  a->flock(FlockMode::exclusive);
  EXPECT_FALSE(b->try_flock(FlockMode::shared));
  a->unlock();
  EXPECT_TRUE(b->try_flock(FlockMode::shared));
  EXPECT_TRUE(a->try_flock(FlockMode::shared));
  EXPECT_FALSE(a->try_flock(FlockMode::exclusive)) << "b's shared lock blocks the upgrade";
}

TEST(ThreadEnv, ActorLocalValuesBelongToTheirThread) {
  auto env = quiet_env();
  ActorLocal<int> local(env);
  auto sum = env.new_shared_var("sum", 0);
  auto m = env.new_mutex("m");
  env.run_actors(3, [&](ActorId a) {
    for (int i = 0; i < 10; ++i) local.get() += a + 1;
    std::lock_guard g(*m);
    sum->store(sum->load() + local.get());
  });
  EXPECT_EQ(sum->load(), 10 + 20 + 30);
}

// The gate that steers a real run along a trace: each actor takes its steps at their turn
// in the order; a step still running after blocked_after lets the next go; the steps of an
// actor that never comes are skipped.
struct GateRun {
  std::mutex m;
  std::vector<ActorId> taken;
  void take(ActorId a) {
    std::lock_guard l(m);
    taken.push_back(a);
  }
};

TEST(ScheduleGate, ThreadsTakeTheirStepsInTheTracesOrder) {
  using namespace std::chrono_literals;
  real::ScheduleGate gate({0, 1, 1, 0, 1}, 10s, 10s);
  GateRun run;
  auto actor = [&](ActorId a, int steps) {
    for (int k = 0; k < steps; ++k) {
      gate.before(a);
      run.take(a);
    }
    gate.ended(a);
  };
  std::thread b(actor, 1, 3);
  std::thread a(actor, 0, 2);
  a.join();
  b.join();
  EXPECT_EQ(run.taken, (std::vector<ActorId>{0, 1, 1, 0, 1}));
  EXPECT_EQ(gate.followed(), 5u);
  EXPECT_EQ(gate.skipped(), 0u);
}

TEST(ScheduleGate, AStepThatWaitsLetsTheNextGoAndAMissingActorsStepsAreSkipped) {
  using namespace std::chrono_literals;
  // Actor 0's first step waits until actor 1 has taken its step (a lock 1 holds); actor 2
  // never comes.
  real::ScheduleGate gate({0, 1, 2, 0}, 20ms, 20ms);
  GateRun run;
  std::atomic<bool> released{false};
  std::thread a([&] {
    gate.before(0);
    while (!released) std::this_thread::sleep_for(1ms);
    run.take(0);
    gate.before(0);
    run.take(0);
    gate.ended(0);
  });
  std::thread b([&] {
    gate.before(1);
    run.take(1);
    released = true;
    gate.ended(1);
  });
  a.join();
  b.join();
  EXPECT_EQ(run.taken, (std::vector<ActorId>{1, 0, 0}));
  EXPECT_EQ(gate.followed(), 3u);
  EXPECT_EQ(gate.skipped(), 1u);
}

class RealServer : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* conninfo = std::getenv("LOCKSTEP_PG_CONNINFO");
    if (conninfo == nullptr) GTEST_SKIP() << "LOCKSTEP_PG_CONNINFO is not set: no throwaway PostgreSQL on this machine";
    conninfo_ = conninfo;
  }
  real::ConfirmReport confirm(const std::string& scenario, int iterations) {
    const std::string dir = scenario.find('/') == std::string::npos ? "/scenarios/headspace/" : "/scenarios/";
    const Scenario s = load_scenario(std::string(lockstep_source_dir()) + dir + scenario);
    real::ConfirmOptions o;
    o.conninfo = conninfo_;
    o.iterations = iterations;
    return real::confirm(*s.configured, o);
  }
  std::string conninfo_;
};

TEST_F(RealServer, CorrectDesignScenariosConfirmWithoutViolations) {
  for (const char* scenario : {"t01-same-agent-serialised.json", "two-agents.json", "t08-exception-releases-lock.json",
                               "config-editor.json", "summarise.json"}) {
    const real::ConfirmReport r = confirm(scenario, 10);
    EXPECT_EQ(r.iterations, 10) << scenario;
    EXPECT_FALSE(r.hung) << scenario;
    for (const auto& v : r.violations) ADD_FAILURE() << scenario << " iteration " << v.iteration << ": " << v.violation.message;
    EXPECT_GT(r.pg_locks.acquisitions + r.memory_locks.acquisitions, 0u) << scenario << " took no lock";
  }
}

// Seed 002's write protocol over the POSIX filesystem (the Env's private directory) and the
// server: the seed's order, with a reader and with two writers, never shows a violation.
TEST_F(RealServer, TheWriteProtocolConfirmsWithoutViolations) {
  for (const char* scenario : {"dal/write-protocol.json", "dal/write-protocol-reader.json", "dal/write-protocol-two-writers.json"}) {
    const real::ConfirmReport r = confirm(scenario, 5);
    EXPECT_EQ(r.iterations, 5) << scenario;
    EXPECT_FALSE(r.hung) << scenario;
    for (const auto& v : r.violations) ADD_FAILURE() << scenario << " iteration " << v.iteration << ": " << v.violation.message;
    EXPECT_GT(r.pg_locks.acquisitions, 0u) << scenario << " took no lock";
  }
}

// The writer crashed at a drawn crash point in every iteration after the first: its
// restarted process recovers the stale lock and the tmp directory each time.
TEST_F(RealServer, TheWriteProtocolRecoversFromCrashes) {
  const real::ConfirmReport r = confirm("dal/write-protocol.json", 6);
  EXPECT_EQ(r.iterations, 6);
  for (const auto& v : r.violations) ADD_FAILURE() << "iteration " << v.iteration << ": " << v.violation.message;
  EXPECT_GT(r.crashes.points, 0u);
  EXPECT_GE(r.crashes.injected, 1);
  EXPECT_LE(r.crashes.injected, 5);  // never in the first, which counts the points
  EXPECT_GE(r.crashes.armed, 6);
}

TEST_F(RealServer, TheXactLockVariantBreaksMutualExclusionOnTheServerToo) {
  const real::ConfirmReport r = confirm("bug-xact-lock.json", 10);
  ASSERT_FALSE(r.violations.empty());
  EXPECT_EQ(r.violations.front().violation.invariant, "agent_mutual_exclusion");
  EXPECT_FALSE(r.violations.front().history.empty()) << "a violation comes with the events that led to it";
}

// --until-violation: the run ends with the first failing iteration; --iterations bounds it.
TEST_F(RealServer, UntilViolationStopsAtTheFirstFailingIteration) {
  const auto run = lockstep::testing::run_cli_in_process(
      {"confirm", std::string(lockstep_source_dir()) + "/scenarios/headspace/bug-xact-lock.json", "--pg", conninfo_,
       "--iterations", "200", "--until-violation", "--json"});
  ASSERT_EQ(run.code, 0) << run.out << run.err;  // the expected violation, seen
  const auto j = nlohmann::json::parse(run.out);
  ASSERT_EQ(j["violations"].size(), 1u) << run.out;
  EXPECT_EQ(j["iterations"], j["violations"][0]["iteration"]);
  EXPECT_LT(j["iterations"].get<int>(), 200);
}

// --aim TRACE: the run follows the trace's order of actors; a trace of another scenario is
// bad input.
TEST_F(RealServer, AimedRunsFollowATraceOfTheScenario) {
  const std::string dir = std::string(lockstep_source_dir());
  const auto run = lockstep::testing::run_cli_in_process(
      {"confirm", dir + "/scenarios/headspace/bug-config-no-flock.json", "--pg", conninfo_, "--iterations", "20",
       "--until-violation", "--aim", dir + "/traces/headspace/bug-config-no-flock.json", "--json"});
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["aim"], dir + "/traces/headspace/bug-config-no-flock.json");
  EXPECT_EQ(j["violations"].size(), 1u) << run.out;
  EXPECT_GT(j["aimed"]["followed"].get<int>(), 0) << run.out;
  const auto other = lockstep::testing::run_cli_in_process(
      {"confirm", dir + "/scenarios/headspace/bug-config-no-flock.json", "--pg", conninfo_, "--aim",
       dir + "/traces/headspace/bug-xact-lock.json"});
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("a trace of scenario \"bug-xact-lock\""), std::string::npos) << other.err;
}

TEST_F(RealServer, InMemoryLocksDoNotSerialiseTwoProcesses) {
  const real::ConfirmReport r = confirm("bug-in-memory-locks.json", 10);
  EXPECT_GT(r.by_invariant.count("agent_mutual_exclusion"), 0u);
}

TEST_F(RealServer, Bug17686LeaksWithTheNaiveClientAndNotWithTheService) {
  // Phantoms are rare (a few per hundred rounds here): up to 5 batches until one shows.
  real::PhantomCounts naive, service;
  for (int batch = 0; batch < 5 && naive.phantoms == 0; ++batch) {
    real::PhantomOptions o;
    o.conninfo = conninfo_;
    o.rounds = 300;
    o.seed = static_cast<std::uint64_t>(batch) + 1;
    const real::PhantomReport r = real::run_phantom_rounds(o);
    naive.rounds += r.naive.rounds;
    naive.phantoms += r.naive.phantoms;
    naive.leaked += r.naive.leaked;
    service.rounds += r.service.rounds;
    service.phantoms += r.service.phantoms;
    service.leaked += r.service.leaked;
  }
  EXPECT_GE(naive.phantoms, 1) << "no phantom in " << naive.rounds << " rounds";
  EXPECT_EQ(naive.leaked, naive.phantoms) << "the naive client leaks every phantom";
  EXPECT_EQ(service.leaked, 0) << "the service cleaned up " << service.phantoms << " phantoms; none may leak";
  std::printf("Bug #17686: naive %d phantoms in %d rounds (%d leaked); service %d phantoms cleaned, %d leaked\n", naive.phantoms,
              naive.rounds, naive.leaked, service.phantoms, service.leaked);
}

}  // namespace
}  // namespace lockstep
