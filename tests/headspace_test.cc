// The headspace model: its scenarios reach their expected verdicts through the explorer,
// the canonical scenario takes (and cleans up) phantom grants, and its input is checked.
#include <string>

#include <gtest/gtest.h>

#include "lockstep/model/scenario.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

using testing::check;
using testing::scenario_from_json;

const std::string kDir = std::string(lockstep_source_dir()) + "/scenarios/headspace/";

nlohmann::json hook(const char* route, int agent = 1) { return {{"kind", "hook"}, {"route", route}, {"agent", agent}}; }

nlohmann::json headspace(nlohmann::json actors, nlohmann::json config = nullptr, const char* variant = nullptr) {
  nlohmann::json d = {{"format", "lockstep-scenario/1"}, {"name", "t"}, {"system", "headspace"}, {"actors", std::move(actors)}};
  if (!config.is_null()) d["config"] = std::move(config);
  if (variant != nullptr) d["variant"] = variant;
  return d;
}

TEST(Headspace, TheCanonicalScenarioTakesPhantomGrantsAndCleansEachUp) {
  const auto report = check(load_scenario(kDir + "canonical.json"));
  EXPECT_EQ(report.result.verdict, Verdict::pass);
  EXPECT_TRUE(report.result.exhaustive);
  const auto& marks = report.result.stats.marks;
  ASSERT_TRUE(marks.count("phantom_grant")) << "no explored execution took the phantom grant";
  EXPECT_GT(marks.at("phantom_grant"), 0u);
  EXPECT_EQ(marks.at("phantom_grant"), marks.count("phantom_grant_cleaned_up") ? marks.at("phantom_grant_cleaned_up") : 0u);
}

TEST(Headspace, WithoutTheFaultNoExecutionTakesAPhantomGrant) {
  auto doc = read_json_file(kDir + "canonical.json");
  doc.erase("faults");
  const auto report = check(scenario_from_json(doc));
  EXPECT_EQ(report.result.verdict, Verdict::pass);
  EXPECT_EQ(report.result.stats.marks.count("phantom_grant"), 0u);
}

TEST(Headspace, PoolExhaustionTimesOutAndNeverDeadlocks) {
  // Every execution explored (stop_at_first false): none deadlocks; checkouts time out,
  // and a hook whose db.session checkout times out is lost (hook_not_lost).
  const auto report = check(load_scenario(kDir + "t05-pool-exhaustion.json"));
  EXPECT_TRUE(report.result.exhaustive);
  EXPECT_EQ(report.result.verdict, Verdict::violation);
  EXPECT_EQ(report.result.first_failure->result.invariant, "hook_not_lost");
  EXPECT_EQ(report.result.stats.by_verdict[static_cast<std::size_t>(Verdict::deadlock)], 0u);
  EXPECT_GT(report.result.stats.by_verdict[static_cast<std::size_t>(Verdict::pass)], 0u);
  ASSERT_TRUE(report.result.stats.marks.count("hook_failed_on_lock"));
  EXPECT_GT(report.result.stats.marks.at("hook_failed_on_lock"), 0u);
}

TEST(Headspace, EveryScenarioReachesItsExpectedVerdict) {
  EXPECT_GE(testing::expect_every_scenario_as_expected(kDir), 30);
}

TEST(Headspace, TheCorrectDesignPassesWhereEachVariantFails) {
  // The same actors under the correct design and under the variant: only the variant fails.
  const nlohmann::json actors = {hook("pre_tool_use"), hook("post_tool_use")};
  EXPECT_EQ(check(scenario_from_json(headspace(actors))).result.verdict, Verdict::pass);
  const auto broken = check(scenario_from_json(headspace(actors, nullptr, "xact_lock")));
  EXPECT_EQ(broken.result.verdict, Verdict::violation);
  ASSERT_TRUE(broken.result.first_failure);
  EXPECT_EQ(broken.result.first_failure->result.invariant, "agent_mutual_exclusion");
}

TEST(Headspace, BadInputNamesThePlace) {
  auto bad = [](nlohmann::json doc) {
    try {
      scenario_from_json(doc);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(bad(headspace({{{"kind", "hook"}, {"route", "teleport"}}})).find("/actors/0/route"), std::string::npos);
  EXPECT_NE(bad(headspace({{{"kind", "hook"}, {"route", "stop"}, {"agent", 3}}})).find("/actors/0/agent"), std::string::npos);
  EXPECT_NE(bad(headspace({hook("stop")}, {{"workers", 1}}, "in_memory_locks")).find("workers"), std::string::npos);
  EXPECT_NE(bad(headspace({hook("stop")}, {{"skip_invariants", {"nope"}}})).find("unknown invariant"), std::string::npos);
  auto stall = headspace({hook("stop")});
  stall["faults"] = {{"stall", {{"actor", "stop#1"}, {"durations_ms", {0, 1000}}}}};
  EXPECT_NE(bad(stall).find("timed"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
