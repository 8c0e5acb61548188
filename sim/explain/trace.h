// sim/explain/trace.h: the trace format, lockstep-trace/1.
//
// A trace is self-contained: it embeds the scenario it came from, the effective exploration
// settings that matter for replay (strategy, seed, time mode, step bound), the decisions in
// order, the verdict, a readable event log (step, virtual time, actor, operation,
// result) and, for a failure, the pairs of steps whose order it depends on (`cause`).
// Replay needs only the scenario and the decisions; the log and verdict are what replay
// checks against. Writing is canonical: the same trace gives the same bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/model/scenario.h"
#include "lockstep/model/verdict.h"
#include "lockstep/sim/sched/scheduler.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

inline constexpr std::string_view kTraceFormat = "lockstep-trace/1";

// How a shrunk trace relates to the failing execution the search found.
struct ShrinkInfo {
  std::uint64_t original_steps = 0;
  int original_preemptions = 0;
  std::uint64_t steps = 0;
  int preemptions = 0;
  std::uint64_t attempts = 0;
  bool out_of_budget = false;  // the shrinker's budget ran out: a simpler trace may exist
};

// The orderings a failure depends on (found by sim/explain/cause.h), as step numbers of the trace.
struct CausePair {
  std::uint64_t first = 0;   // ran first in the trace
  std::uint64_t second = 0;  // a dependent step of another actor, which ran after it
  std::string outcome;       // with first's actor delayed past second: "passes", "ends in deadlock", ...
  std::string sentence;      // the pair and what changes, in one sentence

  friend bool operator==(const CausePair&, const CausePair&) = default;
};

struct Cause {
  bool computed = false;
  bool complete = true;     // false: stopped by its budget with some pairs found (reason says where)
  std::string reason;       // why it was not computed, or not completed
  std::uint64_t tried = 0;  // reorderings run
  std::uint64_t found = 0;  // cause pairs found; `pairs` keeps those at the latest steps
  std::vector<CausePair> pairs;
  // Timing choices the failure depends on (sim/explain/cause.h), one sentence each: "b's
  // timer (sleep 120) lasted 99.999 ms, written 120 ms; lasting 120 ms, the execution passes".
  std::vector<std::string> timing;

  friend bool operator==(const Cause&, const Cause&) = default;
};

// A livelock's trace is a lasso (sim/progress/progress.h): a prefix, then a cycle of `period` steps
// from step `start` on, repeated to the trace's end. `observed` is how many times the cycle
// repeated in the execution the search found, before its step bound.
struct LassoInfo {
  std::uint64_t start = 0;
  std::uint64_t period = 0;
  std::uint64_t repeats = 0;   // in the trace
  std::uint64_t observed = 0;  // in the search's execution (0: not known)

  friend bool operator==(const LassoInfo&, const LassoInfo&) = default;
};

struct Trace {
  nlohmann::json scenario;  // the scenario document, as read
  std::string strategy;     // that found it
  // What it ran under: seed, time mode, step bound and livelock bound are written (the
  // livelock bound when not the default); fair mode and symmetry are not, as a replay follows
  // the decisions with neither.
  RunSettings run;
  std::uint64_t execution = 0;  // which execution of the search it was (1-based)
  Verdict verdict = Verdict::pass;
  std::string invariant;  // for violation
  std::string message;
  std::vector<std::string> actors;
  std::vector<Decision> decisions;
  std::vector<LogEvent> events;
  std::optional<ShrinkInfo> shrunk;  // present when the trace was shrunk
  std::optional<Cause> cause;        // present when cause analysis ran (failing traces)
  std::optional<LassoInfo> lasso;    // present for a livelock's (or a liveness') lasso
};

// Canonical text of a trace (one event per line), ending with a newline.
std::string trace_to_text(const Trace& trace);

// Reads a trace; throws InputError naming `file` and the JSON pointer of a bad value.
Trace trace_from_json(const nlohmann::json& document, const std::string& file);
Trace load_trace(const std::string& path);
void save_trace(const Trace& trace, const std::string& path);

}  // namespace lockstep::sim
