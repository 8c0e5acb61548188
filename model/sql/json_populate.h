// model/sql/json_populate.h: a JSON object as a row of given columns, as PostgreSQL's
// populate_record (jsonfuncs.c) reads it for json[b]_populate_record[set](base, json) and
// json[b]_to_recordset(json) AS x(name type, ...).
//
// Each column takes the object's field of its name: absent or JSON null, the base row's field
// (NULL without one); a string, its contents read by the column's input; an array for an array
// column, its elements (a string's contents, null as NULL, another value's JSON text) read as
// the element type (a nested array: 0A000, the server builds a multidimensional one); another
// value, its JSON text (json: as written; jsonb: as printed), so `{"m": 3.0}` into a smallint is
// the input's 22P02 as on the server. The errors are the server's: 22023 for a non-object where
// a row is wanted, 22P02 "expected JSON array" for a scalar or object into an array column.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/plan.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// Reads a field's text (an untyped literal) as column `c` stores it (a table's assignment,
// with its length and enum checks).
using ColumnInput = std::function<Value(Value text, const ColumnDef& c)>;

// The row `object` (json or jsonb) gives: columns as above; `base` the fields of absent keys
// (empty: NULLs).
std::vector<Value> json_object_row(const Value& object, const std::vector<ColumnDef>& columns, const std::vector<Value>& base,
                                   const ColumnInput& input);
// The rows of json[b]_populate_recordset / json[b]_to_recordset: one per element of the array
// (NULL: none; 22023 for a non-array or an element that is no object).
std::vector<std::vector<Value>> json_array_rows(std::string_view function, const Value& array, const std::vector<ColumnDef>& columns,
                                                const std::vector<Value>& base, const ColumnInput& input);
// json[b]_populate_record(base, object)'s one row (a NULL object: the base's fields; 22023
// "cannot call populate_composite on a scalar | an array" for another JSON value).
std::vector<Value> json_populate_row(const Value& object, const std::vector<ColumnDef>& columns, const std::vector<Value>& base,
                                     const ColumnInput& input);
// json[b]_populate_record(base, object) as a value: a record of base's row type (42804 when
// base is of no row type).
Value json_populate_record_value(std::string_view function, const Value& base, const Value& object);
// Whether `name` is one of json_populate_record, jsonb_populate_record, json_populate_recordset
// and jsonb_populate_recordset.
bool is_json_populate(std::string_view name);

}  // namespace lockstep::sql
