// model/sql/parse.h: SQL text to plans (model/sql/plan.h), with PostgreSQL's own parser.
//
// libpg_query (PostgreSQL 15's grammar) parses the text; the parse tree, read as JSON, is
// walked strictly: every node and every field of a node must be one lockstep's subset
// knows. What parses here is what the server parses, and a construct outside the subset is
// refused by name, never approximated. Errors carry the position PostgreSQL would report
// (1-based, in characters of the whole text) and a caret line under the statement.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/plan.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// Text that is not SQL (42601, PostgreSQL's syntax error), or SQL outside lockstep's subset
// (0A000, feature not supported): bad input, found before anything runs.
class SqlInputError : public SqlError {
 public:
  SqlInputError(std::string sqlstate, const std::string& message, int position)
      : SqlError(std::move(sqlstate), message), position_(position) {}
  int position() const { return position_; }  // 1-based; 0 when unknown

 private:
  int position_;
};

// Where 1-based character `position` of `text` falls, counting from (line, column) at the
// text's start: an error's place in a statement, or in the file that holds it.
struct TextPlace {
  int line = 1;
  int column = 1;
};
inline TextPlace place_in(std::string_view text, int position, TextPlace start = {}) {
  int chars = 0;
  for (std::size_t i = 0; i < text.size() && chars + 1 < position; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if ((c & 0xC0) == 0x80) continue;  // a UTF-8 continuation byte: the same character
    ++chars;
    start.column = c == '\n' ? 1 : start.column + 1;
    if (c == '\n') ++start.line;
  }
  return start;
}

// Every statement of `text` (one or more, separated by semicolons), in order. Throws
// SqlInputError. An empty text (or only comments) gives none.
// Text that is not UTF-8 is PostgreSQL's 22021 (invalid byte sequence), at the bad byte.
std::vector<Statement> parse_sql(std::string_view text);

// How many statements PostgreSQL's scanner finds in `text` (split at semicolons outside quotes
// and $$ bodies; 0 where it cannot scan it).
std::size_t statement_count(std::string_view text);

// One statement (a prepared statement's text): SqlInputError when the text holds none or
// several.
Statement parse_statement(std::string_view text);

// The offset of the first byte of `text` that is not well-formed UTF-8 (RFC 3629: no
// overlong forms, no surrogates, at most U+10FFFF), or npos.
std::size_t invalid_utf8(std::string_view text);

}  // namespace lockstep::sql
