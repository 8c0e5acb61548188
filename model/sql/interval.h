// model/sql/interval.h: PostgreSQL's interval for lockstep's SQL subset.
//
// An interval is three fields, as the server keeps it: months, days and microseconds, never
// normalised into each other ('1 mon' and '30 days' are different values that compare equal;
// '36 hours' stays 36 hours). Input is the server's (DecodeInterval): numbers with units from
// microseconds to millennia, fractions carried down (a month is 30 days, a day 24 hours), a
// clock 'HH:MM[:SS[.f]]' with its own sign, '@' and 'ago'; ISO 8601's format with designators
// ('PT30S', 'P1Y2M3W4DT5H6M7.5S': Java's Duration.toString), its alternative format refused.
// Output is IntervalStyle postgres ('1 year 2 mons 3 days 04:05:06').
// Arithmetic is the server's: a timestamp plus months moves on the calendar (the day clamped
// to the month's end), plus days by whole days, then the time (a timestamptz in a session zone
// other than UTC moves on the local calendar: eval.cc);
// the difference of two timestamps is justified into days of 24 hours; products and
// quotients carry fractions down as interval_mul and interval_div do. Errors are the server's
// (22007 invalid input, 22015 interval field value out of range, 22008 out of range).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace lockstep::sql {

struct Interval {
  std::int64_t micros = 0;
  std::int32_t days = 0;
  std::int32_t months = 0;
  friend bool operator==(const Interval&, const Interval&) = default;
};

// The interval `text` denotes (interval's input function).
Interval parse_interval_text(std::string_view text);
// IntervalStyle postgres.
std::string interval_text(const Interval& i);
// The comparison key: a month is 30 days, a day 24 hours (interval_cmp_value).
__int128 interval_span(const Interval& i);

Interval interval_plus(const Interval& a, const Interval& b);
Interval interval_minus(const Interval& a, const Interval& b);
Interval interval_negated(const Interval& a);
Interval interval_times(const Interval& a, double factor);
Interval interval_divided(const Interval& a, double divisor);  // REQUIRES: divisor != 0
// Whole 24-hour days of the time moved into days (interval_justify_hours).
Interval justify_hours(const Interval& a);
// Whole 30-day months of the days moved into months (interval_justify_days).
Interval justify_days(const Interval& a);
// Both, with the fields' signs agreed (interval_justify_interval).
Interval justify_interval(const Interval& a);
// A timestamp (microseconds from 2000-01-01, UTC or wall clock) plus the interval: months on
// the calendar, then days, then the time. Infinite timestamps stay infinite.
std::int64_t timestamp_plus_interval(std::int64_t micros, const Interval& i);
// make_interval(years, months, weeks, days, hours, mins, secs).
Interval make_interval(std::int64_t years, std::int64_t months, std::int64_t weeks, std::int64_t days, std::int64_t hours,
                       std::int64_t mins, double secs);

}  // namespace lockstep::sql
