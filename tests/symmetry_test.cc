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

// Three workers, each on a pool of its own, each running one statement on one row: their
// checkouts commute with everything (PoolConfig::owner), so the members start at their
// statements, which conflict, and each class of executions equal up to a renaming of the
// workers (and their pools) is explored once: 3! times fewer. Without the owner, a checkout
// is each worker's start, and checkouts of different pools commute: no reduction.
struct Queue {
  Queue(Env& env, bool owned) {
    for (ActorId i = 0; i < 3; ++i) pools.push_back(env.new_pg_pool(pg::PoolConfig{.pool_size = 1, .owner = owned ? i : -1}));
    auto setup = pools[0]->checkout().value();  // outside any actor
    (void)setup->exec("CREATE TABLE jobs (id bigint PRIMARY KEY, claims int NOT NULL)");
    (void)setup->exec("INSERT INTO jobs VALUES (1, 0)");
    claims = env.new_shared_var("claims", 0);
  }
  std::vector<std::unique_ptr<pg::Pool>> pools;
  std::unique_ptr<SharedVar> claims;
};
struct OwnQueue : Queue {
  explicit OwnQueue(Env& env) : Queue(env, true) {}
};
struct SharedQueue : Queue {
  explicit SharedQueue(Env& env) : Queue(env, false) {}
};

template <typename S>
ModelReport run_workers(bool symmetry, const std::string& dir) {
  auto worker = [](S& s, Env&, ActorId self) {
    auto conn = s.pools[static_cast<std::size_t>(self)]->checkout().value();
    const auto r = conn->exec("UPDATE jobs SET claims = claims + 1 WHERE id = 1 RETURNING claims");
    if (r.ok()) s.claims->fetch_add(1);
  };
  auto all_claimed = [](S& s) -> std::optional<std::string> {
    if (s.claims->load() != 3) return "claims: " + std::to_string(s.claims->load());
    return std::nullopt;
  };
  return lockstep::Model<S>("workers").symmetric_actors(3, worker).invariant("all_claimed", all_claimed).symmetry(symmetry).trace_dir(dir).run();
}

TEST(Symmetry, WorkersOnPoolsOfTheirOwnAreExploredOncePerRenaming) {
  const std::string dir = ::testing::TempDir() + "symmetry-model";
  const ModelReport on = run_workers<OwnQueue>(true, dir);
  const ModelReport off = run_workers<OwnQueue>(false, dir);
  EXPECT_EQ(on.verdict, Verdict::pass);
  EXPECT_EQ(off.verdict, Verdict::pass);
  EXPECT_EQ(on.symmetry_permutations, 6u);
  RecordProperty("executions", std::to_string(on.executions) + " of " + std::to_string(off.executions));
  EXPECT_GT(off.executions, 6u);
  EXPECT_EQ(on.executions * 6, off.executions);
  // Shared by no declaration: each checkout is a start, and they commute.
  const ModelReport shared = run_workers<SharedQueue>(true, dir);
  EXPECT_EQ(shared.executions, off.executions);
}

// A pool of one actor's own checked out by another stops the run: the declaration is wrong.
TEST(Symmetry, AnotherActorsCheckoutOfAnOwnedPoolIsAModelError) {
  const std::string dir = ::testing::TempDir() + "symmetry-model";
  const ModelReport r = lockstep::Model<OwnQueue>("borrower")
                            .actors(2, [](OwnQueue& s, Env&, ActorId) { (void)s.pools[0]->checkout(); })
                            .trace_dir(dir)
                            .run();
  EXPECT_EQ(r.verdict, Verdict::model_error);
  EXPECT_NE(r.message.find("PoolConfig::owner = 0) checked out by b"), std::string::npos) << r.message;
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
