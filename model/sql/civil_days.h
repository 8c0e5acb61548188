// model/sql/civil_days.h: the proleptic Gregorian calendar on 64-bit day numbers, for the
// whole range of the server's date and timestamp types (4714 BC to 5874897 AD), where
// std::chrono::year stops at 32767 and wraps past it.
//
// Day numbers count from 2000-01-01 (PostgreSQL's epoch, day 0); a year is astronomical
// (0 is 1 BC). The functions are exact for every int32 year; kTimestampLow / kTimestampEnd are
// the server's MIN_TIMESTAMP and END_TIMESTAMP (timestamp.h): a timestamp t is valid when
// kTimestampLow <= t < kTimestampEnd.
#pragma once

#include <cstdint>

namespace lockstep::sql {

struct CivilDate {
  std::int64_t year = 2000;
  unsigned month = 1, day = 1;
};

std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day);
CivilDate civil_from_days(std::int64_t days);

// 0 (Sunday) to 6.
unsigned weekday_of_days(std::int64_t days);
unsigned days_in_month(std::int64_t year, unsigned month);
// The day number of the n-th (1-based; 0: the last) `weekday` (0: Sunday) of a month.
std::int64_t nth_weekday_of_month(std::int64_t year, unsigned month, unsigned weekday, unsigned n);

inline constexpr std::int64_t kCivilMicrosPerDay = 86'400'000'000;
// 4714-11-24 BC 00:00 and 294277-01-01 00:00, in microseconds from 2000-01-01.
inline constexpr std::int64_t kTimestampLow = -211'813'488'000'000'000;
inline constexpr std::int64_t kTimestampEnd = 9'223'371'331'200'000'000;
// The last year a timestamp holds, and the last a date does.
inline constexpr std::int64_t kTimestampLastYear = 294'276;
inline constexpr std::int64_t kDateLastYear = 5'874'897;

inline bool is_timestamp_in_range(std::int64_t micros) { return micros >= kTimestampLow && micros < kTimestampEnd; }

}  // namespace lockstep::sql
