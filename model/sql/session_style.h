// model/sql/session_style.h: the session settings that change how times are read and shown:
// TimeZone (UTC; PST8PDT: pg_regress's, which `lockstep isolation` runs under; another zone of
// the system's tzdata: model/sql/time_zones.h), DateStyle
// (ISO or Postgres, MDY or DMY) and IntervalStyle (postgres or postgres_verbose).
//
// Values are stored in a form no setting changes (value.h's text_output: UTC, ISO, postgres);
// the settings act where the server applies them: a timestamptz read without a zone is local
// time, a timestamp compared with or cast to a timestamptz is local time, a timestamptz plus
// days or months moves on the local calendar, and a value cast to text or sent to the client
// is printed in the session's styles (display_text). The settings are the running session's,
// as the simulated server reports them (SqlContextSource).
// PST8PDT is tzdata's: -8:00 with the US rules (daylight time from 1918, war and peace time).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockstep::sql {

class Value;
class TimeZone;

// The server's default search_path, as SHOW prints it.
inline constexpr std::string_view kDefaultSearchPath = "\"$user\", public";

struct SessionStyle {
  enum class Zone : std::uint8_t { utc, pst8pdt, named } zone = Zone::utc;
  const TimeZone* named_zone = nullptr;  // Zone::named: the system tzdata's (model/sql/time_zones.h)
  bool postgres_dates = false;     // DateStyle Postgres (else ISO)
  bool day_first = false;          // DateStyle ..., DMY
  bool verbose_intervals = false;  // IntervalStyle postgres_verbose
  // search_path, as SHOW prints it: current_schema() is its first schema the server has
  // (a name without a schema is found through it: sim/pg/executor/sql_schemas.h).
  std::string search_path = std::string(kDefaultSearchPath);
  friend bool operator==(const SessionStyle&, const SessionStyle&) = default;
};

struct EnumType;
struct CreateFunction;
struct CreateTable;

// Where the current statement's settings and the server's enum types come from: the simulated
// server, which knows which session is running (the scheduler's current actor), so the
// settings follow each session across fiber switches in the middle of its statements.
class SqlContextSource {
 public:
  virtual ~SqlContextSource() = default;
  virtual const SessionStyle& style() const = 0;
  virtual const std::vector<EnumType>* enum_types() const = 0;
  // Whether the server has the schema.
  virtual bool has_schema(std::string_view name) const { return name == "public"; }
  // Whether the running session has its temporary schema (pg_temp: made by its first temporary object).
  virtual bool has_temp_schema() const { return false; }
  // The LANGUAGE sql function named `name` (CREATE FUNCTION), or nullptr.
  virtual const CreateFunction* sql_function(std::string_view) const { return nullptr; }
  // Every overload of the function a name finds, the first created first (empty: none).
  virtual std::vector<const CreateFunction*> sql_functions(std::string_view name) const {
    const CreateFunction* f = sql_function(name);
    return f == nullptr ? std::vector<const CreateFunction*>{} : std::vector{f};
  }
  // Whether some schema has a created function of that (bare) name, found or not by search_path.
  virtual bool function_named_anywhere(std::string_view) const { return false; }
  // The columns of row type `type` (model/sql/records.h), or nullptr; and table's row type.
  virtual const CreateTable* record_type(int) const { return nullptr; }
  virtual int record_type_index(std::string_view) const { return -1; }
};

// Makes `source` this thread's until destroyed (the server, for its lifetime).
class SqlContextScope {
 public:
  explicit SqlContextScope(const SqlContextSource* source);
  ~SqlContextScope();
  SqlContextScope(const SqlContextScope&) = delete;
  SqlContextScope& operator=(const SqlContextScope&) = delete;

 private:
  const SqlContextSource* saved_;
};

// The current statement's settings (the server's defaults without a source).
const SessionStyle& session_style();
// The server's enum types (nullptr without a source).
const std::vector<EnumType>* current_enum_types();
// current_schema(): the first schema of the session's search_path the server has, or NULL.
std::optional<std::string> current_schema();
// The schemas of search_path the server has, in order ("$user" is postgres, the one user):
// where a name without a schema is looked for (pg_catalog's built-ins before them).
std::vector<std::string> search_path_schemas();
// The same for a path and a server (nullptr: one with public only).
std::vector<std::string> path_schemas(std::string_view path, const SqlContextSource* source);
// A created function's name as written ("f", "s.f", "public.f", "pg_temp.f") as the key the
// server keeps it by: public's and an unqualified one's bare, another schema's "s.f".
std::string_view function_key(std::string_view name);
// A created function's name without its schema (what `f.param` qualifies a parameter by).
inline std::string_view bare_function_name(std::string_view name) { return name.substr(name.rfind('.') + 1); }
// The columns of the server's row type `type` (nullptr without a source or one).
const CreateTable* current_record_type(int type);
// The row type of the server's table `table` (-1 without a source).
int current_record_type_index(std::string_view table);
// The server's LANGUAGE sql function named `name` (nullptr without a source or one).
const CreateFunction* current_sql_function(std::string_view name);
std::vector<const CreateFunction*> current_sql_functions(std::string_view name);
// Whether the running session has its temporary schema (false without a source).
bool current_has_temp_schema();
// Whether the server has a created function of that bare name in some schema.
bool function_named_anywhere(std::string_view name);
// Whether the server has the schema.
bool current_has_schema(std::string_view name);

// SET TimeZone / DateStyle / IntervalStyle / search_path to `value` (lower case, a list joined
// by ", ") on `style`; false when the value is not one modeled (the caller refuses it by name).
bool apply_style_setting(SessionStyle& style, std::string_view name, std::string_view value);
// `SET TIME ZONE 3`, `'-3.5'`, `INTERVAL '+05:00'`: a zone `seconds_east` of UTC, named as
// the server names it ("<+03>-03", "<-03:30>+03:30"). Throws SqlError 22023 past 167:59:59.
std::string zone_name_of_offset(double seconds_east, std::string_view as_written);
// RESET of one of them: as the connection started (`start`: its startup settings over the
// server's defaults).
void reset_style_setting(SessionStyle& style, const SessionStyle& start, std::string_view name);
// current_setting's text of one of them.
std::string style_setting_text(const SessionStyle& style, std::string_view name);
// The style a connection starts with: the server's defaults under its startup settings
// (model/pg.h's PoolConfig::settings). Throws std::invalid_argument naming one not modelled.
SessionStyle startup_style(const std::vector<std::pair<std::string, std::string>>& settings);

// The session zone's offset east of UTC, in seconds, at an instant (microseconds from
// 2000-01-01 UTC), and its abbreviation there.
struct ZoneAt {
  int offset_seconds = 0;
  std::string_view abbreviation = "UTC";
};
ZoneAt zone_at(std::int64_t utc_micros);
// The instant a local wall-clock time names in the session zone: in a gap (spring forward) or
// an overlap (fall back), with the standard offset, as the server does.
std::int64_t utc_of_local(std::int64_t local_micros);
std::int64_t local_of_utc(std::int64_t utc_micros);

// A value as the session's styles print it (its text_output otherwise).
std::string display_text(const Value& v);

}  // namespace lockstep::sql
