// lockstep/system.h: your own system, named in scenario files and run by the command line.
//
// A registered system is what the built-in ones are: a name, variants, invariants, faults
// and a function that reads a scenario's system-specific parts. Built from a Model, it
// needs only two functions: one that reads a Config from the scenario (with the same
// file-and-JSON-pointer errors as every other input), and one that builds the Model for a
// Config. Register it at the start of main, then hand over to lockstep::main
// (<lockstep/main.h>): check, sweep, replay, shrink, report, list, confirm and conform then
// work on scenario files that say "system": "<name>".
//
//   lockstep::register_model_system(lockstep::ModelSystem<Jobs, JobsConfig>{
//       .name = "jobclaim",
//       .description = "workers claim jobs with advisory locks",
//       .variants = {{"correct", "re-checks the row after the lock"}, {"no_recheck", "..."}},
//       .invariants = {{"claimed_once", "no job is run twice"}},
//       .faults = {{"phantom_grant", "Bug #17686 on the lock pool"}},
//       .read_config = read_jobs_config,  // JobsConfig(const lockstep::SystemInput&)
//       .model = jobs_model,              // lockstep::Model<Jobs, JobsConfig>(const JobsConfig&)
//   });
//
// The scenario's `explore` section (strategy, bounds, time mode) governs a run from the
// command line; the Model's own options (strategy(), seed(), ...) apply to Model::run only.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/lockstep.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/system.h"
#include "lockstep/model/system_input.h"

namespace lockstep {

template <typename State, typename Config>
struct ModelSystem {
  std::string name;  // letters, digits, _ and -
  std::string description;
  std::vector<NamedDoc> variants;  // the correct design first: a scenario without "variant" gets it
  std::vector<NamedDoc> invariants;
  std::vector<NamedDoc> faults;
  // Reads input.variant, input.config, input.actors and input.faults into a Config. Reports
  // bad input with input.fail(pointer, message) or JsonCursor::fail (file and pointer).
  std::function<Config(const SystemInput& input)> read_config;
  // The model for one configuration.
  std::function<Model<State, Config>(const Config& config)> model;
};

// The SystemInfo of a ModelSystem (for register_system, or to inspect).
template <typename State, typename Config>
SystemInfo system_info(ModelSystem<State, Config> s) {
  if (!s.read_config || !s.model) throw ModelError("ModelSystem \"" + s.name + "\": read_config and model are required");
  SystemInfo info;
  info.name = s.name;
  info.description = s.description;
  info.variants = s.variants;
  info.invariants = s.invariants;
  info.faults = s.faults;
  info.configure = [read = std::move(s.read_config), make = std::move(s.model)](const SystemInput& input) {
    return system_of(make(read(input)).spec());
  };
  return info;
}

// register_system(system_info(s)): throws ModelError on a taken or malformed name.
template <typename State, typename Config>
void register_model_system(ModelSystem<State, Config> s) {
  register_system(system_info(std::move(s)));
}

}  // namespace lockstep
