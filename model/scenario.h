// model/scenario.h: a scenario file, read strictly.
//
// A scenario is JSON with a versioned `format` ("lockstep-scenario/1"): name, description,
// system, variant, config, actors, faults, explore (strategy, bounds, seed, time mode) and
// expect (verdict, and the violation name where one is expected). load_scenario reads one,
// checks every key, and has the named system configure itself from it. Any error throws
// InputError naming the file and the JSON pointer of the bad value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lockstep/model/system.h"
#include "lockstep/model/timing.h"
#include "lockstep/model/verdict.h"

namespace lockstep {

inline constexpr std::string_view kScenarioFormat = "lockstep-scenario/1";

// untimed: any pending timeout may fire whenever its waiter is parked (a sound
// over-approximation of every timing). timed: virtual time advances only when no actor can
// run, to the earliest deadline; timers fire exactly at their deadlines.
enum class TimeMode { untimed, timed };

std::string_view time_mode_name(TimeMode mode);

// The defaults of exploration, one set for scenario files, the command line and the C++ API
// (sim/model_run.h): a model explored either way gets the same bounds.
inline constexpr std::string_view kDefaultStrategy = "dpor";  // exhaustive
inline constexpr std::uint64_t kDefaultMaxSteps = 10'000;     // per execution
// A fair cycle repeated this many steps is a livelock before the step bound (sim/progress/progress.h).
inline constexpr std::uint64_t kDefaultLivelockSteps = 10'000;
// The execution bound of a random or pct search that has no other bound: they never exhaust.
inline constexpr std::uint64_t kDefaultRandomExecutions = 10'000;
// The most threads one search runs on (check --jobs, Model::jobs; the default is 1).
inline constexpr int kMaxJobs = 256;

// The settings of one execution: its bounds and switches. sim/sched/run_limits.h's RunLimits
// extends them with the engine's own; a trace records them (sim/explain/trace.h).
struct RunSettings {
  std::uint64_t seed = 1;                      // feeds Env::random
  std::uint64_t max_steps = kDefaultMaxSteps;  // at it, sim/progress/progress.h judges the execution
  TimeMode time = TimeMode::untimed;
  bool fair = true;  // fair mode: cut executions that repeat an unfair cycle (sim/progress/progress.h)
  // An execution whose steps have repeated one fair cycle for this many steps is a livelock
  // there, before its step bound (sim/progress/progress.h): a bound in the millions then costs
  // no more than this on a spinning model. A loop that legitimately repeats identical steps
  // longer (a retry loop of many thousand identical attempts) needs a larger value.
  std::uint64_t livelock_steps = kDefaultLivelockSteps;
  // Symmetry reduction over the actors the system declares interchangeable (sim/explore/symmetry.h).
  bool symmetry = true;
  // Timed mode's timing model (model/timing.h): none by default, every duration as written.
  Timing timing;
};

// The bounds of a whole search: it stops at whichever comes first.
struct SearchBounds {
  std::uint64_t max_executions = 0;  // 0: no bound; counts complete and redundant executions
  double time_limit_s = 0;            // wall time; 0: no bound
  bool stop_at_first = true;          // stop at the first failing execution

  // How many more executions the bound allows after `explored` (the largest value: no bound).
  std::uint64_t executions_left(std::uint64_t explored) const {
    if (max_executions == 0) return UINT64_MAX;
    return max_executions > explored ? max_executions - explored : 0;
  }
  bool unbounded() const { return max_executions == 0 && time_limit_s <= 0; }
};

// The settings of a search: plain data, units last in every name, the same defaults for a
// scenario file (its "explore" object), the command line and the C++ API (ModelOptions::search).
struct ExploreSettings : RunSettings, SearchBounds {
  std::string strategy = std::string(kDefaultStrategy);
  int max_preemptions = -1;  // >= 0: a preemption bound (CHESS); -1: none
  int pct_depth = 3;         // the bug depth d the pct strategy targets
  // Threads for one search (1 to kMaxJobs; check --jobs, Model::jobs): not read from a scenario file.
  int jobs = 1;
};

// Settings given over a scenario's own (the command line's, a test's): an unset one keeps the
// scenario's. The one list of them besides ExploreSettings itself.
struct SettingOverrides {
  std::optional<std::string> strategy = std::nullopt;
  std::optional<std::uint64_t> seed = std::nullopt;
  std::optional<std::uint64_t> max_executions = std::nullopt;
  std::optional<std::uint64_t> max_steps = std::nullopt;
  std::optional<double> time_limit_s = std::nullopt;
  std::optional<int> max_preemptions = std::nullopt;
  std::optional<int> pct_depth = std::nullopt;
  std::optional<bool> fair = std::nullopt;
  std::optional<bool> symmetry = std::nullopt;
  std::optional<std::uint64_t> livelock_steps = std::nullopt;
  std::optional<int> jobs = std::nullopt;
};

ExploreSettings with_overrides(ExploreSettings settings, const SettingOverrides& o);

// The run settings as JSON, under the scenario file's keys (for a checkpoint's header).
nlohmann::json run_settings_json(const RunSettings& settings);

struct Scenario {
  std::string file;         // where it was read from, for messages
  nlohmann::json document;  // the whole file as read; traces embed it
  std::string name;
  std::string description;
  std::string system;
  std::string variant;
  ExploreSettings explore;
  Expectation expect;
  std::shared_ptr<const System> configured;
};

// The durations a scenario writes, added up: every number under a key ending in "_ms" (the
// largest of an array), a script's `sleep MS` and `hot NAME MS`. An upper bound on how long
// a run of it waits on purpose; what confirm's iteration limit and its "no progress" bound
// for a liveness scenario are derived from (cli/cmd_confirm.cc).
Duration scenario_horizon(const nlohmann::json& document);

// Parses a scenario document; `file` names it in error messages, and `pointer` is where the
// document sits inside that file ("" for a scenario file, "/scenario" inside a trace).
Scenario parse_scenario(const nlohmann::json& document, const std::string& file,
                        const std::string& pointer = "");
// A scenario file: JSON, or a PostgreSQL isolation spec (.spec: model/systems/sql_spec.h).
Scenario load_scenario(const std::string& path);

}  // namespace lockstep
