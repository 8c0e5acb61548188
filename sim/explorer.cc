#include "lockstep/sim/explorer.h"

#include <fmt/format.h>

#include "lockstep/sim/sim_env.h"

namespace lockstep::sim {

ExploreResult explore_system(const System& system, Strategy& strategy, const ExploreOptions& options) {
  Scheduler scheduler;
  SimEnv env;
  ExploreResult out;
  ExploreStats& stats = out.stats;
  LockOrderGraph lock_orders;
  auto elapsed = [&] { return options.elapsed_seconds ? options.elapsed_seconds() : 0.0; };
  auto out_of_time = [&] { return options.max_seconds > 0 && elapsed() >= options.max_seconds; };
  auto stop_asked = [&] { return options.stop_requested && options.stop_requested(); };
  RunLimits limits = options.limits;
  limits.stop = [&, inner = options.limits.stop] { return stop_asked() || out_of_time() || (inner && inner()); };

  for (;;) {
    if (options.max_executions != 0 && stats.executions + stats.redundant >= options.max_executions) {
      out.stop_reason = fmt::format("bound of {} executions reached", options.max_executions);
      break;
    }
    if (stop_asked()) {
      out.stop_reason = "interrupted";
      out.interrupted = true;
      break;
    }
    if (out_of_time()) {
      out.stop_reason = fmt::format("bound of {} s of wall time reached", options.max_seconds);
      break;
    }
    if (!strategy.next_execution()) {
      out.stop_reason = "every execution explored";
      break;
    }
    if (strategy.take_restart()) {  // the search begins anew: what it counted so far is not its count
      stats = ExploreStats{};
      lock_orders = LockOrderGraph();
      out.first_failure.reset();
    }
    ExecutionResult result;
    try {
      result = scheduler.run(system, env, strategy, limits);
    } catch (const Divergence& d) {
      result.verdict = Verdict::model_error;
      result.message = d.what();
      result.steps = d.step();
    }
    stats.steps += result.steps;
    if (result.interrupted) {  // cut inside the execution: the next turn of the loop says why
      stats.elapsed_s = elapsed();
      if (!stop_asked() && !out_of_time()) {
        out.stop_reason = "stopped inside an execution";
        break;
      }
      continue;
    }
    if (result.unfair) {
      ++stats.unfair;  // at its bound, an unfair cycle fairness could not break: nothing to judge
    } else if (result.skipped || (!result.pruned && !strategy.owns_execution())) {
      ++stats.skipped;
    } else if (result.pruned) {
      ++stats.redundant;
    } else {
      ++stats.executions;
      ++stats.by_verdict[static_cast<std::size_t>(result.verdict)];
      for (const auto& m : result.marks) ++stats.marks[m];
      if (options.on_execution) options.on_execution(result);
      std::optional<FoundFailure> found;
      if (is_failure(result.verdict)) {
        found = FoundFailure{result, scheduler.decisions(), stats.executions, {}};
      } else if (!result.lock_order_edges.empty()) {
        if (auto cycle = lock_orders.add(result.lock_order_edges, scheduler.decisions(), stats.executions)) {
          ExecutionResult across;
          across.verdict = Verdict::violation;
          across.invariant = "lock_order";
          across.message = std::move(cycle->message);
          across.steps = result.steps;
          found = FoundFailure{std::move(across), scheduler.decisions(), stats.executions, std::move(cycle->witnesses)};
        }
      }
      if (found) {
        ++stats.failures;
        if (!out.first_failure) out.first_failure = std::move(found);
        if (options.stop_at_first) {
          out.stop_reason = "stopped at the first failure";
          break;
        }
      }
    }
    if (options.progress && (stats.executions + stats.redundant) % options.progress_every == 0) {
      stats.elapsed_s = elapsed();
      options.progress(stats);
    }
  }
  stats.elapsed_s = elapsed();
  if (options.progress) options.progress(stats);
  out.exhaustive = !out.interrupted && strategy.exhausted();
  if (out.first_failure) {
    out.verdict = out.first_failure->result.verdict;
  } else if (out.exhaustive) {
    out.verdict = Verdict::pass;
  } else {
    out.verdict = Verdict::incomplete;
    if (out.stop_reason.empty() || out.stop_reason == "every execution explored") {
      out.stop_reason = strategy.limitation().empty() ? fmt::format("strategy {} is not exhaustive", strategy.name())
                                                      : strategy.limitation();
    }
  }
  return out;
}

}  // namespace lockstep::sim
