// The dal system (seed 002): its scenarios reach their expected verdicts; a stall past the
// lease breaks the seed's design and fencing repairs it; recovery is audited; the write
// protocol of section 5.1 survives every crash in the seed's order and each variant fails
// for the step it changed; bad input names the place.
#include <algorithm>
#include <string>

#include <gtest/gtest.h>

#include "lockstep/model/scenario.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

const std::string kDir = std::string(lockstep_source_dir()) + "/scenarios/dal/";

TEST(Dal, EveryScenarioReachesItsExpectedVerdict) {
  EXPECT_GE(testing::expect_every_scenario_as_expected(kDir), 19);
}

TEST(Dal, TheSeedsWriteProtocolSurvivesAMachineCrashAtEveryStep) {
  const auto report = testing::check(load_scenario(kDir + "write-protocol.json"));
  EXPECT_EQ(report.result.verdict, Verdict::pass);
  EXPECT_TRUE(report.result.exhaustive);
  // One execution without a crash and one per crash point and surviving subset: every
  // visible step of the writer (about 20) was tried as the crash.
  const auto crashed = report.result.stats.marks.find("crash(machine)");
  ASSERT_NE(crashed, report.result.stats.marks.end());
  EXPECT_GE(crashed->second, 20u);
  EXPECT_EQ(crashed->second + 1, report.result.stats.executions);
}

// Each variant fails with the violation of the step it changed, and only because of it: the
// fsync variants need the crash, the ordering variants need the second actor.
TEST(Dal, EachWriteProtocolVariantNeedsWhatItChanged) {
  struct Case {
    const char* file;
    const char* violation;
    bool needs_crash;
  };
  for (const Case& c : {Case{"write-protocol-no-tmp-dir-fsync.json", "final_dirs_complete", true},
                        Case{"write-protocol-rename-before-file-fsync.json", "final_dirs_complete", true},
                        Case{"write-protocol-no-parent-fsync.json", "committed_is_durable", true},
                        Case{"write-protocol-manifest-before-rename.json", "final_dirs_complete", false},
                        Case{"write-protocol-release-before-manifest.json", "manifest_never_back", false}}) {
    SCOPED_TRACE(c.file);
    auto doc = read_json_file(kDir + c.file);
    const auto report = testing::check(testing::scenario_from_json(doc));
    EXPECT_EQ(report.result.verdict, Verdict::violation);
    ASSERT_TRUE(report.result.first_failure);
    EXPECT_EQ(report.result.first_failure->result.invariant, c.violation);
    ASSERT_TRUE(report.trace);
    const bool crashed = std::any_of(report.trace->events.begin(), report.trace->events.end(),
                                     [](const auto& e) { return e.result.find("crashed (machine) instead") != std::string::npos; });
    EXPECT_EQ(crashed, c.needs_crash);
    if (c.needs_crash) {
      doc.erase("faults");  // the same variant without the crash holds
      EXPECT_EQ(testing::check(testing::scenario_from_json(doc)).result.verdict, Verdict::pass);
    } else {
      doc["variant"] = "correct";  // the seed's order with the same actors holds
      doc.erase("expect");
      EXPECT_EQ(testing::check(testing::scenario_from_json(doc)).result.verdict, Verdict::pass);
    }
  }
}

TEST(Dal, AProcessCrashLosesNoFileAndRecoveryStillCleansUp) {
  auto doc = read_json_file(kDir + "write-protocol-no-parent-fsync.json");
  doc["faults"]["crash"]["kind"] = "process";  // the page cache survives: no fsync is missed
  doc.erase("expect");
  const auto report = testing::check(testing::scenario_from_json(doc));
  EXPECT_EQ(report.result.verdict, Verdict::pass);
  EXPECT_GT(report.result.stats.marks.count("crash(process)"), 0u);
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

TEST(Dal, ACrashFaultNamesAFileWriterAndAKnownKind) {
  auto error = [](nlohmann::json crash) {
    nlohmann::json d = {{"format", "lockstep-scenario/1"},
                        {"name", "t"},
                        {"system", "dal"},
                        {"actors", {{{"kind", "file_writer"}, {"resource", "map:m"}, {"name", "w"}}, {{"kind", "writer"}, {"resource", "map:m"}, {"name", "x"}}}},
                        {"faults", {{"crash", std::move(crash)}}},
                        {"explore", {{"time", "timed"}}}};
    try {
      testing::scenario_from_json(d);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error({{"actor", "x"}}).find("/faults/crash/actor"), std::string::npos);
  EXPECT_NE(error({{"actor", "w"}, {"kind", "disk"}}).find("/faults/crash/kind"), std::string::npos);
  EXPECT_NE(error({{"actor", "w"}, {"budget", 9}}).find("/faults/crash/budget"), std::string::npos);
  EXPECT_EQ(error({{"actor", "w"}, {"kind", "process"}}), "no error");
}

}  // namespace
}  // namespace lockstep
