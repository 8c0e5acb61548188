// model/sql/type_check.h: an expression's types checked as PostgreSQL's parse analysis checks
// them, before any row is read.
//
// The server resolves each operator and function by its arguments' types, and reads each
// untyped literal as the type its context gives it, while it parses the statement: `text_col
// = 5` (42883), `enum_col = 'typo'` (22P02), `CASE WHEN c THEN 1 ELSE 'a' END` (22P02) fail
// whatever the rows, also where no row reaches them (an empty table, an AND already false).
// evaluate() (eval.h) types values as it computes them, so an operand no row reaches would
// answer. check_types runs each node once on prototypes: a value of each column's type
// (prototype_of), the literals themselves, and each node's result for its parent, through
// evaluate() itself; what that raises which only types decide is the statement's error.
//
// Guarantees: throws only sql::SqlError of type resolution (42883, 42804, 42846, 42725), or of
// a literal's input (22P02, 22007, 22008, 22003 naming the literal), worded as evaluate()
// words it. Runs nothing on a server: a node that would read a clock, a lock, a sequence, a
// setting, a subquery or a parameter gives at most its result type. A node whose operands'
// types it cannot tell (parameters, subqueries, aggregates, rows, columns the resolver does
// not know) is left to the executor.
#pragma once

#include <functional>
#include <optional>
#include <string_view>

#include "lockstep/model/sql/plan.h"

namespace lockstep::sql {

// A column reference's prototype (a value of its type), or nullopt where the caller cannot
// tell which column it names or its type.
using ColumnPrototypes = std::function<std::optional<Value>(const Expr& ref)>;

// A non-NULL value of a type that needs nothing else to name it (nullopt: unknown, an enum,
// an array, a record).
std::optional<Value> prototype_of_type(Type t);

// A non-NULL value of the column's declared type; nullopt for a record, an enum without labels.
std::optional<Value> prototype_of(const ColumnDef& c);

// Checks e's types. With `boolean_clause` ("WHERE", "HAVING", "JOIN/ON"), its value must be
// boolean too (42804 "argument of WHERE must be type boolean"). Returns e's prototype, or
// nullopt where its type is not known without rows.
std::optional<Value> check_types(const Expr& e, const ColumnPrototypes& columns, std::string_view boolean_clause = {});

// Whether `err`, raised by evaluating `e` on prototypes, is one the server raises while parsing
// (type resolution, or the input of one of e's own literal operands).
bool is_parse_time_error(const SqlError& err, const Expr& e);

}  // namespace lockstep::sql
