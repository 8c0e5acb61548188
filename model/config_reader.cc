#include "lockstep/model/config_reader.h"

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

namespace lockstep {
namespace {

bool is_fault(const ConfigRules& rules, std::string_view key) {
  return std::any_of(rules.faults.begin(), rules.faults.end(), [&](const NamedDoc& f) { return f.name == key; });
}

const ConfigRange* range_of(const ConfigRules& rules, std::string_view key) {
  for (const auto& r : rules.ranges) {
    if (r.key == key) return &r;
  }
  return nullptr;
}

// The scenario's value at `at`, of the type of the default `like`.
nlohmann::json read_like(const JsonCursor& at, const nlohmann::json& like, const ConfigRange* range) {
  if (like.is_number_integer()) return range ? at.as_int(range->min, range->max) : at.as_int();
  if (like.is_boolean()) return at.as_bool();
  if (like.is_string()) return at.as_string();
  if (like.is_number()) return at.as_number(-1e308, 1e308);
  if (like.is_array() && !at.is_array()) at.fail("expected an array");
  if (like.is_object() && !at.is_object()) at.fail("expected an object");
  return at.value();
}

void check_declaration(const ConfigRules& rules, const nlohmann::json& config) {
  if (!config.is_object()) throw ModelError("system \"" + rules.system + "\": its Config's JSON is not an object");
  for (const auto& f : rules.faults) {
    if (!config.contains(f.name) || !config[f.name].is_boolean()) {
      throw ModelError(fmt::format("system \"{}\": fault \"{}\" is not a boolean key of its Config's JSON", rules.system, f.name));
    }
  }
  for (const auto& r : rules.ranges) {
    if (!config.contains(r.key) || !config[r.key].is_number_integer()) {
      throw ModelError(fmt::format("system \"{}\": range \"{}\" is not an integer key of its Config's JSON", rules.system, r.key));
    }
  }
}

}  // namespace

nlohmann::json apply_scenario_to_config(const SystemInput& input, const ConfigRules& rules, nlohmann::json config) {
  check_declaration(rules, config);
  if (config.contains("variant")) config["variant"] = input.variant;
  if (input.config) {
    std::vector<std::string_view> keys;
    for (const auto& [key, value] : config.items()) {
      if (key != "variant" && !is_fault(rules, key)) keys.push_back(key);
    }
    input.config->expect_keys(keys);
    for (const auto& key : input.config->keys()) {
      config[key] = read_like(input.config->at(key), config[key], range_of(rules, key));
    }
  }
  if (input.actors) {
    input.actors->fail(fmt::format("{} takes no actors: its actors come from its config", rules.system));
  }
  if (input.faults) {
    std::vector<std::string_view> names;
    for (const auto& f : rules.faults) names.push_back(f.name);
    input.faults->expect_keys(names);
    for (const auto& name : input.faults->keys()) {
      const JsonCursor at = input.faults->at(name);
      const bool on = at.as_bool();
      const bool timed = std::find(rules.timed_faults.begin(), rules.timed_faults.end(), name) != rules.timed_faults.end();
      if (on && timed && !input.timed) at.fail("needs \"explore\": {\"time\": \"timed\"}");
      config[name] = on;
    }
  }
  return config;
}

}  // namespace lockstep
