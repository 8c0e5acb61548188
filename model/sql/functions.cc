#include "lockstep/model/sql/functions.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

constexpr std::array kFunctions = {
    FunctionInfo{"count", 0, 1, FunctionKind::aggregate},
    FunctionInfo{"min", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"max", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"sum", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"avg", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"grouping", 1, 31, FunctionKind::aggregate},  // GROUPING(...): its arguments GROUP BY items' numbers
    FunctionInfo{"bool_and", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"bool_or", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"every", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"array_agg", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"string_agg", 2, 2, FunctionKind::aggregate},
    FunctionInfo{"json_agg", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"jsonb_agg", 1, 1, FunctionKind::aggregate},
    FunctionInfo{"jsonb_object_agg", 2, 2, FunctionKind::aggregate},
    FunctionInfo{"json_object_agg", 2, 2, FunctionKind::aggregate},
    FunctionInfo{"current_database", 0, 0, FunctionKind::scalar},  // "postgres": the simulated server's one database
    FunctionInfo{"current_user", 0, 0, FunctionKind::scalar},      // "postgres": the simulated server's one role (also SESSION_USER, USER)
    FunctionInfo{"current_schema", 0, 0, FunctionKind::scalar},    // "public": search_path is not modeled
    FunctionInfo{"version", 0, 0, FunctionKind::scalar},           // model/sql/server_version.h
    FunctionInfo{"pg_is_in_recovery", 0, 0, FunctionKind::scalar},  // false: the simulated server is a primary
    FunctionInfo{"pg_notify", 2, 2, FunctionKind::scalar},         // NOTIFY's function (sim/pg/server/notifications.cc)
    FunctionInfo{"now", 0, 0, FunctionKind::time},
    FunctionInfo{"transaction_timestamp", 0, 0, FunctionKind::time},
    FunctionInfo{"statement_timestamp", 0, 0, FunctionKind::time},
    FunctionInfo{"clock_timestamp", 0, 0, FunctionKind::time},
    FunctionInfo{"pg_advisory_lock", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_advisory_lock_shared", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_try_advisory_lock", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_try_advisory_lock_shared", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_advisory_unlock", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_advisory_unlock_shared", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_advisory_unlock_all", 0, 0, FunctionKind::advisory_lock},
    FunctionInfo{"pg_advisory_xact_lock", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_advisory_xact_lock_shared", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_try_advisory_xact_lock", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_try_advisory_xact_lock_shared", 1, 2, FunctionKind::advisory_lock},
    FunctionInfo{"pg_backend_pid", 0, 0, FunctionKind::session},
    FunctionInfo{"pg_terminate_backend", 1, 1, FunctionKind::session},
    FunctionInfo{"pg_cancel_backend", 1, 1, FunctionKind::session},
    FunctionInfo{"set_config", 3, 3, FunctionKind::session},
    FunctionInfo{"pg_sleep", 1, 1, FunctionKind::session},
    FunctionInfo{"current_setting", 1, 2, FunctionKind::setting},
    FunctionInfo{"abs", 1, 1, FunctionKind::scalar},
    FunctionInfo{"exp", 1, 1, FunctionKind::scalar},  // model/sql/numeric.h
    FunctionInfo{"ln", 1, 1, FunctionKind::scalar},
    FunctionInfo{"sqrt", 1, 1, FunctionKind::scalar},
    FunctionInfo{"power", 2, 2, FunctionKind::scalar},
    FunctionInfo{"pow", 2, 2, FunctionKind::scalar},
    FunctionInfo{"floor", 1, 1, FunctionKind::scalar},
    FunctionInfo{"ceil", 1, 1, FunctionKind::scalar},
    FunctionInfo{"ceiling", 1, 1, FunctionKind::scalar},
    FunctionInfo{"round", 1, 2, FunctionKind::scalar},
    FunctionInfo{"trunc", 1, 2, FunctionKind::scalar},
    FunctionInfo{"sign", 1, 1, FunctionKind::scalar},
    FunctionInfo{"mod", 2, 2, FunctionKind::scalar},
    FunctionInfo{"to_timestamp", 1, 2, FunctionKind::scalar},  // of epoch seconds; of text by a format: model/sql/to_timestamp.h
    FunctionInfo{"to_date", 2, 2, FunctionKind::scalar},
    FunctionInfo{"extract", 2, 2, FunctionKind::scalar},       // EXTRACT(field FROM x): numeric
    FunctionInfo{"date_part", 2, 2, FunctionKind::scalar},     // double precision
    FunctionInfo{"random", 0, 0, FunctionKind::session},       // drawn from the session's pid and count of draws
    FunctionInfo{"timezone", 2, 2, FunctionKind::scalar},
    FunctionInfo{"localtimestamp", 0, 0, FunctionKind::time},
    FunctionInfo{"current_date", 0, 0, FunctionKind::time},
    FunctionInfo{"localtime", 0, 0, FunctionKind::time},
    FunctionInfo{"make_interval", 0, 7, FunctionKind::scalar},
    FunctionInfo{"justify_hours", 1, 1, FunctionKind::scalar},
    FunctionInfo{"justify_days", 1, 1, FunctionKind::scalar},
    FunctionInfo{"justify_interval", 1, 1, FunctionKind::scalar},
    FunctionInfo{"greatest", 1, 100, FunctionKind::scalar},  // GREATEST (...), a MinMaxExpr
    FunctionInfo{"least", 1, 100, FunctionKind::scalar},
    FunctionInfo{"nullif", 2, 2, FunctionKind::scalar},  // NULLIF (a, b)
    FunctionInfo{"@range_contains", 4, 4, FunctionKind::scalar},  // range(a, b, flags) @> x (model/sql/ranges.h)
    FunctionInfo{"chr", 1, 1, FunctionKind::scalar},
    FunctionInfo{"md5", 1, 1, FunctionKind::scalar},
    FunctionInfo{"sha224", 1, 1, FunctionKind::scalar},
    FunctionInfo{"sha256", 1, 1, FunctionKind::scalar},
    FunctionInfo{"date_trunc", 2, 3, FunctionKind::scalar},  // (unit, ts [, zone])
    FunctionInfo{"age", 1, 2, FunctionKind::scalar},      // of times (model/sql/time_functions.h)
    FunctionInfo{"to_char", 2, 2, FunctionKind::scalar},  // of times, in the patterns the subset knows
    FunctionInfo{"format", 1, 100, FunctionKind::scalar},  // model/sql/format_function.h
    FunctionInfo{"quote_ident", 1, 1, FunctionKind::scalar},
    FunctionInfo{"quote_literal", 1, 1, FunctionKind::scalar},
    FunctionInfo{"quote_nullable", 1, 1, FunctionKind::scalar},
    FunctionInfo{"hashtext", 1, 1, FunctionKind::scalar},
    FunctionInfo{"hashtextextended", 2, 2, FunctionKind::scalar},
    FunctionInfo{"lower", 1, 1, FunctionKind::scalar},
    FunctionInfo{"upper", 1, 1, FunctionKind::scalar},
    FunctionInfo{"length", 1, 1, FunctionKind::scalar},
    FunctionInfo{"char_length", 1, 1, FunctionKind::scalar},
    FunctionInfo{"left", 2, 2, FunctionKind::scalar},
    FunctionInfo{"right", 2, 2, FunctionKind::scalar},
    FunctionInfo{"lpad", 2, 3, FunctionKind::scalar},
    FunctionInfo{"reverse", 1, 1, FunctionKind::scalar},
    FunctionInfo{"to_hex", 1, 1, FunctionKind::scalar},
    FunctionInfo{"repeat", 2, 2, FunctionKind::scalar},
    FunctionInfo{"initcap", 1, 1, FunctionKind::scalar},
    FunctionInfo{"octet_length", 1, 1, FunctionKind::scalar},
    FunctionInfo{"starts_with", 2, 2, FunctionKind::scalar},
    FunctionInfo{"translate", 3, 3, FunctionKind::scalar},
    FunctionInfo{"rpad", 2, 3, FunctionKind::scalar},
    FunctionInfo{"substr", 2, 3, FunctionKind::scalar},
    FunctionInfo{"substring", 2, 3, FunctionKind::scalar},
    FunctionInfo{"strpos", 2, 2, FunctionKind::scalar},
    FunctionInfo{"position", 2, 2, FunctionKind::scalar},
    FunctionInfo{"replace", 3, 3, FunctionKind::scalar},
    FunctionInfo{"split_part", 3, 3, FunctionKind::scalar},
    FunctionInfo{"concat", 1, 100, FunctionKind::scalar},
    FunctionInfo{"num_nulls", 1, 100, FunctionKind::scalar},
    FunctionInfo{"num_nonnulls", 1, 100, FunctionKind::scalar},
    FunctionInfo{"concat_ws", 2, 100, FunctionKind::scalar},
    FunctionInfo{"btrim", 1, 2, FunctionKind::scalar},
    FunctionInfo{"ltrim", 1, 2, FunctionKind::scalar},
    FunctionInfo{"rtrim", 1, 2, FunctionKind::scalar},
    FunctionInfo{"jsonb_build_object", 0, 100, FunctionKind::scalar},
    FunctionInfo{"json_build_object", 0, 100, FunctionKind::scalar},
    FunctionInfo{"json_build_array", 0, 100, FunctionKind::scalar},
    FunctionInfo{"to_json", 1, 1, FunctionKind::scalar},
    FunctionInfo{"array_to_json", 1, 1, FunctionKind::scalar},
    FunctionInfo{"jsonb_typeof", 1, 1, FunctionKind::scalar},
    FunctionInfo{"json_typeof", 1, 1, FunctionKind::scalar},
    FunctionInfo{"jsonb_exists", 2, 2, FunctionKind::scalar},      // the operators ?, ?| and ?& by name (pg-boss)
    FunctionInfo{"jsonb_exists_any", 2, 2, FunctionKind::scalar},
    FunctionInfo{"jsonb_exists_all", 2, 2, FunctionKind::scalar},
    FunctionInfo{"to_jsonb", 1, 1, FunctionKind::scalar},
    FunctionInfo{"row_to_json", 1, 1, FunctionKind::scalar},  // of a whole-row reference: model/sql/records.h
    FunctionInfo{"jsonb_build_array", 0, 100, FunctionKind::scalar},
    FunctionInfo{"jsonb_set", 3, 4, FunctionKind::scalar},
    FunctionInfo{"jsonb_array_length", 1, 1, FunctionKind::scalar},
    FunctionInfo{"array_append", 2, 2, FunctionKind::scalar},  // model/sql/arrays.h
    FunctionInfo{"array_prepend", 2, 2, FunctionKind::scalar},
    FunctionInfo{"array_cat", 2, 2, FunctionKind::scalar},
    FunctionInfo{"array_remove", 2, 2, FunctionKind::scalar},
    FunctionInfo{"array_length", 2, 2, FunctionKind::scalar},
    FunctionInfo{"array_ndims", 1, 1, FunctionKind::scalar},
    FunctionInfo{"array_dims", 1, 1, FunctionKind::scalar},
    FunctionInfo{"array_upper", 2, 2, FunctionKind::scalar},
    FunctionInfo{"array_lower", 2, 2, FunctionKind::scalar},
    FunctionInfo{"cardinality", 1, 1, FunctionKind::scalar},
    FunctionInfo{"array_position", 2, 3, FunctionKind::scalar},
    FunctionInfo{"array_to_string", 2, 3, FunctionKind::scalar},
    FunctionInfo{"unnest", 1, 100, FunctionKind::scalar},  // several arrays: in FROM only  // in a select list without FROM: sim/pg/executor/sql_select.cc
    FunctionInfo{"string_to_array", 2, 3, FunctionKind::scalar},
    FunctionInfo{"generate_series", 2, 3, FunctionKind::scalar},  // set-returning: in FROM only (sim/pg/executor/sql_from.cc)
    FunctionInfo{"jsonb_array_elements", 1, 1, FunctionKind::scalar},
    FunctionInfo{"jsonb_array_elements_text", 1, 1, FunctionKind::scalar},
    FunctionInfo{"json_array_elements", 1, 1, FunctionKind::scalar},  // json as written: model/sql/json_text.h
    FunctionInfo{"json_array_elements_text", 1, 1, FunctionKind::scalar},
    FunctionInfo{"json_to_recordset", 1, 1, FunctionKind::scalar},  // in FROM with AS x(name type, ...): sim/pg/executor/sql_from.cc
    FunctionInfo{"jsonb_to_recordset", 1, 1, FunctionKind::scalar},
    FunctionInfo{"json_populate_record", 2, 2, FunctionKind::scalar},  // model/sql/json_populate.h; in FROM: sim/pg/executor/sql_from.cc
    FunctionInfo{"jsonb_populate_record", 2, 2, FunctionKind::scalar},
    FunctionInfo{"json_populate_recordset", 2, 2, FunctionKind::scalar},
    FunctionInfo{"jsonb_populate_recordset", 2, 2, FunctionKind::scalar},
    FunctionInfo{"jsonb_each", 1, 1, FunctionKind::scalar},
    FunctionInfo{"jsonb_each_text", 1, 1, FunctionKind::scalar},
    FunctionInfo{"jsonb_object_keys", 1, 1, FunctionKind::scalar},
    FunctionInfo{"encode", 2, 2, FunctionKind::scalar},  // model/sql/binary_types.h
    FunctionInfo{"decode", 2, 2, FunctionKind::scalar},
    FunctionInfo{"convert_to", 2, 2, FunctionKind::scalar},
    FunctionInfo{"get_bit", 2, 2, FunctionKind::scalar},  // of a bit string or bytea: model/sql/binary_types.h
    FunctionInfo{"get_byte", 2, 2, FunctionKind::scalar},
    FunctionInfo{"bit_length", 1, 1, FunctionKind::scalar},
    FunctionInfo{"gen_random_uuid", 0, 0, FunctionKind::session},
    FunctionInfo{"uuid_generate_v4", 0, 0, FunctionKind::session},  // uuid-ossp's (CREATE EXTENSION): as gen_random_uuid
    FunctionInfo{"uuid_nil", 0, 0, FunctionKind::session},  // uuid-ossp's: the nil UUID (sqlxmq's sentinel)
    FunctionInfo{"nextval", 1, 1, FunctionKind::session},  // sequences: sim/pg/executor/sql_ddl.cc
    FunctionInfo{"to_regclass", 1, 1, FunctionKind::session},  // the relation's name, or NULL
    FunctionInfo{"has_table_privilege", 2, 3, FunctionKind::session},  // a superuser's: true (sim/pg/heap/sql_rows.h)
    FunctionInfo{"pg_get_serial_sequence", 2, 2, FunctionKind::session},  // a serial or identity column's sequence
    FunctionInfo{"currval", 1, 1, FunctionKind::session},
    FunctionInfo{"setval", 2, 3, FunctionKind::session},
};

}  // namespace

std::span<const FunctionInfo> known_functions() { return kFunctions; }

bool is_modeled_style(std::string_view name, std::string_view value) {
  SessionStyle scratch;
  return apply_style_setting(scratch, name, value);
}

const FunctionInfo* find_function(std::string_view name) {
  const auto it = std::find_if(kFunctions.begin(), kFunctions.end(), [&](const FunctionInfo& f) { return f.name == name; });
  return it == kFunctions.end() ? nullptr : &*it;
}

bool is_stepping_function(std::string_view name) {
  const FunctionInfo* f = find_function(name);
  return (f != nullptr && f->kind == FunctionKind::advisory_lock) || name == "pg_sleep" || name == "pg_cancel_backend" ||
         name == "pg_terminate_backend" || name == "set_config";
}

bool select_list_set_returning(std::string_view name) {
  return name == "unnest" || name == "generate_series" || name == "jsonb_array_elements" || name == "jsonb_array_elements_text" ||
         name == "json_array_elements" || name == "json_array_elements_text" || name == "jsonb_object_keys" ||
         name == "json_populate_recordset" || name == "jsonb_populate_recordset";
}

void check_argument_types(std::string_view name, const std::vector<Value>& args) {
  // Per function, each parameter's kind: 'i' an integer, 't' text, 'j' jsonb, 'a' an array,
  // 'b' boolean, '.' any (past the string: any).
  static constexpr std::pair<std::string_view, std::string_view> kParameters[] = {
      {"pg_advisory_lock", "ii"}, {"pg_advisory_lock_shared", "ii"}, {"pg_try_advisory_lock", "ii"}, {"pg_try_advisory_lock_shared", "ii"},
      {"pg_advisory_unlock", "ii"}, {"pg_advisory_unlock_shared", "ii"}, {"pg_advisory_xact_lock", "ii"}, {"pg_advisory_xact_lock_shared", "ii"},
      {"pg_try_advisory_xact_lock", "ii"}, {"pg_try_advisory_xact_lock_shared", "ii"}, {"pg_terminate_backend", "i"}, {"pg_cancel_backend", "i"},
      {"chr", "i"}, {"left", ".i"}, {"right", ".i"}, {"substr", ".ii"}, {"substring", ".ii"}, {"split_part", "..i"}, {"array_length", "ai"},
      {"hashtextextended", ".i"}, {"setval", ".i"}, {"make_interval", "iiiiii"}, {"round", ".i"}, {"trunc", ".i"},
      {"pg_notify", "tt"}, {"jsonb_typeof", "j"}, {"jsonb_array_length", "j"}, {"jsonb_set", "jajb"}};
  if ((name == "array_append" || name == "array_prepend" || name == "array_remove") && args.size() == 2) {
    // anycompatiblearray and anycompatible: the element's type and the value's must match
    const bool prepend = name == "array_prepend";
    const Value& array = args[prepend ? 1 : 0];
    const Type e = array.type() == Type::array ? array.array_element() : Type::unknown, v = args[prepend ? 0 : 1].type();
    const auto datetime = [](Type t) { return is_timestamp(t) || t == Type::date; };
    const bool fits = e == Type::unknown || v == Type::unknown || e == v || (is_numeric_category(e) && is_numeric_category(v)) || (datetime(e) && datetime(v)) ||
                      ((e == Type::text || e == Type::bpchar) && (v == Type::text || v == Type::bpchar));
    if (!fits) {
      const std::string a = array_type_name(array), x = std::string(type_name(v));
      throw SqlError("42883", fmt::format("function {}({}, {}) does not exist", name, prepend ? x : a, prepend ? a : x));
    }
  }
  for (const auto& [n, kinds] : kParameters) {
    if (n != name) continue;
    for (std::size_t i = 0; i < args.size() && i < kinds.size(); ++i) {
      const Type t = args[i].type();
      if (t == Type::unknown) continue;
      const char k = kinds[i];
      const bool fits = k == '.' || (k == 'i' && (is_integer(t) || t == Type::oid)) || (k == 't' && (t == Type::text || t == Type::bpchar)) ||
                        (k == 'j' && t == Type::jsonb) || (k == 'a' && t == Type::array) || (k == 'b' && t == Type::boolean);
      if (fits) continue;
      std::string types;
      for (const Value& a : args) {
        types += fmt::format("{}{}", types.empty() ? "" : ", ", a.type() == Type::array ? array_type_name(a) : std::string(type_name(a.type())));
      }
      throw SqlError("42883", fmt::format("function {}({}) does not exist", name, types));
    }
  }
}

}  // namespace lockstep::sql
