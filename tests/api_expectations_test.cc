// The expectations of <lockstep/gtest.h> and <lockstep/rapidcheck.h> for every verdict (the
// second team's note 1: LOCKSTEP_EXPECT_VIOLATION failed on a liveness verdict, and nothing
// expected one): each passes on its verdict and name, and fails, with the verdict, trace
// and replay command in its message, on another.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <filesystem>

#include "lockstep/gtest.h"
#include "lockstep/lockstep.h"
#include "lockstep/rapidcheck.h"

namespace lockstep {
namespace {

struct Flag {
  explicit Flag(Env& env) : held(env.new_shared_var("held", 0)) {}
  std::unique_ptr<SharedVar> held;
};

struct Locks {
  explicit Locks(Env& env) : m(env.new_mutex("m")), n(env.new_mutex("n")) {}
  std::unique_ptr<Mutex> m, n;
};

std::string dir(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("lockstep-expect-") + name)).string();
}

// a takes the flag and never gives it back; b spins on it (its obligation hot when asked).
Model<Flag> abandoned_flag(const char* name, bool obligation) {
  return Model<Flag>(name)
      .actors(2,
              [obligation](Flag& s, Env& env, ActorId self) {
                if (self == 0) {
                  s.held->store(1);
                  return;
                }
                if (obligation) env.hot("acquire_b");
                while (!s.held->compare_exchange(0, 1)) {
                }
                if (obligation) env.cold("acquire_b");
              })
      .trace_dir(dir(name));
}

// Two mutexes taken in opposite orders.
Model<Locks> opposite_orders() {
  return Model<Locks>("opposite-orders")
      .actors(2,
              [](Locks& s, Env&, ActorId self) {
                Mutex& first = self == 0 ? *s.m : *s.n;
                Mutex& second = self == 0 ? *s.n : *s.m;
                first.lock();
                second.lock();
                second.unlock();
                first.unlock();
              })
      .trace_dir(dir("deadlock"));
}

TEST(Expectations, LivenessNamesTheObligation) { LOCKSTEP_EXPECT_LIVENESS(abandoned_flag("liveness", true), "acquire_b"); }

TEST(Expectations, LivelockNamesALoopingActor) { LOCKSTEP_EXPECT_LIVELOCK(abandoned_flag("livelock", false), "b"); }

TEST(Expectations, Deadlock) { LOCKSTEP_EXPECT_DEADLOCK(opposite_orders()); }

TEST(Expectations, TheGeneralFormTakesAKindAndAName) {
  LOCKSTEP_EXPECT_VERDICT(abandoned_flag("general", true), Verdict::liveness, "acquire_b");
  LOCKSTEP_EXPECT_VERDICT(abandoned_flag("general-any", false), Verdict::livelock, "");
}

TEST(Expectations, AnotherVerdictOrNameFailsWithTheTraceAndTheReplayCommand) {
  EXPECT_NONFATAL_FAILURE(LOCKSTEP_EXPECT_VIOLATION(abandoned_flag("mismatch-1", true), "acquire_b"),
                          "expected violation of acquire_b, got:\nlockstep: liveness acquire_b");
  EXPECT_NONFATAL_FAILURE(LOCKSTEP_EXPECT_LIVENESS(abandoned_flag("mismatch-2", true), "acquire_a"), "LOCKSTEP_REPLAY=");
  EXPECT_NONFATAL_FAILURE(LOCKSTEP_EXPECT_LIVELOCK(abandoned_flag("mismatch-3", false), "a"), "expected livelock of a");
  EXPECT_NONFATAL_FAILURE(LOCKSTEP_EXPECT_DEADLOCK(abandoned_flag("mismatch-4", false)), "trace");
}

TEST(Expectations, TheReportKnowsTheLoopingActors) {
  const ModelReport r = abandoned_flag("looping", false).run();
  ASSERT_EQ(r.verdict, Verdict::livelock) << r.describe();
  EXPECT_EQ(r.looping, std::vector<std::string>{"b"});
  EXPECT_TRUE(r.is(Verdict::livelock, "b"));
  EXPECT_FALSE(r.is(Verdict::livelock, "a"));
  EXPECT_FALSE(r.is(Verdict::liveness));
}

RC_GTEST_PROP(ExpectationsRc, EveryVerdictHasItsAssertion, ()) {
  const bool obligation = *rc::gen::arbitrary<bool>();
  if (obligation) {
    LOCKSTEP_RC_ASSERT_LIVENESS(abandoned_flag("rc-liveness", true), "acquire_b");
  } else {
    LOCKSTEP_RC_ASSERT_LIVELOCK(abandoned_flag("rc-livelock", false), "b");
  }
  LOCKSTEP_RC_ASSERT_DEADLOCK(opposite_orders());
}

}  // namespace
}  // namespace lockstep
