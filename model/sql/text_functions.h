// model/sql/text_functions.h: the server's string functions and GREATEST / LEAST / NULLIF for
// lockstep's SQL subset: lower, upper, length (char_length), left, right, substr (substring),
// strpos (position), replace, split_part, concat, concat_ws, btrim, ltrim, rtrim, lpad, rpad,
// reverse;
// LIKE and ILIKE.
//
// Text is UTF-8 and counted in characters, as a UTF8 database counts it. lower and upper
// change ASCII letters only; other letters depend on the server's locale, so text with
// non-ASCII characters is refused there (0A000), never answered differently. Arguments are
// typed as the server types them: an untyped literal is text; another type where text is
// wanted is 42883 "function f(type) does not exist" (concat and concat_ws take any type).
// Errors are the server's (22011 negative substring length, 22023 field position zero).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// Whether `name` is one of this file's functions.
// A value as its type's output function prints it (booleans t / f, the rest in the session's
// styles): what concat, format and quote_literal take of a non-text argument.
std::string output_text(const Value& v);
bool is_text_function(std::string_view name);
// Its value for `args` (already evaluated). REQUIRES: is_text_function(name).
Value text_function(std::string_view name, const std::vector<Value>& args);

// GREATEST / LEAST (`greatest`: true for GREATEST) of the non-NULL arguments, of their common
// type (an untyped literal takes the others'; integers widen); NULL when all are NULL. 42804
// when two types cannot be matched.
Value greatest_or_least(const std::vector<Value>& args, bool greatest);
// NULLIF(a, b): NULL when a = b, else a.
Value null_if(const Value& a, const Value& b);
// text LIKE pattern (`ignore_case`: ILIKE, ASCII letters only): `%` any characters, `_` one,
// `\` takes the next one as it is (22025 at the pattern's end); NULL beside NULL.
Value like(const Value& text, const Value& pattern, bool ignore_case);

}  // namespace lockstep::sql
