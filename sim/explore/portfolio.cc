#include "lockstep/sim/explore/portfolio.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>

#include "lockstep/sim/invariant.h"
#include "lockstep/sim/sched/sim_env.h"

namespace lockstep::sim {

struct Portfolio::Shared {
  const System& system;
  RunLimits limits;
  int jobs = 1;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::uint64_t, Outcome> done;  // by execution
  std::uint64_t waiting_for = 0;           // the execution the search takes next
  std::atomic<bool> cancel{false};
  int running = 0;

  Shared(const System& s, const RunLimits& l) : system(s), limits(l) {}

  // Thread t's executions, each a run of its own copy of the strategy.
  void work(Strategy& strategy, std::uint64_t execution) {
    Scheduler scheduler;
    SimEnv env;
    RunLimits l = limits;
    l.stop = [this] { return cancel.load(std::memory_order_relaxed); };
    for (;; execution += static_cast<std::uint64_t>(jobs)) {
      {
        std::unique_lock lock(mutex);
        changed.wait(lock, [&] { return cancel.load() || execution < waiting_for + kAhead; });
        if (cancel.load()) break;
      }
      Outcome o;
      try {
        IndependentExecutions* independent = strategy.abilities().independent;
        LOCKSTEP_INVARIANT(independent != nullptr, "portfolio: a copy keeps the prototype's abilities");
        independent->begin_at(execution);
        LOCKSTEP_INVARIANT(strategy.next_execution(), "portfolio: a strategy of independent executions never runs out");
        o.result = scheduler.run(system, env, strategy, l);
        o.decisions = scheduler.decisions();
        o.symmetric_actors = scheduler.symmetry().actors;
        o.permutations = scheduler.symmetry().permutations;
      } catch (const Divergence& d) {
        o.result.verdict = Verdict::model_error;
        o.result.message = d.what();
        o.result.steps = d.step();
      } catch (...) {
        o.error = std::current_exception();
      }
      std::lock_guard lock(mutex);
      done.emplace(execution, std::move(o));
      changed.notify_all();
    }
    std::lock_guard lock(mutex);
    --running;
    changed.notify_all();
  }
};

Portfolio::Portfolio(const System& system, const IndependentExecutions& prototype, const RunLimits& limits, int jobs,
                     const std::function<void(std::function<void()>)>& spawn, std::uint64_t first)
    : shared_(std::make_shared<Shared>(system, limits)), next_(first) {
  LOCKSTEP_INVARIANT(jobs > 1 && spawn, "portfolio: several threads, and a way to start them");
  shared_->jobs = jobs;
  shared_->waiting_for = first;
  shared_->running = jobs;
  for (int t = 0; t < jobs; ++t) {
    auto copy = prototype.fresh_copy();
    LOCKSTEP_INVARIANT(copy != nullptr, "portfolio: a strategy of independent executions copies itself (fresh_copy)");
    spawn([shared = shared_, copy = std::shared_ptr<Strategy>(std::move(copy)), execution = first + static_cast<std::uint64_t>(t)] {
      shared->work(*copy, execution);
    });
  }
}

Portfolio::~Portfolio() {
  std::unique_lock lock(shared_->mutex);
  shared_->cancel.store(true);
  shared_->changed.notify_all();
  shared_->changed.wait(lock, [&] { return shared_->running == 0; });
}

std::optional<Portfolio::Outcome> Portfolio::next(const std::function<bool()>& stop) {
  std::unique_lock lock(shared_->mutex);
  for (;;) {
    if (auto it = shared_->done.find(next_); it != shared_->done.end()) {
      Outcome o = std::move(it->second);
      shared_->done.erase(it);
      shared_->waiting_for = ++next_;
      shared_->changed.notify_all();
      return o;
    }
    if (stop && stop()) return std::nullopt;
    shared_->changed.wait_for(lock, std::chrono::milliseconds(20));
  }
}

}  // namespace lockstep::sim
