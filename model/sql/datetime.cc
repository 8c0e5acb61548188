#include "lockstep/model/sql/datetime.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

#include <fmt/format.h>

#include "lockstep/model/sql/civil_days.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::sql {
namespace {

constexpr std::int64_t kDtMicrosPerSecond = 1'000'000;
constexpr std::int64_t kDtMicrosPerDay = 86'400 * kDtMicrosPerSecond;
constexpr std::int64_t kDtEpoch1970 = -10'957 * kDtMicrosPerDay;  // 1970-01-01 from 2000-01-01

std::string dt_lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view dt_trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

// Reads 1 to `max` digits at s[i]; nullopt when there is none.
std::optional<int> dt_digits(std::string_view s, std::size_t& i, std::size_t max, std::size_t* count = nullptr) {
  const std::size_t start = i;
  int v = 0;
  while (i < s.size() && i - start < max && std::isdigit(static_cast<unsigned char>(s[i])) != 0) v = v * 10 + (s[i++] - '0');
  if (count != nullptr) *count = i - start;
  if (i == start) return std::nullopt;
  return v;
}

struct DtParsed {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  std::int64_t micros = 0;          // fraction of the second
  std::int64_t offset_seconds = 0;  // east of UTC
};

// The zone after the time, as DecodeTimezone reads a numeric one: Z, UTC, GMT, +H[H], +HH:MM,
// +HH:MM:SS, or digits run together (+HHMM: the last two are minutes); out of range past
// 15:59:59.
enum class DtZone : std::uint8_t { read, not_a_zone, out_of_range };
DtZone dt_read_zone(std::string_view s, DtParsed& p) {
  const std::string z = dt_lower(dt_trim(s));
  if (z.empty() || z == "z" || z == "utc" || z == "gmt" || z == "etc/utc") return DtZone::read;
  if (z.front() != '+' && z.front() != '-') return DtZone::not_a_zone;
  std::size_t i = 1, n = 0;
  const auto hours = dt_digits(z, i, 9, &n);
  if (!hours) return DtZone::not_a_zone;
  std::int64_t h = *hours, m = 0, sec = 0;
  if (i < z.size() && z[i] == ':') {
    ++i;
    const auto minutes = dt_digits(z, i, 9);
    if (!minutes) return DtZone::not_a_zone;
    m = *minutes;
    if (i < z.size() && z[i] == ':') {
      ++i;
      const auto seconds = dt_digits(z, i, 9);
      if (!seconds) return DtZone::not_a_zone;
      sec = *seconds;
    }
  } else if (i == z.size() && n > 2) {
    m = h % 100;
    h /= 100;
  }
  if (i != z.size()) return DtZone::not_a_zone;
  if (h > 15 || m > 59 || sec > 59) return DtZone::out_of_range;
  p.offset_seconds = (z.front() == '-' ? -1 : 1) * (h * 3600 + m * 60 + sec);
  return DtZone::read;
}

}  // namespace

std::int64_t parse_timestamp(std::string_view text, bool with_zone) {
  const std::string_view type = with_zone ? "timestamp with time zone" : "timestamp without time zone";
  auto invalid = [&]() -> std::int64_t {
    // Forms the server reads that lockstep does not (slashes, month and day names, 'now',
    // 'today', AM/PM...) are refused, not called invalid.
    const std::string lowered = dt_lower(text);
    static constexpr std::string_view kWords[] = {"now", "today", "tomorrow", "yesterday", "allballs", "jan", "feb", "mar", "apr",
                                                  "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec", "mon", "tue", "wed",
                                                  "thu", "fri", "sat", "sun", "am", "pm", "bc", "ad"};
    bool other_form = lowered.find_first_of("/,") != std::string::npos;
    for (const std::string_view w : kWords) other_form = other_form || lowered.find(w) != std::string::npos;
    if (other_form) {
      throw SqlError("0A000", fmt::format("the {} input \"{}\" is not in lockstep's SQL subset (ISO 8601 forms are; docs/sql.md)", type, text));
    }
    // timestamp_in names its type "timestamp" in this message.
    throw SqlError("22007", fmt::format("invalid input syntax for type {}: \"{}\"", with_zone ? type : "timestamp", text));
  };
  const std::string_view s = dt_trim(text);
  const std::string word = dt_lower(s);
  if (word == "infinity" || word == "+infinity") return kTimestampInfinity;
  if (word == "-infinity") return kTimestampMinusInfinity;
  if (word == "epoch") return kDtEpoch1970;
  DtParsed p;
  std::size_t i = 0, n = 0;
  // The fraction after a time's seconds, rounded to microseconds as the server rounds.
  auto read_fraction = [&]() -> bool {
    if (i >= s.size() || s[i] != '.') return true;
    const std::size_t start = ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])) != 0) ++i;
    if (i == start) return false;
    std::string frac(s.substr(start, std::min<std::size_t>(i - start, 7)));
    while (frac.size() < 7) frac += '0';
    p.micros = (std::stoll(frac) + 5) / 10;
    return true;
  };
  std::size_t run = 0;
  while (run < s.size() && std::isdigit(static_cast<unsigned char>(s[run])) != 0) ++run;
  if ((run == 8 || run == 6) && (run == s.size() || s[run] != '-')) {
    // ISO's basic form, as DecodeNumberField reads a run of digits: YYYYMMDD, or YYMMDD with the
    // two-digit year's century (70 to 99: 1900s).
    const int whole = std::stoi(std::string(s.substr(0, run)));
    p.year = whole / 10000;
    if (run == 6) p.year += p.year < 70 ? 2000 : 1900;
    p.month = whole / 100 % 100;
    p.day = whole % 100;
    i = run;
  } else {
    const auto y = dt_digits(s, i, 7, &n);
    if (!y || n < 4 || i >= s.size() || s[i] != '-') return invalid();
    ++i;
    const auto mo = dt_digits(s, i, 2);
    if (!mo || i >= s.size() || s[i] != '-') return invalid();
    ++i;
    const auto d = dt_digits(s, i, 2);
    if (!d) return invalid();
    p.year = *y;
    p.month = *mo;
    p.day = *d;
  }
  if (i < s.size() && (s[i] == ' ' || s[i] == 'T' || s[i] == 't')) {
    std::size_t j = i + 1;
    while (j < s.size() && s[j] == ' ') ++j;
    std::size_t digits = 0;
    while (j + digits < s.size() && std::isdigit(static_cast<unsigned char>(s[j + digits])) != 0) ++digits;
    if ((digits == 4 || digits == 6) && (j + digits == s.size() || s[j + digits] != ':')) {
      // HHMM or HHMMSS[.f], the time's basic form.
      const int whole = std::stoi(std::string(s.substr(j, digits)));
      const int scale = digits == 6 ? 100 : 1;
      p.hour = whole / (100 * scale);
      p.minute = whole / scale % 100;
      p.second = digits == 6 ? whole % 100 : 0;
      i = j + digits;
      if (digits == 6 && !read_fraction()) return invalid();
    } else if (digits > 0) {
      i = j;
      const auto h = dt_digits(s, i, 2);
      if (!h || i >= s.size() || s[i] != ':') return invalid();
      ++i;
      const auto mi = dt_digits(s, i, 2);
      if (!mi) return invalid();
      p.hour = *h;
      p.minute = *mi;
      if (i < s.size() && s[i] == ':') {
        ++i;
        const auto sec = dt_digits(s, i, 2);
        if (!sec) return invalid();
        p.second = *sec;
        if (!read_fraction()) return invalid();
      }
    }
  }
  const DtZone zone = dt_read_zone(s.substr(i), p);
  if (zone == DtZone::out_of_range) throw SqlError("22009", fmt::format("time zone displacement out of range: \"{}\"", text));
  if (zone == DtZone::not_a_zone) {
    const std::string_view rest = dt_trim(s.substr(i));
    if (!rest.empty() && std::isalpha(static_cast<unsigned char>(rest.front())) != 0) {
      throw SqlError("0A000", fmt::format("the time zone \"{}\" in \"{}\" is not in lockstep's SQL subset (UTC and numeric "
                                          "offsets are; docs/sql.md)", rest, text));
    }
    return invalid();
  }
  const bool end_of_day = p.hour == 24 && p.minute == 0 && p.second == 0 && p.micros == 0;
  if (p.year <= 0 || p.month < 1 || p.month > 12 || p.day < 1 || static_cast<unsigned>(p.day) > days_in_month(p.year, p.month) ||
      (p.hour > 23 && !end_of_day) || p.minute > 59 || p.second > 60) {
    throw SqlError("22008", fmt::format("date/time field value out of range: \"{}\"", text));
  }
  auto out_of_range = [&]() -> std::int64_t { throw SqlError("22008", fmt::format("timestamp out of range: \"{}\"", text)); };
  if (p.year > kTimestampLastYear + 1) return out_of_range();  // its microseconds would pass int64's
  const std::int64_t days = days_from_civil(p.year, static_cast<unsigned>(p.month), static_cast<unsigned>(p.day));
  std::int64_t micros = days * kDtMicrosPerDay + (p.hour * 3600LL + p.minute * 60LL + p.second) * kDtMicrosPerSecond + p.micros;
  if (with_zone) {
    // Without a zone, a timestamptz is the session's local time (model/sql/session_style.h).
    const bool zone_given = !dt_trim(s.substr(i)).empty();
    micros = zone_given ? micros - p.offset_seconds * kDtMicrosPerSecond : utc_of_local(micros);
  }
  if (!is_timestamp_in_range(micros)) return out_of_range();
  return micros;
}

std::string timestamp_text(std::int64_t micros, bool with_zone) {
  if (micros == kTimestampInfinity) return "infinity";
  if (micros == kTimestampMinusInfinity) return "-infinity";
  const std::int64_t days = micros >= 0 ? micros / kDtMicrosPerDay : -((-micros + kDtMicrosPerDay - 1) / kDtMicrosPerDay);
  const std::int64_t in_day = micros - days * kDtMicrosPerDay;
  const CivilDate date = civil_from_days(days);
  const std::int64_t y = date.year;
  const std::int64_t seconds = in_day / kDtMicrosPerSecond;
  std::string out = fmt::format("{:04}-{:02}-{:02} {:02}:{:02}:{:02}", y > 0 ? y : 1 - y, date.month, date.day, seconds / 3600,
                                seconds / 60 % 60, seconds % 60);
  if (const std::int64_t frac = in_day % kDtMicrosPerSecond; frac != 0) {
    std::string f = fmt::format("{:06}", frac);
    while (f.back() == '0') f.pop_back();
    out += "." + f;
  }
  if (with_zone) out += "+00";
  if (y <= 0) out += " BC";
  return out;
}

CivilTime civil_time_of(std::int64_t wall_micros) {
  const std::int64_t days = wall_micros >= 0 ? wall_micros / kDtMicrosPerDay : -((-wall_micros + kDtMicrosPerDay - 1) / kDtMicrosPerDay);
  const std::int64_t in_day = wall_micros - days * kDtMicrosPerDay;
  const CivilDate date = civil_from_days(days);
  CivilTime c;
  c.year = static_cast<int>(date.year);
  c.month = date.month;
  c.day = date.day;
  c.weekday = weekday_of_days(days);
  c.day_of_year = static_cast<unsigned>(days - days_from_civil(date.year, 1, 1)) + 1;
  const std::int64_t seconds = in_day / kDtMicrosPerSecond;
  c.hour = seconds / 3600;
  c.minute = seconds / 60 % 60;
  c.second = seconds % 60;
  c.fraction = in_day % kDtMicrosPerSecond;
  return c;
}

std::int64_t parse_date(std::string_view text) {
  try {
    const std::int64_t whole = date_of(parse_timestamp(text, false));
    // date_in keeps the date's fields: a time of 24:00:00 or a leap second after them (which
    // a timestamp rolls into the next day) leaves the date as written.
    const std::string_view s = dt_trim(text);
    const bool bc = s.size() > 2 && (s.ends_with("BC") || s.ends_with("bc"));
    if (s.size() > 10 && s[4] == '-' && s[7] == '-' && (s[10] == ' ' || s[10] == 'T' || s[10] == 't') && !bc) {
      return date_of(parse_timestamp(s.substr(0, 10), false));
    }
    return whole;
  } catch (const SqlError& e) {
    if (e.sqlstate() != "22007" && e.sqlstate() != "22008") throw;
    if (std::string_view(e.what()).starts_with("timestamp out of range")) {
      // A date holds years to 5874897; lockstep's dates are a timestamp's midnight.
      const std::string_view s = dt_trim(text);
      std::size_t i = 0;
      const auto year = dt_digits(s, i, 7);
      if (year && *year <= kDateLastYear) {
        throw SqlError("0A000", fmt::format("the date \"{}\" is not in lockstep's SQL subset (years past {} are not; docs/sql.md)", text,
                                            kTimestampLastYear));
      }
      throw SqlError("22008", fmt::format("date out of range: \"{}\"", text));
    }
    if (e.sqlstate() == "22008") throw SqlError("22008", fmt::format("date/time field value out of range: \"{}\"", text));
    throw SqlError("22007", fmt::format("invalid input syntax for type date: \"{}\"", text));
  }
}

std::int64_t date_of(std::int64_t wall_micros) {
  if (is_infinite_timestamp(wall_micros)) return wall_micros;
  const std::int64_t days = wall_micros >= 0 ? wall_micros / kDtMicrosPerDay : -((-wall_micros + kDtMicrosPerDay - 1) / kDtMicrosPerDay);
  return days * kDtMicrosPerDay;
}

std::string date_text(std::int64_t midnight_micros) {
  if (is_infinite_timestamp(midnight_micros)) return timestamp_text(midnight_micros, false);
  const std::string ts = timestamp_text(midnight_micros, false);  // 'YYYY-MM-DD 00:00:00[ BC]'
  return ts.substr(0, ts.find(' ')) + (ts.ends_with(" BC") ? " BC" : "");
}

std::int64_t parse_time(std::string_view text) {
  std::string_view s = dt_trim(text);
  auto invalid = [&]() -> std::int64_t { throw SqlError("22007", fmt::format("invalid input syntax for type time: \"{}\"", text)); };
  if (s.size() > 11 && s[4] == '-' && s[7] == '-' && (s[10] == ' ' || s[10] == 'T')) s = dt_trim(s.substr(11));  // a date, ignored
  if (s.empty()) return invalid();
  if (s.find_first_not_of("0123456789:.") != std::string_view::npos) {  // 'allballs', 'now', '10:00 AM', a zone
    throw SqlError("0A000", fmt::format("the time input \"{}\" is not in lockstep's SQL subset (HH:MM[:SS[.f]] is; docs/sql.md)", text));
  }
  std::size_t i = 0, count = 0;
  const auto hour = dt_digits(s, i, 2, &count);
  if (!hour || count == 0 || i >= s.size() || s[i] != ':') return invalid();
  ++i;
  const auto minute = dt_digits(s, i, 2, &count);
  if (!minute || count != 2) return invalid();
  long double seconds = 0;
  if (i < s.size()) {
    if (s[i] != ':') return invalid();
    const std::string rest(s.substr(i + 1));
    if (rest.empty() || rest.find(':') != std::string::npos || !std::isdigit(static_cast<unsigned char>(rest[0]))) return invalid();
    char* end = nullptr;
    seconds = std::strtold(rest.c_str(), &end);
    if (end != rest.c_str() + rest.size()) return invalid();
  }
  const long double micros = std::nearbyint(((*hour * 60.0L + *minute) * 60.0L + seconds) * kDtMicrosPerSecond);
  if (*hour > 24 || *minute > 59 || seconds >= 61 || micros > kDtMicrosPerDay) {
    throw SqlError("22008", fmt::format("date/time field value out of range: \"{}\"", text));
  }
  return static_cast<std::int64_t>(micros);
}

std::string time_text(std::int64_t micros) {
  const std::int64_t seconds = micros / kDtMicrosPerSecond;
  std::string out = fmt::format("{:02}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
  if (const std::int64_t frac = micros % kDtMicrosPerSecond; frac != 0) {
    std::string f = fmt::format("{:06}", frac);
    while (f.back() == '0') f.pop_back();
    out += "." + f;
  }
  return out;
}

bool is_utc_zone(std::string_view zone) {
  DtParsed p;
  const std::string z = dt_lower(dt_trim(zone));
  return !z.empty() && dt_read_zone(z, p) == DtZone::read && p.offset_seconds == 0;
}

std::int64_t timestamp_with_precision(std::int64_t micros, int precision) {
  if (is_infinite_timestamp(micros) || precision < 0 || precision >= 6) return micros;
  std::int64_t scale = 1;
  for (int i = precision; i < 6; ++i) scale *= 10;
  const std::int64_t half = scale / 2;
  if (micros >= 0) return (micros + half) / scale * scale;
  return -((-micros + half) / scale * scale);
}

std::string_view date_unit(std::string_view lower) {
  static constexpr std::pair<std::string_view, std::string_view> kUnits[] = {
      {"c", "century"}, {"cent", "century"}, {"centuries", "century"}, {"century", "century"}, {"d", "day"}, {"day", "day"},
      {"days", "day"}, {"dec", "decade"}, {"decade", "decade"}, {"decades", "decade"}, {"decs", "decade"}, {"h", "hour"},
      {"hour", "hour"}, {"hours", "hour"}, {"hr", "hour"}, {"hrs", "hour"}, {"m", "minute"}, {"microsecon", "microseconds"},
      {"mil", "millennium"}, {"millennia", "millennium"}, {"millennium", "millennium"}, {"millisecon", "milliseconds"},
      {"mils", "millennium"}, {"min", "minute"}, {"mins", "minute"}, {"minute", "minute"}, {"minutes", "minute"},
      {"mon", "month"}, {"mons", "month"}, {"month", "month"}, {"months", "month"}, {"ms", "milliseconds"},
      {"msec", "milliseconds"}, {"mseconds", "milliseconds"}, {"msecs", "milliseconds"}, {"qtr", "quarter"},
      {"quarter", "quarter"}, {"s", "second"}, {"sec", "second"}, {"second", "second"}, {"seconds", "second"},
      {"secs", "second"}, {"timezone", "timezone"}, {"timezone_h", "timezone_hour"}, {"timezone_m", "timezone_minute"},
      {"us", "microseconds"}, {"usec", "microseconds"}, {"useconds", "microseconds"}, {"usecs", "microseconds"},
      {"w", "week"}, {"week", "week"}, {"weeks", "week"}, {"y", "year"}, {"year", "year"}, {"years", "year"},
      {"yr", "year"}, {"yrs", "year"}};
  const std::string_view key = lower.substr(0, 10);  // TOKMAXLEN
  for (const auto& [word, unit] : kUnits) {
    if (word == key) return unit;
  }
  return {};
}

std::int64_t truncate_timestamp(std::string_view unit_in, std::int64_t micros, std::string_view type, bool* below_a_day) {
  std::string lower;
  for (const char c : unit_in) lower.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::string unit(date_unit(lower));
  if (unit.empty()) throw SqlError("22023", fmt::format("unit \"{}\" not recognized for type {}", lower, type));
  if (unit.starts_with("timezone")) throw SqlError("0A000", fmt::format("unit \"{}\" not supported for type {}", lower, type));
  if (unit == "microseconds" || unit == "milliseconds") unit.pop_back();
  constexpr std::int64_t kDay = 86'400'000'000;
  const std::array<std::pair<std::string_view, std::int64_t>, 5> clocks = {
      {{"microsecond", 1}, {"millisecond", 1'000}, {"second", 1'000'000}, {"minute", 60'000'000}, {"hour", 3'600'000'000}}};
  const bool clock = std::any_of(clocks.begin(), clocks.end(), [&](const auto& c) { return c.first == unit; });
  if (below_a_day != nullptr) *below_a_day = clock;
  if (is_infinite_timestamp(micros)) return micros;
  auto floor_to = [](std::int64_t v, std::int64_t step) { return v - ((v % step) + step) % step; };
  for (const auto& [name, step] : clocks) {
    if (name == unit) return floor_to(micros, step);
  }
  const std::int64_t days = floor_to(micros, kDay) / kDay;
  const CivilDate date = civil_from_days(days);
  std::int64_t start = days;
  const std::int64_t y = date.year;
  if (unit == "week") {
    start = days - (weekday_of_days(days) + 6) % 7;  // back to the Monday
  } else if (unit == "month") {
    start = days_from_civil(y, date.month, 1);
  } else if (unit == "quarter") {
    start = days_from_civil(y, (date.month - 1) / 3 * 3 + 1, 1);
  } else if (unit == "year") {
    start = days_from_civil(y, 1, 1);
  } else if (unit == "decade" || unit == "century" || unit == "millennium") {
    if (y <= 0) throw SqlError("0A000", fmt::format("date_trunc('{}') of a year before 1 is not in lockstep's SQL subset", unit_in));
    const std::int64_t span = unit == "decade" ? 10 : unit == "millennium" ? 1000 : 100;
    const std::int64_t first = unit == "decade" ? y / 10 * 10 : (y + span - 1) / span * span - span + 1;
    start = days_from_civil(first, 1, 1);
  }
  return start * kDay;
}

}  // namespace lockstep::sql
