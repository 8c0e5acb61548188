// model/invariants_off.h: a scenario's switch for an invariant ("invariants": {"NAME": false}),
// the same for every system, built in or a team's own.
//
// parse_invariants_off reads the key: each name must be one the system declares (a system
// that declares none, such as sql whose checks a spec names, checks the names itself), each
// value a boolean. The system gets the list in SystemInput::invariants_off and skips those
// checks, going on to its others. judged_only wraps what it configured as a backstop: a
// violation of a switched-off invariant that still reaches lockstep is dropped.
// Guarantees: with no invariant switched off the system is returned unwrapped (no cost).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "lockstep/model/json_cursor.h"
#include "lockstep/model/system.h"

namespace lockstep {

// The names switched off in `at` (an object of booleans); InputError naming the place of an
// unknown invariant or a value that is not a boolean.
std::vector<std::string> parse_invariants_off(const JsonCursor& at, const SystemInfo& info);

// `system`, whose instances report no violation of the invariants in `off`.
std::unique_ptr<System> judged_only(std::unique_ptr<System> system, std::vector<std::string> off);

}  // namespace lockstep
