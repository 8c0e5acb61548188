// The dal system (seed 002): its scenarios reach their expected verdicts; a stall past the
// lease breaks the seed's design and fencing repairs it; recovery is audited; bad input
// names the place.
#include <string>

#include <gtest/gtest.h>

#include "lockstep/model/scenario.h"
#include "test_support.h"

namespace lockstep {
namespace {

const std::string kDir = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/dal/";

TEST(Dal, EveryScenarioReachesItsExpectedVerdict) {
  EXPECT_GE(testing::expect_every_scenario_as_expected(kDir), 11);
}

TEST(Dal, WithoutTheStallTheSeedsDesignHolds) {
  // The stall-past-lease timeline with the pause never chosen: no recovery, one writer at a time.
  auto doc = read_json_file(kDir + "stall-past-lease.json");
  doc["faults"]["stall"]["durations_ms"] = {0};
  const auto report = testing::check(testing::scenario_from_json(doc));
  EXPECT_EQ(report.result.verdict, Verdict::pass);
}

TEST(Dal, BadInputNamesThePlace) {
  auto error = [](nlohmann::json actors) {
    nlohmann::json d = {{"format", "lockstep-scenario/1"}, {"name", "t"},       {"system", "dal"},
                        {"actors", std::move(actors)},      {"explore", {{"time", "timed"}}}};
    try {
      testing::scenario_from_json(d);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({{{"kind", "writer"}, {"resource", "disk:1"}}}).find("/actors/0"), std::string::npos);
  EXPECT_NE(error({{{"kind", "wizard"}, {"resource", "map:m"}}}).find("/actors/0/kind"), std::string::npos);
  EXPECT_NE(error({{{"kind", "job"}, {"resources", {"map:m", "project:p"}}}}).find("project first"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
