// sim/model_run.h: the engine behind the public model-test API (include/lockstep/).
//
// A ModelSpec describes a model in code: actor bodies over a state built fresh for every
// execution, final invariants and event invariants. run_model explores it with the given
// strategy and bounds; a failure's trace is shrunk and written, and the report carries the
// readable interleaving and how to replay it. With LOCKSTEP_REPLAY=TRACE in the
// environment, run_model replays that trace on this model instead of exploring.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/model/model_spec.h"
#include "lockstep/model/scenario.h"
#include "lockstep/model/verdict.h"

namespace lockstep {

// Defaults as for a scenario file (model/scenario.h ExploreSettings): the same bounds.
struct ModelOptions {
  ExploreSettings search;  // strategy, seed, bounds, fairness, symmetry, time mode, jobs
  // Wall time (search.time_limit_s) needs elapsed_seconds: sim/ reads no clock;
  // include/lockstep/lockstep.h supplies one.
  std::function<double()> elapsed_seconds;
  // Threads above 1 (search.jobs) need spawn: sim/ starts no thread; Model::run() supplies
  // lockstep::threads'. dpor gives other threads pending subtrees, random runs a portfolio of
  // its seeded walks; the result is one thread's, byte for byte.
  std::function<void(std::function<void()>)> spawn;
  std::string trace_dir = "lockstep-traces";  // where failing traces are written
  // Names the trace file beside the model's name, so that two tests of one model and
  // configuration keep their own traces (<lockstep/gtest.h> sets Suite.Name).
  std::string trace_key;
  std::string replay_hint;  // appended to the replay command (a test filter, say)
  // Put before the replay command, such as RC_PARAMS="seed=N" for a RapidCheck property
  // (include/lockstep/rapidcheck.h sets it), so the command reproduces this configuration.
  std::string replay_environment;
  // A trace to replay instead of searching (Model::replay, lockstep::replay): it must come
  // from this model and configuration (else InputError). Empty: LOCKSTEP_REPLAY decides.
  std::string replay_trace;
};

struct ModelReport {
  Verdict verdict = Verdict::pass;
  std::string invariant;
  std::string message;
  std::uint64_t executions = 0;
  std::uint64_t redundant = 0;
  std::uint64_t steps = 0;         // the steps of the failing trace written (or replayed); 0 on a pass
  std::uint64_t search_steps = 0;  // the steps of every execution the search ran
  bool exhaustive = false;
  // Symmetry reduction (Model::symmetric): the interchangeable actors and their permutations.
  int symmetric_actors = 0;
  std::uint64_t symmetry_permutations = 1;
  // The threads the search ran on (1 where the strategy runs on one: see ModelOptions::jobs),
  // and the executions other threads explored that the search took as its own (dpor; a
  // random portfolio runs every walk on its threads).
  int jobs = 1;
  std::uint64_t executions_from_threads = 0;
  std::string stop_reason;
  std::optional<std::string> trace_path;
  bool trace_per_test = false;  // trace_path is the test's one trace (ModelOptions::trace_key)
  std::string interleaving;    // the failing execution as a table, one column per actor
  std::string cause;           // the orderings (or timings) the failure depends on, as text
  std::string replay_command;  // how to replay the failure
  bool replayed = false;       // this report comes from LOCKSTEP_REPLAY, not a search
  // Set when LOCKSTEP_REPLAY names a trace of another model, or the search ran at a cost
  // the model may avoid (dpor leaving its optimal mode, and why).
  std::string note;
  // Complete executions per mark (model_spec.h: the spec's marks, phantom_grant,
  // phantom_cleaned): whether a passing run ever took the path a fault opens.
  std::map<std::string, std::uint64_t> marks;
  // A livelock's looping actors (the fair cycle's), by name; empty for other verdicts.
  std::vector<std::string> looping;
  // The failing trace's acting actor, step by step (what confirm aims at: ConfirmOptions::
  // aim), and whether it took the simulated server's phantom grant (Bug #17686), which
  // confirm's iterations cannot aim at. Empty and false on a pass.
  std::vector<ActorId> order;
  bool phantom_grant = false;

  bool passed() const { return verdict == Verdict::pass; }
  // Whether the verdict is `kind` with `name`: the invariant (violation), the obligation
  // (liveness), the first obligation still hot (step_bound), one of the looping actors
  // (livelock); an empty name matches any. Other verdicts have no name: only "" matches them.
  bool is(Verdict kind, std::string_view name = {}) const;
  // "violation of NAME", "liveness of NAME", "livelock of NAME", "deadlock", ... for messages.
  static std::string expectation(Verdict kind, std::string_view name = {});
  // Verdict, message, counts, interleaving, trace and replay command, for a test failure.
  std::string describe() const;
};

// Explores the model; a failure's trace goes to trace_dir/NAME-HASH.json (HASH: of the
// name, actors and configuration), or NAME-KEY.json with a trace_key (a test's name: one
// trace per test, the latest failure's; older NAME-KEY-HASH.json files are removed). With LOCKSTEP_REPLAY=TRACE in the environment, a model
// whose name, actors and configuration match the trace's replays it instead; any other
// model (another configuration of a property, say) is explored as usual, with a `note`
// saying so, and writes no trace, so a property re-run with its seed reaches the recorded
// configuration as it did before.
// Throws InputError on bad options or an unreadable trace.
ModelReport run_model(const ModelSpec& spec, const ModelOptions& options);

// Asked for the replay environment when ModelOptions::replay_environment is empty (empty
// function or empty result: none). include/lockstep/rapidcheck.h installs one that names
// the RapidCheck seed inside a property.
std::function<std::string()>& replay_environment_hook();

}  // namespace lockstep
