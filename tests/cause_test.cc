// Cause analysis (sim/cause.h): the orderings a failing trace depends on, found by running
// the system with one pair of dependent steps reordered.
#include <gtest/gtest.h>

#include <sstream>

#include "lockstep/sim/cause.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/interleaving_table.h"
#include "test_support.h"

namespace lockstep {
namespace {

std::string golden(const std::string& name) { return std::string(LOCKSTEP_SOURCE_DIR) + "/traces/" + name; }

struct Analysed {
  sim::Trace trace;
  sim::Cause cause;
};

// The cause as computed now from the trace's decisions (not as recorded in the file).
Analysed analyse(const std::string& name) {
  Analysed a{sim::load_trace(golden(name)), {}};
  a.cause = sim::trace_cause(a.trace, golden(name));
  return a;
}

// The operation event (the first event) of a step.
const sim::LogEvent& op_of(const sim::Trace& t, std::uint64_t step) {
  for (const auto& e : t.events) {
    if (e.step == step) return e;
  }
  throw std::out_of_range("no such step");
}

// Whether some cause pair has `first` done by actor `a` with an operation starting with
// `op_a`, and `second` by `b` starting with `op_b`.
bool has_pair(const Analysed& x, const std::string& a, const std::string& op_a, const std::string& b,
              const std::string& op_b) {
  for (const auto& p : x.cause.pairs) {
    const auto& f = op_of(x.trace, p.first);
    const auto& s = op_of(x.trace, p.second);
    if (x.trace.actors[f.actor] == a && f.op.starts_with(op_a) && x.trace.actors[s.actor] == b && s.op.starts_with(op_b)) {
      return true;
    }
  }
  return false;
}

TEST(Cause, LostUpdateDependsOnEachReadBeforeTheOtherWrite) {
  const Analysed x = analyse("lost-update.json");
  ASSERT_TRUE(x.cause.computed) << x.cause.reason;
  // a: read x -> 0, b: read x -> 0, b: write x 1, a: write x 1. Had b's write come before
  // a's read (or a's before b's), one of them would have read 1: the lost update is a read
  // before the other's write, not the order of the two writes.
  EXPECT_TRUE(has_pair(x, "b", "read x", "a", "write x")) << x.cause.pairs.size();
  EXPECT_TRUE(has_pair(x, "a", "read x", "b", "write x"));
  EXPECT_FALSE(has_pair(x, "b", "write x", "a", "write x"));
  for (const auto& p : x.cause.pairs) {
    EXPECT_EQ(p.outcome, "passes");
    EXPECT_NE(p.sentence.find("would have returned 1"), std::string::npos) << p.sentence;
  }
}

TEST(Cause, SkillNoRefreshDependsOnTheSecondHookReadingTheAgentBeforeTheFirstWroteIt) {
  // The bug: user_prompt_submit decides to inject the persona skills from the agent row it
  // read before taking the agent's lock, and does not read it again under the lock. So the
  // second hook injects again when it read the row before the first hook marked it.
  const Analysed x = analyse("headspace/bug-skill-no-refresh.json");
  ASSERT_TRUE(x.cause.computed) << x.cause.reason;
  ASSERT_TRUE(has_pair(x, "user_prompt_submit#2", "read_row agents#1", "user_prompt_submit#1", "update_row agents#1"));
  const auto& p = x.cause.pairs.front();
  EXPECT_EQ(p.outcome, "passes");
  EXPECT_NE(p.sentence.find("prompt_injected_at=0"), std::string::npos) << p.sentence;
}

TEST(Cause, DeferredStopNoRecheckDependsOnReadingTheCommandBeforeSessionEndCompletedIt) {
  // The bug: the deferred stop reads the command's state (processing), waits for the agent's
  // lock and completes the command without reading its state again, while session_end
  // completed it in between. Had session_end's update come before that read, the deferred
  // stop would have seen "complete" and stopped.
  const Analysed x = analyse("headspace/bug-deferred-stop-no-recheck.json");
  ASSERT_TRUE(x.cause.computed) << x.cause.reason;
  EXPECT_TRUE(has_pair(x, "deferred_stop#1", "read_row commands#1", "session_end#1", "update_row commands#1"));
  bool saw_complete = false;
  for (const auto& p : x.cause.pairs) saw_complete = saw_complete || p.sentence.find("state=complete") != std::string::npos;
  EXPECT_TRUE(saw_complete);
}

TEST(Cause, IsDeterministicAndRecordedInTheTrace) {
  const Analysed x = analyse("lost-update.json");
  EXPECT_EQ(sim::trace_cause(x.trace, golden("lost-update.json")), x.cause);
  // Written and read back unchanged.
  sim::Trace t = x.trace;
  t.cause = x.cause;
  const sim::Trace back = sim::trace_from_json(nlohmann::json::parse(sim::trace_to_text(t)), "<mem>");
  ASSERT_TRUE(back.cause.has_value());
  EXPECT_EQ(*back.cause, x.cause);
  EXPECT_EQ(sim::trace_to_text(back), sim::trace_to_text(t));
}

TEST(Cause, OutOfBudgetSaysNotComputed) {
  const sim::Trace t = sim::load_trace(golden("lost-update.json"));
  sim::CauseBudget budget;
  budget.max_attempts = 1;
  const sim::Cause c = sim::trace_cause(t, golden("lost-update.json"), budget);
  EXPECT_FALSE(c.computed);
  EXPECT_TRUE(c.pairs.empty());
  EXPECT_NE(c.reason.find("out of budget"), std::string::npos) << c.reason;
}

TEST(Cause, ATraceWhoseFailureNeedsNoRaceHasNoPairs) {
  // One actor unlocks a mutex it does not hold: no other actor, no race.
  const Scenario s = testing::scenario_from_json(
      testing::script_scenario({{"a", {"unlock m"}}, {"b", {"read x r"}}}));
  const sim::CheckReport r = testing::check(s);
  ASSERT_TRUE(r.trace.has_value());
  ASSERT_TRUE(r.trace->cause.has_value());
  EXPECT_TRUE(r.trace->cause->computed);
  EXPECT_TRUE(r.trace->cause->pairs.empty());
}

TEST(Cause, TheTableMarksBothStepsOfEachPair) {
  const Analysed x = analyse("lost-update.json");
  std::ostringstream out;
  sim::print_interleaving(out, x.trace.events, x.trace.actors, sim::kDefaultColumnWidth, &x.cause);
  const std::string text = out.str();
  EXPECT_NE(text.find("1>"), std::string::npos) << text;
  EXPECT_NE(text.find(">1"), std::string::npos) << text;
  EXPECT_NE(text.find("cause: the failure depends on 2 orderings"), std::string::npos) << text;
}

}  // namespace
}  // namespace lockstep
