// model/sql/functions.h: the one table of SQL functions lockstep's subset knows.
//
// The parser refuses a call of any other function (naming it) or with another number of
// arguments; the executor (sim/pg/) dispatches on the same entries. Names are lower case, as
// PostgreSQL folds unquoted identifiers.
#pragma once

#include <span>
#include <string_view>

namespace lockstep::sql {

enum class FunctionKind : unsigned char {
  aggregate,       // count, min, max, sum: one value from a table's rows
  time,            // now() and its kin: the server's clock (virtual in simulation)
  advisory_lock,   // pg_advisory_lock and its family: the server's lock table
  session,         // pg_backend_pid, pg_terminate_backend, set_config, pg_sleep
  setting,         // current_setting: the session's own settings, as SHOW prints them
  scalar,          // a plain function of its arguments
};

struct FunctionInfo {
  std::string_view name;
  int min_args;
  int max_args;
  FunctionKind kind;
};

std::span<const FunctionInfo> known_functions();
// The entry for `name` (lower case), or nullptr.
const FunctionInfo* find_function(std::string_view name);

// The settings a session may SET, set_config and current_setting: the three timeouts, each
// a duration (milliseconds, or a number with a unit).
inline constexpr std::string_view kSettings[] = {"lock_timeout", "statement_timeout", "deadlock_timeout"};
constexpr bool is_setting(std::string_view name) {
  for (const std::string_view s : kSettings) {
    if (s == name) return true;
  }
  return false;
}

}  // namespace lockstep::sql
