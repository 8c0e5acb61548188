// model/sql/functions.h: the one table of SQL functions lockstep's subset knows.
//
// The parser refuses a call of any other function (naming it) or with another number of
// arguments; the executor (sim/pg/) dispatches on the same entries. Names are lower case, as
// PostgreSQL folds unquoted identifiers.
#pragma once

#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

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
// 42883 "function name(types) does not exist" where an argument's type has no implicit cast to
// the parameter's as the server resolves the call: an integer parameter given a numeric,
// double precision or text (advisory lock keys, pids, lengths, positions); a text one given
// another type (pg_notify); a jsonb one (jsonb_typeof, jsonb_set) or an array one
// (array_length, jsonb_set's path) given another. An untyped literal or NULL passes.
void check_argument_types(std::string_view name, const std::vector<Value>& args);
// The entry for `name` (lower case), or nullptr.
const FunctionInfo* find_function(std::string_view name);
// The set-returning functions of one column that a select list without FROM may call (a
// ProjectSet: unnest, generate_series, json[b]_array_elements[_text], jsonb_object_keys).
bool select_list_set_returning(std::string_view name);
// Whether a call of the built-in `name` is a step of its own on the simulated server (an
// advisory lock function, pg_sleep, pg_cancel_backend, pg_terminate_backend, set_config):
// other sessions run meanwhile (Statement::calls_stepping_function).
bool is_stepping_function(std::string_view name);

// How a session's own (temporary) function is named in the plans and the simulated server's
// catalog: "pg_temp." and its name, as the statement wrote it.
inline constexpr std::string_view kTempSchemaPrefix = "pg_temp.";

// The settings a session may SET, set_config and current_setting: the five timeouts, each
// a duration (milliseconds, or a number with a unit). The one list of them.
// The planner's switches (enable_seqscan, ...) change only which plan the server picks, so the
// simulation keeps them and shows them; a scan whose row order would follow that choice is
// refused while enable_seqscan is off (sim/pg/executor/sql_joins.cc).
enum class Setting {
  lock_timeout, statement_timeout, deadlock_timeout, idle_in_transaction_session_timeout, idle_session_timeout,
  enable_seqscan, enable_bitmapscan, enable_indexscan, enable_indexonlyscan
};
constexpr bool is_planner_switch(Setting s) { return s >= Setting::enable_seqscan; }
struct SettingInfo {
  std::string_view name;
  Setting setting;
};
inline constexpr SettingInfo kSettings[] = {
    {"lock_timeout", Setting::lock_timeout},
    {"statement_timeout", Setting::statement_timeout},
    {"deadlock_timeout", Setting::deadlock_timeout},
    {"idle_in_transaction_session_timeout", Setting::idle_in_transaction_session_timeout},
    {"idle_session_timeout", Setting::idle_session_timeout},
    {"enable_seqscan", Setting::enable_seqscan},
    {"enable_bitmapscan", Setting::enable_bitmapscan},
    {"enable_indexscan", Setting::enable_indexscan},
    {"enable_indexonlyscan", Setting::enable_indexonlyscan},
};
// The setting `name` names, or nullopt.
constexpr std::optional<Setting> setting_named(std::string_view name) {
  for (const SettingInfo& s : kSettings) {
    if (s.name == name) return s.setting;
  }
  return std::nullopt;
}
constexpr bool is_setting(std::string_view name) { return setting_named(name).has_value(); }
// A custom setting (a placeholder): a two-part name, `que.skip_notify`, any text as its value.
constexpr bool is_custom_setting(std::string_view name) {
  const std::size_t dot = name.find('.');
  return dot != std::string_view::npos && dot > 0 && dot + 1 < name.size();
}

// The session's display settings (TimeZone, DateStyle, IntervalStyle): SET to a value
// model/sql/session_style.h models is accepted, another is refused by name. `name` as the
// parser gives it (lower case).
constexpr bool is_pinned_style(std::string_view name) {
  return name == "timezone" || name == "datestyle" || name == "intervalstyle" || name == "search_path";
}
// Whether `value` (SET's arguments joined by ", ", lower case) is one modeled.
bool is_modeled_style(std::string_view name, std::string_view value);

}  // namespace lockstep::sql
