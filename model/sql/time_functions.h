// model/sql/time_functions.h: age() and to_char() of times, as PostgreSQL 15 computes them.
//
// age(a, b) is timestamp_age: the field-by-field difference of the two wall clocks (a
// timestamptz's in the session zone), negative fields borrowed from the next larger one, a
// month borrowed as the days of the earlier time's month; years and months, days and a time.
// to_char(time, format) is formatting.c's DCH output for the patterns the subset knows
// (YYYY YYY YY Y, MM, Month Mon, DD DDD D, Day Dy, HH HH12 HH24, MI, SS, MS, US, AM PM, FM,
// "quoted text"); any other letter outside quotes, and a backslash, is refused (0A000) rather
// than printed as written, since the server may read it as a pattern. Infinite times are refused.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// age(a, b) of two timestamps or two timestamptz values (an untyped side takes the other's type).
Value age_value(const Value& a, const Value& b);

// date + integer, integer + date, date - integer (a date) and date - date (int4: days), as
// date_pli, date_mii, date_mi: true with *result set. Beside an interval or a time, a date is
// its midnight: a and b are replaced by the operands to compute with (a timestamp, or a
// timestamptz beside one) and false returned; a date left in them has no such operator.
bool date_arithmetic(std::string_view op, Value& a, Value& b, Value* result);

// make_interval(years, months, weeks, days, hours, mins, secs): all seven given (defaults filled).
Value make_interval_value(const std::vector<Value>& args);

// timezone(zone, ts) and ts AT TIME ZONE zone: UTC or a zone of the system's tzdata (a
// timestamptz's wall clock there, or the instant a timestamp's wall clock there is).
Value timezone_value(const Value& zone, const Value& ts);

// to_char(time, format) of a timestamp, timestamptz or date.
Value to_char_value(const Value& time, const Value& format);

}  // namespace lockstep::sql
