// The explorer: exhaustive counts, bounds, keep-going statistics, progress, and what
// strategies are told about each step.
#include "lockstep/sim/explore/explorer.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace lockstep {
namespace {

using testing::check;
using testing::scenario_from_json;
using testing::script_scenario;

nlohmann::json lockinc(int n) {
  return {{"format", "lockstep-scenario/1"}, {"name", "lockinc"}, {"system", "bench"},
          {"config", {{"program", "lockinc"}, {"n", n}}}};
}

TEST(Explorer, DfsOnLockincExploresOneExecutionPerOrderOfCriticalSections) {
  // A blocked lock is a disabled transition, so the only freedom is the order in which the
  // actors take the mutex: n! executions, each of 4n steps.
  const std::uint64_t expected[] = {0, 1, 2, 6, 24, 120};
  for (int n = 1; n <= 5; ++n) {
    const auto report = check(scenario_from_json(lockinc(n)));
    EXPECT_EQ(report.result.verdict, Verdict::pass) << n;
    EXPECT_EQ(report.result.stats.executions, expected[n]) << n;
    EXPECT_EQ(report.result.stats.steps, expected[n] * 4 * n) << n;
  }
}

TEST(Explorer, KeepGoingCountsEveryFailingExecution) {
  auto doc = script_scenario({{"a", {"read x r", "write x r+1"}}, {"b", {"read x r", "write x r+1"}}},
                             {{"check", {"x == 2"}}}, {{"stop_at_first", false}, {"strategy", "dfs"}});
  const auto report = check(scenario_from_json(doc));
  EXPECT_EQ(report.result.verdict, Verdict::violation);
  EXPECT_EQ(report.result.stats.executions, 6u);  // C(4, 2) interleavings
  EXPECT_EQ(report.result.stats.failures, 4u);    // both read before either writes
  EXPECT_EQ(report.result.stats.by_verdict[static_cast<int>(Verdict::pass)], 2u);
  EXPECT_TRUE(report.result.exhaustive);
  EXPECT_EQ(report.result.first_failure->execution, 2u);
}

TEST(Explorer, ExecutionBoundGivesIncomplete) {
  const auto report = check(scenario_from_json(lockinc(4)), {.settings = {.max_executions = 5}});
  EXPECT_EQ(report.result.verdict, Verdict::incomplete);
  EXPECT_EQ(report.result.stats.executions, 5u);
  EXPECT_EQ(report.result.stop_reason, "bound of 5 executions reached");
}

TEST(Explorer, WallTimeBoundUsesTheCallersClock) {
  const Scenario s = scenario_from_json(lockinc(5));
  double fake_now = 0;
  sim::ExploreOptions options;
  options.time_limit_s = 1.0;
  options.elapsed_seconds = [&fake_now] { return fake_now += 0.1; };  // 0.1 s per look
  auto dfs = sim::make_strategy("dfs", 1);
  const auto result = sim::explore_system(*s.configured, *dfs, options);
  EXPECT_EQ(result.verdict, Verdict::incomplete);
  EXPECT_LT(result.stats.executions, 120u);
  EXPECT_EQ(result.stop_reason, "bound of 1 s of wall time reached");
}

TEST(Explorer, ProgressIsReportedPeriodicallyAndAtTheEnd) {
  const Scenario s = scenario_from_json(lockinc(5));
  std::vector<std::uint64_t> seen;
  sim::ExploreOptions options;
  options.progress_interval_executions = 50;
  options.progress = [&seen](const sim::ExploreStats& st) { seen.push_back(st.executions); };
  auto dfs = sim::make_strategy("dfs", 1);
  sim::explore_system(*s.configured, *dfs, options);
  EXPECT_EQ(seen, (std::vector<std::uint64_t>{50, 100, 120}));
}

TEST(Explorer, RandomWalkIsReproducibleFromItsSeed) {
  auto doc = script_scenario({{"a", {"read x r", "write x r+1", "read x r", "write x r+1"}},
                              {"b", {"read x r", "write x r+1", "read x r", "write x r+1"}}},
                             {{"check", {"x == 4"}}}, {{"strategy", "random"}, {"max_executions", 1000}});
  const Scenario s = scenario_from_json(doc);
  const auto first = check(s, {.settings = {.seed = 42}});
  const auto again = check(s, {.settings = {.seed = 42}});
  ASSERT_EQ(first.result.verdict, Verdict::violation);
  EXPECT_EQ(first.result.first_failure->decisions, again.result.first_failure->decisions);
  EXPECT_EQ(first.result.first_failure->execution, again.result.first_failure->execution);
}

// Records what the scheduler tells a strategy about each step.
class RecordingDfs final : public sim::Strategy {
 public:
  RecordingDfs() : inner_(sim::make_strategy("dfs", 1)) {}
  std::string_view name() const override { return "recording"; }
  bool next_execution() override { return inner_->next_execution(); }
  std::size_t pick(std::span<const sim::Transition> enabled, std::uint64_t step) override {
    for (const auto& t : enabled) offered.push_back(t.op->footprint.access);
    return inner_->pick(enabled, step);
  }
  std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) override {
    return inner_->choose(n, label, step);
  }
  void executed(const sim::Transition&, const sim::Footprint& f) override { effective.push_back(f.access); }
  sim::StrategyStatus status() const override { return inner_->status(); }

  std::vector<sim::Access> offered, effective;

 private:
  std::unique_ptr<sim::Strategy> inner_;
};

TEST(Explorer, StrategiesSeeDeclaredAndEffectiveFootprints) {
  auto doc = script_scenario({{"a", {"cas x 1 2", "cas x 0 1", "lock m", "unlock m"}}});
  const Scenario s = scenario_from_json(doc);
  RecordingDfs strategy;
  sim::explore_system(*s.configured, strategy, {});
  using A = sim::Access;
  EXPECT_EQ(strategy.offered, (std::vector<A>{A::read_write, A::read_write, A::acquire, A::release}));
  // The failed CAS is only a read; the successful one stays read-modify-write.
  EXPECT_EQ(strategy.effective, (std::vector<A>{A::read, A::read_write, A::acquire, A::release}));
}

}  // namespace
}  // namespace lockstep
