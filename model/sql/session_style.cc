#include "lockstep/model/sql/session_style.h"

#include "lockstep/model/sql/arrays.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "lockstep/model/sql/civil_days.h"
#include "lockstep/model/sql/datetime.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/time_zones.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::sql {
namespace {

constexpr std::int64_t kSsMicrosPerSecond = 1'000'000;
constexpr std::int64_t kSsMicrosPerDay = 86'400 * kSsMicrosPerSecond;
constexpr std::int64_t kSsMicrosPerHour = 3'600 * kSsMicrosPerSecond;

thread_local const SqlContextSource* current_source = nullptr;
const SessionStyle kDefaultStyle;

const SessionStyle& current_style_ref() { return current_source == nullptr ? kDefaultStyle : current_source->style(); }

std::int64_t micros_of_day(std::int64_t day_number) { return day_number * kSsMicrosPerDay; }

// The n-th (1-based; 0: the last) Sunday of a month.
std::int64_t sunday(int year, unsigned month, unsigned n) { return nth_weekday_of_month(year, month, 0, n); }

std::int64_t day_start(int year, unsigned month, unsigned day) { return micros_of_day(days_from_civil(year, month, day)); }

// A span of daylight time, as UTC instants [start, end), and its abbreviation.
struct Daylight {
  std::int64_t start = 0, end = 0;
  std::string_view abbreviation = "PDT";
};
struct DaylightSpans {
  std::array<Daylight, 2> spans{};
  int count = 0;
};

// PST8PDT's daylight time in the local standard `year` (tzdata's zone PST8PDT, -8:00 with the
// US rules, P%sT): summers of 1918 and 1919 and from 1967 on, war time from 9 February 1942
// and peace time from 14 August 1945 (23:00 UTC) to 30 September 1945; none before 1918.
// The changes are at 02:00 local time: 10:00 UTC into daylight time, 09:00 UTC out of it.
DaylightSpans daylight(int year) {
  constexpr std::int64_t in = 10 * kSsMicrosPerHour, out = 9 * kSsMicrosPerHour, midnight = 8 * kSsMicrosPerHour;
  auto summer = [](std::int64_t start, std::int64_t end) { return DaylightSpans{{Daylight{start, end}}, 1}; };
  if (year >= 2007) return summer(micros_of_day(sunday(year, 3, 2)) + in, micros_of_day(sunday(year, 11, 1)) + out);
  const std::int64_t october = micros_of_day(sunday(year, 10, 0)) + out;
  if (year >= 1987) return summer(micros_of_day(sunday(year, 4, 1)) + in, october);
  if (year >= 1976 || (year >= 1967 && year <= 1973)) return summer(micros_of_day(sunday(year, 4, 0)) + in, october);
  if (year == 1975) return summer(micros_of_day(sunday(year, 2, 0)) + in, october);
  if (year == 1974) return summer(day_start(year, 1, 6) + in, october);
  if (year == 1918 || year == 1919) return summer(micros_of_day(sunday(year, 3, 0)) + in, october);
  if (year >= 1942 && year <= 1945) {
    const std::int64_t start = year == 1942 ? day_start(year, 2, 9) + in : day_start(year, 1, 1) + midnight;
    if (year < 1945) return {{Daylight{start, day_start(year + 1, 1, 1) + midnight, "PWT"}}, 1};
    const std::int64_t peace = day_start(year, 8, 14) + 23 * kSsMicrosPerHour;
    return {{Daylight{start, peace, "PWT"}, Daylight{peace, day_start(year, 9, 30) + out, "PPT"}}, 2};
  }
  return {};
}

using Fields = CivilTime;
Fields fields_of(std::int64_t micros) { return civil_time_of(micros); }

std::string fraction_text(std::int64_t fraction) {
  if (fraction == 0) return "";
  std::string f = fmt::format("{:06}", fraction);
  while (f.back() == '0') f.pop_back();
  return "." + f;
}

std::string offset_text(int offset_seconds) {
  const int a = std::abs(offset_seconds);
  std::string out = fmt::format("{}{:02}", offset_seconds < 0 ? '-' : '+', a / 3600);
  if (a % 3600 != 0) out += fmt::format(":{:02}", a / 60 % 60);
  if (a % 60 != 0) out += fmt::format(":{:02}", a % 60);
  return out;
}

std::string timestamp_display(std::int64_t micros, bool with_zone) {
  if (micros == kTimestampInfinity) return "infinity";
  if (micros == kTimestampMinusInfinity) return "-infinity";
  const SessionStyle& style = current_style_ref();
  ZoneAt zone;
  if (with_zone) zone = zone_at(micros);
  const Fields f = fields_of(micros + static_cast<std::int64_t>(zone.offset_seconds) * kSsMicrosPerSecond);
  const int shown_year = f.year > 0 ? f.year : 1 - f.year;
  const std::string bc = f.year > 0 ? "" : " BC";
  const std::string clock = fmt::format("{:02}:{:02}:{:02}{}", f.hour, f.minute, f.second, fraction_text(f.fraction));
  if (!style.postgres_dates) {
    return fmt::format("{:04}-{:02}-{:02} {}{}{}", shown_year, f.month, f.day, clock, with_zone ? offset_text(zone.offset_seconds) : "", bc);
  }
  static constexpr const char* kDays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  static constexpr const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const std::string date = style.day_first ? fmt::format("{:02} {}", f.day, kMonths[f.month - 1]) : fmt::format("{} {:02}", kMonths[f.month - 1], f.day);
  return fmt::format("{} {} {} {:04}{}{}", kDays[f.weekday], date, clock, shown_year, with_zone ? " " + std::string(zone.abbreviation) : "", bc);
}

// A date in DateStyle: ISO 'YYYY-MM-DD', Postgres 'MM-DD-YYYY' (DMY: 'DD-MM-YYYY').
std::string date_display(std::int64_t midnight) {
  const SessionStyle& style = current_style_ref();
  if (!style.postgres_dates || is_infinite_timestamp(midnight)) return date_text(midnight);
  const Fields f = fields_of(midnight);
  const int shown_year = f.year > 0 ? f.year : 1 - f.year;
  const std::string bc = f.year > 0 ? "" : " BC";
  if (style.day_first) return fmt::format("{:02}-{:02}-{:04}{}", f.day, f.month, shown_year, bc);
  return fmt::format("{:02}-{:02}-{:04}{}", f.month, f.day, shown_year, bc);
}

// IntervalStyle postgres_verbose (EncodeInterval's INTSTYLE_POSTGRES_VERBOSE).
std::string verbose_interval(const Interval& iv) {
  const std::int64_t year = iv.months / 12, mon = iv.months % 12, mday = iv.days;
  std::int64_t t = iv.micros;
  const std::int64_t hour = t / kSsMicrosPerHour;
  t -= hour * kSsMicrosPerHour;
  const std::int64_t min = t / (60 * kSsMicrosPerSecond);
  t -= min * 60 * kSsMicrosPerSecond;
  const std::int64_t sec = t / kSsMicrosPerSecond;
  const std::int64_t fsec = t - sec * kSsMicrosPerSecond;
  std::string out = "@";
  bool is_zero = true, is_before = false;
  auto part = [&](std::int64_t value, std::string_view unit) {
    if (value == 0) return;
    if (is_zero) {
      is_before = value < 0;
      value = std::abs(value);
    } else if (is_before) {
      value = -value;
    }
    out += fmt::format(" {} {}{}", value, unit, value == 1 ? "" : "s");
    is_zero = false;
  };
  part(year, "year");
  part(mon, "mon");
  part(mday, "day");
  part(hour, "hour");
  part(min, "min");
  if (sec != 0 || fsec != 0) {
    out += ' ';
    if (sec < 0 || (sec == 0 && fsec < 0)) {
      if (is_zero) {
        is_before = true;
      } else if (!is_before) {
        out += '-';
      }
    } else if (is_before) {
      out += '-';
    }
    out += fmt::format("{}{} sec{}", std::abs(sec), fraction_text(std::abs(fsec)), std::abs(sec) != 1 || fsec != 0 ? "s" : "");
    is_zero = false;
  }
  if (is_zero) out += " 0";
  if (is_before) out += " ago";
  return out;
}

}  // namespace

const SessionStyle& session_style() { return current_style_ref(); }
int current_record_type_index(std::string_view table) { return current_source == nullptr ? -1 : current_source->record_type_index(table); }
const CreateTable* current_record_type(int type) { return current_source == nullptr ? nullptr : current_source->record_type(type); }
const std::vector<EnumType>* current_enum_types() { return current_source == nullptr ? nullptr : current_source->enum_types(); }
const CreateFunction* current_sql_function(std::string_view name) {
  return current_source == nullptr ? nullptr : current_source->sql_function(name);
}
std::vector<const CreateFunction*> current_sql_functions(std::string_view name) {
  return current_source == nullptr ? std::vector<const CreateFunction*>{} : current_source->sql_functions(name);
}

bool function_named_anywhere(std::string_view name) { return current_source != nullptr && current_source->function_named_anywhere(name); }
bool current_has_schema(std::string_view name) { return current_source == nullptr ? name == "public" : current_source->has_schema(name); }
bool current_has_temp_schema() { return current_source != nullptr && current_source->has_temp_schema(); }

SqlContextScope::SqlContextScope(const SqlContextSource* source) : saved_(current_source) { current_source = source; }
SqlContextScope::~SqlContextScope() { current_source = saved_; }

std::vector<std::string> search_path_schemas() { return path_schemas(current_style_ref().search_path, current_source); }

std::vector<std::string> path_schemas(std::string_view path, const SqlContextSource* source) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < path.size()) {
    std::size_t end = path.find(", ", at);
    if (end == std::string_view::npos) end = path.size();
    std::string name(path.substr(at, end - at));
    if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
    if (name == "$user") name = "postgres";  // the session's user (the simulated server has one)
    if (source == nullptr ? name == "public" : source->has_schema(name)) out.push_back(std::move(name));
    at = end + 2;
  }
  return out;
}

std::optional<std::string> current_schema() {
  std::vector<std::string> path = search_path_schemas();
  if (path.empty()) return std::nullopt;
  return std::move(path.front());
}

std::string_view function_key(std::string_view name) { return name.starts_with("public.") ? name.substr(7) : name; }

void reset_style_setting(SessionStyle& style, const SessionStyle& start, std::string_view name) {
  if (name == "search_path") style.search_path = start.search_path;
  if (name == "timezone") std::tie(style.zone, style.named_zone) = std::pair(start.zone, start.named_zone);
  if (name == "datestyle") std::tie(style.postgres_dates, style.day_first) = std::pair(start.postgres_dates, start.day_first);
  if (name == "intervalstyle") style.verbose_intervals = start.verbose_intervals;
}

std::string zone_name_of_offset(double seconds_east, std::string_view as_written) {
  if (!(std::abs(seconds_east) < 168.0 * 3600)) {  // (NaN too)
    throw SqlError("22023", fmt::format("invalid value for parameter \"TimeZone\": \"{}\"", as_written));
  }
  const auto west = static_cast<long>(-seconds_east);  // check_timezone's, truncated toward zero
  long rest = std::labs(west);
  std::string offset = fmt::format("{:02}", rest / 3600);
  rest %= 3600;
  if (rest != 0) {
    offset += fmt::format(":{:02}", rest / 60);
    if (rest % 60 != 0) offset += fmt::format(":{:02}", rest % 60);
  }
  return west > 0 ? fmt::format("<-{}>+{}", offset, offset) : fmt::format("<+{}>-{}", offset, offset);
}

bool apply_style_setting(SessionStyle& style, std::string_view name, std::string_view value) {
  if (name == "search_path") {  // any list of names (lower case, as the parser gives them)
    style.search_path = std::string(value);
    return true;
  }
  if (name == "timezone") {
    if (is_utc_zone(value)) {
      style.zone = SessionStyle::Zone::utc;
      style.named_zone = nullptr;
      return true;
    }
    if (value == "pst8pdt") {
      style.zone = SessionStyle::Zone::pst8pdt;
      style.named_zone = nullptr;
      return true;
    }
    const TimeZone* named = find_time_zone(value);
    if (named == nullptr) return false;
    style.zone = SessionStyle::Zone::named;
    style.named_zone = named;
    return true;
  }
  if (name == "datestyle") {
    if (value == "iso" || value == "iso, mdy" || value == "iso, dmy" || value == "iso, ymd") {
      style.postgres_dates = false;
      style.day_first = value == "iso, dmy";
      return true;
    }
    if (value == "postgres" || value == "postgres, mdy" || value == "postgres, dmy") {
      style.postgres_dates = true;
      style.day_first = value == "postgres, dmy";
      return true;
    }
    return false;
  }
  if (name == "intervalstyle") {
    if (value != "postgres" && value != "postgres_verbose") return false;
    style.verbose_intervals = value == "postgres_verbose";
    return true;
  }
  return false;
}

SessionStyle startup_style(const std::vector<std::pair<std::string, std::string>>& settings) {
  SessionStyle style;
  for (const auto& [name, value] : settings) {
    std::string lower_name = name;
    std::transform(lower_name.begin(), lower_name.end(), lower_name.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    // As the parser gives a SET's value: its list's words trimmed, in lower case but quoted names.
    std::vector<std::string> words;
    for (std::size_t from = 0; from <= value.size();) {
      const std::size_t comma = std::min(value.find(',', from), value.size());
      std::string word(value.substr(from, comma - from));
      while (!word.empty() && std::isspace(static_cast<unsigned char>(word.front()))) word.erase(word.begin());
      while (!word.empty() && std::isspace(static_cast<unsigned char>(word.back()))) word.pop_back();
      if (word.empty() || word.front() != '"') {
        std::transform(word.begin(), word.end(), word.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      }
      words.push_back(std::move(word));
      from = comma + 1;
    }
    if (!is_pinned_style(lower_name) || !apply_style_setting(style, lower_name, fmt::format("{}", fmt::join(words, ", ")))) {
      throw std::invalid_argument(fmt::format("the connection setting {} = '{}' is not one the simulation models (TimeZone, DateStyle, "
                                              "IntervalStyle and search_path, with values a SET of them may have)", name, value));
    }
  }
  return style;
}

std::string style_setting_text(const SessionStyle& style, std::string_view name) {
  if (name == "timezone") return style.zone == SessionStyle::Zone::named ? style.named_zone->name() : style.zone == SessionStyle::Zone::utc ? "UTC" : "PST8PDT";
  if (name == "datestyle") return fmt::format("{}, {}", style.postgres_dates ? "Postgres" : "ISO", style.day_first ? "DMY" : "MDY");
  if (name == "search_path") return style.search_path;
  return style.verbose_intervals ? "postgres_verbose" : "postgres";
}

ZoneAt zone_at(std::int64_t utc_micros) {
  if (current_style_ref().zone == SessionStyle::Zone::utc || is_infinite_timestamp(utc_micros)) return {};
  if (const TimeZone* named = current_style_ref().named_zone) {
    const TimeZone::Offset o = named->at(utc_micros);
    return {o.seconds, o.abbreviation};
  }
  const DaylightSpans spans = daylight(fields_of(utc_micros - 8 * kSsMicrosPerHour).year);
  for (int i = 0; i < spans.count; ++i) {
    const Daylight& d = spans.spans[static_cast<std::size_t>(i)];
    if (utc_micros >= d.start && utc_micros < d.end) return {-7 * 3600, d.abbreviation};
  }
  return {-8 * 3600, "PST"};
}

std::int64_t utc_of_local(std::int64_t local_micros) {
  if (current_style_ref().zone == SessionStyle::Zone::utc || is_infinite_timestamp(local_micros)) return local_micros;
  if (const TimeZone* named = current_style_ref().named_zone) return named->utc_of_local(local_micros);
  const std::int64_t standard = local_micros + 8 * kSsMicrosPerHour, daylight_time = local_micros + 7 * kSsMicrosPerHour;
  const bool standard_valid = zone_at(standard).offset_seconds == -8 * 3600;
  const bool daylight_valid = zone_at(daylight_time).offset_seconds == -7 * 3600;
  return daylight_valid && !standard_valid ? daylight_time : standard;
}

std::int64_t local_of_utc(std::int64_t utc_micros) {
  if (is_infinite_timestamp(utc_micros)) return utc_micros;
  return utc_micros + static_cast<std::int64_t>(zone_at(utc_micros).offset_seconds) * kSsMicrosPerSecond;
}

std::string display_text(const Value& v) {
  if (v.is_null()) return "";
  switch (v.type()) {
    case Type::timestamptz: return timestamp_display(v.micros(), true);
    case Type::timestamp: return timestamp_display(v.micros(), false);
    case Type::date: return date_display(v.micros());
    case Type::interval: return current_style_ref().verbose_intervals ? verbose_interval(v.as_interval()) : v.text_output();
    case Type::array: return array_display(v);
    case Type::record: return record_display(v);
    default: return v.text_output();
  }
}

}  // namespace lockstep::sql
