// tests/test_support.h: helpers shared by the test programs: scenarios from inline JSON,
// checking them, replaying their traces.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/scenario.h"
#include "sim/check.h"

namespace lockstep::testing {

// Parses a scenario given as JSON text (file name "<test>" in messages).
Scenario scenario_from_text(const std::string& json_text);
Scenario scenario_from_json(const nlohmann::json& document);

// A script scenario: actors as {name: [ops]}, optional config and explore settings.
nlohmann::json script_scenario(const std::vector<std::pair<std::string, std::vector<std::string>>>& actors,
                               const nlohmann::json& config = nullptr, const nlohmann::json& explore = nullptr);

sim::CheckReport check(const Scenario& scenario, const sim::CheckOverrides& overrides = {});

// The whole stdout, stderr and exit code of `lockstep ARGS...` run in a shell.
struct CommandResult {
  int exit_code = -1;
  std::string out;
};
CommandResult run_lockstep(const std::string& args);

}  // namespace lockstep::testing
