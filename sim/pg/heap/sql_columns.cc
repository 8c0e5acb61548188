// sim/pg/heap/sql_columns.cc: a stored row's values read as their columns' types, and the values
// a column stores (PostgreSQL's assignment casts, NOT NULL, lengths of varchar(n) and char(n)).
#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/binary_types.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

namespace {

// An array column's element type.
sql::ElementType column_element(const sql::ColumnDef& c) {
  return sql::declared_element(c.element, c.user_type);
}

}  // namespace

void check_not_null(const SqlTable& t, const Row& row) {
  for (const sql::ColumnDef& c : t.def.columns) {
    if (c.not_null && !row.contains(c.name)) {
      throw SqlError("23502", fmt::format("null value in column \"{}\" of relation \"{}\" violates not-null constraint", c.name, t.def.table));
    }
  }
}

// A stored row's value of column i: its text read as the column's type (absent: NULL).
Value stored(const SqlTable& t, const Row& row, int i) {
  const sql::ColumnDef& c = t.def.columns[static_cast<std::size_t>(i)];
  if (!c.refused.empty()) throw SqlError("0A000", fmt::format("reading {} is not in lockstep's SQL subset (docs/sql.md)", c.refused));
  const auto it = row.find(c.name);
  if (c.type ==
      Type::record) {  // a row value (a WITH query's or a subquery's column): c.user_type is its table
    const int type = sql::current_record_type_index(c.user_type);
    return it == row.end() ? Value::null_record(type) : Value::record(type, it->second);
  }
  if (it == row.end()) return Value::null(c.type);
  if (c.type == Type::enum_) return sql::enum_input(c.user_type, it->second);
  if (c.type == Type::array) return sql::array_input(it->second, column_element(c));
  return sql::from_text(it->second, c.type);
}

// The value as a column of type `to` stores it (an assignment: PostgreSQL's assignment casts).
Value assigned(Value v, const sql::ColumnDef& c, const std::string& table, bool not_null_checked) {
  const Type from = v.type();
  if (c.type == Type::enum_ && !v.is_null()) {  // an untyped literal or an enum of the column's type
    const int index = sql::enum_index(c.user_type);
    if (from != Type::unknown && !(from == Type::enum_ && v.enum_type() == index)) {
      throw SqlError(
          "42804",
          fmt::format("column \"{}\" is of type {} but expression is of type {}", c.name, c.user_type,
                      from == Type::enum_ ? sql::enum_type_name(v) : std::string(sql::type_name(from))));
    }
    v = sql::cast_to_column(v, c.type, c.user_type);
  }
  if (c.type == Type::array && !v.is_null()) {  // an untyped literal, or an array cast element by element
    if (from != Type::unknown && from != Type::array) {
      throw SqlError(
          "42804",
          fmt::format("column \"{}\" is of type {}[] but expression is of type {}", c.name,
                      c.element == Type::enum_ ? c.user_type : std::string(sql::type_name(c.element)),
                      sql::type_name(from)));
    }
    v = sql::cast_to_array(v, column_element(c));
  }
  if (c.type == Type::bit && !v.is_null()) {
    if (from != Type::unknown && from != Type::bit) {
      throw SqlError("42804", fmt::format("column \"{}\" is of type bit({}) but expression is of type {}",
                                          c.name, c.bits, sql::type_name(from)));
    }
    v = sql::cast(v, Type::bit);
    sql::check_bit_length(v, c.bits);
  }
  const bool allowed =
      v.is_null() || from == Type::unknown || v.type() == c.type ||
      (sql::is_numeric_category(from) && sql::is_numeric_category(c.type)) || c.type == Type::text ||
      (c.type == Type::bpchar && (from == Type::text || from == Type::bpchar)) ||
      ((sql::is_timestamp(from) || from == Type::date) && (sql::is_timestamp(c.type) || c.type == Type::date)) ||  // in the session's TimeZone
      ((from == Type::json || from == Type::jsonb) && (c.type == Type::json || c.type == Type::jsonb));
  if (!allowed) {
    throw SqlError("42804", fmt::format("column \"{}\" is of type {} but expression is of type {}", c.name,
                                        sql::type_name(c.type), sql::type_name(from)));
  }
  Value out = v.type() == c.type ? std::move(v) : sql::cast(v, c.type);
  if (c.numeric_precision > 0 && out.type() == Type::array && !out.is_null()) {  // numeric(p, s)[]: each element
    std::vector<Value> elements = sql::array_elements(out);
    for (Value& e : elements) e = sql::numeric_with_typmod(e, c.numeric_precision, c.numeric_scale);
    out = sql::make_array(sql::element_type(out), elements);
  } else if (c.numeric_precision > 0) {
    out = sql::numeric_with_typmod(out, c.numeric_precision, c.numeric_scale);
  }
  if (c.time_precision >= 0) out = sql::with_time_precision(out, c.time_precision);
  if (out.is_null() && c.not_null && not_null_checked) {
    throw SqlError("23502",
                   fmt::format("null value in column \"{}\" of relation \"{}\" violates not-null constraint",
                               c.name, table));
  }
  // varchar(n) as an assignment coerces (varchar()'s typmod, not explicit): a longer value
  // whose characters past n are all blanks is cut to n, any other is 22001.
  auto fitted = [&](const Value& text) {
    const std::string& s = text.as_text();
    std::size_t chars = 0, cut = s.size();
    for (std::size_t i = 0; i < s.size(); ++i) {
      if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;
      if (chars++ == static_cast<std::size_t>(c.max_length)) cut = i;
    }
    if (cut == s.size()) return text;
    if (s.find_first_not_of(' ', cut) != std::string::npos) {
      throw SqlError("22001", fmt::format("value too long for type character varying({})", c.max_length));
    }
    return Value::text(s.substr(0, cut));
  };
  if (c.type == Type::bpchar && c.max_length > 0) {  // char(n): padded, or blanks past n cut
    out = sql::bpchar_with_length(out, c.max_length, false);
  } else if (c.max_length > 0 && !out.is_null()) {
    if (out.type() == Type::array) {  // varchar(n)[]: each element
      std::vector<Value> elements = sql::array_elements(out);
      for (Value& e : elements) {
        if (!e.is_null()) e = fitted(e);
      }
      out = sql::make_array(sql::element_type(out), elements);
    } else {
      out = fitted(out);
    }
  }
  return out;
}

}  // namespace lockstep::sim::pg
