#include "lockstep/model/timing.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace lockstep {

Timing parse_timing(const JsonCursor& at) {
  if (!at.is_object()) {
    at.fail("expected {\"jitter\": 0.5, \"skew_ms\": 50, \"stalls\": {\"count\": 1, \"max_ms\": 200}, "
            "\"statement_ms\": [0.1, 1.0]}");
  }
  at.expect_keys({"jitter", "skew_ms", "stalls", "statement_ms"});
  Timing t;
  constexpr std::int64_t kDayMs = 24LL * 3600 * 1000;
  if (auto v = at.find("jitter")) t.jitter = v->as_number(0, 0.99);
  if (auto v = at.find("skew_ms")) t.skew_ms = v->as_int(0, kDayMs);
  if (auto v = at.find("stalls")) {
    if (!v->is_object()) v->fail("expected {\"count\": 1, \"max_ms\": 200}");
    v->expect_keys({"count", "max_ms"});
    t.stalls = static_cast<int>(v->at("count").as_int(0, 8));
    t.stall_ms = v->at("max_ms").as_int(1, kDayMs);
  }
  if (auto v = at.find("statement_ms")) {
    const auto ends = v->items();
    if (ends.size() != 2) v->fail("expected [LO, HI]: a statement's round trip in milliseconds");
    const double lo = ends[0].as_number(0, 60'000);
    const double hi = ends[1].as_number(lo, 60'000);
    const auto ns = [](double ms) { return Duration{static_cast<Duration::rep>(std::llround(ms * 1e6))}; };
    t.statement_low = ns(lo);
    t.statement_high = ns(hi);
  }
  return t;
}

nlohmann::json timing_json(const Timing& t) {
  nlohmann::json j = {{"jitter", t.jitter}, {"skew_ms", t.skew_ms}};
  if (t.stalls > 0) j["stalls"] = {{"count", t.stalls}, {"max_ms", t.stall_ms}};
  if (t.statement_high > Duration{0}) {
    j["statement_ms"] = {static_cast<double>(t.statement_low.count()) / 1e6, static_cast<double>(t.statement_high.count()) / 1e6};
  }
  return j;
}

std::string timing_coverage(const Timing& t) {
  const std::string durations = t.jitter > 0 ? fmt::format("durations within {:g}%", t.jitter * 100) : "durations as written";
  const std::string clocks = t.skew_ms > 0 ? fmt::format("clocks off by up to {} ms", t.skew_ms) : "no clock skew";
  const std::string stalls = t.stalls > 0 ? fmt::format("{} stall{} of {} ms per execution (before a statement, after a clock read)", t.stalls,
                                                        t.stalls == 1 ? "" : "s", t.stall_ms)
                                          : "no stalls";
  std::string out = durations + ", " + clocks + ", " + stalls;
  if (t.statement_high > Duration{0}) {
    out += fmt::format(", statements taking {:g} to {:g} ms", static_cast<double>(t.statement_low.count()) / 1e6,
                       static_cast<double>(t.statement_high.count()) / 1e6);
  }
  return out;
}

std::string duration_text(Duration d) {
  if (d >= std::chrono::seconds(10)) return fmt::format("{} s", static_cast<double>(d.count()) / 1e9);
  return fmt::format("{} ms", static_cast<double>(d.count()) / 1e6);
}

std::vector<Duration> duration_choices(Duration written, double jitter, std::span<const Duration> pending) {
  const auto scaled = [&](double factor) {
    return Duration{static_cast<Duration::rep>(std::llround(static_cast<double>(written.count()) * factor))};
  };
  const Duration low = scaled(1 - jitter), high = scaled(1 + jitter);
  std::vector<Duration> ends{written};
  for (const Duration d : {low, high}) {
    if (d != written) ends.push_back(d);
  }
  std::vector<Duration> region;
  for (const Duration p : pending) {
    if (p <= low || p >= high) continue;
    for (const Duration d : {p - kRegionStep, p, p + kRegionStep}) {
      if (d > low && d < high) region.push_back(d);
    }
  }
  std::sort(region.begin(), region.end());
  region.erase(std::unique(region.begin(), region.end()), region.end());
  for (const Duration d : region) {
    if (d != written) ends.push_back(d);
  }
  return ends;
}

}  // namespace lockstep
