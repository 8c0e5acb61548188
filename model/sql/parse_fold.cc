// model/sql/parse_fold.cc: the planner's constant folding (eval_const_expressions in
// clauses.c), in part, as the statement is read: what PostgreSQL computes before a
// statement runs is computed before it runs here too, so a lock call beside `OR 1 = 1` is
// never made, and `1/0` beside one fails the statement before the call.
#include "lockstep/model/sql/parse_reader.h"

#include <algorithm>
#include <stdexcept>

#include "lockstep/model/sql/eval.h"

namespace lockstep::sql::detail {
namespace {

// The types whose operators and casts the server folds the same whatever the session's
// settings (integers, numeric, float, text, boolean, an untyped literal).
bool fold_plain_type(Type t) {
  return t == Type::unknown || is_integer(t) || t == Type::text || t == Type::boolean || t == Type::numeric || t == Type::float8;
}

bool fold_plain_constant(const Expr& a) { return a.kind == Expr::Kind::constant && fold_plain_type(a.value.type()); }

// Folding evaluates constants only: nothing else is asked for.
class fold_Constants final : public EvalContext {
 public:
  Value column(const Expr&) override { throw std::logic_error("constant folding read a column"); }
  Value param(int) override { throw std::logic_error("constant folding read a parameter"); }
  Value call(const Expr&, const std::vector<Value>&) override { throw std::logic_error("constant folding called a function"); }
  Value subquery(const Expr&) override { throw std::logic_error("constant folding ran a subquery"); }
};

Expr fold_constant(Value v, int location) {
  Expr c;
  c.kind = Expr::Kind::constant;
  c.value = std::move(v);
  c.location = location;
  c.folded = true;
  return c;
}

// AND / OR folded to `v`: its arguments stay with it, unevaluated, for what parse analysis
// checks before the planner folds (a column's name, the tables the statement opens).
Expr folded_keeping_names(Value v, Expr e) {
  Expr c = fold_constant(std::move(v), e.location);
  c.args = std::move(e.args);
  return c;
}

constexpr std::string_view kFoldedOperators[] = {"+", "-", "*", "/", "%", "=", "<>", "<", "<=", ">", ">=", "||"};

}  // namespace

Expr Reader::fold(Expr e) {
  if (!folding_) return e;
  const bool op = e.kind == Expr::Kind::op &&
                  std::find(std::begin(kFoldedOperators), std::end(kFoldedOperators), e.name) != std::end(kFoldedOperators);
  const bool cast = e.kind == Expr::Kind::cast && e.typmod < 0 && e.type != Type::unknown && fold_plain_type(e.type);
  // IN (list), BETWEEN, IS [NOT] NULL and IS [NOT] TRUE ... of constants: the planner's
  // ScalarArrayOpExpr, AND of comparisons, NullTest and BooleanTest, each folded.
  const bool test = e.kind == Expr::Kind::not_ || e.kind == Expr::Kind::in_list || e.kind == Expr::Kind::between ||
                    e.kind == Expr::Kind::is_null || e.kind == Expr::Kind::bool_test;
  if (!op && !cast && !test) return e;
  if (!std::all_of(e.args.begin(), e.args.end(), fold_plain_constant)) return e;
  fold_Constants none;
  try {
    Value v = evaluate(e, none);
    if (!fold_plain_type(v.type())) return e;
    return fold_constant(std::move(v), e.location);
  } catch (const SqlError& error) {  // the planner raises it: the statement fails before it runs
    fold_errors_.push_back(error);
    return e;
  }
}

Expr Reader::fold_short_circuit(Expr e, const std::vector<std::size_t>& marks) {
  if (!folding_) return e;
  // simplify_or_arguments / simplify_and_arguments, and COALESCE's: the arguments in order,
  // each folded; at an error folding one the planner stops (raises it).
  const bool coalesce = e.kind == Expr::Kind::coalesce;
  const bool stop_at = e.kind == Expr::Kind::or_;  // OR ends at TRUE, AND at FALSE
  bool all_constant = true;
  bool saw_null = false;
  for (std::size_t k = 0; k < e.args.size(); ++k) {
    const std::size_t after = k + 1 < marks.size() ? marks[k + 1] : fold_errors_.size();
    if (after > marks[k]) return e;
    const Expr& a = e.args[k];
    if (coalesce) {  // it evaluates no argument after a non-null constant anyway
      if (a.kind != Expr::Kind::constant || a.value.is_null()) continue;
      folded_arms_ = folded_arms_ || k + 1 < e.args.size();
      drop_fold_errors(after);
      return e;
    }
    if (a.kind != Expr::Kind::constant || (a.value.type() != Type::boolean && !a.value.is_null())) {
      all_constant = false;
    } else if (a.value.is_null()) {
      saw_null = true;
    } else if (a.value.as_bool() == stop_at) {
      folded_arms_ = true;
      drop_fold_errors(after);
      return folded_keeping_names(Value::boolean(stop_at), std::move(e));
    }
  }
  if (coalesce || !all_constant) return e;
  folded_arms_ = true;
  return folded_keeping_names(saw_null ? Value::null(Type::boolean) : Value::boolean(!stop_at), std::move(e));
}

}  // namespace lockstep::sql::detail
