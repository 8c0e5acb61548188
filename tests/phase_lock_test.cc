// The phase_lock system (seed 003): its scenarios reach their expected verdicts, and on the
// seed's timeout timeline the first execution's release lets a third execution start.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lockstep/model/scenario.h"
#include "lockstep/sim/strategies/strategy.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

const std::string kDir = std::string(lockstep_source_dir()) + "/scenarios/phase_lock/";

TEST(PhaseLock, EveryScenarioReachesItsExpectedVerdict) {
  EXPECT_GE(testing::expect_every_scenario_as_expected(kDir), 8);
}

// The timeline of timeout-release-frees-other with neither invariant judged: the log of
// its one execution shows execution 3 starting at 6.5 minutes while execution 2 runs.
TEST(PhaseLock, TheStrayReleaseLetsAThirdExecutionStartBesideTheSecond) {
  auto doc = read_json_file(kDir + "timeout-release-frees-other.json");
  doc["config"]["skip_invariants"] = {"no_duplicate_execution", "release_by_owner"};
  const Scenario s = testing::scenario_from_json(doc);
  auto strategy = sim::make_strategy("dfs", 1);
  ASSERT_TRUE(strategy->next_execution());
  sim::RunLimits limits;
  limits.time = TimeMode::timed;
  const sim::Trace t = sim::record_execution(s, *strategy, limits);
  std::vector<std::string> starts;
  for (const auto& e : t.events) {
    if (e.op == "observe exec_start" || e.op == "observe exec_end") {
      starts.push_back(fmt::format("{} {} {}", e.time_ns / 1'000'000'000, e.op.substr(8), e.result));
    }
  }
  EXPECT_EQ(starts, (std::vector<std::string>{"0 exec_start 1 1", "330 exec_start 1 2", "360 exec_end 1 1",
                                              "390 exec_start 1 3", "450 exec_end 1 2", "450 exec_end 1 3"}));
}

}  // namespace
}  // namespace lockstep
