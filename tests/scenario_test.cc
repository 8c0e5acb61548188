// Scenario files: strict reading, errors that name the file and the JSON pointer.
#include "lockstep/model/scenario.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "lockstep/sim/check.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

std::string error_of(const std::string& json_text) {
  try {
    testing::scenario_from_text(json_text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

const char* kMinimal = R"({"format": "lockstep-scenario/1", "name": "n", "system": "script",
                           "actors": [{"name": "a", "ops": ["read x r"]}] %s})";

std::string with(const std::string& extra) {
  std::string s = kMinimal;
  s.replace(s.find("%s"), 2, extra);
  return s;
}

TEST(Scenario, MinimalScenarioGetsDefaults) {
  const Scenario s = testing::scenario_from_text(with(""));
  EXPECT_EQ(s.name, "n");
  EXPECT_EQ(s.variant, "default");
  EXPECT_EQ(s.explore.strategy, "dpor");
  EXPECT_EQ(s.explore.time, TimeMode::untimed);
  EXPECT_EQ(s.expect.verdict, Verdict::pass);
  EXPECT_TRUE(s.configured != nullptr);
}

TEST(Scenario, ExploreAndExpectAreRead) {
  const Scenario s = testing::scenario_from_text(with(
      R"(, "explore": {"strategy": "random", "seed": 9, "max_steps": 50, "max_executions": 7, "max_seconds": 1.5,
          "stop_at_first": false, "time": "timed"}, "expect": {"verdict": "violation", "violation": "final_state"})"));
  EXPECT_EQ(s.explore.strategy, "random");
  EXPECT_EQ(s.explore.seed, 9u);
  EXPECT_EQ(s.explore.max_steps, 50u);
  EXPECT_EQ(s.explore.max_executions, 7u);
  EXPECT_DOUBLE_EQ(s.explore.time_limit_s, 1.5);
  EXPECT_FALSE(s.explore.stop_at_first);
  EXPECT_EQ(s.explore.time, TimeMode::timed);
  EXPECT_EQ(s.expect.verdict, Verdict::violation);
  EXPECT_EQ(*s.expect.violation, "final_state");
}

TEST(Scenario, UnknownKeysAreErrorsWithTheirPointer) {
  EXPECT_EQ(error_of(with(R"(, "sytem": 1)")),
            "<test>: /sytem: unknown key \"sytem\" (expected one of: format, name, description, system, variant, "
            "config, actors, faults, invariants, explore, expect)");
  EXPECT_EQ(error_of(with(R"(, "explore": {"max_step": 1})")).rfind("<test>: /explore/max_step: unknown key", 0), 0u);
}

TEST(Scenario, BadValuesNameThePointerAndWhatWasExpected) {
  EXPECT_EQ(error_of(with(R"(, "explore": {"max_steps": "ten"})")),
            "<test>: /explore/max_steps: expected an integer, got string \"ten\"");
  EXPECT_EQ(error_of(with(R"(, "explore": {"max_steps": 0})")),
            "<test>: /explore/max_steps: expected an integer in [1, 9223372036854775807], got 0");
  EXPECT_EQ(error_of(with(R"(, "explore": {"time": "fast"})")),
            "<test>: /explore/time: expected \"untimed\" or \"timed\", got \"fast\"");
  EXPECT_EQ(error_of(with(R"(, "expect": {"verdict": "fine"})")).rfind("<test>: /expect/verdict: unknown verdict \"fine\"", 0), 0u);
  EXPECT_EQ(error_of(with(R"(, "expect": {"verdict": "pass", "violation": "x"})")),
            "<test>: /expect/violation: \"violation\" names an invariant (verdict \"violation\") or an obligation "
            "(verdict \"liveness\")");
}

TEST(Scenario, FormatSystemAndVariantAreChecked) {
  EXPECT_EQ(error_of(R"({"format": "lockstep-scenario/9", "name": "n", "system": "script"})"),
            "<test>: /format: unsupported format \"lockstep-scenario/9\" (this lockstep reads \"lockstep-scenario/1\")");
  EXPECT_EQ(error_of(R"({"format": "lockstep-scenario/1", "name": "n", "system": "nope"})"),
            "<test>: /system: unknown system \"nope\" (known: script, bench, headspace, phase_lock, supervisor, dal, sql; a system of your own runs in your own executable, built with lockstep::main: see examples/jobclaim)");
  EXPECT_EQ(error_of(with(R"(, "variant": "buggy")")),
            "<test>: /variant: system \"script\" has no variant \"buggy\" (it has: default)");
  EXPECT_EQ(error_of(R"({"format": "lockstep-scenario/1", "system": "script"})"),
            "<test>: /: missing required key \"name\"");
  EXPECT_EQ(error_of(with(R"(, "faults": {"phantom_grant": true})")),
            "<test>: /faults/phantom_grant: system \"script\" has no fault \"phantom_grant\" (it has: none)");
}

TEST(Scenario, FilesThatAreNotJsonSayWhere) {
  const std::string path = ::testing::TempDir() + "/broken.json";
  std::ofstream(path) << "{\n  \"format\": \"lockstep-scenario/1\",\n  \"name\" \"x\"\n}\n";
  try {
    load_scenario(path);
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(path + ": invalid JSON: parse error at line 3, column", 0), 0u) << what;
  }
  try {
    load_scenario(::testing::TempDir() + "/missing.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no such file"), std::string::npos);
  }
}

TEST(Scenario, BenchConfigIsChecked) {
  EXPECT_EQ(error_of(R"({"format": "lockstep-scenario/1", "name": "n", "system": "bench",
                         "config": {"program": "lockinc", "n": 0}})"),
            "<test>: /config/n: expected an integer in [1, 64], got 0");
  EXPECT_EQ(error_of(R"({"format": "lockstep-scenario/1", "name": "n", "system": "bench",
                         "config": {"program": "sort", "n": 2}})"),
            "<test>: /config/program: unknown program \"sort\" (known: lockinc, readers, lastzero, indexer, filesystem)");
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

std::string source_scenario(const std::string& name) { return std::string(lockstep_source_dir()) + "/scenarios/" + name; }

// Team note 6: "invariants": {"NAME": false} switches a check off in a scenario of any system,
// and the system goes on to judge the others.
TEST(InvariantsOff, EverySystemSkipsASwitchedOffInvariant) {
  std::map<std::string, int> systems;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(lockstep_source_dir()) + "/scenarios")) {
    if (e.path().extension() != ".json") continue;
    nlohmann::json doc = read_json_file(e.path().string());
    if (!doc.contains("expect") || doc["expect"].value("verdict", "") != "violation" || !doc["expect"].contains("violation")) continue;
    const std::string system = doc["system"];
    if (systems[system]++ > 0) continue;  // one failing scenario per system
    const std::string off = doc["expect"]["violation"];
    doc.erase("expect");
    doc["invariants"] = {{off, false}};
    const Scenario s = parse_scenario(doc, e.path().string());
    sim::CheckOptions options;
    options.overrides.settings.max_executions = 300;
    const sim::CheckReport r = sim::check_scenario(s, options);
    const bool same = r.result.verdict == Verdict::violation && r.result.first_failure &&
                      r.result.first_failure->result.invariant == off;
    EXPECT_FALSE(same) << e.path() << ": " << off << " was switched off and still judged";
  }
  for (const char* system : {"script", "bench", "headspace", "dal", "phase_lock", "supervisor"}) {
    EXPECT_GT(systems[system], 0) << "no failing scenario of " << system;
  }
}

TEST(InvariantsOff, AnUnknownNameOrAValueNotABooleanIsBadInput) {
  nlohmann::json doc = read_json_file(source_scenario("dal/jobs-out-of-order.json"));
  doc["invariants"] = {{"single_writr", false}};
  try {
    parse_scenario(doc, "f.json");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("f.json: /invariants/single_writr: system \"dal\" declares no invariant \"single_writr\"", 0), 0u)
        << e.what();
  }
  doc["invariants"] = {{"single_writer", "no"}};
  EXPECT_THROW(parse_scenario(doc, "f.json"), InputError);
  doc["invariants"] = {{"single_writer", false}};
  doc["expect"] = {{"verdict", "violation"}, {"violation", "single_writer"}};
  EXPECT_THROW(parse_scenario(doc, "f.json"), InputError);  // expects what it switches off
}

TEST(InvariantsOff, ASqlSpecsChecksAreItsInvariants) {
  const nlohmann::json base = {{"format", "lockstep-scenario/1"}, {"name", "n"}, {"system", "sql"},
                               {"config", {{"spec", "session s1\nstep a { SELECT 1; }\ncheck \"one\" { SELECT 1 = 2; }\n"}}}};
  nlohmann::json doc = base;
  EXPECT_EQ(sim::check_scenario(parse_scenario(doc, "f.json"), {}).result.verdict, Verdict::violation);
  doc["invariants"] = {{"one", false}};
  EXPECT_EQ(sim::check_scenario(parse_scenario(doc, "f.json"), {}).result.verdict, Verdict::pass);
  doc["invariants"] = {{"two", false}};
  EXPECT_THROW(parse_scenario(doc, "f.json"), InputError);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// Team note 3: confirm's iteration limit comes from the durations a scenario writes.
TEST(ScenarioHorizon, AddsTheDurationsAScenarioWrites) {
  const nlohmann::json doc = nlohmann::json::parse(R"({
    "config": {"timeout_ms": 300, "vars": {"x": 0}},
    "actors": [{"name": "a", "ops": ["sleep 20", "hot done 400", "read x r"], "work_ms": 5},
               {"name": "b", "durations_ms": [0, 60, 7]}],
    "faults": {"stall": {"actor": "a", "durations_ms": [0, 1000]}}})");
  EXPECT_EQ(scenario_horizon(doc), std::chrono::milliseconds(300 + 20 + 400 + 5 + 60 + 1000));
  EXPECT_EQ(scenario_horizon(nlohmann::json::object()), Duration{0});
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

// The timing model's keys (model/timing.h), in the issue's form, read with their places.
TEST(ScenarioTiming, TheTimingModelIsReadWithItsPlaces) {
  const Scenario s = testing::scenario_from_text(with(
      R"(, "explore": {"time": "timed", "timing": {"jitter": 0.5, "skew_ms": 50, "stalls": {"count": 1, "max_ms": 200},
                                                  "statement_ms": [0.1, 1.0]}})"));
  EXPECT_EQ(s.explore.timing, (Timing{.jitter = 0.5, .skew_ms = 50, .stalls = 1, .stall_ms = 200,
                                      .statement_low = std::chrono::microseconds(100),
                                      .statement_high = std::chrono::milliseconds(1)}));
  EXPECT_EQ(timing_coverage(s.explore.timing),
            "durations within 50%, clocks off by up to 50 ms, 1 stall of 200 ms per execution (before a statement, after a clock read), "
            "statements taking 0.1 to 1 ms");
  EXPECT_EQ(timing_coverage(Timing{}), "durations as written, no clock skew, no stalls");
  EXPECT_EQ(error_of(with(R"(, "explore": {"timing": {"jitter": 0.5}})")),
            "<test>: /explore/timing: a timing model needs \"time\": \"timed\" (untimed mode already lets any timer fire "
            "at any moment)");
  EXPECT_EQ(error_of(with(R"(, "explore": {"time": "timed", "timing": {"jitter": 2}})")).rfind("<test>: /explore/timing/jitter: ", 0), 0u);
  EXPECT_EQ(error_of(with(R"(, "explore": {"time": "timed", "timing": {"statement_ms": [2, 1]}})"))
                .rfind("<test>: /explore/timing/statement_ms/1: ", 0),
            0u);
}

}  // namespace
}  // namespace lockstep
