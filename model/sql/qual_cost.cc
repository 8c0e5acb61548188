// model/sql/qual_cost.cc: cost_qual_eval's per-row costs and order_qual_clauses' order
// (model/sql/qual_cost.h).
#include "lockstep/model/sql/qual_cost.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

using K = Expr::Kind;

constexpr double kSubPlan = 1e6;             // a correlated subquery: a plan run per row
constexpr double kCreatedFunctionCost = 100;  // CREATE FUNCTION's default COST (not LANGUAGE C)
constexpr double kUnknownArrayLength = 10;    // estimate_array_length of what is not a constant
constexpr std::size_t kHashedArray = 9;       // MIN_ARRAY_SIZE_FOR_HASHED_SAOP

bool is_textual(Type t) { return t == Type::text || t == Type::bpchar || t == Type::unknown; }
bool is_number(Type t) { return is_integer(t) || t == Type::numeric || t == Type::float8; }

// A cast's cost from `from` to `to`: none between binary-compatible types, a function (1)
// between numbers and between dates and timestamps, else text output and input (2).
double cast_cost(Type from, Type to) {
  if (from == to || (is_textual(from) && is_textual(to)) || from == Type::unknown) return 0;
  if (is_number(from) && is_number(to)) return 1;
  const auto dated = [](Type t) { return t == Type::date || is_timestamp(t); };
  if (dated(from) && dated(to)) return 1;
  if ((from == Type::jsonb && (is_number(to) || to == Type::boolean)) || (is_integer(from) && (to == Type::boolean || to == Type::bit)) ||
      (from == Type::bit && is_integer(to)) || (from == Type::boolean && is_integer(to))) {
    return 1;
  }
  return 2;
}

// Which side of a binary operator the server casts to the other's type (an integer beside a
// numeric or double precision, a numeric beside a double precision): 0 or 1, or -1 for none.
int promoted_side(Type a, Type b) {
  const auto rank = [](Type t) { return is_integer(t) ? 0 : t == Type::numeric ? 1 : t == Type::float8 ? 2 : -1; };
  const int ra = rank(a);
  const int rb = rank(b);
  if (ra < 0 || rb < 0 || ra == rb) return -1;
  return ra < rb ? 0 : 1;
}

class Coster {
 public:
  explicit Coster(const QualCostContext& context) : context_(context) {}

  double cost(const Expr& e) {
    struct Deeper {
      int& depth;
      explicit Deeper(int& d) : depth(++d) { check_stack_depth(d); }
      ~Deeper() { --depth; }
    } deeper(depth_);
    if (folds(e)) return 0;  // eval_const_expressions made it a constant
    switch (e.kind) {
      case K::constant:
      case K::param:
      case K::column: return 0;
      case K::window: return 0;  // a WindowFunc, as an Aggref: costed like a column
      case K::exists:
      case K::subquery:
        return context_.correlated && context_.correlated(*e.select) ? kSubPlan : 0;  // else an InitPlan's Param
      case K::in_subquery:
        return args(e) + (context_.correlated && context_.correlated(*e.select) ? kSubPlan : 1);  // a hashed SubPlan
      case K::op: return args(e) + operator_cost(e);
      case K::like: return args(e) + 1;
      case K::between: return 2 + args(e) + cost(e.args.at(0));  // its operand twice
      case K::in_list: return args(e) + list_cost(e);
      case K::quantified: return args(e) + array_cost(e.args.at(1), e.all ? "<>" : "=", e.name);
      case K::cast: return args(e) + cast_cost(type_of(e.args.at(0)), e.type);
      case K::case_: return args(e) + (e.has_operand ? static_cast<double>((e.args.size() - 1 - (e.has_else ? 1 : 0)) / 2) : 0);
      case K::func: return function_cost(e);
      case K::user_func: return created_function_cost(e);
      default: return args(e);  // AND, OR, NOT, NULL tests, COALESCE, ARRAY[], ROW(), subscripts, fields
    }
  }

 private:
  double args(const Expr& e) {
    double sum = 0;
    for (const Expr& a : e.args) sum += cost(a);
    return sum;
  }

  // Whether the planner folds `e` to a constant: no column, subquery, created function or
  // function that is not a plain function of its arguments (clocks, locks, sessions,
  // settings, aggregates), whatever its operators; parameters are constants in the custom
  // plans libpq's unnamed statements get.
  static bool folds(const Expr& e) {
    switch (e.kind) {
      case K::constant:
      case K::param: return true;
      case K::column:
      case K::subquery:
      case K::exists:
      case K::in_subquery:
      case K::user_func:
      case K::window:
      case K::field: return false;
      case K::func: {
        const FunctionInfo* f = find_function(e.name);
        if (f == nullptr || f->kind != FunctionKind::scalar || e.star) return false;
        break;
      }
      default: break;
    }
    return std::all_of(e.args.begin(), e.args.end(), [](const Expr& a) { return folds(a); });
  }

  std::optional<Value> prototype(const Expr& e) const {
    if (!context_.columns) return std::nullopt;
    try {
      return check_types(e, context_.columns);
    } catch (const SqlError&) {
      return std::nullopt;
    }
  }

  Type type_of(const Expr& e) const {
    const std::optional<Value> v = prototype(e);
    return v ? v->type() : Type::unknown;
  }

  double operator_cost(const Expr& e) {
    if (e.args.size() != 2) return 1;
    const Expr& a = e.args[0];
    const Expr& b = e.args[1];
    if (a.kind == K::row && b.kind == K::row) return static_cast<double>(a.args.size());  // one comparison per column
    const Type ta = type_of(a);
    const Type tb = type_of(b);
    if (e.name == "||") {
      // textanycat / anytextcat (inlined): the other operand's text output, then textcat.
      const auto other = [](Type t) { return t != Type::unknown && !is_textual(t) && t != Type::array && t != Type::jsonb && t != Type::bit && t != Type::bytea; };
      if ((is_textual(ta) && other(tb)) || (is_textual(tb) && other(ta))) return 3;
      return 1;
    }
    // A constant's cast is folded: `numeric_col < 3` compares two numerics, `int_col < 2.5` casts the column.
    const int promoted = promoted_side(ta, tb);
    return 1 + (promoted >= 0 && !folds(promoted == 0 ? a : b) ? 1 : 0);
  }

  // x IN (list): a ScalarArrayOpExpr over the list's constants, hashed from 9 on.
  double list_cost(const Expr& e) {
    const std::size_t n = e.args.size() - 1;
    if (n == 1) return e.args[0].kind == K::row ? static_cast<double>(e.args[0].args.size()) : 1;  // transformAExprIn: x = v
    const bool constants = std::all_of(e.args.begin() + 1, e.args.end(), [](const Expr& a) { return folds(a); });
    if (constants && n >= kHashedArray && e.args[0].kind != K::row) return 2;
    return static_cast<double>(n) * 0.5 * (e.args[0].kind == K::row ? static_cast<double>(e.args[0].args.size()) : 1.0);
  }

  // x op ANY (array) / ALL: the operator on half the array's elements, or a hashed lookup of a
  // constant array of 9 or more (= ANY, <> ALL).
  double array_cost(const Expr& array, std::string_view hashable_op, std::string_view op) {
    double length = kUnknownArrayLength;
    bool constant = false;
    if (array.kind == K::array) {
      length = static_cast<double>(array.args.size());
      constant = folds(array);
    } else if (array.kind == K::constant && !array.value.is_null() && (array.value.type() == Type::array || array.value.type() == Type::unknown)) {
      try {  // an untyped '{1,2}' is the other operand's array type: its elements counted as text
        const Value v = array.value.type() == Type::array ? array.value : array_input(array.value.as_text(), declared_element(Type::text, ""));
        length = static_cast<double>(array_elements(v).size());
        constant = true;
      } catch (const SqlError&) {
      }
    } else if (array.kind == K::cast && array.args.at(0).kind == K::constant && !array.args[0].value.is_null()) {
      try {
        length = static_cast<double>(array_elements(evaluate_constant(array)).size());
        constant = true;
      } catch (const SqlError&) {
      }
    } else if (array.kind == K::param) {
      return 2;  // a custom plan's constant of unknown length: as hashed
    }
    if (constant && length >= kHashedArray && op == hashable_op) return 2;
    return length * 0.5;
  }

  static Value evaluate_constant(const Expr& e) {
    struct NoRow final : EvalContext {
      Value column(const Expr&) override { throw SqlError("0A000", "not a constant"); }
      Value param(int) override { throw SqlError("0A000", "not a constant"); }
      Value call(const Expr&, const std::vector<Value>&) override { throw SqlError("0A000", "not a constant"); }
      Value subquery(const Expr&) override { throw SqlError("0A000", "not a constant"); }
    } none;
    return evaluate(e, none);
  }

  double function_cost(const Expr& e) {
    const FunctionInfo* f = find_function(e.name);
    if (f != nullptr && f->kind == FunctionKind::aggregate) return 0;  // an Aggref: costed like a column
    double own = 1;
    // A key of type integer or smallint given to a one-argument advisory lock function is cast
    // to its bigint parameter; pg_sleep and to_timestamp take a double precision.
    if (e.args.size() == 1 && f != nullptr) {
      const Type t = type_of(e.args[0]);
      if (f->kind == FunctionKind::advisory_lock && (t == Type::int2 || t == Type::int4)) own += 1;
      if ((e.name == "pg_sleep" || e.name == "to_timestamp") && (is_integer(t) || t == Type::numeric)) own += 1;
    }
    return own + args(e);
  }

  // A created function: its COST, unless the planner inlines it (inline_function: a LANGUAGE
  // sql body of one expression, not SECURITY DEFINER, its volatility and strictness kept, each
  // parameter read at most once or given a cheap argument); then its body's cost, with each
  // argument's cost as often as the body reads it.
  double created_function_cost(const Expr& e) {
    const std::vector<const CreateFunction*> found = current_sql_functions(e.name);
    const CreateFunction* f = found.empty() ? nullptr : found.front();
    const double arguments = args(e);
    if (f == nullptr) return kCreatedFunctionCost + arguments;
    if (found.size() > 1) {  // overloads: the call's is picked as it runs; their costs as declared must agree, none inlined
      for (const CreateFunction* g : found) {
        if (g->cost != f->cost || !(g->plpgsql || g->query_body || g->body == nullptr || g->security_definer || g->returns_set || is_sublinked(*g->body))) {
          throw SqlError("0A000", fmt::format("the overloaded function {}() in a condition whose order the planner decides by costs is not in "
                                              "lockstep's SQL subset (docs/sql.md)", e.name));
        }
      }
    }
    const double declared = f->cost >= 0 ? f->cost : kCreatedFunctionCost;
    if (f->plpgsql || f->query_body || f->body == nullptr || f->security_definer || f->returns_set || is_sublinked(*f->body)) {
      return declared + arguments;
    }
    if (f->non_volatile && !folds_but_columns(*f->body)) return declared + arguments;
    if (f->strict && !strict_only(*f->body)) return declared + arguments;
    double total = Coster(QualCostContext{{}, context_.correlated}).cost(*f->body);
    for (std::size_t i = 0; i < e.args.size() && i < f->params.size(); ++i) {
      const int uses = reads_of(*f->body, f->params[i].name, static_cast<int>(i) + 1);
      const double c = cost(e.args[i]);
      if (uses > 1 && c > 10) return declared + arguments;
      total += c * uses;
    }
    return total;
  }

  static bool is_sublinked(const Expr& e) {
    return is_sublink(e) || std::any_of(e.args.begin(), e.args.end(), [](const Expr& a) { return is_sublinked(a); });
  }
  // No call of a clock, lock, session or created function (an IMMUTABLE or STABLE function's
  // body must be no more volatile than it).
  static bool folds_but_columns(const Expr& e) {
    if (e.kind == K::user_func) return false;
    if (e.kind == K::func) {
      const FunctionInfo* f = find_function(e.name);
      if (f == nullptr || (f->kind != FunctionKind::scalar && f->kind != FunctionKind::aggregate)) return false;
    }
    return std::all_of(e.args.begin(), e.args.end(), [](const Expr& a) { return folds_but_columns(a); });
  }
  // Operators, functions and casts only: NULL in gives NULL out, as a STRICT function's body must.
  static bool strict_only(const Expr& e) {
    if (e.kind != K::op && e.kind != K::func && e.kind != K::cast && e.kind != K::column && e.kind != K::param && e.kind != K::constant) return false;
    return std::all_of(e.args.begin(), e.args.end(), [](const Expr& a) { return strict_only(a); });
  }
  static int reads_of(const Expr& e, const std::string& name, int number) {
    int n = (e.kind == K::param && e.number == number) || (e.kind == K::column && !name.empty() && e.name == name) ? 1 : 0;
    for (const Expr& a : e.args) n += reads_of(a, name, number);
    return n;
  }

  const QualCostContext& context_;
  int depth_ = 0;
};

// No call that may change what it returns between calls (a lock, a session's function, a
// created function, a subquery): process_equivalence takes no volatile side.
bool nonvolatile(const Expr& e) {
  if (is_sublink(e) || e.kind == K::user_func) return false;
  if (e.kind == K::func) {
    const FunctionInfo* f = find_function(e.name);
    if (f == nullptr || f->kind == FunctionKind::advisory_lock || f->kind == FunctionKind::session) return false;
  }
  return std::all_of(e.args.begin(), e.args.end(), nonvolatile);
}

// Whether the planner makes `q` an equivalence class's (distribute_qual_to_rels: a
// mergejoinable `a = b` of nonvolatile sides, not two constants; a row equality is one per
// column, `x IN (v)` is `x = v`): such a condition returns to the scan's list after all the
// others, rebuilt from its class (generate_base_implied_equalities), so it runs after the
// others of its cost.
bool is_equivalence(const Expr& q) {
  if (q.kind == K::in_list && !q.negated && q.args.size() == 2 && q.args[0].kind != K::row) {
    return nonvolatile(q) && !(q.args[0].kind == K::constant && q.args[1].kind == K::constant);
  }
  if (q.kind != K::op || q.name != "=" || q.args.size() != 2 || !nonvolatile(q)) return false;
  const auto constant = [](const Expr& e) { return e.kind == K::constant || e.kind == K::param; };
  return !(constant(q.args[0]) && constant(q.args[1]));
}

void flatten(const Expr& e, std::vector<const Expr*>& into) {
  if (e.kind == K::and_) {
    for (const Expr& a : e.args) flatten(a, into);
  } else {
    into.push_back(&e);
  }
}

}  // namespace

std::vector<const Expr*> conjuncts(const Expr& e) {
  std::vector<const Expr*> out;
  flatten(e, out);
  return out;
}

double qual_cost(const Expr& e, const QualCostContext& context) {
  try {
    return Coster(context).cost(e);
  } catch (const SqlError&) {
    return 0;  // too deep to cost here (54001): as written
  }
}

std::vector<const Expr*> qual_order(const Expr& where, const QualCostContext& context) {
  std::vector<const Expr*> quals;
  flatten(where, quals);
  return qual_order(std::move(quals), context);
}

std::vector<const Expr*> qual_order(std::vector<const Expr*> quals, const QualCostContext& context) {
  std::stable_partition(quals.begin(), quals.end(), [](const Expr* q) { return !is_equivalence(*q); });
  std::vector<std::pair<double, const Expr*>> costed;
  costed.reserve(quals.size());
  for (const Expr* q : quals) {
    // BETWEEN and a row equality: the server's comparisons, each of one pair of operands.
    const bool rows = q->kind == K::op && q->args.size() == 2 && q->args[0].kind == K::row && q->args[1].kind == K::row && !q->args[0].args.empty() &&
                      q->args[0].args.size() == q->args[1].args.size();
    double c = 0;
    if (q->kind == K::between) {
      c = 1 + qual_cost(q->args.at(0), context) + qual_cost(q->args.at(1), context);
    } else if (rows) {
      Expr first = *q;
      first.args = {q->args[0].args[0], q->args[1].args[0]};
      c = qual_cost(first, context);
    } else {
      c = qual_cost(*q, context);
    }
    costed.emplace_back(c, q);
  }
  std::stable_sort(costed.begin(), costed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < quals.size(); ++i) quals[i] = costed[i].second;
  return quals;
}

}  // namespace lockstep::sql
