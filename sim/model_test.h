// sim/model_test.h: the engine behind the public model-test API (include/lockstep/).
//
// A ModelSpec describes a model in code: actor bodies over a state built fresh for every
// execution, final invariants and event invariants. run_model explores it with the given
// strategy and bounds; a failure's trace is shrunk and written, and the report carries the
// readable interleaving and how to replay it. With LOCKSTEP_REPLAY=TRACE in the
// environment, run_model replays that trace on this model instead of exploring.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/env.h"
#include "model/scenario.h"
#include "model/verdict.h"

namespace lockstep {

struct ModelSpec {
  std::string name = "model";
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
};

struct ModelOptions {
  std::string strategy = "dpor";
  std::uint64_t seed = 1;
  std::uint64_t max_steps = 10'000;
  std::uint64_t max_executions = 0;  // 0: no bound
  TimeMode time = TimeMode::untimed;
  int max_preemptions = -1;
  std::string trace_dir = "lockstep-traces";  // where failing traces are written
  std::string replay_hint;  // appended to the replay command (a test filter, say)
};

struct ModelReport {
  Verdict verdict = Verdict::pass;
  std::string invariant;
  std::string message;
  std::uint64_t executions = 0;
  std::uint64_t redundant = 0;
  std::uint64_t steps = 0;
  bool exhaustive = false;
  std::string stop_reason;
  std::optional<std::string> trace_path;
  std::string interleaving;    // the failing execution as a table, one column per actor
  std::string replay_command;  // how to replay the failure
  bool replayed = false;       // this report comes from LOCKSTEP_REPLAY, not a search

  bool passed() const { return verdict == Verdict::pass; }
  // Verdict, message, counts, interleaving, trace and replay command, for a test failure.
  std::string describe() const;
};

// Explores the model (or replays LOCKSTEP_REPLAY). Throws InputError on bad options.
ModelReport run_model(const ModelSpec& spec, const ModelOptions& options);

}  // namespace lockstep
