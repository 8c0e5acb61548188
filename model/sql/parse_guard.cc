// model/sql/parse_guard.cc: what keeps a statement from reaching libpg_query when its tree could
// overflow the stack while libpg_query writes it out (its output functions recurse on the tree
// without a depth check: 20,000 terms of `1 + 1 + ...` crash the process).
//
// The bounds follow the stack left to the parse (model/stack_room.h): on a main thread's 8 MB,
// 4,096 operators or 1,024 levels of parentheses, far past what the server answers (it gives
// "stack depth limit exceeded" beyond a few thousand chained operators at its max_stack_depth of
// 2 MB) and what the reader takes (128 levels of nesting); on a fiber's 512 KB stack (SQL a
// system's own code sends), 256 operators or 64 levels in one string: a bigger statement sent
// from inside a system is refused by this, by name. A plpgsql body is counted too.
#include "lockstep/model/sql/parse_reader.h"

#include <algorithm>
#include <cctype>
#include <limits>

#include <fmt/format.h>

#include "lockstep/model/sql/parse.h"
#include "lockstep/model/stack_room.h"

namespace lockstep::sql::detail {

void refuse_trees_too_deep_to_parse(std::string_view text, bool dollar_quoted_too) {
  // The stack it may use: what is left of the current one (a fiber's), or a main thread's 8 MB.
  const std::size_t room = stack_room();
  const std::size_t budget = room == std::numeric_limits<std::size_t>::max() ? std::size_t{8} << 20 : room;
  // Measured on the main thread: 20,000 chained `+` and 2,200 nested subqueries overflow 8 MB
  // (about 0.4 KB and 3.6 KB a level); these bounds leave twice that and more.
  const int max_operators = static_cast<int>(budget / 2048), max_depth = static_cast<int>(budget / 8192);
  static constexpr std::string_view kOperatorChars = "+-*/<>=~!@#%^&|`?";
  int count = 0, depth = 0;
  bool in_operator = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    std::size_t skip_to = i;
    if (c == '\'' || c == '"') {  // a literal or a quoted name ('' and "" stay inside)
      skip_to = text.find(c, i + 1);
      while (skip_to != std::string_view::npos && skip_to + 1 < text.size() && text[skip_to + 1] == c) skip_to = text.find(c, skip_to + 2);
    } else if (c == '-' && i + 1 < text.size() && text[i + 1] == '-') {
      skip_to = text.find('\n', i);
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      skip_to = text.find("*/", i + 2);
      if (skip_to != std::string_view::npos) ++skip_to;
    } else if (c == '$' && !dollar_quoted_too) {  // $tag$ ... $tag$
      const std::size_t end_tag = text.find('$', i + 1);
      const std::string_view tag = end_tag == std::string_view::npos ? std::string_view{} : text.substr(i, end_tag - i + 1);
      const bool is_tag = !tag.empty() && std::all_of(tag.begin() + 1, tag.end() - 1, [](char t) { return std::isalnum(static_cast<unsigned char>(t)) || t == '_'; }) &&
                          (tag.size() == 2 || !std::isdigit(static_cast<unsigned char>(tag[1])));
      if (is_tag) {
        skip_to = text.find(tag, end_tag + 1);
        if (skip_to != std::string_view::npos) skip_to += tag.size() - 1;
      }
    }
    if (skip_to == std::string_view::npos) return;  // unterminated: the parser's own error
    if (skip_to != i) {
      i = skip_to;
      in_operator = false;
      continue;
    }
    const bool op = kOperatorChars.find(c) != std::string_view::npos;
    if (op && !in_operator) ++count;
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    in_operator = op;
    if (count > max_operators || depth > max_depth) {
      throw SqlInputError("0A000", fmt::format("a statement string of more than {} operators or {} levels of parentheses (here, on this stack) "
                                               "is not in lockstep's SQL subset (docs/sql.md)", max_operators, max_depth),
                          static_cast<int>(i) + 1);
    }
  }
}

}  // namespace lockstep::sql::detail
