#include "sim/model_test.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include <fmt/format.h>

#include "sim/check.h"
#include "sim/explorer.h"
#include "sim/interleaving_table.h"
#include "sim/trace.h"

namespace lockstep {
namespace {

class SpecInstance final : public Instance {
 public:
  SpecInstance(const ModelSpec& spec, Env& env) : spec_(spec), env_(env), state_(spec.make_state(env)) {}
  int actor_count() const override { return static_cast<int>(spec_.actors.size()); }
  std::string_view actor_name(ActorId a) const override { return spec_.actors[a].name; }
  void run_actor(ActorId a) override { spec_.actors[a].body(state_.get(), env_, a); }
  std::optional<Violation> on_event(const Event& e) override {
    for (const auto& c : spec_.event_checks) {
      if (auto m = c.check(state_.get(), e)) return Violation{c.invariant, *m};
    }
    return std::nullopt;
  }
  std::optional<Violation> at_end() override {
    for (const auto& c : spec_.final_checks) {
      if (auto m = c.check(state_.get())) return Violation{c.invariant, *m};
    }
    return std::nullopt;
  }

 private:
  const ModelSpec& spec_;
  Env& env_;
  std::shared_ptr<void> state_;
};

class SpecSystem final : public System {
 public:
  explicit SpecSystem(const ModelSpec& spec) : spec_(spec) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override { return std::make_unique<SpecInstance>(spec_, env); }

 private:
  const ModelSpec& spec_;
};

std::string self_executable() {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("./your-test") : p.string();
}

std::string safe_name(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.')) c = '_';
  }
  return out;
}

nlohmann::json scenario_stub(const ModelSpec& spec) {
  return {{"format", "lockstep-scenario/1"},
          {"name", spec.name},
          {"system", "api"},
          {"description", "a model defined in C++ code: replay it by running its test with LOCKSTEP_REPLAY=TRACE"}};
}

}  // namespace

std::string ModelReport::describe() const {
  std::string out = fmt::format("lockstep: {}{}{}\n", verdict_name(verdict), invariant.empty() ? "" : " " + invariant,
                                message.empty() ? "" : ": " + message);
  if (!replayed) {
    out += fmt::format("  {} executions ({} sleep-set blocked), {} steps; {}\n", executions, redundant, steps, stop_reason);
  }
  if (!interleaving.empty()) out += interleaving;
  if (trace_path) out += fmt::format("  trace: {}\n", *trace_path);
  if (!replay_command.empty()) out += fmt::format("  replay: {}\n", replay_command);
  return out;
}

ModelReport run_model(const ModelSpec& spec, const ModelOptions& options) {
  if (spec.actors.empty()) throw InputError(fmt::format("model {}: no actors", spec.name));
  if (!spec.make_state) throw InputError(fmt::format("model {}: no state factory", spec.name));
  const SpecSystem system(spec);
  sim::RunLimits limits;
  limits.max_steps = options.max_steps;
  limits.time = options.time;
  limits.seed = options.seed;
  ModelReport report;

  if (const char* replay = std::getenv("LOCKSTEP_REPLAY"); replay != nullptr && *replay != '\0') {
    const sim::Trace trace = sim::load_trace(replay);
    const auto r = sim::replay_on_system(system, trace, replay);
    report.replayed = true;
    report.verdict = r.result.verdict;
    report.invariant = r.result.invariant;
    report.message = r.result.message;
    report.steps = r.result.steps;
    std::ostringstream table;
    sim::print_interleaving(table, r.events, r.actors);
    report.interleaving = table.str();
    return report;
  }

  sim::StrategyOptions so;
  so.seed = options.seed;
  so.max_preemptions = options.max_preemptions;
  auto strategy = sim::make_strategy(options.strategy, so);
  if (!strategy) throw InputError(fmt::format("model {}: unknown strategy \"{}\"", spec.name, options.strategy));
  sim::ExploreOptions explore;
  explore.limits = limits;
  explore.max_executions = options.max_executions;
  const sim::ExploreResult result = sim::explore_system(system, *strategy, explore);
  report.verdict = result.verdict;
  report.executions = result.stats.executions;
  report.redundant = result.stats.redundant;
  report.steps = result.stats.steps;
  report.exhaustive = result.exhaustive;
  report.stop_reason = result.stop_reason;
  if (result.first_failure) {
    const auto& f = *result.first_failure;
    report.invariant = f.result.invariant;
    report.message = f.result.message;
    sim::Trace trace = sim::failure_trace_for(system, scenario_stub(spec), limits, f, true);
    trace.strategy = options.strategy;
    std::ostringstream table;
    sim::print_interleaving(table, trace.events, trace.actors);
    report.interleaving = table.str();
    const std::string path = (std::filesystem::path(options.trace_dir) / (safe_name(spec.name) + ".json")).string();
    sim::save_trace(trace, path);
    report.trace_path = std::filesystem::absolute(path).string();
    report.replay_command = fmt::format("LOCKSTEP_REPLAY={} {}{}", *report.trace_path, self_executable(),
                                        options.replay_hint.empty() ? "" : " " + options.replay_hint);
  }
  return report;
}

}  // namespace lockstep
