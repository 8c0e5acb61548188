#include "lockstep/model/sql/interval.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "lockstep/model/sql/civil_days.h"
#include "lockstep/model/sql/datetime.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::sql {
namespace {

constexpr std::int64_t kIvMicrosPerSecond = 1'000'000;
constexpr std::int64_t kIvMicrosPerDay = 86'400 * kIvMicrosPerSecond;
constexpr std::int64_t kIvDaysPerMonth = 30;

[[noreturn]] void interval_out_of_range() { throw SqlError("22008", "interval out of range"); }

std::int32_t to_field(long double v) {
  if (!(v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max())) interval_out_of_range();
  return static_cast<std::int32_t>(v);
}

std::int64_t to_micros(long double v) {
  if (!(v > static_cast<long double>(std::numeric_limits<std::int64_t>::min()) &&
        v < static_cast<long double>(std::numeric_limits<std::int64_t>::max()))) {
    interval_out_of_range();
  }
  return static_cast<std::int64_t>(v);
}

bool iv_is_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

// A unit's size: months (years and up), days (days, weeks) or microseconds, and its field
// (DecodeInterval's tmask: a field given twice is invalid input); nullopt when the word is
// not a unit.
enum IvMask : unsigned {
  kUs = 1, kMs = 2, kSec = 4, kMin = 8, kHour = 16, kDay = 32, kWeek = 64, kMon = 128, kYear = 256, kDec = 512, kCent = 1024, kMil = 2048,
};
constexpr unsigned kAllSecs = kSec | kMs | kUs, kClock = kHour | kMin | kAllSecs;
struct Unit {
  enum class Field { months, days, micros } field;
  double size;
  unsigned mask;
};

std::optional<Unit> unit_named(std::string_view u) {
  using F = Unit::Field;
  auto any = [&](std::initializer_list<std::string_view> names) { return std::find(names.begin(), names.end(), u) != names.end(); };
  if (u.empty() || any({"s", "sec", "secs", "second", "seconds"})) return Unit{F::micros, 1e6, kSec};
  if (any({"ms", "msec", "msecs", "millisecond", "milliseconds", "mseconds"})) return Unit{F::micros, 1e3, kMs};
  if (any({"us", "usec", "usecs", "microsecond", "microseconds", "useconds"})) return Unit{F::micros, 1, kUs};
  if (any({"m", "min", "mins", "minute", "minutes"})) return Unit{F::micros, 60e6, kMin};
  if (any({"h", "hr", "hrs", "hour", "hours"})) return Unit{F::micros, 3600e6, kHour};
  if (any({"d", "day", "days"})) return Unit{F::days, 1, kDay};
  if (any({"w", "week", "weeks"})) return Unit{F::days, 7, kWeek};
  if (any({"mon", "mons", "month", "months"})) return Unit{F::months, 1, kMon};
  if (any({"y", "yr", "yrs", "year", "years"})) return Unit{F::months, 12, kYear};
  if (any({"dec", "decs", "decade", "decades"})) return Unit{F::months, 120, kDec};
  if (any({"c", "cent", "century", "centuries"})) return Unit{F::months, 1200, kCent};
  if (any({"mil", "mils", "millennium", "millennia", "millenniums"})) return Unit{F::months, 12000, kMil};
  return std::nullopt;
}

// AdjustFractMicroseconds: frac * scale whole microseconds, the rest rounded half away.
std::int64_t fract_micros(double frac, double scale) {
  if (frac == 0) return 0;
  frac *= scale;
  auto usec = static_cast<std::int64_t>(frac);
  frac -= static_cast<double>(usec);
  if (frac > 0.5) ++usec;
  else if (frac < -0.5) --usec;
  return usec;
}

// HH:MM[:SS[.f]] or MM:SS.f (the sign already read) in microseconds; nullopt when it is not
// one, with *out_of_range set where DecodeTime's sanity check fails it (minutes past 59,
// seconds past 60: the fields are read, the values are not a time of day).
std::optional<long double> clock_micros(std::string_view s, bool* out_of_range) {
  std::vector<long double> parts;
  while (true) {
    const std::size_t colon = s.find(':');
    const std::string piece(s.substr(0, colon));
    const bool last = colon == std::string_view::npos;
    if (piece.empty() || piece.find_first_not_of(last ? "0123456789." : "0123456789") != std::string::npos) return std::nullopt;  // (a fraction: the last field's)
    char* end = nullptr;
    parts.push_back(std::strtold(piece.c_str(), &end));
    if (end != piece.c_str() + piece.size()) return std::nullopt;
    if (last) break;
    s.remove_prefix(colon + 1);
  }
  if (parts.size() < 2 || parts.size() > 3) return std::nullopt;
  const bool minutes_seconds = parts.size() == 2 && s.find('.') != std::string_view::npos;  // mm:ss.f
  const long double minutes = minutes_seconds ? parts[0] : parts[1];
  const long double seconds = minutes_seconds ? parts[1] : parts.size() == 3 ? parts[2] : 0;
  if (minutes > 59 || seconds >= 61) {
    *out_of_range = true;
    return std::nullopt;
  }
  if (minutes_seconds) return (parts[0] * 60 + parts[1]) * kIvMicrosPerSecond;
  return (parts[0] * 3600 + parts[1] * 60 + seconds) * kIvMicrosPerSecond;
}

std::string seconds_text(std::int64_t sec, std::int64_t fsec) {
  std::string out = fmt::format("{:02}", sec);
  if (fsec != 0) {
    std::string f = fmt::format("{:06}", fsec);
    while (f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

}  // namespace

namespace {

// ISO 8601's format with designators ('P1Y2M3W4DT5H6M7.5S', signs allowed), read as the
// words it stands for, fractions carried down as there; the alternative format refused.
Interval parse_iso8601_interval(std::string_view text, std::string_view rest) {
  std::string words;
  bool time = false;
  std::size_t i = 0;
  while (i < rest.size() && !iv_is_space(rest[i])) {
    if (rest[i] == 't' && !time) {
      time = true;
      ++i;
      continue;
    }
    const std::size_t start = i;
    while (i < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[i])) != 0 || rest[i] == '.' || rest[i] == '-' || rest[i] == '+')) ++i;
    if (i == start || i == rest.size()) break;
    if (rest.substr(start + 1, i - start - 1).find_first_of("-+") != std::string_view::npos) break;  // 0001-02-03: the alternative format
    const char d = rest[i++];
    const char* unit = !time ? (d == 'y' ? "years" : d == 'm' ? "months" : d == 'w' ? "weeks" : d == 'd' ? "days" : nullptr)
                             : (d == 'h' ? "hours" : d == 'm' ? "minutes" : d == 's' ? "seconds" : nullptr);
    if (unit == nullptr) {
      if (d == '-' || d == ':') break;  // the alternative format, P0001-02-03T04:05:06
      throw SqlError("22007", fmt::format("invalid input syntax for type interval: \"{}\"", text));
    }
    words += fmt::format("{} {} ", rest.substr(start, i - 1 - start), unit);
  }
  while (i < rest.size() && iv_is_space(rest[i])) ++i;
  if (i < rest.size()) throw SqlError("0A000", fmt::format("the ISO 8601 interval \"{}\" is not in lockstep's SQL subset", text));
  if (words.empty() && time) return Interval{};  // 'PT': zero, as the server reads it
  if (words.empty()) throw SqlError("22007", fmt::format("invalid input syntax for type interval: \"{}\"", text));
  return parse_interval_text(words);
}

}  // namespace

Interval parse_interval_text(std::string_view text) {
  std::string s(text);
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  auto invalid = [&]() -> Interval { throw SqlError("22007", fmt::format("invalid input syntax for type interval: \"{}\"", text)); };
  std::size_t i = 0;
  while (i < s.size() && iv_is_space(s[i])) ++i;
  if (i < s.size() && s[i] == '@') ++i;
  if (i < s.size() && s[i] == 'p') return parse_iso8601_interval(text, s.substr(i + 1));
  // DecodeInterval: the fields (a number with its unit word, a bare number, hh:mm[:ss]) read
  // right to left, a bare number taking the unit carried from its right (seconds at the end,
  // days before a clock or an hour), each field's mask given once; fractions as the server's
  // double arithmetic carries them down (AdjustFractDays, AdjustFractMicroseconds).
  struct Item {
    std::string_view number, word;
    bool clock = false;
  };
  std::vector<Item> items;
  bool ago = false;
  while (true) {
    while (i < s.size() && iv_is_space(s[i])) ++i;
    if (i == s.size()) break;
    if (ago) return invalid();  // 'ago' ends the text
    const std::size_t start = i;
    while (i < s.size() && !iv_is_space(s[i]) && std::isalpha(static_cast<unsigned char>(s[i])) == 0) ++i;
    const std::string_view number(s.data() + start, i - start);
    if (number.empty()) {  // a word: 'ago'
      while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i])) != 0) ++i;
      if (std::string_view(s.data() + start, i - start) != "ago" || items.empty()) return invalid();
      ago = true;
      continue;
    }
    if (number.find(':') != std::string_view::npos) {
      items.push_back({number, {}, true});
      continue;
    }
    while (i < s.size() && iv_is_space(s[i])) ++i;
    const std::size_t ustart = i;
    while (i < s.size() && std::isalpha(static_cast<unsigned char>(s[i])) != 0) ++i;
    std::string_view word(s.data() + ustart, i - ustart);
    if (word == "ago") {  // a bare number then 'ago'
      i = ustart;
      word = {};
    }
    items.push_back({number, word, false});
  }
  if (items.empty()) return invalid();
  long double months = 0, days = 0;
  std::int64_t micros = 0;
  auto add_micros = [&](long double v) {
    if (!(std::fabs(v) < 9.2e18L) || __builtin_add_overflow(micros, static_cast<std::int64_t>(v), &micros)) {
      throw SqlError("22015", fmt::format("interval field value out of range: \"{}\"", text));
    }
  };
  // AdjustFractDays: a fraction of `scale` days, its whole days then the rest in microseconds.
  auto fract_days = [&](double frac, double scale) {
    const double d = frac * scale;
    const auto extra = static_cast<std::int64_t>(d);
    days += static_cast<long double>(extra);
    add_micros(static_cast<long double>(fract_micros(d - static_cast<double>(extra), kIvMicrosPerDay)));
  };
  unsigned fmask = 0;
  std::optional<Unit> carried;
  for (auto it = items.rbegin(); it != items.rend(); ++it) {
    std::string_view number = it->number;
    const bool negative = number.front() == '-';
    if (number.front() == '-' || number.front() == '+') number.remove_prefix(1);
    unsigned tmask = 0;
    if (it->clock) {
      bool out_of_range = false;
      const auto clock = clock_micros(number, &out_of_range);
      // (a signed one is read as a time zone's offset first: out of range, it is no time at all)
      if (!clock && out_of_range && it->number.front() != '-' && it->number.front() != '+') {
        throw SqlError("22015", fmt::format("interval field value out of range: \"{}\"", text));
      }
      if (!clock) return invalid();
      add_micros(negative ? -*clock : *clock);
      tmask = kClock;
      carried = unit_named("day");
    } else {
      std::optional<Unit> unit = it->word.empty() ? (carried ? carried : unit_named("")) : unit_named(it->word);
      if (!unit) return invalid();
      if (!it->word.empty()) carried = unit;
      const std::size_t dash = number.find('-');
      const std::size_t dot = number.find('.');
      const std::string_view whole_text = number.substr(0, std::min(dash, dot));
      if (whole_text.empty() && dot != 0) return invalid();
      if (whole_text.find_first_not_of("0123456789") != std::string_view::npos) return invalid();
      const long double whole = (negative ? -1 : 1) * (whole_text.empty() ? 0.0L : std::strtold(std::string(whole_text).c_str(), nullptr));
      double fraction = 0;
      if (dash != std::string_view::npos) {  // SQL's years-months, '1-2'
        const std::string_view m = number.substr(dash + 1);
        if (m.empty() || m.find_first_not_of("0123456789") != std::string_view::npos) return invalid();
        const long double month = std::strtold(std::string(m).c_str(), nullptr);
        if (month >= 12) throw SqlError("22015", fmt::format("interval field value out of range: \"{}\"", text));
        months += whole * 12 + (negative ? -month : month);
        unit = unit_named("month");
        carried = unit;
      } else {
        if (dot != std::string_view::npos) {
          const std::string f(number.substr(dot));
          if (f.size() < 2 || f.find_first_not_of("0123456789", 1) != std::string::npos) return invalid();
          fraction = (negative ? -1 : 1) * std::strtod(f.c_str(), nullptr);
        }
        switch (unit->field) {
          case Unit::Field::months:
            months += whole * unit->size;
            if (unit->size == 1) {
              fract_days(fraction, kIvDaysPerMonth);
            } else {  // AdjustFractYears: whole months, rint
              months += std::nearbyint(fraction * unit->size);
            }
            break;
          case Unit::Field::days:
            days += whole * unit->size;
            if (unit->size == 1) {
              add_micros(static_cast<long double>(fract_micros(fraction, kIvMicrosPerDay)));
            } else {
              fract_days(fraction, unit->size);
            }
            break;
          case Unit::Field::micros:
            add_micros(whole * unit->size);
            add_micros(static_cast<long double>(fract_micros(fraction, unit->size)));
            break;
        }
      }
      tmask = unit->mask == kSec && fraction != 0 ? kAllSecs : unit->mask;
      if (unit->mask == kHour) carried = unit_named("day");
    }
    if ((tmask & fmask) != 0) return invalid();
    fmask |= tmask;
  }
  if (ago) {
    months = -months;
    days = -days;
    micros = -micros;
  }
  auto out_of_range = [&]() { throw SqlError("22015", fmt::format("interval field value out of range: \"{}\"", text)); };
  Interval out;
  try {
    out.months = to_field(months);
    out.days = to_field(days);
    out.micros = micros;
  } catch (const SqlError&) {
    out_of_range();
  }
  return out;
}

std::string interval_text(const Interval& iv) {
  const std::int64_t year = iv.months / 12, mon = iv.months % 12, mday = iv.days;
  std::int64_t t = iv.micros;
  const std::int64_t hour = t / (3600 * kIvMicrosPerSecond);
  t -= hour * 3600 * kIvMicrosPerSecond;
  const std::int64_t min = t / (60 * kIvMicrosPerSecond);
  t -= min * 60 * kIvMicrosPerSecond;
  const std::int64_t sec = t / kIvMicrosPerSecond;
  const std::int64_t fsec = t - sec * kIvMicrosPerSecond;
  std::string out;
  bool is_zero = true, is_before = false;
  auto part = [&](std::int64_t value, std::string_view unit) {
    if (value == 0) return;
    out += fmt::format("{}{}{} {}{}", is_zero ? "" : " ", is_before && value > 0 ? "+" : "", value, unit, value != 1 ? "s" : "");
    is_before = value < 0;
    is_zero = false;
  };
  part(year, "year");
  part(mon, "mon");
  part(mday, "day");
  if (is_zero || hour != 0 || min != 0 || sec != 0 || fsec != 0) {
    const bool minus = hour < 0 || min < 0 || sec < 0 || fsec < 0;
    out += fmt::format("{}{}{:02}:{:02}:{}", is_zero ? "" : " ", minus ? "-" : is_before ? "+" : "", std::abs(hour), std::abs(min),
                       seconds_text(std::abs(sec), std::abs(fsec)));
  }
  return out;
}

__int128 interval_span(const Interval& i) {
  return static_cast<__int128>(i.micros) + static_cast<__int128>(i.days) * kIvMicrosPerDay +
         static_cast<__int128>(i.months) * kIvDaysPerMonth * kIvMicrosPerDay;
}

Interval interval_plus(const Interval& a, const Interval& b) {
  return Interval{to_micros(static_cast<long double>(a.micros) + b.micros), to_field(static_cast<long double>(a.days) + b.days),
                  to_field(static_cast<long double>(a.months) + b.months)};
}

Interval interval_minus(const Interval& a, const Interval& b) { return interval_plus(a, interval_negated(b)); }

Interval interval_negated(const Interval& a) {
  return Interval{to_micros(-static_cast<long double>(a.micros)), to_field(-static_cast<long double>(a.days)),
                  to_field(-static_cast<long double>(a.months))};
}

namespace {

// The fractions interval_mul and interval_div carry down: of months into days, of days
// into seconds (rounded to microseconds), whole days of those seconds back into days.
Interval carried(long double months, long double days, long double micros) {
  Interval out;
  out.months = to_field(months);
  // Rounded to microseconds of a day, as TSROUND does, before its fraction goes to seconds.
  const long double month_remainder_days =
      std::nearbyint((months - out.months) * kIvDaysPerMonth * kIvMicrosPerSecond) / kIvMicrosPerSecond;
  out.days = to_field(days);
  long double sec_remainder = (days - out.days + month_remainder_days - std::trunc(month_remainder_days)) * 86'400;
  sec_remainder = std::nearbyint(sec_remainder * kIvMicrosPerSecond) / kIvMicrosPerSecond;
  if (std::fabs(sec_remainder) >= 86'400) {
    const long double whole_days = std::trunc(sec_remainder / 86'400);
    out.days = to_field(static_cast<long double>(out.days) + whole_days);
    sec_remainder -= whole_days * 86'400;
  }
  out.days = to_field(static_cast<long double>(out.days) + std::trunc(month_remainder_days));
  out.micros = to_micros(std::nearbyint(micros + sec_remainder * kIvMicrosPerSecond));
  return out;
}

}  // namespace

Interval interval_times(const Interval& a, double factor) {
  if (std::isnan(factor)) interval_out_of_range();
  return carried(static_cast<long double>(a.months) * factor, static_cast<long double>(a.days) * factor,
                 static_cast<long double>(a.micros) * factor);
}

Interval interval_divided(const Interval& a, double divisor) {
  if (divisor == 0) throw SqlError("22012", "division by zero");
  return carried(static_cast<long double>(a.months) / divisor, static_cast<long double>(a.days) / divisor,
                 static_cast<long double>(a.micros) / divisor);
}

namespace {

// Whole 30-day months of the days moved into months (interval_justify_days' first part).
void iv_carry_days_into_months(Interval& out) {
  const auto whole_months = static_cast<std::int32_t>(out.days / kIvDaysPerMonth);
  out.days -= static_cast<std::int32_t>(whole_months * kIvDaysPerMonth);
  out.months = to_field(static_cast<long double>(out.months) + whole_months);
}

// Whole 24-hour days of the time moved into days.
void iv_carry_time_into_days(Interval& out) {
  const std::int64_t whole_days = out.micros / kIvMicrosPerDay;
  out.micros -= whole_days * kIvMicrosPerDay;
  out.days = to_field(static_cast<long double>(out.days) + whole_days);
}

// A time of the other sign than the days borrows or lends one day.
void iv_agree_days_and_time(Interval& out) {
  if (out.days > 0 && out.micros < 0) {
    out.micros += kIvMicrosPerDay;
    --out.days;
  } else if (out.days < 0 && out.micros > 0) {
    out.micros -= kIvMicrosPerDay;
    ++out.days;
  }
}

}  // namespace

Interval justify_hours(const Interval& a) {
  Interval out = a;
  iv_carry_time_into_days(out);
  iv_agree_days_and_time(out);
  return out;
}

Interval justify_days(const Interval& a) {
  Interval out = a;
  iv_carry_days_into_months(out);
  if (out.months > 0 && out.days < 0) {
    out.days += static_cast<std::int32_t>(kIvDaysPerMonth);
    --out.months;
  } else if (out.months < 0 && out.days > 0) {
    out.days -= static_cast<std::int32_t>(kIvDaysPerMonth);
    ++out.months;
  }
  return out;
}

Interval justify_interval(const Interval& a) {
  Interval out = a;
  // Days first where the time has their sign (it may keep the sum of days in range), then the
  // time's whole days into days, the days' whole months into months, and the signs agreed.
  if ((out.days > 0 && out.micros > 0) || (out.days < 0 && out.micros < 0)) iv_carry_days_into_months(out);
  iv_carry_time_into_days(out);
  iv_carry_days_into_months(out);
  if (out.months > 0 && (out.days < 0 || (out.days == 0 && out.micros < 0))) {
    out.days += static_cast<std::int32_t>(kIvDaysPerMonth);
    --out.months;
  } else if (out.months < 0 && (out.days > 0 || (out.days == 0 && out.micros > 0))) {
    out.days -= static_cast<std::int32_t>(kIvDaysPerMonth);
    ++out.months;
  }
  iv_agree_days_and_time(out);
  return out;
}

std::int64_t timestamp_plus_interval(std::int64_t micros, const Interval& iv) {
  if (is_infinite_timestamp(micros)) return micros;
  auto out_of_range = []() -> std::int64_t { throw SqlError("22008", "timestamp out of range"); };
  __int128 ts = micros;
  if (iv.months != 0) {
    const std::int64_t day_number = micros >= 0 ? micros / kIvMicrosPerDay : -((-micros + kIvMicrosPerDay - 1) / kIvMicrosPerDay);
    const std::int64_t in_day = micros - day_number * kIvMicrosPerDay;
    const CivilDate date = civil_from_days(day_number);
    const std::int64_t index = date.year * 12 + (date.month - 1) + iv.months;
    const std::int64_t y = index >= 0 ? index / 12 : -((-index + 11) / 12);
    const auto m = static_cast<unsigned>(index - y * 12 + 1);
    if (y > kTimestampLastYear || y < -4713) return out_of_range();
    const unsigned d = std::min(date.day, days_in_month(y, m));
    ts = static_cast<__int128>(days_from_civil(y, m, d)) * kIvMicrosPerDay + in_day;
  }
  ts += static_cast<__int128>(iv.days) * kIvMicrosPerDay;
  ts += iv.micros;
  // The server's IS_VALID_TIMESTAMP: 4714-11-24 BC to the end of 294276.
  if (ts >= kTimestampEnd || ts < kTimestampLow) return out_of_range();
  return static_cast<std::int64_t>(ts);
}

Interval make_interval(std::int64_t years, std::int64_t months, std::int64_t weeks, std::int64_t days, std::int64_t hours,
                       std::int64_t mins, double secs) {
  if (!std::isfinite(secs)) interval_out_of_range();
  const long double m = static_cast<long double>(years) * 12 + months;
  const long double d = static_cast<long double>(weeks) * 7 + days;
  const long double us = (static_cast<long double>(hours) * 3600 + static_cast<long double>(mins) * 60) * kIvMicrosPerSecond +
                         std::nearbyint(static_cast<long double>(secs) * kIvMicrosPerSecond);
  return Interval{to_micros(us), to_field(d), to_field(m)};
}

}  // namespace lockstep::sql
