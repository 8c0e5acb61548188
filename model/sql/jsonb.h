// model/sql/jsonb.h: PostgreSQL's jsonb for lockstep's SQL subset, as the server normalises,
// prints, compares and operates on it.
//
// A jsonb value is kept as its canonical text, the server's output: object keys without
// duplicates (the last wins), sorted shorter first and then by bytes; ", " and ": " between
// items; numbers as numeric prints them (the input's scale: 1.50 stays 1.50, 1e2 is 100);
// strings escaped as escape_json does. Input is JSON (22P02 "invalid input syntax for type
// json"; a \u0000 escape is 22P05). Equality is structural (1.0 = 1); ordering is the
// server's (jsonb_order). Operators: || (merge objects, concatenate arrays, wrap the rest), ->
// and ->> (a key or an index, negative from the end), @> and <@ (containment), ? (a key or a
// string element), - (a key), #> and #>> (a text[] path). Functions: jsonb_build_object, jsonb_build_array,
// jsonb_typeof, to_jsonb, jsonb_set, jsonb_array_length; aggregates json_agg, jsonb_agg.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// The canonical text of JSON `text` (jsonb's input function).
std::string jsonb_canonical(std::string_view text);
// The string a JSON string literal ("a\\nb", quotes included) stands for.
std::string jsonb_string_value(std::string_view quoted);
// Whether two canonical jsonb texts are equal values (numbers compared by value).
bool jsonb_equal(const std::string& a, const std::string& b);
// Their order as jsonb's btree compares them (jsonb_util.c's compareJsonbContainers): object >
// array > boolean > number > string > null; a longer array or object is greater, then item by
// item; a top-level scalar beside an array is less unless their lengths differ ('[]' < 'null').
std::strong_ordering jsonb_order(const std::string& a, const std::string& b);

// Whether `op` is a jsonb operator of this file's (->, ->>, @>, <@, ?).
bool is_jsonb_operator(std::string_view op);
// a op b where a side is jsonb (||, -, ->, ->>, @>, <@, ?). REQUIRES: neither is NULL.
// jsonb ?| text[] (any of the keys exists, as `?` finds one) and ?& (all of them); NULL
// elements are skipped, an empty array gives false and true.
Value jsonb_keys_operator(std::string_view op, const Value& a, const Value& b);
Value jsonb_operator(std::string_view op, const Value& a, const Value& b);

// jsonb_build_object(k1, v1, ...) and jsonb_typeof(j).
Value jsonb_build_object(const std::vector<Value>& args);
// json_build_object(k1, v1, ...): json text as the server prints it ({"k" : v, ...}); values
// scalars or json (arrays and other types are refused).
Value json_build_object(const std::vector<Value>& args);
Value jsonb_typeof(const Value& j);
// to_jsonb(v): numbers, booleans, arrays, json; timestamps in ISO 8601 (the session's zone,
// +HH:MM); anything else as its text. jsonb_build_array(v...).
Value to_jsonb(const Value& v);
// to_json(v) and json_build_array(v, ...): json text as the server writes it (json values as
// written, rows as row_to_json; arrays, enums, bytea and bit refused).
Value to_json(const Value& v);
Value json_build_array(const std::vector<Value>& args);
Value jsonb_build_array(const std::vector<Value>& args);
// jsonb_set(target, path text[], value jsonb [, create_missing boolean]).
Value jsonb_set(const std::vector<Value>& args);
// a #> path (jsonb) and a #>> path (text).
Value jsonb_path_operator(std::string_view op, const Value& a, const Value& b);
Value jsonb_array_length(const Value& v);
// The rows of jsonb_array_elements[_text] (value), jsonb_each[_text] (key, value) and
// jsonb_object_keys (a key) in FROM, in the jsonb's order.
std::vector<std::vector<Value>> jsonb_rows(std::string_view function, const Value& v);
// json_agg / jsonb_agg of non-empty input (NULL otherwise): an array of to_jsonb's values (json_agg's
// is json with the same text for the values of this subset).
Value json_aggregate(const std::vector<Value>& values, bool binary);

}  // namespace lockstep::sql
