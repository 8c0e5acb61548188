#include "lockstep/model/sql/time_zones.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include <fmt/format.h>

#include "lockstep/model/sql/civil_days.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::sql {
namespace {

constexpr std::int64_t kTzUnixToPgEpoch = 946'684'800;  // 2000-01-01 in Unix seconds
constexpr std::int64_t kTzMicros = 1'000'000;
constexpr std::string_view kTzDirectory = "/usr/share/zoneinfo";

SqlError tz_unmodelled(std::string_view name, std::string_view what) {
  return SqlError("0A000", fmt::format("the time zone {} ({}) is not in lockstep's SQL subset (docs/sql.md)", name, what));
}

constexpr std::int64_t kTzDays1970To2000 = 10'957;

// Days from 1970-01-01 of a civil date (proleptic Gregorian).
std::int64_t tz_days_from_civil(std::int64_t y, int m, int d) {
  return days_from_civil(y, static_cast<unsigned>(m), static_cast<unsigned>(d)) + kTzDays1970To2000;
}

std::int64_t tz_year_of_days(std::int64_t z) { return civil_from_days(z - kTzDays1970To2000).year; }

std::int64_t tz_floor_div(std::int64_t a, std::int64_t b) { return a / b - ((a % b != 0 && (a < 0) != (b < 0)) ? 1 : 0); }

// Day `d` (0: Sunday) of week `w` (5: the last) of month `m` of year `y`, in days from 1970.
std::int64_t tz_rule_day(std::int64_t y, int m, int w, int d) {
  const std::int64_t first = tz_days_from_civil(y, m, 1);
  const std::int64_t next = m == 12 ? tz_days_from_civil(y + 1, 1, 1) : tz_days_from_civil(y, m + 1, 1);
  const int weekday = static_cast<int>(((first + 4) % 7 + 7) % 7);
  std::int64_t day = first + (d - weekday + 7) % 7 + 7 * (w - 1);
  while (day >= next) day -= 7;
  return day;
}

class TzReader {
 public:
  TzReader(std::string_view zone, std::string_view bytes) : zone_(zone), bytes_(bytes) {}
  std::uint64_t unsigned_at(std::size_t at, int size) const {
    if (at + static_cast<std::size_t>(size) > bytes_.size()) throw SqlError("22023", fmt::format("time zone file \"{}\" is damaged", zone_));
    std::uint64_t v = 0;
    for (int i = 0; i < size; ++i) v = (v << 8) | static_cast<unsigned char>(bytes_[at + static_cast<std::size_t>(i)]);
    return v;
  }
  std::int64_t signed_at(std::size_t at, int size) const {
    const std::uint64_t v = unsigned_at(at, size);
    if (size == 4) return static_cast<std::int32_t>(static_cast<std::uint32_t>(v));
    return static_cast<std::int64_t>(v);
  }
  std::string_view bytes() const { return bytes_; }

 private:
  std::string_view zone_;
  std::string_view bytes_;
};

// A POSIX TZ string's parts (the TZif footer): names, offsets and Mm.w.d rules.
class TzPosixRule {
 public:
  TzPosixRule(std::string_view zone, std::string_view text) : zone_(zone), s_(text) {}
  // A name: <...> or letters; `may_be_empty`: none (a zone named "-03:30", as the server takes it).
  std::string name(bool may_be_empty) {
    std::string out;
    if (peek() == '<') {
      ++at_;
      while (at_ < s_.size() && s_[at_] != '>') out += s_[at_++];
      ++at_;
      return out;
    }
    while (at_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[at_])) != 0) out += s_[at_++];
    if (out.empty() && !may_be_empty) throw tz_unmodelled(zone_, fmt::format("the rule \"{}\"", s_));
    return out;
  }
  // [+-]h[:mm[:ss]] in seconds.
  int clock() {
    int sign = 1;
    if (peek() == '+' || peek() == '-') sign = s_[at_++] == '-' ? -1 : 1;
    int parts[3] = {0, 0, 0};
    for (int i = 0; i < 3; ++i) {
      if (i > 0 && peek() != ':') break;
      if (i > 0) ++at_;
      if (std::isdigit(static_cast<unsigned char>(peek())) == 0) throw tz_unmodelled(zone_, fmt::format("the rule \"{}\"", s_));
      while (std::isdigit(static_cast<unsigned char>(peek())) != 0 && parts[i] < 1000) parts[i] = parts[i] * 10 + (s_[at_++] - '0');
    }
    // tzcode's bounds (getsecs): hours to a week less one, minutes and seconds within theirs.
    if (parts[0] > 167 || parts[1] > 59 || parts[2] > 60) throw tz_unmodelled(zone_, fmt::format("the rule \"{}\"", s_));
    return sign * (parts[0] * 3600 + parts[1] * 60 + parts[2]);
  }
  bool is_offset_next() const { return at_ < s_.size() && (s_[at_] == '+' || s_[at_] == '-' || std::isdigit(static_cast<unsigned char>(s_[at_])) != 0); }
  // ",Mm.w.d[/time]"
  void date(int& month, int& week, int& day, int& time) {
    if (peek() != ',') throw tz_unmodelled(zone_, fmt::format("the rule \"{}\"", s_));
    ++at_;
    if (peek() != 'M') throw tz_unmodelled(zone_, fmt::format("the rule \"{}\" (a day of the year)", s_));
    ++at_;
    month = number();
    expect('.');
    week = number();
    expect('.');
    day = number();
    if (month < 1 || month > 12 || week < 1 || week > 5 || day < 0 || day > 6) throw tz_unmodelled(zone_, fmt::format("the rule \"{}\"", s_));
    if (peek() == '/') {
      ++at_;
      time = clock();
    }
  }
  bool done() const { return at_ >= s_.size(); }
  char peek() const { return at_ < s_.size() ? s_[at_] : '\0'; }

 private:
  int number() {
    if (std::isdigit(static_cast<unsigned char>(peek())) == 0) throw tz_unmodelled(zone_, fmt::format("the rule \"{}\"", s_));
    int n = 0;
    while (std::isdigit(static_cast<unsigned char>(peek())) != 0) n = n * 10 + (s_[at_++] - '0');
    return n;
  }
  void expect(char c) {
    if (peek() != c) throw tz_unmodelled(zone_, fmt::format("the rule \"{}\"", s_));
    ++at_;
  }
  std::string_view zone_;
  std::string_view s_;
  std::size_t at_ = 0;
};

}  // namespace

std::unique_ptr<TimeZone> TimeZone::from_tzif(std::string name, std::string_view bytes) {
  auto z = std::make_unique<TimeZone>();
  z->name_ = std::move(name);
  const TzReader r(z->name_, bytes);
  if (bytes.substr(0, 4) != "TZif") throw SqlError("22023", fmt::format("time zone file \"{}\" is damaged", z->name_));
  const char version = bytes.size() > 4 ? bytes[4] : '\0';
  std::size_t header = 0;
  int time_size = 4;
  auto counts = [&](std::size_t at) {
    std::array<std::uint64_t, 6> c{};
    for (std::size_t i = 0; i < 6; ++i) c[i] = r.unsigned_at(at + 20 + 4 * i, 4);
    return c;  // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
  };
  std::array<std::uint64_t, 6> c = counts(0);
  if (version >= '2') {  // skip the 32-bit block to the 64-bit one
    header = 44 + c[3] * 4 + c[3] + c[4] * 6 + c[5] + c[2] * 8 + c[1] + c[0];
    c = counts(header);
    time_size = 8;
  }
  std::size_t at = header + 44;
  const std::uint64_t timecnt = c[3], typecnt = c[4], charcnt = c[5];
  if (typecnt == 0) throw SqlError("22023", fmt::format("time zone file \"{}\" is damaged", z->name_));
  for (std::uint64_t i = 0; i < timecnt; ++i) z->transitions_.push_back(r.signed_at(at + i * static_cast<std::uint64_t>(time_size), time_size));
  at += timecnt * static_cast<std::uint64_t>(time_size);
  for (std::uint64_t i = 0; i < timecnt; ++i) {
    const auto type = static_cast<std::uint8_t>(r.unsigned_at(at + i, 1));
    if (type >= typecnt) throw SqlError("22023", fmt::format("time zone file \"{}\" is damaged", z->name_));
    z->transition_types_.push_back(type);
  }
  at += timecnt;
  const std::size_t abbreviations = at + typecnt * 6;
  for (std::uint64_t i = 0; i < typecnt; ++i) {
    Type t;
    t.seconds = static_cast<int>(r.signed_at(at + i * 6, 4));
    t.daylight = r.unsigned_at(at + i * 6 + 4, 1) != 0;
    const std::size_t index = r.unsigned_at(at + i * 6 + 5, 1);
    if (index >= charcnt) throw SqlError("22023", fmt::format("time zone file \"{}\" is damaged", z->name_));
    const std::string_view chars = bytes.substr(abbreviations, charcnt);
    t.abbreviation = std::string(chars.substr(index, chars.find('\0', index) - index));
    z->types_.push_back(std::move(t));
  }
  at = abbreviations + charcnt + c[2] * static_cast<std::uint64_t>(time_size + 4) + c[1] + c[0];
  if (version >= '2' && at < bytes.size() && bytes[at] == '\n') {  // the footer: a POSIX TZ rule
    const std::size_t end = bytes.find('\n', at + 1);
    const std::string_view text = bytes.substr(at + 1, end == std::string_view::npos ? std::string_view::npos : end - at - 1);
    if (!text.empty()) z->read_rule(text, false);
  }
  return z;
}

void TimeZone::read_rule(std::string_view text, bool posix_name) {
  TzPosixRule p(name_, text);
  rule_.present = true;
  rule_.standard.abbreviation = p.name(posix_name);
  rule_.standard.seconds = -p.clock();
  if (p.done()) return;
  rule_.has_daylight = true;
  rule_.daylight.daylight = true;
  rule_.daylight.abbreviation = p.name(false);
  rule_.daylight.seconds = p.is_offset_next() ? -p.clock() : rule_.standard.seconds + 3600;
  if (posix_name && p.done()) {  // no dates: the server's default rules (tzcode's TZDEFRULESTRING, the US's)
    rule_.start_month = 3, rule_.start_week = 2, rule_.start_day = 0;
    rule_.end_month = 11, rule_.end_week = 1, rule_.end_day = 0;
    return;
  }
  p.date(rule_.start_month, rule_.start_week, rule_.start_day, rule_.start_time);
  p.date(rule_.end_month, rule_.end_week, rule_.end_day, rule_.end_time);
  if (!p.done()) throw tz_unmodelled(name_, fmt::format("the rule \"{}\"", text));
}

std::unique_ptr<TimeZone> TimeZone::from_posix(std::string_view text) {
  std::string name(text);
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  // Dates as days of the year (Jn, n) are not modelled (nullptr: the callers refuse a name with
  // digits); any other malformed text is no zone.
  for (std::size_t comma = name.find(','); comma != std::string::npos; comma = name.find(',', comma + 1)) {
    if (comma + 1 < name.size() && name[comma + 1] != 'M') return nullptr;
  }
  auto z = std::make_unique<TimeZone>();
  z->name_ = name;
  try {
    z->read_rule(name, true);
  } catch (const SqlError&) {
    return nullptr;
  }
  z->types_.push_back(z->rule_.standard);
  return z;
}

TimeZone::Offset TimeZone::by_rule(std::int64_t unix_seconds) const {
  if (!rule_.has_daylight) return {rule_.standard.seconds, rule_.standard.abbreviation};
  const std::int64_t year = tz_year_of_days(tz_floor_div(unix_seconds + rule_.standard.seconds, 86400));
  const std::int64_t start =
      tz_rule_day(year, rule_.start_month, rule_.start_week, rule_.start_day) * 86400 + rule_.start_time - rule_.standard.seconds;
  const std::int64_t end = tz_rule_day(year, rule_.end_month, rule_.end_week, rule_.end_day) * 86400 + rule_.end_time - rule_.daylight.seconds;
  const bool daylight = start < end ? (unix_seconds >= start && unix_seconds < end) : !(unix_seconds >= end && unix_seconds < start);
  const Type& t = daylight ? rule_.daylight : rule_.standard;
  return {t.seconds, t.abbreviation};
}

TimeZone::Offset TimeZone::at(std::int64_t utc_micros) const {
  const std::int64_t unix_seconds = tz_floor_div(utc_micros, kTzMicros) + kTzUnixToPgEpoch;
  if (rule_.present && (transitions_.empty() || unix_seconds >= transitions_.back())) return by_rule(unix_seconds);
  if (transitions_.empty() || unix_seconds < transitions_.front()) return {types_.front().seconds, types_.front().abbreviation};
  const auto it = std::upper_bound(transitions_.begin(), transitions_.end(), unix_seconds);
  const Type& t = types_[transition_types_[static_cast<std::size_t>(it - transitions_.begin()) - 1]];
  return {t.seconds, t.abbreviation};
}

std::int64_t TimeZone::utc_of_local(std::int64_t local_micros) const {
  constexpr std::int64_t kDay = 86'400 * kTzMicros;
  const int before = at(local_micros - kDay).seconds, after = at(local_micros + kDay).seconds;
  const std::int64_t early = local_micros - before * kTzMicros, late = local_micros - after * kTzMicros;
  const bool early_valid = at(early).seconds == before, late_valid = at(late).seconds == after;
  if (early_valid && !late_valid) return early;
  if (late_valid && !early_valid) return late;
  return std::max(early, late);  // one reading, or a gap or an overlap: the later instant
}

bool is_zone_name(std::string_view name) {
  if (name.empty() || name.front() == '/' || name.find("..") != std::string_view::npos) return false;
  return std::all_of(name.begin(), name.end(), [](unsigned char c) { return std::isalnum(c) != 0 || c == '/' || c == '_' || c == '-' || c == '+'; });
}

namespace {

// The system tzdata's file of that name (each part matched without regard to case, as the
// server scans the directory), or nullptr.
std::unique_ptr<TimeZone> zone_file(const std::string& key) {
  if (!is_zone_name(key)) return nullptr;
  std::filesystem::path path(kTzDirectory);
  std::string canonical;
  std::size_t from = 0;
  while (from <= key.size()) {
    const std::size_t slash = std::min(key.find('/', from), key.size());
    const std::string part = key.substr(from, slash - from);
    std::error_code ec;
    std::string found;
    for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
      std::string n = entry.path().filename().string(), lower = n;
      std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
      if (lower == part) found = n;
    }
    if (found.empty()) return nullptr;
    path /= found;
    canonical += (canonical.empty() ? "" : "/") + found;
    from = slash + 1;
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return nullptr;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return TimeZone::from_tzif(canonical, bytes.str());
}

}  // namespace

const TimeZone* find_time_zone(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, std::unique_ptr<TimeZone>, std::less<>> zones;  // by name in lower case
  if (name.empty() || name.size() > 255) return nullptr;
  std::string key(name);
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = zones.find(key); it != zones.end()) return it->second.get();
  std::unique_ptr<TimeZone> zone = zone_file(key);
  if (zone == nullptr) zone = TimeZone::from_posix(name);  // as pg_tzset: a file first, then a POSIX rule
  return zones.emplace(key, std::move(zone)).first->second.get();
}

}  // namespace lockstep::sql
