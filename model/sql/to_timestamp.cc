#include "lockstep/model/sql/to_timestamp.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lockstep/model/sql/civil_days.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

enum class DchField : std::uint8_t { year4, year2, month, month_abbreviation, month_name, day, hour24, hour12, minute, second, ms, us, meridian };

struct DchPattern {
  std::string_view name;  // as the format spells it, upper case
  std::optional<DchField> field;  // nullopt: a field the subset does not read (refused)
  int width = 0;               // a number's: the characters it takes where the next node is a digit field
};

// formatting.c's keywords that begin with the letters met, longest first where one begins another.
constexpr std::array<DchPattern, 34> kDchPatterns = {{
    {"HH24", DchField::hour24, 2}, {"HH12", DchField::hour12, 2}, {"HH", DchField::hour12, 2}, {"MI", DchField::minute, 2},
    {"MS", DchField::ms, 3},       {"US", DchField::us, 6},       {"SSSSS", std::nullopt}, {"SSSS", std::nullopt},
    {"SS", DchField::second, 2},   {"A.M.", std::nullopt},     {"P.M.", std::nullopt},  {"AM", DchField::meridian},
    {"PM", DchField::meridian},    {"Y,YYY", std::nullopt},    {"YYYY", DchField::year4, 4}, {"YYY", std::nullopt},
    {"YY", DchField::year2, 2},    {"Y", std::nullopt},        {"MONTH", DchField::month_name}, {"MON", DchField::month_abbreviation},
    {"MM", DchField::month, 2},    {"DDD", std::nullopt},      {"DD", DchField::day, 2},   {"DAY", std::nullopt},
    {"DY", std::nullopt},       {"D", std::nullopt},        {"TZH", std::nullopt},   {"TZM", std::nullopt},
    {"TZ", std::nullopt},       {"OF", std::nullopt},       {"FX", std::nullopt},    {"FM", std::nullopt},
    {"TH", std::nullopt},       {"IW", std::nullopt},
}};

constexpr std::array<std::string_view, 12> kDchMonths = {"January", "February", "March",     "April",   "May",      "June",
                                                        "July",    "August",   "September", "October", "November", "December"};

struct DchNode {
  enum class Kind : std::uint8_t { field, space, separator, character };
  Kind kind = Kind::character;
  const DchPattern* pattern = nullptr;
  bool digit = false;  // a character node: a digit
  bool numeric() const { return kind == Kind::field && pattern->width > 0; }
};

bool dch_separator(unsigned char c) { return c > 0x20 && c < 0x7F && std::isalnum(c) == 0; }

bool dch_starts_with(std::string_view s, std::string_view p) {
  if (s.size() < p.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i) {
    if (std::toupper(static_cast<unsigned char>(s[i])) != p[i]) return false;
  }
  return true;
}

SqlError dch_refused(std::string_view what) { return SqlError("0A000", fmt::format("{} is not in lockstep's SQL subset (docs/sql.md)", what)); }

std::vector<DchNode> dch_nodes(std::string_view f, std::string_view function) {
  std::vector<DchNode> out;
  std::size_t i = 0;
  while (i < f.size()) {
    const auto c = static_cast<unsigned char>(f[i]);
    if (c == '"') {  // quoted text: each character consumes one of the input's
      ++i;
      while (i < f.size() && f[i] != '"') {
        if (f[i] == '\\') throw dch_refused(fmt::format("a backslash in {}()'s format", function));
        out.push_back(DchNode{.digit = std::isdigit(static_cast<unsigned char>(f[i])) != 0});
        ++i;
      }
      ++i;
      continue;
    }
    if (c == '\\') throw dch_refused(fmt::format("a backslash in {}()'s format", function));
    if (std::isalpha(c) != 0) {
      const std::string_view rest = f.substr(i);
      const auto* match = std::find_if(kDchPatterns.begin(), kDchPatterns.end(), [&](const DchPattern& p) { return dch_starts_with(rest, p.name); });
      if (match == kDchPatterns.end() || !match->field) {
        std::size_t j = 0;
        while (j < rest.size() && j < 5 && std::isalpha(static_cast<unsigned char>(rest[j])) != 0) ++j;
        throw dch_refused(fmt::format("{}()'s format \"{}\" at \"{}\"", function, f, rest.substr(0, j)));
      }
      out.push_back(DchNode{.kind = DchNode::Kind::field, .pattern = &*match});
      i += match->name.size();
      continue;
    }
    if (c == ' ') {
      out.push_back(DchNode{.kind = DchNode::Kind::space});
    } else if (dch_separator(c)) {
      out.push_back(DchNode{.kind = DchNode::Kind::separator});
    } else {
      out.push_back(DchNode{.digit = std::isdigit(c) != 0});
    }
    ++i;
  }
  return out;
}

std::size_t dch_utf8_length(unsigned char lead) { return lead < 0x80 ? 1 : lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1; }

// GCC 12 takes the std::optional fields' payloads for uninitialized once the calendar calls
// are out of line (a known false positive: every read checks or value_or()s the optional).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
class DchFields {
 public:
  DchFields(std::string_view input, std::string_view function) : in_(input), function_(function) {}

  void read(const std::vector<DchNode>& nodes) {
    int extra_skip = 0;
    for (std::size_t n = 0; n < nodes.size() && s_ < in_.size(); ++n) {
      const DchNode& node = nodes[n];
      if (node.kind == DchNode::Kind::field || n == 0) {  // spaces before a field (and at the start) skipped
        while (s_ < in_.size() && std::isspace(static_cast<unsigned char>(in_[s_])) != 0) {
          ++s_;
          ++extra_skip;
        }
      }
      if (node.kind == DchNode::Kind::space || node.kind == DchNode::Kind::separator) {
        --extra_skip;
        if (s_ < in_.size() && (std::isspace(static_cast<unsigned char>(in_[s_])) != 0 || dch_separator(static_cast<unsigned char>(in_[s_])))) {
          s_ += dch_utf8_length(static_cast<unsigned char>(in_[s_]));
          ++extra_skip;
        }
        continue;
      }
      if (node.kind == DchNode::Kind::character) {
        if (extra_skip > 0) {
          --extra_skip;
        } else {
          s_ += dch_utf8_length(static_cast<unsigned char>(in_[s_]));
        }
        continue;
      }
      const bool next_is_separator = n + 1 == nodes.size() || (nodes[n + 1].kind == DchNode::Kind::field ? !nodes[n + 1].numeric() : !nodes[n + 1].digit);
      field(*node.pattern, next_is_separator);
    }
  }

  Value result(bool date) const {
    if (!year_) throw dch_refused(fmt::format("{}() without a year in its format", function_));
    const std::int64_t year = *year_;
    const int month = month_.value_or(1), day = day_.value_or(1);
    std::int64_t hour = hour_.value_or(0);
    if (twelve_hour_) {
      if (hour < 1 || hour > 12) throw SqlError("22007", fmt::format("hour \"{}\" is invalid for the 12-hour clock", hour));
      if (pm_ && hour < 12) hour += 12;
      if (!pm_ && hour == 12) hour = 0;
    }
    const std::int64_t minute = minute_.value_or(0), second = second_.value_or(0);
    if (year < 1 || year > 9999) throw dch_refused(fmt::format("{}() of the year {}", function_, year));
    if (hour == 24 || second == 60) throw dch_refused(fmt::format("{}() of 24:00 or a leap second", function_));
    const bool day_ok = month >= 1 && month <= 12 && day >= 1 && static_cast<unsigned>(day) <= days_in_month(year, static_cast<unsigned>(month));
    if (!day_ok || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) {
      throw SqlError("22008", fmt::format("date/time field value out of range: \"{}\"", in_));
    }
    const std::int64_t ms = ms_.value_or(0), us = us_.value_or(0);
    if (ms < 0 || ms > 999 || us < 0 || us > 999'999) throw dch_refused(fmt::format("{}() of a fraction past its field", function_));
    const std::int64_t days = days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
    if (date) return Value::date(days * 86'400'000'000);
    const std::int64_t local = days * 86'400'000'000 + ((hour * 60 + minute) * 60 + second) * 1'000'000 + ms * 1000 + us;
    return Value::timestamptz(utc_of_local(local));
  }

 private:
  // strtol's reading at s_: spaces, a sign, digits; nullopt when no digit follows.
  std::optional<std::int64_t> strtol_at(std::string_view text, std::size_t& used) const {
    std::size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i])) != 0) ++i;
    bool negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
    const std::size_t digits = i;
    std::int64_t v = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) != 0) {
      if (i - digits >= 9) throw dch_refused(fmt::format("a number of ten digits or more in {}()'s input", function_));
      v = v * 10 + (text[i++] - '0');
    }
    if (i == digits) return std::nullopt;
    used = i;
    return negative ? -v : v;
  }

  void set(std::optional<std::int64_t>& slot, std::int64_t v, const DchPattern& p) {
    if (slot && *slot != v) throw SqlError("22007", fmt::format("conflicting values for \"{}\" field in formatting string", p.name));
    slot = v;
  }
  void set(std::optional<int>& slot, std::int64_t v, const DchPattern& p) {
    if (slot && *slot != v) throw SqlError("22007", fmt::format("conflicting values for \"{}\" field in formatting string", p.name));
    slot = static_cast<int>(v);
  }

  std::int64_t number(const DchPattern& p, bool slurp, std::size_t& consumed) {
    const std::string_view rest = in_.substr(s_);
    const std::string copy(rest.substr(0, static_cast<std::size_t>(p.width)));
    std::size_t used = 0;
    std::optional<std::int64_t> v;
    if (slurp) {
      v = strtol_at(rest, used);
    } else {
      if (copy.size() < static_cast<std::size_t>(p.width)) {
        throw SqlError("22007", fmt::format("source string too short for \"{}\" formatting field", p.name));
      }
      v = strtol_at(copy, used);
      if (v && used < copy.size()) throw SqlError("22007", fmt::format("invalid value \"{}\" for \"{}\"", copy, p.name));
    }
    if (!v) throw SqlError("22007", fmt::format("invalid value \"{}\" for \"{}\"", copy, p.name));
    s_ += used;
    consumed = used;
    return *v;
  }

  void field(const DchPattern& p, bool slurp) {
    const std::string_view rest = in_.substr(s_);
    switch (*p.field) {
      case DchField::month_name:
      case DchField::month_abbreviation: {
        for (std::size_t m = 0; m < kDchMonths.size(); ++m) {
          const std::string_view name = *p.field == DchField::month_name ? kDchMonths[m] : kDchMonths[m].substr(0, 3);
          std::string upper(name);
          for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
          if (dch_starts_with(rest, upper)) {
            set(month_, static_cast<std::int64_t>(m) + 1, p);
            s_ += name.size();
            return;
          }
        }
        throw dch_refused(fmt::format("{}() of a month its input does not name", function_));
      }
      case DchField::meridian: {
        if (!dch_starts_with(rest, "AM") && !dch_starts_with(rest, "PM")) throw dch_refused(fmt::format("{}() of an AM / PM its input does not spell", function_));
        if (hour24_) throw dch_refused(fmt::format("{}() of HH24 beside AM / PM", function_));
        pm_ = dch_starts_with(rest, "PM");
        twelve_hour_ = true;
        s_ += 2;
        return;
      }
      default: break;
    }
    std::size_t consumed = 0;
    const std::int64_t v = number(p, slurp, consumed);
    switch (*p.field) {
      case DchField::year4: set(year_, v, p); break;
      case DchField::year2: set(year_, v < 70 ? v + 2000 : v < 100 ? v + 1900 : v, p); break;
      case DchField::month: set(month_, v, p); break;
      case DchField::day: set(day_, v, p); break;
      case DchField::hour24:
        if (twelve_hour_) throw dch_refused(fmt::format("{}() of HH24 beside AM / PM", function_));
        hour24_ = true;
        set(hour_, v, p);
        break;
      case DchField::hour12:
        twelve_hour_ = true;
        set(hour_, v, p);
        break;
      case DchField::minute: set(minute_, v, p); break;
      case DchField::second: set(second_, v, p); break;
      case DchField::ms: set(ms_, consumed == 1 ? v * 100 : consumed == 2 ? v * 10 : v, p); break;
      case DchField::us: {
        std::int64_t scaled = v;
        for (std::size_t d = consumed; d < 6; ++d) scaled *= 10;
        set(us_, scaled, p);
        break;
      }
      default: break;
    }
  }

  std::string_view in_;
  std::string_view function_;
  std::size_t s_ = 0;
  std::optional<std::int64_t> year_, hour_, minute_, second_, ms_, us_;
  std::optional<int> month_, day_;
  bool twelve_hour_ = false, hour24_ = false, pm_ = false;
};
#pragma GCC diagnostic pop

}  // namespace

Value to_timestamp_value(const Value& text, const Value& format, bool date) {
  const std::string_view function = date ? "to_date" : "to_timestamp";
  if (text.is_null() || format.is_null()) return Value::null(date ? Type::date : Type::timestamptz);
  const std::string input = cast(text, Type::text).as_text(), f = cast(format, Type::text).as_text();
  const std::vector<DchNode> nodes = dch_nodes(f, function);
  DchFields fields(input, function);
  fields.read(nodes);
  return fields.result(date);
}

}  // namespace lockstep::sql
