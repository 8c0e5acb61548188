#include "lockstep/model/timing.h"

#include <cmath>

#include <fmt/format.h>

namespace lockstep {

Timing parse_timing(const JsonCursor& at) {
  if (!at.is_object()) at.fail("expected {\"jitter\": 0.5, \"skew_ms\": 50}");
  for (const char* later : {"stalls", "statement_ms"}) {
    if (auto v = at.find(later)) {
      v->fail("not built yet: this lockstep explores \"jitter\" and \"skew_ms\" only (stalls and statement latency: "
              "issue 48)");
    }
  }
  at.expect_keys({"jitter", "skew_ms"});
  Timing t;
  if (auto v = at.find("jitter")) t.jitter = v->as_number(0, 0.99);
  if (auto v = at.find("skew_ms")) t.skew_ms = v->as_int(0, 24LL * 3600 * 1000);
  return t;
}

nlohmann::json timing_json(const Timing& t) { return {{"jitter", t.jitter}, {"skew_ms", t.skew_ms}}; }

std::string timing_coverage(const Timing& t) {
  const std::string durations = t.jitter > 0 ? fmt::format("durations within {:g}%", t.jitter * 100) : "durations as written";
  const std::string clocks = t.skew_ms > 0 ? fmt::format("clocks off by up to {} ms", t.skew_ms) : "no clock skew";
  return durations + ", " + clocks;
}

Duration jittered(Duration written, double jitter, int c) {
  if (c == 0) return written;
  const double factor = c == 1 ? 1 - jitter : 1 + jitter;
  return Duration{static_cast<Duration::rep>(std::llround(static_cast<double>(written.count()) * factor))};
}

}  // namespace lockstep
