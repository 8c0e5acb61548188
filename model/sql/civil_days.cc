#include "lockstep/model/sql/civil_days.h"

#include <cassert>

namespace lockstep::sql {
namespace {

constexpr std::int64_t kDaysFrom0000_03_01To2000_01_01 = 730'425;  // 0000-03-01 is the era's day 0
constexpr std::int64_t kDaysPerEra = 146'097;                       // 400 Gregorian years

std::int64_t floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0); }

}  // namespace

// Years counted from March, so a leap day ends its year; 400-year eras repeat exactly.
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day) {
  assert(month >= 1 && month <= 12 && day >= 1 && day <= 31);
  const std::int64_t y = year - (month <= 2 ? 1 : 0);
  const std::int64_t era = floor_div(y, 400);
  const std::int64_t year_of_era = y - era * 400;
  const std::int64_t shifted_month = month > 2 ? month - 3 : month + 9;
  const std::int64_t day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
  const std::int64_t day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * kDaysPerEra + day_of_era - kDaysFrom0000_03_01To2000_01_01;
}

CivilDate civil_from_days(std::int64_t days) {
  const std::int64_t z = days + kDaysFrom0000_03_01To2000_01_01;
  const std::int64_t era = floor_div(z, kDaysPerEra);
  const std::int64_t day_of_era = z - era * kDaysPerEra;
  const std::int64_t year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36524 - day_of_era / 146096) / 365;
  const std::int64_t day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
  const std::int64_t shifted_month = (5 * day_of_year + 2) / 153;
  CivilDate out;
  out.day = static_cast<unsigned>(day_of_year - (153 * shifted_month + 2) / 5 + 1);
  out.month = static_cast<unsigned>(shifted_month < 10 ? shifted_month + 3 : shifted_month - 9);
  out.year = year_of_era + era * 400 + (out.month <= 2 ? 1 : 0);
  return out;
}

unsigned weekday_of_days(std::int64_t days) {
  return static_cast<unsigned>(((days % 7) + 7 + 6) % 7);  // 2000-01-01 was a Saturday
}

unsigned days_in_month(std::int64_t year, unsigned month) {
  assert(month >= 1 && month <= 12);
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
  return month == 2 && leap ? 29 : kDays[month - 1];
}

std::int64_t nth_weekday_of_month(std::int64_t year, unsigned month, unsigned weekday, unsigned n) {
  const std::int64_t first = days_from_civil(year, month, 1);
  const std::int64_t first_match = first + (weekday + 7 - weekday_of_days(first)) % 7;
  if (n != 0) return first_match + 7 * (n - 1);
  std::int64_t day = first_match;
  while (day + 7 < first + days_in_month(year, month)) day += 7;
  return day;
}

}  // namespace lockstep::sql
