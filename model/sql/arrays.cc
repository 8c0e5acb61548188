#include "lockstep/model/sql/arrays.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

// array_isspace: the whitespace array_in skips.
constexpr bool arr_array_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

[[noreturn]] void arr_malformed(std::string_view text) {
  throw SqlError("22P02", fmt::format("malformed array literal: \"{}\"", text));
}

std::string arr_element_name(ElementType e) {
  if (e.type == Type::record && e.enum_index >= 0) return std::string(row_type_name(record_definition(e.enum_index)));
  if (e.type == Type::enum_) {
    const Value probe = Value::enumeration(e.enum_index, 0, "");
    return enum_type_name(probe);
  }
  return std::string(type_name(e.type));
}

// array_out's quoting of one element's text.
void arr_append_element(std::string& out, const std::optional<std::string>& text) {
  if (!text) {
    out += "NULL";
    return;
  }
  const std::string& s = *text;
  bool quote = s.empty() || (s.size() == 4 && (s[0] == 'N' || s[0] == 'n') && (s[1] == 'U' || s[1] == 'u') &&
                             (s[2] == 'L' || s[2] == 'l') && (s[3] == 'L' || s[3] == 'l'));
  for (char c : s) {
    if (c == '"' || c == '\\' || c == '{' || c == '}' || c == ',' || arr_array_space(c)) quote = true;
  }
  if (!quote) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
}

std::string arr_array_text(const std::vector<std::optional<std::string>>& items) {
  std::string out = "{";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    arr_append_element(out, items[i]);
  }
  out += '}';
  return out;
}

// array_in's reading of one dimension: each element's text, nullopt for NULL.
std::vector<std::optional<std::string>> arr_split_elements(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && arr_array_space(text[i])) ++i;
  if (i < text.size() && text[i] == '[') {
    throw SqlError("0A000", fmt::format("array dimension decorations ({}) are not in lockstep's SQL subset", text));
  }
  if (i >= text.size() || text[i] != '{') arr_malformed(text);
  ++i;
  std::vector<std::optional<std::string>> out;
  while (i < text.size() && arr_array_space(text[i])) ++i;
  if (i < text.size() && text[i] == '}') {
    ++i;
  } else {
    for (;;) {
      while (i < text.size() && arr_array_space(text[i])) ++i;
      if (i >= text.size()) arr_malformed(text);
      if (text[i] == '{') throw SqlError("0A000", fmt::format("multidimensional arrays ({}) are not in lockstep's SQL subset", text));
      std::string item;
      bool quoted = false, escaped = false;
      if (text[i] == '"') {
        quoted = true;
        ++i;
        for (;;) {
          if (i >= text.size()) arr_malformed(text);
          const char c = text[i++];
          if (c == '"') break;
          if (c == '\\') {
            if (i >= text.size()) arr_malformed(text);
            item += text[i++];
          } else {
            item += c;
          }
        }
        while (i < text.size() && arr_array_space(text[i])) ++i;
      } else {
        std::size_t kept = 0;  // the length without trailing unescaped whitespace
        for (;;) {
          if (i >= text.size()) arr_malformed(text);
          const char c = text[i];
          if (c == ',' || c == '}') break;
          if (c == '{') arr_malformed(text);
          if (c == '"') {  // the server reads a quoted part inside an unquoted element: not modeled
            throw SqlError("0A000", fmt::format("a quoted part inside an unquoted array element ({}) is not in lockstep's SQL subset", text));
          }
          ++i;
          if (c == '\\') {
            if (i >= text.size()) arr_malformed(text);
            item += text[i++];
            escaped = true;
            kept = item.size();
          } else {
            item += c;
            if (!arr_array_space(c)) kept = item.size();
          }
        }
        item.resize(kept);
        if (item.empty()) arr_malformed(text);
      }
      if (i >= text.size() || (text[i] != ',' && text[i] != '}')) arr_malformed(text);
      const bool is_null = !quoted && !escaped && item.size() == 4 && (item[0] | 0x20) == 'n' && (item[1] | 0x20) == 'u' &&
                           (item[2] | 0x20) == 'l' && (item[3] | 0x20) == 'l';
      out.push_back(is_null ? std::nullopt : std::optional<std::string>(std::move(item)));
      if (text[i++] == '}') break;
    }
  }
  while (i < text.size() && arr_array_space(text[i])) ++i;
  if (i != text.size()) arr_malformed(text);
  return out;
}

// A NULL element of the type.
Value arr_null(ElementType e) { return e.type == Type::record && e.enum_index >= 0 ? Value::null_record(e.enum_index) : Value::null(e.type); }

Value arr_element_input(std::string_view text, ElementType e) {
  if (e.type == Type::enum_) return enum_input(e.enum_index, text);
  if (e.type == Type::record && e.enum_index >= 0) return cast_to_row_type(Value::unknown(std::string(text)), e.enum_index);
  return from_text(text, e.type);
}

Value arr_element_cast(const Value& v, ElementType e) {
  if (e.type == Type::record && e.enum_index >= 0) return cast_to_row_type(v, e.enum_index);
  if (e.type == Type::enum_) {
    if (v.is_null()) return Value::null(Type::enum_);
    if (v.type() == Type::enum_ && v.enum_type() == e.enum_index) return v;
    if (v.type() == Type::unknown || v.type() == Type::text) return enum_input(e.enum_index, v.as_text());
    throw SqlError("42846", fmt::format("cannot cast type {} to {}", type_name(v.type()), arr_element_name(e)));
  }
  return cast(v, e.type);
}

ElementType arr_element_of_value(const Value& v) {
  if (v.type() == Type::enum_) return {Type::enum_, v.enum_type()};
  if (v.type() == Type::record) return {Type::record, v.record_type()};
  return {v.type(), -1};
}

bool arr_same_element(ElementType a, ElementType b) {
  return a.type == b.type && ((a.type != Type::enum_ && a.type != Type::record) || a.enum_index == b.enum_index);
}

// Two arrays of one element type (an untyped side is read as the other's type). Integer
// arrays widen to the wider with `widen` (`||` and array_cat take anycompatiblearray; a sort,
// a grouping or a UNION compares values the server has coerced to one type); the operators
// = <> < @> && ... take anyarray, so int[] = bigint[] is 42883 there, as on the server.
std::pair<Value, Value> arr_matched(const Value& a, const Value& b, std::string_view op, bool widen) {
  if (a.type() == Type::array && b.type() == Type::array) {
    const ElementType ea = element_type(a), eb = element_type(b);
    if (arr_same_element(ea, eb)) return {a, b};
    if (ea.type == Type::unknown) return {cast_to_array(a, eb), b};
    if (eb.type == Type::unknown) return {a, cast_to_array(b, ea)};
    if (widen && is_integer(ea.type) && is_integer(eb.type)) {
      const Type wide = (ea.type == Type::int8 || eb.type == Type::int8) ? Type::int8 : (ea.type == Type::int4 || eb.type == Type::int4) ? Type::int4 : Type::int2;
      return {cast_to_array(a, {wide, -1}), cast_to_array(b, {wide, -1})};
    }
    throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", array_type_name(a), op, array_type_name(b)));
  }
  if (a.type() == Type::array) return {a, cast_to_array(b, element_type(a))};
  return {cast_to_array(a, element_type(b)), b};
}

std::optional<bool> arr_compared(std::string_view op, const Value& a, const Value& b) {
  if (a.is_null() || b.is_null()) return std::nullopt;
  const auto c = compare(a, b, op);
  if (op == "=") return c == 0;
  if (op == "<>") return c != 0;
  if (op == "<") return c < 0;
  if (op == "<=") return c <= 0;
  if (op == ">") return c > 0;
  if (op == ">=") return c >= 0;
  throw SqlError("0A000", fmt::format("the operator {} with ANY / ALL is not in lockstep's SQL subset", op));
}

bool arr_elements_equal(const Value& a, const Value& b) {
  if (a.is_null() || b.is_null()) return a.is_null() && b.is_null();
  return compare(a, b, "=") == 0;
}

bool arr_contains_all(const std::vector<Value>& big, const std::vector<Value>& small) {
  // array_contain_compare: NULL elements never match.
  return std::all_of(small.begin(), small.end(), [&](const Value& s) {
    return !s.is_null() && std::any_of(big.begin(), big.end(), [&](const Value& b) { return !b.is_null() && compare(b, s, "=") == 0; });
  });
}

Value arr_typed_array(const Value& v, ElementType hint) {
  if (v.type() == Type::array) return v;
  return cast_to_array(v, hint);
}

Value arr_integer_arg(const Value& v, std::string_view function) {
  const Value n = v.type() == Type::unknown ? cast(v, Type::int4) : v;
  if (!is_integer(n.type())) throw SqlError("42883", fmt::format("function {}(..., {}) does not exist", function, type_name(n.type())));
  return n;
}

}  // namespace

ElementType element_type(const Value& array) { return {array.array_element(), array.array_enum()}; }

ElementType declared_element(Type element, std::string_view user_type) {
  if (element != Type::enum_) return {element, -1};
  if (const int row = row_type_index(user_type); row >= 0) return {Type::record, row};
  const int index = enum_index(user_type);
  if (index < 0) throw SqlError("42704", fmt::format("type \"{}\" does not exist", user_type));
  return {Type::enum_, index};
}

Value make_array(ElementType element, const std::vector<Value>& elements) {
  std::vector<std::optional<std::string>> items;
  items.reserve(elements.size());
  for (const Value& e : elements) items.push_back(e.is_null() ? std::nullopt : std::optional<std::string>(e.text_output()));
  return Value::array(element.type, element.enum_index, arr_array_text(items));
}

std::vector<Value> array_elements(const Value& array) {
  const ElementType e = element_type(array);
  std::vector<Value> out;
  for (auto& item : arr_split_elements(array.payload())) {
    out.push_back(item ? arr_element_input(*item, e) : arr_null(e));
  }
  return out;
}

Value array_input(std::string_view text, ElementType element) {
  std::vector<Value> elements;
  for (auto& item : arr_split_elements(text)) elements.push_back(item ? arr_element_input(*item, element) : arr_null(element));
  return make_array(element, elements);
}

Value cast_to_array(const Value& v, ElementType element) {
  if (v.is_null()) return Value::null(Type::array);
  if (v.type() == Type::unknown || v.type() == Type::text) return array_input(v.as_text(), element);
  if (v.type() != Type::array) {
    throw SqlError("42846", fmt::format("cannot cast type {} to {}[]", type_name(v.type()), arr_element_name(element)));
  }
  if (arr_same_element(element_type(v), element)) return v;
  std::vector<Value> cast_elements;
  for (const Value& e : array_elements(v)) cast_elements.push_back(arr_element_cast(e, element));
  return make_array(element, cast_elements);
}

std::string array_display(const Value& array) {
  const ElementType e = element_type(array);
  const bool record = e.type == Type::record && e.enum_index >= 0;
  if (!record && e.type != Type::timestamptz && e.type != Type::timestamp && e.type != Type::interval && e.type != Type::date) return array.payload();
  std::vector<std::optional<std::string>> items;
  for (const Value& v : array_elements(array)) {
    if (v.is_null()) {
      items.push_back(std::nullopt);
    } else {
      items.push_back(record ? record_display(v) : display_text(v));
    }
  }
  return arr_array_text(items);
}

std::string array_type_name(const Value& array) { return arr_element_name(element_type(array)) + "[]"; }

Value array_constructor(const std::vector<Value>& elements) {
  ElementType common{Type::unknown, -1};
  for (const Value& v : elements) {
    if (v.type() == Type::unknown) continue;
    const ElementType e = arr_element_of_value(v);
    if (v.type() == Type::array) throw SqlError("0A000", "multidimensional arrays (ARRAY[] of arrays) are not in lockstep's SQL subset");
    if (common.type == Type::unknown || arr_same_element(common, e)) {
      common = e;
    } else if (is_numeric_category(common.type) && is_numeric_category(e.type)) {
      common.type = numeric_common_type(common.type, e.type);
    } else {
      throw SqlError("42804", fmt::format("ARRAY types {} and {} cannot be matched", arr_element_name(common), arr_element_name(e)));
    }
  }
  if (common.type == Type::unknown && !elements.empty()) common.type = Type::text;
  std::vector<Value> typed;
  typed.reserve(elements.size());
  for (const Value& v : elements) typed.push_back(arr_element_cast(v, common));
  return make_array(common, typed);
}

Value quantified(std::string_view op, bool all, const Value& x, const Value& array) {
  Value a = array;
  Value left = x;
  if (a.type() != Type::array && !a.is_null()) {
    if (a.type() != Type::unknown) {  // a text value is no array: the server's 42809 (a literal or $n is read as one)
      throw SqlError("42809", fmt::format("op ANY/ALL (array) requires array on right side"));
    }
    a = array_input(a.as_text(), left.type() == Type::unknown ? ElementType{Type::text, -1} : arr_element_of_value(left));
  }
  if (a.is_null()) return Value::null(Type::boolean);
  if (left.type() == Type::unknown && !left.is_null()) left = arr_element_cast(left, element_type(a));
  std::optional<bool> result = all;
  for (const Value& e : array_elements(a)) {
    const std::optional<bool> r = arr_compared(op, left, e);
    if (r && *r != all) return Value::boolean(!all);
    if (!r) result = std::nullopt;
  }
  return result ? Value::boolean(*result) : Value::null(Type::boolean);
}

bool is_array_operand(const Value& a, const Value& b) { return a.type() == Type::array || b.type() == Type::array; }

std::strong_ordering array_compare(const Value& a, const Value& b, std::string_view op) {
  const auto [x, y] = arr_matched(a, b, op, /*widen=*/true);
  const std::vector<Value> ex = array_elements(x), ey = array_elements(y);
  for (std::size_t i = 0; i < ex.size() && i < ey.size(); ++i) {
    if (ex[i].is_null() && ey[i].is_null()) continue;
    if (ex[i].is_null()) return std::strong_ordering::greater;  // NULLs sort after values
    if (ey[i].is_null()) return std::strong_ordering::less;
    const auto c = compare(ex[i], ey[i], op);
    if (c != 0) return c;
  }
  return ex.size() <=> ey.size();
}

Value array_operator(std::string_view op, const Value& a, const Value& b) {
  if (op == "||") {
    // array_cat, array_append, array_prepend; an untyped literal beside an array is an array.
    if (a.type() == Type::array && (b.type() == Type::array || b.type() == Type::unknown)) {
      if (b.is_null()) return a;
      return array_function("array_cat", {a, b});
    }
    if (b.type() == Type::array && a.type() == Type::unknown) {
      if (a.is_null()) return b;
      return array_function("array_cat", {a, b});
    }
    if (a.type() == Type::array) return array_function("array_append", {a, b});
    return array_function("array_prepend", {a, b});
  }
  if (a.is_null() || b.is_null()) return Value::null(Type::boolean);
  const auto [x, y] = arr_matched(a, b, op, /*widen=*/false);
  if (op == "@>" || op == "<@" || op == "&&") {
    const std::vector<Value> ex = array_elements(x), ey = array_elements(y);
    if (op == "@>") return Value::boolean(arr_contains_all(ex, ey));
    if (op == "<@") return Value::boolean(arr_contains_all(ey, ex));
    return Value::boolean(std::any_of(ex.begin(), ex.end(), [&](const Value& v) { return !v.is_null() && arr_contains_all(ey, {v}); }));
  }
  const std::optional<bool> r = [&]() -> std::optional<bool> {
    if (op == "=" || op == "<>") {
      const std::vector<Value> ex = array_elements(x), ey = array_elements(y);
      bool equal = ex.size() == ey.size();
      for (std::size_t i = 0; equal && i < ex.size(); ++i) equal = arr_elements_equal(ex[i], ey[i]);
      return op == "=" ? equal : !equal;
    }
    const auto c = array_compare(x, y, op);
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    if (op == ">=") return c >= 0;
    return std::nullopt;
  }();
  if (!r) throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", array_type_name(x), op, array_type_name(y)));
  return Value::boolean(*r);
}

Value array_subscript(const Value& array, const Value& index) {
  if (array.is_null()) return Value::null();
  if (array.type() != Type::array) {
    throw SqlError("42804", fmt::format("cannot subscript type {} because it does not support subscripting", type_name(array.type())));
  }
  const ElementType e = element_type(array);
  if (index.is_null()) return arr_null(e);
  const Value i = arr_integer_arg(index, "subscript");
  const std::vector<Value> elements = array_elements(array);
  if (i.as_integer() < 1 || i.as_integer() > static_cast<std::int64_t>(elements.size())) return arr_null(e);
  return elements[static_cast<std::size_t>(i.as_integer() - 1)];
}

Value array_slice(const Value& array, const std::optional<Value>& lower, const std::optional<Value>& upper) {
  if (array.is_null()) return Value::null(Type::array);
  if (array.type() != Type::array) {
    throw SqlError("42804", fmt::format("cannot subscript type {} because it does not support subscripting", type_name(array.type())));
  }
  if ((lower && lower->is_null()) || (upper && upper->is_null())) return Value::null(Type::array);
  const std::vector<Value> elements = array_elements(array);
  const auto n = static_cast<std::int64_t>(elements.size());
  const std::int64_t from = std::max<std::int64_t>(lower ? arr_integer_arg(*lower, "subscript").as_integer() : 1, 1);
  const std::int64_t to = std::min<std::int64_t>(upper ? arr_integer_arg(*upper, "subscript").as_integer() : n, n);
  std::vector<Value> out;
  for (std::int64_t i = from; i <= to; ++i) out.push_back(elements[static_cast<std::size_t>(i - 1)]);
  return make_array(element_type(array), out);
}

bool is_array_function(std::string_view name) {
  static constexpr std::string_view kNames[] = {"array_append", "array_prepend", "array_cat",   "array_remove",   "array_length",
                                                "cardinality",  "array_position", "array_to_string", "string_to_array", "array_ndims",
                                                "array_dims",   "array_upper",   "array_lower"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

Value array_function(std::string_view name, const std::vector<Value>& args) {
  if (name == "array_append" || name == "array_prepend") {
    const bool append = name == "array_append";
    const Value& arr = args.at(append ? 0 : 1);
    const Value& item = args.at(append ? 1 : 0);
    if (arr.type() != Type::array && !(arr.is_null() && arr.type() == Type::unknown)) {
      throw SqlError("42883", fmt::format("function {}({}, {}) does not exist", name, type_name(args[0].type()), type_name(args[1].type())));
    }
    const ElementType e = arr.type() == Type::array ? element_type(arr) : arr_element_of_value(item);
    std::vector<Value> elements = arr.is_null() ? std::vector<Value>{} : array_elements(arr);
    const Value typed = arr_element_cast(item, e);
    if (append) {
      elements.push_back(typed);
    } else {
      elements.insert(elements.begin(), typed);
    }
    return make_array(e, elements);
  }
  if (name == "array_cat") {
    if (args.at(0).is_null()) return args.at(1).type() == Type::unknown && !args[1].is_null() ? cast_to_array(args[1], {Type::text, -1}) : args[1];
    if (args.at(1).is_null()) return args[0].type() == Type::unknown ? cast_to_array(args[0], {Type::text, -1}) : args[0];
    const Value a = args[0].type() == Type::array ? args[0] : cast_to_array(args[0], element_type(args[1]));
    const auto [x, y] = arr_matched(a, args[1], "||", /*widen=*/true);
    std::vector<Value> elements = array_elements(x);
    for (Value& v : array_elements(y)) elements.push_back(std::move(v));
    return make_array(element_type(x), elements);
  }
  if (name == "string_to_array") {  // string_to_array(text, delimiter [, null_string])
    if (args.at(0).is_null()) return Value::null(Type::array);
    const std::string text = cast(args[0], Type::text).as_text();
    const std::optional<std::string> null_text =
        args.size() > 2 && !args[2].is_null() ? std::optional<std::string>(cast(args[2], Type::text).as_text()) : std::nullopt;
    std::vector<Value> parts;
    auto add = [&](std::string part) { parts.push_back(null_text && part == *null_text ? Value::null(Type::text) : Value::text(std::move(part))); };
    if (text.empty()) return make_array({Type::text, -1}, {});
    if (args.at(1).is_null()) {  // each character
      for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t n = std::min<std::size_t>(c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4, text.size() - i);
        add(text.substr(i, n));
        i += n;
      }
    } else {
      const std::string delimiter = cast(args[1], Type::text).as_text();
      if (delimiter.empty()) {
        add(text);
      } else {
        std::size_t from = 0;
        for (std::size_t at = text.find(delimiter); at != std::string::npos; at = text.find(delimiter, from)) {
          add(text.substr(from, at - from));
          from = at + delimiter.size();
        }
        add(text.substr(from));
      }
    }
    return make_array({Type::text, -1}, parts);
  }
  const bool text_result = name == "array_to_string" || name == "array_dims";
  if (args.at(0).is_null()) return Value::null(name == "array_remove" ? Type::array : text_result ? Type::text : Type::int4);
  const Value arr = arr_typed_array(args[0], {Type::text, -1});
  const std::vector<Value> elements = array_elements(arr);
  if (name == "cardinality") return Value::integer(static_cast<std::int64_t>(elements.size()), Type::int4);
  // One dimension, numbered from 1 (lockstep's arrays); an empty array has none.
  if (name == "array_ndims") return elements.empty() ? Value::null(Type::int4) : Value::integer(1, Type::int4);
  if (name == "array_dims") return elements.empty() ? Value::null(Type::text) : Value::text(fmt::format("[1:{}]", elements.size()));
  if (name == "array_upper" || name == "array_lower") {
    if (args.at(1).is_null()) return Value::null(Type::int4);
    const Value dim = arr_integer_arg(args[1], name);
    if (dim.as_integer() != 1 || elements.empty()) return Value::null(Type::int4);
    return Value::integer(name == "array_lower" ? 1 : static_cast<std::int64_t>(elements.size()), Type::int4);
  }
  if (name == "array_length") {
    if (args.at(1).is_null()) return Value::null(Type::int4);
    const Value dim = arr_integer_arg(args[1], "array_length");
    if (dim.as_integer() != 1 || elements.empty()) return Value::null(Type::int4);
    return Value::integer(static_cast<std::int64_t>(elements.size()), Type::int4);
  }
  if (name == "array_remove" || name == "array_position") {
    const Value item = args.at(1).is_null() ? args[1] : arr_element_cast(args[1], element_type(arr));
    if (name == "array_position") {  // from its third argument's position on, if given
      std::size_t from = 0;
      if (args.size() == 3) {
        if (args[2].is_null()) throw SqlError("22004", "initial position must not be null");
        from = static_cast<std::size_t>(std::max<std::int64_t>(1, cast(args[2], Type::int4).as_integer()) - 1);
      }
      for (std::size_t i = from; i < elements.size(); ++i) {
        if (arr_elements_equal(elements[i], item)) return Value::integer(static_cast<std::int64_t>(i + 1), Type::int4);
      }
      return Value::null(Type::int4);
    }
    std::vector<Value> kept;
    for (const Value& v : elements) {
      if (!arr_elements_equal(v, item)) kept.push_back(v);
    }
    return make_array(element_type(arr), kept);
  }
  if (name == "array_to_string") {
    if (args.at(1).is_null()) return Value::null(Type::text);
    const std::string delimiter = cast(args[1], Type::text).as_text();
    const std::optional<std::string> null_text =
        args.size() > 2 && !args[2].is_null() ? std::optional<std::string>(cast(args[2], Type::text).as_text()) : std::nullopt;
    std::string out;
    bool first = true;
    for (const Value& v : elements) {
      if (v.is_null() && !null_text) continue;
      if (!first) out += delimiter;
      first = false;
      out += v.is_null() ? *null_text : display_text(v);
    }
    return Value::text(out);
  }
  throw SqlError("42883", fmt::format("function {}() does not exist", name));
}

}  // namespace lockstep::sql
