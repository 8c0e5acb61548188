// Benchmarks of the scheduler core (figures, not pass/fail):
//  - the bare fiber switch round trip: the floor for one step;
//  - one scheduler step with two actors ping-ponging visible operations, with the heap
//    allocations counted per step (target: none);
//  - dfs executions per second on lockinc(4);
//  - dpor executions and steps per second on lockinc(6), lastzero(10), indexer(13);
//  - dpor steps per second and heap allocations per step on two headspace scenarios
//    (simulated PostgreSQL statements: the per-step cost);
//  - exploration memory: resident set size after 10^3, 10^5 and 10^6 dfs executions;
//  - replay of traces of 10^4 .. 10^6 steps (should be linear in the length).
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <fstream>

#include "bench/alloc_counter.h"
#include "bench/round_robin.h"
#include "lockstep/model/scenario.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/sched/fiber.h"
#include "lockstep/sim/sched/scheduler.h"
#include "lockstep/sim/sched/sim_env.h"

namespace lockstep {
namespace {

void BM_FiberSwitchRoundTrip(benchmark::State& state) {
  sim::Fiber fiber;
  fiber.start([](void* arg) {
    auto* f = static_cast<sim::Fiber*>(arg);
    for (;;) f->suspend();
  }, &fiber);
  for (auto _ : state) fiber.resume();  // scheduler -> fiber -> scheduler
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_FiberSwitchRoundTrip);

// Two actors, each loading one shared variable `steps` times.
class Loads final : public System {
 public:
  explicit Loads(std::int64_t steps) : steps_(steps) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override { return std::make_unique<Inst>(env, steps_); }

 private:
  struct Inst final : Instance {
    Inst(Env& env, std::int64_t steps) : x(env.new_shared_var("x", 0)), steps(steps) {}
    int actor_count() const override { return 2; }
    std::string_view actor_name(ActorId a) const override { return a == 0 ? "ping" : "pong"; }
    void run_actor(ActorId) override {
      for (std::int64_t i = 0; i < steps; ++i) benchmark::DoNotOptimize(x->load());
    }
    std::unique_ptr<SharedVar> x;
    std::int64_t steps;
  };
  std::int64_t steps_;
};

void BM_SchedulerStepPingPong(benchmark::State& state) {
  const std::int64_t steps_per_actor = 100'000;
  const Loads system(steps_per_actor);
  sim::Scheduler scheduler;
  sim::SimEnv env;
  bench::RoundRobin strategy;  // the two actors alternate at every step
  sim::RunLimits limits;
  limits.max_steps = 10'000'000;
  scheduler.run(system, env, strategy, limits);  // warm up: buffers reach their size
  std::uint64_t steps = 0, allocations = 0;
  for (auto _ : state) {
    const std::uint64_t before = bench::allocation_count();
    steps += scheduler.run(system, env, strategy, limits).steps;
    allocations += bench::allocation_count() - before;
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(steps));
  // Allocations of one execution are per execution (the instance, its objects), not per step.
  state.counters["allocs_per_execution"] = benchmark::Counter(static_cast<double>(allocations) / state.iterations());
  state.counters["allocs_per_step"] = benchmark::Counter(static_cast<double>(allocations) / static_cast<double>(steps));
  state.counters["ns_per_step"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_SchedulerStepPingPong)->Unit(benchmark::kMillisecond);

Scenario bench_scenario(const char* program, int n) {
  return parse_scenario({{"format", "lockstep-scenario/1"}, {"name", program}, {"system", "bench"},
                         {"config", {{"program", program}, {"n", n}}}},
                        "<bench>");
}

Scenario lockinc_scenario(int n) { return bench_scenario("lockinc", n); }

void explore_and_count(benchmark::State& state, const Scenario& s, const char* strategy) {
  std::uint64_t executions = 0, redundant = 0, steps = 0;
  for (auto _ : state) {
    auto st = sim::make_strategy(strategy, 1);
    const auto result = sim::explore_system(*s.configured, *st, {});
    executions += result.stats.executions;
    redundant += result.stats.redundant;
    steps += result.stats.steps;
  }
  state.counters["executions"] = benchmark::Counter(static_cast<double>(executions) / state.iterations());
  state.counters["redundant"] = benchmark::Counter(static_cast<double>(redundant) / state.iterations());
  state.counters["executions_per_s"] = benchmark::Counter(static_cast<double>(executions), benchmark::Counter::kIsRate);
  state.counters["steps_per_s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}

void BM_DporLockinc6(benchmark::State& state) { explore_and_count(state, bench_scenario("lockinc", 6), "dpor"); }
void BM_DporLastzero10(benchmark::State& state) { explore_and_count(state, bench_scenario("lastzero", 10), "dpor"); }
void BM_DporIndexer13(benchmark::State& state) { explore_and_count(state, bench_scenario("indexer", 13), "dpor"); }
BENCHMARK(BM_DporLockinc6)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DporLastzero10)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DporIndexer13)->Unit(benchmark::kMillisecond);

// A scenario of scenarios/bench/, checked as `lockstep check` would: steps per second and
// heap allocations per step (every allocation of the check: instances, strategy, server).
void explore_file(benchmark::State& state, const char* file) {
  const Scenario s = load_scenario(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/bench/" + file);
  std::uint64_t steps = 0, allocations = 0, executions = 0;
  for (auto _ : state) {
    const std::uint64_t before = bench::allocation_count();
    const auto report = sim::check_scenario(s, {});
    allocations += bench::allocation_count() - before;
    steps += report.result.stats.steps;
    executions += report.result.stats.executions;
  }
  state.counters["executions"] = benchmark::Counter(static_cast<double>(executions) / state.iterations());
  state.counters["steps_per_s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
  state.counters["allocs_per_step"] = benchmark::Counter(static_cast<double>(allocations) / static_cast<double>(steps));
}
void BM_DporHeadspaceHooksReaper2(benchmark::State& state) { explore_file(state, "headspace-hooks-reaper-2.json"); }
void BM_DporHeadspaceOneAgent4(benchmark::State& state) { explore_file(state, "headspace-one-agent-4.json"); }
BENCHMARK(BM_DporHeadspaceHooksReaper2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DporHeadspaceOneAgent4)->Unit(benchmark::kMillisecond);

// Resident set size in MiB, from /proc/self/statm (bench/ may read the OS).
double rss_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// Memory must not grow with the number of executions explored: dfs over two actors of 12
// steps each (C(24, 12) = 2.7 million interleavings), stopped after 10^3, 10^5, 10^6.
void BM_ExplorationMemory(benchmark::State& state) {
  std::vector<std::string> ops;
  for (int i = 0; i < 12; ++i) ops.push_back(i % 2 == 0 ? "read x r" : "write x r+1");
  const Scenario s = parse_scenario({{"format", "lockstep-scenario/1"}, {"name", "memory"}, {"system", "script"},
                                     {"actors", {{{"name", "a"}, {"ops", ops}}, {{"name", "b"}, {"ops", ops}}}}},
                                    "<bench>");
  double rss = 0;
  for (auto _ : state) {
    auto dfs = sim::make_strategy("dfs", 1);
    sim::ExploreOptions options;
    options.max_executions = static_cast<std::uint64_t>(state.range(0));
    const auto result = sim::explore_system(*s.configured, *dfs, options);
    benchmark::DoNotOptimize(result.stats.steps);
    rss = rss_mib();
  }
  state.counters["executions"] = benchmark::Counter(static_cast<double>(state.range(0)));
  state.counters["rss_mib"] = benchmark::Counter(rss);
}
BENCHMARK(BM_ExplorationMemory)->Arg(1'000)->Arg(100'000)->Arg(1'000'000)->Iterations(1)->Unit(benchmark::kMillisecond);

void BM_DfsLockinc(benchmark::State& state) {
  const Scenario s = lockinc_scenario(static_cast<int>(state.range(0)));
  std::uint64_t executions = 0, steps = 0;
  for (auto _ : state) {
    auto dfs = sim::make_strategy("dfs", 1);
    const auto result = sim::explore_system(*s.configured, *dfs, {});
    executions += result.stats.executions;
    steps += result.stats.steps;
  }
  state.counters["executions_per_s"] = benchmark::Counter(static_cast<double>(executions), benchmark::Counter::kIsRate);
  state.counters["steps_per_s"] = benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
  state.counters["executions"] = benchmark::Counter(static_cast<double>(executions) / state.iterations());
}
BENCHMARK(BM_DfsLockinc)->Arg(4)->Arg(6)->Unit(benchmark::kMillisecond);

// A trace of about `steps` steps: two script actors alternating reads and writes.
sim::Trace long_trace(std::int64_t steps) {
  nlohmann::json ops = nlohmann::json::array();
  for (std::int64_t i = 0; i < steps / 2; ++i) ops.push_back(i % 2 == 0 ? "read x r" : "write x r+1");
  const nlohmann::json doc = {{"format", "lockstep-scenario/1"}, {"name", "long"}, {"system", "script"},
                              {"actors", {{{"name", "a"}, {"ops", ops}}, {{"name", "b"}, {"ops", ops}}}}};
  const Scenario s = parse_scenario(doc, "<bench>");
  auto walk = sim::make_strategy("random", 1);
  sim::RunLimits limits;
  limits.max_steps = static_cast<std::uint64_t>(steps) + 10;
  return sim::record_execution(s, *walk, limits);
}

void BM_ReplayTrace(benchmark::State& state) {
  const sim::Trace trace = long_trace(state.range(0));
  for (auto _ : state) {
    const auto r = sim::replay_trace(trace, "<bench>");
    benchmark::DoNotOptimize(r.events.size());
  }
  state.SetComplexityN(state.range(0));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_ReplayTrace)->RangeMultiplier(10)->Range(10'000, 1'000'000)->Unit(benchmark::kMillisecond)->Complexity(benchmark::oN);

}  // namespace
}  // namespace lockstep

BENCHMARK_MAIN();
