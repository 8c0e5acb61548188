// Heap allocations per simulated statement (none in the common path).
//
// One actor on one pooled connection of the simulated server repeats a statement mix; the
// allocations are counted inside the actor, after a warm-up in which the server's tables,
// lock table and the connection's lists reach their size, so set-up and tear-down are left
// out. Every allocation between two statements counts: the scheduler's step, the server's
// and the model API's (a Row returned by value is the API's own copy: shown apart).
#include <benchmark/benchmark.h>

#include <functional>

#include "bench/alloc_counter.h"
#include "bench/round_robin.h"
#include "lockstep/model/pg.h"
#include "lockstep/model/system.h"
#include "lockstep/sim/sched/scheduler.h"
#include "lockstep/sim/sched/sim_env.h"

namespace lockstep {
namespace {

using pg::AdvisoryKey;
using pg::LockMode;

struct Mix {
  const char* name;
  int statements;  // per round
  std::function<void(pg::Connection&, int round)> round;
};

const Mix kMixes[] = {
    {"session lock, unlock", 2,
     [](pg::Connection& c, int) {
       (void)c.advisory_lock(AdvisoryKey::pair(1, 2), LockMode::exclusive);
       (void)c.advisory_unlock(AdvisoryKey::pair(1, 2), LockMode::exclusive);
     }},
    {"try lock, unlock", 2,
     [](pg::Connection& c, int) {
       (void)c.try_advisory_lock(AdvisoryKey::pair(1, 2), LockMode::exclusive);
       (void)c.advisory_unlock(AdvisoryKey::pair(1, 2), LockMode::exclusive);
     }},
    {"begin, xact lock, commit", 3,
     [](pg::Connection& c, int) {
       (void)c.begin();
       (void)c.advisory_xact_lock(AdvisoryKey::pair(1, 2), LockMode::exclusive);
       (void)c.commit();
     }},
    {"begin, update row, commit", 3,
     [](pg::Connection& c, int round) {
       static const pg::Row values{{"state", "idle"}};
       (void)c.begin();
       (void)c.update_row("agents", 1 + round % 4, values);
       (void)c.commit();
     }},
    {"autocommit update row", 1,
     [](pg::Connection& c, int round) {
       static const pg::Row values{{"state", "idle"}};
       (void)c.update_row("agents", 1 + round % 4, values);
     }},
    {"read row", 1, [](pg::Connection& c, int round) { benchmark::DoNotOptimize(c.read_row("agents", 1 + round % 4)); }},
    // The typed compare-and-set and the same statement in SQL (docs/sql.md), key-pinned:
    // the SQL engine's cost over the typed operation (issue: at most 2x).
    {"autocommit update_row_if", 1,
     [](pg::Connection& c, int round) {
       static const pg::Row values{{"state", "idle"}};
       benchmark::DoNotOptimize(c.update_row_if("agents", 1 + round % 4, "state", "idle", values));
     }},
    {"SQL: UPDATE ... WHERE id = $1 AND state = 'idle' RETURNING", 1,
     [](pg::Connection& c, int round) {
       const auto r = c.exec("UPDATE sql_agents SET state = 'idle' WHERE id = $1 AND state = 'idle' RETURNING state",
                             {std::to_string(1 + round % 4)});
       if (!r.ok() || r.value().affected() != 1) throw ModelError("the benchmark's UPDATE did not change its row");
       benchmark::DoNotOptimize(r);
     }},
};

constexpr int kWarmUp = 64;
constexpr int kRounds = 10'000;

class Statements final : public System {
 public:
  explicit Statements(const Mix& mix) : mix_(mix) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override { return std::make_unique<Inst>(env, mix_, counted_); }
  std::uint64_t counted() const { return counted_; }

 private:
  struct Inst final : Instance {
    Inst(Env& env, const Mix& mix, std::uint64_t& counted) : pool(env.new_pg_pool({})), mix(mix), counted(counted) {
      auto conn = pool->checkout().value();  // the rows, outside any actor
      for (int id = 1; id <= 4; ++id) (void)conn->insert_row("agents", id, {{"state", "idle"}});
      (void)conn->exec("CREATE TABLE sql_agents (id int PRIMARY KEY, state text NOT NULL)").value();
      (void)conn->exec("INSERT INTO sql_agents VALUES (1, 'idle'), (2, 'idle'), (3, 'idle'), (4, 'idle')").value();
    }
    int actor_count() const override { return 1; }
    std::string_view actor_name(ActorId) const override { return "client"; }
    void run_actor(ActorId) override {
      auto conn = pool->checkout().value();
      for (int round = 0; round < kWarmUp; ++round) mix.round(*conn, round);
      const std::uint64_t before = bench::allocation_count();
      for (int round = 0; round < kRounds; ++round) mix.round(*conn, round);
      counted = bench::allocation_count() - before;
    }
    std::unique_ptr<pg::Pool> pool;
    const Mix& mix;
    std::uint64_t& counted;
  };
  const Mix& mix_;
  mutable std::uint64_t counted_ = 0;
};

void BM_SimPgStatements(benchmark::State& state) {
  const Mix& mix = kMixes[state.range(0)];
  state.SetLabel(mix.name);
  const Statements system(mix);
  sim::Scheduler scheduler;
  sim::SimEnv env;
  bench::RoundRobin strategy;  // the only actor runs
  sim::RunLimits limits;
  limits.max_steps = 10'000'000;
  limits.fair = false;  // the rounds repeat by design: no livelock to look for
  limits.livelock_steps = limits.max_steps;
  std::uint64_t statements = 0, allocations = 0;
  for (auto _ : state) {
    const sim::ExecutionResult r = scheduler.run(system, env, strategy, limits);
    if (r.verdict != Verdict::pass) {
      state.SkipWithError(("the run failed: " + r.message).c_str());
      return;
    }
    statements += static_cast<std::uint64_t>(kRounds) * static_cast<std::uint64_t>(mix.statements);
    allocations += system.counted();
  }
  state.counters["allocs_per_statement"] =
      benchmark::Counter(static_cast<double>(allocations) / static_cast<double>(statements));
  state.counters["statements_per_s"] = benchmark::Counter(static_cast<double>(statements), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimPgStatements)->DenseRange(0, std::size(kMixes) - 1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace lockstep
