// model/sql/parse_guard.cc: what keeps a statement from reaching libpg_query when its tree could
// overflow the stack while libpg_query writes it out (its output functions recurse on the tree
// without a depth check: 20,000 terms of `1 + 1 + ...` crash the process).
//
// The server itself refuses such a statement ("stack depth limit exceeded" past a few thousand
// chained operators, at its max_stack_depth of 2 MB), and the reader of the tree refuses nesting
// past 128 levels anyway; this bound is far above both, so nothing the server answers is
// refused here that the reader would not refuse.
#include "lockstep/model/sql/parse_reader.h"

#include <algorithm>
#include <fmt/format.h>

#include "lockstep/model/sql/parse.h"

namespace lockstep::sql::detail {

void refuse_trees_too_deep_to_parse(std::string_view text) {
  constexpr int kMaxOperators = 4000;  // operators and opening parentheses in one string
  static constexpr std::string_view kOperatorChars = "+-*/<>=~!@#%^&|`?";
  int count = 0;
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
    } else if (c == '$') {  // $tag$ ... $tag$
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
    if ((op && !in_operator) || c == '(') ++count;
    in_operator = op;
    if (count > kMaxOperators) {
      throw SqlInputError("0A000", fmt::format("a statement string of more than {} operators and parentheses is not in lockstep's SQL subset "
                                               "(docs/sql.md)", kMaxOperators),
                          static_cast<int>(i) + 1);
    }
  }
}

}  // namespace lockstep::sql::detail
