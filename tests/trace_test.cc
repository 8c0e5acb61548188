// Traces: canonical text, strict reading, replay, and divergence detection.
#include "lockstep/sim/explain/trace.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "lockstep/sim/check.h"
#include "test_support.h"

namespace lockstep {
namespace {

using testing::check;
using testing::scenario_from_json;
using testing::script_scenario;

sim::Trace lost_update_trace() {
  auto doc = script_scenario({{"a", {"read x r", "write x r+1"}}, {"b", {"read x r", "write x r+1"}}},
                             {{"check", {"x == 2"}}});
  sim::CheckOverrides as_found;
  as_found.shrink = false;  // the decisions a0 a1 a0 a1, as dfs finds them
  return *check(scenario_from_json(doc), as_found).trace;
}

sim::Trace reparse(const std::string& text) {
  return sim::trace_from_json(nlohmann::json::parse(text), "<trace>");
}

std::string error_of(nlohmann::json doc) {
  try {
    sim::trace_from_json(doc, "<trace>");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Trace, TextRoundTripsByteForByte) {
  const sim::Trace t = lost_update_trace();
  const std::string text = sim::trace_to_text(t);
  EXPECT_EQ(sim::trace_to_text(reparse(text)), text);
  EXPECT_EQ(t.verdict, Verdict::violation);
  EXPECT_EQ(t.invariant, "final_state");
  EXPECT_EQ(t.actors, (std::vector<std::string>{"a", "b"}));
}

TEST(Trace, ReplayReproducesEventsAndVerdict) {
  const sim::Trace t = reparse(sim::trace_to_text(lost_update_trace()));
  const auto r = sim::replay_trace(t, "<trace>");
  EXPECT_EQ(r.result.verdict, Verdict::violation);
  EXPECT_EQ(r.events, t.events);
}

TEST(Trace, MalformedTracesNameThePointer) {
  nlohmann::json doc = nlohmann::json::parse(sim::trace_to_text(lost_update_trace()));
  auto bad = doc;
  bad["decisions"][2] = "x9";
  EXPECT_EQ(error_of(bad), "<trace>: /decisions/2: bad decision \"x9\": expected a<actor>, t<actor> or c<value>");
  bad = doc;
  bad["format"] = "lockstep-trace/0";
  EXPECT_EQ(error_of(bad), "<trace>: /format: unsupported trace format \"lockstep-trace/0\" (this lockstep reads \"lockstep-trace/1\")");
  bad = doc;
  bad["events"][0]["colour"] = "red";
  EXPECT_EQ(error_of(bad).rfind("<trace>: /events/0/colour: unknown key \"colour\"", 0), 0u);
  bad = doc;
  bad["scenario"]["system"] = "nope";
  const sim::Trace t = sim::trace_from_json(bad, "<trace>");
  try {
    sim::replay_trace(t, "<trace>");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "<trace>: /scenario/system: unknown system \"nope\" (known: script, bench, headspace, phase_lock, supervisor, dal, sql; a system of your own runs in your own executable, built with lockstep::main: see examples/jobclaim)");
  }
}

std::string divergence_of(const sim::Trace& t) {
  try {
    sim::replay_trace(t, "<trace>");
  } catch (const sim::Divergence& d) {
    return "step " + std::to_string(d.step()) + ": " + d.what();
  }
  return "(no divergence)";
}

TEST(Trace, DivergenceNamesTheStep) {
  const sim::Trace good = lost_update_trace();
  auto t = good;
  t.decisions[1] = {sim::Decision::Kind::run, 5};
  EXPECT_EQ(divergence_of(t), "step 1: trace takes a5 but it is not enabled (enabled: a0 a1)");
  t = good;
  t.decisions = {{sim::Decision::Kind::run, 0}, {sim::Decision::Kind::run, 0}, {sim::Decision::Kind::run, 1},
                 {sim::Decision::Kind::run, 1}};
  EXPECT_EQ(divergence_of(t),
            "step 1: the trace records \"b at 0 ns: read x -> 0\", the replay did \"a at 0 ns: write x 1 -> (none)\"");
  t = good;
  t.decisions.pop_back();
  EXPECT_EQ(divergence_of(t), "step 3: trace ends after 3 decisions, but the execution asks for a scheduling decision");
  t = good;
  t.decisions.push_back({sim::Decision::Kind::run, 0});
  EXPECT_EQ(divergence_of(t).rfind("step 4: the execution ended after 4 of the trace's 5 decisions", 0), 0u);
  t = good;
  t.events[3].result = "7";
  EXPECT_EQ(divergence_of(t).rfind("step 3: the trace records \"b at 0 ns: write x 1 -> 7\"", 0), 0u);
  t = good;
  t.message = "something else";
  EXPECT_EQ(divergence_of(t).rfind("step 4: the trace ends with violation " + good.invariant + " (\"something else\")", 0), 0u)
      << divergence_of(t);
}

// An edited invariant name is what differs: both sides name theirs.
TEST(Trace, DivergenceOfTheVerdictNamesBothInvariants) {
  auto t = lost_update_trace();
  const std::string recorded = t.invariant;
  t.invariant = "no_double_runs";
  const std::string d = divergence_of(t);
  EXPECT_NE(d.find("the trace ends with violation no_double_runs (\""), std::string::npos) << d;
  EXPECT_NE(d.find("the replay with violation" + (recorded.empty() ? std::string(" (") : " " + recorded + " (")),
            std::string::npos) << d;
}

// A trace whose embedded scenario was edited to make other actors does not replay as
// identical, even when the recorded decisions still run to the end.
TEST(Trace, ActorsOfAnEditedScenarioAreADivergence) {
  auto t = lost_update_trace();
  t.scenario["actors"].push_back({{"name", "c"}, {"ops", {"write y 1"}}});
  EXPECT_EQ(divergence_of(t), "step 0: the trace records actors a, b, its scenario makes a, b, c");
}

TEST(Trace, TimedDeadlockAndChoiceTracesReplay) {
  const std::vector<nlohmann::json> docs = {
      script_scenario({{"a", {"sleep 5", "write x 1"}}, {"b", {"sleep 5", "read x r"}}}, {{"check", {"b.r == 0"}}},
                      {{"time", "timed"}}),
      script_scenario({{"a", {"lock m1", "lock m2"}}, {"b", {"lock m2", "lock m1"}}}),
      script_scenario({{"a", {"lock m", "sleep 5", "unlock m"}}, {"b", {"lockfor m 10 ok"}}}, {{"check", {"b.ok == 1"}}}),
  };
  for (const auto& doc : docs) {
    const auto report = check(scenario_from_json(doc));
    ASSERT_TRUE(report.trace.has_value()) << doc.dump();
    const sim::Trace t = reparse(sim::trace_to_text(*report.trace));
    EXPECT_EQ(sim::replay_trace(t, "<trace>").events, report.trace->events);
  }
}

}  // namespace
}  // namespace lockstep

#include "lockstep/lockstep.h"

namespace lockstep {
namespace {

// Team note 4: a row shows what its statement did. A lease taken by compare-and-set on a row
// and on a shared variable: each outcome (set, or the value that made it fail) is in the row;
// an ordered observation is one row, not a bare "observe" beside it.
struct Lease {
  explicit Lease(Env& env)
      : pool(env.new_pg_pool(pg::PoolConfig{.application_name = "lease", .pool_size = 2})),
        fence(env.new_shared_var("fence", 0)) {
    (void)pool->checkout().value()->insert_row("leases", 1, {{"owner", ""}});
  }
  std::unique_ptr<pg::Pool> pool;
  std::unique_ptr<SharedVar> fence;
  int holders = 0;
};

TEST(TraceRows, ARowShowsWhatItsStatementDid) {
  const ModelReport r = Model<Lease>("lease-rows")
                            .actors(2,
                                    [](Lease& s, Env& env, ActorId self) {
                                      auto c = s.pool->checkout().value();
                                      const std::string me = self == 0 ? "a" : "b";
                                      if (c->update_row_if("leases", 1, "owner", "", {{"owner", me}}).value() == 0) return;
                                      (void)s.fence->compare_exchange(0, self + 1);
                                      env.observe(Event{"holder", self, 1});
                                      ++s.holders;
                                    })
                            // Fails on every execution with one holder, so that a trace is written.
                            .invariant("traced", [](Lease& s) -> std::optional<std::string> {
                              return s.holders == 1 ? std::optional<std::string>("one holder") : std::nullopt;
                            })
                            .trace_dir(::testing::TempDir() + "/trace-rows")
                            .run();
  ASSERT_EQ(r.verdict, Verdict::violation) << r.describe();
  ASSERT_TRUE(r.trace_path);
  const sim::Trace t = sim::load_trace(*r.trace_path);
  std::string rows;
  for (const auto& e : t.events) rows += e.op + " -> " + e.result + "\n";
  EXPECT_NE(rows.find("update_row_if leases#1 1 -> owner was \"\": set {owner=a}"), std::string::npos) << rows;
  EXPECT_NE(rows.find("owner is \"a\", not \"\": unchanged"), std::string::npos) << rows;
  EXPECT_NE(rows.find("cas fence 1 -> ok (fence was 0, now 1)"), std::string::npos) << rows;
  EXPECT_NE(rows.find("observe holder -> 0 1"), std::string::npos) << rows;
  EXPECT_EQ(rows.find("observe -> "), std::string::npos) << "a bare observe row:\n" << rows;
  EXPECT_NE(r.interleaving.find("set {owner=a}"), std::string::npos) << r.interleaving;
}

// An SQL statement's row shows its text on its first step and its result rows on its last.
TEST(TraceRows, AnSqlStepShowsItsStatementAndItsResult) {
  const nlohmann::json doc = {{"format", "lockstep-scenario/1"}, {"name", "n"}, {"system", "sql"},
                              {"config", {{"spec", "setup { CREATE TABLE t (id int PRIMARY KEY, v int); INSERT INTO t VALUES (1, 5); }\n"
                                                   "session s1\nstep r { SELECT id, v FROM t; }\nstep w { UPDATE t SET v = 6 WHERE id = 1; }\n"
                                                   "check \"six\" { SELECT v = 7 FROM t WHERE id = 1; }\n"}}}};
  const sim::CheckReport r = sim::check_scenario(parse_scenario(doc, "f.json"), {});
  ASSERT_TRUE(r.trace) << verdict_name(r.result.verdict);
  std::string rows;
  for (const auto& e : r.trace->events) rows += e.op + " -> " + e.result + "\n";
  EXPECT_NE(rows.find("[SELECT id, v FROM t]"), std::string::npos) << rows;
  EXPECT_NE(rows.find("SELECT 1: (1, 5)"), std::string::npos) << rows;
  EXPECT_NE(rows.find("[UPDATE t SET v = 6 WHERE id = 1]"), std::string::npos) << rows;
  EXPECT_NE(rows.find("UPDATE 1"), std::string::npos) << rows;
}

// A golden trace re-recorded after a change to what rows show keeps its decisions.
TEST(TraceRows, RerecordingKeepsTheDecisions) {
  sim::Trace t = lost_update_trace();
  const std::string file = ::testing::TempDir() + "/rerecord.json";
  for (auto& e : t.events) e.result = "stale";
  sim::save_trace(t, file);
  const testing::CliRun run = testing::run_cli_in_process({"replay", file, "--rerecord", file});
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const sim::Trace again = sim::load_trace(file);
  EXPECT_EQ(again.decisions, t.decisions);
  EXPECT_EQ(testing::run_cli_in_process({"replay", file}).code, 0);
}

}  // namespace
// An ordered observation made while an actor unwinds from a crash takes no step of its own:
// it is a row of its own, and the crash step keeps its row.
TEST(TraceRows, AnObservationWhileUnwindingFromACrashKeepsTheCrashRow) {
  struct Var {
    explicit Var(Env& env) : x(env.new_shared_var("x", 0)) {}
    std::unique_ptr<SharedVar> x;
    bool crashed = false;
  };
  struct Leave {
    Env& env;
    ~Leave() { env.observe(Event{"leave", 0, 1}); }
  };
  const ModelReport r = Model<Var>("crash-observe")
                            .actor("a",
                                   [](Var& s, Env& env, ActorId) {
                                     try {
                                       env.crash_points(CrashKind::process);
                                       Leave leave{env};
                                       s.x->store(1);
                                       s.x->store(2);
                                       env.no_crash_points();
                                     } catch (const Crashed&) {
                                       s.crashed = true;
                                     }
                                   })
                            .invariant("traced", [](Var& s) -> std::optional<std::string> {
                              if (s.crashed) return std::string("crashed");  // fails on a crash, to write a trace
                              return std::nullopt;
                            })
                            .trace_dir(::testing::TempDir() + "/trace-rows-crash")
                            .run();
  ASSERT_EQ(r.verdict, Verdict::violation) << r.describe();
  const sim::Trace t = sim::load_trace(*r.trace_path);
  int leave_rows = 0;
  for (const auto& e : t.events) {
    if (e.op == "observe leave") ++leave_rows;
    EXPECT_NE(e.op, "observe") << "a bare observe row";
  }
  EXPECT_EQ(leave_rows, 1);
  EXPECT_TRUE(std::any_of(t.events.begin(), t.events.end(), [](const auto& e) { return e.op.rfind("write x", 0) == 0; }));
}

}  // namespace lockstep
