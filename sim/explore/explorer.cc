// sim/explore/explorer.cc: the serial walk: one execution after another as the strategy asks,
// counted by kind, bounded, and judged (sim/explore/explorer.h, sim/explore/search.h).
#include "lockstep/sim/explore/explorer.h"

#include <fmt/format.h>

#include "lockstep/sim/explore/search.h"
#include "lockstep/sim/invariant.h"

namespace lockstep::sim {
namespace detail {

Search::Search(const System& system, Strategy& strategy, const ExploreOptions& options)
    : system_(system), strategy_(strategy), abilities_(strategy.abilities()), options_(options), limits_(options.limits) {
  limits_.stop = [this, inner = options.limits.stop] { return stop_asked() || out_of_time() || (inner && inner()); };
  if (options.resume) restore(*options.resume);
  if (options.checkpoint && abilities_.checkpoints != nullptr) abilities_.checkpoints->keep_resume_point();
  if (((options.jobs > 1 && options.spawn) || options.exchange) && !options.on_execution) {
    speculative_ = abilities_.speculation;
    if (speculative_ != nullptr) exchange_ = options.exchange.get();
  }
  if (options.jobs > 1 && options.spawn && speculative_ == nullptr && abilities_.independent != nullptr) {
    out_.speculation.jobs = options.jobs;
    out_.speculation.portfolio = true;
    portfolio_ = std::make_unique<Portfolio>(system, *abilities_.independent, limits_, options.jobs, options.spawn, 1);
  }
  if (speculative_ != nullptr) {
    out_.speculation.jobs = options.jobs;
    out_.speculation.exchange = exchange_ != nullptr;
    pool_ = std::make_shared<SpeculationPool>();
    pool_->jobs = options.jobs;
    if (options.jobs > 1) pool_->spawn = options.spawn;
  }
}
Search::Search(const System& system, Strategy& strategy, const ExploreOptions& options,
               const std::vector<std::string>& objects, std::vector<EdgeRecord>* edges, std::shared_ptr<SpeculationPool> pool)
    : Search(system, strategy, options) {
  scheduler_.restore_objects(objects);
  edge_log_ = edges;
  pool_ = std::move(pool);
  holds_slot_ = true;
  speculative_ = abilities_.speculation;
  // Only the serial walk publishes: a worker's subtree publishing its own branches too
  // flooded the queue with branches that changed before they were reached (docs/notes.md).
  exchange_ = nullptr;
}

ExploreResult Search::run() {
  if (complete_) {  // resumed from the checkpoint of a finished search: its result again
    out_.stop_reason = "every execution explored";
    conclude();
    return std::move(out_);
  }
  while (!stopped_before_next()) {
    const Taken taken = speculate();
    if (taken == Taken::stop) break;
    if (taken == Taken::yes) {
      if (options_.progress) maybe_report_progress();
      continue;
    }
    if (!run_one()) break;
  }
  end_speculation();
  out_.stats.elapsed_s = total_elapsed();
  final_checkpoint();
  if (options_.progress) report_progress();
  conclude();
  return std::move(out_);
}

void Search::maybe_report_progress() {
  const ExploreStats& stats = out_.stats;
  const bool by_count = (stats.executions + stats.redundant) % options_.progress_interval_executions == 0;
  if (!by_count && !(options_.elapsed_seconds && elapsed() - last_progress_ >= options_.progress_interval_s)) return;
  report_progress();
}

void Search::report_progress() {
  last_progress_ = elapsed();
  out_.stats.elapsed_s = total_elapsed();
  out_.stats.explored_fraction = strategy_.status().explored_fraction;
  options_.progress(out_.stats);
}

// After next_execution(): when the search began anew, what it counted so far is not its count.
void Search::note_restart() {
  if (abilities_.restarts == nullptr || !abilities_.restarts->take_restart()) return;
  out_.notes.push_back(fmt::format("optimal DPOR does not cover this model: {}. The search began again at "
                                   "execution {} as source-dpor, which may run sleep-set-blocked executions",
                                   abilities_.restarts->restart_reason(), out_.stats.executions));
  out_.fallback = abilities_.restarts->restart_reason();
  out_.fallback_at = out_.stats.executions;
  out_.stats = ExploreStats{};
  base_count_ = 0;
  lock_orders_ = LockOrderGraph();
  out_.first_failure.reset();
}

// Whether the search ends before another execution (a bound, an interrupt, or the
// strategy has none left), with out_.stop_reason saying why.
bool Search::stopped_before_next() {
  const ExploreStats& stats = out_.stats;
  const std::uint64_t explored = stats.executions + stats.redundant - base_count_;
  if (options_.executions_left(explored) == 0) {
    // Speculation takes a batch only within the bound (search_speculation.cc): the search
    // reaches its bound exactly, never past it.
    LOCKSTEP_INVARIANT(options_.executions_left(explored - 1) == 1, "a search stops at its execution bound");
    out_.stop_reason = fmt::format("bound of {} executions reached", explored);
    return true;
  }
  if (stop_asked()) {
    out_.stop_reason = "interrupted";
    out_.interrupted = true;
    return true;
  }
  if (out_of_time()) {
    out_.stop_reason = fmt::format("bound of {} s of wall time reached", options_.time_limit_s);
    return true;
  }
  if (!strategy_.next_execution()) {
    out_.stop_reason = "every execution explored";
    return true;
  }
  cut_inside_ = false;
  note_restart();
  periodic_checkpoint();
  return false;
}

// Runs one execution, counts it and reports progress; false when the search must end at
// once (an execution cut inside by a stop nobody asked for, or the first failure found).
bool Search::run_one() {
  ExecutionResult result;
  if (portfolio_) {
    auto outcome = portfolio_->next([this] { return stop_asked() || out_of_time(); });
    if (!outcome) {
      result.interrupted = true;  // stopped while waiting: as a run cut inside
    } else {
      if (outcome->error) std::rethrow_exception(outcome->error);
      result = std::move(outcome->result);
      decisions_ = std::move(outcome->decisions);
      if (outcome->symmetric_actors > 0 && out_.symmetry.actors == 0) {
        out_.symmetry = {outcome->symmetric_actors, outcome->permutations};
      }
    }
  } else try {
    result = scheduler_.run(system_, env_, strategy_, limits_);
    if (const Symmetry& sym = scheduler_.symmetry(); sym.any() && out_.symmetry.actors == 0) {
      out_.symmetry = {sym.actors, sym.permutations};
    }
  } catch (const Divergence& d) {
    result.verdict = Verdict::model_error;
    result.message = d.what();
    result.steps = d.step();
  }
  ExploreStats& stats = out_.stats;
  stats.steps += result.steps;
  stats.timer_steps += result.timer_steps;
  stats.unjudged_deadlines += result.unjudged_deadlines;
  if (result.interrupted) {  // cut inside the execution: the next turn of the loop says why
    stats.elapsed_s = total_elapsed();
    cut_inside_ = true;  // the strategy's resume point is this execution's start
    if (!stop_asked() && !out_of_time()) {
      out_.stop_reason = "stopped inside an execution";
      return false;
    }
    return true;
  }
  if (result.unfair) {
    ++stats.unfair;  // at its bound, an unfair cycle fairness could not break: nothing to judge
  } else if (result.skipped || (!result.pruned && abilities_.shard != nullptr && !abilities_.shard->owns_execution())) {
    ++stats.skipped;
  } else if (result.pruned) {
    ++stats.redundant;
  } else if (!judge(result)) {
    return false;
  }
  if (options_.progress) maybe_report_progress();
  return true;
}

// A complete execution: counted by verdict, and remembered when it (or a lock-order
// cycle it closes) fails; false when the search stops at the first failure.
bool Search::judge(const ExecutionResult& result) {
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

std::optional<FoundFailure> Search::failure_of(const ExecutionResult& result) {
  const std::uint64_t execution = out_.stats.executions;
  if (is_failure(result.verdict)) return FoundFailure{result, decisions(), execution, {}};
  if (result.lock_order_edges.empty()) return std::nullopt;
  const std::size_t known = lock_orders_.edge_count();
  auto cycle = lock_orders_.add(result.lock_order_edges, decisions(), execution);
  if (edge_log_ != nullptr && (cycle || lock_orders_.edge_count() != known)) {
    edge_log_->push_back({execution, result.lock_order_edges, decisions()});
  }
  if (!cycle) return std::nullopt;
  ExecutionResult across;
  across.verdict = Verdict::violation;
  across.invariant = "lock_order";
  across.message = std::move(cycle->message);
  across.steps = result.steps;
  return FoundFailure{std::move(across), decisions(), execution, std::move(cycle->witnesses)};
}

// The search's verdict: its first failure's, else pass when it was exhaustive.
void Search::conclude() {
  note_untimed_cost();
  const StrategyStatus status = strategy_.status();
  out_.exhaustive = complete_ || (!out_.interrupted && status.exhausted);
  if (out_.first_failure) {
    out_.verdict = out_.first_failure->result.verdict;
  } else if (out_.exhaustive) {
    out_.verdict = Verdict::pass;
  } else {
    out_.verdict = Verdict::incomplete;
    if (out_.stop_reason.empty() || out_.stop_reason == "every execution explored") {
      out_.stop_reason = status.limitation.empty() ? fmt::format("strategy {} is not exhaustive", strategy_.name())
                                                   : status.limitation;
    }
  }
}

// Untimed mode lets every timer fire at any moment: code that sleeps or retries pays for
// it in executions, which a user should hear about once the search is large.
void Search::note_untimed_cost() {
  const ExploreStats& stats = out_.stats;
  if (limits_.time != TimeMode::untimed) return;
  if (stats.unjudged_deadlines > 0) {  // a deadline that nothing judges must not pass in silence
    out_.notes.push_back(fmt::format(
        "untimed mode: obligations were made hot with a deadline (`within`) {} times, and no deadline was judged: "
        "untimed runs promise nothing about time. Timed mode (\"time\": \"timed\", Model::timed()) judges them",
        stats.unjudged_deadlines));
  }
  if (stats.timer_steps == 0) return;
  if (stats.executions + stats.redundant < kUntimedNoteExecutions) return;
  out_.notes.push_back(fmt::format(
      "untimed mode: {} of the {} steps were timers firing (sleeps ending, timeouts), each explored at every "
      "moment it could happen. If durations are part of the design, timed mode (\"time\": \"timed\", "
      "Model::timed()) explores far fewer executions",
      stats.timer_steps, stats.steps));
}

}  // namespace detail

ExploreResult explore_system(const System& system, Strategy& strategy, const ExploreOptions& options) {
  return detail::Search(system, strategy, options).run();
}

}  // namespace lockstep::sim
