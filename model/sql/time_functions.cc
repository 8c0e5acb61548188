#include "lockstep/model/sql/time_functions.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <optional>

#include <fmt/format.h>

#include "lockstep/model/sql/civil_days.h"
#include "lockstep/model/sql/datetime.h"
#include "lockstep/model/sql/interval.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/model/sql/time_zones.h"

namespace lockstep::sql {
namespace {

constexpr std::int64_t kTfMicrosPerSecond = 1'000'000;
constexpr std::int64_t kTfMicrosPerDay = 86'400 * kTfMicrosPerSecond;

// The wall clock of a time: a timestamptz's in the session zone.
CivilTime clock_of(const Value& v, std::string_view function) {
  if (is_infinite_timestamp(v.micros())) {
    throw SqlError("0A000",
                   fmt::format("{}() of an infinite time is not in lockstep's SQL subset", function));
  }
  return civil_time_of(v.type() == Type::timestamptz ? local_of_utc(v.micros()) : v.micros());
}

constexpr std::array<std::string_view, 12> kMonthNames = {"January",   "February", "March",    "April",
                                                          "May",       "June",     "July",     "August",
                                                          "September", "October",  "November", "December"};
constexpr std::array<std::string_view, 7> kDayNames = {"Sunday",   "Monday", "Tuesday", "Wednesday",
                                                       "Thursday", "Friday", "Saturday"};

std::string cased(std::string_view name, std::string_view pattern) {
  std::string out(name);
  const bool upper = std::isupper(static_cast<unsigned char>(pattern[1])) != 0;
  const bool lower = std::islower(static_cast<unsigned char>(pattern[0])) != 0;
  for (char& ch : out) {
    if (upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    if (lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  }
  return out;
}

bool starts_with_nocase(std::string_view s, std::string_view p) {
  if (s.size() < p.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(s[i])) != p[i]) return false;
  }
  return true;
}

}  // namespace

Value timezone_value(const Value& zone_in, const Value& ts_in) {
  if (zone_in.is_null() || ts_in.is_null()) return Value::null(Type::timestamp);
  const Value ts = ts_in.type() == Type::unknown ? cast(ts_in, Type::timestamptz) : ts_in;
  std::optional<std::int64_t> fixed;  // a fixed offset east, in microseconds (an interval, an abbreviation)
  const TimeZone* named = nullptr;
  if (zone_in.type() == Type::interval) {  // timestamptz_izone: a fixed offset east
    const Interval iv = zone_in.as_interval();
    if (iv.months != 0 || iv.days != 0) {
      throw SqlError("22023", fmt::format("interval time zone \"{}\" must not include months or days", display_text(zone_in)));
    }
    fixed = iv.micros;
  } else {
    const std::string zone = cast(zone_in, Type::text).as_text();
    std::string lower = zone;
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    // The server reads the name as an abbreviation first (timezone_abbreviations 'Default'):
    // these four are also files, whose daylight time the abbreviation does not have.
    static constexpr std::array<std::pair<std::string_view, int>, 4> kFileAbbreviations{{{"cet", 3600}, {"eet", 7200}, {"met", 3600}, {"wet", 0}}};
    const auto abbreviation = std::find_if(kFileAbbreviations.begin(), kFileAbbreviations.end(), [&](const auto& a) { return a.first == lower; });
    if (abbreviation != kFileAbbreviations.end()) {
      fixed = std::int64_t{abbreviation->second} * 1'000'000;
    } else if (!is_utc_zone(zone)) {
      named = find_time_zone(zone);
      const bool letters = std::all_of(zone.begin(), zone.end(), [](unsigned char c) { return std::isalpha(c) != 0; });
      if (named == nullptr && letters && zone.size() <= 6) {  // an abbreviation the table may have (PST, MSK)
        throw SqlError("0A000", fmt::format("the time zone abbreviation \"{}\" is not in lockstep's SQL subset (zone names of the system's tzdata and "
                                            "POSIX rules are; docs/sql.md)", zone));
      }
      if (named == nullptr && is_zone_name(zone)) throw SqlError("22023", fmt::format("time zone \"{}\" not recognized", zone));
      if (named == nullptr) {
        throw SqlError("0A000", fmt::format("the time zone \"{}\" is not in lockstep's SQL subset (names of the system's tzdata are; docs/sql.md)", zone));
      }
    }
  }
  if (is_timestamp(ts.type()) && is_infinite_timestamp(ts.micros())) named = nullptr, fixed.reset();
  const auto east = [&](std::int64_t utc) -> std::int64_t {
    if (fixed) return *fixed;
    return named == nullptr ? 0 : std::int64_t{named->at(utc).seconds} * 1'000'000;
  };
  if (ts.type() == Type::timestamptz) return Value::timestamp(ts.micros() + east(ts.micros()));
  if (ts.type() == Type::timestamp) {
    if (fixed) return Value::timestamptz(ts.micros() - *fixed);
    return Value::timestamptz(named == nullptr ? ts.micros() : named->utc_of_local(ts.micros()));
  }
  throw SqlError("42883", fmt::format("function timezone(text, {}) does not exist", type_name(ts.type())));
}

Value age_value(const Value& a_in, const Value& b_in) {
  if (a_in.is_null() || b_in.is_null()) return Value::null(Type::interval);
  // An untyped side takes the other's type; a date is cast as the server's resolution does
  // (beside a timestamp to one, else to timestamptz, the preferred type).
  auto resolved = [](const Value& v, Type other) {
    if (v.type() != Type::unknown && v.type() != Type::date) return v;
    return cast(v, other == Type::timestamp ? Type::timestamp : Type::timestamptz);
  };
  const Value a = resolved(a_in, b_in.type());
  const Value b = resolved(b_in, a.type());
  if (!is_timestamp(a.type()) || a.type() != b.type()) {
    throw SqlError("42883", fmt::format("function age({}, {}) does not exist", type_name(a.type()),
                                        type_name(b.type())));
  }
  const CivilTime c1 = clock_of(a, "age"), c2 = clock_of(b, "age");
  const bool earlier = a.micros() < b.micros();
  const int sign = earlier ? -1 : 1;
  std::int64_t usec = sign * (c1.fraction - c2.fraction), sec = sign * (c1.second - c2.second),
               min = sign * (c1.minute - c2.minute), hour = sign * (c1.hour - c2.hour),
               mday = sign * (static_cast<std::int64_t>(c1.day) - c2.day),
               mon = sign * (static_cast<std::int64_t>(c1.month) - c2.month),
               year = sign * (static_cast<std::int64_t>(c1.year) - c2.year);
  while (usec < 0) usec += kTfMicrosPerSecond, --sec;
  while (sec < 0) sec += 60, --min;
  while (min < 0) min += 60, --hour;
  while (hour < 0) hour += 24, --mday;
  while (mday < 0) {  // the days of the earlier time's month
    mday += earlier ? days_in_month(c1.year, c1.month) : days_in_month(c2.year, c2.month);
    --mon;
  }
  while (mon < 0) mon += 12, --year;
  const std::int64_t months = sign * (year * 12 + mon);
  const std::int64_t time = sign * (((hour * 60 + min) * 60 + sec) * kTfMicrosPerSecond + usec);
  return Value::interval(
      Interval{time, static_cast<std::int32_t>(sign * mday), static_cast<std::int32_t>(months)});
}

bool date_arithmetic(std::string_view op, Value& a, Value& b, Value* result) {
  const Type ta = a.type(), tb = b.type();
  if (ta == Type::time || tb == Type::time) {  // time_pl_interval, time_mi_time, datetime_pl
    const bool plus = op == "+", minus = op == "-";
    if ((ta == Type::time && tb == Type::interval && (plus || minus)) || (ta == Type::interval && tb == Type::time && plus)) {
      const Value& t = ta == Type::time ? a : b;
      const Value& iv = ta == Type::time ? b : a;
      std::int64_t r = (t.micros() + (minus ? -iv.as_interval().micros : iv.as_interval().micros)) % kTfMicrosPerDay;
      if (r < 0) r += kTfMicrosPerDay;
      *result = Value::time_of_day(r);
      return true;
    }
    if (ta == Type::time && tb == Type::time && minus) {
      *result = Value::interval(a.micros() - b.micros());
      return true;
    }
    if (((ta == Type::date && tb == Type::time) || (ta == Type::time && tb == Type::date)) && plus) {
      if (is_infinite_timestamp(ta == Type::date ? a.micros() : b.micros())) {
        *result = Value::timestamp(ta == Type::date ? a.micros() : b.micros());
        return true;
      }
      *result = Value::timestamp(a.micros() + b.micros());
      return true;
    }
    return false;
  }
  if (ta == Type::date && is_integer(tb) && (op == "+" || op == "-")) {
    if (is_infinite_timestamp(a.micros())) {
      *result = a;
      return true;
    }
    const __int128 days = static_cast<__int128>(a.micros() / kTfMicrosPerDay) +
                          (op == "+" ? b.as_integer() : -static_cast<__int128>(b.as_integer()));
    if (days > 100'000'000 || days < -100'000'000) throw SqlError("22008", "date out of range");
    *result = Value::date(static_cast<std::int64_t>(days) * kTfMicrosPerDay);
    return true;
  }
  if (is_integer(ta) && tb == Type::date && op == "+") return date_arithmetic(op, b, a, result);
  if (ta == Type::date && tb == Type::date && op == "-") {
    if (is_infinite_timestamp(a.micros()) || is_infinite_timestamp(b.micros()))
      throw SqlError("22008", "cannot subtract infinite dates");
    *result = Value::integer((a.micros() - b.micros()) / kTfMicrosPerDay, Type::int4);
    return true;
  }
  if (ta == Type::date && tb == Type::date) return false;
  auto timeish = [](Type t) { return t == Type::date || t == Type::interval || is_timestamp(t); };
  if (timeish(ta) && timeish(tb)) {
    if (ta == Type::date) a = cast(a, tb == Type::timestamptz ? Type::timestamptz : Type::timestamp);
    if (tb == Type::date) b = cast(b, ta == Type::timestamptz ? Type::timestamptz : Type::timestamp);
  }
  return false;
}

Value make_interval_value(const std::vector<Value>& args) {
  for (const Value& a : args) {
    if (a.is_null()) return Value::null(Type::interval);
  }
  std::int64_t whole[6] = {};
  for (std::size_t i = 0; i < 6; ++i) {
    const Value v = args.at(i).type() == Type::unknown ? cast(args[i], Type::int4) : args[i];
    if (!is_integer(v.type())) {
      throw SqlError("42883",
                     fmt::format("function make_interval() does not exist for an argument of type {}",
                                 type_name(v.type())));
    }
    whole[i] = v.as_integer();
  }
  const Value& secs = args.at(6);
  double seconds = 0;
  if (is_numeric_category(secs.type())) {
    seconds = as_double(secs);
  } else if (secs.type() == Type::unknown || secs.type() == Type::text) {
    const std::string& text = secs.as_text();
    char* end = nullptr;
    seconds = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size()) {
      throw SqlError("22P02", fmt::format("invalid input syntax for type double precision: \"{}\"", text));
    }
  } else {
    throw SqlError("42883", fmt::format("function make_interval() does not exist for secs of type {}",
                                        type_name(secs.type())));
  }
  return Value::interval(make_interval(whole[0], whole[1], whole[2], whole[3], whole[4], whole[5], seconds));
}

Value to_char_value(const Value& time_in, const Value& format) {
  if (time_in.is_null() || format.is_null()) return Value::null(Type::text);
  const Value time = time_in.type() == Type::date ? cast(time_in, Type::timestamp) : time_in;
  if (!is_timestamp(time.type())) {
    throw SqlError(
        "0A000", fmt::format("to_char() of {} is not in lockstep's SQL subset (of times it is; docs/sql.md)",
                             type_name(time.type())));
  }
  const std::string f = cast(format, Type::text).as_text();
  const CivilTime c = clock_of(time, "to_char");
  std::string out;
  std::size_t i = 0;
  while (i < f.size()) {
    const std::string_view rest = std::string_view(f).substr(i);
    if (rest[0] == '"') {  // quoted text, copied
      std::size_t j = 1;
      while (j < rest.size() && rest[j] != '"') {
        if (rest[j] == '\\')
          throw SqlError("0A000", "a backslash in to_char()'s format is not in lockstep's SQL subset");
        out.push_back(rest[j++]);
      }
      i += j + 1;
      continue;
    }
    if (rest[0] == '\\')
      throw SqlError("0A000", "a backslash in to_char()'s format is not in lockstep's SQL subset");
    if (!std::isalpha(static_cast<unsigned char>(rest[0]))) {
      out.push_back(rest[0]);
      ++i;
      continue;
    }
    const bool fill_mode = starts_with_nocase(rest, "FM");
    const std::string_view p = fill_mode ? rest.substr(2) : rest;
    const std::size_t skip = fill_mode ? 2 : 0;
    auto number = [&](std::int64_t n, int width, std::size_t length) {
      out += fill_mode ? std::to_string(n) : fmt::format("{:0{}}", n, width);
      i += skip + length;
    };
    auto name = [&](std::string_view full, std::size_t length, bool padded) {
      std::string s = cased(full, p);
      if (padded && !fill_mode && s.size() < 9) s.resize(9, ' ');
      out += s;
      i += skip + length;
    };
    const std::int64_t hour12 = c.hour % 12 == 0 ? 12 : c.hour % 12;
    const std::int64_t year = c.year > 0 ? c.year : 1 - c.year;
    auto meridian = [&] {
      const bool upper = std::isupper(static_cast<unsigned char>(p[0])) != 0;
      out += c.hour >= 12 ? (upper ? "PM" : "pm") : (upper ? "AM" : "am");
      i += skip + 2;
    };
    // formatting.c's keywords the subset has, longest first where one begins another; a
    // null action is a keyword refused by name (SSSS, Y,YYY), so that no shorter one reads it.
    const std::pair<std::string_view, std::function<void()>> patterns[] = {
        {"HH24", [&] { number(c.hour, 2, 4); }},
        {"HH12", [&] { number(hour12, 2, 4); }},
        {"HH", [&] { number(hour12, 2, 2); }},
        {"MI", [&] { number(c.minute, 2, 2); }},
        {"MS", [&] { number(c.fraction / 1000, 3, 2); }},
        {"US", [&] { number(c.fraction, 6, 2); }},
        {"SSSS", nullptr},
        {"SS", [&] { number(c.second, 2, 2); }},
        {"AM", meridian},
        {"PM", meridian},
        {"YYYY", [&] { number(year, 4, 4); }},
        {"YYY", [&] { number(year % 1000, 3, 3); }},
        {"YY", [&] { number(year % 100, 2, 2); }},
        {"Y,YYY", nullptr},
        {"Y", [&] { number(year % 10, 1, 1); }},
        {"MONTH", [&] { name(kMonthNames[c.month - 1], 5, true); }},
        {"MON", [&] { name(kMonthNames[c.month - 1].substr(0, 3), 3, false); }},
        {"MM", [&] { number(c.month, 2, 2); }},
        {"DAY", [&] { name(kDayNames[c.weekday], 3, true); }},
        {"DDD", [&] { number(c.day_of_year, 3, 3); }},
        {"DD", [&] { number(c.day, 2, 2); }},
        {"DY", [&] { name(kDayNames[c.weekday].substr(0, 3), 2, false); }},
        {"D", [&] { number(c.weekday + 1, 1, 1); }},
    };
    const auto* match = std::find_if(std::begin(patterns), std::end(patterns), [&](const auto& pattern) {
      return starts_with_nocase(p, pattern.first);
    });
    if (match == std::end(patterns) ||
        match->second == nullptr) {  // TZ, OF, TH, IW, Q, ...: refused, not copied
      std::size_t j = 0;
      while (j < p.size() && std::isalpha(static_cast<unsigned char>(p[j])) && j < 6) ++j;
      throw SqlError(
          "0A000",
          fmt::format("to_char()'s format \"{}\" at \"{}\" is not in lockstep's SQL subset (docs/sql.md)", f,
                      p.substr(0, j)));
    }
    match->second();
  }
  return Value::text(std::move(out));
}

}  // namespace lockstep::sql
