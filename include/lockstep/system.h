// lockstep/system.h: your own system, named in scenario files and run by the command line.
//
// A registered system is what the built-in ones are: a name, variants, invariants, faults
// and a function that reads a scenario's system-specific parts. Built from a Model, it
// needs one function: the Model for a Config. The Config is read from the scenario through
// its own JSON conversion (model/config_reader.h: "variant", "config" and "faults" into the
// keys of those names, with the declared ranges and the same file-and-JSON-pointer errors
// as every other input), or by a read_config of your own. Register it at the start of
// main, then hand over to lockstep::main (<lockstep/main.h>): check, sweep, replay, shrink,
// report, list, confirm and conform then work on scenario files that say
// "system": "<name>".
//
//   lockstep::register_model_system(lockstep::ModelSystem<Jobs, JobsConfig>{
//       .name = "jobclaim",
//       .description = "workers claim jobs with advisory locks",
//       .variants = {{"correct", "re-checks the row after the lock"}, {"no_recheck", "..."}},
//       .invariants = {{"claimed_once", "no job is run twice"}},  // or left out: the model's
//       .faults = {{"phantom_grant", "Bug #17686 on the lock pool"}},  // (Model::invariant, fault)
//       .timed_faults = {"phantom_grant"},
//       .ranges = {{"workers", 1, 8}},
//       .model = jobs_model,              // lockstep::Model<Jobs, JobsConfig>(const JobsConfig&)
//   });
//
// A program that registers the system also replays, shrinks, diffs and reports the traces
// its model tests wrote for the same model (when the Config has a from_json).
//
// With phantom_round, `confirm --phantom --system NAME` runs PostgreSQL Bug #17686 rounds
// with your own lock code on a real server, one client per variant (real/phantom_rounds.h).
//
// The scenario's `explore` section (strategy, bounds, time mode) governs a run from the
// command line; the Model's own options (strategy(), seed(), ...) apply to Model::run only.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/lockstep.h"
#include "lockstep/model/config_reader.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/system.h"
#include "lockstep/model/system_input.h"

namespace lockstep {

template <typename State, typename Config>
struct ModelSystem {
  std::string name{};  // letters, digits, _ and -
  std::string description{};
  std::vector<NamedDoc> variants{};  // the correct design first: a scenario without "variant" gets it
  // Empty: the model's own, read off the model of the first variant's default configuration
  // (Model::invariant, on_event, at_most_one_holder; Model::fault).
  std::vector<NamedDoc> invariants{};
  std::vector<NamedDoc> faults{};
  // Without read_config, the Config is read through its JSON conversion: faults are boolean
  // keys of the Config, those in timed_faults need timed exploration, and integer keys may
  // have a range (model/config_reader.h).
  std::vector<std::string> timed_faults{};
  std::vector<ConfigRange> ranges{};
  // Optional: reads input.variant, input.config, input.actors and input.faults into a
  // Config. Reports bad input with input.fail(pointer, message) or JsonCursor::fail.
  std::function<Config(const SystemInput& input)> read_config{};
  // The model for one configuration.
  std::function<Model<State, Config>(const Config& config)> model{};
  // Optional, for `confirm --phantom --system NAME`: one Bug #17686 round of your lock
  // code, on the waiter's connection: take phantom_key as `config` (the variant's default
  // configuration) does, waiting at most lock_timeout, then release as it would; return
  // whether your code believed it got the lock.
  std::function<bool(pg::Connection& conn, Duration lock_timeout, const Config& config)> phantom_round{};
  pg::AdvisoryKey phantom_key = pg::AdvisoryKey::pair(1, 17686);
};

// The names and descriptions of a table of variants (anything with `name` and
// `description`), so that the service's own table is the only list.
template <typename Range>
std::vector<NamedDoc> named_docs(const Range& table) {
  std::vector<NamedDoc> out;
  for (const auto& row : table) out.push_back(NamedDoc{std::string(row.name), std::string(row.description)});
  return out;
}

// The SystemInfo of a ModelSystem (for register_system, or to inspect).
template <typename State, typename Config>
SystemInfo system_info(ModelSystem<State, Config> s) {
  if (!s.model) throw ModelError("ModelSystem \"" + s.name + "\": model is required");
  if (s.invariants.empty() || s.faults.empty()) {
    // Not restated: the lists the model declares, read off the model of the first variant's
    // default configuration (a scenario without config).
    std::optional<ModelSpec> declared;
    try {
      SystemInput input;
      input.variant = s.variants.empty() ? std::string() : s.variants.front().name;
      input.timed = true;
      const Config c = s.read_config ? s.read_config(input) : read_config_by_json<Config>(input, ConfigRules{s.name, {}, {}, {}});
      declared = s.model(c).spec();
    } catch (const std::exception& e) {
      if (s.invariants.empty()) {
        throw ModelError("ModelSystem \"" + s.name + "\": its invariants are not listed and its model could not be built "
                         "from a default configuration to read them off (" + e.what() + "): list them");
      }
    }
    if (declared && s.invariants.empty()) s.invariants = declared_invariants(*declared);
    if (declared && s.faults.empty()) s.faults = declared->faults;
  }
  std::function<Config(const SystemInput&)> read = std::move(s.read_config);
  if (!read) {
    read = [rules = ConfigRules{s.name, s.faults, s.timed_faults, s.ranges}](const SystemInput& input) {
      return read_config_by_json<Config>(input, rules);
    };
  }
  SystemInfo info;
  info.name = s.name;
  info.description = s.description;
  info.variants = s.variants;
  info.invariants = s.invariants;
  info.faults = s.faults;
  std::function<Model<State, Config>(const Config&)> make = std::move(s.model);
  info.configure = [read, make](const SystemInput& input) { return system_of(make(read(input)).spec()); };
  if constexpr (requires(const nlohmann::json& j, Config& c) { from_json(j, c); }) {
    info.from_model_identity = [make](const nlohmann::json& identity) -> std::unique_ptr<System> {
      if (!identity.is_object() || !identity.contains("configuration")) return nullptr;
      try {
        const Model<State, Config> m = make(identity.at("configuration").template get<Config>());
        if (model_identity(m.spec()) != identity) return nullptr;
        return system_of(m.spec());
      } catch (const std::exception&) {
        return nullptr;  // a configuration this system does not read: not its model
      }
    };
    if constexpr (requires(nlohmann::json& j, const Config& c) { to_json(j, c); }) {
      // The model the trace's configuration makes today: its values over the defaults of the
      // first variant, fields the Config no longer has left out.
      info.model_identity_difference = [read, make, first = s.variants.empty() ? std::string() : s.variants.front().name](const nlohmann::json& identity) {
        try {
          if (!identity.is_object() || !identity.contains("configuration") || !identity.contains("name")) return std::string();
          SystemInput input;
          input.variant = first;
          input.timed = true;
          nlohmann::json now = read(input);
          const nlohmann::json& was = identity.at("configuration");
          if (!was.is_object() || !now.is_object()) return std::string();
          for (const auto& [key, value] : was.items()) {
            if (now.contains(key)) now[key] = value;
          }
          const Model<State, Config> m = make(now.template get<Config>());
          if (m.spec().name != identity.at("name")) return std::string();
          return identity_difference(identity, model_identity(m.spec()));
        } catch (const std::exception&) {
          return std::string();
        }
      };
    }
  }
  if (s.phantom_round) {
    info.phantom_key = s.phantom_key;
    info.phantom_round = [read, round = std::move(s.phantom_round)](pg::Connection& conn, Duration timeout, const std::string& variant) {
      SystemInput input;
      input.variant = variant;
      input.timed = true;
      return round(conn, timeout, read(input));
    };
  }
  return info;
}

// register_system(system_info(s)): throws ModelError on a taken or malformed name.
template <typename State, typename Config>
void register_model_system(ModelSystem<State, Config> s) {
  register_system(system_info(std::move(s)));
}

}  // namespace lockstep
