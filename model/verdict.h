// model/verdict.h: what one execution, or a whole exploration, concludes.
//
// `incomplete` is only ever a whole-exploration verdict: bounds stopped the search before it
// covered every execution. It is never reported as `pass`.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lockstep {

enum class Verdict {
  pass,         // every execution explored, none failed
  violation,    // an invariant failed
  deadlock,     // no actor can run, some unfinished, no timer pending
  step_bound,   // an execution ran past its step bound with no fair repeating cycle in sight
  model_error,  // an actor threw, or misused an Env object
  incomplete,   // bounds stopped the search before it was exhaustive; no failure seen
  livelock,     // at its step bound, the execution repeats a fair cycle (sim/progress/progress.h)
  liveness,     // a progress obligation (Env::hot) still hot at the end, or cold too late
};

inline constexpr Verdict kAllVerdicts[] = {Verdict::pass,        Verdict::violation,  Verdict::deadlock,
                                           Verdict::step_bound,  Verdict::model_error, Verdict::incomplete,
                                           Verdict::livelock,    Verdict::liveness};

std::string_view verdict_name(Verdict verdict);
std::optional<Verdict> verdict_from_name(std::string_view name);

// The verdict a scenario expects: for a violation the invariant, for liveness the obligation
// (none: any).
struct Expectation {
  Verdict verdict = Verdict::pass;
  std::optional<std::string> violation;
};

// True for the verdicts that come with a failing execution (and so a trace).
constexpr bool is_failure(Verdict verdict) {
  return verdict != Verdict::pass && verdict != Verdict::incomplete;
}

}  // namespace lockstep
