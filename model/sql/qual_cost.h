// model/sql/qual_cost.h: the order in which PostgreSQL's executor runs a WHERE's conditions.
//
// The planner splits a WHERE (a JOIN's ON, a HAVING) into its top-level AND conditions; an
// equality of nonvolatile sides (`s = 'b'`, `lower(s) = $1`) goes into an equivalence class and
// comes back to the scan's list after the others. order_qual_clauses sorts that list by cost per
// row as cost_qual_eval charges it, keeping the list's order among equal costs; ExecQual then
// runs them in that order and stops at the first that is not true (false or NULL). So which lock calls, errors and function calls a row meets
// follows the costs, not the text: on an integer `id`, `pg_try_advisory_lock(id) AND p < 3`
// runs `p < 3` first (the lock's argument is cast to bigint, one more function), and `p < 3 AND
// pg_try_advisory_lock(id)` never locks a row whose p is NULL.
//
// Costs are counted in cpu_operator_cost, as the server's cost_qual_eval_walker counts them:
// an operator or built-in function 1 (every built-in lockstep knows has procost 1), an implicit
// cast by function 1 and by text I/O 2, `x IN (list)` half the list (2 from 9 constants on,
// hashed), `= ANY(array)` half its length (10 when not known), a created function its COST
// (100 by default) unless its one-expression SQL body is inlined, a correlated subquery more
// than anything else; columns, constants, parameters, NULL tests, AND, OR, NOT, CASE, COALESCE,
// and what the planner folds to a constant cost nothing.
//
// Guarantees: reads the expression and the catalog's created functions only; never throws.
#pragma once

#include <functional>
#include <utility>
#include <vector>

#include "lockstep/model/sql/plan.h"
#include "lockstep/model/sql/type_check.h"

namespace lockstep::sql {

struct QualCostContext {
  ColumnPrototypes columns;                           // a column's type, for implicit casts (nullopt: none charged)
  std::function<bool(const Select&)> correlated;      // whether a subquery names an outer query's column
};

// Per-row cost of evaluating `e`, in units of cpu_operator_cost.
double qual_cost(const Expr& e, const QualCostContext& context);

// `where`'s top-level AND conditions (nested ANDs flattened) in the order the executor runs
// them; a single condition when `where` is no AND. A BETWEEN or a row equality, which the server
// splits into comparisons, moves as one, at its first comparison's cost.
std::vector<const Expr*> qual_order(const Expr& where, const QualCostContext& context);
// The same for conditions gathered already (a scan's: its joins' ON conditions, then WHERE's).
std::vector<const Expr*> qual_order(std::vector<const Expr*> quals, const QualCostContext& context);
// `e`'s top-level AND conditions, nested ANDs flattened, as written.
std::vector<const Expr*> conjuncts(const Expr& e);

// Each WHERE's (by its top AND) conditions in qual_order's order: a statement's, once analysed.
using QualOrders = std::vector<std::pair<const Expr*, std::vector<const Expr*>>>;

}  // namespace lockstep::sql
