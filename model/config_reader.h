// model/config_reader.h: a registered system's Config read from a scenario through the
// Config's own JSON conversion, so that its fields are written once (in the struct and its
// to_json/from_json) and not again in a hand-written reader.
//
// A default Config's JSON gives the keys and their types. The scenario's parts go in:
//  - "variant" into the key "variant", when the Config has one;
//  - every key of "config" into the key of that name, checked against the default's type
//    (integer, boolean, string, number; arrays and objects as they are) and against its
//    declared range; a key the Config does not have is an unknown key;
//  - every fault of "faults" (true or false) into the boolean key of the fault's name; a
//    fault marked timed needs "explore": {"time": "timed"};
//  - "actors" is refused: such a system's actors come from its Config.
// Every error is an InputError naming the file and the JSON pointer, as hand-written readers
// give. A declared fault or range the Config has no key for is a ModelError (the system's
// declaration is wrong, not the scenario).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/model/env.h"
#include "lockstep/model/system.h"

namespace lockstep {

// An integer key's bounds, inclusive.
struct ConfigRange {
  std::string key;
  std::int64_t min = INT64_MIN;
  std::int64_t max = INT64_MAX;
};

struct ConfigRules {
  std::string system;                   // names the system in messages
  std::vector<NamedDoc> faults;         // each a boolean key of the Config
  std::vector<std::string> timed_faults;  // faults that need timed exploration
  std::vector<ConfigRange> ranges;
};

// `config` (a default Config's JSON) with the scenario's parts applied, as above.
nlohmann::json apply_scenario_to_config(const SystemInput& input, const ConfigRules& rules, nlohmann::json config);

// The Config read from `input`: to_json of a default Config, the scenario applied, then
// from_json. A from_json that throws (a check of the Config's own) names "/config".
template <typename Config>
Config read_config_by_json(const SystemInput& input, const ConfigRules& rules) {
  nlohmann::json j = apply_scenario_to_config(input, rules, nlohmann::json(Config{}));
  try {
    return j.template get<Config>();
  } catch (const std::exception& e) {
    input.fail("/config", e.what());
  }
}

}  // namespace lockstep
