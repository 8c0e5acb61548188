// A user's own system through the public API: Model<State, Config> (configuration in the
// trace, replay only on the same configuration), marks, register_system's checks, and a
// registered model system driven by the command line like a built-in one.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "lockstep/lockstep.h"
#include "lockstep/main.h"
#include "lockstep/system.h"
#include "lockstep/sim/trace.h"
#include "test_support.h"

namespace {

using lockstep::ActorId;
using lockstep::Env;

struct Shape {
  int actors = 2;
  bool atomic = false;  // false: a load and a store, so an increment can be lost
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Shape, actors, atomic)

struct Counter {
  Counter(Env& env, const Shape& shape) : shape(shape), x(env.new_shared_var("x", 0)) {}
  Shape shape;
  std::unique_ptr<lockstep::SharedVar> x;
};

lockstep::Model<Counter, Shape> counter(const Shape& shape, const std::string& dir = "") {
  lockstep::Model<Counter, Shape> m("counter", shape);
  m.actors(shape.actors, [](Counter& s, Env&, ActorId) {
     if (s.shape.atomic) {
       for (auto v = s.x->load(); !s.x->compare_exchange(v, v + 1); v = s.x->load()) {
       }
     } else {
       s.x->store(s.x->load() + 1);
     }
   })
      .invariant("no_lost_update",
                 [](Counter& s) -> std::optional<std::string> {
                   if (s.x->load() != s.shape.actors) return "x is " + std::to_string(s.x->load());
                   return std::nullopt;
                 })
      .mark("first_try", [](Counter& s) { return s.x->load() == s.shape.actors; });
  if (!dir.empty()) m.trace_dir(dir);
  return m;
}

std::string temp_dir(const char* name) {
  return (std::filesystem::path(::testing::TempDir()) / (std::string(name) + "_" + std::to_string(getpid()))).string();
}

TEST(UserSystem, AConfiguredModelRecordsItsConfigurationInTheTrace) {
  const auto report = counter({.actors = 2}, temp_dir("user-config")).run();
  ASSERT_EQ(report.verdict, lockstep::Verdict::violation) << report.describe();
  ASSERT_TRUE(report.trace_path);
  const auto trace = lockstep::sim::load_trace(*report.trace_path);
  EXPECT_EQ(trace.scenario.at("model").at("configuration"), nlohmann::json(Shape{.actors = 2}));
  EXPECT_EQ(trace.scenario.at("replay"), report.replay_command);
  EXPECT_NE(report.replay_command.find("LOCKSTEP_REPLAY="), std::string::npos);
}

TEST(UserSystem, ReplayRunsOnlyOnTheRecordedConfiguration) {
  const std::string dir = temp_dir("user-replay");
  const auto failing = counter({.actors = 2}, dir).run();
  ASSERT_TRUE(failing.trace_path);
  const auto written = std::filesystem::last_write_time(*failing.trace_path);
  setenv("LOCKSTEP_REPLAY", failing.trace_path->c_str(), 1);
  const auto same = counter({.actors = 2}, dir).run();
  const auto other = counter({.actors = 3}, dir).run();  // another configuration: explored
  unsetenv("LOCKSTEP_REPLAY");
  EXPECT_TRUE(same.replayed);
  EXPECT_EQ(same.verdict, lockstep::Verdict::violation);
  EXPECT_EQ(same.invariant, "no_lost_update");
  EXPECT_FALSE(other.replayed);
  EXPECT_EQ(other.verdict, lockstep::Verdict::violation);
  EXPECT_GT(other.executions, 0u);
  EXPECT_FALSE(other.trace_path) << "a failure while replaying another trace must not overwrite it";
  EXPECT_NE(other.describe().find("note: LOCKSTEP_REPLAY="), std::string::npos) << other.describe();
  EXPECT_NE(*failing.trace_path, *counter({.actors = 3}, dir).run().trace_path) << "one trace file per configuration";
  EXPECT_EQ(std::filesystem::last_write_time(*failing.trace_path), written);
}

TEST(UserSystem, MarksCountTheExecutionsAfterWhichTheyHold) {
  const auto report = counter({.actors = 2, .atomic = true}).run();
  ASSERT_TRUE(report.passed()) << report.describe();
  ASSERT_TRUE(report.marks.count("first_try"));
  EXPECT_EQ(report.marks.at("first_try"), report.executions);  // atomic: every execution
  const auto racy = counter({.actors = 2}).strategy("dfs").run();
  EXPECT_LT(racy.marks.count("first_try") ? racy.marks.at("first_try") : 0, racy.executions);
}

lockstep::ModelSystem<Counter, Shape> counter_system(std::string name) {
  return {.name = std::move(name),
          .description = "a counter of our own",
          .variants = {{"atomic", "compare-and-swap"}, {"racy", "a load and a store"}},
          .invariants = {{"no_lost_update", "every increment counts"}},
          .faults = {},
          .read_config =
              [](const lockstep::SystemInput& in) {
                Shape s;
                s.atomic = in.variant == "atomic";
                if (in.config) {
                  in.config->expect_keys({"actors"});
                  if (auto a = in.config->find("actors")) s.actors = static_cast<int>(a->as_int(1, 4));
                }
                return s;
              },
          .model = [](const Shape& s) { return counter(s); }};
}

TEST(UserSystem, RegisterSystemRefusesTakenAndMalformedNames) {
  EXPECT_THROW(lockstep::register_model_system(counter_system("script")), lockstep::ModelError);
  EXPECT_THROW(lockstep::register_model_system(counter_system("a b")), lockstep::ModelError);
  EXPECT_THROW(lockstep::register_model_system(counter_system("")), lockstep::ModelError);
  EXPECT_THROW(lockstep::register_model_system(counter_system("api")), lockstep::ModelError);
  testing::internal::CaptureStderr();
  EXPECT_EQ(lockstep::registration_failed(lockstep::ModelError("taken")), 3);
  EXPECT_NE(testing::internal::GetCapturedStderr().find("cannot register a system: taken"), std::string::npos);
  auto no_variant = counter_system("novariant");
  no_variant.variants.clear();
  EXPECT_THROW(lockstep::register_model_system(no_variant), lockstep::ModelError);
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

TEST(UserSystem, ARegisteredSystemRunsFromScenarioFilesLikeABuiltInOne) {
  if (lockstep::find_system("usercounter") == nullptr) lockstep::register_model_system(counter_system("usercounter"));
  const std::string dir = temp_dir("user-cli");
  std::filesystem::create_directories(dir);
  write(dir + "/atomic.json", R"({"format": "lockstep-scenario/1", "name": "atomic", "system": "usercounter",
                                  "config": {"actors": 3}})");
  write(dir + "/racy.json", R"({"format": "lockstep-scenario/1", "name": "racy", "system": "usercounter",
                                "variant": "racy", "expect": {"verdict": "violation", "violation": "no_lost_update"}})");
  write(dir + "/bad.json", R"({"format": "lockstep-scenario/1", "name": "bad", "system": "usercounter",
                               "config": {"actors": 9}})");
  using lockstep::testing::run_cli_in_process;
  const auto list = run_cli_in_process({"list"});
  EXPECT_NE(list.out.find("usercounter: a counter of our own"), std::string::npos) << list.out;
  // The program's own systems come first, lockstep's after them under their own heading.
  EXPECT_EQ(list.out.rfind("systems:\n  usercounter: ", 0), 0u) << list.out;
  EXPECT_LT(list.out.find("usercounter: "), list.out.find("built-in systems:\n  script: ")) << list.out;
  const auto json = nlohmann::json::parse(run_cli_in_process({"list", "--json"}).out);
  EXPECT_EQ(json["systems"][0]["name"], "usercounter");
  EXPECT_EQ(json["systems"][0]["built_in"], false);
  EXPECT_EQ(run_cli_in_process({"check", dir + "/atomic.json"}).code, 0);
  const auto racy = run_cli_in_process({"check", dir + "/racy.json", "--trace-out", dir + "/racy.trace.json"});
  EXPECT_EQ(racy.code, 0) << racy.out << racy.err;
  EXPECT_EQ(run_cli_in_process({"replay", dir + "/racy.trace.json"}).code, 0);
  EXPECT_EQ(run_cli_in_process({"shrink", dir + "/racy.trace.json", "--out", dir + "/racy.shrunk.json"}).code, 0);
  EXPECT_EQ(run_cli_in_process({"report", dir + "/racy.trace.json", "-o", dir + "/racy.html"}).code, 0);
  EXPECT_TRUE(std::filesystem::exists(dir + "/racy.html"));
  const auto bad = run_cli_in_process({"check", dir + "/bad.json"});
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find(dir + "/bad.json: /config/actors"), std::string::npos) << bad.err;
  const auto sweep = run_cli_in_process({"sweep", dir + "/atomic.json", dir + "/racy.json", "--out", dir + "/reports"});
  EXPECT_EQ(sweep.code, 0) << sweep.out << sweep.err;
}

}  // namespace
