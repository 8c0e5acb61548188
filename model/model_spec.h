// model/model_spec.h: a model written in C++ code (include/lockstep/lockstep.h builds one),
// and the System that runs it, so that the explorer (sim/), a confirmation run on a real
// server (real/) and the command line (a registered system) all run the same model.
//
// A ModelSpec is type-erased: its state is built fresh for every execution by make_state
// and handed to the actor bodies and the checks as void*. system_of copies the spec; the
// System it returns owns it and may outlive the caller's copy.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/model/env.h"
#include "lockstep/model/system.h"

namespace lockstep {

struct ModelSpec {
  std::string name = "model";
  bool prefers_timed = false;  // Model::timed(): the command line explores it timed unless the scenario says otherwise
  // The configuration this model was built from, as JSON (null when it has none or it does
  // not convert). Recorded in traces: a replay runs only on the model with the same one.
  nlohmann::json configuration;
  // Builds the shared state of one execution (objects come from the Env).
  std::function<std::shared_ptr<void>(Env&)> make_state;
  struct Actor {
    std::string name;
    std::function<void(void* state, Env& env, ActorId self)> body;
  };
  std::vector<Actor> actors;
  struct FinalCheck {
    std::string invariant;
    std::function<std::optional<std::string>(void* state)> check;  // a message when broken
  };
  std::vector<FinalCheck> final_checks;
  struct EventCheck {
    std::string invariant;
    std::function<std::optional<std::string>(void* state, const Event& event)> check;
  };
  std::vector<EventCheck> event_checks;
  // "At most one holder" (Model::at_most_one_holder): events `enter` and `leave` whose
  // subject is a resource and whose value names the holder; an `enter` of a resource held
  // by another holder is a violation of `invariant`. Its table is per execution.
  struct HolderRule {
    std::string invariant, enter, leave;
  };
  std::vector<HolderRule> holder_rules;
  // Descriptions of invariants (by name) and the faults the model reads, for a registration
  // that takes its lists from the model (<lockstep/system.h>).
  std::map<std::string, std::string> invariant_docs;
  std::vector<NamedDoc> faults;
  // Facts counted per execution: `name` when `holds` is true once every actor finished.
  struct Mark {
    std::string name;
    std::function<bool(void* state)> holds;
  };
  std::vector<Mark> marks;
  // Classes of interchangeable actors, by name (Instance::symmetric_actors, sim/explore/symmetry.h).
  std::vector<std::vector<std::string>> symmetric;
  // Invariants declared above but not checked (Model::without_invariant): system_of drops
  // their checks, so the others are judged as if they were never declared.
  std::vector<std::string> switched_off;
};

// The spec as a System. Each execution's Instance builds the state, runs the actor bodies,
// checks events and final invariants in declaration order (the first broken one is the
// violation) and marks the execution with the spec's marks, plus "phantom_grant" when the
// simulated server handed out a phantom grant (Bug #17686) and "phantom_cleaned" when the
// advisory lock service cleaned one up. (The simulation adds the faults it injected, such
// as "backend_terminated": sim/sched/scheduler.h.)
// Throws InputError for a symmetric class naming an actor the spec does not have, or one
// in two classes.
std::unique_ptr<System> system_of(ModelSpec spec);

// A fingerprint of what a trace must match to replay on this model: its name, actors and
// configuration.
nlohmann::json model_identity(const ModelSpec& spec);

// The invariants `spec` declares (final checks, event checks, holder rules), each once, in
// the order declared, with their descriptions.
std::vector<NamedDoc> declared_invariants(const ModelSpec& spec);

// The name Model::actors gives actor i: a, b, ..., z, then actor26, actor27, ...
std::string default_actor_name(int i);

// How `recorded` (a trace's model identity) differs from `current` (the identity of the
// model of that name this program has), for a trace recorded before the model changed:
// "configuration field \"b\": the trace's value (none), the current value 2; actors: ...".
// Empty when they are equal.
std::string identity_difference(const nlohmann::json& recorded, const nlohmann::json& current);

}  // namespace lockstep
