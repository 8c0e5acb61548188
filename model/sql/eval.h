// model/sql/eval.h: evaluating an expression of a plan (model/sql/plan.h) with SQL's rules.
//
// Three-valued logic (NULL propagates through operators; AND / OR / NOT follow SQL's
// truth tables), PostgreSQL's typing of the subset (an untyped literal takes its other
// operand's type; integer arithmetic checks its range; timestamptz +/- interval; interval *
// integer), and the server's errors (SqlError with its SQLSTATE). What depends on the
// server (columns of the current row, parameters, functions of time, locks and sessions,
// subqueries) comes from an EvalContext, so this file runs nothing and can be used by
// either backend.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/plan.h"

namespace lockstep::sql {

class EvalContext {
 public:
  virtual ~EvalContext() = default;
  // The column's value in the current row; throws SqlError 42703 for an unknown column.
  virtual Value column(const Expr& ref) = 0;
  // $n; throws SqlError 08P01 when the statement was given fewer parameters.
  virtual Value param(int number) = 0;
  // A function that is not a plain function of its arguments (FunctionKind::time,
  // advisory_lock, session), or an aggregate (its value over the current group).
  virtual Value call(const Expr& call, const std::vector<Value>& args) = 0;
  // A scalar subquery's value (NULL when it returns no row), EXISTS, or x IN (SELECT ...)
  // (three-valued, as IN over a list).
  virtual Value subquery(const Expr& e) = 0;
  // A LANGUAGE sql function's body that is a query (CreateFunction::query_body, the scalar
  // subquery `query`): its first row's value, NULL without one, with the names and $n of
  // `params` (the call's arguments) and none of the calling query's rows. Refused (0A000)
  // where no query can run.
  virtual Value function_body(const Expr& query, EvalContext& params);
  // A LANGUAGE plpgsql function's call, its arguments cast to its parameters: its value (a
  // record of the row type it returns). Refused (0A000) where no statement can run.
  virtual Value plpgsql_call(const CreateFunction& f, const std::vector<Value>& args);
  // Whether `ref` names a variable of a running function (a parameter, a plpgsql variable),
  // which its statements read by name after their own columns; with `conflicts_with_columns`
  // (plpgsql's variable_conflict = error) a name that is also a column is ambiguous, 42702.
  virtual bool names_variable(const Expr&) const { return false; }
  virtual bool conflicts_with_columns() const { return false; }
  // For the top AND of a WHERE, JOIN/ON or HAVING: its conditions in the order the executor
  // runs them (model/sql/qual_cost.h), which stops at the first that is not true; nullptr: an
  // AND's arguments as written, each run until one is false.
  virtual const std::vector<const Expr*>* qual_order(const Expr&) const { return nullptr; }
};

Value evaluate(const Expr& e, EvalContext& context);

// 42703 for a column reference that names nothing, worded as the server's parser words it:
// `column t.c does not exist` for a qualified one, `column "c" does not exist` otherwise.
SqlError missing_column_error(const Expr& ref);

// PostgreSQL's check_stack_depth for what recurses on the input (a function's call, a
// subquery's run): 54001 "stack depth limit exceeded" where the current stack has less room
// left than a step of that recursion may need (model/stack_room.h); on a stack of unknown room,
// past `depth` levels of the caller's own count.
void check_stack_depth(int depth);

// x IN (list): true when an element equals x, else NULL when x or an element is NULL (and
// the list is not empty), else false.
Value in_values(const Value& x, const std::vector<Value>& list);
// (x1, x2, ...) IN (rows): each row compared element by element (three-valued), as the server's
// row IN (SELECT a, b, ...). REQUIRES: each row has xs.size() values.
Value in_rows(const std::vector<Value>& xs, const std::vector<std::vector<Value>>& rows);

// WHERE's reading of a value: true only when it is boolean true (NULL is not true). Throws
// SqlError 42804 when the value is not boolean.
bool is_true(const Value& v, std::string_view clause = "WHERE");
// a op b for = <> < <= > >= (arrays: their operators): SQL's three-valued boolean.
Value comparison(std::string_view op, const Value& a, const Value& b);

}  // namespace lockstep::sql
