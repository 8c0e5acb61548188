// model/sql/datetime.h: PostgreSQL's timestamp input and output for lockstep's SQL subset.
//
// A timestamp is microseconds from 2000-01-01 00:00:00 (PostgreSQL's epoch): of UTC for
// `timestamp with time zone`, of the wall clock for `timestamp` (without time zone);
// 'infinity' and '-infinity' are the int64 ends, as the server keeps them. Input takes the
// forms the server takes in ISO order: 'YYYY-MM-DD' (or the basic 'YYYYMMDD', 'YYMMDD'), then
// ' ' or 'T' and HH:MM[:SS[.f]] (or HHMM, HHMMSS[.f]), then an optional zone (Z, UTC, GMT, +H,
// +HH:MM[:SS], +HHMM, with or without a space before it); 'epoch', 'infinity', '-infinity'. A
// timestamp ignores a zone, as the server does; a timestamptz without one is the session zone's
// local time (model/sql/session_style.h). Years run to 294276 (model/sql/civil_days.h; a date
// past it is refused). timestamp_text is the stored form (UTC, ISO: 'YYYY-MM-DD
// HH:MM:SS[.ffffff]', '+00' for timestamptz); session_style.h's display_text prints in the
// session's styles. Errors are the server's: 22007 invalid input syntax, 22008 field value or
// timestamp out of range, 22009 zone displacement out of range; other input forms the server
// reads ('01/02/2024', 'now') are refused (0A000).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

namespace lockstep::sql {

inline constexpr std::int64_t kTimestampInfinity = std::numeric_limits<std::int64_t>::max();
inline constexpr std::int64_t kTimestampMinusInfinity = std::numeric_limits<std::int64_t>::min();

inline bool is_infinite_timestamp(std::int64_t micros) {
  return micros == kTimestampInfinity || micros == kTimestampMinusInfinity;
}

// `text` as a timestamp (with_zone: timestamptz, a zone-less text read as UTC).
std::int64_t parse_timestamp(std::string_view text, bool with_zone);

// A timestamp(p)'s value: rounded to p fractional digits (0 to 6), half away from the epoch,
// as AdjustTimestampForTypmod rounds; infinities kept.
std::int64_t timestamp_with_precision(std::int64_t micros, int precision);

// PostgreSQL's ISO output of a timestamp (with_zone: with "+00").
std::string timestamp_text(std::int64_t micros, bool with_zone);

// The calendar fields of a wall-clock time (microseconds from 2000-01-01): year (0 is 1 BC),
// month 1-12, day 1-31, weekday 0 (Sunday) to 6, day of the year 1-366, the time of day.
struct CivilTime {
  int year = 0;
  unsigned month = 0, day = 0, weekday = 0, day_of_year = 0;
  std::int64_t hour = 0, minute = 0, second = 0, fraction = 0;
};
CivilTime civil_time_of(std::int64_t wall_micros);

// A date: the midnight (wall clock, microseconds from 2000-01-01) of `text` read as a
// timestamp without time zone, its time and zone dropped as date_in drops them; errors name
// type date. date_of is the midnight on or before a wall-clock time; date_text is ISO
// ('YYYY-MM-DD', ' BC' before year 1); infinities pass unchanged.
std::int64_t parse_date(std::string_view text);
std::int64_t date_of(std::int64_t wall_micros);
std::string date_text(std::int64_t midnight_micros);

// A time of day (time without time zone): 'HH:MM[:SS[.f]]' (fractions rounded to
// microseconds, '24:00:00' the end of the day), after an optional 'YYYY-MM-DD ' the server
// ignores; other forms ('10:00 AM', a zone, 'now', 'allballs') refused (0A000). time_text is
// 'HH:MM:SS[.ffffff]'.
std::int64_t parse_time(std::string_view text);
std::string time_text(std::int64_t micros);

// date_trunc(unit, x) of a wall-clock time (microseconds from 2000-01-01): microseconds to
// millennium (week: the Monday; century and millennium start at years 1, 101, 1001, ...), the
// unit in any case, singular or plural; `type` names the source type in the server's error
// (22023 unit not recognized). Infinite times pass unchanged. `below_a_day`, when given, says
// whether the unit is shorter than a day (a timestamptz keeps its offset then).
std::int64_t truncate_timestamp(std::string_view unit, std::int64_t micros, std::string_view type, bool* below_a_day = nullptr);

// A unit as the server's DecodeUnits reads it (datetime.c's deltatktbl: plurals and
// abbreviations such as "secs", "min", "hrs", "mon", "yrs"; a word compared on its first 10
// characters), given in lower case: its canonical name ("microseconds", "milliseconds",
// "second", "minute", "hour", "day", "week", "month", "quarter", "year", "decade",
// "century", "millennium", "timezone", "timezone_hour", "timezone_minute"), or "" for none.
std::string_view date_unit(std::string_view lower);

// A time zone name the subset knows as UTC ('UTC', 'Etc/UTC', 'GMT', 'Z', any case, or a
// zero offset); AT TIME ZONE and timezone() refuse other zones by name.
bool is_utc_zone(std::string_view zone);

}  // namespace lockstep::sql
