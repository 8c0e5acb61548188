// model/sql/regex.cc: `~` and `~*` as the server's AREs match, on the constructs std::regex's
// ECMAScript grammar reads alike (model/sql/regex.h); the rest refused by name.
#include "lockstep/model/sql/regex.h"

#include <array>
#include <cctype>
#include <regex>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace lockstep::sql {
namespace {

[[noreturn]] void regex_refuse(std::string_view pattern, std::string_view what) {
  throw SqlError("0A000", fmt::format("the regular expression '{}' ({}) is not in lockstep's SQL subset (docs/sql.md)", pattern, what));
}

bool regex_is_class_name(std::string_view name) {
  static constexpr std::array<std::string_view, 12> kClasses = {"alnum", "alpha", "blank", "cntrl", "digit", "graph",
                                                                "lower", "print", "punct", "space", "upper", "xdigit"};
  for (std::string_view c : kClasses) {
    if (c == name) return true;
  }
  return false;
}

// An escape `\d` after the backslash at p[i]: the ECMAScript text for it, or refused.
std::string regex_escape(std::string_view p, std::size_t i, bool in_bracket) {
  if (i + 1 >= p.size()) regex_refuse(p, "a backslash at its end");
  const char d = p[i + 1];
  const std::string_view classes = in_bracket ? "dsw" : "dDsSwW";
  if (classes.find(d) != std::string_view::npos || d == 'n' || d == 't') return std::string{'\\', d};
  if (std::ispunct(static_cast<unsigned char>(d)) != 0) return std::string{'\\', d};  // a literal
  regex_refuse(p, fmt::format("the escape \\{}", d));
}

// The pattern in ECMAScript's grammar, matching what the ARE matches.
std::string regex_translate(std::string_view p) {
  for (char c : p) {
    if ((static_cast<unsigned char>(c) & 0x80) != 0) regex_refuse(p, "a non-ASCII character");
  }
  if (p.starts_with("***")) regex_refuse(p, "a director ***");
  std::string out;
  std::size_t i = 0;
  while (i < p.size()) {
    const char c = p[i];
    if (c == '\\') {
      out += regex_escape(p, i, false);
      i += 2;
    } else if (c == '[') {  // a bracket expression
      std::size_t j = i + 1;
      out += '[';
      if (j < p.size() && p[j] == '^') out += p[j++];
      if (j < p.size() && p[j] == ']') regex_refuse(p, "a ] first in a bracket expression");
      while (j < p.size() && p[j] != ']') {
        if (p[j] == '[' && j + 1 < p.size() && p[j + 1] == ':') {
          const std::size_t end = p.find(":]", j + 2);
          if (end == std::string_view::npos || !regex_is_class_name(p.substr(j + 2, end - j - 2))) regex_refuse(p, "a character class name");
          out += p.substr(j, end + 2 - j);
          j = end + 2;
        } else if (p[j] == '[' && j + 1 < p.size() && (p[j + 1] == '.' || p[j + 1] == '=')) {
          regex_refuse(p, "a collating element");
        } else if (p[j] == '\\') {
          out += regex_escape(p, j, true);
          j += 2;
        } else if (p[j] == '[') {
          out += "\\[";
          ++j;
        } else {
          out += p[j++];
        }
      }
      if (j >= p.size()) regex_refuse(p, "a bracket expression not closed");
      out += ']';
      i = j + 1;
    } else if (c == '(') {
      if (i + 1 < p.size() && p[i + 1] == '?') {
        if (i + 2 < p.size() && p[i + 2] == ':') {
          out += "(?:";
          i += 3;
          continue;
        }
        regex_refuse(p, "(? other than (?:");
      }
      out += '(';
      ++i;
    } else if (c == '{') {  // a bound: {m}, {m,}, {m,n}
      std::size_t j = i + 1;
      while (j < p.size() && (std::isdigit(static_cast<unsigned char>(p[j])) != 0 || p[j] == ',')) ++j;
      if (j == i + 1 || j >= p.size() || p[j] != '}' || p[i + 1] == ',') regex_refuse(p, "a { that starts no bound");
      out += p.substr(i, j + 1 - i);
      i = j + 1;
    } else if (c == '.') {
      out += "[\\s\\S]";  // any character, a newline too
      ++i;
    } else if (c == '}') {
      regex_refuse(p, "a } outside a bound");
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

bool regex_texty(const Value& v) { return v.type() == Type::text || v.type() == Type::unknown; }

}  // namespace

Value regex_match(const Value& text, const Value& pattern, bool ignore_case) {
  if (text.is_null() || pattern.is_null()) return Value::null(Type::boolean);
  const std::string_view op = ignore_case ? "~*" : "~";
  if (!regex_texty(text) || !regex_texty(pattern)) {
    throw SqlError("42883", fmt::format("operator does not exist: {} {} {}", type_name(text.type()), op, type_name(pattern.type())));
  }
  const std::string t = text.as_text(), p = pattern.as_text();
  for (char c : t) {
    if ((static_cast<unsigned char>(c) & 0x80) != 0) {
      throw SqlError("0A000", fmt::format("{} on text with non-ASCII characters is not in lockstep's SQL subset", op));
    }
  }
  if (t.size() > 100'000) throw SqlError("0A000", fmt::format("{} on text of more than 100000 characters is not in lockstep's SQL subset", op));
  const std::string ecma = regex_translate(p);
  std::regex re;
  try {
    re = std::regex(ecma, ignore_case ? std::regex::ECMAScript | std::regex::icase : std::regex::ECMAScript);
  } catch (const std::regex_error&) {
    regex_refuse(p, "one the server may reject with its own message");
  }
  try {
    return Value::boolean(std::regex_search(t, re));
  } catch (const std::regex_error&) {  // too complex for std::regex's backtracking
    regex_refuse(p, "one too complex to match here");
  }
}

}  // namespace lockstep::sql
