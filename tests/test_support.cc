#include "tests/test_support.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

namespace lockstep::testing {

Scenario scenario_from_text(const std::string& json_text) {
  return parse_scenario(nlohmann::json::parse(json_text), "<test>");
}

Scenario scenario_from_json(const nlohmann::json& document) { return parse_scenario(document, "<test>"); }

nlohmann::json script_scenario(const std::vector<std::pair<std::string, std::vector<std::string>>>& actors,
                               const nlohmann::json& config, const nlohmann::json& explore) {
  nlohmann::json doc = {{"format", "lockstep-scenario/1"}, {"name", "test"}, {"system", "script"}};
  for (const auto& [name, ops] : actors) doc["actors"].push_back({{"name", name}, {"ops", ops}});
  if (!config.is_null()) doc["config"] = config;
  if (!explore.is_null()) doc["explore"] = explore;
  return doc;
}

sim::CheckReport check(const Scenario& scenario, const sim::CheckOverrides& overrides) {
  sim::CheckOptions options;
  options.overrides = overrides;
  return sim::check_scenario(scenario, options);
}

CommandResult run_lockstep(const std::string& args) {
  const std::string command = std::string(LOCKSTEP_BINARY) + " " + args + " 2>&1";
  CommandResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace lockstep::testing

namespace lockstep::testing {

sim::ExploreResult explore(const System& system, const std::string& strategy, sim::ExploreOptions options,
                           std::uint64_t seed) {
  auto s = sim::make_strategy(strategy, seed);
  return sim::explore_system(system, *s, options);
}

}  // namespace lockstep::testing
