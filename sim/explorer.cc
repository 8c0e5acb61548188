// sim/explorer.cc: the exploration loop: one execution after another as the strategy asks,
// counted by kind, bounded, and judged (sim/explorer.h).
#include "lockstep/sim/explorer.h"

#include <fmt/format.h>

#include "lockstep/sim/sim_env.h"

namespace lockstep::sim {

// The search size from which untimed mode's cost is worth a note (note_untimed_cost).
constexpr std::uint64_t kUntimedNoteExecutions = 1000;
namespace {

// One search: the loop's state and its steps.
class Search {
 public:
  Search(const System& system, Strategy& strategy, const ExploreOptions& options)
      : system_(system), strategy_(strategy), options_(options), limits_(options.limits) {
    limits_.stop = [this, inner = options.limits.stop] { return stop_asked() || out_of_time() || (inner && inner()); };
  }

  ExploreResult run() {
    while (!stopped_before_next()) {
      if (strategy_.take_restart()) {  // the search begins anew: what it counted so far is not its count
        out_.notes.push_back(fmt::format("optimal DPOR does not cover this model: {}. The search began again at "
                                         "execution {} as source-dpor, which may run sleep-set-blocked executions",
                                         strategy_.restart_reason(), out_.stats.executions));
        out_.stats = ExploreStats{};
        lock_orders_ = LockOrderGraph();
        out_.first_failure.reset();
      }
      if (!run_one()) break;
    }
    out_.stats.elapsed_s = elapsed();
    if (options_.progress) options_.progress(out_.stats);
    conclude();
    return std::move(out_);
  }

 private:
  double elapsed() const { return options_.elapsed_seconds ? options_.elapsed_seconds() : 0.0; }
  bool out_of_time() const { return options_.max_seconds > 0 && elapsed() >= options_.max_seconds; }
  bool stop_asked() const { return options_.stop_requested && options_.stop_requested(); }

  // Whether the search ends before another execution (a bound, an interrupt, or the
  // strategy has none left), with out_.stop_reason saying why.
  bool stopped_before_next() {
    const ExploreStats& stats = out_.stats;
    if (options_.max_executions != 0 && stats.executions + stats.redundant >= options_.max_executions) {
      out_.stop_reason = fmt::format("bound of {} executions reached", options_.max_executions);
      return true;
    }
    if (stop_asked()) {
      out_.stop_reason = "interrupted";
      out_.interrupted = true;
      return true;
    }
    if (out_of_time()) {
      out_.stop_reason = fmt::format("bound of {} s of wall time reached", options_.max_seconds);
      return true;
    }
    if (!strategy_.next_execution()) {
      out_.stop_reason = "every execution explored";
      return true;
    }
    return false;
  }

  // Runs one execution, counts it and reports progress; false when the search must end at
  // once (an execution cut inside by a stop nobody asked for, or the first failure found).
  bool run_one() {
    ExecutionResult result;
    try {
      result = scheduler_.run(system_, env_, strategy_, limits_);
    } catch (const Divergence& d) {
      result.verdict = Verdict::model_error;
      result.message = d.what();
      result.steps = d.step();
    }
    ExploreStats& stats = out_.stats;
    stats.steps += result.steps;
    stats.timer_steps += result.timer_steps;
    if (result.interrupted) {  // cut inside the execution: the next turn of the loop says why
      stats.elapsed_s = elapsed();
      if (!stop_asked() && !out_of_time()) {
        out_.stop_reason = "stopped inside an execution";
        return false;
      }
      return true;
    }
    if (result.unfair) {
      ++stats.unfair;  // at its bound, an unfair cycle fairness could not break: nothing to judge
    } else if (result.skipped || (!result.pruned && !strategy_.owns_execution())) {
      ++stats.skipped;
    } else if (result.pruned) {
      ++stats.redundant;
    } else if (!judge(result)) {
      return false;
    }
    if (options_.progress && (stats.executions + stats.redundant) % options_.progress_every == 0) {
      stats.elapsed_s = elapsed();
      options_.progress(stats);
    }
    return true;
  }

  // A complete execution: counted by verdict, and remembered when it (or a lock-order
  // cycle it closes) fails; false when the search stops at the first failure.
  bool judge(const ExecutionResult& result) {
    ExploreStats& stats = out_.stats;
    ++stats.executions;
    ++stats.by_verdict[static_cast<std::size_t>(result.verdict)];
    for (const auto& m : result.marks) ++stats.marks[m];
    if (options_.on_execution) options_.on_execution(result);
    std::optional<FoundFailure> found = failure_of(result);
    if (!found) return true;
    ++stats.failures;
    if (!out_.first_failure) out_.first_failure = std::move(found);
    if (options_.stop_at_first) {
      out_.stop_reason = "stopped at the first failure";
      return false;
    }
    return true;
  }

  std::optional<FoundFailure> failure_of(const ExecutionResult& result) {
    const std::uint64_t execution = out_.stats.executions;
    if (is_failure(result.verdict)) return FoundFailure{result, scheduler_.decisions(), execution, {}};
    if (result.lock_order_edges.empty()) return std::nullopt;
    auto cycle = lock_orders_.add(result.lock_order_edges, scheduler_.decisions(), execution);
    if (!cycle) return std::nullopt;
    ExecutionResult across;
    across.verdict = Verdict::violation;
    across.invariant = "lock_order";
    across.message = std::move(cycle->message);
    across.steps = result.steps;
    return FoundFailure{std::move(across), scheduler_.decisions(), execution, std::move(cycle->witnesses)};
  }

  // The search's verdict: its first failure's, else pass when it was exhaustive.
  void conclude() {
    note_untimed_cost();
    out_.exhaustive = !out_.interrupted && strategy_.exhausted();
    if (out_.first_failure) {
      out_.verdict = out_.first_failure->result.verdict;
    } else if (out_.exhaustive) {
      out_.verdict = Verdict::pass;
    } else {
      out_.verdict = Verdict::incomplete;
      if (out_.stop_reason.empty() || out_.stop_reason == "every execution explored") {
        out_.stop_reason = strategy_.limitation().empty()
                               ? fmt::format("strategy {} is not exhaustive", strategy_.name())
                               : strategy_.limitation();
      }
    }
  }

  // Untimed mode lets every timer fire at any moment: code that sleeps or retries pays for
  // it in executions, which a user should hear about once the search is large.
  void note_untimed_cost() {
    const ExploreStats& stats = out_.stats;
    if (limits_.time != TimeMode::untimed || stats.timer_steps == 0) return;
    if (stats.executions + stats.redundant < kUntimedNoteExecutions) return;
    out_.notes.push_back(fmt::format(
        "untimed mode: {} of the {} steps were timers firing (sleeps ending, timeouts), each explored at every "
        "moment it could happen. If durations are part of the design, timed mode (\"time\": \"timed\", "
        "Model::timed()) explores far fewer executions",
        stats.timer_steps, stats.steps));
  }

  const System& system_;
  Strategy& strategy_;
  const ExploreOptions& options_;
  RunLimits limits_;
  Scheduler scheduler_;
  SimEnv env_;
  LockOrderGraph lock_orders_;
  ExploreResult out_;
};

}  // namespace

ExploreResult explore_system(const System& system, Strategy& strategy, const ExploreOptions& options) {
  return Search(system, strategy, options).run();
}

}  // namespace lockstep::sim
