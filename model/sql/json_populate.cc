#include "lockstep/model/sql/json_populate.h"

#include <fmt/format.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/json_text.h"
#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/records.h"

namespace lockstep::sql {
namespace {

bool jp_binary(const Value& v) { return v.type() == Type::jsonb; }

// The JSON value's kind: "object", "array", "string", "number", "boolean" or "null".
std::string jp_kind(const Value& v) { return jsonb_typeof(jp_binary(v) ? v : cast(v, Type::jsonb)).text_output(); }

Value jp_array(const Value& field, const ColumnDef& c) {
  const bool binary = jp_binary(field);
  const std::vector<std::vector<Value>> values = binary ? jsonb_rows("jsonb_array_elements", field) : json_rows("json_array_elements", field);
  const std::vector<std::vector<Value>> texts =
      binary ? jsonb_rows("jsonb_array_elements_text", field) : json_rows("json_array_elements_text", field);
  if (values.size() != texts.size()) throw SqlError("XX000", "internal: a JSON array's elements and their texts differ in number");
  const ElementType element = declared_element(c.element, c.user_type);
  std::vector<Value> elements;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string kind = jp_kind(values[i].at(0));
    if (kind == "null") {
      elements.push_back(Value::null(c.element));
      continue;
    }
    if (kind == "array") {
      throw SqlError("0A000", fmt::format("a multidimensional array from JSON (column {}) is not in lockstep's SQL subset (docs/sql.md)", c.name));
    }
    // A string's contents; another value's JSON text (an object as written in json).
    const std::string text = kind == "string" ? texts[i].at(0).as_text() : values[i].at(0).text_output();
    elements.push_back(c.element == Type::enum_ ? enum_input(element.enum_index, text) : from_text(text, c.element));
  }
  return make_array(element, elements);
}

}  // namespace

bool is_json_populate(std::string_view name) {
  return name == "json_populate_record" || name == "jsonb_populate_record" || name == "json_populate_recordset" ||
         name == "jsonb_populate_recordset";
}

std::vector<Value> json_object_row(const Value& object, const std::vector<ColumnDef>& columns, const std::vector<Value>& base,
                                   const ColumnInput& input) {
  const bool binary = jp_binary(object);
  std::vector<Value> row;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const ColumnDef& c = columns[i];
    const Value field = binary ? jsonb_operator("->", object, Value::text(c.name)) : json_operator("->", object, Value::text(c.name));
    if (field.is_null()) {  // absent: the base row's field
      row.push_back(i < base.size() ? base[i] : Value::null(c.type));
      continue;
    }
    const std::string kind = jp_kind(field);
    if (kind == "null") {
      row.push_back(Value::null(c.type));
      continue;
    }
    if (c.type == Type::json || c.type == Type::jsonb) {
      row.push_back(input(Value::unknown(field.text_output()), c));
    } else if (c.type == Type::array && kind == "array") {
      row.push_back(jp_array(field, c));
    } else if (c.type == Type::array && kind != "string") {
      throw SqlError("22P02", "expected JSON array");
    } else {
      const Value contents = binary ? jsonb_operator("->>", object, Value::text(c.name)) : json_operator("->>", object, Value::text(c.name));
      row.push_back(input(Value::unknown(kind == "string" ? contents.as_text() : field.text_output()), c));
    }
  }
  return row;
}

std::vector<std::vector<Value>> json_array_rows(std::string_view function, const Value& array, const std::vector<ColumnDef>& columns,
                                                const std::vector<Value>& base, const ColumnInput& input) {
  std::vector<std::vector<Value>> out;
  if (array.is_null()) return out;
  const bool binary = function.starts_with("jsonb");
  const Value j = cast(array, binary ? Type::jsonb : Type::json);
  const std::string kind = jp_kind(j);
  if (kind != "array") throw SqlError("22023", fmt::format("cannot call {} on {}", function, kind == "object" ? "an object" : "a scalar"));
  for (const std::vector<Value>& element : binary ? jsonb_rows("jsonb_array_elements", j) : json_rows("json_array_elements", j)) {
    if (jp_kind(element.at(0)) != "object") throw SqlError("22023", fmt::format("argument of {} must be an array of objects", function));
    out.push_back(json_object_row(element.at(0), columns, base, input));
  }
  return out;
}

std::vector<Value> json_populate_row(const Value& object, const std::vector<ColumnDef>& columns, const std::vector<Value>& base,
                                     const ColumnInput& input) {
  if (object.is_null()) {
    std::vector<Value> row;
    for (std::size_t i = 0; i < columns.size(); ++i) row.push_back(i < base.size() ? base[i] : Value::null(columns[i].type));
    return row;
  }
  const std::string kind = jp_kind(object);
  if (kind != "object") throw SqlError("22023", fmt::format("cannot call populate_composite on {}", kind == "array" ? "an array" : "a scalar"));
  return json_object_row(object, columns, base, input);
}

Value json_populate_record_value(std::string_view function, const Value& base, const Value& object) {
  if (base.type() != Type::record) throw SqlError("42804", fmt::format("first argument of {} must be a row type", function));
  const std::vector<ColumnDef>& columns = record_definition(base.record_type()).columns;
  const Value j = object.is_null() ? object : cast(object, function.starts_with("jsonb") ? Type::jsonb : Type::json);
  const ColumnInput input = [](Value text, const ColumnDef& c) { return column_input(c, text.as_text()); };
  return make_record(base.record_type(), json_populate_row(j, columns, base.is_null() ? std::vector<Value>{} : record_fields(base), input));
}

}  // namespace lockstep::sql
