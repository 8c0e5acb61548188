// The supervisor system (seed 004): lockdep finds an inverted order without a deadlock,
// ranks refuse it at once, Risk 1 deadlocks only in its variant, and bad input is named.
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "lockstep/model/scenario.h"
#include "lockstep/sim/explain/lock_order.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

const std::string kDir = std::string(lockstep_source_dir()) + "/scenarios/supervisor/";

nlohmann::json scenario(nlohmann::json actors, nlohmann::json config = nullptr) {
  nlohmann::json d = {{"format", "lockstep-scenario/1"}, {"name", "t"}, {"system", "supervisor"}, {"actors", std::move(actors)}};
  if (!config.is_null()) d["config"] = std::move(config);
  return d;
}

TEST(Supervisor, EveryScenarioReachesItsExpectedVerdict) {
  EXPECT_GE(testing::expect_every_scenario_as_expected(kDir), 7);
}

TEST(Supervisor, LockdepReportsAnInversionThatNoExecutionDeadlocksOn) {
  // One goroutine, one execution: it cannot deadlock, yet the inversion is reported.
  const nlohmann::json actors = {{"a", {"remove_worker:w1", "lookup_under_worker_lock:w1"}}};
  const auto report = testing::check(testing::scenario_from_json(scenario(actors)));
  EXPECT_EQ(report.result.verdict, Verdict::violation);
  EXPECT_EQ(report.result.stats.by_verdict[static_cast<std::size_t>(Verdict::deadlock)], 0u);
  ASSERT_TRUE(report.result.first_failure);
  const std::string& m = report.result.first_failure->result.message;
  EXPECT_NE(m.find("remove_worker:w1 on a: Supervisor[0].mu then WorkerContext.mu"), std::string::npos) << m;
  EXPECT_NE(m.find("lookup_under_worker_lock:w1 on a: WorkerContext.mu then Supervisor[0].mu"), std::string::npos) << m;
}

TEST(Supervisor, ConsistentNestingIsNotReported) {
  const nlohmann::json actors = {{"a", {"remove_worker:w1", "remove_worker:w2"}}, {"b", {"remove_worker:w2"}}};
  EXPECT_EQ(testing::check(testing::scenario_from_json(scenario(actors))).result.verdict, Verdict::pass);
}

TEST(Supervisor, AnOrderTakenOnlyInAnotherExecutionIsReportedAcrossExecutions) {
  // One goroutine takes Supervisor.mu then WorkerContext.mu, or the reverse, as its input
  // decides: no execution takes both, none deadlocks, none reports a cycle of its own.
  const nlohmann::json actors = {{"handler", {"remove_worker:w1|lookup_under_worker_lock:w1"}}};
  for (const char* strategy : {"dpor", "dfs"}) {
    sim::CheckOverrides o;
    o.settings.strategy = strategy;
    const auto report = testing::check(testing::scenario_from_json(scenario(actors)), o);
    EXPECT_EQ(report.result.verdict, Verdict::violation) << strategy;
    EXPECT_EQ(report.result.stats.by_verdict[static_cast<std::size_t>(Verdict::pass)], report.result.stats.executions);
    ASSERT_TRUE(report.result.first_failure) << strategy;
    EXPECT_EQ(report.result.first_failure->result.invariant, "lock_order");
    EXPECT_NE(report.result.first_failure->result.message.find("across 2 executions"), std::string::npos);
    EXPECT_FALSE(report.trace.has_value());
    // One witness per edge: each execution replays alone, passes, and took its edge.
    ASSERT_EQ(report.witnesses.size(), 2u) << strategy;
    std::set<std::pair<std::string, std::string>> edges;
    for (const auto& w : report.witnesses) {
      edges.insert({w.edge.from, w.edge.to});
      EXPECT_EQ(w.trace.verdict, Verdict::pass);
      const auto replayed = sim::replay_trace(w.trace, "<witness>");
      EXPECT_EQ(replayed.result.verdict, Verdict::pass);
      bool took = false;
      for (const auto& e : replayed.events) took = took || e.op.starts_with("choose ");
      EXPECT_TRUE(took) << "each witness made the choice that takes its order";
    }
    EXPECT_TRUE(edges.contains({"Supervisor[0].mu", "WorkerContext.mu"}));
    EXPECT_TRUE(edges.contains({"WorkerContext.mu", "Supervisor[0].mu"}));
  }
}

TEST(LockOrderGraph, ReportsACycleOnlyWhenItsEdgesComeFromDifferentExecutions) {
  sim::LockOrderGraph g;
  const std::vector<sim::Decision> d1{{sim::Decision::Kind::run, 0}}, d2{{sim::Decision::Kind::run, 1}};
  // One execution's own cycle is its lockdep's to report.
  EXPECT_FALSE(g.add({{"A", "B", "a"}, {"B", "A", "b"}}, d1, 1));
  sim::LockOrderGraph h;
  EXPECT_FALSE(h.add({{"A", "B", "x: A then B"}}, d1, 1));
  EXPECT_FALSE(h.add({{"A", "B", "again"}, {"A", "A", "the same class twice"}}, d2, 2));  // nothing new
  EXPECT_EQ(h.edge_count(), 1u);
  EXPECT_FALSE(h.add({{"B", "C", "y: B then C"}}, d2, 2));
  const auto cycle = h.add({{"C", "A", "z: C then A"}}, d2, 3);
  ASSERT_TRUE(cycle);
  ASSERT_EQ(cycle->witnesses.size(), 3u);
  EXPECT_EQ(cycle->witnesses[0].edge.from, "C");  // the edge that closed it first
  EXPECT_EQ(cycle->witnesses[0].execution, 3u);
  EXPECT_EQ(cycle->witnesses[1].edge.from, "A");
  EXPECT_EQ(cycle->witnesses[1].decisions, d1);  // the first execution that took it
  EXPECT_NE(cycle->message.find("across 3 executions"), std::string::npos) << cycle->message;
  EXPECT_NE(cycle->message.find("C -> A (execution #3: z: C then A)"), std::string::npos) << cycle->message;
}

TEST(Supervisor, BadInputNamesThePlace) {
  auto error = [](const nlohmann::json& doc) {
    try {
      testing::scenario_from_json(doc);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(error(scenario({{"a", {"teleport"}}})).find("/actors/a/0: unknown operation"), std::string::npos);
  EXPECT_NE(error(scenario({{"a", {"tick_worker:w9"}}})).find("needs a worker"), std::string::npos);
  EXPECT_NE(error(scenario({{"a", {"start:w1"}}})).find("takes no worker"), std::string::npos);
  EXPECT_NE(error(scenario({{"a", {"start"}}}, {{"rules", {"rule9"}}})).find("/config/rules/0: unknown rule"), std::string::npos);
  EXPECT_NE(error(scenario({{"a", {"start|teleport"}}})).find("/actors/a/0: unknown operation \"teleport\""), std::string::npos);
  EXPECT_NE(error(scenario({{"a", {"start"}}}, {{"ranks", {{"x", "high"}}}})).find("/config/ranks/x"), std::string::npos);
}

}  // namespace
}  // namespace lockstep
