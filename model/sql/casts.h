// model/sql/casts.h: a cast expression's value (`x::type`, `CAST(x AS type)`, `ROW(...)::type`)
// with the target's type modifiers, as PostgreSQL's coercions give it.
//
// Guarantees: an enum target reads text through the type's input; a row type (a table's, or
// CREATE TYPE ... AS (...)'s) takes NULL, a record of the type or record_in's text, and a row
// constructor of as many fields, each cast explicitly to its column's type (an untyped literal
// read by the column's input), else 42846 as the server; varchar(n), char(n),
// bit(n), numeric(p, s) and timestamp(p) apply their modifiers as an explicit cast does.
#pragma once

#include <vector>

#include "lockstep/model/sql/plan.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// The value of cast expression `e` (Expr::Kind::cast) of its operand's value v.
Value cast_value(const Expr& e, const Value& v);
// The value of `ROW(fields...)::type` (e a cast of a row constructor to a row type).
Value row_constructor_cast(const Expr& e, const std::vector<Value>& fields);

}  // namespace lockstep::sql
