// The supervisor system (seed 004): lockdep finds an inverted order without a deadlock,
// ranks refuse it at once, Risk 1 deadlocks only in its variant, and bad input is named.
#include <string>

#include <gtest/gtest.h>

#include "lockstep/model/scenario.h"
#include "test_support.h"

namespace lockstep {
namespace {

const std::string kDir = std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/supervisor/";

nlohmann::json scenario(nlohmann::json actors, nlohmann::json config = nullptr) {
  nlohmann::json d = {{"format", "lockstep-scenario/1"}, {"name", "t"}, {"system", "supervisor"}, {"actors", std::move(actors)}};
  if (!config.is_null()) d["config"] = std::move(config);
  return d;
}

TEST(Supervisor, EveryScenarioReachesItsExpectedVerdict) {
  EXPECT_GE(testing::expect_every_scenario_as_expected(kDir), 7);
}

TEST(Supervisor, LockdepReportsAnInversionThatNoExecutionDeadlocksOn) {
  // One goroutine, one execution: it cannot deadlock, yet the inversion is reported.
  const nlohmann::json actors = {{"a", {"remove_worker:w1", "lookup_under_worker_lock:w1"}}};
  const auto report = testing::check(testing::scenario_from_json(scenario(actors)));
  EXPECT_EQ(report.result.verdict, Verdict::violation);
  EXPECT_EQ(report.result.stats.by_verdict[static_cast<std::size_t>(Verdict::deadlock)], 0u);
  ASSERT_TRUE(report.result.first_failure);
  const std::string& m = report.result.first_failure->result.message;
  EXPECT_NE(m.find("remove_worker:w1 on a: Supervisor[0].mu then WorkerContext.mu"), std::string::npos) << m;
  EXPECT_NE(m.find("lookup_under_worker_lock:w1 on a: WorkerContext.mu then Supervisor[0].mu"), std::string::npos) << m;
}

TEST(Supervisor, ConsistentNestingIsNotReported) {
  const nlohmann::json actors = {{"a", {"remove_worker:w1", "remove_worker:w2"}}, {"b", {"remove_worker:w2"}}};
  EXPECT_EQ(testing::check(testing::scenario_from_json(scenario(actors))).result.verdict, Verdict::pass);
}

TEST(Supervisor, BadInputNamesThePlace) {
  auto error = [](const nlohmann::json& doc) {
    try {
      testing::scenario_from_json(doc);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error(scenario({{"a", {"teleport"}}})).find("/actors/a/0: unknown operation"), std::string::npos);
  EXPECT_NE(error(scenario({{"a", {"tick_worker:w9"}}})).find("needs a worker"), std::string::npos);
  EXPECT_NE(error(scenario({{"a", {"start:w1"}}})).find("takes no worker"), std::string::npos);
  EXPECT_NE(error(scenario({{"a", {"start"}}}, {{"ranks", {{"x", "high"}}}})).find("/config/ranks/x"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
