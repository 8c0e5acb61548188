// model/sql/numeric.h: numeric (exact decimal) and double precision, as PostgreSQL 15 reads,
// prints, compares, converts and computes them.
//
// numeric keeps its display scale (1.50 stays 1.50; a product's scale is the sum of its
// factors', a quotient's is select_div_scale's in numeric.c: at least 16 significant digits),
// rounds half away from zero, and is held as an integer of at most 38 digits and a scale
// (beyond that: refused, 0A000). NaN and Infinity as numeric are refused. double precision
// prints the shortest text that reads back (extra_float_digits 1, the default), in exponent
// form below 1e-4 and from 1e15, as float8out does; NaN and Infinity are values. Between the
// two and the integers, the server's implicit casts: integer op numeric is numeric, anything
// op double precision is double precision. exp() of numeric is computed in long double and
// rounded to the server's scale (the server's own digits are exact; the last may differ in
// rare cases).
#pragma once

#include <compare>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

inline bool is_numeric_category(Type t) { return is_integer(t) || t == Type::numeric || t == Type::float8; }

// The common type of two numeric-category types (GREATEST, ARRAY[...], CASE): double precision,
// else numeric, else the wider integer.
inline Type numeric_common_type(Type a, Type b) {
  if (a == Type::float8 || b == Type::float8) return Type::float8;
  if (a == Type::numeric || b == Type::numeric) return Type::numeric;
  if (a == Type::int8 || b == Type::int8) return Type::int8;
  if (a == Type::int4 || b == Type::int4) return Type::int4;
  return Type::int2;
}

// numeric_in / float8in: 22P02 on bad input, 22003 out of range.
Value numeric_input(std::string_view text);
Value float8_input(std::string_view text);
std::string float8_output(double v);

// A numeric value from an integer and a scale (value = unscaled / 10^scale).
Value numeric_of(__int128 unscaled, int scale);
// cast() among the integers, numeric, double precision (and to/from text via the inputs).
// REQUIRES: v not NULL, both types numeric-category, at least one numeric or float8.
Value numeric_cast(const Value& v, Type to);
// numeric(precision, scale): rounded to `scale`; 22003 numeric field overflow beyond precision.
Value numeric_with_typmod(const Value& v, int precision, int scale);

// + - * / % ^ between numeric-category values, at least one numeric or float8 (an unknown
// side already cast). 22012 division by zero, 22003 out of range.
bool is_numeric_operand(const Value& a, const Value& b);
Value numeric_arithmetic(std::string_view op, const Value& a, const Value& b);
Value numeric_negated(const Value& v);
std::strong_ordering numeric_compare(const Value& a, const Value& b);
double as_double(const Value& v);  // any numeric-category value

// abs, exp, ln, sqrt, power, floor, ceil, ceiling, round, trunc, sign, mod (of integers),
// to_timestamp.
bool is_math_function(std::string_view name);
Value math_function(std::string_view name, std::span<const Value> args);
// extract(field FROM ts | interval) (numeric) and date_part(field, ...) (double precision).
Value extract_field(const Value& field, const Value& source, bool as_float);
// random(): a double in [0, 1) from `seed` (the session's pid and its count of draws), so a
// replay draws the same values.
Value random_from_seed(std::uint64_t seed);
// sum() and avg() of numeric-category values (sum of integers is bigint; of bigint, numeric).
Value numeric_sum(std::span<const Value> values);
Value numeric_avg(std::span<const Value> values);

}  // namespace lockstep::sql
