// model/sql/arrays.h: one-dimensional arrays of the subset's types, as PostgreSQL 15 reads,
// prints, compares and combines them.
//
// An array value (Type::array) keeps its element type and its canonical text, the server's
// array_out of the elements' canonical text ({1,2}, {"a b",NULL}): equal arrays have equal
// text, and a stored row keeps it as is. Input is array_in's for one dimension (quoting,
// backslash escapes, NULL, whitespace); several dimensions and dimension decorations are
// refused (0A000), never approximated. Operations follow the server's: `x op ANY / ALL
// (array)` three-valued, `||` as array_cat / array_append / array_prepend (an untyped literal
// beside an array is an array), subscripts from 1 (NULL out of range), `@>`, `<@`, `&&`, and
// the functions of array_functions(); equality treats two NULL elements as equal, as
// array_eq does.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// The element type of an array value, with its enum type when the elements are enums, or
// its row type (model/sql/records.h) when they are records (a composite type's array).
struct ElementType {
  Type type = Type::unknown;
  int enum_index = -1;  // Type::enum_: the enum's index; Type::record: the row type's
};
ElementType element_type(const Value& array);
// A declared array's element (a column's, a parameter's, a cast's): a user type named
// `user_type` is a composite type's record or an enum (42704 when the server has neither).
ElementType declared_element(Type element, std::string_view user_type);

// The array of these elements (each already of the element type, or NULL).
Value make_array(ElementType element, const std::vector<Value>& elements);
// array[lower:upper] (a bound left out: the array's own), as array_get_slice: NULL for a NULL
// bound, the elements from max(lower, 1) to min(upper, length), else '{}'.
Value array_slice(const Value& array, const std::optional<Value>& lower, const std::optional<Value>& upper);
// Its elements, each of the element type (NULL elements as NULL values).
std::vector<Value> array_elements(const Value& array);
// Text read as an array of `element` (array_in): 22P02 "malformed array literal" when it is
// not one; an element that is not of the type fails as that type's input does.
Value array_input(std::string_view text, ElementType element);
// v as an array of `element`: an untyped or text literal read, an array cast element by
// element; 42846 otherwise.
Value cast_to_array(const Value& v, ElementType element);
// The array as the session prints it (elements in its DateStyle and IntervalStyle).
std::string array_display(const Value& array);
// As messages name the type: "integer[]", "text[]".
std::string array_type_name(const Value& array);

// ARRAY[e, ...]: the elements' common type (an untyped literal takes the others', integers
// widen, all untyped: text); 42804 when two cannot be matched. Without elements: an array of
// unknown element type, which a cast must type (42P18 otherwise, raised by the parser).
Value array_constructor(const std::vector<Value>& elements);
// x op ANY (array) (all: op ALL): SQL's three-valued result.
Value quantified(std::string_view op, bool all, const Value& x, const Value& array);
// Whether a binary operator with these operands is an array operator (one side an array).
bool is_array_operand(const Value& a, const Value& b);
// a op b for ||, =, <>, <, <=, >, >=, @>, <@, && with an array on one side.
Value array_operator(std::string_view op, const Value& a, const Value& b);
// Array comparison (array_cmp): element by element (NULL last), then length; integer arrays
// of two widths as the wider (values a sort, grouping or UNION has coerced to one type).
std::strong_ordering array_compare(const Value& a, const Value& b, std::string_view op);
// array[index] (NULL out of range).
Value array_subscript(const Value& array, const Value& index);
// array_append, array_prepend, array_cat, array_remove, array_length, cardinality,
// array_position, array_to_string, string_to_array.
bool is_array_function(std::string_view name);
Value array_function(std::string_view name, const std::vector<Value>& args);

}  // namespace lockstep::sql
