// model/system.h: how a system under test plugs into lockstep.
//
// A system (the built-in script, bench, headspace, dal, phase_lock and supervisor, or a
// team's own) registers a SystemInfo: its name, its variants (the correct design first,
// then the bug zoo), the invariants it checks and the faults it understands, and a
// `configure` function that reads the system-specific parts of a scenario (config, actors,
// faults) and returns a System. A System makes one fresh
// Instance per execution: the shared state, the actors and the invariant checks of one run.
//
// Invariants: an Instance sees every Env::observe event (on_event) and the final state once
// every actor has finished (at_end); either may return a Violation.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/pg.h"

namespace lockstep {

struct Violation {
  std::string invariant;
  std::string message;
};

// The state of one execution. Built with an Env whose objects it creates in its
// constructor; destroyed when the execution ends.
// An order in which one actor took two lock classes (lockdep): it asked for `to` while
// holding `from`; `how` says where ("remove_worker:w1 on remover: A then B").
struct LockOrderEdge {
  std::string from, to, how;
  friend bool operator==(const LockOrderEdge&, const LockOrderEdge&) = default;
};

class Instance {
 public:
  virtual ~Instance() = default;
  virtual int actor_count() const = 0;
  virtual std::string_view actor_name(ActorId actor) const = 0;
  // The body of one actor. Runs on that actor (a fiber in the simulation).
  virtual void run_actor(ActorId actor) = 0;
  virtual std::optional<Violation> on_event(const Event& /*event*/) { return std::nullopt; }
  virtual std::optional<Violation> at_end() { return std::nullopt; }
  // A canonical text of the state once every actor has finished, for comparing what two
  // explorations reach (tests of partial-order reduction). Empty when not provided.
  virtual std::string final_state() { return {}; }
  // Facts about this execution worth counting across an exploration ("phantom_grant":
  // the execution took a phantom grant). Asked once, after at_end. Sorted, no duplicates.
  virtual std::vector<std::string> marks() { return {}; }
  // The lock-order edges this execution took, for lockdep across executions
  // (sim/explain/lock_order.h): a cycle whose edges come from different executions is a
  // `lock_order` violation no single execution shows. Asked once, after at_end.
  virtual std::vector<LockOrderEdge> lock_order_edges() { return {}; }
  // Classes of interchangeable actors, for symmetry reduction (sim/explore/symmetry.h): within a
  // class, the same code and configuration, a symmetric initial state, and checks, marks and
  // final state that do not tell the members apart (the same up to renaming them). Then
  // executions equal up to a permutation of a class's members are explored once. Each class
  // lists two or more distinct actors; an actor is in one class at most. Asked once per
  // execution, before any actor runs; the same answer every time.
  virtual std::vector<std::vector<ActorId>> symmetric_actors() const { return {}; }
};

// The classes of actors 0..n-1 that `same` relates (an equivalence), each of two or more,
// in id order: a system's Instance::symmetric_actors when its actors' specifications say
// which are interchangeable (the same kind and settings but the name).
std::vector<std::vector<ActorId>> interchangeable_actors(int n, const std::function<bool(ActorId, ActorId)>& same);

// A configured system: a recipe for instances. Immutable; shared by all executions.
class System {
 public:
  virtual ~System() = default;
  virtual std::unique_ptr<Instance> instantiate(Env& env) const = 0;
  // Whether the system asks for timed exploration when its scenario does not say
  // (Model::timed()): a scenario without "explore": {"time": ...} then runs timed.
  virtual bool prefers_timed() const { return false; }
};

// The usual shape of a System: each execution's instance is InstanceT(env, config).
template <typename InstanceT, typename ConfigT>
class SystemOf final : public System {
 public:
  explicit SystemOf(ConfigT config) : config_(std::move(config)) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override { return std::make_unique<InstanceT>(env, config_); }

 private:
  ConfigT config_;
};

struct NamedDoc {
  std::string name;
  std::string description;
};

// The system-specific parts of a scenario, with their locations for error messages.
struct SystemInput {
  std::string variant;
  std::optional<JsonCursor> config;
  std::optional<JsonCursor> actors;
  std::optional<JsonCursor> faults;
  bool timed = false;  // explore.time is "timed": invariants about durations apply
  // The scenario object itself (absent for a system built in code): errors about the
  // scenario as a whole name its file and the pointer of the key at fault.
  std::optional<JsonCursor> scenario;
  // The invariants the scenario switches off ("invariants": {"NAME": false}; the API's
  // Model::without_invariant). The system skips their checks and goes on to the others;
  // a violation of one that still reaches lockstep is dropped (model/invariants_off.h).
  std::vector<std::string> invariants_off;

  // Whether the scenario judges `invariant` (it is not switched off).
  bool judges(std::string_view invariant) const;

  // Throws InputError "<file>: <scenario pointer><pointer>: <message>" (just the message
  // without a scenario). `pointer` is relative to the scenario, such as "/actors".
  [[noreturn]] void fail(std::string_view pointer, std::string_view message) const;
};

struct SystemInfo {
  std::string name;
  std::string description;
  bool built_in = false;           // one of lockstep's own systems (set by the registry)
  std::vector<NamedDoc> variants;  // variants.front() is the default
  std::vector<NamedDoc> invariants;
  std::vector<NamedDoc> faults;
  // Reads the input; throws InputError (with the JSON pointer) on anything malformed.
  std::function<std::unique_ptr<System>(const SystemInput& input)> configure;
  // Optional: one PostgreSQL Bug #17686 round of the system's own lock code for `variant`,
  // on a real waiter's connection (real/phantom_rounds.h's PhantomClient::round).
  std::function<bool(pg::Connection& conn, Duration lock_timeout, const std::string& variant)> phantom_round;
  pg::AdvisoryKey phantom_key = pg::AdvisoryKey::pair(1, 17686);
  // Optional: the system of a model written in C++ whose identity (model_spec.h's
  // model_identity: name, actors, configuration) is `identity`, or null when this system
  // does not make that model. Lets a program that registers a model replay, shrink, diff and
  // report the traces its model tests wrote ("system": "api").
  std::function<std::unique_ptr<System>(const nlohmann::json& identity)> from_model_identity;
  // Optional: when this system makes a model of `identity`'s name whose identity is not
  // `identity` (a Config field added or removed since a trace was recorded), how they differ
  // (model_spec.h's identity_difference); empty when it makes no model of that name.
  std::function<std::string(const nlohmann::json& identity)> model_identity_difference;
};

// Every system this program knows: the built-in ones (model/systems/registry.cc), then the
// ones it registered, in registration order. Register before reading any scenario (at the
// start of main): the list is not guarded for concurrent use.
const std::vector<SystemInfo>& registered_systems();
const SystemInfo* find_system(std::string_view name);
// The first registered system that makes the model of `identity` (from_model_identity), or
// null.
std::unique_ptr<System> system_for_model_identity(const nlohmann::json& identity);
// When no system makes the model of `identity` but one makes a model of its name: that
// system's name and how the identities differ. Nullopt otherwise.
struct ModelDifference {
  std::string system;
  std::string difference;
};
std::optional<ModelDifference> registered_model_difference(const nlohmann::json& identity);

// Adds a system to registered_systems(); the built-in systems are added through it too.
// Throws ModelError when the name is empty, taken, "api" (reserved for models in C++ code),
// or not a plain word ([A-Za-z0-9_-]),
// when there is no variant or no configure function, or when two variants share a name.
void register_system(SystemInfo info);

// Rejects a `faults` object naming a fault the system does not support; returns the names
// of the faults switched on (value true, or an object of parameters).
std::vector<std::string> enabled_faults(const SystemInfo& info, const std::optional<JsonCursor>& faults);

}  // namespace lockstep
