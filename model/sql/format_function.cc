#include "lockstep/model/sql/format_function.h"

#include <pg_query.h>

#include <fmt/format.h>

#include "lockstep/model/sql/text_functions.h"

namespace lockstep::sql {
namespace {

// Whether PostgreSQL's grammar takes `word` as written, in both places a keyword other than an
// unreserved one fails: a table alias (ColId: reserved and type-function-name keywords fail)
// and a function in FROM (type_function_name: column-name keywords fail). overlay() and
// substring() parse there with no arguments by their own rules: they are column-name keywords.
bool format_parses(const std::string& sql) {
  PgQueryParseResult r = pg_query_parse(sql.c_str());
  const bool ok = r.error == nullptr;
  pg_query_free_parse_result(r);
  return ok;
}

bool format_is_keyword(std::string_view word) {
  if (word == "overlay" || word == "substring") return true;
  const std::string w(word);
  return !format_parses(fmt::format("SELECT 1 FROM t AS {}", w)) || !format_parses(fmt::format("SELECT 1 FROM {}()", w));
}

[[noreturn]] void format_unterminated() { throw SqlError("22023", "unterminated format() type specifier"); }

}  // namespace

std::string quote_ident(std::string_view name) {
  bool plain = !name.empty() && ((name[0] >= 'a' && name[0] <= 'z') || name[0] == '_');
  for (const char c : name) plain = plain && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  if (plain && !format_is_keyword(name)) return std::string(name);
  std::string out = "\"";
  for (const char c : name) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string quote_literal(std::string_view text) {
  std::string out;
  if (text.find('\\') != std::string_view::npos) out += 'E';
  out += '\'';
  for (const char c : text) {
    if (c == '\'' || c == '\\') out += c;
    out += c;
  }
  return out + '\'';
}

Value format_function(const std::vector<Value>& args) {
  if (args.empty()) throw SqlError("42883", "function format() does not exist");
  if (args[0].is_null()) return Value::null(Type::text);
  const std::string f = output_text(args[0]);
  std::string out;
  std::size_t next = 1;  // the argument a specifier without a position takes
  for (std::size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out += f[i];
      continue;
    }
    if (++i >= f.size()) format_unterminated();
    if (f[i] == '%') {
      out += '%';
      continue;
    }
    // [n$][-][width]type
    auto number = [&]() {
      std::size_t n = 0;
      while (i < f.size() && f[i] >= '0' && f[i] <= '9') {
        n = n * 10 + static_cast<std::size_t>(f[i] - '0');
        if (n > 1'000'000) throw SqlError("22003", "number is out of range");
        ++i;
      }
      return n;
    };
    std::size_t position = 0, width = 0;
    bool left = false;
    if (f[i] >= '0' && f[i] <= '9') {
      const std::size_t n = number();
      if (i >= f.size()) format_unterminated();
      if (f[i] == '$') {
        if (n == 0) throw SqlError("22023", "format specifies argument 0, but arguments are numbered from 1");
        position = n;
        ++i;
      } else {
        width = n;
      }
    }
    if (width == 0) {
      while (i < f.size() && f[i] == '-') {
        left = true;
        ++i;
      }
      if (i < f.size() && f[i] == '*') throw SqlError("0A000", "a width of * in format() is not in lockstep's SQL subset");
      width = number();
    }
    if (i >= f.size()) format_unterminated();
    const char type = f[i];
    if (type != 's' && type != 'I' && type != 'L') {
      throw SqlError("22023", fmt::format("unrecognized format() type specifier \"{}\"", std::string(1, type)));
    }
    const std::size_t arg = position != 0 ? position : next;
    next = arg + 1;
    if (arg >= args.size()) throw SqlError("22023", "too few arguments for format()");
    const Value& v = args[arg];
    std::string piece;
    if (type == 's') {
      if (!v.is_null()) piece = output_text(v);
    } else if (type == 'I') {
      if (v.is_null()) throw SqlError("22004", "null values cannot be formatted as an SQL identifier");
      piece = quote_ident(output_text(v));
    } else {
      piece = v.is_null() ? "NULL" : quote_literal(output_text(v));
    }
    std::size_t chars = 0;
    for (const char c : piece) chars += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
    const std::string pad(width > chars ? width - chars : 0, ' ');
    out += left ? piece + pad : pad + piece;
  }
  return Value::text(std::move(out));
}

}  // namespace lockstep::sql
