// model/sql/records.h: a table's row as one value (Type::record), as a whole-row reference
// gives it: `SELECT j FROM que_jobs AS j`, then `(j).job_id`, `(j).*`, `row_to_json(j)`,
// `to_jsonb(j)`. A record value is of one of the server's row types
// (SqlContextSource::record_type: a table's columns when the value was made); its text is
// what PostgreSQL's record_out prints, and its fields are read back from that text by the
// columns' input functions, so a field reads as the column it came from. Comparing records,
// casting text to one and rows of other shapes (ROW(...) values, a subquery's row) are outside
// the subset (0A000, or the server's 42883 for an operator).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/plan.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// An anonymous row type's name (a subquery's row: "record" + this + its columns' signature).
inline constexpr char kAnonymousRowType = '\x1e';
// A row type's name as messages give it ("record" for an anonymous one).
std::string_view row_type_name(const CreateTable& def);
// record_out's text of the fields' texts (nullopt: NULL): "(1,abc,,\"a b\")".
std::string record_output(const std::vector<std::optional<std::string>>& fields);
// A row value's text as the server prints it to a client: each field as display_text
// prints its column's value under the session's DateStyle and TimeZone (text_output keeps
// the fields' stored texts).
std::string record_display(const Value& record);
// record_in's split of that text back into the fields' texts (22P02 for malformed text).
std::vector<std::optional<std::string>> record_field_texts(std::string_view text);
// The columns of record type `type` (the running statement's server's), or 0A000.
const CreateTable& record_definition(int type);
// Field `name` of the record (NULL of a NULL record); 42703 when its type has no such column.
Value record_field(const Value& record, std::string_view name);
// The index of the row type named `name` (a table's, or CREATE TYPE name AS (...)'s), or -1.
int row_type_index(std::string_view name);
// v cast to row type `type`: a NULL, a record of that type, or record_in's text (22P02 for a
// malformed one or a field its column's input rejects); 42846 for another value.
Value cast_to_row_type(const Value& v, int type);
// The record of row type `type` with these fields (as record_out prints their texts).
Value make_record(int type, const std::vector<Value>& fields);
// The record's fields in its columns' order (NULLs for a NULL record).
std::vector<Value> record_fields(const Value& record);
// A field's value from its text, as column c's input function reads it.
Value column_input(const ColumnDef& c, std::string_view text);
// to_jsonb(record) and row_to_json(record): an object of the fields by name (json: in the
// columns' order, compact as the server prints it).
Value record_to_jsonb(const Value& record);
Value row_to_json(const Value& record);

}  // namespace lockstep::sql
