// model/timing.h: a scenario's timing model ("explore": {"time": "timed", "timing": {...}};
// the API's Model::timing): durations as ranges and clocks that are off, explored rather
// than taken as written.
//
// - jitter J: each sleep and timeout the code writes (duration d, a timer of the scheduler)
//   lasts any time in [d * (1 - J), d * (1 + J)]. Explored, as region-based timed checkers
//   do, at the values that can change an outcome: d itself, the two ends, and each deadline
//   of another actor's pending timer that falls inside the range, with the instants just
//   before and just after it (so the two expiries come in either order and at once). An
//   explored choice ("duration") made where the timer is armed; a timer armed later sees
//   this one's deadline among the pending ones;
// - skew_ms S: each actor's Env::now reads the server's clock (the simulated PostgreSQL's
//   now()) plus 0, -S or +S ms, chosen once per actor and execution ("clock_skew");
// - stalls {count C, max_ms M}: before any statement an actor sends to the simulated
//   PostgreSQL, and right after it reads its clock (Env::now: the pause between a check of
//   a deadline and the act on it), it may stop for M ms (a GC or VM pause; "stall", at most C
//   per execution);
// - statement_ms [LO, HI]: each such statement first takes a round trip of LO or HI ms
//   ("latency"; one value when LO == HI, no choice), so a loop without a sleep moves time.
// Guarantees: with no timing (the default), no choice is added and every count and trace is
// as before; the same decisions give the same timings (traces record them as choices).
// Not built yet (issue 62): stalls before other steps (one holding a mutex while time moves).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/model/env.h"
#include "lockstep/model/json_cursor.h"

namespace lockstep {

struct Timing {
  double jitter = 0;          // 0 .. 0.99
  std::int64_t skew_ms = 0;   // 0 .. one day
  int stalls = 0;             // at most this many per execution (0 .. 8)
  std::int64_t stall_ms = 0;  // each this long
  Duration statement_low{0}, statement_high{0};  // a statement's round trip (both 0: none)

  bool any() const { return jitter > 0 || skew_ms > 0 || stalls > 0 || statement_high > Duration{0}; }
  friend bool operator==(const Timing&, const Timing&) = default;
};

// Reads {"jitter": J, "skew_ms": S, "stalls": {"count": C, "max_ms": M}, "statement_ms":
// [LO, HI]}; InputError naming the place of a bad value.
Timing parse_timing(const JsonCursor& at);
nlohmann::json timing_json(const Timing& t);

// What a timed search covered, for its verdict: "durations as written, no clock skew" or
// "durations within 50%, clocks off by up to 50 ms".
std::string timing_coverage(const Timing& t);

// The durations a timer written as `written` may last, explored as one choice: as written
// first, then the low and the high end, then the region points in increasing order: for
// each offset in `pending` (from now to another timer's deadline) strictly inside the range,
// that offset and the offsets kRegionStep before and after it, kept inside the range. No
// duplicates; the same inputs give the same list (a trace's choice index names one value).
std::vector<Duration> duration_choices(Duration written, double jitter, std::span<const Duration> pending);
inline constexpr Duration kRegionStep = std::chrono::microseconds(1);

// "100 ms", "60.001 ms", "338 s" (from 10 s on): a duration as trace rows and causes show it.
std::string duration_text(Duration d);

}  // namespace lockstep
