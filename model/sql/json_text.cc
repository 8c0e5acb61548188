// model/sql/json_text.cc: json (not jsonb) values: its operators on the text as written, to_json
// and json_build_array (model/sql/json_text.h, jsonb.h).
#include "lockstep/model/sql/json_text.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/records.h"

namespace lockstep::sql {
namespace {

bool json_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Reads JSON text already validated by json's input function: each value as its span.
class JsonSpans {
 public:
  explicit JsonSpans(std::string_view s) : s_(s) {}
  void skip_space() {
    while (i_ < s_.size() && json_space(s_[i_])) ++i_;
  }
  char peek() {
    skip_space();
    return i_ < s_.size() ? s_[i_] : '\0';
  }
  void take(char c) {
    if (peek() == c) ++i_;
  }
  // The next value's text, read past.
  std::string_view value() {
    skip_space();
    const std::size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '"') {
      skip_string();
    } else if (i_ < s_.size() && (s_[i_] == '{' || s_[i_] == '[')) {
      int depth = 0;
      while (i_ < s_.size()) {
        const char c = s_[i_];
        if (c == '"') {
          skip_string();
          continue;
        }
        ++i_;
        if (c == '{' || c == '[') ++depth;
        if ((c == '}' || c == ']') && --depth == 0) break;
      }
    } else {
      while (i_ < s_.size() && !json_space(s_[i_]) && s_[i_] != ',' && s_[i_] != ']' && s_[i_] != '}') ++i_;
    }
    return s_.substr(start, i_ - start);
  }

 private:
  void skip_string() {
    ++i_;
    while (i_ < s_.size() && s_[i_] != '"') i_ += s_[i_] == '\\' ? 2 : 1;
    ++i_;
  }
  std::string_view s_;
  std::size_t i_ = 0;
};

// The elements of an array, or nullopt when the text is no array.
std::optional<std::vector<std::string_view>> json_elements(std::string_view text) {
  JsonSpans in(text);
  if (in.peek() != '[') return std::nullopt;
  in.take('[');
  std::vector<std::string_view> out;
  if (in.peek() == ']') return out;
  while (true) {
    out.push_back(in.value());
    if (in.peek() != ',') break;
    in.take(',');
  }
  return out;
}

// The value of `key` in an object (its last, when repeated), or nullopt.
std::optional<std::string_view> json_member(std::string_view text, std::string_view key) {
  JsonSpans in(text);
  if (in.peek() != '{') return std::nullopt;
  in.take('{');
  std::optional<std::string_view> found;
  while (in.peek() == '"') {
    const std::string_view name = in.value();
    in.take(':');
    const std::string_view value = in.value();
    if (jsonb_string_value(name) == key) found = value;
    if (in.peek() != ',') break;
    in.take(',');
  }
  return found;
}

// ->>'s text of a value: a string unescaped, null NULL, anything else as written.
Value json_text_of(std::string_view value) {
  if (value == "null") return Value::null(Type::text);
  if (!value.empty() && value.front() == '"') return Value::text(jsonb_string_value(value));
  return Value::text(std::string(value));
}

}  // namespace

Value json_operator(std::string_view op, const Value& a, const Value& b) {
  const std::string text = a.payload();
  std::optional<std::string_view> found;
  if (is_integer(b.type())) {
    if (const auto elements = json_elements(text)) {
      std::int64_t i = b.as_integer();
      const auto n = static_cast<std::int64_t>(elements->size());
      if (i < 0) i += n;
      if (i >= 0 && i < n) found = (*elements)[static_cast<std::size_t>(i)];
    }
  } else {
    found = json_member(text, cast(b, Type::text).as_text());
  }
  const bool as_text = op == "->>";
  if (!found) return Value::null(as_text ? Type::text : Type::json);
  return as_text ? json_text_of(*found) : Value::json(std::string(*found));
}

std::vector<std::vector<Value>> json_rows(std::string_view function, const Value& v) {
  std::vector<std::vector<Value>> out;
  if (v.is_null()) return out;
  const std::string text = cast(v, Type::json).payload();
  const auto elements = json_elements(text);
  if (!elements) {
    JsonSpans in(text);
    const bool object = in.peek() == '{';
    throw SqlError("22023", object ? fmt::format("cannot call {} on a non-array", function) : fmt::format("cannot call {} on a scalar", function));
  }
  const bool as_text = function.ends_with("_text");
  for (const std::string_view e : *elements) out.push_back({as_text ? json_text_of(e) : Value::json(std::string(e))});
  return out;
}

namespace {
// A value as to_json writes it: json as written, jsonb's text, a row as row_to_json, an array
// as array_to_json (its elements' json, comma-separated without spaces); enums and binary
// types refused (their json forms differ from jsonb's).
std::string json_text_of_value(const Value& v) {
  if (v.is_null()) return "null";
  if (v.type() == Type::json) return v.payload();
  if (v.type() == Type::record) return row_to_json(v).payload();
  if (v.type() == Type::array) {
    std::string out = "[";
    for (const Value& e : array_elements(v)) out += (out.size() == 1 ? "" : ",") + json_text_of_value(e);
    return out + "]";
  }
  if (v.type() == Type::enum_ || v.type() == Type::bytea || v.type() == Type::bit) {
    throw SqlError("0A000", fmt::format("to_json of a value of type {} is not in lockstep's SQL subset (to_jsonb's is)", type_name(v.type())));
  }
  return to_jsonb(v).jsonb_text();
}
}  // namespace

Value to_json(const Value& v) { return v.is_null() ? Value::null(Type::json) : Value::json(json_text_of_value(v)); }

Value json_build_array(const std::vector<Value>& args) {
  std::string out = "[";
  for (std::size_t i = 0; i < args.size(); ++i) out += (i == 0 ? "" : ", ") + json_text_of_value(args[i]);
  return Value::json(out + "]");
}

}  // namespace lockstep::sql
