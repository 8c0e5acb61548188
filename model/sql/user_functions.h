// model/sql/user_functions.h: a call of a LANGUAGE sql function (plan.h's CreateFunction) the
// server has (session_style.h's SqlContextSource::sql_function), as the server runs it: the
// function is found by name (one per name); an argument of another type than its parameter's,
// with no implicit cast to it, or another count, is 42883 "function f(types) does not exist";
// arguments are cast to the parameters' types, STRICT returns NULL for a NULL argument, the
// body is evaluated with the parameters by name or $n (other calls, such as now(), are the
// calling statement's; a query body is run by the calling context: EvalContext::function_body),
// and its value cast to the return type. A name the server has no
// function of is refused (0A000: lockstep cannot tell it from a built-in it lacks). Calls
// nest as deep as the stack has room for (54001: eval.h check_stack_depth).
#pragma once

#include <vector>

#include "lockstep/model/sql/eval.h"

namespace lockstep::sql {

Value call_user_function(const Expr& call, std::vector<Value> args, EvalContext& outer);

// The created function a call runs (one of a name's overloads, picked by its arguments'
// values in `ctx` as call_user_function picks it), or nullptr for a name the server has none of.
const CreateFunction* user_function_of_call(const Expr& call, EvalContext& ctx);

// Whether two created functions take parameters of the same types (the same signature: the
// server's overloading tells the others apart by their arguments).
bool same_parameter_types(const CreateFunction& a, const CreateFunction& b);
// Whether two functions return the same: type, SETOF, OUT parameters (what a call found by its
// name alone is asked: its result's columns).
bool same_result_shape(const CreateFunction& a, const CreateFunction& b);

}  // namespace lockstep::sql
