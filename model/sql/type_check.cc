// model/sql/type_check.cc: parse analysis's type checks on prototypes (model/sql/type_check.h).
#include "lockstep/model/sql/type_check.h"

#include <fmt/format.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/binary_types.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/session_style.h"

namespace lockstep::sql {
namespace {

// What a node asks the server for: its value is not known before rows.
struct NeedsTheServer {};

class NoServerContext final : public EvalContext {
 public:
  Value column(const Expr&) override { throw NeedsTheServer{}; }
  Value param(int) override { throw NeedsTheServer{}; }
  Value call(const Expr&, const std::vector<Value>&) override { throw NeedsTheServer{}; }
  Value subquery(const Expr&) override { throw NeedsTheServer{}; }
  Value function_body(const Expr&, EvalContext&) override { throw NeedsTheServer{}; }
  Value plpgsql_call(const CreateFunction&, const std::vector<Value>&) override { throw NeedsTheServer{}; }
};

}  // namespace

std::optional<Value> prototype_of_type(Type t) {
  switch (t) {
    case Type::int2:
    case Type::int4:
    case Type::int8:
    case Type::oid: return Value::integer(1, t);
    case Type::text: return Value::text("");
    case Type::bpchar: return Value::bpchar("");
    case Type::boolean: return Value::boolean(true);
    case Type::timestamptz: return Value::timestamptz(0);
    case Type::timestamp: return Value::timestamp(0);
    case Type::date: return Value::date(0);
    case Type::time: return Value::time_of_day(0);
    case Type::interval: return Value::interval(0);
    case Type::jsonb: return Value::jsonb("{}");
    case Type::json: return Value::json("{}");
    case Type::uuid: return Value::uuid("00000000-0000-0000-0000-000000000000");
    case Type::bytea: return Value::bytea("");
    case Type::bit: return Value::bit("0");
    case Type::numeric: return Value::numeric("1");
    case Type::float8: return Value::float8(1.0);
    default: return std::nullopt;  // unknown, enum, array, record: need more than the type
  }
}

namespace {

// The result type of a function that asks the server (a clock, a lock, a session, a setting).
std::optional<Value> server_function_prototype(const Expr& e, FunctionKind kind) {
  const std::string_view n = e.name;
  if (kind == FunctionKind::time) {
    if (n == "localtimestamp") return prototype_of_type(Type::timestamp);
    if (n == "current_date") return prototype_of_type(Type::date);
    if (n == "localtime") return prototype_of_type(Type::time);
    return prototype_of_type(Type::timestamptz);
  }
  if (kind == FunctionKind::setting || n == "set_config") return prototype_of_type(Type::text);
  if (kind == FunctionKind::advisory_lock) {
    const bool returns_void = n == "pg_advisory_lock" || n == "pg_advisory_lock_shared" || n == "pg_advisory_xact_lock" ||
                              n == "pg_advisory_xact_lock_shared" || n == "pg_advisory_unlock_all";
    return returns_void ? std::nullopt : prototype_of_type(Type::boolean);
  }
  if (n == "pg_backend_pid") return prototype_of_type(Type::int4);
  if (n == "pg_terminate_backend" || n == "pg_cancel_backend" || n == "@range_contains") return prototype_of_type(Type::boolean);
  if (n == "random") return prototype_of_type(Type::float8);
  if (n == "gen_random_uuid" || n == "uuid_generate_v4") return prototype_of_type(Type::uuid);
  if (n == "nextval" || n == "currval" || n == "setval") return prototype_of_type(Type::int8);
  if (n == "count") return prototype_of_type(Type::int8);
  return std::nullopt;
}

bool is_literal(const Expr& e) {
  return e.kind == Expr::Kind::constant && !e.folded && e.value.type() == Type::unknown && !e.value.is_null();
}

// PostgreSQL's type categories (pg_type.typcategory) of the subset's types, for
// select_common_type: two types of different categories never match.
char category(const Value& v) {
  switch (v.type()) {
    case Type::int2: case Type::int4: case Type::int8: case Type::numeric: case Type::float8: case Type::oid: return 'N';
    case Type::text: case Type::bpchar: return 'S';
    case Type::timestamptz: case Type::timestamp: case Type::date: case Type::time: return 'D';
    case Type::interval: return 'T';
    case Type::boolean: return 'B';
    case Type::enum_: return 'E';
    case Type::array: return 'A';
    case Type::bit: return 'V';
    case Type::record: return 'C';
    default: return 'U';  // jsonb, json, uuid, bytea
  }
}

std::string value_type_name(const Value& v) {
  if (v.type() == Type::enum_) return enum_type_name(v);
  if (v.type() == Type::array) return array_type_name(v);
  return std::string(type_name(v.type()));
}

class TypeChecker {
 public:
  explicit TypeChecker(const ColumnPrototypes& columns) : columns_(columns) {}

  std::optional<Value> probe(const Expr& e) {
    struct Deeper {  // (a deep expression: the checks stop where the stack runs short, check_types)
      int& depth;
      explicit Deeper(int& d) : depth(++d) { check_stack_depth(d); }
      ~Deeper() { --depth; }
    } deeper(depth_);
    using K = Expr::Kind;
    switch (e.kind) {
      case K::constant: return e.value;  // an untyped NULL too: a cast may type it
      case K::param: return std::nullopt;
      case K::column: return columns_(e);
      case K::subquery: return std::nullopt;
      case K::exists: return Value::boolean(true);
      case K::in_subquery:
        for (const Expr& a : e.args) probe(a);
        return Value::boolean(true);
      case K::window:
      case K::user_func:
      case K::row:
        for (const Expr& a : e.args) probe(a);
        return std::nullopt;
      case K::and_:
      case K::or_:
      case K::not_:
      case K::bool_test: {
        const std::string_view clause = e.kind == K::and_ ? "AND" : e.kind == K::or_ ? "OR" : e.kind == K::not_ ? "NOT" : std::string_view(e.name);
        for (const Expr& a : e.args) boolean(a, clause);
        return Value::boolean(true);
      }
      case K::is_null:
        for (const Expr& a : e.args) probe(a);
        return Value::boolean(true);
      case K::in_list: {
        const std::optional<Value> x = probe(e.args.at(0));
        for (std::size_t i = 1; i < e.args.size(); ++i) {
          const std::optional<Value> y = probe(e.args[i]);
          if (x && y && e.args[0].kind != K::row) compared(*x, *y);
        }
        return Value::boolean(true);
      }
      case K::case_: return case_value(e);
      case K::coalesce: {
        std::vector<std::pair<const Expr*, std::optional<Value>>> results;
        for (const Expr& a : e.args) results.emplace_back(&a, probe(a));
        return common(results, "COALESCE");
      }
      case K::func: {
        const FunctionInfo* f = find_function(e.name);
        if (f != nullptr && f->kind == FunctionKind::aggregate) return aggregate(e);
        if (f == nullptr || f->kind != FunctionKind::scalar) {  // its arguments' types only: it asks the server
          std::vector<Value> args;
          for (const Expr& a : e.args) {
            if (std::optional<Value> v = probe(a)) args.push_back(std::move(*v));
          }
          if (f == nullptr) return std::nullopt;
          if (args.size() == e.args.size()) check_argument_types(e.name, args);
          return server_function_prototype(e, f->kind);
        }
        return on_prototypes(e);
      }
      default: return on_prototypes(e);  // op, between, cast, array, quantified, subscript, slice, like, field
    }
  }

  // A value a clause or AND / OR / NOT / IS TRUE reads as boolean.
  void boolean(const Expr& e, std::string_view clause) {
    const std::optional<Value> v = probe(e);
    if (!v || v->is_null()) return;
    try {
      is_true(*v, clause);
    } catch (const SqlError& err) {
      if (is_parse_time_error(err, e)) throw;
    }
  }

 private:
  // e run by evaluate() with its operands' prototypes as constants.
  std::optional<Value> on_prototypes(const Expr& e) {
    std::vector<std::optional<Value>> args;
    bool known = true;
    for (const Expr& a : e.args) {
      args.push_back(probe(a));
      known = known && args.back().has_value();
    }
    if (!known) return std::nullopt;
    Expr shallow = without_args(e);  // (not a copy of the whole tree under it)
    for (std::optional<Value>& v : args) shallow.args.emplace_back().value = std::move(*v);
    return run(shallow, e);
  }

  std::optional<Value> run(const Expr& shallow, const Expr& original) {
    try {
      NoServerContext none;
      Value v = evaluate(shallow, none);
      if (!v.is_null()) return v;
      if (v.type() == Type::unknown) return Value();
      return prototype_of_type(v.type());
    } catch (const NeedsTheServer&) {
      return std::nullopt;
    } catch (const SqlError& err) {
      if (is_parse_time_error(err, original)) throw;
      return std::nullopt;
    }
  }

  // An aggregate's result, its argument's type resolved as the server resolves the call: sum
  // and avg of numbers and intervals, min and max of ordered types, bool_and of booleans.
  std::optional<Value> aggregate(const Expr& e) {
    std::vector<std::optional<Value>> args;
    for (const Expr& a : e.args) args.push_back(probe(a));
    if (e.filtered) {
      args.pop_back();
      boolean(e.args.back(), "FILTER");
    }
    const std::string_view n = e.name;
    if (n == "count") return prototype_of_type(Type::int8);
    if (n == "string_agg") return prototype_of_type(Type::text);
    if (n == "json_agg" || n == "jsonb_agg") return prototype_of_type(n == "json_agg" ? Type::json : Type::jsonb);
    if (args.size() != 1 || !args[0] || args[0]->type() == Type::unknown) return std::nullopt;
    const Value& v = *args[0];
    const Type t = v.type();
    const auto no_function = [&] { return SqlError("42883", fmt::format("function {}({}) does not exist", n, value_type_name(v))); };
    if (n == "sum" || n == "avg") {
      if ((!is_numeric_category(t) || t == Type::oid) && t != Type::interval) throw no_function();
      if (t == Type::float8 || t == Type::interval) return v;
      return prototype_of_type(n == "sum" && (t == Type::int2 || t == Type::int4) ? Type::int8 : Type::numeric);
    }
    if (n == "min" || n == "max") {
      const bool ordered = is_numeric_category(t) || t == Type::text || t == Type::bpchar || t == Type::date || t == Type::time ||
                           is_timestamp(t) || t == Type::interval || t == Type::enum_ || t == Type::array;
      if (!ordered) throw no_function();
      return v;
    }
    if (n == "bool_and" || n == "bool_or" || n == "every") {
      if (t != Type::boolean) throw no_function();
      return v;
    }
    return std::nullopt;
  }

  // x = y as IN's and CASE's comparisons make it (an untyped literal stays one).
  void compared(const Value& x, const Value& y) {
    Expr eq;
    eq.kind = Expr::Kind::op;
    eq.name = "=";
    eq.args.resize(2);
    eq.args[0].value = x;
    eq.args[1].value = y;
    run(eq, eq);
  }

  std::optional<Value> case_value(const Expr& e) {
    std::size_t i = 0;
    std::optional<Value> operand;
    if (e.has_operand) operand = probe(e.args[i++]);
    const std::size_t pairs_end = e.args.size() - (e.has_else ? 1 : 0);
    std::vector<std::pair<const Expr*, std::optional<Value>>> results;
    for (; i < pairs_end; i += 2) {
      if (e.has_operand) {
        const std::optional<Value> when = probe(e.args[i]);
        if (operand && when) compared(*operand, *when);
      } else {
        boolean(e.args[i], "CASE");
      }
      results.emplace_back(&e.args[i + 1], probe(e.args[i + 1]));
    }
    if (e.has_else) results.emplace_back(&e.args.back(), probe(e.args.back()));
    return common(results, "CASE");
  }

  // select_common_type over CASE's or COALESCE's results, and each untyped literal among
  // them read as that type: its prototype, or nullopt where a type is not known.
  std::optional<Value> common(const std::vector<std::pair<const Expr*, std::optional<Value>>>& results, std::string_view construct) {
    std::optional<Value> chosen;
    for (const auto& [expr, v] : results) {
      if (!v) return std::nullopt;
      if (v->type() == Type::unknown) continue;
      if (!chosen) {
        chosen = v;
        continue;
      }
      if (category(*chosen) != category(*v)) {
        throw SqlError("42804", fmt::format("{} types {} and {} cannot be matched", construct, value_type_name(*chosen), value_type_name(*v)));
      }
      if (chosen->type() != v->type()) {  // the category's widest of the two (integers, numeric, float8; date to timestamps)
        if (is_numeric_category(chosen->type()) && is_numeric_category(v->type())) {
          if (numeric_common_type(chosen->type(), v->type()) == v->type()) chosen = v;
        } else if (chosen->type() == Type::date || v->type() == Type::timestamptz) {
          chosen = v;
        } else if (chosen->type() != Type::timestamptz && v->type() != Type::date) {
          return std::nullopt;  // a pair the model does not resolve
        }
      } else if (chosen->type() == Type::enum_ && chosen->enum_type() != v->enum_type()) {
        throw SqlError("42804", fmt::format("{} types {} and {} cannot be matched", construct, value_type_name(*chosen), value_type_name(*v)));
      } else if (chosen->type() == Type::array || chosen->type() == Type::record) {
        return std::nullopt;  // element types: left to the executor
      }
    }
    if (!chosen) return Value::text("");  // all untyped: text
    if (chosen->type() == Type::array || chosen->type() == Type::record) return std::nullopt;
    for (const auto& [expr, v] : results) {
      if (v->type() != Type::unknown || v->is_null() || !is_literal(*expr)) continue;
      try {
        if (chosen->type() == Type::enum_) {
          enum_input(chosen->enum_type(), v->as_text());
        } else {
          cast(*v, chosen->type());
        }
      } catch (const SqlError& err) {
        if (is_parse_time_error(err, *expr)) throw;
      }
    }
    return chosen;
  }

  // e's node alone: every field but its operands.
  static Expr without_args(const Expr& e) {
    Expr n;
    n.kind = e.kind, n.value = e.value, n.number = e.number, n.name = e.name, n.qualifier = e.qualifier, n.type = e.type;
    n.element = e.element, n.typmod = e.typmod, n.all = e.all, n.distinct = e.distinct, n.negated = e.negated, n.star = e.star;
    n.has_operand = e.has_operand, n.has_else = e.has_else, n.filtered = e.filtered, n.folded = e.folded, n.arg_names = e.arg_names;
    n.select = e.select, n.location = e.location;
    return n;
  }

  const ColumnPrototypes& columns_;
  int depth_ = 0;
};

}  // namespace

std::optional<Value> prototype_of(const ColumnDef& c) {
  if (!c.refused.empty()) return std::nullopt;
  try {
    if (c.type == Type::enum_) {
      const int index = enum_index(c.user_type);
      const std::vector<EnumType>* types = current_enum_types();
      if (index < 0 || types == nullptr || static_cast<std::size_t>(index) >= types->size() || (*types)[index].labels.empty()) return std::nullopt;
      return enum_input(index, (*types)[index].labels.front());
    }
    if (c.type == Type::array) return array_input("{}", declared_element(c.element, c.user_type));
  } catch (const SqlError&) {
    return std::nullopt;  // the executor gives the server's error where it reads the column
  }
  if (c.type == Type::bit) return Value::bit(std::string(static_cast<std::size_t>(std::max(c.bits, 1)), '0'));
  return prototype_of_type(c.type);
}

std::optional<Value> check_types(const Expr& e, const ColumnPrototypes& columns, std::string_view boolean_clause) {
  TypeChecker checker(columns);
  try {
    if (!boolean_clause.empty()) {
      checker.boolean(e, boolean_clause);
      return Value::boolean(true);
    }
    return checker.probe(e);
  } catch (const SqlError& err) {
    if (err.sqlstate() != "54001") throw;
    return std::nullopt;  // too deep to check here: left to the executor, which gives the server's errors as it runs
  }
}

bool is_parse_time_error(const SqlError& err, const Expr& e) {
  const std::string& state = err.sqlstate();
  if (state == "42883" || state == "42804" || state == "42846" || state == "42725") return true;
  if (state != "22P02" && state != "22007" && state != "22008" && state != "22003") return false;
  // A literal's input: the server reads an untyped literal as its context's type while parsing.
  const std::string_view message = err.what();
  const auto names = [&](const Expr& a) {
    if (!is_literal(a)) return false;
    return message.find(fmt::format("\"{}\"", a.value.as_text())) != std::string_view::npos ||
           message.starts_with("invalid input syntax for type json");
  };
  if (names(e)) return true;
  for (const Expr& a : e.args) {
    if (names(a)) return true;
  }
  return false;
}

}  // namespace lockstep::sql
