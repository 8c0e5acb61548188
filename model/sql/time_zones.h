// model/sql/time_zones.h: IANA time zones (`SET TimeZone = 'Europe/Paris'`, `AT TIME ZONE
// 'America/New_York'`) read from the system's tzdata, as Debian's PostgreSQL (built with
// --with-system-tzdata) reads the same files.
//
// Guarantees: a zone is found by name without regard to case, as the server finds its file, and
// named as its file is (SHOW TimeZone); its offsets and abbreviations are the TZif file's
// transitions, and past the last one its POSIX rule (Mm.w.d dates; other rule forms are
// refused, 0A000, when the zone is loaded); a local time in a gap or an overlap is the later of
// its two readings, as the server's DetermineTimeZoneOffset picks. A zone is read once per
// process and kept: the same name gives the same answers for the whole run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep::sql {

class TimeZone {
 public:
  struct Offset {
    int seconds = 0;  // east of UTC
    std::string_view abbreviation;
  };
  // The zone's file's name ("Europe/Paris"), as SHOW TimeZone prints it.
  const std::string& name() const { return name_; }
  // The offset at an instant (microseconds from 2000-01-01 UTC).
  Offset at(std::int64_t utc_micros) const;
  // The instant a wall-clock time names (microseconds from 2000-01-01, local).
  std::int64_t utc_of_local(std::int64_t local_micros) const;

  // Reads a TZif file's bytes (0A000 for a form not modelled; 22023 for a damaged file).
  static std::unique_ptr<TimeZone> from_tzif(std::string name, std::string_view bytes);
  // A POSIX TZ string as a zone, as the server's pg_tzset reads a name no file has: "UTC+3"
  // (three hours west), "<+03>-03", "EST5EDT" (daylight time by the US's rules),
  // "EST5EDT,M3.2.0,M11.1.0"; named in upper case. nullptr when the text is not one; 0A000
  // for dates as days of the year.
  static std::unique_ptr<TimeZone> from_posix(std::string_view text);

 private:
  struct Type {
    int seconds = 0;
    bool daylight = false;
    std::string abbreviation;
  };
  // POSIX TZ rule (the file's footer): standard and daylight offsets, and the daylight span's
  // start and end as Mm.w.d dates with a local time of day in seconds.
  struct Rule {
    bool present = false;
    Type standard, daylight;
    bool has_daylight = false;
    int start_month = 0, start_week = 0, start_day = 0, start_time = 7200;
    int end_month = 0, end_week = 0, end_day = 0, end_time = 7200;
  };
  Offset by_rule(std::int64_t utc_seconds) const;
  // Reads a POSIX rule into rule_ (`posix_name`: the zone's own name, not a file's footer).
  void read_rule(std::string_view text, bool posix_name);

  std::string name_;
  std::vector<std::int64_t> transitions_;  // Unix seconds
  std::vector<std::uint8_t> transition_types_;
  std::vector<Type> types_;
  Rule rule_;
};

// The zone named `name` (case ignored): the system tzdata's file of that name, else the name
// read as a POSIX TZ string (TimeZone::from_posix); nullptr when it is neither.
const TimeZone* find_time_zone(std::string_view name);
// Whether `name` could be a zone's file name (letters, digits, '/', '_', '-', '+'; no "..").
bool is_zone_name(std::string_view name);

}  // namespace lockstep::sql
