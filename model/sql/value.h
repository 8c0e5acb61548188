// model/sql/value.h: the values of lockstep's SQL subset, as PostgreSQL 15 types and prints them.
//
// Types: smallint, integer and bigint (serial and bigserial are their sequences' columns),
// text (text, varchar), jsonb (its canonical text: model/sql/jsonb.h), boolean, timestamptz, timestamp (without
// time zone; model/sql/datetime.h has their input and output), interval, enums
// (model/sql/enums.h), one-dimensional arrays (model/sql/arrays.h), uuid, bytea and bit(n)
// (model/sql/binary_types.h), numeric and double precision (model/sql/numeric.h). A value
// is one of those or NULL; `unknown` is an untyped string literal until context types it,
// as in PostgreSQL. Timestamps are microseconds of virtual time from 2000-01-01 00:00:00
// UTC (PostgreSQL's own epoch), so a run's time 0 prints as that instant; intervals are
// months, days and microseconds (model/sql/interval.h). Text output is PostgreSQL's (t/f, ISO
// timestamps with TimeZone UTC, intervals in IntervalStyle postgres). Conversions that fail raise SqlError with the
// server's SQLSTATE and message (22P02 invalid input syntax, 22003 out of range, 22012
// division by zero).
#pragma once

#include <bit>
#include <compare>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "lockstep/model/sql/interval.h"

namespace lockstep::sql {

// An error the server would raise: its SQLSTATE and message.
class SqlError : public std::runtime_error {
 public:
  SqlError(std::string sqlstate, const std::string& message) : std::runtime_error(message), sqlstate_(std::move(sqlstate)) {}
  const std::string& sqlstate() const { return sqlstate_; }

 private:
  std::string sqlstate_;
};

// oid: an unsigned 32-bit object id (pg_locks' classid, objid): an integer beside it is read as
// one (int4 wrapping, as the server's binary-coercible cast), no arithmetic. record: a table's
// row as one value (a whole-row reference: model/sql/records.h). date: the wall clock's
// midnight in microseconds from 2000-01-01, as a timestamp (infinities alike). bpchar:
// char(n), its text blank-padded; trailing blanks insignificant in comparisons and dropped
// when it becomes text. time: without time zone, microseconds from midnight (0 to 24:00:00).
enum class Type : std::uint8_t { unknown, int2, int4, int8, text, boolean, timestamptz, interval, timestamp, jsonb, enum_, array, uuid, bytea, bit, json, numeric, float8, oid, record, date, bpchar, time };

inline bool is_timestamp(Type t) { return t == Type::timestamptz || t == Type::timestamp; }
// A timestamp or a time of day: an untyped literal beside one in + or - is an interval.
inline bool is_time_of(Type t) { return is_timestamp(t) || t == Type::time; }

inline bool is_integer(Type t) { return t == Type::int2 || t == Type::int4 || t == Type::int8; }

// A char(n) value's text without its trailing blanks (bpchar's comparisons and its cast to text).
std::string bpchar_trimmed(std::string_view s);

std::string_view type_name(Type t);  // as PostgreSQL names it in messages ("bigint", "text", ...)
// The type a declared type name stands for (int, int4, bigint, serial, varchar, ...), or nullopt.
std::optional<Type> type_of_name(std::string_view name);

class Value {
 public:
  Value() = default;  // NULL of unknown type
  static Value null(Type t = Type::unknown) { return Value(t, true, 0, {}); }
  static Value integer(std::int64_t v, Type t = Type::int8) { return Value(t, false, v, {}); }
  static Value text(std::string s) { return Value(Type::text, false, 0, std::move(s)); }
  static Value unknown(std::string s) { return Value(Type::unknown, false, 0, std::move(s)); }
  static Value bpchar(std::string s) { return Value(Type::bpchar, false, 0, std::move(s)); }
  static Value boolean(bool b) { return Value(Type::boolean, false, b ? 1 : 0, {}); }
  static Value timestamptz(std::int64_t micros) { return Value(Type::timestamptz, false, micros, {}); }
  static Value interval(std::int64_t micros) { return Value(Type::interval, false, micros, {}); }
  static Value interval(const Interval& iv) {
    Value v(Type::interval, false, iv.micros, {});
    v.days_ = iv.days;
    v.months_ = iv.months;
    return v;
  }
  static Value timestamp(std::int64_t micros) { return Value(Type::timestamp, false, micros, {}); }
  static Value date(std::int64_t midnight_micros) { return Value(Type::date, false, midnight_micros, {}); }
  static Value time_of_day(std::int64_t micros) { return Value(Type::time, false, micros, {}); }
  // A label of enum type `type` (its index among the server's: model/sql/enums.h) at `position`.
  static Value enumeration(int type, int position, std::string label) {
    Value v(Type::enum_, false, position, std::move(label));
    v.days_ = type;
    return v;
  }
  static Value jsonb(std::string canonical) { return Value(Type::jsonb, false, 0, std::move(canonical)); }  // model/sql/jsonb.h
  // An array of `element` (enum elements: of enum type `enum_index`) by its canonical text (model/sql/arrays.h).
  static Value array(Type element, int enum_index, std::string canonical) {
    Value v(Type::array, false, 0, std::move(canonical));
    v.days_ = static_cast<std::int32_t>(element);
    v.months_ = enum_index;
    return v;
  }
  // uuid (its canonical text), bytea (its bytes), bit(n) (its digits): model/sql/binary_types.h.
  static Value uuid(std::string canonical) { return Value(Type::uuid, false, 0, std::move(canonical)); }
  static Value bytea(std::string bytes) { return Value(Type::bytea, false, 0, std::move(bytes)); }
  static Value bit(std::string digits) { return Value(Type::bit, false, 0, std::move(digits)); }
  // json: its text as given (the server keeps json as written; jsonb is model/sql/jsonb.h).
  static Value json(std::string text) { return Value(Type::json, false, 0, std::move(text)); }
  // numeric: its text at its display scale ("2.50"); double precision: the double (model/sql/numeric.h).
  static Value numeric(std::string text) { return Value(Type::numeric, false, 0, std::move(text)); }
  static Value float8(double d) { return Value(Type::float8, false, std::bit_cast<std::int64_t>(d), {}); }
  // A row of record type `type` (the server's: SqlContextSource::record_type) by its text as
  // record_out prints it; and a NULL of that type (a scalar subquery's row when it has none).
  static Value record(int type, std::string text) {
    Value v(Type::record, false, 0, std::move(text));
    v.days_ = type;
    return v;
  }
  static Value null_record(int type) {
    Value v(Type::record, true, 0, {});
    v.days_ = type;
    return v;
  }

  Type type() const { return type_; }
  bool is_null() const { return null_; }
  // REQUIRES: not NULL and of that type.
  std::int64_t as_integer() const;
  bool as_bool() const;
  const std::string& as_text() const;
  const std::string& jsonb_text() const;
  int enum_type() const { return days_; }          // REQUIRES: an enum value
  int record_type() const { return days_; }        // REQUIRES: a record value (NULL too)
  Type array_element() const { return static_cast<Type>(days_); }  // REQUIRES: an array
  int array_enum() const { return months_; }                        // ... its elements' enum type, or -1
  // The text an array, uuid, bytea, bit or json value keeps (see their factories).
  const std::string& payload() const;
  double as_float8() const { return std::bit_cast<double>(i_); }  // REQUIRES: a float8 value
  std::int64_t enum_position() const { return i_; }  // the canonical text of a jsonb value
  std::int64_t micros() const;  // timestamptz, timestamp, or an interval's time part
  Interval as_interval() const;

  // As PostgreSQL's text output prints it; NULL is "" (callers show it as they need).
  std::string text_output() const&;
  std::string text_output() &&;  // the same, moving a text value's string out

  friend bool operator==(const Value&, const Value&) = default;

 private:
  Value(Type t, bool null, std::int64_t i, std::string s) : type_(t), null_(null), i_(i), s_(std::move(s)) {}
  Type type_ = Type::unknown;
  bool null_ = true;
  std::int32_t days_ = 0;  // an interval's days and months (its time is i_); an enum's type
  std::int64_t i_ = 0;
  std::string s_;
  std::int32_t months_ = 0;
};

// The value converted to `to` as a cast or an assignment does (an unknown literal parsed as
// that type's input). Throws SqlError (22P02, 22003, or 42846 "cannot cast type X to Y").
// v (char(n)) padded with blanks to n characters, or cut to n: an explicit cast cuts, an
// assignment cuts blanks only (22001 value too long for type character(n) otherwise).
Value bpchar_with_length(const Value& v, int n, bool explicit_cast);
Value cast(const Value& v, Type to);

// A timestamp or timestamptz as timestamp(p) keeps it (datetime.h's timestamp_with_precision);
// NULL and other types as they are.
Value with_time_precision(const Value& v, int precision);
// Text read as a value of type `to` (the type's input function: what cast() does to an
// unknown literal), without copying it first.
Value from_text(std::string_view text, Type to);

// SQL comparison of two non-NULL values of one comparable type (after casting an unknown
// side to the other's type). Throws SqlError 42883 "operator does not exist: X op Y" for
// types with no such operator (`op` names it).
std::strong_ordering compare(const Value& a, const Value& b, std::string_view op = "=");

// An interval's text ('1 ms', '5 seconds', '00:00:05', '2 minutes 3 s', '1 day') as a duration
// in microseconds (a day 24 hours, a month 30 days); throws SqlError 22007 when it is not one.
std::int64_t parse_interval(std::string_view text);
// A timestamptz literal ('2000-01-01 00:00:01+00', ISO) in microseconds since 2000-01-01 UTC.
std::int64_t parse_timestamptz(std::string_view text);

}  // namespace lockstep::sql
