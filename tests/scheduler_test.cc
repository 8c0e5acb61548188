// The scheduler: every verdict kind, blocking and wake-up, choice points, timers in both time
// modes, unwinding of unfinished actors, actor-local storage, determinism checks.
#include "lockstep/sim/sched/scheduler.h"

#include <map>
#include <set>

#include <gtest/gtest.h>

#include "test_support.h"

namespace lockstep {
namespace {

using testing::check;
using testing::LambdaSystem;
using testing::scenario_from_json;
using testing::script_scenario;

Verdict verdict_of(const nlohmann::json& doc) { return check(scenario_from_json(doc)).result.verdict; }

TEST(Verdicts, PassWhenEveryExecutionHolds) {
  auto doc = script_scenario({{"a", {"lock m", "read x r", "write x r+1", "unlock m"}},
                              {"b", {"lock m", "read x r", "write x r+1", "unlock m"}}},
                             {{"check", {"x == 2"}}});
  const auto report = check(scenario_from_json(doc));
  EXPECT_EQ(report.result.verdict, Verdict::pass);
  EXPECT_TRUE(report.result.exhaustive);
  EXPECT_FALSE(report.trace.has_value());
}

TEST(Verdicts, ViolationNamesTheInvariantAndCarriesATrace) {
  auto doc = script_scenario({{"a", {"read x r", "write x r+1"}}, {"b", {"read x r", "write x r+1"}}},
                             {{"check", {"x == 2"}}});
  const auto report = check(scenario_from_json(doc));
  ASSERT_EQ(report.result.verdict, Verdict::violation);
  EXPECT_EQ(report.result.first_failure->result.invariant, "final_state");
  EXPECT_EQ(report.result.first_failure->result.message, "check \"x == 2\" failed: x is 1");
  ASSERT_TRUE(report.trace.has_value());
  EXPECT_EQ(report.trace->events.size(), 4u);
}

TEST(Verdicts, DeadlockSaysWhoWaitsOnWhat) {
  auto doc = script_scenario({{"a", {"lock m1", "lock m2", "unlock m2", "unlock m1"}},
                              {"b", {"lock m2", "lock m1", "unlock m1", "unlock m2"}}});
  const auto report = check(scenario_from_json(doc));
  ASSERT_EQ(report.result.verdict, Verdict::deadlock);
  const std::string& message = report.result.first_failure->result.message;
  EXPECT_NE(message.find("a waits at \"lock m2\" for mutex m2 held by b"), std::string::npos) << message;
  EXPECT_NE(message.find("b waits at \"lock m1\" for mutex m1 held by a"), std::string::npos) << message;
}

TEST(Verdicts, StepBoundWhenAnExecutionRunsTooLong) {
  auto doc = script_scenario({{"a", {"write x 1", "write x 2", "write x 3"}}}, nullptr, {{"max_steps", 2}});
  EXPECT_EQ(verdict_of(doc), Verdict::step_bound);
  // Exactly at the bound is fine.
  doc["explore"]["max_steps"] = 3;
  EXPECT_EQ(verdict_of(doc), Verdict::pass);
}

TEST(Verdicts, ModelErrorWhenAnActorThrows) {
  LambdaSystem<testing::NoState> system(1, [](testing::NoState&, Env&, ActorId) { throw std::runtime_error("boom"); });
  const auto result = testing::explore(system);
  ASSERT_EQ(result.verdict, Verdict::model_error);
  EXPECT_EQ(result.first_failure->result.message, "actor a threw: boom");
}

TEST(Verdicts, IncompleteWhenBoundsStopTheSearchNeverPass) {
  auto doc = script_scenario({{"a", {"write x 1", "write y 1"}}, {"b", {"read y r", "read x s"}}}, nullptr,
                             {{"max_executions", 3}});
  const auto report = check(scenario_from_json(doc));
  EXPECT_EQ(report.result.verdict, Verdict::incomplete);
  EXPECT_EQ(report.result.stats.executions, 3u);
  EXPECT_FALSE(report.result.exhaustive);
  // A random walk is never exhaustive, however many executions pass.
  doc["explore"] = {{"strategy", "random"}, {"max_executions", 500}};
  EXPECT_EQ(verdict_of(doc), Verdict::incomplete);
}

TEST(Blocking, AWaiterRunsOnlyOnceWokenAndTakesTheLock) {
  struct State {
    explicit State(Env& env) : m(env.new_mutex("m")), inside(env.new_shared_var("inside", 0)) {}
    std::unique_ptr<Mutex> m;
    std::unique_ptr<SharedVar> inside;
    int max_inside = 0;
  };
  LambdaSystem<State> system(3, [](State& s, Env&, ActorId) {
    s.m->lock();
    const auto n = s.inside->load() + 1;
    s.inside->store(n);
    s.max_inside = std::max<int>(s.max_inside, static_cast<int>(n));
    s.inside->store(n - 1);
    s.m->unlock();
  }, [](State& s) -> std::optional<Violation> {
    if (s.max_inside != 1) return Violation{"mutual_exclusion", "two actors inside"};
    return std::nullopt;
  });
  const auto result = testing::explore(system);
  EXPECT_EQ(result.verdict, Verdict::pass);
  EXPECT_EQ(result.stats.executions, 6u);  // 3! orders of the critical sections
}

// Records the objects each actor's writes touched, over every execution of the strategy it
// wraps.
class WrittenObjects final : public sim::Strategy {
 public:
  explicit WrittenObjects(std::unique_ptr<sim::Strategy> inner) : inner_(std::move(inner)) {}
  std::string_view name() const override { return inner_->name(); }
  bool next_execution() override { return inner_->next_execution(); }
  std::size_t pick(std::span<const sim::Transition> enabled, std::uint64_t step) override {
    return inner_->pick(enabled, step);
  }
  std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    return inner_->choose(n, label, step);
  }
  void var_step(const sim::VarStep& v) override { inner_->var_step(v); }
  void executed(const sim::Transition& t, const sim::Footprint& f) override {
    inner_->executed(t, f);
    if (f.access == sim::Access::write) written[t.actor].insert(f.object);
  }
  sim::StrategyStatus status() const override { return inner_->status(); }
  std::map<ActorId, std::set<sim::ObjectId>> written;

 private:
  std::unique_ptr<sim::Strategy> inner_;
};

TEST(Objects, AnObjectHasOneIdInEveryExecutionHoweverLateItIsMade) {
  // Each actor makes its own variable after a first step, so the two are made in either
  // order. Footprints kept from one execution (sleep sets, wakeup trees) must name the same
  // objects in the next: each variable keeps its id.
  struct State {
    explicit State(Env& env) : gate(env.new_shared_var("gate", 0)) {}
    std::unique_ptr<SharedVar> gate;
  };
  LambdaSystem<State> system(2, [](State& s, Env& env, ActorId a) {
    (void)s.gate->load();
    auto own = env.new_shared_var(a == 0 ? "a's" : "b's", 0);
    own->store(1);
  });
  WrittenObjects recorder(sim::make_strategy("dfs", 1));
  const auto result = sim::explore_system(system, recorder, {});
  EXPECT_EQ(result.verdict, Verdict::pass);
  EXPECT_GT(result.stats.executions, 2u);
  ASSERT_EQ(recorder.written.size(), 2u);
  EXPECT_EQ(recorder.written[0].size(), 1u);
  EXPECT_EQ(recorder.written[1].size(), 1u);
  EXPECT_NE(*recorder.written[0].begin(), *recorder.written[1].begin());
}

TEST(ChoicePoints, DfsExploresEveryValueAndRecordsIt) {
  struct State {
    explicit State(Env&) {}
    int seen = 0;
  };
  int total = 0;
  LambdaSystem<State> system(1, [&total](State&, Env& env, ActorId) {
    const int a = env.choose(3, "first");
    const int b = env.choose(2, "second");
    total += 1 + a * 2 + b;
  });
  const auto result = testing::explore(system);
  EXPECT_EQ(result.verdict, Verdict::pass);
  EXPECT_EQ(result.stats.executions, 6u);
  EXPECT_EQ(total, 1 + 2 + 3 + 4 + 5 + 6);  // each (a, b) pair exactly once
}

TEST(ChoicePoints, AChoiceReachesAViolationAndTheTraceRecordsIt) {
  LambdaSystem<testing::NoState> system(1, [](testing::NoState&, Env& env, ActorId) {
    if (env.choose(4, "fault") == 3) env.observe({"fault_fired", 3, 1});
  }, nullptr, [](testing::NoState&, const Event& e) -> std::optional<Violation> {
    if (e.name == "fault_fired") return Violation{"no_fault", "the fault fired"};
    return std::nullopt;
  });
  const auto result = testing::explore(system);
  ASSERT_EQ(result.verdict, Verdict::violation);
  EXPECT_EQ(result.stats.executions, 4u);
  // The choice, then the ordered observation: a visible operation of its own.
  ASSERT_EQ(result.first_failure->decisions.size(), 2u);
  EXPECT_EQ(result.first_failure->decisions[0], (sim::Decision{sim::Decision::Kind::choice, 3}));
  EXPECT_EQ(result.first_failure->decisions[1], (sim::Decision{sim::Decision::Kind::run, 0}));
}

TEST(Time, TimedModeAdvancesTheClockToTheEarliestDeadline) {
  struct State {
    explicit State(Env&) {}
    std::vector<std::pair<ActorId, std::int64_t>> wakes;
  };
  sim::ExploreOptions options;
  options.limits.time = TimeMode::timed;
  LambdaSystem<State> system(2, [](State& s, Env& env, ActorId a) {
    env.sleep_for(std::chrono::milliseconds(a == 0 ? 30 : 10));
    s.wakes.emplace_back(a, std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count());
  }, [](State& s) -> std::optional<Violation> {
    const std::vector<std::pair<ActorId, std::int64_t>> expected = {{1, 10}, {0, 30}};
    if (s.wakes != expected) return Violation{"wake_order", "sleeps did not end at their deadlines"};
    return std::nullopt;
  });
  const auto result = testing::explore(system, "dfs", options);
  EXPECT_EQ(result.verdict, Verdict::pass);
  EXPECT_EQ(result.stats.executions, 1u);  // nothing else can happen in timed mode
}

TEST(Time, UntimedModeLetsAnyPendingTimeoutFire) {
  auto doc = script_scenario({{"a", {"lock m", "write x 1", "unlock m"}}, {"b", {"lockfor m 10 ok"}}},
                             {{"check", {"b.ok == 1"}}}, {{"stop_at_first", false}});
  const auto report = check(scenario_from_json(doc));
  EXPECT_EQ(report.result.verdict, Verdict::violation);
  EXPECT_GT(report.result.stats.failures, 0u);
}

TEST(Unwinding, UnfinishedActorsAreUnwoundAndTheirDestructorsRun) {
  struct Counted {
    explicit Counted(int* n) : n(n) {}
    ~Counted() { ++*n; }
    int* n;
  };
  struct State {
    explicit State(Env& env) : m1(env.new_mutex("m1")), m2(env.new_mutex("m2")) {}
    std::unique_ptr<Mutex> m1, m2;
  };
  int destroyed = 0;
  LambdaSystem<State> system(2, [&destroyed](State& s, Env&, ActorId a) {
    Counted c(&destroyed);
    Mutex& first = a == 0 ? *s.m1 : *s.m2;
    Mutex& second = a == 0 ? *s.m2 : *s.m1;
    std::lock_guard g1(first);  // released by the unwinding: a release never throws
    std::lock_guard g2(second);
  });
  sim::ExploreOptions options;
  options.stop_at_first = false;
  const auto result = testing::explore(system, "dfs", options);
  EXPECT_EQ(result.verdict, Verdict::deadlock);
  EXPECT_GT(result.stats.by_verdict[static_cast<int>(Verdict::pass)], 0u);
  EXPECT_GT(result.stats.failures, 0u);
  EXPECT_EQ(destroyed, 2 * static_cast<int>(result.stats.executions));  // every actor, every execution
}

TEST(ActorLocal, EachActorHasItsOwnValue) {
  struct State {
    explicit State(Env& env) : depth(env), total(env.new_shared_var("total", 0)) {}
    ActorLocal<int> depth;
    std::unique_ptr<SharedVar> total;
  };
  LambdaSystem<State> system(3, [](State& s, Env& env, ActorId a) {
    for (int i = 0; i <= a; ++i) {
      ++s.depth.get();
      env.sleep_for(std::chrono::milliseconds(1));  // let the others interleave
    }
    if (s.depth.get() != a + 1) throw std::logic_error("actor-local value leaked between actors");
  });
  EXPECT_EQ(testing::explore(system).verdict, Verdict::pass);
}

TEST(Determinism, ANondeterministicModelIsAModelError) {
  static int runs = 0;  // state leaking between executions: the model is not deterministic
  runs = 0;
  LambdaSystem<testing::NoState> system(1, [](testing::NoState&, Env& env, ActorId) {
    ++runs;
    env.choose(runs == 1 ? 2 : 3, "leaky");
  });
  const auto result = testing::explore(system);
  ASSERT_EQ(result.verdict, Verdict::model_error);
  EXPECT_NE(result.first_failure->result.message.find("not deterministic"), std::string::npos);
}

TEST(Determinism, EnvRandomIsSeeded) {
  std::vector<std::uint64_t> draws;
  LambdaSystem<testing::NoState> system(1, [&draws](testing::NoState&, Env& env, ActorId) { draws.push_back(env.random(1'000'000)); });
  sim::ExploreOptions options;
  options.limits.seed = 7;
  testing::explore(system, "dfs", options);
  testing::explore(system, "dfs", options);
  options.limits.seed = 8;
  testing::explore(system, "dfs", options);
  ASSERT_EQ(draws.size(), 3u);
  EXPECT_EQ(draws[0], draws[1]);
  EXPECT_NE(draws[0], draws[2]);
}

}  // namespace
}  // namespace lockstep
