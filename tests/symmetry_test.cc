// Symmetry reduction (sim/explore/symmetry.h): what a declaration saves, that failures are still found
// and their traces replay, and that declarations the scheduler can see are wrong are refused
// (malformed ones as bad input, asymmetric behaviour as model_error). Soundness against the
// dfs oracle is DporProperties.SymmetricDporExploresEveryClassDfsFinds (dpor_test).
#include <filesystem>

#include <gtest/gtest.h>

#include "lockstep/lockstep.h"
#include "lockstep/sim/check.h"
#include "test_support.h"

namespace lockstep {
namespace {

using testing::scenario_from_json;
using testing::script_scenario;

using Actors = std::vector<std::pair<std::string, std::vector<std::string>>>;

Actors copies(int n, const std::vector<std::string>& ops) {
  Actors out;
  for (int i = 0; i < n; ++i) out.emplace_back(std::string(1, static_cast<char>('a' + i)), ops);
  return out;
}

// config.symmetric's value: one class of these actors.
nlohmann::json one_class(std::vector<std::string> names) { return nlohmann::json::array({nlohmann::json(std::move(names))}); }

nlohmann::json symmetric_config(int n, nlohmann::json config = {{"vars", {{"x", 0}}}}) {
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) names.emplace_back(1, static_cast<char>('a' + i));
  config["symmetric"] = one_class(names);
  return config;
}

sim::CheckReport check(const nlohmann::json& doc, const std::string& strategy, bool symmetry) {
  sim::CheckOverrides o;
  o.settings.strategy = strategy;
  o.settings.symmetry = symmetry;
  return testing::check(scenario_from_json(doc), o);
}

// Members whose first steps all take one lock: every order of their first steps is a
// permutation of the one in id order, so each strategy runs n! times fewer executions.
TEST(Symmetry, IdenticalActorsWhoseFirstStepsConflictRunNFactorialTimesFewer) {
  const std::vector<std::string> ops = {"lock m", "read x r", "write x r+1", "unlock m"};
  for (const int n : {2, 3, 4}) {
    const auto doc = script_scenario(copies(n, ops), symmetric_config(n));
    for (const std::string strategy : {"dpor", "source-dpor", "dfs"}) {
      SCOPED_TRACE(strategy + " with " + std::to_string(n) + " actors");
      const auto on = check(doc, strategy, true);
      const auto off = check(doc, strategy, false);
      ASSERT_TRUE(on.result.exhaustive);
      ASSERT_TRUE(off.result.exhaustive);
      EXPECT_EQ(on.result.verdict, Verdict::pass);
      EXPECT_EQ(on.result.symmetry.actors, n);
      EXPECT_EQ(off.result.symmetry.actors, 0);
      std::uint64_t factorial = 1;
      for (int k = 2; k <= n; ++k) factorial *= static_cast<std::uint64_t>(k);
      EXPECT_EQ(on.result.symmetry.permutations, factorial);
      EXPECT_EQ(on.result.stats.executions * factorial, off.result.stats.executions);
      EXPECT_EQ(on.result.stats.redundant, 0u);
    }
  }
}

// A lost update among identical actors is found with symmetry on, and its trace (recorded
// and shrunk without it) replays.
TEST(Symmetry, AFailureIsFoundAndItsTraceReplays) {
  auto config = symmetric_config(3);
  config["check"] = {"x == 3"};
  const auto doc = script_scenario(copies(3, {"read x r", "write x r+1"}), config);
  const auto report = check(doc, "dpor", true);
  ASSERT_EQ(report.result.verdict, Verdict::violation);
  ASSERT_TRUE(report.trace.has_value());
  const auto replayed = sim::replay_trace(*report.trace, "trace");
  EXPECT_EQ(replayed.result.verdict, Verdict::violation);
  EXPECT_EQ(replayed.result.message, report.trace->message);
}

// Declarations are checked where they are read: names, identical ops, checks that compare
// a member's register, classes of one.
TEST(Symmetry, AScriptDeclarationThatCannotHoldIsBadInput) {
  auto expect_error = [](const nlohmann::json& doc, const std::string& part) {
    try {
      (void)scenario_from_json(doc);
      ADD_FAILURE() << "accepted: " << doc.dump();
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("/config/symmetric"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  const Actors same = copies(2, {"lock m", "unlock m"});
  Actors different = same;
  different[1].second = {"lock n", "unlock n"};
  expect_error(script_scenario(same, {{"symmetric", one_class({"a", "q"})}}), "no actor \"q\"");
  expect_error(script_scenario(different, {{"symmetric", one_class({"a", "b"})}}), "other ops");
  expect_error(script_scenario(same, {{"symmetric", one_class({"a"})}}), "two or more");
  expect_error(script_scenario(copies(2, {"read x r"}), {{"vars", {{"x", 0}}}, {"check", {"b.r == 0"}}, {"symmetric", one_class({"a", "b"})}}),
               "compares a register");
}

struct Slots {
  explicit Slots(Env& env) : x(env.new_shared_var("x", 0)), m(env.new_mutex("m")) {}
  std::unique_ptr<SharedVar> x;
  std::unique_ptr<Mutex> m;
};

// The C++ API: symmetric_actors declares a class; the search says so and runs fewer.
TEST(Symmetry, AModelDeclaresInterchangeableActors) {
  const std::string dir = ::testing::TempDir() + "symmetry-model";
  auto body = [](Slots& s, Env&, ActorId) {
    s.m->lock();
    s.x->store(s.x->load() + 1);
    s.m->unlock();
  };
  auto final_count = [](Slots& s) -> std::optional<std::string> {
    if (s.x->load() != 3) return "x is " + std::to_string(s.x->load());
    return std::nullopt;
  };
  const auto on = lockstep::Model<Slots>("slots").symmetric_actors(3, body).invariant("count", final_count).trace_dir(dir).run();
  const auto off = lockstep::Model<Slots>("slots").symmetric_actors(3, body).invariant("count", final_count).symmetry(false).trace_dir(dir).run();
  EXPECT_EQ(on.verdict, Verdict::pass);
  EXPECT_EQ(on.symmetric_actors, 3);
  EXPECT_EQ(on.symmetry_permutations, 6u);
  EXPECT_EQ(off.symmetric_actors, 0);
  EXPECT_EQ(on.executions * 6, off.executions);
}

// Actors declared interchangeable that do not start alike stop the search with an error
// naming them (no verdict: a wrong declaration would otherwise hide executions).
TEST(Symmetry, ActorsThatDoNotStartAlikeStopTheSearch) {
  const std::string dir = ::testing::TempDir() + "symmetry-model";
  try {
    (void)lockstep::Model<Slots>("lopsided")
        .symmetric_actors(2, [](Slots& s, Env& env, ActorId self) {
          if (self == 1) env.sleep_for(std::chrono::milliseconds(1));
          s.m->lock();
          s.m->unlock();
        })
        .trace_dir(dir)
        .run();
    ADD_FAILURE() << "the search ran";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("a and b are declared interchangeable"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)lockstep::Model<Slots>("unknown").actors(2, [](Slots&, Env&, ActorId) {}).symmetric({"a", "q"}).trace_dir(dir).run(),
               InputError);
}

}  // namespace
}  // namespace lockstep
