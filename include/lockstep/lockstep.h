// lockstep/lockstep.h: model tests in your own test suite.
//
// Declare the shared state of one execution, the actors as lambdas over it and the Env,
// and the invariants; choose a strategy and bounds; run. Every Env call is a scheduling
// point, so run() explores the interleavings (and timeouts, and choices) of your actors.
// confirm() runs the very same actors and invariants on real threads against a real
// PostgreSQL: link lockstep::real and include <lockstep/real.h> for that; simulation alone
// needs only lockstep::lockstep, without libpq.
//
//   #include <lockstep/lockstep.h>
//
//   struct Counter {
//     explicit Counter(lockstep::Env& env) : x(env.new_shared_var("x", 0)) {}
//     std::unique_ptr<lockstep::SharedVar> x;
//   };
//
//   auto report = lockstep::Model<Counter>("counter")
//                     .actors(2, [](Counter& s, lockstep::Env&, lockstep::ActorId) {
//                       s.x->store(s.x->load() + 1);  // not atomic: an update can be lost
//                     })
//                     .invariant("no_lost_update", [](Counter& s) -> std::optional<std::string> {
//                       if (s.x->load() != 2) return "x is " + std::to_string(s.x->load());
//                       return std::nullopt;
//                     })
//                     .run();
//   // report.verdict == Verdict::violation; report.describe() shows the interleaving, the
//   // written trace and the command that replays it (LOCKSTEP_REPLAY=TRACE ./your-test).
//
// A model with a configuration, Model<State, Config>("name", config), builds its state as
// State(env, config). Config must convert to nlohmann::json (to_json): the configuration is
// recorded in the trace, so a replay runs only on the model built from the same one.
//
// State is constructed from the Env once per execution and must be deterministic; actors
// must reach shared state only through Env objects (see <lockstep/env.h> for the contract).
// With <lockstep/gtest.h>, LOCKSTEP_EXPECT_PASS(model) turns a failure into a test failure;
// <lockstep/system.h> turns a model into a system that scenario files and the command line
// can name.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/model/env.h"
#include "lockstep/model/filesystem.h"
#include "lockstep/model/model_spec.h"
#include "lockstep/model/pg.h"
#include "lockstep/model/verdict.h"
#include "lockstep/real/backend_hook.h"
#include "lockstep/real/confirm.h"
#include "lockstep/real/task_threads.h"
#include "lockstep/sim/model_run.h"

namespace lockstep {

using real::ConfirmOptions;
using real::ConfirmReport;

template <typename State, typename Config = void>
class Model {
  using ConfigArg = std::conditional_t<std::is_void_v<Config>, std::monostate, Config>;

 public:
  // Model<State>: each execution's state is State(env).
  explicit Model(std::string name)
    requires std::is_void_v<Config>
  {
    spec_.name = std::move(name);
    spec_.make_state = [](Env& env) { return std::make_shared<State>(env); };
  }

  // Model<State, Config>: each execution's state is State(env, config).
  Model(std::string name, ConfigArg config)
    requires(!std::is_void_v<Config>)
  {
    spec_.name = std::move(name);
    static_assert(std::is_constructible_v<nlohmann::json, const Config&>,
                  "Model<State, Config>: Config must convert to nlohmann::json (a to_json function, e.g. "
                  "NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE): traces record it, and a replay runs only on the same one");
    auto shared = std::make_shared<const Config>(std::move(config));
    spec_.configuration = nlohmann::json(*shared);
    spec_.make_state = [shared](Env& env) { return std::make_shared<State>(env, *shared); };
  }

  // n actors named a, b, c, ... running the same body (told its own id).
  Model& actors(int n, std::function<void(State&, Env&, ActorId)> body) {
    for (int i = 0; i < n; ++i) actor(default_actor_name(static_cast<int>(spec_.actors.size())), body);
    return *this;
  }

  // n interchangeable actors named a, b, c, ...: actors(n, body) declared symmetric(). The
  // body may use its id only as a name (its own slot in the state), never to behave apart.
  Model& symmetric_actors(int n, std::function<void(State&, Env&, ActorId)> body) {
    const std::size_t first = spec_.actors.size();
    actors(n, std::move(body));
    std::vector<std::string> names;
    for (std::size_t i = first; i < spec_.actors.size(); ++i) names.push_back(spec_.actors[i].name);
    if (names.size() >= 2) symmetric(std::move(names));
    return *this;
  }

  Model& actor(std::string name, std::function<void(State&, Env&, ActorId)> body) {
    spec_.actors.push_back({std::move(name), [body = std::move(body)](void* s, Env& env, ActorId self) {
                              body(*static_cast<State*>(s), env, self);
                            }});
    return *this;
  }

  // Declares the named actors interchangeable (symmetry reduction): they run the same body
  // with the same configuration from a symmetric state, and no check, mark or final state
  // tells them apart but by renaming. Executions equal up to a permutation of them are then
  // explored once (a class of n actors: up to n! times fewer). Declare each class once;
  // the scheduler stops with model_error where it sees them behave differently.
  Model& symmetric(std::vector<std::string> actor_names) {
    spec_.symmetric.push_back(std::move(actor_names));
    return *this;
  }
  // The actors with ids first .. end-1 (declared so far) as one class: one special actor and
  // the rest interchangeable is actors(n, body).symmetric(1, n).
  Model& symmetric(ActorId first, ActorId end) {
    if (first < 0 || end > static_cast<ActorId>(spec_.actors.size()) || end - first < 2) {
      throw InputError(fmt::format("model {}: symmetric({}, {}) needs two or more of the {} actors declared so far",
                                   spec_.name, first, end, spec_.actors.size()));
    }
    std::vector<std::string> names;
    for (ActorId i = first; i < end; ++i) names.push_back(spec_.actors[static_cast<std::size_t>(i)].name);
    return symmetric(std::move(names));
  }

  // The same, with a description (for `lockstep list` when the model is registered).
  Model& invariant(std::string name, std::string description, std::function<std::optional<std::string>(State&)> check) {
    spec_.invariant_docs[name] = std::move(description);
    return invariant(std::move(name), std::move(check));
  }

  // A ready event invariant: at most one holder of each resource. Report
  // Event::scoped(enter, resource, holder) when a holder believes it has the resource and
  // Event::scoped(leave, resource, holder) when it lets it go (holder: an actor id, a token);
  // an enter of a resource another holder has not left is a violation of `name`.
  Model& at_most_one_holder(std::string name, std::string enter = "enter", std::string leave = "leave",
                            std::string description = "at most one holder of each resource at a time") {
    spec_.invariant_docs[name] = std::move(description);
    spec_.holder_rules.push_back({std::move(name), std::move(enter), std::move(leave)});
    return *this;
  }

  // A fault the model's Config reads (a boolean field of that name), with its description:
  // a registration without a `faults` list takes the model's (<lockstep/system.h>).
  Model& fault(std::string name, std::string description) {
    spec_.faults.push_back({std::move(name), std::move(description)});
    return *this;
  }

  // Checked once every actor has finished: a message means the invariant is broken.
  Model& invariant(std::string name, std::function<std::optional<std::string>(State&)> check) {
    spec_.final_checks.push_back({std::move(name), [check = std::move(check)](void* s) {
                                    return check(*static_cast<State*>(s));
                                  }});
    return *this;
  }

  // An invariant declared (by invariant, on_event, or a ready one from
  // <lockstep/invariants.h>) but not checked in this run: a registration shared by many
  // tests, one test without it. Its name must be declared (InputError at run otherwise).
  Model& without_invariant(std::string name) {
    spec_.switched_off.push_back(std::move(name));
    return *this;
  }

  // Checked at every Env::observe: a message means the invariant is broken. Every order of
  // ordered events is explored; when a check judges the events of one subject only (one
  // key, one agent), report them with that scope (Event::scoped(name, subject, value), or
  // Event::scope) and the events of different subjects are not interleaved. The contract
  // is in <lockstep/env.h>: a verdict may depend on the order within a scope, never across.
  Model& on_event(std::string name, std::function<std::optional<std::string>(State&, const Event&)> check) {
    spec_.event_checks.push_back({std::move(name), [check = std::move(check)](void* s, const Event& e) {
                                    return check(*static_cast<State*>(s), e);
                                  }});
    return *this;
  }

  // Counts the executions after which `holds` is true (ModelReport::marks,
  // ConfirmReport::marks). phantom_grant and phantom_cleaned are counted without asking.
  Model& mark(std::string name, std::function<bool(State&)> holds) {
    spec_.marks.push_back({std::move(name), [holds = std::move(holds)](void* s) { return holds(*static_cast<State*>(s)); }});
    return *this;
  }

  Model& strategy(std::string name) { options_.search.strategy = std::move(name); return *this; }
  Model& seed(std::uint64_t seed) { options_.search.seed = seed; return *this; }
  Model& max_steps(std::uint64_t n) { options_.search.max_steps = n; return *this; }
  // A fair cycle repeated this many steps is a livelock (default 10,000; sim/progress/progress.h).
  Model& livelock_steps(std::uint64_t n) { options_.search.livelock_steps = n; return *this; }
  // Fair mode (the default): executions that repeat a cycle while another actor could run
  // and never does are cut, as CHESS's fair scheduler does; false explores them to the bound.
  Model& fair(bool on = true) { options_.search.fair = on; return *this; }
  // Symmetry reduction over the classes declared with symmetric() (on by default).
  Model& symmetry(bool on = true) { options_.search.symmetry = on; return *this; }
  // Wall time for the search, shrinking and cause analysis together, counted from run().
  Model& max_seconds(double s) {
    options_.search.time_limit_s = s;
    options_.elapsed_seconds = [start = std::make_shared<std::optional<std::chrono::steady_clock::time_point>>()] {
      const auto now = std::chrono::steady_clock::now();
      if (!*start) *start = now;  // the first question is asked when run() starts
      return std::chrono::duration<double>(now - **start).count();
    };
    return *this;
  }
  // Threads for the search (1 to kMaxJobs, 256; default 1), as check --jobs: dpor (optimal mode)
  // gives other threads pending subtrees, random runs a portfolio of its seeded walks; the
  // verdict, counts, first failure and trace are one thread's, byte for byte. Actors must
  // share nothing outside Env (they must not anyway). docs/cli.md "Threads" says what it
  // gains; ModelReport::jobs says how many the search ran on.
  Model& jobs(int n) { options_.search.jobs = n; return *this; }
  Model& max_executions(std::uint64_t n) { options_.search.max_executions = n; return *this; }
  // Also what `lockstep check` of this model's scenarios uses when a scenario does not say
  // ("explore": {"time": ...}).
  Model& timed(bool on = true) {
    options_.search.time = on ? TimeMode::timed : TimeMode::untimed;
    spec_.prefers_timed = on;
    return *this;
  }
  // The timing model of timed mode (model/timing.h): {.jitter = 0.5, .skew_ms = 50} explores
  // every timer as written, at the ends of d +- 50% and where it meets another pending timer,
  // and each actor's clock 50 ms behind or ahead.
  Model& timing(Timing t) { options_.search.timing = t; return *this; }
  Model& max_preemptions(int k) { options_.search.max_preemptions = k; return *this; }
  Model& trace_dir(std::string dir) { options_.trace_dir = std::move(dir); return *this; }
  Model& trace_key(std::string key) { options_.trace_key = std::move(key); return *this; }
  Model& replay_hint(std::string hint) { options_.replay_hint = std::move(hint); return *this; }
  Model& replay_environment(std::string env) { options_.replay_environment = std::move(env); return *this; }

  // Explores every interleaving (or replays LOCKSTEP_REPLAY): sim/model_run.h.
  ModelReport run() const {
    if (options_.search.jobs <= 1 || options_.search.jobs > kMaxJobs || options_.spawn) return run_model(spec_, options_);
    real::TaskThreads threads(options_.search.jobs);  // joined when the search is over
    ModelOptions o = options_;
    o.spawn = threads.spawner();
    return run_model(spec_, o);
  }

  // Replays the trace at `trace_path` (written by a failing run() of this model and
  // configuration) instead of exploring: the same verdict and interleaving, no search.
  // Throws InputError for a trace of another model or configuration, or one that no longer
  // fits the code (naming the file and the step). LOCKSTEP_REPLAY does the same from outside.
  ModelReport replay(std::string trace_path) const {
    ModelOptions o = options_;
    o.replay_trace = std::move(trace_path);
    return run_model(spec_, o);
  }

  // The same actors and invariants on real threads against a real PostgreSQL, `iterations`
  // times with seeded jitter (real/confirm.h). Samples interleavings; proves nothing. Needs
  // the real backend (lockstep::real and <lockstep/real.h>; std::logic_error otherwise).
  ConfirmReport confirm(std::string conninfo, int iterations = 20) const {
    ConfirmOptions o;
    o.conninfo = std::move(conninfo);
    o.iterations = iterations;
    return confirm(o);
  }
  ConfirmReport confirm(const ConfirmOptions& options) const {
    return real::require_backend("Model::confirm").confirm(*system_of(spec_), options);
  }

  const ModelSpec& spec() const { return spec_; }
  const ModelOptions& options() const { return options_; }

 private:
  ModelSpec spec_;
  ModelOptions options_;
};

// An obligation of one actor, named WHAT_ACTOR as Model::actors names actors
// ("acquire_a", "acquire_b", ...): per_actor("acquire", self).
inline std::string per_actor(std::string_view what, ActorId self) {
  return fmt::format("{}_{}", what, default_actor_name(self));
}

// An actor's progress obligation, hot from construction until met() (Env::hot, Env::cold),
// named per_actor(what, self): "acquire_b" must be met (within `within` in timed mode).
class Obligation {
 public:
  Obligation(Env& env, std::string_view what, ActorId self, Duration within = Duration::max())
      : env_(env), name_(per_actor(what, self)) {
    env_.hot(name_, within);
  }
  void met() { env_.cold(name_); }
  const std::string& name() const { return name_; }

 private:
  Env& env_;
  std::string name_;
};

// Runs `body` with crash points of `kind` armed (Env::crash_points). When the actor's
// process crashes, the crash is caught, `forget` runs after the catch (a crashed node
// believes nothing: clear what it thought it held), and true is returned; otherwise the
// crash points are disarmed and false is returned. On a real Env under confirm, the same.
inline bool crashable(Env& env, CrashKind kind, const std::function<void()>& body,
                      const std::function<void()>& forget = nullptr) {
  bool crashed = false;
  try {
    env.crash_points(kind);
    body();
    env.no_crash_points();
  } catch (const Crashed&) {
    crashed = true;
  }
  if (crashed && forget) forget();
  return crashed;
}

// replay(model, path): Model::replay, as a free function.
template <typename State, typename Config>
ModelReport replay(const Model<State, Config>& model, std::string trace_path) {
  return model.replay(std::move(trace_path));
}

}  // namespace lockstep
