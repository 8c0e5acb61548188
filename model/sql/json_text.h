// model/sql/json_text.h: operators and functions on `json` (not jsonb), which the server keeps
// as the text it was given: -> returns the member's or element's text exactly as written
// (spacing kept), ->> the same as text (a string unescaped, null as NULL), and
// json_array_elements[_text] the elements likewise. A key a json object repeats gives its
// last value. A key of a non-object, an index of a non-array, or one out of range is NULL, as
// the server's json operators give (jsonb's are model/sql/jsonb.h).
#pragma once

#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// a -> b and a ->> b where a is json: b text (a key) or an integer (an index, negative from
// the end). REQUIRES: neither is NULL.
Value json_operator(std::string_view op, const Value& a, const Value& b);
// The rows of json_array_elements[_text](v) in FROM: one value each.
std::vector<std::vector<Value>> json_rows(std::string_view function, const Value& v);

}  // namespace lockstep::sql
