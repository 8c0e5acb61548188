// model/system_input.h: scenario pieces that several systems read the same way: durations
// in milliseconds, the stall fault, and the invariants a scenario chooses not to judge.
// Every reader throws InputError naming the file and JSON pointer of a bad value.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/system.h"

namespace lockstep {

// A non-negative number of milliseconds, at most `max_ms` (default: a day).
Duration as_millis(const JsonCursor& at, std::int64_t max_ms = 24LL * 3600 * 1000);

// The stall fault: {"actor": NAME, "durations_ms": [...]}: NAME (one of `actors`) pauses
// for one of the durations, an explored choice. Needs timed exploration.
struct StallFault {
  std::string actor;
  std::vector<Duration> durations;
};
StallFault parse_stall_fault(const JsonCursor& at, const std::vector<std::string>& actors, bool timed);

// "skip_invariants": [...]: names of `info`'s invariants this scenario does not judge, to
// look past one violation at its consequence.
std::vector<std::string> parse_skip_invariants(const JsonCursor& at, const SystemInfo& info);
// Whether `v` is judged, given the skipped invariants.
bool judged(const std::vector<std::string>& skipped, const Violation& v);
bool judged(const std::vector<std::string>& skipped, std::string_view invariant);

}  // namespace lockstep
