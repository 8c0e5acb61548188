// model/sql/null_operands.cc: an operator beside a NULL whose type its text gives (model/sql/null_operands.h).
#include "lockstep/model/sql/null_operands.h"

#include "lockstep/model/sql/type_check.h"

namespace lockstep::sql {

namespace {

// Whether an error is parse analysis's: no operator takes these types.
bool is_type_resolution(const SqlError& e) { return e.sqlstate() == "42883" || e.sqlstate() == "42725"; }

// The scalar types whose NULLs a comparison's operator is resolved for here.
bool resolved_for_nulls(Type t) {
  switch (t) {
    case Type::int2: case Type::int4: case Type::int8: case Type::numeric: case Type::float8: case Type::text: case Type::boolean:
    case Type::timestamptz: case Type::timestamp: case Type::date: case Type::time: case Type::interval: case Type::jsonb:
    case Type::uuid: case Type::bytea: return true;
    default: return false;
  }
}

}  // namespace

// An operator beside an untyped NULL: the server first tries the NULL as the other side's
// type (a time's `+`: an interval), so where `T op T` exists the result has its type
// (`now() - NULL` is an interval, `date - NULL` an integer); `date + NULL` is 42725 whatever
// the values. `typed` is the other side.
Value beside_untyped_null(std::string_view op, const Value& typed, bool typed_left) {
  if (!resolved_for_nulls(typed.type())) return Value::null();
  const Type as = is_time_of(typed.type()) && op == "+" ? Type::interval : typed.type();
  if (typed.type() == Type::date && op == "+") {
    throw SqlError("42725", typed_left ? "operator is not unique: date + unknown" : "operator is not unique: unknown + date");
  }
  const std::optional<Value> other = prototype_of_type(as);
  const std::optional<Value> self = typed.is_null() ? prototype_of_type(typed.type()) : std::optional(typed);
  if (!other || !self) return Value::null();
  try {
    const Value r = typed_left ? arithmetic(op, *self, *other) : arithmetic(op, *other, *self);
    return Value::null(r.type());
  } catch (const SqlError&) {
    // No `T op T` (interval * unknown is interval * float8, found among the others), or a
    // value's error: the NULL's type stays untold, as before.
    return Value::null();
  }
}

// A comparison with a NULL whose type its text gives (a cast, an operator beside an untyped
// NULL: `ts > now() - NULL`, an interval): the operator for the two types must exist.
void check_null_comparison(std::string_view op, const Value& a, const Value& b) {
  if (a.type() == b.type() || !resolved_for_nulls(a.type()) || !resolved_for_nulls(b.type())) return;
  const std::optional<Value> x = a.is_null() ? prototype_of_type(a.type()) : std::optional(a);
  const std::optional<Value> y = b.is_null() ? prototype_of_type(b.type()) : std::optional(b);
  try {
    if (x && y) (void)compare(*x, *y, op);
  } catch (const SqlError& e) {
    if (is_type_resolution(e)) throw;
  }
}

bool null_literal(const Expr& x) { return x.kind == Expr::Kind::constant && x.value.is_null() && x.value.type() == Type::unknown; }

}  // namespace lockstep::sql
