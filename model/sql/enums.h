// model/sql/enums.h: enum types (CREATE TYPE name AS ENUM (...)) for lockstep's SQL subset.
//
// An enum value is its label, ordered by declaration as the server orders it. The server's
// enum types are those session_style.h's SqlContextSource reports: a value records which type it is of (its index there) and its
// label's position. Input of a label not declared is 22P02 "invalid input value for enum
// NAME"; comparing two enums of different types, or an enum with text, is 42883. An untyped
// literal becomes an enum beside one (a comparison, an assignment to an enum column, a cast
// `'x'::name`); elsewhere (GREATEST of literals only, say) it is refused, not guessed.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

struct EnumType {
  std::string name;  // one per server (42710 for a second in another schema)
  std::string schema = "public";
  std::vector<std::string> labels;
  // CREATE TYPE name AS (fields): declared (pgmq's message_record), so that a schema that
  // declares one loads; a column or value of it is refused by name (0A000).
  bool composite = false;
};

// The current enum type named `name`, by its index, or -1 (also for a composite type, after
// refusing it: 0A000).
int enum_index(std::string_view name);
// Whether the server has a type of this name (an enum or a composite type).
bool has_declared_type(std::string_view name);
// The value `label` of the current enum type `index` (22P02 when it has no such label).
Value enum_input(int index, std::string_view label);
// The value `label` of the current enum type named `type` (42704 when there is none).
Value enum_input(std::string_view type, std::string_view label);
// The name of an enum value's type, as messages name it.
std::string enum_type_name(const Value& v);
// v as a value of column type `t` (`user_type` names an enum column's type): an untyped
// literal read as that enum's label, an enum of that type as it is; others as cast() does.
Value cast_to_column(const Value& v, Type t, std::string_view user_type);

}  // namespace lockstep::sql
