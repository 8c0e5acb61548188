// Preemption bounding, iterative deepening, pct, and counterexample shrinking.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "lockstep/sim/strategies/preemption_bound.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/shrink.h"
#include "test_support.h"

namespace lockstep {
namespace {

using testing::check;
using testing::scenario_from_json;
using testing::script_scenario;

// Fails only when b runs between a's two writes and c runs between b's: two preemptions.
nlohmann::json needs_two_preemptions() {
  return script_scenario({{"a", {"write x 1", "write x 0"}}, {"b", {"read x r", "write y r", "write y 0"}}, {"c", {"read y s"}}},
                         {{"check", {"c.s == 0"}}});
}

TEST(PreemptionBound, ABoundTooSmallIsIncompleteNeverPass) {
  const Scenario s = scenario_from_json(needs_two_preemptions());
  for (const char* strategy : {"dfs", "dpor"}) {
    const auto r1 = check(s, {.settings = {.strategy = strategy, .max_preemptions = 1}});
    EXPECT_EQ(r1.result.verdict, Verdict::incomplete) << strategy;
    EXPECT_NE(r1.result.stop_reason.find("at most 1 preemptions"), std::string::npos) << r1.result.stop_reason;
  }
  // dfs explores every execution within the bound.
  EXPECT_EQ(check(s, {.settings = {.strategy = "dfs", .max_preemptions = 2}}).result.verdict, Verdict::violation);
  // dpor explores one execution per trace, and the one it picks may need more preemptions
  // than the cheapest of its trace: it reaches this bug with a bound of 3, not 2, and the
  // shrinker brings the trace back to 2.
  const auto r3 = check(s, {.settings = {.strategy = "dpor", .max_preemptions = 3}});
  EXPECT_EQ(r3.result.verdict, Verdict::violation);
  EXPECT_EQ(r3.trace->shrunk->preemptions, 2);
}

TEST(PreemptionBound, ABoundThatCutsNothingIsExhaustive) {
  const auto r = check(scenario_from_json(script_scenario({{"a", {"write x 1"}}, {"b", {"write y 1"}}})),
                       {.settings = {.strategy = "dfs", .max_preemptions = 0}});
  EXPECT_EQ(r.result.verdict, Verdict::pass);
}

TEST(PreemptionBound, IterativeDeepeningFindsTheFewestPreemptions) {
  sim::CheckOverrides o{.settings = {.strategy = "dfs", .max_preemptions = 5}};
  o.iterative = true;
  const auto r = check(scenario_from_json(needs_two_preemptions()), o);
  ASSERT_EQ(r.result.verdict, Verdict::violation);
  EXPECT_EQ(r.preemption_bound, 2);
  ASSERT_TRUE(r.trace && r.trace->shrunk);
  EXPECT_EQ(r.trace->shrunk->preemptions, 2);
}

TEST(Pct, FindsTheLostUpdateAndIsSeeded) {
  const Scenario s = scenario_from_json(script_scenario({{"a", {"read x r", "write x r+1"}}, {"b", {"read x r", "write x r+1"}}},
                                                        {{"check", {"x == 2"}}}, {{"strategy", "pct"}, {"max_executions", 200}}));
  const auto first = check(s, {.settings = {.seed = 5}});
  const auto again = check(s, {.settings = {.seed = 5}});
  ASSERT_EQ(first.result.verdict, Verdict::violation);
  EXPECT_EQ(first.result.first_failure->decisions, again.result.first_failure->decisions);
  EXPECT_EQ(first.result.first_failure->execution, again.result.first_failure->execution);
  EXPECT_LE(first.trace->shrunk->preemptions, 1);
}

TEST(Pct, IsNeverExhaustive) {
  const auto r = check(scenario_from_json(script_scenario({{"a", {"write x 1"}}}, nullptr,
                                                          {{"strategy", "pct"}, {"max_executions", 10}})));
  EXPECT_EQ(r.result.verdict, Verdict::incomplete);
}

TEST(Shrink, TheLostUpdateNeedsOnePreemption) {
  const auto r = check(scenario_from_json(script_scenario({{"a", {"read x r", "write x r+1"}}, {"b", {"read x r", "write x r+1"}}},
                                                          {{"check", {"x == 2"}}})));
  ASSERT_TRUE(r.trace && r.trace->shrunk);
  EXPECT_EQ(r.trace->shrunk->preemptions, 1);
  EXPECT_EQ(r.trace->shrunk->original_preemptions, 2);
  EXPECT_EQ(sim::replay_trace(*r.trace, "<trace>").result.verdict, Verdict::violation);
}

// Fails only when a reads y between d's two writes of y and writes it back last: two
// preemptions; c is noise a random walk interleaves. Dropping one decision at a time kept
// 4 (random seeds 1 and 2), 3 (seed 3) and 3 (dpor): moving whole runs reaches 2.
nlohmann::json noisy_two_preemptions() {
  return script_scenario({{"a", {"read y r", "write y r"}},
                          {"b", {"write y r"}},
                          {"c", {"read z s", "read x s", "write z r"}},
                          {"d", {"write x r", "write y 2", "write y r+1"}}},
                         {{"check", {"y != 2"}}}, {{"strategy", "random"}, {"max_executions", 200}});
}

TEST(Shrink, MovingARunOfStepsReachesTheFewestPreemptions) {
  const Scenario s = scenario_from_json(noisy_two_preemptions());
  EXPECT_EQ(check(s, {.settings = {.strategy = "dfs", .max_executions = 1000000, .max_preemptions = 4}, .iterative = true}).preemption_bound, 2);
  for (const std::uint64_t seed : {1, 2, 3}) {
    const auto r = check(s, {.settings = {.seed = seed}});
    ASSERT_TRUE(r.trace && r.trace->shrunk) << seed;
    EXPECT_EQ(r.trace->shrunk->preemptions, 2) << "seed " << seed;
    EXPECT_EQ(sim::replay_trace(*r.trace, "<trace>").result.verdict, Verdict::violation);
  }
  EXPECT_EQ(check(s, {.settings = {.strategy = "dpor"}}).trace->shrunk->preemptions, 2);
}

TEST(Shrink, ShrinkingAShrunkTraceKeepsItsOrigin) {
  const auto r = check(scenario_from_json(needs_two_preemptions()), {.settings = {.strategy = "dfs"}});
  ASSERT_TRUE(r.trace);
  const sim::Trace again = sim::shrink_trace(*r.trace, "<trace>");
  EXPECT_EQ(again.verdict, r.trace->verdict);
  EXPECT_EQ(again.shrunk->original_steps, r.trace->shrunk->original_steps);
  EXPECT_LE(again.shrunk->preemptions, r.trace->shrunk->preemptions);
}

// Any failure a random walk finds shrinks to a trace that replays to the same verdict and
// invariant, and is no more complex than the original.
RC_GTEST_PROP(ShrinkProperties, ShrunkTracesReplayToTheSameFailure, ()) {
  std::vector<std::pair<std::string, std::vector<std::string>>> actors;
  const int n = *rc::gen::inRange(2, 4);
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> ops;
    const int k = *rc::gen::inRange(1, 6);
    for (int i = 0; i < k; ++i) {
      const std::string v = *rc::gen::element<std::string>("x", "y");
      switch (*rc::gen::inRange(0, 5)) {
        case 0: ops.push_back("read " + v + " r"); break;
        case 1: ops.push_back("write " + v + " r+1"); break;
        case 2: ops.push_back("lock m"); ops.push_back("write " + v + " r"); ops.push_back("unlock m"); break;
        case 3: ops.push_back("lockfor m 5 got"); break;
        default: ops.push_back("cas " + v + " 0 1 ok"); break;
      }
    }
    // The first actor's last step breaks the invariant (x != 1) wherever it lands, so every
    // program has a failure for the random walk to find (without it, most had none: the
    // property gave up on discards at some seeds, CI rehearsal of 2026-12-06).
    if (a == 0) ops.push_back("write x 1");
    actors.emplace_back(std::string(1, static_cast<char>('a' + a)), ops);
  }
  const Scenario s = scenario_from_json(script_scenario(actors, {{"vars", {{"x", 0}, {"y", 0}}}, {"check", {"x != 1"}}},
                                                        {{"strategy", "random"}, {"max_executions", 100}}));
  const auto r = check(s, {.settings = {.seed = *rc::gen::arbitrary<std::uint64_t>()}});
  RC_PRE(r.trace.has_value());
  RC_TAG(std::string(verdict_name(r.trace->verdict)));
  RC_ASSERT(r.trace->verdict == r.result.first_failure->result.verdict);
  RC_ASSERT(r.trace->invariant == r.result.first_failure->result.invariant);
  RC_ASSERT(r.trace->shrunk->preemptions <= r.trace->shrunk->original_preemptions);
  const auto replayed = sim::replay_trace(sim::trace_from_json(nlohmann::json::parse(sim::trace_to_text(*r.trace)), "<t>"), "<t>");
  RC_ASSERT(replayed.result.verdict == r.trace->verdict);
}

}  // namespace
}  // namespace lockstep
