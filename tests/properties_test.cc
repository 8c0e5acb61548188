// Properties over random `script` programs (RapidCheck):
//  - replay fidelity: any random walk's trace, written and read back, replays to the
//    identical event log and verdict;
//  - exhaustiveness: on programs with no blocking, dfs explores exactly the multinomial
//    number of interleavings of the actors' visible steps;
//  - determinism: the same scenario and seed give byte-identical traces.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "lockstep/sim/check.h"
#include "test_support.h"

namespace lockstep {
namespace {

const std::vector<std::string> kVars = {"x", "y", "z"};
const std::vector<std::string> kMutexes = {"m", "n"};

std::string pick(const std::vector<std::string>& v) {
  return v[*rc::gen::inRange<std::size_t>(0, v.size())];
}

// One operation with no blocking: read, write or compare-and-swap.
std::string gen_plain_op() {
  const std::string var = pick(kVars);
  switch (*rc::gen::inRange(0, 4)) {
    case 0: return "read " + var + " r";
    case 1: return "write " + var + " " + std::to_string(*rc::gen::inRange(0, 3));
    case 2: return "write " + var + " r+1";
    default: return "cas " + var + " " + std::to_string(*rc::gen::inRange(0, 2)) + " " + std::to_string(*rc::gen::inRange(1, 3)) + " ok";
  }
}

// Any operation, blocking ones included: the program may deadlock or misuse a mutex, and
// those verdicts must replay as faithfully as any other.
std::string gen_any_op() {
  switch (*rc::gen::inRange(0, 9)) {
    case 0: return "lock " + pick(kMutexes);
    case 1: return "unlock " + pick(kMutexes);
    case 2: return "lockfor " + pick(kMutexes) + " " + std::to_string(*rc::gen::inRange(0, 20)) + " got";
    case 3: return "sleep " + std::to_string(*rc::gen::inRange(0, 10));
    default: return gen_plain_op();
  }
}

using Actors = std::vector<std::pair<std::string, std::vector<std::string>>>;

Actors gen_actors(int max_actors, int max_ops, bool blocking) {
  Actors actors;
  const int n = *rc::gen::inRange(1, max_actors + 1);
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> ops;
    const int k = *rc::gen::inRange(0, max_ops + 1);
    for (int i = 0; i < k; ++i) {
      if (blocking && *rc::gen::inRange(0, 3) == 0) {  // a well-formed critical section
        const std::string m = pick(kMutexes);
        ops.push_back("lock " + m);
        ops.push_back(gen_plain_op());
        ops.push_back("unlock " + m);
      } else {
        ops.push_back(blocking ? gen_any_op() : gen_plain_op());
      }
    }
    actors.emplace_back(std::string(1, static_cast<char>('a' + a)), ops);
  }
  return actors;
}

// Declares every variable (so a check may name one no actor touches) and checks one value.
nlohmann::json gen_config() {
  return {{"vars", {{"x", 0}, {"y", 0}, {"z", 0}}},
          {"check", nlohmann::json::array({pick(kVars) + " == " + std::to_string(*rc::gen::inRange(0, 3))})}};
}

std::uint64_t multinomial(const Actors& actors) {
  std::uint64_t result = 1, total = 0;
  for (const auto& [name, ops] : actors) {
    for (std::uint64_t i = 1; i <= ops.size(); ++i) {
      ++total;
      result = result * total / i;  // C(total, i) built incrementally stays integral
    }
  }
  return result;
}

sim::Trace random_walk_trace(const Scenario& s, std::uint64_t seed, TimeMode time, std::uint64_t max_steps = 200) {
  auto walk = sim::make_strategy("random", seed);
  sim::RunLimits limits;
  limits.seed = seed;
  limits.time = time;
  limits.max_steps = max_steps;
  return sim::record_execution(s, *walk, limits);
}

RC_GTEST_PROP(Properties, RandomWalkTracesReplayIdentically, ()) {
  const Actors actors = gen_actors(4, 6, true);
  const TimeMode time = *rc::gen::element(TimeMode::untimed, TimeMode::timed);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const Scenario s = testing::scenario_from_json(testing::script_scenario(actors, gen_config()));
  const auto max_steps = *rc::gen::inRange<std::uint64_t>(1, 40);
  const sim::Trace trace = random_walk_trace(s, seed, time, max_steps);
  RC_TAG(std::string(verdict_name(trace.verdict)));
  const sim::Trace read_back = sim::trace_from_json(nlohmann::json::parse(sim::trace_to_text(trace)), "<trace>");
  sim::ReplayReport replayed;
  try {
    replayed = sim::replay_trace(read_back, "<trace>");
  } catch (const sim::Divergence& d) {
    RC_FAIL("trace diverges at step " + std::to_string(d.step()) + ": " + d.what());
  }
  RC_ASSERT(replayed.events == trace.events);
  RC_ASSERT(replayed.result.verdict == trace.verdict);
  RC_ASSERT(replayed.result.message == trace.message);
}

RC_GTEST_PROP(Properties, DfsExploresEveryInterleavingOfNonBlockingPrograms, ()) {
  const Actors actors = gen_actors(4, 3, false);
  const Scenario s = testing::scenario_from_json(testing::script_scenario(actors, nullptr, {{"stop_at_first", false}, {"strategy", "dfs"}}));
  const auto report = testing::check(s);
  RC_ASSERT(report.result.verdict == Verdict::pass);
  RC_ASSERT(report.result.exhaustive);
  RC_ASSERT(report.result.stats.executions == multinomial(actors));
}

RC_GTEST_PROP(Properties, SameScenarioAndSeedGiveByteIdenticalTraces, ()) {
  const Actors actors = gen_actors(3, 5, true);
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const nlohmann::json doc = testing::script_scenario(actors, gen_config(),
                                                      {{"strategy", "random"}, {"max_executions", 20}});
  const Scenario first = testing::scenario_from_json(doc);
  const Scenario second = testing::scenario_from_json(doc);
  RC_ASSERT(sim::trace_to_text(random_walk_trace(first, seed, TimeMode::untimed)) ==
            sim::trace_to_text(random_walk_trace(second, seed, TimeMode::untimed)));
  const auto a = testing::check(first, {.settings = {.seed = seed}});
  const auto b = testing::check(second, {.settings = {.seed = seed}});
  RC_ASSERT(a.trace.has_value() == b.trace.has_value());
  if (a.trace) RC_ASSERT(sim::trace_to_text(*a.trace) == sim::trace_to_text(*b.trace));
}

TEST(Properties, MultinomialHelperIsRight) {
  EXPECT_EQ(multinomial({{"a", {"1", "2"}}, {"b", {"1", "2"}}}), 6u);
  EXPECT_EQ(multinomial({{"a", {"1", "2", "3"}}, {"b", {"1"}}, {"c", {"1", "2"}}}), 60u);
  EXPECT_EQ(multinomial({{"a", {}}, {"b", {"1"}}}), 1u);
}

}  // namespace
}  // namespace lockstep
