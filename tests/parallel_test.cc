// Exploring one search on several threads (ExploreOptions::jobs: sim/explore/speculation.h for dpor,
// sim/explore/portfolio.h for random): the result is the one thread's in every respect (counts,
// steps, verdict, the first failure and its trace), on every scenario of the repository, on
// larger searches where other threads' subtrees are taken, and for random walks. The random-program property is in dpor_test.cc.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "lockstep/real/task_threads.h"
#include "lockstep/sim/explore/subtree_exchange.h"
#include "lockstep/sim/explain/trace.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

using testing::scenario_from_json;

// What must not depend on the number of threads.
std::string summary(const sim::CheckReport& r) {
  const sim::ExploreStats& s = r.result.stats;
  std::string out = fmt::format("{} {} exec={} redundant={} unfair={} steps={} timer={} failures={} exhaustive={}",
                                verdict_name(r.result.verdict), r.result.stop_reason, s.executions, s.redundant,
                                s.unfair, s.steps, s.timer_steps, s.failures, r.result.exhaustive);
  for (const auto v : s.by_verdict) out += fmt::format(" {}", v);
  for (const auto& [mark, n] : s.marks) out += fmt::format(" {}={}", mark, n);
  if (r.result.first_failure) {
    out += fmt::format(" first={} {}", r.result.first_failure->execution, r.result.first_failure->result.message);
    for (const auto& d : r.result.first_failure->decisions) out += " " + sim::decision_text(d);
  }
  if (r.trace) out += " trace=" + sim::trace_to_text(*r.trace);
  for (const auto& note : r.result.notes) out += " note: " + note;
  return out;
}

TEST(Parallel, EveryScenarioOfTheRepositoryGivesWhatOneThreadGives) {
  int checked = 0;
  std::uint64_t taken = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(lockstep_source_dir()) + "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const Scenario s = load_scenario(entry.path().string());
    const sim::CheckReport one = testing::check(s, {});
    sim::CheckOverrides two;
    two.settings.jobs = 2;
    two.speculate_after = 0;
    const sim::CheckReport parallel = testing::check(s, two);
    EXPECT_EQ(summary(parallel), summary(one)) << entry.path();
    taken += parallel.result.speculation.taken;
    ++checked;
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(taken, 0u) << "no subtree explored by another thread was taken: the test shows nothing";
}

// dfs gives its pending branches away too (sim/strategies/dfs_strategy.cc): every scenario searched
// with dfs, up to 600 executions (a bound cuts where one thread's would).
TEST(Parallel, DfsOnEveryScenarioGivesWhatOneThreadGives) {
  int checked = 0;
  std::uint64_t taken = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(lockstep_source_dir()) + "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const Scenario s = load_scenario(entry.path().string());
    sim::CheckOverrides o;
    o.settings.strategy = "dfs";
    o.settings.max_preemptions = -1;
    o.settings.max_executions = 600;
    const sim::CheckReport one = testing::check(s, o);
    o.settings.jobs = 2;
    o.speculate_after = 0;
    const sim::CheckReport parallel = testing::check(s, o);
    EXPECT_EQ(summary(parallel), summary(one)) << entry.path();
    EXPECT_EQ(parallel.result.speculation.jobs, 2) << entry.path();
    if (one.result.exhaustive) {  // a bound may cut a speculation; its start never changes
      EXPECT_EQ(parallel.result.speculation.dropped, 0u) << entry.path() << ": a dfs subtree never changes";
    }
    taken += parallel.result.speculation.taken;
    ++checked;
  }
  EXPECT_GT(checked, 100);
  EXPECT_GT(taken, 0u) << "no dfs subtree explored by another thread was taken: the test shows nothing";
}

nlohmann::json bench_scenario(const std::string& program, int n, bool stop_at_first = true) {
  return {{"format", "lockstep-scenario/1"},
          {"name", fmt::format("{}-{}", program, n)},
          {"system", "bench"},
          {"config", {{"program", program}, {"n", n}}},
          {"explore", {{"strategy", "dpor"}, {"stop_at_first", stop_at_first}}},
          {"expect", {{"verdict", "pass"}}}};
}

TEST(Parallel, LargerSearchesTakeSubtreesAndCountTheSame) {
  for (const auto& [program, n] : std::vector<std::pair<std::string, int>>{{"lastzero", 10}, {"indexer", 12}}) {
    const Scenario s = scenario_from_json(bench_scenario(program, n));
    const sim::CheckReport one = testing::check(s, {});
    for (int jobs : {2, 4}) {
      sim::CheckOverrides o;
      o.settings.jobs = jobs;
      o.speculate_after = 0;
      const sim::CheckReport parallel = testing::check(s, o);
      EXPECT_EQ(summary(parallel), summary(one)) << program << " jobs " << jobs;
    }
  }
}

TEST(Parallel, ASmallSearchRunsAloneAtFirst) {
  // Below ExploreOptions::speculate_after executions nothing is given away (it would cost
  // more than it gains); past it, a larger search gives work away.
  sim::CheckOverrides o;
  o.settings.jobs = 2;
  const sim::CheckReport small = testing::check(scenario_from_json(bench_scenario("lastzero", 5)), o);
  EXPECT_LT(small.result.stats.executions, 1000u);
  EXPECT_EQ(small.result.speculation.taken + small.result.speculation.dropped, 0u);
  const sim::CheckReport large = testing::check(scenario_from_json(bench_scenario("lastzero", 12)), o);
  EXPECT_GT(large.result.speculation.taken + large.result.speculation.dropped, 0u);
}

TEST(Parallel, AnExecutionBoundCutsWhereOneThreadWould) {
  const Scenario s = scenario_from_json(bench_scenario("lastzero", 10));
  for (std::uint64_t bound : {1, 7, 100, 1000}) {
    sim::CheckOverrides o;
    o.settings.max_executions = bound;
    const sim::CheckReport one = testing::check(s, o);
    o.settings.jobs = 3;
    o.speculate_after = 0;
    const sim::CheckReport parallel = testing::check(s, o);
    EXPECT_EQ(summary(parallel), summary(one)) << bound;
  }
}

TEST(Parallel, TheFirstFailureIsTheOneThreadsFirst) {
  // A lost update among four actors: many failing executions; the first in the serial order
  // is reported, with the same trace, however many threads found others.
  const nlohmann::json doc = testing::script_scenario(
      {{"a", {"read x r", "write x r+1"}}, {"b", {"read x r", "write x r+1"}}, {"c", {"read y r", "write y r+1"}},
       {"d", {"read y r", "write y r+1", "read x q", "write x q+1"}}},
      {{"vars", {{"x", 0}, {"y", 0}}}, {"check", {"x == 3"}}});
  const Scenario s = scenario_from_json(doc);
  const sim::CheckReport one = testing::check(s, {});
  ASSERT_EQ(one.result.verdict, Verdict::violation);
  for (int jobs : {2, 3, 8}) {
    sim::CheckOverrides o;
    o.settings.jobs = jobs;
    o.speculate_after = 0;
    EXPECT_EQ(summary(testing::check(s, o)), summary(one)) << jobs;
  }
}

// Random walks on several threads (sim/explore/portfolio.h): each execution is the one thread's
// (its seed is the search's and its index), taken in order: the same counts, first failure
// and trace, whether the search stops at the first failure, at an execution bound or runs
// every walk; and symmetry's filter (the walks of two identical actors) changes nothing.
TEST(Parallel, RandomWalksOnSeveralThreadsAreTheOneThreadsInOrder) {
  for (const bool stop_at_first : {true, false}) {
    nlohmann::json doc = testing::script_scenario(
        {{"a", {"read x r", "write x r+1"}}, {"b", {"read x r", "write x r+1"}}, {"c", {"lock m", "read x q", "write x q+1", "unlock m"}}},
        {{"vars", {{"x", 0}}}, {"check", {"x == 3"}}, {"symmetric", nlohmann::json::array({nlohmann::json::array({"a", "b"})})}});
    doc["explore"] = {{"strategy", "random"}, {"stop_at_first", stop_at_first}, {"max_executions", 3000}};
    const Scenario s = scenario_from_json(doc);
    const sim::CheckReport one = testing::check(s, {});
    ASSERT_EQ(one.result.verdict, Verdict::violation);
    EXPECT_EQ(one.result.speculation.jobs, 1);
    for (int jobs : {2, 3, 5}) {
      sim::CheckOverrides o;
      o.settings.jobs = jobs;
      const sim::CheckReport parallel = testing::check(s, o);
      EXPECT_EQ(summary(parallel), summary(one)) << jobs << " threads, stop_at_first " << stop_at_first;
      EXPECT_TRUE(parallel.result.speculation.portfolio);
      EXPECT_EQ(parallel.result.speculation.jobs, jobs);
      EXPECT_EQ(parallel.result.symmetry.actors, 2);
    }
  }
}

// Other processes (check --queue, sim/explore/subtree_exchange.h), in memory: each task explored by
// sim::serve_scenario, as a worker process does, from its text alone.
std::shared_ptr<testing::InMemoryExchange> in_memory_queue(const Scenario& scenario, sim::CheckOverrides overrides,
                                                          std::uint64_t* worker_executions) {
  overrides.settings.jobs = 1;
  return std::make_shared<testing::InMemoryExchange>([&scenario, overrides, worker_executions](const std::string& task) {
    struct One final : sim::SubtreeSource {
      std::optional<Task> task;
      std::string result;
      std::optional<Task> next(const std::function<bool()>&) override { return std::exchange(task, std::nullopt); }
      bool withdrawn(std::uint64_t) override { return false; }
      void finish(std::uint64_t, const std::string& r, std::uint64_t) override { result = r; }
    } source;
    source.task = sim::SubtreeSource::Task{1, task};
    sim::CheckOptions options;
    options.overrides = overrides;
    const sim::WorkerReport w = sim::serve_scenario(scenario, options, source);
    EXPECT_EQ(w.tasks, 1u);
    *worker_executions += w.explored;
    return source.result;
  });
}

sim::CheckReport check_with_queue(const Scenario& s, const sim::CheckOverrides& overrides,
                                  const std::shared_ptr<testing::InMemoryExchange>& queue) {
  sim::CheckOptions options;
  options.overrides = overrides;
  options.exchange = queue;
  std::optional<real::TaskThreads> threads;
  if (overrides.settings.jobs.value_or(1) > 1) options.spawn = threads.emplace(*overrides.settings.jobs).spawner();
  return sim::check_scenario(s, options);
}

TEST(Parallel, SubtreesExploredByOtherProcessesGiveWhatOneProcessGives) {
  std::uint64_t remote = 0, back = 0;
  int checked = 0;
  auto compare = [&](const Scenario& s, const std::string& what) {
    const sim::CheckReport one = testing::check(s, {});
    for (const int jobs : {1, 2}) {
      sim::CheckOverrides o;
      o.settings.jobs = jobs;
      o.speculate_after = 0;
      std::uint64_t worker_executions = 0;
      auto queue = in_memory_queue(s, o, &worker_executions);
      const sim::CheckReport split = check_with_queue(s, o, queue);
      EXPECT_EQ(summary(split), summary(one)) << what << " jobs " << jobs;
      const auto& spec = split.result.speculation;
      EXPECT_EQ(spec.taken_back, queue->taken_back) << what;
      EXPECT_LE(spec.remote_taken, queue->explored_tasks) << what;
      EXPECT_LE(spec.remote_taken_executions, worker_executions) << what;
      remote += spec.remote_taken;
      back += spec.taken_back;
    }
    ++checked;
  };
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(lockstep_source_dir()) + "/scenarios")) {
    if (entry.path().extension() != ".json") continue;
    const Scenario s = load_scenario(entry.path().string());
    if (s.explore.strategy != "dpor" || s.explore.max_preemptions >= 0) continue;
    compare(s, entry.path().string());
  }
  for (const auto& [program, n] : std::vector<std::pair<std::string, int>>{{"lastzero", 10}, {"indexer", 12}}) {
    compare(scenario_from_json(bench_scenario(program, n)), program);
  }
  EXPECT_GT(checked, 50);
  EXPECT_GT(remote, 0u) << "no worker's subtree was taken: the test shows nothing";
  EXPECT_GT(back, 0u);
}

// The redundancy bound (ExploreOptions::max_redundant): while the redundant work the queue
// reports is over 5% of the executions so far, the walk publishes nothing more and explores
// those subtrees itself; the result is the one process's either way.
TEST(Parallel, TheQueueStopsPublishingAtTheRedundancyBound) {
  const Scenario s = scenario_from_json(bench_scenario("lastzero", 10));
  const sim::CheckReport one = testing::check(s, {});
  sim::CheckOverrides o;
  o.speculate_after = 0;
  std::uint64_t worker_executions = 0;
  auto open = in_memory_queue(s, o, &worker_executions);
  const sim::CheckReport published = check_with_queue(s, o, open);
  EXPECT_EQ(summary(published), summary(one));
  EXPECT_GT(published.result.speculation.published, 0u);
  EXPECT_EQ(published.result.speculation.held_back, 0u);

  // More redundant work reported than the search has executions: nothing is published.
  auto held = in_memory_queue(s, o, &worker_executions);
  held->reported = one.result.stats.executions * 100;
  const sim::CheckReport alone = check_with_queue(s, o, held);
  EXPECT_EQ(summary(alone), summary(one));
  EXPECT_EQ(alone.result.speculation.published, 0u);
  EXPECT_EQ(alone.result.speculation.held_back, 1u);

  // Reported once the walk is under way: publishing stops until 5% of the executions so far
  // covers it, then goes on.
  auto later = in_memory_queue(s, o, &worker_executions);
  later->reported = one.result.stats.executions / 40;  // 2.5%: at half the search
  const sim::CheckReport resumed = check_with_queue(s, o, later);
  EXPECT_EQ(summary(resumed), summary(one));
  EXPECT_EQ(resumed.result.speculation.held_back, 1u);
  EXPECT_GT(resumed.result.speculation.published, 0u);
  EXPECT_LT(resumed.result.speculation.published, published.result.speculation.published);
}

}  // namespace
}  // namespace lockstep
