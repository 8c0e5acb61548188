// model/sql/operators.h: the operators of integers and bit strings beside arithmetic
// (model/sql/eval.cc): shifts, bitwise AND, OR, XOR and NOT, as PostgreSQL 15 computes and
// types them; and what the evaluator shares with them (the wider integer type, the 42883 of
// an operator that does not exist for its operands' types).
#pragma once

#include <string_view>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// The wider of two integer types.
Type wider(Type a, Type b);
// 42883: "operator does not exist: a op b".
[[noreturn]] void no_operator(std::string_view op, const Value& a, const Value& b);
// `<<` and `>>` of a bit string or an integer by an integer.
Value shifted(std::string_view op, const Value& a, const Value& b);
// `&`, `|` and `#` (XOR) of two bit strings of one length (else 22026) or two integers.
Value bitwise(std::string_view op, const Value& a, const Value& b);
// Prefix `~` of a bit string or an integer (NULL stays NULL).
Value bitwise_not(const Value& v);

}  // namespace lockstep::sql
