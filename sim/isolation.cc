#include "lockstep/sim/isolation.h"

#include <algorithm>

#include <fmt/format.h>

#include "lockstep/model/json_cursor.h"
#include "lockstep/model/systems/sql_spec.h"
#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

std::string run_isolation_permutation(const sql::Spec& spec, const std::vector<sql::PermutationStep>& steps, bool with_checks,
                                      std::chrono::seconds max_step_wait) {
  const auto system = sql_spec::permutation_system(spec, steps, with_checks, max_step_wait);
  auto strategy = make_strategy("dfs", 1);
  ExploreOptions options;
  options.limits.time = TimeMode::timed;
  options.limits.record_final_state = true;
  // A step canceled after max_step_wait keeps the others polling all that (virtual) time: no
  // livelock bound below the step bound, which only a run that never ends reaches.
  options.limits.max_steps = 50'000'000;
  options.limits.livelock_steps = options.limits.max_steps;
  options.max_executions = 1;
  options.stop_at_first = true;
  std::string output;
  options.on_execution = [&](const ExecutionResult& r) { output = r.final_state; };
  const ExploreResult result = explore_system(*system, *strategy, options);
  if (result.first_failure) {
    // The driver's own refusal (steps that block each other for good, a step held back past
    // twice max_step_wait) already names the spec and the step: as it is.
    const std::string& message = result.first_failure->result.message;
    const std::string driver = "actor isolationtester threw: ";
    if (message.starts_with(driver) && message.compare(driver.size(), spec.file.size() + 1, spec.file + ":") == 0) {
      throw InputError(message.substr(driver.size()));
    }
    std::string names;
    for (const auto& step : steps) names += " " + step.step;
    throw InputError(fmt::format("{}: permutation{}: {}", spec.file, names, result.first_failure->result.message));
  }
  return output;
}

std::vector<std::string> isolation_permutation_outputs(const sql::Spec& spec, const std::vector<sql::PermutationStep>& steps,
                                                       std::chrono::seconds max_step_wait, std::size_t max_executions,
                                                       const std::string& strategy_name) {
  const auto system = sql_spec::permutation_system(spec, steps, false, max_step_wait);
  auto strategy = make_strategy(strategy_name, 1);
  ExploreOptions options;
  options.limits.time = TimeMode::timed;
  options.limits.record_final_state = true;
  options.limits.max_steps = 50'000'000;
  options.limits.livelock_steps = options.limits.max_steps;
  options.max_executions = max_executions;
  std::vector<std::string> outputs;
  options.on_execution = [&](const ExecutionResult& r) {
    if (std::find(outputs.begin(), outputs.end(), r.final_state) == outputs.end()) outputs.push_back(r.final_state);
  };
  (void)explore_system(*system, *strategy, options);
  return outputs;
}

}  // namespace lockstep::sim
