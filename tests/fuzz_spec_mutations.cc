#include "fuzz_spec_mutations.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <iterator>
#include <regex>
#include <string>
#include <vector>

namespace lockstep::fuzz {
namespace {

template <typename T, std::size_t N>
const T& pick(const std::array<T, N>& items, Rng& rng) {
  return items[below(rng, N)];
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t end = text.find('\n', at);
    lines.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return lines;
}

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (std::size_t i = 0; i < lines.size(); ++i) text += (i == 0 ? "" : "\n") + lines[i];
  return text;
}

// A place inside a SQL block when there is one (after a `{` or before a `}`), else anywhere.
std::size_t sql_position(const std::string& text, Rng& rng) {
  std::vector<std::size_t> braces;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '{') braces.push_back(i + 1);
    if (text[i] == '}') braces.push_back(i);
  }
  if (braces.empty() || below(rng, 4) == 0) return below(rng, text.size() + 1);
  return braces[below(rng, braces.size())];
}

// The names after `step` and `session`, for permutation lines and blocker annotations.
std::vector<std::string> names_after(const std::string& text, const std::string& keyword) {
  std::vector<std::string> names;
  const std::regex re("(^|\\n)\\s*" + keyword + "\\s+\"?([A-Za-z0-9_]+)");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), re); it != std::sregex_iterator(); ++it) {
    names.push_back((*it)[2].str());
  }
  return names;
}

// SQL tokens and fragments: keywords, operators, quotes, casts, parameters, odd literals.
constexpr std::array<const char*, 40> kSqlTokens = {
    " SELECT ", " FROM ", " WHERE ", " FOR UPDATE ", " SKIP LOCKED ", " NOWAIT ", "(", ")", ",", ";", "'", "\"",
    "::int", "::bigint", "::text", "::timestamptz", "::interval", "$1", "NULL", " AND ", " OR ", " NOT ", " = ",
    " || ", " ORDER BY 1 ", " LIMIT ", " RETURNING * ", " ON CONFLICT DO NOTHING ", " BEGIN; ", " COMMIT; ",
    " ROLLBACK; ", " SAVEPOINT s; ", " ROLLBACK TO s; ", " -- ", " /* ", " */ ", "$$", " E'\\x' ", "\\", "*"};

// Values at and past every range the server and the simulation have.
constexpr std::array<const char*, 22> kOddValues = {
    "0", "-1", "2147483647", "2147483648", "-2147483649", "9223372036854775807", "9223372036854775808",
    "-9223372036854775808", "-9223372036854775809", "1e309", "1.5", "0.3", "'NaN'::float8", "''",
    "'infinity'", "'1 week'", "99999999999999999999999999999", "'\\x00'", "-0", "1e-400", "0x10", "'2024-13-45'"};

// Whole statements outside (or at the edges of) the simulated subset.
constexpr std::array<const char*, 37> kStatements = {
    "WITH RECURSIVE r AS (SELECT 1 UNION SELECT 1) SELECT * FROM r",
    "SELECT * FROM pg_class a JOIN pg_class b ON true",
    "LISTEN x",
    "NOTIFY x",
    "COPY t FROM STDIN",
    "DO $$ BEGIN PERFORM 1; END $$",
    "CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN RETURN 1; END $$",
    "PREPARE p AS SELECT 1",
    "EXECUTE p",
    "SELECT pg_sleep(1000)",
    "SELECT pg_sleep(0.3)",
    "SELECT generate_series(1, 100000000)",
    "SELECT repeat('x', 1000000000)",
    "SELECT lpad('x', 2000000000)",
    "VACUUM",
    "LOCK TABLE t IN ACCESS EXCLUSIVE MODE",
    "SET lock_timeout = 1",
    "SET statement_timeout = '1ms'",
    "BEGIN ISOLATION LEVEL SERIALIZABLE",
    "VACUUM FREEZE t",
    "ANALYZE t",
    "SET LOCAL enable_seqscan = off",
    "SELECT 1; SELECT 1/0",
    "INSERT INTO t VALUES (1); SAVEPOINT a",
    "SELECT 1; BEGIN ISOLATION LEVEL REPEATABLE READ",
    "CREATE TABLE i (a int, b int, PRIMARY KEY (a) INCLUDE (b))",
    "SELECT pg_advisory_lock(-9223372036854775808)",
    "SELECT pg_advisory_xact_lock(1, 2)",
    "SELECT 1/0",
    "SELECT interval '1 week'",
    "SELECT now() + interval '1000000 years'",
    "SELECT x FROM (VALUES (1), (2)) v(x)",
    "SELECT 1 UNION ALL SELECT 2",
    "SELECT count(DISTINCT 1) GROUP BY 1",
    "INSERT INTO t SELECT generate_series(1, 1000000)",
    "UPDATE t SET id = id + 1",
    "SELECT $1"};

// An expression nested `depth` levels deep, of one of the shapes that recurse in a parser or
// an evaluator.
std::string nested(Rng& rng, int depth) {
  static constexpr std::array<std::array<const char*, 2>, 10> kShapes = {{{"(SELECT ", ")"},
                                                                          {"1 + ", ""},
                                                                          {"abs(", ")"},
                                                                          {"NOT ", ""},
                                                                          {"CASE WHEN true THEN ", " END"},
                                                                          {"coalesce(", ")"},
                                                                          {"(", ")"},
                                                                          {"-", ""},
                                                                          {"EXISTS (SELECT ", ")"},
                                                                          {"ARRAY[", "]"}}};
  const auto& shape = kShapes[below(rng, kShapes.size())];
  std::string open, close;
  for (int i = 0; i < depth; ++i) {
    open += shape[0];
    close += shape[1];
  }
  return open + (std::string(shape[0]) == "NOT " ? "true" : "1") + close;
}

std::string permutation_line(const std::string& text, Rng& rng) {
  std::vector<std::string> steps = names_after(text, "step");
  steps.push_back("no_such_step");
  std::string line = "permutation";
  const int length = static_cast<int>(below(rng, 14));
  for (int i = 0; i < length; ++i) {
    line += " " + steps[below(rng, steps.size())];
    switch (below(rng, 8)) {
      case 0: line += "(" + steps[below(rng, steps.size())] + ")"; break;
      case 1: line += "(*)"; break;
      case 2: line += "(" + steps[below(rng, steps.size())] + " notices " + std::to_string(below(rng, 4)) + ")"; break;
      case 3: line += below(rng, 2) == 0 ? "(" : "()"; break;
      default: break;
    }
  }
  return line;
}

// One structural mutation of the spec's lines.
std::string mutate_lines(const std::string& text, const std::vector<std::string>& seeds, Rng& rng) {
  std::vector<std::string> lines = split_lines(text);
  const std::size_t at = below(rng, lines.size());
  switch (below(rng, 6)) {
    case 0: lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(at)); break;
    case 1: lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), lines[at]); break;
    case 2: std::swap(lines[at], lines[below(rng, lines.size())]); break;
    case 3: {  // a line of another spec
      const std::vector<std::string> other = split_lines(seeds[below(rng, seeds.size())]);
      lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), other[below(rng, other.size())]);
      break;
    }
    case 4: {  // a block repeated many times: sessions or steps past every bound
      const int times = below(rng, 2) == 0 ? 2 : 70;
      const std::string copy = lines[at];
      for (int i = 0; i < times; ++i) {
        std::string renamed = copy;
        const std::size_t space = renamed.find(' ');
        if (space != std::string::npos) renamed.insert(space + 1, "r" + std::to_string(i));
        lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(at), renamed);
      }
      break;
    }
    default: lines.push_back(permutation_line(text, rng)); break;
  }
  return join_lines(lines);
}

std::string spec_bytes(const std::string& s, Rng& rng) {
  static constexpr std::array<const char*, 14> kBytes = {"{", "}", "\"", "#", "\n", "\r\n", "\t", "\xff", "\xc3",
                                                         "\xed\xa0\x80", "" /* a NUL byte */, "\xe2\x82",
                                                         "{{{{", "}}}}"};
  return mutate_bytes(s, kBytes, rng);
}

// A number in the text replaced by `with` (an odd value when empty).
std::string replace_number(std::string text, Rng& rng, const std::string& with = "") {
  std::vector<std::pair<std::size_t, std::size_t>> numbers;
  for (std::size_t i = 0; i < text.size();) {
    if (text[i] >= '0' && text[i] <= '9' && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1])))) {
      std::size_t end = i;
      while (end < text.size() && text[end] >= '0' && text[end] <= '9') ++end;
      numbers.emplace_back(i, end - i);
      i = end;
    } else {
      ++i;
    }
  }
  if (numbers.empty()) return text;
  const auto [at, length] = numbers[below(rng, numbers.size())];
  text.replace(at, length, with.empty() ? std::string(pick(kOddValues, rng)) : with);
  return text;
}

// A statement inside a block replaced by one outside the subset (or at its edges).
std::string replace_statement(std::string text, Rng& rng) {
  std::vector<std::pair<std::size_t, std::size_t>> blocks;
  for (std::size_t open = text.find('{'); open != std::string::npos; open = text.find('{', open + 1)) {
    const std::size_t close = text.find('}', open);
    if (close == std::string::npos) break;
    blocks.emplace_back(open + 1, close - open - 1);
  }
  if (blocks.empty()) return text;
  const auto [at, length] = blocks[below(rng, blocks.size())];
  text.replace(at, length, std::string(" ") + pick(kStatements, rng) + "; ");
  return text;
}

}  // namespace

std::uint64_t below(Rng& rng, std::uint64_t n) {
  return n == 0 ? 0 : std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng);
}

std::string mutate_bytes(std::string s, std::span<const char* const> tokens, Rng& rng) {
  const std::size_t at = below(rng, s.size() + 1);
  switch (below(rng, 5)) {
    case 0:
      if (!s.empty()) s[below(rng, s.size())] = static_cast<char>(below(rng, 256));
      break;
    case 1: {
      const char* token = tokens[below(rng, tokens.size())];
      s.insert(at, *token == '\0' ? std::string(1, '\0') : std::string(token));
      break;
    }
    case 2: s.erase(at, below(rng, 64)); break;
    case 3:
      if (at < s.size()) s.insert(at, s.substr(at, below(rng, 256)));
      break;
    default: s.resize(at); break;
  }
  return s;
}

std::string mutate_spec(const std::string& text, const std::vector<std::string>& seeds, Rng& rng) {
  switch (below(rng, 7)) {
    case 0: return mutate_lines(text, seeds, rng);
    case 1: {
      std::string s = text;
      return s.insert(sql_position(s, rng), pick(kSqlTokens, rng));
    }
    case 2: {  // a deep expression: a statement of its own at a block's start, or in a number's place
      static constexpr std::array<int, 9> kDepths = {3, 64, 127, 128, 129, 300, 600, 2000, 20000};
      const std::string deep = nested(rng, pick(kDepths, rng));
      if (below(rng, 2) == 0) return replace_number(text, rng, deep);
      std::string s = text;
      const std::size_t open = s.find('{', below(rng, s.size() + 1));
      return s.insert(open == std::string::npos ? s.size() : open + 1, " SELECT " + deep + "; ");
    }
    case 3: return replace_number(text, rng);
    case 4: return replace_statement(text, rng);
    case 5: return mutate_lines(text, seeds, rng);
    default: return spec_bytes(text, rng);
  }
}

}  // namespace lockstep::fuzz
