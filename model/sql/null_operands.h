// model/sql/null_operands.h: operators beside a NULL whose type the statement's text gives, as
// PostgreSQL's operator resolution types them while it parses (before any value): an untyped
// NULL literal is read as the other operand's type first (`now() - NULL` is an interval), and
// a comparison of two types no operator takes fails (42883) though a side is NULL. Used by
// eval.cc's operator_value; NULLs of other origins keep their behaviour.
#pragma once

#include <string_view>

#include "lockstep/model/sql/plan.h"

namespace lockstep::sql {

// eval.cc's binary operators on values (the NULL-typing below tries them on prototypes).
Value arithmetic(std::string_view op, Value a, Value b);

// Whether x is the literal NULL (no cast: of no type).
bool null_literal(const Expr& x);

// `op` with an untyped NULL on one side and `typed` on the other (`typed_left`: on the
// left): a NULL of `T op T`'s result type where that operator exists, else of no type;
// `date + NULL` is 42725.
Value beside_untyped_null(std::string_view op, const Value& typed, bool typed_left);

// Throws the server's 42883 where no comparison operator takes a's and b's types (a or b
// NULL, typed by its text); otherwise nothing.
void check_null_comparison(std::string_view op, const Value& a, const Value& b);

}  // namespace lockstep::sql
