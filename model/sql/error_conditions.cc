#include "lockstep/model/sql/error_conditions.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace lockstep::sql {
namespace {

// PostgreSQL 15's errcodes.txt: the conditions a lock service or a queue's function catches
// (the classes, and their codes a statement of the subset can raise).
constexpr std::array<std::pair<std::string_view, std::string_view>, 104> kConditions{{
    {"active_sql_transaction", "25001"},
    {"admin_shutdown", "57P01"},
    {"ambiguous_column", "42702"},
    {"ambiguous_function", "42725"},
    {"array_subscript_error", "2202E"},
    {"assert_failure", "P0004"},
    {"cannot_coerce", "42846"},
    {"cannot_connect_now", "57P03"},
    {"cardinality_violation", "21000"},
    {"case_not_found", "20000"},
    {"character_not_in_repertoire", "22021"},
    {"check_violation", "23514"},
    {"connection_exception", "08000"},
    {"crash_shutdown", "57P02"},
    {"data_exception", "22000"},
    {"database_dropped", "57P04"},
    {"datatype_mismatch", "42804"},
    {"datetime_field_overflow", "22008"},
    {"datetime_value_out_of_range", "22008"},
    {"deadlock_detected", "40P01"},
    {"dependent_objects_still_exist", "2BP01"},
    {"diagnostics_exception", "0Z000"},
    {"division_by_zero", "22012"},
    {"duplicate_column", "42701"},
    {"duplicate_database", "42P04"},
    {"duplicate_function", "42723"},
    {"duplicate_object", "42710"},
    {"duplicate_schema", "42P06"},
    {"duplicate_table", "42P07"},
    {"exclusion_violation", "23P01"},
    {"external_routine_exception", "38000"},
    {"feature_not_supported", "0A000"},
    {"floating_point_exception", "22P01"},
    {"foreign_key_violation", "23503"},
    {"function_executed_no_return_statement", "2F005"},
    {"grouping_error", "42803"},
    {"idle_in_transaction_session_timeout", "25P03"},
    {"idle_session_timeout", "57P05"},
    {"in_failed_sql_transaction", "25P02"},
    {"insufficient_privilege", "42501"},
    {"insufficient_resources", "53000"},
    {"integrity_constraint_violation", "23000"},
    {"internal_error", "XX000"},
    {"interval_field_overflow", "22015"},
    {"invalid_argument_for_logarithm", "2201E"},
    {"invalid_authorization_specification", "28000"},
    {"invalid_binary_representation", "22P03"},
    {"invalid_catalog_name", "3D000"},
    {"invalid_column_reference", "42P10"},
    {"invalid_cursor_name", "34000"},
    {"invalid_cursor_state", "24000"},
    {"invalid_datetime_format", "22007"},
    {"invalid_escape_character", "22019"},
    {"invalid_function_definition", "42P13"},
    {"invalid_json_text", "22032"},
    {"invalid_parameter_value", "22023"},
    {"invalid_regular_expression", "2201B"},
    {"invalid_row_count_in_limit_clause", "2201W"},
    {"invalid_row_count_in_result_offset_clause", "2201X"},
    {"invalid_savepoint_specification", "3B001"},
    {"invalid_schema_name", "3F000"},
    {"invalid_sql_statement_name", "26000"},
    {"invalid_table_definition", "42P16"},
    {"invalid_text_representation", "22P02"},
    {"invalid_time_zone_displacement_value", "22009"},
    {"invalid_transaction_initiation", "0B000"},
    {"invalid_transaction_state", "25000"},
    {"invalid_transaction_termination", "2D000"},
    {"lock_not_available", "55P03"},
    {"no_active_sql_transaction", "25P01"},
    {"no_data", "02000"},
    {"no_data_found", "P0002"},
    {"not_null_violation", "23502"},
    {"null_value_not_allowed", "22004"},
    {"numeric_value_out_of_range", "22003"},
    {"object_in_use", "55006"},
    {"object_not_in_prerequisite_state", "55000"},
    {"operator_intervention", "57000"},
    {"others", "others"},
    {"plpgsql_error", "P0000"},
    {"program_limit_exceeded", "54000"},
    {"query_canceled", "57014"},
    {"raise_exception", "P0001"},
    {"read_only_sql_transaction", "25006"},
    {"restrict_violation", "23001"},
    {"savepoint_exception", "3B000"},
    {"serialization_failure", "40001"},
    {"sql_routine_exception", "2F000"},
    {"statement_too_complex", "54001"},
    {"string_data_length_mismatch", "22026"},
    {"string_data_right_truncation", "22001"},
    {"syntax_error", "42601"},
    {"syntax_error_or_access_rule_violation", "42000"},
    {"too_many_rows", "P0003"},
    {"transaction_rollback", "40000"},
    {"triggered_action_exception", "09000"},
    {"undefined_column", "42703"},
    {"undefined_function", "42883"},
    {"undefined_object", "42704"},
    {"undefined_parameter", "42P02"},
    {"undefined_table", "42P01"},
    {"unique_violation", "23505"},
    {"wrong_object_type", "42809"},
    {"zero_length_character_string", "2200F"},
}};

}  // namespace

std::optional<std::string> condition_sqlstate(std::string_view name) {
  const auto at = std::lower_bound(kConditions.begin(), kConditions.end(), name, [](const auto& e, std::string_view n) { return e.first < n; });
  if (at == kConditions.end() || at->first != name) return std::nullopt;
  return std::string(at->second);
}

bool condition_matches(std::string_view condition, std::string_view sqlstate) {
  if (condition == "others") return sqlstate != "57014" && sqlstate != "P0004";
  if (condition == sqlstate) return true;
  return condition.size() == 5 && sqlstate.size() == 5 && condition.substr(2) == "000" && condition.substr(0, 2) == sqlstate.substr(0, 2);
}

}  // namespace lockstep::sql
