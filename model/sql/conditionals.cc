// model/sql/conditionals.cc: CASE and COALESCE (model/sql/conditionals.h).
#include "lockstep/model/sql/conditionals.h"

#include "lockstep/model/sql/casts.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/type_check.h"

namespace lockstep::sql {
namespace {

// An untyped literal chosen as a CASE or COALESCE result takes the type of the first other
// result that shows one without running anything (a constant, a cast's target, a column: a
// NULL of a column is typed), as select_common_type resolves it; an enum, array or record
// type, or none, leaves it as it is.
Value typed_result(Value v, const std::vector<const Expr*>& results, EvalContext& context) {
  if (v.type() != Type::unknown) return v;
  for (const Expr* r : results) {
    Type t = r->kind == Expr::Kind::constant ? r->value.type() : r->kind == Expr::Kind::cast ? r->type : Type::unknown;
    try {
      if (r->kind == Expr::Kind::column) t = context.column(*r).type();
    } catch (const SqlError&) {  // the server's error for that column is given where it is read
    }
    if (t != Type::unknown && t != Type::enum_ && t != Type::array && t != Type::record) return cast(v, t);
  }
  return v;
}

// A CASE's or COALESCE's value `v` of one arm as the type select_common_type gives the
// construct: of the numeric and datetime categories, the widest or preferred type of its arms
// (`COALESCE(timestamp_col, now())` is timestamptz, `CASE ... THEN 1 ELSE 2.5 END` numeric),
// worked out by check_types on the arms (columns as the row has them). Where that cannot tell
// (a parameter, a subquery, an arm raising on the row's values), v as it is.
Value common_typed(const Expr& e, Value v, EvalContext& context) {
  if (v.is_null() || !(is_numeric_category(v.type()) || is_timestamp(v.type()) || v.type() == Type::date)) return v;
  std::optional<Value> common;
  try {
    common = check_types(e, [&](const Expr& ref) -> std::optional<Value> {
      const Value c = context.column(ref);
      if (!c.is_null()) return c;
      if (c.type() == Type::unknown || c.type() == Type::enum_ || c.type() == Type::array || c.type() == Type::record) return std::nullopt;
      ColumnDef def;
      def.type = c.type();
      return prototype_of(def);
    });
  } catch (const SqlError&) {
    return v;
  }
  if (!common || common->type() == v.type()) return v;
  const Type t = common->type();
  const bool widens = (is_numeric_category(t) && is_numeric_category(v.type())) ||
                      ((t == Type::timestamptz || t == Type::timestamp) && (v.type() == Type::date || v.type() == Type::timestamp));
  return widens ? cast(v, t) : v;
}

// The results of a CASE (its THEN and ELSE arms): an untyped literal among them takes the
// others' type.
Value case_result(const Expr& e, Value v, EvalContext& context) {
  if (v.type() != Type::unknown) return common_typed(e, std::move(v), context);
  std::vector<const Expr*> results;
  std::size_t i = e.has_operand ? 1 : 0;
  const std::size_t pairs_end = e.args.size() - (e.has_else ? 1 : 0);
  for (; i < pairs_end; i += 2) results.push_back(&e.args[i + 1]);
  if (e.has_else) results.push_back(&e.args.back());
  return typed_result(std::move(v), results, context);
}

}  // namespace

Value case_value(const Expr& e, EvalContext& context) {
  std::size_t i = 0;
  std::optional<Value> operand;
  if (e.has_operand) operand = evaluate(e.args[i++], context);
  const std::size_t pairs_end = e.args.size() - (e.has_else ? 1 : 0);
  for (; i < pairs_end; i += 2) {
    const Value when = evaluate(e.args[i], context);
    const bool hit = operand ? is_true(comparison("=", *operand, when), "CASE") : is_true(when, "CASE");
    if (hit) return case_result(e, evaluate(e.args[i + 1], context), context);
  }
  return e.has_else ? case_result(e, evaluate(e.args.back(), context), context) : Value::null();
}

Value coalesce_value(const Expr& e, EvalContext& context) {
  for (const Expr& a : e.args) {
    Value v = evaluate(a, context);
    if (v.is_null()) continue;
    if (v.type() != Type::unknown) return common_typed(e, std::move(v), context);
    std::vector<const Expr*> results;
    for (const Expr& r : e.args) results.push_back(&r);
    return typed_result(std::move(v), results, context);
  }
  return Value::null();
}

}  // namespace lockstep::sql
