// lockstep/rapidcheck.h: RapidCheck generators, so a property can quantify over programs
// and configurations.
//
//   RC_GTEST_PROP(MyTool, AgreesWithLockstep, ()) {
//     const nlohmann::json doc = *lockstep::gen::script_scenario({.max_actors = 3});
//     const lockstep::Scenario s = lockstep::parse_scenario(doc, "<generated>");
//     ...
//   }
//
// script_scenario generates a whole `script` scenario document: 1..max_actors actors of
// up to max_ops operations (reads, writes, compare-and-swaps, well-formed critical
// sections, timed lock attempts, sleeps), a final check, and explore settings.
//
// Including this header also makes a failure found inside a RapidCheck property print a
// replay command that reproduces it: RC_PARAMS="seed=N" LOCKSTEP_REPLAY=TRACE ./test
// --gtest_filter=... RapidCheck then generates the same configurations in the same order;
// the one the trace was recorded from (its name, actors and configuration match) replays
// the trace, the others are explored as before.
//
// Inside a property, LOCKSTEP_RC_ASSERT_VERDICT(model, Verdict::KIND, NAME) fails the case
// (RC_FAIL) unless the model's verdict is KIND named NAME (ModelReport::is; "" any), with
// the verdict, interleaving, trace and replay command; LOCKSTEP_RC_ASSERT_PASS,
// _VIOLATION, _LIVENESS, _LIVELOCK and _DEADLOCK are its forms, as <lockstep/gtest.h>'s.
#pragma once

#include <rapidcheck.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/model/scenario.h"
#include "lockstep/sim/model_run.h"

namespace lockstep::detail {

// Inside a property: the RapidCheck seed that regenerates its cases. Outside: nothing.
inline std::string rapidcheck_replay_environment() {
  using rc::detail::ImplicitParam;
  using rc::detail::param::CurrentPropertyContext;
  if (ImplicitParam<CurrentPropertyContext>::value() == CurrentPropertyContext::defaultValue()) return {};
  // The whole configuration that differs from RapidCheck's defaults (max_success, max_size,
  // ...), and always the seed.
  std::string params = rc::detail::configToMinimalString(rc::detail::configuration());
  if (params.find("seed=") == std::string::npos) {
    params = "seed=" + std::to_string(rc::detail::configuration().testParams.seed) + (params.empty() ? "" : " " + params);
  }
  return "RC_PARAMS=\"" + params + "\"";
}

inline const bool rapidcheck_replay_hook_installed = [] {
  replay_environment_hook() = rapidcheck_replay_environment;
  return true;
}();

}  // namespace lockstep::detail

namespace lockstep::gen {

struct ScriptShape {
  int max_actors = 3;
  int max_ops = 4;
  bool blocking = true;  // critical sections, timed lock attempts and sleeps too
  std::vector<std::string> vars = {"x", "y"};
  std::vector<std::string> mutexes = {"m", "n"};
  std::string strategy{kDefaultStrategy};
  bool timed = false;  // explore in timed mode
};

inline rc::Gen<std::string> script_op(const ScriptShape& shape) {
  return rc::gen::exec([shape] {
    const std::string var = *rc::gen::elementOf(shape.vars);
    const int kind = *rc::gen::inRange(0, shape.blocking ? 6 : 4);
    switch (kind) {
      case 0: return "read " + var + " r";
      case 1: return "write " + var + " " + std::to_string(*rc::gen::inRange(0, 3));
      case 2: return "write " + var + " r+1";
      case 3: return "cas " + var + " " + std::to_string(*rc::gen::inRange(0, 2)) + " 1 ok";
      case 4: return "lockfor " + *rc::gen::elementOf(shape.mutexes) + " " + std::to_string(*rc::gen::inRange(0, 10)) + " got";
      default: return "sleep " + std::to_string(*rc::gen::inRange(0, 5));
    }
  });
}

inline rc::Gen<nlohmann::json> script_scenario(const ScriptShape& shape = {}) {
  return rc::gen::exec([shape] {
    nlohmann::json doc = {{"format", "lockstep-scenario/1"}, {"name", "generated"}, {"system", "script"}};
    const int actors = *rc::gen::inRange(1, shape.max_actors + 1);
    for (int a = 0; a < actors; ++a) {
      std::vector<std::string> ops;
      const int n = *rc::gen::inRange(0, shape.max_ops + 1);
      for (int i = 0; i < n; ++i) {
        if (shape.blocking && *rc::gen::inRange(0, 4) == 0) {  // a well-formed critical section
          const std::string m = *rc::gen::elementOf(shape.mutexes);
          ops.insert(ops.end(), {"lock " + m, *script_op(ScriptShape{shape.max_actors, shape.max_ops, false, shape.vars,
                                                                      shape.mutexes, shape.strategy, shape.timed}),
                                 "unlock " + m});
        } else {
          ops.push_back(*script_op(shape));
        }
      }
      doc["actors"].push_back({{"name", std::string(1, static_cast<char>('a' + a))}, {"ops", ops}});
    }
    nlohmann::json vars = nlohmann::json::object();
    for (const auto& v : shape.vars) vars[v] = 0;
    doc["config"] = {{"vars", vars},
                     {"check", {*rc::gen::elementOf(shape.vars) + " <= " + std::to_string(*rc::gen::inRange(0, 4))}}};
    doc["explore"] = {{"strategy", shape.strategy}, {"time", shape.timed ? "timed" : "untimed"}, {"max_steps", 500}};
    return doc;
  });
}

}  // namespace lockstep::gen

#define LOCKSTEP_RC_ASSERT_VERDICT(model, kind, name)                                                            \
  do {                                                                                                           \
    const ::lockstep::ModelReport lockstep_report_ = (model).run();                                              \
    if (!lockstep_report_.is((kind), (name))) {                                                                  \
      RC_FAIL("expected " + ::lockstep::ModelReport::expectation((kind), (name)) + ", got:\n" +                  \
              lockstep_report_.describe());                                                                      \
    }                                                                                                            \
  } while (0)
#define LOCKSTEP_RC_ASSERT_PASS(model) LOCKSTEP_RC_ASSERT_VERDICT(model, ::lockstep::Verdict::pass, "")
#define LOCKSTEP_RC_ASSERT_VIOLATION(model, invariant_name) \
  LOCKSTEP_RC_ASSERT_VERDICT(model, ::lockstep::Verdict::violation, invariant_name)
#define LOCKSTEP_RC_ASSERT_LIVENESS(model, obligation) LOCKSTEP_RC_ASSERT_VERDICT(model, ::lockstep::Verdict::liveness, obligation)
#define LOCKSTEP_RC_ASSERT_LIVELOCK(model, looping_actor) \
  LOCKSTEP_RC_ASSERT_VERDICT(model, ::lockstep::Verdict::livelock, looping_actor)
#define LOCKSTEP_RC_ASSERT_DEADLOCK(model) LOCKSTEP_RC_ASSERT_VERDICT(model, ::lockstep::Verdict::deadlock, "")
