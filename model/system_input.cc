#include "lockstep/model/system_input.h"

#include <algorithm>

#include <fmt/format.h>

namespace lockstep {

Duration as_millis(const JsonCursor& at, std::int64_t max_ms) { return std::chrono::milliseconds(at.as_int(0, max_ms)); }

StallFault parse_stall_fault(const JsonCursor& at, const std::vector<std::string>& actors, bool timed) {
  if (!at.is_object()) at.fail("expected {\"actor\": NAME, \"durations_ms\": [0, 20000]}");
  at.expect_keys({"actor", "durations_ms"});
  StallFault f;
  f.actor = at.at("actor").as_string();
  if (std::find(actors.begin(), actors.end(), f.actor) == actors.end()) {
    at.at("actor").fail(fmt::format("no actor is named \"{}\"", f.actor));
  }
  for (const auto& d : at.at("durations_ms").items()) f.durations.push_back(as_millis(d));
  if (f.durations.empty()) at.at("durations_ms").fail("expected at least one duration");
  if (!timed) at.fail("the stall fault needs \"explore\": {\"time\": \"timed\"}");
  return f;
}

std::vector<std::string> parse_skip_invariants(const JsonCursor& at, const SystemInfo& info) {
  std::vector<std::string> out;
  for (const auto& item : at.items()) {
    const std::string name = item.as_string();
    const bool known = std::any_of(info.invariants.begin(), info.invariants.end(), [&](const NamedDoc& d) { return d.name == name; });
    if (!known) item.fail(fmt::format("unknown invariant \"{}\"", name));
    out.push_back(name);
  }
  return out;
}

bool judged(const std::vector<std::string>& skipped, const Violation& v) { return judged(skipped, v.invariant); }

bool judged(const std::vector<std::string>& skipped, std::string_view invariant) {
  return std::find(skipped.begin(), skipped.end(), invariant) == skipped.end();
}

}  // namespace lockstep
