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
#include "lockstep/real/phantom_rounds.h"
#include "lockstep/system.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/trace.h"
#include "test_support.h"
#include "scratch_dir.h"

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

std::string temp_dir(const char* name) { return lockstep::testing::scratch_dir(name); }

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

// Issue 61: a model that asks for timed exploration (Model::timed()) is explored timed by the
// command line when its scenario does not say; a scenario that says keeps its own.
TEST(UserSystem, TheCommandLineExploresATimedModelTimed) {
  if (lockstep::find_system("timedcounter") == nullptr) {
    auto s = counter_system("timedcounter");
    s.model = [](const Shape& shape) { return counter(shape).timed(); };
    lockstep::register_model_system(std::move(s));
  }
  const std::string dir = temp_dir("timed-cli");
  std::filesystem::create_directories(dir);
  write(dir + "/silent.json", R"({"format": "lockstep-scenario/1", "name": "silent", "system": "timedcounter"})");
  write(dir + "/says.json", R"({"format": "lockstep-scenario/1", "name": "says", "system": "timedcounter",
                                "explore": {"time": "untimed"}})");
  using lockstep::testing::run_cli_in_process;
  const auto silent = run_cli_in_process({"check", dir + "/silent.json", "--json"});
  EXPECT_EQ(nlohmann::json::parse(silent.out)["time"], "timed") << silent.out << silent.err;
  // A timed verdict says what it covered: the orders of events due at one instant only.
  EXPECT_NE(nlohmann::json::parse(silent.out)["timing"].value("orders", "").find("events due at one instant"), std::string::npos) << silent.out;
  const auto says_text = run_cli_in_process({"check", dir + "/silent.json"});
  EXPECT_NE(says_text.out.find("orders explored: those of events due at one instant"), std::string::npos) << says_text.out;
  const auto says = run_cli_in_process({"check", dir + "/says.json", "--json"});
  EXPECT_EQ(nlohmann::json::parse(says.out)["time"], "untimed") << says.out << says.err;
  if (lockstep::find_system("usercounter") == nullptr) lockstep::register_model_system(counter_system("usercounter"));
  write(dir + "/plain.json", R"({"format": "lockstep-scenario/1", "name": "plain", "system": "usercounter"})");
  const auto plain = run_cli_in_process({"check", dir + "/plain.json", "--json"});
  EXPECT_EQ(nlohmann::json::parse(plain.out)["time"], "untimed") << plain.out << plain.err;
}

// A Config read through its JSON conversion: no reader of our own.
struct Crew {
  std::string variant = "correct";
  int workers = 2;
  bool stall = false;  // a fault: needs timed exploration
  std::string label = "x";
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Crew, variant, workers, stall, label)

const lockstep::ConfigRules kCrewRules{
    .system = "crew", .faults = {{"stall", "a worker stalls"}}, .timed_faults = {"stall"}, .ranges = {{"workers", 1, 4}}};

// The Config read from scenario parts `parts` (keys config, faults, actors) of crew.json.
Crew read_crew(const std::string& variant, const nlohmann::json& parts, bool timed = false) {
  lockstep::SystemInput in;
  in.variant = variant;
  in.timed = timed;
  for (const char* key : {"config", "faults", "actors"}) {
    if (parts.contains(key)) {
      std::optional<lockstep::JsonCursor> c(lockstep::JsonCursor(parts.at(key), "crew.json", std::string("/") + key));
      (key == std::string("config") ? in.config : key == std::string("faults") ? in.faults : in.actors) = c;
    }
  }
  return lockstep::read_config_by_json<Crew>(in, kCrewRules);
}

// The InputError message of reading `parts`, or "" when it reads.
std::string crew_error(const nlohmann::json& parts, bool timed = false) {
  try {
    read_crew("correct", parts, timed);
  } catch (const lockstep::InputError& e) {
    return e.what();
  }
  return "";
}

TEST(UserSystem, AConfigIsReadThroughItsJsonConversion) {
  const nlohmann::json parts = {{"config", {{"workers", 3}, {"label", "night"}}}, {"faults", {{"stall", true}}}};
  const Crew c = read_crew("fast", parts, /*timed=*/true);
  EXPECT_EQ(c.variant, "fast");
  EXPECT_EQ(c.workers, 3);
  EXPECT_TRUE(c.stall);
  EXPECT_EQ(c.label, "night");
  EXPECT_EQ(nlohmann::json(read_crew("correct", nlohmann::json::object())), nlohmann::json(Crew{}));  // defaults kept
}

TEST(UserSystem, ADerivedConfigReaderNamesTheFileAndThePointer) {
  using nlohmann::json;
  EXPECT_NE(crew_error({{"config", {{"workers", 9}}}}).find("crew.json: /config/workers"), std::string::npos);
  EXPECT_NE(crew_error({{"config", {{"wrokers", 1}}}}).find("unknown key \"wrokers\""), std::string::npos);
  EXPECT_NE(crew_error({{"config", {{"variant", "correct"}}}}).find("unknown key \"variant\""), std::string::npos);
  EXPECT_NE(crew_error({{"config", {{"stall", true}}}}).find("unknown key \"stall\""), std::string::npos);  // a fault
  EXPECT_NE(crew_error({{"config", {{"label", 3}}}}).find("/config/label"), std::string::npos);
  EXPECT_NE(crew_error({{"config", {{"workers", true}}}}).find("/config/workers"), std::string::npos);
  EXPECT_NE(crew_error({{"faults", {{"stall", true}}}}).find("/faults/stall: needs \"explore\": {\"time\": \"timed\"}"), std::string::npos);
  EXPECT_EQ(crew_error({{"faults", {{"stall", false}}}}), "");
  EXPECT_NE(crew_error({{"faults", {{"stal", true}}}}).find("unknown key \"stal\""), std::string::npos);
  EXPECT_NE(crew_error({{"actors", json::array()}}).find("/actors: crew takes no actors"), std::string::npos);
  // A declaration that does not fit the Config is the system's fault, not the scenario's.
  lockstep::ConfigRules wrong = kCrewRules;
  wrong.ranges.push_back({"label", 0, 1});
  EXPECT_THROW(lockstep::read_config_by_json<Crew>(lockstep::SystemInput{}, wrong), lockstep::ModelError);
}

TEST(UserSystem, TheVariantTableIsWrittenOnce) {
  struct Row {
    const char* name;
    const char* description;
    int knob;
  };
  const Row table[] = {{"correct", "the design", 0}, {"fast", "a planted bug", 1}};
  const auto docs = lockstep::named_docs(table);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1].name, "fast");
  EXPECT_EQ(docs[1].description, "a planted bug");
}

TEST(UserSystem, APhantomClientComesFromTheRegistration) {
  auto s = counter_system("phantomless");
  const lockstep::SystemInfo without = lockstep::system_info(s);
  EXPECT_THROW(lockstep::real::phantom_client(without, "atomic"), std::invalid_argument);
  s.phantom_key = lockstep::pg::AdvisoryKey::pair(7, 1);
  s.phantom_round = [](lockstep::pg::Connection&, lockstep::Duration, const Shape& shape) { return shape.atomic; };
  const lockstep::SystemInfo with = lockstep::system_info(s);
  const auto client = lockstep::real::phantom_client(with, "racy");
  EXPECT_EQ(client.name, "racy");
  EXPECT_EQ(client.key, lockstep::pg::AdvisoryKey::pair(7, 1));
  EXPECT_THROW(lockstep::real::phantom_client(with, "nosuch"), std::invalid_argument);
  // The command line refuses what it cannot run before it looks for a server.
  if (lockstep::find_system("usercounter") == nullptr) lockstep::register_model_system(counter_system("usercounter"));
  using lockstep::testing::run_cli_in_process;
  const auto no_round = run_cli_in_process({"confirm", "--phantom", "--system", "usercounter"});
  EXPECT_EQ(no_round.code, 2);
  EXPECT_NE(no_round.err.find("declares no phantom round"), std::string::npos) << no_round.err;
  EXPECT_EQ(run_cli_in_process({"confirm", "--phantom", "--variant", "racy"}).code, 2);
  EXPECT_EQ(run_cli_in_process({"confirm", "--phantom", "--system", "nosuch"}).code, 2);
}

// A trace a model test wrote ("system": "api") runs in the program that registers the
// same model: replay, shrink, diff and report, as a scenario's trace does.
TEST(UserSystem, TheRegisteringProgramRunsItsModelTestsTraces) {
  if (lockstep::find_system("usercounter") == nullptr) lockstep::register_model_system(counter_system("usercounter"));
  const std::string dir = temp_dir("user-code-trace");
  const auto failing = counter({.actors = 2}, dir).run();
  ASSERT_TRUE(failing.trace_path) << failing.describe();
  const std::string trace = *failing.trace_path;
  using lockstep::testing::run_cli_in_process;
  const auto replay = run_cli_in_process({"replay", trace});
  EXPECT_EQ(replay.code, 0) << replay.out << replay.err;
  EXPECT_NE(replay.out.find("no_lost_update"), std::string::npos) << replay.out;
  const auto shrink = run_cli_in_process({"shrink", trace, "--out", dir + "/shrunk.json"});
  EXPECT_EQ(shrink.code, 0) << shrink.out << shrink.err;
  const auto cause = run_cli_in_process({"diff", trace, "--cause", "1"});
  EXPECT_NE(cause.out.find("with cause 1 reordered: pass"), std::string::npos) << cause.out << cause.err;
  const auto report = run_cli_in_process({"report", trace, "-o", dir + "/trace.html"});
  EXPECT_EQ(report.code, 0) << report.out << report.err;
  EXPECT_EQ(report.out.find("not replayed"), std::string::npos) << report.out;
  // Another configuration of the model is not the registered one's to run when it does not
  // make it: an edited configuration (3 actors, but the trace records 2) is refused.
  auto edited = lockstep::sim::load_trace(trace);
  edited.scenario["model"]["configuration"]["actors"] = 7;
  EXPECT_FALSE(lockstep::sim::replays_here(edited));
}

// Team note 5: a trace recorded before the model's Config changed says which fields differ
// (the trace's value, the current value) and that the model is registered.
TEST(UserSystem, ATraceOfAnOlderConfigSaysWhichFieldsDiffer) {
  if (lockstep::find_system("usercounter") == nullptr) lockstep::register_model_system(counter_system("usercounter"));
  const std::string dir = temp_dir("user-older-config");
  const auto failing = counter({.actors = 2}, dir).run();
  ASSERT_TRUE(failing.trace_path) << failing.describe();
  auto older = lockstep::sim::load_trace(*failing.trace_path);
  auto& configuration = older.scenario["model"]["configuration"];
  configuration.erase("atomic");   // a field added since
  configuration["retries"] = 3;    // a field removed since
  const std::string file = dir + "/older.json";
  lockstep::sim::save_trace(older, file);
  try {
    (void)lockstep::sim::scenario_of_trace(lockstep::sim::load_trace(file), file);
    ADD_FAILURE() << "an older configuration replayed";
  } catch (const lockstep::InputError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("model \"counter\" is registered (system \"usercounter\")"), std::string::npos) << m;
    EXPECT_NE(m.find("configuration field \"atomic\": the trace's value (none), the current value true"), std::string::npos) << m;
    EXPECT_NE(m.find("configuration field \"retries\": the trace's value 3, the current value (none)"), std::string::npos) << m;
  }
  const auto replay = lockstep::testing::run_cli_in_process({"replay", file});
  EXPECT_EQ(replay.code, 2);
  EXPECT_NE(replay.err.find("is registered"), std::string::npos) << replay.err;
  // The model test's own replay says the same.
  try {
    (void)counter({.actors = 2}, dir).replay(file);
    ADD_FAILURE() << "an older configuration replayed";
  } catch (const lockstep::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("configuration field \"atomic\""), std::string::npos) << e.what();
  }
}

// Team note 5: a model test keeps one trace, the latest failure's, and its report says where.
TEST(UserSystem, AModelTestKeepsOneTrace) {
  const std::string dir = temp_dir("user-one-trace");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/counter-Suite.Test-0123abcd.json") << "{}";  // the older naming, one per configuration
  const auto two = counter({.actors = 2}, dir).trace_key("Suite.Test").run();
  const auto three = counter({.actors = 3}, dir).trace_key("Suite.Test").run();
  ASSERT_TRUE(two.trace_path && three.trace_path) << two.describe();
  EXPECT_EQ(*two.trace_path, *three.trace_path);
  EXPECT_EQ(std::filesystem::path(*three.trace_path).filename(), "counter-Suite.Test.json");
  EXPECT_EQ(lockstep::sim::load_trace(*three.trace_path).scenario["model"]["configuration"]["actors"], 3);
  int files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++files;
  EXPECT_EQ(files, 1);
  EXPECT_NE(three.describe().find("this test's one trace"), std::string::npos) << three.describe();
}

// Team note 7: a registration that does not restate the model's invariants and faults.
TEST(UserSystem, ARegistrationTakesItsListsFromTheModel) {
  if (lockstep::find_system("derivedcounter") == nullptr) {
    lockstep::register_model_system(lockstep::ModelSystem<Counter, Shape>{
        .name = "derivedcounter",
        .variants = {{"racy", "a load and a store"}, {"atomic", "compare-and-swap"}},
        .model = [](const Shape& s) {
          return counter(s).fault("atomic", "increments by compare-and-swap (a boolean of the Config)").invariant(
              "positive", "x is never negative", [](Counter& c) -> std::optional<std::string> {
                return c.x->load() < 0 ? std::optional<std::string>("negative") : std::nullopt;
              });
        }});
  }
  const lockstep::SystemInfo* info = lockstep::find_system("derivedcounter");
  ASSERT_NE(info, nullptr);
  ASSERT_EQ(info->invariants.size(), 2u);
  EXPECT_EQ(info->invariants[0].name, "no_lost_update");
  EXPECT_EQ(info->invariants[1].name, "positive");
  EXPECT_EQ(info->invariants[1].description, "x is never negative");
  ASSERT_EQ(info->faults.size(), 1u);
  EXPECT_EQ(info->faults[0].name, "atomic");
  // A scenario switches one of them off by the name the model gave it.
  nlohmann::json doc = {{"format", "lockstep-scenario/1"}, {"name", "n"}, {"system", "derivedcounter"},
                        {"invariants", {{"no_lost_update", false}}}};
  EXPECT_EQ(lockstep::sim::check_scenario(lockstep::parse_scenario(doc, "f.json"), {}).result.verdict, lockstep::Verdict::pass);
  doc["invariants"] = {{"no_such", false}};
  EXPECT_THROW(lockstep::parse_scenario(doc, "f.json"), lockstep::InputError);
}

}  // namespace
