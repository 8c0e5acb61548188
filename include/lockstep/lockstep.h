// lockstep/lockstep.h: model tests in your own test suite.
//
// Declare the shared state of one execution, the actors as lambdas over it and the Env,
// and the invariants; choose a strategy and bounds; run. Every Env call is a scheduling
// point, so run() explores the interleavings (and timeouts, and choices) of your actors.
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
// State is constructed from the Env once per execution and must be deterministic; actors
// must reach shared state only through Env objects (see model/env.h for the contract).
// With <lockstep/gtest.h>, LOCKSTEP_EXPECT_PASS(model) turns a failure into a test failure.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "model/env.h"
#include "model/verdict.h"
#include "sim/model_test.h"

namespace lockstep {

template <typename State>
class Model {
 public:
  explicit Model(std::string name) { spec_.name = std::move(name); spec_.make_state = [](Env& env) { return std::make_shared<State>(env); }; }

  // n actors named a, b, c, ... running the same body (told its own id).
  Model& actors(int n, std::function<void(State&, Env&, ActorId)> body) {
    for (int i = 0; i < n; ++i) {
      const std::string name = i < 26 ? std::string(1, static_cast<char>('a' + i)) : "actor" + std::to_string(i);
      actor(name, body);
    }
    return *this;
  }

  Model& actor(std::string name, std::function<void(State&, Env&, ActorId)> body) {
    spec_.actors.push_back({std::move(name), [body = std::move(body)](void* s, Env& env, ActorId self) {
                              body(*static_cast<State*>(s), env, self);
                            }});
    return *this;
  }

  // Checked once every actor has finished: a message means the invariant is broken.
  Model& invariant(std::string name, std::function<std::optional<std::string>(State&)> check) {
    spec_.final_checks.push_back({std::move(name), [check = std::move(check)](void* s) {
                                    return check(*static_cast<State*>(s));
                                  }});
    return *this;
  }

  // Checked at every Env::observe: a message means the invariant is broken. Every order of
  // ordered events is explored; when a check judges the events of one subject only (one
  // key, one agent), report them with that scope (Event::scoped(name, subject, value), or
  // Event::scope) and the events of different subjects are not interleaved. The contract
  // is in model/env.h: a verdict may depend on the order within a scope, never across.
  Model& on_event(std::string name, std::function<std::optional<std::string>(State&, const Event&)> check) {
    spec_.event_checks.push_back({std::move(name), [check = std::move(check)](void* s, const Event& e) {
                                    return check(*static_cast<State*>(s), e);
                                  }});
    return *this;
  }

  Model& strategy(std::string name) { options_.strategy = std::move(name); return *this; }
  Model& seed(std::uint64_t seed) { options_.seed = seed; return *this; }
  Model& max_steps(std::uint64_t n) { options_.max_steps = n; return *this; }
  Model& max_executions(std::uint64_t n) { options_.max_executions = n; return *this; }
  Model& timed(bool on = true) { options_.time = on ? TimeMode::timed : TimeMode::untimed; return *this; }
  Model& max_preemptions(int k) { options_.max_preemptions = k; return *this; }
  Model& trace_dir(std::string dir) { options_.trace_dir = std::move(dir); return *this; }
  Model& replay_hint(std::string hint) { options_.replay_hint = std::move(hint); return *this; }

  ModelReport run() const { return run_model(spec_, options_); }

 private:
  ModelSpec spec_;
  ModelOptions options_;
};

}  // namespace lockstep
