#include "lockstep/model/sql/text_functions.h"

#include <algorithm>
#include <limits>
#include <cctype>
#include <array>
#include <string>

#include <fmt/format.h>

#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

constexpr std::array<std::string_view, 27> kTextFunctions = {
    "chr", "lower", "upper", "length", "char_length", "left", "right", "substr", "substring", "strpos", "position",
    "replace", "split_part", "concat", "concat_ws", "btrim", "ltrim", "rtrim", "lpad", "rpad", "reverse", "repeat",
    "octet_length", "starts_with", "translate", "to_hex", "initcap"};

// The byte offset of each character of UTF-8 text, and its size at the end.
std::vector<std::size_t> char_starts(const std::string& s) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  starts.push_back(s.size());
  return starts;
}

// Characters [from, to) of s, 0-based and clipped to the text.
std::string chars(const std::string& s, std::int64_t from, std::int64_t to) {
  const std::vector<std::size_t> starts = char_starts(s);
  const auto n = static_cast<std::int64_t>(starts.size()) - 1;
  from = std::clamp<std::int64_t>(from, 0, n);
  to = std::clamp<std::int64_t>(to, from, n);
  return s.substr(starts[static_cast<std::size_t>(from)], starts[static_cast<std::size_t>(to)] - starts[static_cast<std::size_t>(from)]);
}

std::int64_t char_count(const std::string& s) { return static_cast<std::int64_t>(char_starts(s).size()) - 1; }

[[noreturn]] void no_function(std::string_view name, const std::vector<Value>& args) {
  std::vector<std::string> types;
  for (const Value& a : args) types.emplace_back(type_name(a.type() == Type::unknown ? Type::text : a.type()));
  throw SqlError("42883", fmt::format("function {}({}) does not exist", name, fmt::join(types, ", ")));
}

// Argument i as text (an untyped literal is text; another type is no such function).
std::string text_arg(std::string_view name, const std::vector<Value>& args, std::size_t i) {
  const Value& v = args.at(i);
  if (v.type() != Type::text && v.type() != Type::unknown) no_function(name, args);
  return v.as_text();
}

std::int64_t int_arg(std::string_view name, const std::vector<Value>& args, std::size_t i) {
  const Value v = args.at(i).type() == Type::unknown ? cast(args[i], Type::int4) : args.at(i);
  if (!is_integer(v.type())) no_function(name, args);
  return v.as_integer();
}

std::string case_changed(std::string_view name, const std::string& s, bool upper) {
  std::string out = s;
  for (char& c : out) {
    if (static_cast<unsigned char>(c) >= 0x80) {
      throw SqlError("0A000", fmt::format("{}() of text with non-ASCII characters is not in lockstep's SQL subset (it depends on the "
                                          "server's locale)", name));
    }
    if (upper && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::string trimmed(const std::string& s, const std::string& set, bool left, bool right) {
  const std::vector<std::size_t> starts = char_starts(s);
  std::vector<std::string> remove;
  const std::vector<std::size_t> set_starts = char_starts(set);
  for (std::size_t k = 0; k + 1 < set_starts.size(); ++k) remove.push_back(set.substr(set_starts[k], set_starts[k + 1] - set_starts[k]));
  auto in_set = [&](std::size_t k) {
    const std::string c = s.substr(starts[k], starts[k + 1] - starts[k]);
    return std::find(remove.begin(), remove.end(), c) != remove.end();
  };
  std::size_t from = 0, to = starts.size() - 1;
  while (left && from < to && in_set(from)) ++from;
  while (right && to > from && in_set(to - 1)) --to;
  return s.substr(starts[from], starts[to] - starts[from]);
}

}  // namespace

std::string output_text(const Value& v) { return v.type() == Type::boolean ? (v.as_bool() ? "t" : "f") : display_text(v); }

bool is_text_function(std::string_view name) {
  return std::find(kTextFunctions.begin(), kTextFunctions.end(), name) != kTextFunctions.end();
}

Value text_function(std::string_view name, const std::vector<Value>& args) {
  // A char(n) argument is text without its padding (the server's bpchar-to-text cast), but
  // to concat (its output) and octet_length (bpcharoctetlen) padded as stored.
  if (std::any_of(args.begin(), args.end(), [](const Value& v) { return v.type() == Type::bpchar && !v.is_null(); })) {
    std::vector<Value> as_text = args;
    const bool padded = name == "concat" || name == "concat_ws" || name == "octet_length";
    for (Value& v : as_text) {
      if (v.type() == Type::bpchar && !v.is_null()) v = padded ? Value::text(v.text_output()) : cast(v, Type::text);
    }
    return text_function(name, as_text);
  }
  if (name == "concat" || name == "concat_ws") {
    const bool ws = name == "concat_ws";
    if (ws && args.at(0).is_null()) return Value::null(Type::text);
    const std::string separator = ws ? output_text(args[0]) : std::string();
    std::string out;
    bool first = true;
    for (std::size_t i = ws ? 1 : 0; i < args.size(); ++i) {
      if (args[i].is_null()) continue;
      if (!first) out += separator;
      out += output_text(args[i]);
      first = false;
    }
    return Value::text(std::move(out));
  }
  const bool returns_int = name == "length" || name == "char_length" || name == "strpos" || name == "position" || name == "octet_length";
  for (const Value& a : args) {
    if (a.is_null()) return Value::null(returns_int ? Type::int4 : name == "starts_with" ? Type::boolean : Type::text);
  }
  if (name == "octet_length" && args.at(0).type() != Type::text && args[0].type() != Type::unknown) {
    throw SqlError("0A000", fmt::format("octet_length() of a value of type {} is not in lockstep's SQL subset", type_name(args[0].type())));
  }
  if (name == "chr") {  // a character by its code point, in UTF-8
    const std::int64_t code = int_arg(name, args, 0);
    if (code == 0) throw SqlError("54000", "null character not permitted");
    if (code < 0) throw SqlError("54000", "character number must be positive");
    if (code > 0x10FFFF) throw SqlError("54000", fmt::format("requested character too large for encoding: {}", code));
    if (code >= 0xD800 && code <= 0xDFFF) throw SqlError("54000", fmt::format("requested character not valid for encoding: {}", code));
    std::string out;
    const auto c = static_cast<std::uint32_t>(code);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if (c < 0x800) {
      out += static_cast<char>(0xC0 | (c >> 6));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out += static_cast<char>(0xE0 | (c >> 12));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (c >> 18));
      out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (c & 0x3F));
    }
    return Value::text(std::move(out));
  }
  if (name == "to_hex") {  // its two's complement digits in lower case (an int4's 32 bits)
    const Value& v = args.at(0);
    if (v.type() == Type::int8) return Value::text(fmt::format("{:x}", static_cast<std::uint64_t>(v.as_integer())));
    if (!is_integer(v.type()) && v.type() != Type::unknown) {
      throw SqlError("42883", fmt::format("function to_hex({}) does not exist", type_name(v.type())));
    }
    return Value::text(fmt::format("{:x}", static_cast<std::uint32_t>(int_arg(name, args, 0))));
  }
  const std::string s = text_arg(name, args, 0);
  if (name == "lower" || name == "upper") return Value::text(case_changed(name, s, name == "upper"));
  if (name == "initcap") {  // each word's first letter upper, its others lower (a word: a run of letters and digits)
    std::string out;
    bool in_word = false;
    for (const unsigned char ch : s) {
      if (ch >= 0x80) throw SqlError("0A000", "initcap() of text beyond ASCII is not in lockstep's SQL subset");
      out += static_cast<char>(in_word ? std::tolower(ch) : std::toupper(ch));
      in_word = std::isalnum(ch) != 0;
    }
    return Value::text(std::move(out));
  }
  if (name == "length" || name == "char_length") return Value::integer(char_count(s), Type::int4);
  if (name == "reverse") {  // its characters in reverse order
    const std::vector<std::size_t> starts = char_starts(s);
    std::string out;
    for (std::size_t c = starts.size() - 1; c-- > 0;) out.append(s, starts[c], starts[c + 1] - starts[c]);
    return Value::text(std::move(out));
  }
  if (name == "octet_length") return Value::integer(static_cast<std::int64_t>(s.size()), Type::int4);
  if (name == "starts_with") return Value::boolean(s.starts_with(text_arg(name, args, 1)));
  if (name == "translate") {  // each character of `from` in s becomes the one at its place in `to`, or goes
    const std::string from = text_arg(name, args, 1), to = text_arg(name, args, 2);
    const std::vector<std::size_t> cs = char_starts(s), fs = char_starts(from), ts = char_starts(to);
    std::string out;
    for (std::size_t c = 0; c + 1 < cs.size(); ++c) {
      const std::string ch = s.substr(cs[c], cs[c + 1] - cs[c]);
      std::size_t at = 0;
      while (at + 1 < fs.size() && from.compare(fs[at], fs[at + 1] - fs[at], ch) != 0) ++at;
      if (at + 1 == fs.size()) {
        out += ch;  // not in `from`: kept
      } else if (at + 1 < ts.size()) {
        out.append(to, ts[at], ts[at + 1] - ts[at]);
      }
    }
    return Value::text(std::move(out));
  }
  if (name == "repeat") {  // the text `n` times (none for n <= 0)
    const std::int64_t n = std::max<std::int64_t>(int_arg(name, args, 1), 0);
    if (static_cast<double>(n) * static_cast<double>(s.size()) > 10'000'000) {
      throw SqlError("0A000", "repeat() to more than 10000000 bytes is not in lockstep's SQL subset");
    }
    std::string out;
    for (std::int64_t i = 0; i < n; ++i) out += s;
    return Value::text(std::move(out));
  }
  if (name == "lpad" || name == "rpad") {  // to `n` characters: cut, or filled with the fill text (a space) repeated
    const std::int64_t n = std::max<std::int64_t>(int_arg(name, args, 1), 0), have = char_count(s);
    const std::string fill = args.size() > 2 ? text_arg(name, args, 2) : std::string(" ");
    if (n <= have || fill.empty()) return Value::text(chars(s, 0, n));
    if (n > 10'000'000) throw SqlError("0A000", fmt::format("{}() to more than 10000000 characters is not in lockstep's SQL subset", name));
    const std::vector<std::size_t> starts = char_starts(fill);
    const std::size_t fill_chars = starts.size() - 1;
    std::string pad;
    for (std::size_t k = 0; k < static_cast<std::size_t>(n - have); ++k) {
      const std::size_t c = k % fill_chars;
      pad.append(fill, starts[c], starts[c + 1] - starts[c]);
    }
    return Value::text(name == "lpad" ? pad + s : s + pad);
  }
  // Saturating: a huge bound runs to the string's end (text_substring's overflow check).
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max(), kMin = std::numeric_limits<std::int64_t>::min();
  if (name == "left" || name == "right") {
    const std::int64_t n = int_arg(name, args, 1), total = char_count(s);
    if (name == "left") return Value::text(n >= 0 ? chars(s, 0, n) : chars(s, 0, total + n));
    return Value::text(n >= 0 ? chars(s, total - n, total) : chars(s, n == kMin ? kMax : -n, total));
  }
  if (name == "substr" || name == "substring") {
    const std::int64_t first = int_arg(name, args, 1), start = first == kMin ? kMin : first - 1;
    if (args.size() == 2) return Value::text(chars(s, start, char_count(s)));
    const std::int64_t count = int_arg(name, args, 2);
    if (count < 0) throw SqlError("22011", "negative substring length not allowed");
    return Value::text(chars(s, start, start > 0 && count > kMax - start ? kMax : start + count));
  }
  if (name == "strpos" || name == "position") {
    const std::string needle = text_arg(name, args, 1);
    const std::size_t at = s.find(needle);
    if (at == std::string::npos) return Value::integer(0, Type::int4);
    return Value::integer(char_count(s.substr(0, at)) + 1, Type::int4);
  }
  if (name == "replace") {
    const std::string from = text_arg(name, args, 1), to = text_arg(name, args, 2);
    if (from.empty()) return Value::text(s);
    std::string out;
    std::size_t i = 0;
    for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, i)) {
      out += s.substr(i, at - i) + to;
      i = at + from.size();
    }
    return Value::text(out + s.substr(i));
  }
  if (name == "split_part") {
    const std::string delimiter = text_arg(name, args, 1);
    const std::int64_t n = int_arg(name, args, 2);
    if (n == 0) throw SqlError("22023", "field position must not be zero");
    std::vector<std::string> fields;
    if (delimiter.empty()) {
      if (!s.empty()) fields.push_back(s);
    } else if (!s.empty()) {
      std::size_t i = 0;
      for (std::size_t at = s.find(delimiter); at != std::string::npos; at = s.find(delimiter, i)) {
        fields.push_back(s.substr(i, at - i));
        i = at + delimiter.size();
      }
      fields.push_back(s.substr(i));
    }
    const auto count = static_cast<std::int64_t>(fields.size());
    const std::int64_t index = n > 0 ? n - 1 : count + n;
    if (index < 0 || index >= count) return Value::text("");
    return Value::text(fields[static_cast<std::size_t>(index)]);
  }
  // btrim, ltrim, rtrim
  const std::string set = args.size() > 1 ? text_arg(name, args, 1) : std::string(" ");
  return Value::text(trimmed(s, set, name != "rtrim", name != "ltrim"));
}

Value greatest_or_least(const std::vector<Value>& args, bool greatest) {
  std::optional<Type> common;
  for (const Value& a : args) {
    if (a.type() == Type::unknown) continue;
    if (!common) {
      common = a.type();
    } else if (is_numeric_category(*common) && is_numeric_category(a.type())) {
      common = numeric_common_type(*common, a.type());
    } else if (*common != a.type() && (is_timestamp(*common) || *common == Type::date) && (is_timestamp(a.type()) || a.type() == Type::date)) {
      // select_common_type in the datetime category: the one the other casts to implicitly
      common = *common == Type::timestamptz || a.type() == Type::timestamptz ? Type::timestamptz : Type::timestamp;
    } else if (*common != a.type()) {
      throw SqlError("42804", fmt::format("{} types {} and {} cannot be matched", greatest ? "GREATEST" : "LEAST", type_name(*common),
                                          type_name(a.type())));
    }
  }
  const Type t = common.value_or(Type::text);
  std::optional<Value> best;
  for (const Value& a : args) {
    if (a.is_null()) continue;
    Value v = cast(a, t);
    if (!best || (greatest ? compare(v, *best, ">") > 0 : compare(v, *best, "<") < 0)) best = std::move(v);
  }
  return best ? *best : Value::null(t);
}

Value null_if(const Value& a, const Value& b) {
  Value left = a;
  if (left.type() == Type::unknown && !left.is_null()) left = cast(left, b.type() == Type::unknown ? Type::text : b.type());
  if (left.is_null() || b.is_null()) return left;
  return compare(left, b, "=") == 0 ? Value::null(left.type()) : left;
}

namespace {

std::size_t txt_utf8_length_at(std::string_view s, std::size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  const std::size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
  return std::min(n, s.size() - i);
}

// MatchText of like_match.c: backtracking on %, a character at a time. A match that ran out
// of text aborts the whole search (no later start of the % can match either), which keeps
// patterns of many %s polynomial.
enum class LikeResult { match, no_match, abort };

LikeResult txt_like_from(std::string_view t, std::size_t ti, std::string_view p, std::size_t pi) {
  while (pi < p.size()) {
    if (p[pi] == '%') {
      while (pi < p.size() && p[pi] == '%') ++pi;
      if (pi == p.size()) return LikeResult::match;
      while (ti < t.size()) {
        const LikeResult r = txt_like_from(t, ti, p, pi);
        if (r != LikeResult::no_match) return r;
        ti += txt_utf8_length_at(t, ti);
      }
      return LikeResult::abort;
    }
    if (ti >= t.size()) return LikeResult::abort;
    if (p[pi] == '_') {
      ti += txt_utf8_length_at(t, ti);
      ++pi;
      continue;
    }
    if (p[pi] == '\\') {
      ++pi;
      if (pi >= p.size()) throw SqlError("22025", "LIKE pattern must not end with escape character");
    }
    if (t[ti] != p[pi]) return LikeResult::no_match;
    ++ti;
    ++pi;
  }
  return ti == t.size() ? LikeResult::match : LikeResult::no_match;
}

std::string txt_like_operand(const Value& v, bool ignore_case, std::string_view op) {
  if (v.type() != Type::text && v.type() != Type::unknown) {
    throw SqlError("42883", fmt::format("operator does not exist: {} {} text", type_name(v.type()), op));
  }
  std::string s = v.as_text();
  if (!ignore_case) return s;
  for (char& c : s) {
    if ((static_cast<unsigned char>(c) & 0x80) != 0) {
      throw SqlError("0A000", "ILIKE on text with non-ASCII characters is not in lockstep's SQL subset (it depends on the server's locale)");
    }
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

}  // namespace

Value like(const Value& text, const Value& pattern, bool ignore_case) {
  if (text.is_null() || pattern.is_null()) return Value::null(Type::boolean);
  const std::string_view op = ignore_case ? "~~*" : "~~";
  const std::string t = txt_like_operand(text, ignore_case, op), p = txt_like_operand(pattern, ignore_case, op);
  return Value::boolean(txt_like_from(t, 0, p, 0) == LikeResult::match);
}

}  // namespace lockstep::sql
