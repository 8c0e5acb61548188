// Cause analysis (sim/explain/cause.h): the orderings a failing trace depends on, found by running
// the system with one pair of dependent steps reordered.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "lockstep/cli/html_report.h"
#include "lockstep/lockstep.h"
#include "lockstep/sim/explain/cause.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/holding.h"
#include "lockstep/sim/explain/interleaving_table.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

std::string golden(const std::string& name) { return std::string(lockstep_source_dir()) + "/traces/" + name; }

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

TEST(Cause, EveryGoldenTraceRecordsTheCauseAnalysisGivesToday) {
  // A change to the analysis (or to what the systems do) that changes a cause shows here;
  // scripts/rerecord-traces writes the traces again.
  int checked = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(std::string(lockstep_source_dir()) + "/traces")) {
    if (!e.is_regular_file() || e.path().extension() != ".json") continue;
    const sim::Trace t = sim::load_trace(e.path().string());
    if (!is_failure(t.verdict)) continue;
    ASSERT_TRUE(t.cause.has_value()) << e.path();
    EXPECT_EQ(sim::trace_cause(t, e.path().string()), *t.cause) << e.path();
    ++checked;
  }
  EXPECT_GE(checked, 30);
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

// Holding spans (sim/explain/holding.h), from the same replayed facts.
TEST(Holding, APhantomGrantLeavesTheLockHeldAndTheNextHookWaitsBehindIt) {
  const std::string path = golden("headspace/bug-conditional-unlock-blocks-hook.json");
  const sim::Trace t = sim::load_trace(path);
  const sim::ExecutionFacts facts = sim::trace_facts(t, path);
  const auto spans = sim::holding_spans(facts);
  auto actor = [&](const std::string& name) {
    return static_cast<ActorId>(std::find(t.actors.begin(), t.actors.end(), name) - t.actors.begin());
  };
  auto object = [&](const sim::Span& s) { return facts.object_names.at(s.object); };
  // pre_tool_use#1 holds the agent's key from its grant (step 3) to its unlock (step 16).
  bool pre_held = false, post_waited = false, post_leaked = false, notification_waited = false;
  for (const auto& s : spans) {
    if (s.kind == sim::Span::Kind::hold && s.actor == actor("pre_tool_use#1") && object(s) == "advisory(1,1,2)") {
      pre_held = s.from == 3 && s.to == 16 && !s.open_at_end;
    }
    // post_tool_use#1 queues behind it (step 14) and times out at 19, yet was granted.
    if (s.kind == sim::Span::Kind::wait && s.actor == actor("post_tool_use#1")) {
      post_waited = s.from == 14 && s.to == 19 && s.ended == "timed out, yet granted (phantom grant)" &&
                    s.holders == std::vector<ActorId>{actor("pre_tool_use#1")};
    }
    if (s.kind == sim::Span::Kind::hold && s.actor == actor("post_tool_use#1") && object(s) == "advisory(1,1,2)") {
      post_leaked = s.from == 19 && s.open_at_end;
    }
    // notification#1 then waits behind the leaked lock.
    if (s.kind == sim::Span::Kind::wait && s.actor == actor("notification#1")) {
      notification_waited = s.holders == std::vector<ActorId>{actor("post_tool_use#1")};
    }
  }
  EXPECT_TRUE(pre_held);
  EXPECT_TRUE(post_waited);
  EXPECT_TRUE(post_leaked);
  EXPECT_TRUE(notification_waited);
}

TEST(Holding, AnXactLockEndsAtTheCommitThatLetsItGo) {
  // bug-xact-lock: the hook takes pg_advisory_xact_lock inside a transaction it commits
  // before its work is done: the bar ends at that COMMIT (step 7), not at the hook's end.
  const std::string path = golden("headspace/bug-xact-lock.json");
  const sim::Trace t = sim::load_trace(path);
  const sim::ExecutionFacts facts = sim::trace_facts(t, path);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> advisory;
  for (const auto& s : sim::holding_spans(facts)) {
    if (s.kind == sim::Span::Kind::hold && facts.object_names.at(s.object).starts_with("advisory")) {
      advisory.emplace_back(s.from, s.to);
    }
  }
  ASSERT_GE(advisory.size(), 2u);
  EXPECT_EQ(advisory[0].first, 4u);
  EXPECT_EQ(advisory[0].second, 7u);
  EXPECT_EQ(op_of(t, 7).op, "commit advisory(1,1,2) 1002");
}

// A worker that updates a row (no FOR UPDATE: the UPDATE takes its row lock at once),
// observes, and commits; the invariant fails at the end so that a trace is written.
struct Updater {
  explicit Updater(Env& env) : pool(env.new_pg_pool({})) {
    auto c = pool->checkout().value();
    (void)c->insert_row("jobs", 1, {{"status", "queued"}});
  }
  std::unique_ptr<pg::Pool> pool;
};

void update_and_commit(Updater& s, Env& env, ActorId) {
  auto c = s.pool->checkout().value();
  (void)c->begin();
  (void)c->update_row("jobs", 1, {{"status", "done"}});
  env.observe({"ran", 0, 1});
  (void)c->commit();
}

Model<Updater> updater_model() {
  return Model<Updater>("updater")
      .actors(1, update_and_commit)
      .invariant("never", [](Updater&) -> std::optional<std::string> { return "done"; })
      .trace_dir(::testing::TempDir() + "/updater-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());  // ctest runs the tests at once
}

sim::Trace updater_trace() {
  const auto report = updater_model().run();
  EXPECT_TRUE(report.trace_path) << report.describe();
  return sim::load_trace(*report.trace_path);
}

TEST(Holding, AnUpdateHoldsItsRowLockUntilTheCommit) {
  const sim::Trace t = updater_trace();
  const sim::ExecutionFacts facts = sim::replay_facts(*system_of(updater_model().spec()), sim::RunLimits{}, t.decisions);
  std::uint64_t update = 0, commit = 0;
  for (const auto& e : t.events) {
    if (e.op.starts_with("update_row")) update = e.step;
    if (e.op.starts_with("commit")) commit = e.step;
  }
  ASSERT_GT(commit, update);
  bool row_held = false;
  for (const auto& sp : sim::holding_spans(facts)) {
    if (sp.kind == sim::Span::Kind::hold && facts.object_names.at(sp.object) == "jobs#1") {
      row_held = sp.from == update && sp.to == commit && !sp.open_at_end;
    }
  }
  EXPECT_TRUE(row_held) << "no bar for the row lock the UPDATE took (steps " << update << " to " << commit << ")";
}

// The report's table of every event: an observation shares its step's row.
TEST(Report, AnObservationTakesNoRowOfItsOwn) {
  const sim::Trace t = updater_trace();
  const std::string html = cli::html_report(t, "replay", nullptr);
  const std::string table = html.substr(html.find("Every event"));
  std::size_t rows = 0;
  for (std::size_t at = table.find("<tr><td class=\"step\">"); at != std::string::npos; at = table.find("<tr><td class=\"step\">", at + 1)) ++rows;
  std::set<std::pair<std::uint64_t, int>> steps;
  for (const auto& e : t.events) steps.insert({e.step, e.actor});
  EXPECT_EQ(rows, steps.size()) << table;
  EXPECT_NE(table.find("observe ran"), std::string::npos) << table;
}

}  // namespace
}  // namespace lockstep