#include "sim/check.h"

#include <fmt/format.h>

#include "sim/sim_env.h"

namespace lockstep::sim {
namespace {

struct Replayed {
  ExecutionResult result;
  std::vector<Decision> decisions;
  std::vector<LogEvent> events;
  std::vector<std::string> actors;
};

Replayed run_logged(const System& system, Strategy& strategy, RunLimits limits) {
  Scheduler scheduler;
  SimEnv env;
  strategy.next_execution();
  limits.log_events = true;
  Replayed out;
  out.result = scheduler.run(system, env, strategy, limits);
  out.decisions = scheduler.decisions();
  out.events = scheduler.events();
  out.actors = scheduler.actor_names();
  return out;
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

CheckReport check_scenario(const Scenario& scenario, const CheckOptions& options) {
  const auto& o = options.overrides;
  CheckReport report;
  report.strategy = o.strategy.value_or(scenario.explore.strategy);
  report.seed = o.seed.value_or(scenario.explore.seed);
  auto strategy = make_strategy(report.strategy, report.seed);
  if (!strategy) {
    std::string known;
    for (const auto& s : strategy_catalog()) known += fmt::format("{}{}", known.empty() ? "" : ", ", s.name);
    throw InputError(fmt::format("{}: unknown strategy \"{}\" (known: {})", scenario.file, report.strategy, known));
  }
  ExploreOptions explore;
  explore.limits.max_steps = o.max_steps.value_or(scenario.explore.max_steps);
  explore.limits.time = scenario.explore.time;
  explore.limits.seed = report.seed;
  explore.max_executions = o.max_executions.value_or(scenario.explore.max_executions);
  explore.max_seconds = o.max_seconds.value_or(scenario.explore.max_seconds);
  explore.stop_at_first = scenario.explore.stop_at_first;
  explore.elapsed_seconds = options.elapsed_seconds;
  explore.progress = options.progress;

  report.result = explore_system(*scenario.configured, *strategy, explore);
  const auto& failure = report.result.first_failure;
  report.as_expected = verdict_as_expected(scenario.expect, report.result.verdict,
                                           failure ? failure->result.invariant : std::string());
  if (failure) {
    // Re-run the failing decisions with the event log on: the trace is what replay sees.
    auto replay = make_replay_strategy(failure->decisions);
    Trace t = record_execution(scenario, *replay, explore.limits);
    if (t.verdict != failure->result.verdict || t.message != failure->result.message) {
      throw std::logic_error(fmt::format(
          "{}: re-running the failing execution gave {} (\"{}\") instead of {} (\"{}\"): the model "
          "is not deterministic",
          scenario.file, verdict_name(t.verdict), t.message, verdict_name(failure->result.verdict),
          failure->result.message));
    }
    t.strategy = report.strategy;
    t.execution = failure->execution;
    report.trace = std::move(t);
  }
  return report;
}

Trace record_execution(const Scenario& scenario, Strategy& strategy, const RunLimits& limits) {
  Replayed r = run_logged(*scenario.configured, strategy, limits);
  Trace t;
  t.scenario = scenario.document;
  t.strategy = std::string(strategy.name());
  t.seed = limits.seed;
  t.execution = 1;
  t.time = limits.time;
  t.max_steps = limits.max_steps;
  t.verdict = r.result.verdict;
  t.invariant = r.result.invariant;
  t.message = r.result.message;
  t.actors = std::move(r.actors);
  t.decisions = std::move(r.decisions);
  t.events = std::move(r.events);
  return t;
}

ReplayReport replay_trace(const Trace& trace, const std::string& file) {
  const Scenario scenario = parse_scenario(trace.scenario, file, "/scenario");
  RunLimits limits;
  limits.max_steps = trace.max_steps;
  limits.time = trace.time;
  limits.seed = trace.seed;
  auto strategy = make_replay_strategy(trace.decisions);
  Replayed r = run_logged(*scenario.configured, *strategy, limits);
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
    throw Divergence(last_step, fmt::format("the trace ends with {} (\"{}\"), the replay with {} (\"{}\")",
                                            verdict_name(trace.verdict), trace.message,
                                            verdict_name(r.result.verdict), r.result.message));
  }
  return ReplayReport{std::move(r.result), std::move(r.events), std::move(r.actors)};
}

}  // namespace lockstep::sim
