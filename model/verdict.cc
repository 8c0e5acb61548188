#include "lockstep/model/verdict.h"

namespace lockstep {

std::string_view verdict_name(Verdict verdict) {
  switch (verdict) {
    case Verdict::pass: return "pass";
    case Verdict::violation: return "violation";
    case Verdict::deadlock: return "deadlock";
    case Verdict::step_bound: return "step_bound";
    case Verdict::model_error: return "model_error";
    case Verdict::incomplete: return "incomplete";
    case Verdict::livelock: return "livelock";
    case Verdict::liveness: return "liveness";
  }
  return "?";
}

std::optional<Verdict> verdict_from_name(std::string_view name) {
  for (Verdict v : kAllVerdicts) {
    if (verdict_name(v) == name) return v;
  }
  return std::nullopt;
}

}  // namespace lockstep
