#include "lockstep/model/sql/value.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/binary_types.h"
#include "lockstep/model/sql/datetime.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// C's isspace in the "C" locale, which PostgreSQL's input functions use, without a call.
constexpr bool is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

[[noreturn]] void invalid_input(Type t, std::string_view text) {
  throw SqlError("22P02", fmt::format("invalid input syntax for type {}: \"{}\"", type_name(t), text));
}

std::string_view out_of_range_name(Type t) {
  return t == Type::int2 ? "smallint" : t == Type::int4 ? "integer" : "bigint";
}

std::int64_t check_range(std::int64_t v, Type t) {
  const bool ok = t == Type::int2   ? v >= std::numeric_limits<std::int16_t>::min() && v <= std::numeric_limits<std::int16_t>::max()
                  : t == Type::int4 ? v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max()
                                    : true;
  if (!ok) throw SqlError("22003", fmt::format("{} out of range", out_of_range_name(t)));
  return v;
}

std::int64_t parse_integer(std::string_view text, Type t) {
  const std::string_view s = trim(text);
  std::int64_t v = 0;
  const char* first = s.data();
  if (!s.empty() && s.front() == '+') ++first;
  const auto [end, ec] = std::from_chars(first, s.data() + s.size(), v);
  if (s.empty() || end != s.data() + s.size() || ec == std::errc::invalid_argument) invalid_input(t, text);
  if (ec == std::errc::result_out_of_range) {
    throw SqlError("22003", fmt::format("value \"{}\" is out of range for type {}", text, type_name(t)));
  }
  const bool fits = t == Type::int8 || (t == Type::int4 && v >= std::numeric_limits<std::int32_t>::min() &&
                                        v <= std::numeric_limits<std::int32_t>::max()) ||
                    (t == Type::int2 && v >= std::numeric_limits<std::int16_t>::min() && v <= std::numeric_limits<std::int16_t>::max());
  if (!fits) throw SqlError("22003", fmt::format("value \"{}\" is out of range for type {}", text, type_name(t)));
  return v;
}

bool parse_bool(std::string_view text) {
  const std::string s = lower(trim(text));
  auto prefix_of = [&](std::string_view word) { return !s.empty() && word.starts_with(s); };
  if (s == "1" || s == "on" || prefix_of("true") || prefix_of("yes")) return true;
  if (s == "0" || s == "of" || s == "off" || prefix_of("false") || prefix_of("no")) return false;
  invalid_input(Type::boolean, text);
}

}  // namespace

std::string bpchar_trimmed(std::string_view s) {
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return std::string(s);
}

Value bpchar_with_length(const Value& v, int n, bool explicit_cast) {
  if (v.is_null()) return v;
  const std::string s = cast(v, Type::bpchar).text_output();
  std::size_t at = 0;
  int chars = 0;
  for (; at < s.size() && chars < n; ++chars) {
    ++at;
    while (at < s.size() && (static_cast<unsigned char>(s[at]) & 0xC0) == 0x80) ++at;
  }
  if (at < s.size()) {
    if (!explicit_cast && s.find_first_not_of(' ', at) != std::string::npos) {
      throw SqlError("22001", fmt::format("value too long for type character({})", n));
    }
    return Value::bpchar(s.substr(0, at));
  }
  return Value::bpchar(s + std::string(static_cast<std::size_t>(n - chars), ' '));
}

std::string_view type_name(Type t) {
  switch (t) {
    case Type::unknown: return "unknown";
    case Type::int2: return "smallint";
    case Type::int4: return "integer";
    case Type::int8: return "bigint";
    case Type::text: return "text";
    case Type::boolean: return "boolean";
    case Type::timestamptz: return "timestamp with time zone";
    case Type::interval: return "interval";
    case Type::timestamp: return "timestamp without time zone";
    case Type::jsonb: return "jsonb";
    case Type::enum_: return "enum";
    case Type::array: return "array";
    case Type::uuid: return "uuid";
    case Type::bytea: return "bytea";
    case Type::bit: return "bit";
    case Type::json: return "json";
    case Type::numeric: return "numeric";
    case Type::float8: return "double precision";
    case Type::oid: return "oid";
    case Type::record: return "record";
    case Type::date: return "date";
    case Type::bpchar: return "character";
    case Type::time: return "time without time zone";
  }
  return "?";
}

std::optional<Type> type_of_name(std::string_view name) {
  static const std::initializer_list<std::pair<std::string_view, Type>> names = {
      {"int2", Type::int2},        {"smallint", Type::int2},     {"smallserial", Type::int2},   {"serial2", Type::int2},
      {"int4", Type::int4},        {"int", Type::int4},          {"integer", Type::int4},       {"serial", Type::int4},
      {"serial4", Type::int4},     {"int8", Type::int8},         {"bigint", Type::int8},        {"bigserial", Type::int8},
      {"serial8", Type::int8},     {"text", Type::text},         {"varchar", Type::text},       {"jsonb", Type::jsonb},
      {"bool", Type::boolean},     {"boolean", Type::boolean},   {"timestamptz", Type::timestamptz},
      {"interval", Type::interval}, {"timestamp", Type::timestamp}, {"uuid", Type::uuid},      {"bytea", Type::bytea},
      {"bit", Type::bit},          {"json", Type::json},         {"numeric", Type::numeric},    {"decimal", Type::numeric},
      {"float8", Type::float8},    {"float", Type::float8},      {"oid", Type::oid},         {"date", Type::date},         {"bpchar", Type::bpchar}, {"time", Type::time}};
  for (const auto& [n, t] : names) {
    if (n == name) return t;
  }
  return std::nullopt;
}

std::int64_t Value::as_integer() const {
  if (null_ || (!is_integer(type_) && type_ != Type::oid)) throw SqlError("XX000", "internal: not an integer value");
  return i_;
}
bool Value::as_bool() const {
  if (null_ || type_ != Type::boolean) throw SqlError("XX000", "internal: not a boolean value");
  return i_ != 0;
}
const std::string& Value::as_text() const {
  if (null_ || (type_ != Type::text && type_ != Type::unknown)) throw SqlError("XX000", "internal: not a text value");
  return s_;
}
const std::string& Value::jsonb_text() const {
  if (null_ || type_ != Type::jsonb) throw SqlError("XX000", "internal: not a jsonb value");
  return s_;
}
const std::string& Value::payload() const {
  if (null_ || (type_ != Type::array && type_ != Type::uuid && type_ != Type::bytea && type_ != Type::bit && type_ != Type::json &&
                 type_ != Type::numeric && type_ != Type::record)) {
    throw SqlError("XX000", "internal: not an array, uuid, bytea or bit value");
  }
  return s_;
}
std::int64_t Value::micros() const {
  if (null_ || (!is_timestamp(type_) && type_ != Type::interval && type_ != Type::date && type_ != Type::time)) throw SqlError("XX000", "internal: not a time value");
  return i_;
}
Interval Value::as_interval() const {
  if (null_ || type_ != Type::interval) throw SqlError("XX000", "internal: not an interval value");
  return Interval{i_, days_, months_};
}

std::string Value::text_output() && {
  if (!null_ && (type_ == Type::text || type_ == Type::unknown || type_ == Type::jsonb || type_ == Type::enum_ || type_ == Type::array ||
                 type_ == Type::uuid || type_ == Type::bit || type_ == Type::json)) {
    return std::move(s_);
  }
  return static_cast<const Value&>(*this).text_output();
}

std::string Value::text_output() const& {
  if (null_) return "";
  switch (type_) {
    case Type::unknown:
    case Type::text:
    case Type::jsonb:
    case Type::enum_:
    case Type::array:
    case Type::uuid:
    case Type::bit:
    case Type::json:
    case Type::numeric:
    case Type::record:
    case Type::bpchar: return s_;
    case Type::float8: return float8_output(as_float8());
    case Type::bytea: return bytea_output(s_);
    case Type::int2:
    case Type::int4:
    case Type::int8:
    case Type::oid: return std::to_string(i_);
    case Type::boolean: return i_ != 0 ? "t" : "f";
    case Type::interval: return interval_text(as_interval());
    case Type::timestamptz: return timestamp_text(i_, true);
    case Type::timestamp: return timestamp_text(i_, false);
    case Type::date: return date_text(i_);
    case Type::time: return time_text(i_);
  }
  return s_;
}

std::int64_t parse_interval(std::string_view text) {
  const __int128 span = interval_span(parse_interval_text(text));
  if (span > std::numeric_limits<std::int64_t>::max() || span < std::numeric_limits<std::int64_t>::min()) {
    throw SqlError("22008", "interval out of range");
  }
  return static_cast<std::int64_t>(span);
}

std::int64_t parse_timestamptz(std::string_view text) { return parse_timestamp(text, true); }

Value with_time_precision(const Value& v, int precision) {
  if (v.is_null() || !is_timestamp(v.type())) return v;
  const std::int64_t rounded = timestamp_with_precision(v.micros(), precision);
  return v.type() == Type::timestamp ? Value::timestamp(rounded) : Value::timestamptz(rounded);
}

Value cast(const Value& v, Type to) {
  if (v.is_null()) return Value::null(to);
  const Type from = v.type();
  if (from == to) return v;
  if (to == Type::unknown) return v;
  if (from == Type::enum_ && to == Type::text) return Value::text(v.text_output());
  if (from == Type::array && to == Type::text) return Value::text(array_display(v));
  if (from == Type::json && to == Type::jsonb) return Value::jsonb(jsonb_canonical(v.payload()));
  if (from == Type::json && to == Type::text) return Value::text(v.payload());
  if (from == Type::jsonb && to == Type::json) return Value::json(v.jsonb_text());
  if (from == Type::unknown || from == Type::text) return from_text(v.as_text(), to);
  if (from == Type::bpchar) return cast(Value::text(bpchar_trimmed(v.text_output())), to);  // its text without the padding
  if (to == Type::bpchar) return Value::bpchar(cast(v, Type::text).as_text());
  if (from == Type::bit && (to == Type::int4 || to == Type::int8)) return bit_to_integer(v, to);
  if (to == Type::oid && (from == Type::int2 || from == Type::int4)) return Value::integer(static_cast<std::uint32_t>(v.as_integer()), Type::oid);
  if (to == Type::oid && from == Type::int8) {
    if (v.as_integer() < 0 || v.as_integer() > 4294967295LL) throw SqlError("22003", "OID out of range");
    return Value::integer(v.as_integer(), Type::oid);
  }
  if (from == Type::oid && to == Type::int4) return Value::integer(static_cast<std::int32_t>(static_cast<std::uint32_t>(v.as_integer())), Type::int4);
  if (from == Type::oid && to == Type::int8) return Value::integer(v.as_integer(), Type::int8);
  if (from == Type::jsonb && (is_numeric_category(to) || to == Type::boolean)) {  // jsonb_int4, jsonb_bool, ...: a scalar of the kind
    const std::string& j = v.jsonb_text();
    const char c = j.empty() ? 'n' : j[0];
    const std::string_view kind = c == '"' ? "string" : c == '[' ? "array" : c == '{' ? "object" : c == 'n' ? "null" : c == 't' || c == 'f' ? "boolean" : "numeric";
    if ((to == Type::boolean) != (kind == "boolean") || (kind != "numeric" && kind != "boolean")) {
      throw SqlError("22023", fmt::format("cannot cast jsonb {} to type {}", kind, type_name(to)));
    }
    return to == Type::boolean ? Value::boolean(c == 't') : numeric_cast(from_text(j, Type::numeric), to);
  }
  if (is_integer(from) && is_integer(to)) return Value::integer(check_range(v.as_integer(), to), to);
  if (is_numeric_category(from) && is_numeric_category(to)) return numeric_cast(v, to);  // model/sql/numeric.h
  if (to == Type::text) return Value::text(from == Type::boolean ? (v.as_bool() ? "true" : "false") : display_text(v));
  if (from == Type::int4 && to == Type::boolean) return Value::boolean(v.as_integer() != 0);
  if (from == Type::boolean && to == Type::int4) return Value::integer(v.as_bool() ? 1 : 0, Type::int4);
  // A timestamp is the session zone's wall clock (model/sql/session_style.h).
  if (from == Type::timestamp && to == Type::timestamptz) return Value::timestamptz(utc_of_local(v.micros()));
  if (from == Type::timestamptz && to == Type::timestamp) return Value::timestamp(local_of_utc(v.micros()));
  // A date is its midnight; a time's date is the local calendar's.
  if (from == Type::date && to == Type::timestamp) return Value::timestamp(v.micros());
  if (from == Type::date && to == Type::timestamptz) return Value::timestamptz(utc_of_local(v.micros()));
  if (from == Type::timestamp && to == Type::date) return Value::date(date_of(v.micros()));
  if (from == Type::timestamptz && to == Type::date) return Value::date(date_of(local_of_utc(v.micros())));
  // A time's time of day is its wall clock's (infinity has none: 22008).
  if ((from == Type::timestamp || from == Type::timestamptz) && to == Type::time) {
    if (is_infinite_timestamp(v.micros())) throw SqlError("22008", "timestamp out of range");
    const std::int64_t wall = from == Type::timestamptz ? local_of_utc(v.micros()) : v.micros();
    return Value::time_of_day(wall - date_of(wall));
  }
  if (from == Type::interval && to == Type::time) {  // interval_time: its clock part, within a day
    constexpr std::int64_t kDay = 86'400'000'000;
    return Value::time_of_day(((v.as_interval().micros % kDay) + kDay) % kDay);
  }
  throw SqlError("42846", fmt::format("cannot cast type {} to {}", type_name(from), type_name(to)));
}

Value from_text(std::string_view s, Type to) {
  switch (to) {
    case Type::int2:
    case Type::int4:
    case Type::int8: return Value::integer(parse_integer(s, to), to);
    case Type::text: return Value::text(std::string(s));
    case Type::boolean: return Value::boolean(parse_bool(s));
    case Type::timestamptz: return Value::timestamptz(parse_timestamp(s, true));
    case Type::timestamp: return Value::timestamp(parse_timestamp(s, false));
    case Type::date: return Value::date(parse_date(s));
    case Type::time: return Value::time_of_day(parse_time(s));
    case Type::bpchar: return Value::bpchar(std::string(s));
    case Type::interval: return Value::interval(parse_interval_text(s));
    case Type::jsonb: return Value::jsonb(jsonb_canonical(s));
    case Type::enum_: throw SqlError("0A000", "an untyped literal read as an enum of no known type is not in lockstep's SQL subset");
    case Type::array: throw SqlError("XX000", "internal: an array read without its element type (model/sql/arrays.h)");
    case Type::uuid: return uuid_input(s);
    case Type::bytea: return bytea_input(s);
    case Type::bit: return bit_input(s);
    case Type::json: {
      (void)jsonb_canonical(s);  // json_in: valid JSON (22P02 otherwise), kept as written
      return Value::json(std::string(s));
    }
    case Type::numeric: return numeric_input(s);
    case Type::float8: return float8_input(s);
    case Type::record: throw SqlError("0A000", "a row value read from text (a record literal) is not in lockstep's SQL subset");
    case Type::oid: {  // oidin: -2147483648 to 4294967295, a negative one wrapped
      std::int64_t n = 0;
      try {
        n = parse_integer(s, Type::int8);
      } catch (const SqlError& e) {
        if (e.sqlstate() == "22003") throw SqlError("22003", fmt::format("value \"{}\" is out of range for type oid", s));
        throw SqlError("22P02", fmt::format("invalid input syntax for type oid: \"{}\"", s));
      }
      if (n < -2147483648LL || n > 4294967295LL) throw SqlError("22003", fmt::format("value \"{}\" is out of range for type oid", s));
      return Value::integer(n < 0 ? n + 4294967296LL : n, Type::oid);
    }
    case Type::unknown: return Value::unknown(std::string(s));
  }
  return Value::unknown(std::string(s));
}

std::strong_ordering compare(const Value& a, const Value& b, std::string_view op) {
  Type ta = a.type(), tb = b.type();
  if (ta == Type::record && tb == Type::record && !a.is_null() && !b.is_null() && a.record_type() == b.record_type()) {
    // Two values of one row type (record_eq, record_lt): field by field, a NULL field equal to
    // a NULL and above any value (not the row constructors' comparison, which is NULL there).
    const std::vector<Value> fa = record_fields(a), fb = record_fields(b);
    for (std::size_t i = 0; i < fa.size() && i < fb.size(); ++i) {
      if (fa[i].is_null() || fb[i].is_null()) {
        if (fa[i].is_null() != fb[i].is_null()) return fa[i].is_null() ? std::strong_ordering::greater : std::strong_ordering::less;
        continue;
      }
      if (const std::strong_ordering c = compare(fa[i], fb[i], op); c != 0) return c;
    }
    return fa.size() <=> fb.size();
  }
  if (ta == Type::record || tb == Type::record) {  // rows of other types (or an untyped literal): not modelled
    throw SqlError("0A000", fmt::format("comparing row values ({} {} {}) is not in lockstep's SQL subset (docs/sql.md)", type_name(ta), op, type_name(tb)));
  }
  if (ta == Type::enum_ || tb == Type::enum_) {  // by declaration order; an untyped literal is a label of the other's type
    if (ta == Type::unknown) return compare(enum_input(b.enum_type(), a.as_text()), b, op);
    if (tb == Type::unknown) return compare(a, enum_input(a.enum_type(), b.as_text()), op);
    if (ta != tb || a.enum_type() != b.enum_type()) {
      auto name = [](const Value& v) { return v.type() == Type::enum_ ? enum_type_name(v) : std::string(type_name(v.type())); };
      throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", name(a), op, name(b)));
    }
    return a.enum_position() <=> b.enum_position();
  }
  if (ta == Type::array || tb == Type::array) return array_compare(a, b, op);
  if ((ta == Type::bpchar || tb == Type::bpchar) && (ta == Type::bpchar || ta == Type::unknown || ta == Type::text) &&
      (tb == Type::bpchar || tb == Type::unknown || tb == Type::text)) {
    // bpchar = bpchar (or an untyped literal) ignores trailing blanks; beside text the server
    // compares as text, the bpchar's blanks dropped and the text's kept.
    const bool as_text = ta == Type::text || tb == Type::text;
    auto side = [&](const Value& v) { return v.type() == Type::text && as_text ? v.as_text() : bpchar_trimmed(v.text_output()); };
    return side(a).compare(side(b)) <=> 0;
  }
  if (ta == Type::json || tb == Type::json) {  // json has no comparison operators (jsonb has)
    throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", type_name(ta == Type::unknown ? tb : ta), op, type_name(tb == Type::unknown ? ta : tb)));
  }
  if (ta == Type::unknown && tb == Type::unknown) return a.as_text() <=> b.as_text();
  if (ta == Type::unknown) return compare(cast(a, tb), b, op);
  if (tb == Type::unknown) return compare(a, cast(b, ta), op);
  if (is_integer(ta) && is_integer(tb)) return a.as_integer() <=> b.as_integer();
  if ((ta == Type::oid && (tb == Type::oid || is_integer(tb))) || (tb == Type::oid && is_integer(ta))) {
    return cast(a, Type::oid).as_integer() <=> cast(b, Type::oid).as_integer();  // the integer read as an oid
  }
  if (is_numeric_operand(a, b)) return numeric_compare(a, b);
  if ((is_timestamp(ta) || ta == Type::date) && (is_timestamp(tb) || tb == Type::date)) {  // a timestamp beside a timestamptz is local time
    if (ta == tb || (ta != Type::timestamptz && tb != Type::timestamptz)) return a.micros() <=> b.micros();  // a date is its midnight
    return cast(a, Type::timestamptz).micros() <=> cast(b, Type::timestamptz).micros();
  }
  if (ta != tb) throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", type_name(ta), op, type_name(tb)));
  switch (ta) {
    case Type::text: return a.as_text().compare(b.as_text()) <=> 0;
    case Type::boolean: return a.as_bool() <=> b.as_bool();
    case Type::timestamptz:
    case Type::timestamp:
    case Type::time: return a.micros() <=> b.micros();
    case Type::interval: return interval_span(a.as_interval()) <=> interval_span(b.as_interval());
    case Type::uuid:
    case Type::bytea:
    case Type::bit: return a.payload().compare(b.payload()) <=> 0;  // bytes unsigned; bit strings digit by digit, then length
    case Type::jsonb:
      if (op == "=" || op == "<>") return jsonb_equal(a.jsonb_text(), b.jsonb_text()) ? std::strong_ordering::equal : a.jsonb_text() <=> b.jsonb_text();
      return jsonb_order(a.jsonb_text(), b.jsonb_text());
    default: break;
  }
  throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", type_name(ta), op, type_name(tb)));
}

}  // namespace lockstep::sql
