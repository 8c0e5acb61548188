// model/sql/conditionals.h: CASE and COALESCE as PostgreSQL evaluates and types them: the
// first arm that applies, its value of the type select_common_type gives the construct (an
// untyped literal the other arms' type; of the numeric and datetime categories the widest or
// preferred type of the arms: COALESCE(int_col, 0.0) is numeric, COALESCE(timestamp_col,
// now()) timestamptz). Arms that do not apply are not evaluated.
#pragma once

#include "lockstep/model/sql/eval.h"

namespace lockstep::sql {

Value case_value(const Expr& e, EvalContext& context);
Value coalesce_value(const Expr& e, EvalContext& context);

}  // namespace lockstep::sql
