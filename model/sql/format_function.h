// model/sql/format_function.h: format(formatstr, args...) as the server's text_format: %s (the
// value's output in the session's styles, NULL as nothing), %I (quote_ident: quoted unless a
// lower-case identifier that is no keyword the grammar reserves, which PostgreSQL's own parser
// decides), %L (quote_literal: NULL unquoted, E'' when a backslash is in it), %%, positions
// (%2$s), the `-` flag and a width (* refused). Errors are the server's (22023, 22004).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

Value format_function(const std::vector<Value>& args);
// quote_ident(name): the name as an SQL identifier.
std::string quote_ident(std::string_view name);
// quote_literal(text): the text as an SQL string literal.
std::string quote_literal(std::string_view text);

}  // namespace lockstep::sql
