#include "lockstep/sim/check.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockstep/sim/strategies/preemption_bound.h"
#include "lockstep/sim/explain/cause.h"
#include "lockstep/sim/explore/checkpoint.h"
#include "lockstep/sim/explain/holding.h"
#include "lockstep/sim/explain/shrink.h"
#include "lockstep/sim/sched/sim_env.h"

namespace lockstep::sim {
namespace {

struct Replayed {
  ExecutionResult result;
  std::vector<Decision> decisions;
  std::vector<LogEvent> events;
  std::vector<std::string> actors;
};

// `on_divergence`, if given, sees the actors the run made before a Divergence leaves.
Replayed run_logged(const System& system, Strategy& strategy, RunLimits limits, pg::StatementLog* statements,
                    const std::function<void(const std::vector<std::string>&)>& on_divergence = {}) {
  Scheduler scheduler;
  SimEnv env;
  env.set_statement_log(statements);
  strategy.next_execution();
  limits.log_events = true;
  Replayed out;
  try {
    out.result = scheduler.run(system, env, strategy, limits);
  } catch (const Divergence&) {
    if (on_divergence) on_divergence(scheduler.actor_names());
    throw;
  }
  out.decisions = scheduler.decisions();
  out.events = scheduler.events();
  out.actors = scheduler.actor_names();
  return out;
}

// The limits a trace was recorded under: what its replay runs with.
RunLimits limits_of(const Trace& trace) {
  RunLimits limits = run_limits_of(trace.run);
  limits.fair = false;  // a trace is followed, not explored: nothing is cut (sim/progress/progress.h)
  limits.symmetry = false;
  return limits;
}

std::string event_text(const LogEvent& e, const std::vector<std::string>& actors) {
  const std::string actor = e.actor >= 0 && static_cast<std::size_t>(e.actor) < actors.size()
                                ? actors[e.actor] : std::string("-");
  return fmt::format("{} at {} ns: {} -> {}", actor, e.time_ns, e.op, e.result.empty() ? "(none)" : e.result);
}

}  // namespace

bool verdict_as_expected(const Expectation& expect, Verdict verdict, const std::string& invariant) {
  return verdict == expect.verdict && (!expect.violation || *expect.violation == invariant);
}

namespace {

// The scenario's settings with the command line's over them: the one place overrides apply.
ExploreSettings settings_of(const Scenario& scenario, const CheckOverrides& o) {
  return with_overrides(scenario.explore, o.settings);
}

ExploreOptions explore_options(const ExploreSettings& settings, const CheckOptions& options, std::uint64_t seed) {
  ExploreOptions explore;
  static_cast<SearchBounds&>(explore) = settings;
  explore.limits = run_limits_of(settings);
  explore.limits.seed = seed;
  explore.elapsed_seconds = options.elapsed_seconds;
  explore.progress = options.progress;
  explore.stop_requested = options.stop_requested;
  explore.jobs = settings.jobs;
  explore.speculate_after = options.overrides.speculate_after;
  explore.spawn = options.spawn;
  explore.exchange = options.exchange;
  return explore;
}

Trace failure_trace(const Scenario& scenario, const RunLimits& limits, const FoundFailure& failure, bool shrink,
                    const ShrinkBudget& budget, const std::function<bool()>& cause_stop = {}) {
  return failure_trace_for(*scenario.configured, scenario.document, limits, failure, shrink, budget, cause_stop);
}

}  // namespace

namespace {

struct Lasso {
  std::vector<Decision> decisions;
  std::uint64_t steps = 0;  // the lasso's length: its step bound
  std::uint64_t start = 0;  // where its cycle begins
};

// The shortest lasso of an execution that ends repeating a cycle of `period` steps: its
// prefix up to where the repetition begins, then the cycle as often as a livelock needs
// (sim/progress/progress.h). One more run of the execution finds where that is; nullopt when it was
// stopped, or repeats no such cycle.
std::optional<Lasso> cut_to_lasso(const System& system, const RunLimits& limits, const std::vector<Decision>& decisions,
                                  std::uint32_t period, const std::function<bool()>& stop) {
  RunLimits l = limits;
  l.log_events = false;
  l.lasso_period = period;
  l.stop = stop;
  Scheduler scheduler;
  SimEnv env;
  auto replay = make_replay_strategy(decisions);
  replay->next_execution();
  const ExecutionResult r = scheduler.run(system, env, *replay, l);
  if (r.interrupted || !r.cycle || r.cycle->period != period) return std::nullopt;
  const std::uint64_t repeats = std::max<std::uint64_t>(kCycleRepeats, (kMinCycleSteps + period - 1) / period);
  Lasso lasso;
  lasso.start = r.cycle->start;
  lasso.steps = r.cycle->start + repeats * period;
  if (lasso.steps > r.steps) return std::nullopt;
  // The decisions of the lasso's steps: every scheduling decision before step `steps`, with
  // the choices made inside those steps.
  std::uint64_t scheduled = 0;
  for (const Decision& d : scheduler.decisions()) {
    if (d.kind != Decision::Kind::choice && scheduled++ == lasso.steps) break;
    lasso.decisions.push_back(d);
  }
  return lasso;
}

// A failure judged at the step bound from the cycle the execution repeats.
bool judged_by_cycle(const ExecutionResult& r, const RunLimits& limits) {
  return r.cycle && (r.verdict == Verdict::livelock || (r.verdict == Verdict::liveness && r.steps >= limits.max_steps));
}

}  // namespace

Trace failure_trace_for(const System& system, const nlohmann::json& scenario, const RunLimits& limits,
                        const FoundFailure& failure, bool shrink, const ShrinkBudget& budget,
                        const std::function<bool()>& cause_stop) {
  std::vector<Decision> decisions = failure.decisions;
  RunLimits run_limits = limits;
  run_limits.fair = false;  // the failure is followed, not explored: nothing is cut
  run_limits.symmetry = false;  // and its decisions are taken as they are
  const ExecutionResult& found = failure.result;
  std::optional<LassoInfo> lasso_info;
  if (judged_by_cycle(found, limits)) {
    // A loop's trace is a lasso, not the thousands of steps to the bound: it replays and
    // shrinks in a few steps, and says how often the search saw the cycle repeat.
    if (auto lasso = cut_to_lasso(system, run_limits, decisions, found.cycle->period, budget.stop)) {
      decisions = std::move(lasso->decisions);
      run_limits.max_steps = lasso->steps;
      lasso_info = LassoInfo{0, found.cycle->period, 0, (found.steps - lasso->start) / found.cycle->period};
    }
  }
  // A step bound with no cycle is as long as its bound whatever is dropped: nothing to shrink.
  const bool shrinkable = shrink && found.verdict != Verdict::step_bound;
  std::optional<ShrinkInfo> info;
  if (shrinkable) {
    const ShrinkResult s = shrink_failure(system, run_limits, decisions, found, budget);
    decisions = s.decisions;
    info = ShrinkInfo{s.original.steps, s.original.preemptions, s.shrunk.steps, s.shrunk.preemptions, s.attempts,
                      s.out_of_budget};
    if (lasso_info) {  // a shorter prefix may begin the cycle earlier
      if (auto lasso = cut_to_lasso(system, run_limits, decisions, static_cast<std::uint32_t>(lasso_info->period), budget.stop)) {
        decisions = std::move(lasso->decisions);
        run_limits.max_steps = lasso->steps;
      }
    }
  }
  auto replay = make_replay_strategy(decisions);
  Trace t = record_execution(system, scenario, *replay, run_limits);
  if (!shrinkable && !lasso_info && (t.verdict != found.verdict || t.message != found.message)) {
    throw std::logic_error(fmt::format(
        "re-running the failing execution gave {} (\"{}\") instead of {} (\"{}\"): the model is not deterministic",
        verdict_name(t.verdict), t.message, verdict_name(found.verdict), found.message));
  }
  t.shrunk = info;
  if (t.lasso && lasso_info) t.lasso->observed = lasso_info->observed;
  if (is_failure(t.verdict)) {
    CauseBudget cause_budget;
    cause_budget.stop = cause_stop;
    t.cause = find_cause(system, run_limits, t.decisions, cause_budget);
  }
  return t;
}

namespace {

// What a checkpoint must match: the settings that shape the search (not its bounds in
// executions or seconds, which a resumed run sets anew).
CheckpointHeader checkpoint_header(const Scenario& scenario, const ExplorationRequest& request) {
  const auto& limits = request.explore.limits;
  const auto& shard = request.strategy_options.shard;
  nlohmann::json settings = run_settings_json(limits);
  settings["strategy"] = request.strategy;
  settings["stop_at_first"] = request.explore.stop_at_first;
  settings["shard"] = fmt::format("{}/{}", shard.index + 1, shard.count);
  return {scenario.file, scenario.name, document_digest(scenario.document), std::move(settings)};
}

void set_up_checkpoints(const Scenario& scenario, const CheckOptions& options, ExplorationRequest& request) {
  const std::string flag = options.resume_path ? "--resume" : "--checkpoint";
  const StrategyInfo* info = find_strategy(request.strategy);
  if (info != nullptr && !strategy_has_checkpoints(*info)) {
    throw InputError(fmt::format("{}: strategy {} has no checkpoints (dpor, source-dpor and dfs have; a random or pct "
                                 "search goes on with another --seed)",
                                 flag, request.strategy));
  }
  if (request.iterative || request.strategy_options.max_preemptions >= 0) {
    throw InputError(fmt::format("{}: a search with a preemption bound has no checkpoints", flag));
  }
  const CheckpointHeader header = checkpoint_header(scenario, request);
  if (options.resume_path) {
    request.explore.resume = std::make_shared<const nlohmann::json>(read_checkpoint(*options.resume_path, header));
    request.explore.resume_source = *options.resume_path;
  }
  if (options.checkpoint_path) {
    request.explore.checkpoint = [header, path = *options.checkpoint_path](const nlohmann::json& search) {
      write_checkpoint(path, header, search);
    };
    request.explore.checkpoint_interval_s = options.checkpoint_interval_s;
  }
}

}  // namespace

namespace {

ExplorationRequest request_of(const Scenario& scenario, const CheckOptions& options) {
  const auto& o = options.overrides;
  const ExploreSettings settings = settings_of(scenario, o);
  ExplorationRequest request;
  request.system = scenario.configured.get();
  request.document = scenario.document;
  request.strategy = settings.strategy;
  request.strategy_where = o.settings.strategy ? "--strategy" : fmt::format("{}: /explore/strategy", scenario.file);
  request.source = scenario.file;
  request.strategy_options.seed = settings.seed;
  request.strategy_options.pct_depth = settings.pct_depth;
  request.strategy_options.shard = o.shard;
  request.strategy_options.max_preemptions = settings.max_preemptions;
  request.iterative = o.iterative;
  request.explore = explore_options(settings, options, settings.seed);
  request.shrink = o.shrink;
  return request;
}

}  // namespace

std::string queue_settings(const Scenario& scenario, const CheckOptions& options) {
  const ExplorationRequest request = request_of(scenario, options);
  const CheckpointHeader header = checkpoint_header(scenario, request);
  nlohmann::json settings = header.settings;
  settings.erase("shard");
  settings["preemptions"] = request.strategy_options.max_preemptions;
  return nlohmann::json{{"lockstep", lockstep_version()},
                        {"scenario", header.scenario_name},
                        {"digest", header.digest},
                        {"settings", std::move(settings)}}
      .dump();
}

WorkerReport serve_scenario(const Scenario& scenario, const CheckOptions& options, SubtreeSource& source) {
  const ExplorationRequest request = request_of(scenario, options);
  if (request.strategy != "dpor" || request.iterative || request.strategy_options.max_preemptions >= 0) {
    throw InputError(fmt::format("{}: --queue splits a dpor search without a preemption bound (strategy {})",
                                 scenario.file, request.strategy));
  }
  WorkerReport out;
  // Ctrl-C, or --max-seconds of this worker's own.
  const double time_limit_s = request.explore.time_limit_s;
  const std::function<bool()> stop = [&options, time_limit_s] {
    return (options.stop_requested && options.stop_requested()) ||
           (time_limit_s > 0 && options.elapsed_seconds && options.elapsed_seconds() >= time_limit_s);
  };
  while (std::optional<SubtreeSource::Task> task = source.next(stop)) {
    auto strategy = make_strategy(request.strategy, request.strategy_options);
    ExploreOptions explore = request.explore;
    explore.stop_requested = [&] { return stop() || source.withdrawn(task->id); };
    SubtreeTaskRun run;
    try {
      run = explore_subtree_task(*scenario.configured, *strategy, task->text, explore);
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("--queue: task {} of this run: {}", task->id, e.what()));
    }
    source.finish(task->id, run.result, run.explored);
    ++out.tasks;
    out.explored += run.explored;
    if (run.interrupted) ++out.cut;
    if (stop()) {
      out.interrupted = true;
      break;
    }
  }
  return out;
}

CheckReport check_scenario(const Scenario& scenario, const CheckOptions& options) {
  ExplorationRequest request = request_of(scenario, options);
  if (options.checkpoint_path || options.resume_path) set_up_checkpoints(scenario, options, request);
  Exploration x = explore_and_record(request);
  CheckReport report;
  report.strategy = request.strategy;
  report.seed = request.strategy_options.seed;
  report.run = request.explore.limits;
  report.preemption_bound = x.preemption_bound;
  report.result = std::move(x.result);
  const auto& failure = report.result.first_failure;
  report.as_expected = verdict_as_expected(scenario.expect, report.result.verdict,
                                           failure ? failure->result.invariant : std::string());
  // A random or pct search cannot prove a pass: one that ran its bound and found nothing
  // did what it was asked (a nightly job of random seeds is green), unless interrupted.
  if (!x.strategy->exhaustive && scenario.expect.verdict == Verdict::pass &&
      report.result.verdict == Verdict::incomplete && !report.result.interrupted) {
    report.as_expected = true;
  }
  report.trace = std::move(x.trace);
  report.witnesses = std::move(x.witnesses);
  return report;
}

Estimate estimate_scenario(const Scenario& scenario, const CheckOptions& options, double seconds) {
  const auto& o = options.overrides;
  const ExploreSettings settings = settings_of(scenario, o);
  const std::string& name = settings.strategy;
  const StrategyInfo* info = find_strategy(name);
  if (info == nullptr || !info->exhaustive) {
    throw InputError(fmt::format("--estimate: strategy {} {}", name,
                                 info == nullptr ? "is unknown" : "samples: there is no total to estimate"));
  }
  StrategyOptions so;
  so.shard = o.shard;
  auto strategy = make_strategy(name, so);
  ExploreOptions explore = explore_options(settings, options, so.seed);
  // The size of the whole search, failures or not, within `seconds`.
  static_cast<SearchBounds&>(explore) = SearchBounds{.time_limit_s = seconds, .stop_at_first = false};
  struct Sample {
    double at, estimate;
  };
  std::vector<Sample> samples;
  explore.progress = [&samples, user = options.progress](const ExploreStats& s) {
    if (s.explored_fraction > 0) {
      samples.push_back({s.elapsed_s, static_cast<double>(s.executions + s.redundant) / s.explored_fraction});
    }
    if (user) user(s);
  };
  const ExploreResult r = explore_system(*scenario.configured, *strategy, explore);
  Estimate e;
  e.sampled = r.stats.executions + r.stats.redundant;
  e.sampled_seconds = r.stats.elapsed_s;
  e.exact = r.exhaustive;
  e.executions = e.exact || samples.empty() ? static_cast<double>(e.sampled) : samples.back().estimate;
  e.low = e.high = e.executions;
  for (const Sample& x : samples) {
    if (e.exact || x.at < e.sampled_seconds / 2) continue;
    e.low = std::min(e.low, x.estimate);
    e.high = std::max(e.high, x.estimate);
  }
  e.seconds = e.sampled > 0 && e.sampled_seconds > 0 ? e.executions * e.sampled_seconds / static_cast<double>(e.sampled)
                                                      : 0;
  return e;
}

namespace {
bool from_code(const Trace& trace) { return trace.scenario.is_object() && trace.scenario.value("system", "") == "api"; }
}  // namespace

Scenario scenario_of_trace(const Trace& trace, const std::string& file) {
  if (!from_code(trace)) return parse_scenario(trace.scenario, file, "/scenario");
  Scenario s;
  s.file = file;
  s.document = trace.scenario;
  s.name = trace.scenario.value("name", "");
  s.system = "api";
  s.configured = system_for_model_identity(trace.scenario.value("model", nlohmann::json()));
  if (s.configured) return s;
  const std::string recorded = trace.scenario.value("replay", "");
  if (const auto changed = registered_model_difference(trace.scenario.value("model", nlohmann::json()))) {
    throw InputError(fmt::format("{}: model \"{}\" is registered (system \"{}\"), but it has changed since this trace was "
                                 "recorded: {}. Run its test again to record a new trace{}",
                                 file, s.name, changed->system, changed->difference,
                                 recorded.empty() ? "" : " (recorded: " + recorded + ")"));
  }
  throw InputError(fmt::format("{}: this trace comes from a model defined in C++ code (model \"{}\") that this program "
                               "does not register: replay it by running that model's test with LOCKSTEP_REPLAY={}{}",
                               file, s.name, file, recorded.empty() ? "" : " (recorded: " + recorded + ")"));
}

bool replays_here(const Trace& trace) {
  return !from_code(trace) || system_for_model_identity(trace.scenario.value("model", nlohmann::json())) != nullptr;
}

Trace shrink_trace(const Trace& trace, const std::string& file, const ShrinkBudget& budget) {
  const Scenario scenario = scenario_of_trace(trace, file);
  const RunLimits limits = limits_of(trace);
  FoundFailure failure;
  failure.decisions = trace.decisions;
  failure.result.verdict = trace.verdict;
  failure.result.invariant = trace.invariant;
  failure.result.message = trace.message;
  failure.execution = trace.execution;
  Trace t = failure_trace(scenario, limits, failure, true, budget);
  t.strategy = trace.strategy;
  t.execution = trace.execution;
  if (trace.shrunk) {  // keep the measure of the very first failing execution
    t.shrunk->original_steps = trace.shrunk->original_steps;
    t.shrunk->original_preemptions = trace.shrunk->original_preemptions;
  }
  return t;
}

Cause trace_cause(const Trace& trace, const std::string& file, const CauseBudget& budget) {
  const Scenario scenario = scenario_of_trace(trace, file);
  const RunLimits limits = limits_of(trace);
  return find_cause(*scenario.configured, limits, trace.decisions, budget);
}

Trace delayed_trace(const Trace& trace, const std::string& file, std::size_t k) {
  const Scenario scenario = scenario_of_trace(trace, file);
  const RunLimits limits = limits_of(trace);
  const Cause cause = trace.cause ? *trace.cause : find_cause(*scenario.configured, limits, trace.decisions);
  if (!cause.computed) throw InputError(fmt::format("{}: its cause was not computed ({})", file, cause.reason));
  if (k < 1 || k > cause.pairs.size()) {
    throw InputError(fmt::format("{}: no cause pair {} (the trace has {})", file, k, cause.pairs.size()));
  }
  ExecutionFacts e;
  try {
    e = delayed_execution(*scenario.configured, limits, trace.decisions, cause.pairs[k - 1]);
  } catch (const std::invalid_argument& bad) {
    throw InputError(fmt::format("{}: cause pair {}: {}", file, k, bad.what()));
  }
  // Recorded as any trace is, by replaying its decisions: what is written replays.
  auto replay = make_replay_strategy(std::move(e.decisions));
  Trace t = record_execution(*scenario.configured, trace.scenario, *replay, limits);
  t.strategy = "cause";
  return t;
}

std::string cycle_holders(const Trace& trace, const std::string& file) {
  if (!trace.lasso) return "";
  const ExecutionFacts facts = trace_facts(trace, file);
  const std::uint64_t start = trace.lasso->start, end = start + trace.lasso->period;
  std::vector<ObjectId> touched;
  for (std::uint64_t s = start; s < end && s < facts.steps.size(); ++s) {
    const ObjectId o = facts.steps[s].footprint.object;
    if (o != kNoObject && std::find(touched.begin(), touched.end(), o) == touched.end()) touched.push_back(o);
  }
  std::string text;
  for (const Span& span : holding_spans(facts)) {
    if (span.kind != Span::Kind::hold || span.from >= start || (span.to < start && !span.open_at_end)) continue;
    if (std::find(touched.begin(), touched.end(), span.object) == touched.end()) continue;
    text += fmt::format("{}{} held by {} since step {}", text.empty() ? "" : "; ", facts.object_names[span.object],
                        facts.actors[span.actor], span.from);
  }
  return text;
}

ExecutionFacts trace_facts(const Trace& trace, const std::string& file) {
  const Scenario scenario = scenario_of_trace(trace, file);
  const RunLimits limits = limits_of(trace);
  return replay_facts(*scenario.configured, limits, trace.decisions);
}

Trace record_execution(const Scenario& scenario, Strategy& strategy, const RunLimits& limits) {
  return record_execution(*scenario.configured, scenario.document, strategy, limits);
}

Trace record_execution(const System& system, const nlohmann::json& scenario, Strategy& strategy,
                       const RunLimits& limits, pg::StatementLog* statements) {
  Replayed r = run_logged(system, strategy, limits, statements);
  Trace t;
  t.scenario = scenario;
  t.strategy = std::string(strategy.name());
  t.run = limits;
  t.execution = 1;
  t.verdict = r.result.verdict;
  if (judged_by_cycle(r.result, limits)) {
    const Cycle& c = *r.result.cycle;
    t.lasso = LassoInfo{c.start, c.period, c.repeats(), 0};
  }
  t.invariant = r.result.invariant;
  t.message = r.result.message;
  t.actors = std::move(r.actors);
  t.decisions = std::move(r.decisions);
  t.events = std::move(r.events);
  return t;
}

ReplayReport replay_trace(const Trace& trace, const std::string& file, pg::StatementLog* statements) {
  const Scenario scenario = scenario_of_trace(trace, file);
  return replay_on_system(*scenario.configured, trace, file, statements);
}

Trace rerecorded_trace(const Trace& trace, const std::string& file) {
  const Scenario scenario = scenario_of_trace(trace, file);
  auto strategy = make_replay_strategy(trace.decisions);
  Replayed r = run_logged(*scenario.configured, *strategy, limits_of(trace), nullptr);
  if (r.decisions.size() != trace.decisions.size() || r.result.verdict != trace.verdict ||
      r.result.invariant != trace.invariant || r.actors != trace.actors) {
    throw Divergence(r.result.steps, fmt::format("its decisions no longer give its outcome: {} of {} decisions ran, ending "
                                                 "with {} {} (the trace: {} {})",
                                                 r.decisions.size(), trace.decisions.size(), verdict_name(r.result.verdict),
                                                 r.result.invariant, verdict_name(trace.verdict), trace.invariant));
  }
  Trace out = trace;
  out.events = std::move(r.events);
  out.message = r.result.message;
  if (out.cause) out.cause = trace_cause(out, file);
  return out;
}

ReplayReport replay_on_system(const System& system, const Trace& trace, const std::string& /*file*/,
                              pg::StatementLog* statements) {
  const RunLimits limits = limits_of(trace);
  auto strategy = make_replay_strategy(trace.decisions);
  // An embedded scenario edited to make other actors is named as such, whether or not the
  // recorded decisions still run.
  const auto same_actors = [&](const std::vector<std::string>& made) {
    if (made == trace.actors) return;
    throw Divergence(0, fmt::format("the trace records actors {}, its scenario makes {}", fmt::join(trace.actors, ", "),
                                    fmt::join(made, ", ")));
  };
  Replayed r = run_logged(system, *strategy, limits, statements, same_actors);
  same_actors(r.actors);
  const std::uint64_t last_step = r.result.steps;
  if (r.decisions.size() != trace.decisions.size()) {
    throw Divergence(last_step, fmt::format("the execution ended after {} of the trace's {} decisions "
                                            "(verdict {}: {})",
                                            r.decisions.size(), trace.decisions.size(),
                                            verdict_name(r.result.verdict), r.result.message));
  }
  const std::size_t n = std::min(r.events.size(), trace.events.size());
  for (std::size_t i = 0; i < n; ++i) {
    if (!(r.events[i] == trace.events[i])) {
      throw Divergence(trace.events[i].step,
                       fmt::format("the trace records \"{}\", the replay did \"{}\"",
                                   event_text(trace.events[i], trace.actors), event_text(r.events[i], r.actors)));
    }
  }
  if (r.events.size() != trace.events.size()) {
    throw Divergence(last_step, fmt::format("the trace records {} events, the replay produced {}",
                                            trace.events.size(), r.events.size()));
  }
  if (r.result.verdict != trace.verdict || r.result.invariant != trace.invariant ||
      r.result.message != trace.message) {
    // The invariant's name beside the verdict: an edited name is what differs then.
    const auto outcome = [](Verdict v, const std::string& invariant, const std::string& message) {
      return fmt::format("{}{} (\"{}\")", verdict_name(v), invariant.empty() ? "" : " " + invariant, message);
    };
    throw Divergence(last_step, fmt::format("the trace ends with {}, the replay with {}",
                                            outcome(trace.verdict, trace.invariant, trace.message),
                                            outcome(r.result.verdict, r.result.invariant, r.result.message)));
  }
  return ReplayReport{std::move(r.result), std::move(r.events), std::move(r.actors)};
}

}  // namespace lockstep::sim
