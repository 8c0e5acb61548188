#include "lockstep/model/sql/casts.h"

#include <fmt/format.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/binary_types.h"
#include "lockstep/model/sql/datetime.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {

// A cast's value: to an enum, an array (of the cast's element type), bit(n) (padded or
// truncated, an integer's low bits), or another type as cast() does.
Value cast_value(const Expr& e, const Value& v) {
  if (e.type == Type::enum_) {  // text to an enum: explicitly, through the type's input; or to a row type
    if (const int row = row_type_index(e.name); row >= 0) return cast_to_row_type(v, row);
    if (v.type() == Type::text && !v.is_null()) return enum_input(e.name, v.as_text());
    return cast_to_column(v, e.type, e.name);
  }
  // varchar(n): an explicit cast keeps the first n characters.
  auto truncated = [&](const Value& text) {
    if (text.is_null() || e.typmod <= 0 || text.type() != Type::text) return text;
    const std::string& s = text.as_text();
    std::size_t at = 0;
    for (int chars = 0; at < s.size() && chars < e.typmod; ++chars) {
      ++at;
      while (at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) ++at;
    }
    return at < s.size() ? Value::text(s.substr(0, at)) : text;
  };
  if (e.type == Type::array) {
    const Value array = cast_to_array(v, declared_element(e.element, e.name));
    const bool each = e.typmod > 0 && (e.element == Type::text || e.element == Type::numeric);  // varchar(n)[], numeric(p, s)[]
    if (!each || array.is_null()) return array;
    std::vector<Value> elements = array_elements(array);
    for (Value& el : elements) {
      el = e.element == Type::text ? truncated(el)
                                   : numeric_with_typmod(el, e.typmod >> 16, static_cast<std::int16_t>(e.typmod & 0xffff));
    }
    return make_array(ElementType{e.element, -1}, elements);
  }
  if (e.type == Type::text && e.typmod > 0) return truncated(cast(v, Type::text));
  if (e.type == Type::bpchar && e.typmod > 0) return bpchar_with_length(v, e.typmod, true);
  if (e.type == Type::bit) {
    if (is_integer(v.type())) return integer_to_bit(v, e.typmod);
    return bit_resized(cast(v, Type::bit), e.typmod);
  }
  if (e.type == Type::numeric && e.typmod > 0) return numeric_with_typmod(cast(v, Type::numeric), e.typmod >> 16, static_cast<std::int16_t>(e.typmod & 0xffff));
  if (is_timestamp(e.type) && e.typmod >= 0) return with_time_precision(cast(v, e.type), e.typmod);
  return cast(v, e.type);
}

Value row_constructor_cast(const Expr& e, const std::vector<Value>& fields) {
  const int type = e.type == Type::enum_ ? row_type_index(e.name) : -1;
  if (type < 0 && e.type == Type::text && e.typmod <= 0) {  // ROW(...)::text: record_out's text, each field's output as the session prints it
    std::vector<std::optional<std::string>> texts;
    for (const Value& f : fields) texts.push_back(f.is_null() ? std::nullopt : std::optional<std::string>(display_text(f)));
    return Value::text(record_output(texts));
  }
  if (type < 0) {
    throw SqlError("42846", fmt::format("cannot cast type record to {}", e.type == Type::enum_ ? e.name : std::string(type_name(e.type))));
  }
  const CreateTable& def = record_definition(type);
  if (fields.size() != def.columns.size()) throw SqlError("42846", fmt::format("cannot cast type record to {}", def.table));
  // An explicit cast of the row casts each field explicitly (coerce_record_to_complex).
  std::vector<Value> row;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const ColumnDef& c = def.columns[i];
    Expr field;
    field.kind = Expr::Kind::cast;
    field.type = c.type;
    field.name = c.user_type;
    field.element = c.element;
    if (c.max_length > 0) field.typmod = c.max_length;
    if (c.bits > 0) field.typmod = c.bits;
    if (c.numeric_precision > 0) field.typmod = (c.numeric_precision << 16) | c.numeric_scale;
    if (c.time_precision >= 0) field.typmod = c.time_precision;
    row.push_back(fields[i].type() == Type::unknown && !fields[i].is_null() ? column_input(c, fields[i].as_text()) : cast_value(field, fields[i]));
  }
  return make_record(type, row);
}

}  // namespace lockstep::sql
