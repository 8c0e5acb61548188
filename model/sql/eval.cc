#include "lockstep/model/sql/eval.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/binary_types.h"
#include "lockstep/model/sql/casts.h"
#include "lockstep/model/sql/conditionals.h"
#include "lockstep/model/sql/datetime.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/format_function.h"
#include "lockstep/model/sql/server_version.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/hash_functions.h"
#include "lockstep/model/sql/json_populate.h"
#include "lockstep/model/sql/ranges.h"
#include "lockstep/model/sql/json_text.h"
#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/null_operands.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/operators.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/regex.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/model/sql/time_functions.h"
#include "lockstep/model/sql/time_zones.h"
#include "lockstep/model/sql/to_timestamp.h"
#include "lockstep/model/sql/text_functions.h"
#include "lockstep/model/sql/user_functions.h"

namespace lockstep::sql {
namespace {

std::int64_t checked(__int128 v, Type t) {
  const __int128 lo = t == Type::int2 ? std::numeric_limits<std::int16_t>::min()
                      : t == Type::int4 ? std::numeric_limits<std::int32_t>::min()
                                        : std::numeric_limits<std::int64_t>::min();
  const __int128 hi = t == Type::int2 ? std::numeric_limits<std::int16_t>::max()
                      : t == Type::int4 ? std::numeric_limits<std::int32_t>::max()
                                        : std::numeric_limits<std::int64_t>::max();
  if (v < lo || v > hi) throw SqlError("22003", fmt::format("{} out of range", type_name(t)));
  return static_cast<std::int64_t>(v);
}

}  // namespace

Value arithmetic(std::string_view op, Value a, Value b) {
  if (op == "?|" || op == "?&") return jsonb_keys_operator(op, a, b);  // jsonb ?| text[]: before the array operators
  if (op == "-" && a.type() == Type::jsonb && b.type() == Type::array) {  // jsonb - text[]: each key (jsonb_delete_array)
    Value out = a;
    for (const Value& k : array_elements(b)) {
      if (!k.is_null() && k.type() != Type::text && k.type() != Type::unknown) throw SqlError("42883", fmt::format("operator does not exist: jsonb - {}[]", type_name(k.type())));
      out = k.is_null() ? out : jsonb_operator("-", out, k);
    }
    return out;
  }
  if (is_array_operand(a, b) && op != "#>" && op != "#>>") return array_operator(op, a, b);  // model/sql/arrays.h (NULLs as the server's array_cat)
  if (op == "#>" || op == "#>>") return jsonb_path_operator(op, a, b);
  if (a.type() == Type::json && (op == "->" || op == "->>")) {
    if (a.is_null() || b.is_null()) return Value::null(op == "->" ? Type::json : Type::text);
    return json_operator(op, a, b.type() == Type::unknown ? cast(b, Type::text) : b);  // model/sql/json_text.h
  }
  if (a.type() == Type::json || b.type() == Type::json) {
    throw SqlError("0A000", fmt::format("the operator {} on json (not jsonb) is not in lockstep's SQL subset: cast to jsonb", op));
  }
  if (a.type() == Type::unknown && b.type() == Type::unknown) {  // '5' + '6': several operators fit (func_select_candidate)
    static constexpr std::array<std::string_view, 12> kAmbiguous = {"+", "-", "*", "/", "%", "&", "|", "#", "<<", ">>", "@>", "&&"};
    if (std::find(kAmbiguous.begin(), kAmbiguous.end(), op) != kAmbiguous.end()) {
      throw SqlError("42725", fmt::format("operator is not unique: unknown {} unknown", op));
    }
  }
  if (a.is_null() || b.is_null()) return Value::null();
  if (op == "||" && (a.type() == Type::bytea || b.type() == Type::bytea) && a.type() != Type::text && b.type() != Type::text) {
    const Value x = a.type() == Type::unknown ? bytea_input(a.as_text()) : a;
    const Value y = b.type() == Type::unknown ? bytea_input(b.as_text()) : b;
    if (x.type() != Type::bytea || y.type() != Type::bytea) no_operator(op, a, b);
    return Value::bytea(x.payload() + y.payload());
  }
  if (op == "||" && a.type() == Type::bit && b.type() == Type::bit) return Value::bit(a.payload() + b.payload());  // bitcat: a varbit
  // jsonb's operators (model/sql/jsonb.h); an untyped literal beside a jsonb is one.
  if (op == "||" && (a.type() == Type::text) != (b.type() == Type::text) && (a.type() == Type::jsonb || b.type() == Type::jsonb)) {
    return Value::text(cast(a, Type::text).as_text() + cast(b, Type::text).as_text());  // text || jsonb: textanycat
  }
  if (a.type() == Type::jsonb || b.type() == Type::jsonb || is_jsonb_operator(op)) return jsonb_operator(op, a, b);
  // `||` with an untyped literal on one side is text concatenation (anynonarray || text):
  // 30 || ' SECOND' is '30 SECOND'.
  if (op == "||" && (a.type() == Type::unknown) != (b.type() == Type::unknown)) {
    return Value::text(cast(a, Type::text).as_text() + cast(b, Type::text).as_text());
  }
  if (op == "<<" || op == ">>") return shifted(op, a, b);
  // An untyped literal takes the other side's type (T op T exists: timestamptz - timestamptz);
  // in `+` beside a time, an interval (date + unknown is ambiguous on the server).
  const auto untyped_as = [&](Type known, bool left) {
    if (known == Type::date && op == "+") throw SqlError("42725", left ? "operator is not unique: unknown + date" : "operator is not unique: date + unknown");
    return is_time_of(known) && op == "+" ? Type::interval : known;
  };
  if (a.type() == Type::unknown && b.type() != Type::unknown) a = cast(a, untyped_as(b.type(), true));
  if (b.type() == Type::unknown && a.type() != Type::unknown) b = cast(b, untyped_as(a.type(), false));
  if (a.type() == Type::unknown && b.type() == Type::unknown) {
    if (op == "||") return Value::text(a.as_text() + b.as_text());
    no_operator(op, a, b);
  }
  if (op == "&" || op == "|" || op == "#") return bitwise(op, a, b);
  if (op == "||") {  // char(n) becomes text, its padding dropped
    if (a.type() != Type::text && b.type() != Type::text && a.type() != Type::bpchar && b.type() != Type::bpchar) no_operator(op, a, b);
    return Value::text(cast(a, Type::text).as_text() + cast(b, Type::text).as_text());
  }
  if (is_numeric_operand(a, b)) return numeric_arithmetic(op, a, b);  // model/sql/numeric.h
  if (op == "^" && is_integer(a.type()) && is_integer(b.type())) {  // integer ^ integer is double precision
    return numeric_arithmetic(op, cast(a, Type::float8), b);
  }
  if (is_integer(a.type()) && is_integer(b.type())) {
    const Type t = wider(a.type(), b.type());
    const __int128 x = a.as_integer(), y = b.as_integer();
    if (op == "+") return Value::integer(checked(x + y, t), t);
    if (op == "-") return Value::integer(checked(x - y, t), t);
    if (op == "*") return Value::integer(checked(x * y, t), t);
    if (y == 0) throw SqlError("22012", "division by zero");
    if (op == "/") return Value::integer(checked(x / y, t), t);
    if (op == "%") return Value::integer(checked(x % y, t), t);
  }
  const Type ta = a.type(), tb = b.type();
  // A timestamp moved by an interval keeps its type (model/sql/interval.h); infinity stays infinite.
  auto moved = [](const Value& ts, const Interval& by) {
    if (ts.type() == Type::timestamp || session_style().zone == SessionStyle::Zone::utc || is_infinite_timestamp(ts.micros())) {
      const std::int64_t micros = timestamp_plus_interval(ts.micros(), by);
      return ts.type() == Type::timestamp ? Value::timestamp(micros) : Value::timestamptz(micros);
    }
    // A timestamptz moves by months and days on the session zone's calendar, then by the time.
    const std::int64_t local = timestamp_plus_interval(local_of_utc(ts.micros()), Interval{0, by.days, by.months});
    return Value::timestamptz(timestamp_plus_interval(utc_of_local(local), Interval{by.micros}));
  };
  if (ta == Type::date || tb == Type::date || ta == Type::time || tb == Type::time) {  // model/sql/time_functions.h
    Value result;
    if (date_arithmetic(op, a, b, &result)) return result;
    if (a.type() == Type::date || b.type() == Type::date || a.type() == Type::time || b.type() == Type::time) no_operator(op, a, b);
    return arithmetic(op, a, b);
  }
  if (is_timestamp(ta) && tb == Type::interval && (op == "+" || op == "-")) {
    return moved(a, op == "+" ? b.as_interval() : interval_negated(b.as_interval()));
  }
  if (ta == Type::interval && is_timestamp(tb) && op == "+") return moved(b, a.as_interval());
  if (is_timestamp(ta) && is_timestamp(tb) && op == "-") {
    if (ta != tb) return arithmetic(op, cast(a, Type::timestamptz), cast(b, Type::timestamptz));  // local time beside an instant
    if (is_infinite_timestamp(a.micros()) || is_infinite_timestamp(b.micros())) {
      throw SqlError("22008", "cannot subtract infinite timestamps");
    }
    const __int128 diff = static_cast<__int128>(a.micros()) - b.micros();
    if (diff > std::numeric_limits<std::int64_t>::max() || diff < std::numeric_limits<std::int64_t>::min()) {
      throw SqlError("22008", "interval out of range");
    }
    return Value::interval(justify_hours(Interval{static_cast<std::int64_t>(diff)}));
  }
  if (ta == Type::interval && tb == Type::interval && (op == "+" || op == "-")) {
    return Value::interval(op == "+" ? interval_plus(a.as_interval(), b.as_interval()) : interval_minus(a.as_interval(), b.as_interval()));
  }
  if (ta == Type::interval && is_numeric_category(tb) && (op == "*" || op == "/")) {
    const double factor = as_double(b);
    if (op == "/" && factor == 0.0) throw SqlError("22012", "division by zero");
    return Value::interval(op == "*" ? interval_times(a.as_interval(), factor) : interval_divided(a.as_interval(), factor));
  }
  if (is_numeric_category(ta) && tb == Type::interval && op == "*") {
    return Value::interval(interval_times(b.as_interval(), as_double(a)));
  }
  no_operator(op, a, b);
}

namespace {

// SQL's three-valued logic: nullopt is NULL.
std::optional<bool> truth(const Value& v, std::string_view where) {
  if (v.is_null()) return std::nullopt;
  if (v.type() == Type::unknown) return cast(v, Type::boolean).as_bool();
  if (v.type() != Type::boolean) {
    throw SqlError("42804", fmt::format("argument of {} must be type boolean, not type {}", where, type_name(v.type())));
  }
  return v.as_bool();
}

Value from_truth(std::optional<bool> t) { return t ? Value::boolean(*t) : Value::null(Type::boolean); }


// (a, b) op (c, d): = and <> element by element (three-valued), < <= > >= by the first pair
// that differs (NULL when a NULL comes first), as the server's row comparison.
Value row_comparison(std::string_view op, const Expr& left, const Expr& right, EvalContext& context) {
  if (left.kind != Expr::Kind::row || right.kind != Expr::Kind::row) {
    throw SqlError("0A000", "a row constructor compared with something other than a row constructor is not in lockstep's SQL subset");
  }
  if (left.args.size() != right.args.size()) throw SqlError("42601", "unequal number of entries in row expressions");
  const bool eq = op == "=", ne = op == "<>";
  bool saw_null = false;
  for (std::size_t i = 0; i < left.args.size(); ++i) {
    const Value x = evaluate(left.args[i], context), y = evaluate(right.args[i], context);
    if (x.is_null() || y.is_null()) {
      if (!eq && !ne) return Value::null(Type::boolean);
      saw_null = true;
      continue;
    }
    const bool same = compare(x, y, op) == 0;
    if (eq && !same) return Value::boolean(false);
    if (ne && !same) return Value::boolean(true);
    if (!eq && !ne && !same) return comparison(op, x, y);
  }
  if (saw_null) return Value::null(Type::boolean);
  return Value::boolean(eq || op == "<=" || op == ">=");
}

Value operator_value(const Expr& e, EvalContext& context) {
  if (e.args.size() == 1 && e.name == "~") return bitwise_not(evaluate(e.args[0], context));
  if (e.args.size() == 1) {  // unary minus
    const Value v = evaluate(e.args[0], context);
    if (v.is_null()) return v;
    if (v.type() == Type::interval) return Value::interval(interval_negated(v.as_interval()));
    const Value n = v.type() == Type::unknown ? cast(v, Type::int4) : v;
    if (n.type() == Type::numeric || n.type() == Type::float8) return numeric_negated(n);
    if (!is_integer(n.type())) throw SqlError("42883", fmt::format("operator does not exist: - {}", type_name(n.type())));
    return Value::integer(checked(-static_cast<__int128>(n.as_integer()), n.type()), n.type());
  }
  const bool compares = e.name == "=" || e.name == "<>" || e.name == "<" || e.name == "<=" || e.name == ">" || e.name == ">=";
  if (e.args[0].kind == Expr::Kind::row || e.args[1].kind == Expr::Kind::row) {
    if (!compares) throw SqlError("0A000", fmt::format("the operator {} on a row constructor is not in lockstep's SQL subset", e.name));
    return row_comparison(e.name, e.args[0], e.args[1], context);
  }
  const Value a = evaluate(e.args[0], context);
  const Value b = evaluate(e.args[1], context);
  const auto typed_by_its_text = [](const Expr& x) {
    return x.kind == Expr::Kind::cast || (x.kind == Expr::Kind::op && x.args.size() == 2 && (null_literal(x.args[0]) || null_literal(x.args[1])));
  };
  if (compares) {
    if ((a.is_null() && typed_by_its_text(e.args[0])) || (b.is_null() && typed_by_its_text(e.args[1]))) check_null_comparison(e.name, a, b);
    return comparison(e.name, a, b);
  }
  if (e.name == "is distinct from") {  // NULL-safe: two NULLs are not distinct, one is
    bool distinct = a.is_null() != b.is_null();
    if (!a.is_null() && !b.is_null()) distinct = comparison("<>", a, b).as_bool();
    return Value::boolean(distinct != e.negated);
  }
  if (e.name != "||" && null_literal(e.args[1]) && a.type() != Type::unknown) return beside_untyped_null(e.name, a, true);
  if (e.name != "||" && null_literal(e.args[0]) && b.type() != Type::unknown) return beside_untyped_null(e.name, b, false);
  return arithmetic(e.name, a, b);
}

// AND (`stop_at` false) or OR (true): SQL's three-valued logic.
Value logic(const Expr& e, EvalContext& context, bool stop_at, std::string_view name) {
  // The planner's simplify_or_arguments (simplify_and_arguments): a constant TRUE in an OR
  // (FALSE in an AND) is its value, and the other arguments never run (a lock call beside it).
  for (const Expr& a : e.args) {
    if (a.kind == Expr::Kind::constant && a.value.type() == Type::boolean && !a.value.is_null() && a.value.as_bool() == stop_at) {
      return Value::boolean(stop_at);
    }
  }
  if (const std::vector<const Expr*>* quals = stop_at ? nullptr : context.qual_order(e)) {
    for (const Expr* q : *quals) {  // ExecQual: false or NULL ends the row's quals
      if (truth(evaluate(*q, context), name) != true) return Value::boolean(false);
    }
    return Value::boolean(true);
  }
  bool saw_null = false;
  for (const Expr& a : e.args) {
    const auto t = truth(evaluate(a, context), name);
    if (t == stop_at) return Value::boolean(stop_at);
    saw_null = saw_null || !t;
  }
  return saw_null ? Value::null(Type::boolean) : Value::boolean(!stop_at);
}

Value in_list(const Expr& e, EvalContext& context) {
  const bool rows = e.args.at(0).kind == Expr::Kind::row;
  const Value x = rows ? Value() : evaluate(e.args.at(0), context);
  std::optional<bool> found = false;
  for (std::size_t i = 1; i < e.args.size() && found != true; ++i) {
    const auto eq = truth(rows ? row_comparison("=", e.args[0], e.args[i], context) : comparison("=", x, evaluate(e.args[i], context)), "IN");
    if (eq == true) found = true;
    if (!eq) found = std::nullopt;
  }
  if (e.negated && found) found = !*found;
  return from_truth(found);
}

}  // namespace

SqlError missing_column_error(const Expr& ref) {
  if (ref.qualifier.empty()) return SqlError("42703", fmt::format("column \"{}\" does not exist", ref.name));
  return SqlError("42703", fmt::format("column {}.{} does not exist", ref.qualifier, ref.name));
}

Value in_values(const Value& x, const std::vector<Value>& list) {
  std::optional<bool> found = false;
  for (std::size_t i = 0; i < list.size() && found != true; ++i) {
    const auto eq = truth(comparison("=", x, list[i]), "IN");
    if (eq == true) found = true;
    if (!eq) found = std::nullopt;
  }
  return from_truth(found);
}

Value in_rows(const std::vector<Value>& xs, const std::vector<std::vector<Value>>& rows) {
  bool found = false, unknown = false;
  for (std::size_t r = 0; r < rows.size() && !found; ++r) {
    // The row comparison: false at the first unequal pair, else NULL if a NULL was met.
    bool unequal = false, row_unknown = false;
    for (std::size_t i = 0; i < xs.size() && i < rows[r].size() && !unequal; ++i) {
      const auto same = truth(comparison("=", xs[i], rows[r][i]), "IN");
      if (!same.has_value()) {
        row_unknown = true;
      } else if (!*same) {
        unequal = true;
      }
    }
    if (!unequal && !row_unknown) found = true;
    if (!unequal && row_unknown) unknown = true;
  }
  if (found) return Value::boolean(true);
  return unknown ? Value::null(Type::boolean) : Value::boolean(false);
}

namespace {

Value between(const Expr& e, EvalContext& context) {
  const Value x = evaluate(e.args.at(0), context);
  const auto lo = truth(comparison(">=", x, evaluate(e.args.at(1), context)), "BETWEEN");
  const auto hi = truth(comparison("<=", x, evaluate(e.args.at(2), context)), "BETWEEN");
  std::optional<bool> in;
  if (lo == false || hi == false) {
    in = false;
  } else if (lo && hi) {
    in = true;
  }
  if (e.negated && in) in = !*in;
  return from_truth(in);
}

// The functions whose parameters are integers, by position (a bit each): a numeric or double
// precision argument there matches no function, as the server says (numeric to an integer is
// an assignment cast, not an implicit one).
Value function_value(const Expr& e, EvalContext& context) {
  const FunctionInfo* f = find_function(e.name);
  if (f == nullptr) throw SqlError("42883", fmt::format("function {}() does not exist", e.name));
  if (f->kind == FunctionKind::aggregate) return context.call(e, {});
  std::vector<Value> args;
  args.reserve(e.args.size());
  for (const Expr& a : e.args) args.push_back(evaluate(a, context));
  check_argument_types(e.name, args);  // model/sql/functions.h
  if (e.name == "abs") {
    const Value v = args.at(0).type() == Type::unknown ? cast(args[0], Type::int4) : args[0];
    if (v.is_null()) return v;
    if (v.type() == Type::float8) return Value::float8(std::fabs(v.as_float8()));
    if (v.type() == Type::numeric) return compare(v, Value::integer(0, Type::int4)) < 0 ? numeric_negated(v) : v;
    if (!is_integer(v.type())) throw SqlError("42883", e.qualifier == "@" ? fmt::format("operator does not exist: @ {}", type_name(v.type())) : fmt::format("function abs({}) does not exist", type_name(v.type())));
    return Value::integer(checked(v.as_integer() < 0 ? -static_cast<__int128>(v.as_integer()) : v.as_integer(), v.type()), v.type());
  }
  if (e.name == "timezone") return timezone_value(args.at(0), args.at(1));  // also ts AT TIME ZONE zone
  if ((e.name == "to_timestamp" && args.size() == 2) || e.name == "to_date") return to_timestamp_value(args.at(0), args.at(1), e.name == "to_date");
  if (e.name == "make_interval") return make_interval_value(args);
  if (e.name == "justify_hours" || e.name == "justify_days" || e.name == "justify_interval") {
    const Value& v = args.at(0);
    if (v.type() != Type::interval && v.type() != Type::unknown) {
      throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, type_name(v.type())));
    }
    if (v.is_null()) return Value::null(Type::interval);
    const Interval i = cast(v, Type::interval).as_interval();
    return Value::interval(e.name == "justify_hours" ? justify_hours(i) : e.name == "justify_days" ? justify_days(i) : justify_interval(i));
  }
  if (e.name == "to_char") return to_char_value(args.at(0), args.at(1));
  if (e.name == "age") {  // age(x) is age(current_date as x's type, x)
    if (args.size() == 2) return age_value(args[0], args[1]);
    if (args[0].type() == Type::unknown) throw SqlError("42725", "function age(unknown) is not unique");
    Expr today;
    today.kind = Expr::Kind::func;
    today.name = "current_date";
    return age_value(evaluate(today, context), args[0]);
  }
  if (is_math_function(e.name)) return math_function(e.name, args);  // model/sql/numeric.h
  if (e.name == "extract" || e.name == "date_part") return extract_field(args.at(0), args.at(1), e.name == "date_part");
  if (e.name == "greatest" || e.name == "least") return greatest_or_least(args, e.name == "greatest");
  if (e.name == "nullif") return null_if(args.at(0), args.at(1));
  if (e.name == kRangeContains) return range_contains(e.qualifier, args);
  if (e.name == "jsonb_build_object") return jsonb_build_object(args);
  if (e.name == "json_build_object") return json_build_object(args);
  if (e.name == "json_build_array") return json_build_array(args);
  if ((e.name == "to_jsonb" || e.name == "to_json") && args.at(0).type() == Type::unknown && !args[0].is_null()) {
    throw SqlError("42804", "could not determine polymorphic type because input has type unknown");
  }
  if (e.name == "to_json") return to_json(args.at(0));
  if (e.name == "array_to_json") {  // to_json of an array (the pretty form refused: one argument)
    if (args.at(0).type() == Type::unknown) throw SqlError("42804", "could not determine polymorphic type because input has type unknown");
    if (!args[0].is_null() && args[0].type() != Type::array) {
      throw SqlError("42883", fmt::format("function array_to_json({}) does not exist", type_name(args[0].type())));
    }
    return to_json(args[0]);
  }
  if ((e.name == "length" || e.name == "octet_length" || e.name == "md5") && args.at(0).type() == Type::bytea) {
    if (args[0].is_null()) return Value::null(e.name == "md5" ? Type::text : Type::int4);
    if (e.name == "md5") return Value::text(md5_hex(args[0].payload()));
    return Value::integer(static_cast<std::int64_t>(args[0].payload().size()), Type::int4);
  }
  if (e.name == "hashtextextended") {
    if (args.at(0).is_null() || args.at(1).is_null()) return Value::null(Type::int8);
    if (args[0].type() != Type::text && args[0].type() != Type::unknown) {
      throw SqlError("42883", fmt::format("function hashtextextended({}, bigint) does not exist", type_name(args[0].type())));
    }
    const Value seed = cast(args[1], Type::int8);
    return Value::integer(hash_text_extended(args[0].as_text(), static_cast<std::uint64_t>(seed.as_integer())), Type::int8);
  }
  if (e.name == "md5" || e.name == "hashtext") {
    const Value& v = args.at(0);
    if (v.is_null()) return Value::null(e.name == "md5" ? Type::text : Type::int4);
    if (v.type() != Type::text && v.type() != Type::unknown) {
      throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, type_name(v.type())));
    }
    if (e.name == "md5") return Value::text(md5_hex(v.as_text()));
    return Value::integer(hash_text(v.as_text()), Type::int4);
  }
  if (e.name == "format") return format_function(args);
  if (e.name == "date_trunc" && args.size() == 3) {  // timestamptz_trunc_zone: truncated in that zone's wall clock
    if (args[0].is_null() || args[1].is_null() || args[2].is_null()) return Value::null(Type::timestamptz);
    const Value source = cast(args[1], Type::timestamptz), local = timezone_value(args[2], source);
    bool below_a_day = false;  // then the time keeps its offset, as the server's
    const std::int64_t cut = truncate_timestamp(cast(args[0], Type::text).as_text(), local.micros(), "timestamp with time zone", &below_a_day);
    return below_a_day ? Value::timestamptz(source.micros() - (local.micros() - cut)) : timezone_value(args[2], Value::timestamp(cut));
  }
  if (e.name == "date_trunc") {
    const Value source = args.at(1).type() == Type::date ? cast(args[1], Type::timestamptz) : args.at(1);  // the server's implicit cast
    if (source.type() == Type::unknown) {  // timestamp, timestamptz or interval: the server cannot choose
      throw SqlError("42725", fmt::format("function date_trunc({}, unknown) is not unique", type_name(args[0].type())));
    }
    if (source.type() == Type::interval) throw SqlError("0A000", "date_trunc() of an interval is not in lockstep's SQL subset");
    if (!is_timestamp(source.type())) {
      throw SqlError("42883", fmt::format("function date_trunc(unknown, {}) does not exist", type_name(source.type())));
    }
    if (args[0].is_null() || source.is_null()) return Value::null(source.type());
    const std::string unit = cast(args[0], Type::text).as_text();
    if (source.type() == Type::timestamp) {
      return Value::timestamp(truncate_timestamp(unit, source.micros(), "timestamp without time zone"));
    }
    // In the session's zone; a unit below a day keeps the time's own offset (the server's
    // timestamptz_trunc sets the zone again for a day and longer only).
    if (is_infinite_timestamp(source.micros())) {
      truncate_timestamp(unit, source.micros(), "timestamp with time zone");  // the unit is checked all the same
      return source;
    }
    const std::int64_t local = local_of_utc(source.micros());
    bool below_a_day = false;
    const std::int64_t t = truncate_timestamp(unit, local, "timestamp with time zone", &below_a_day);
    if (is_infinite_timestamp(t)) return source;
    return Value::timestamptz(below_a_day ? t - (local - source.micros()) : utc_of_local(t));
  }
  if (e.name == "num_nulls" || e.name == "num_nonnulls") {  // VARIADIC "any": its arguments that are (not) NULL
    const auto nulls = std::count_if(args.begin(), args.end(), [](const Value& v) { return v.is_null(); });
    return Value::integer(e.name == "num_nulls" ? nulls : static_cast<std::int64_t>(args.size()) - nulls, Type::int4);
  }
  if (e.name == "quote_ident" || e.name == "quote_literal" || e.name == "quote_nullable") {
    const Value& v = args.at(0);
    if (v.is_null()) return e.name == "quote_nullable" ? Value::text("NULL") : Value::null(Type::text);
    return Value::text(e.name == "quote_ident" ? quote_ident(output_text(v)) : quote_literal(output_text(v)));
  }
  if (e.name == "sha224" || e.name == "sha256") {
    const Value& v = args.at(0);
    if (v.is_null()) return Value::null(Type::bytea);
    if (v.type() != Type::bytea && v.type() != Type::unknown) {
      throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, type_name(v.type())));
    }
    const std::string bytes(cast(v, Type::bytea).payload());
    return Value::bytea(e.name == "sha224" ? sha224(bytes) : sha256(bytes));
  }
  if (e.name == "jsonb_typeof") return jsonb_typeof(args.at(0));
  if (e.name == "json_typeof") {  // json's own: the first token of the text (graphile-worker's add_jobs)
    const Value& v = args.at(0);
    if (v.type() != Type::json && v.type() != Type::unknown) throw SqlError("42883", fmt::format("function json_typeof({}) does not exist", type_name(v.type())));
    if (v.is_null()) return Value::null(Type::text);
    const std::string text = output_text(v.type() == Type::json ? v : cast(v, Type::json));
    const std::size_t at = text.find_first_not_of(" \t\n\r");
    const char c = at == std::string::npos ? 'n' : text[at];
    return Value::text(c == '{' ? "object" : c == '[' ? "array" : c == '"' ? "string" : c == 't' || c == 'f' ? "boolean" : c == 'n' ? "null" : "number");
  }
  if (e.name == "jsonb_exists") {
    if (args.at(0).is_null() || args.at(1).is_null()) return Value::null(Type::boolean);
    return jsonb_operator("?", args[0], args[1].type() == Type::unknown ? cast(args[1], Type::text) : args[1]);
  }
  if (e.name == "jsonb_exists_any" || e.name == "jsonb_exists_all") return jsonb_keys_operator(e.name.ends_with("any") ? "?|" : "?&", args.at(0), args.at(1));
  if (e.name == "to_jsonb") return args.at(0).type() == Type::record ? record_to_jsonb(args[0]) : to_jsonb(args[0]);
  if (e.name == "row_to_json") return row_to_json(args.at(0));
  if (e.name == "json_populate_record" || e.name == "jsonb_populate_record") return json_populate_record_value(e.name, args.at(0), args.at(1));
  if (e.name == "jsonb_build_array") return jsonb_build_array(args);
  if (e.name == "jsonb_set") return jsonb_set(args);
  if (e.name == "jsonb_array_length") return jsonb_array_length(args.at(0));
  if (is_array_function(e.name)) return array_function(e.name, args);
  if (select_list_set_returning(e.name)) return context.call(e, args);  // set-returning: the executor's row (ProjectSet)
  if (e.name.starts_with("jsonb_each") || e.name.ends_with("_recordset")) {
    throw SqlError("0A000", fmt::format("{}() outside FROM (a set-returning function in an expression) is not in lockstep's SQL subset", e.name));
  }
  if (e.name == "current_database" || e.name == "current_user") return Value::text("postgres");
  if (e.name == "version") return Value::text(std::string(server_version_text()));
  if (e.name == "pg_is_in_recovery") return Value::boolean(false);
  if (e.name == "current_schema") {
    const std::optional<std::string> schema = current_schema();
    return schema ? Value::text(*schema) : Value::null(Type::text);
  }
  if (e.name == "pg_notify") return context.call(e, args);  // queued in the transaction: the server's
  if (e.name == "encode" || e.name == "decode" || e.name == "convert_to") return binary_function(e.name, args);
  if (e.name == "get_bit") {
    if (args.at(0).is_null() || args.at(1).is_null()) return Value::null(Type::int4);
    const Value& source = args[0].type() == Type::unknown ? cast(args[0], Type::bytea) : args[0];
    if (source.type() != Type::bit && source.type() != Type::bytea) {
      throw SqlError("42883", fmt::format("function get_bit({}, {}) does not exist", type_name(source.type()), type_name(args[1].type())));
    }
    return get_bit(source, cast(args[1], Type::int8).as_integer());
  }
  if (e.name == "substring" && args.at(0).type() == Type::bit && args.at(1).type() != Type::unknown && args[1].type() != Type::text) {
    for (const Value& a : args) {
      if (a.is_null()) return Value::null(Type::bit);
    }
    std::optional<std::int64_t> count;
    if (args.size() == 3) count = cast(args[2], Type::int8).as_integer();
    return bit_substring(args[0], cast(args[1], Type::int8).as_integer(), count);
  }
  if (std::optional<Value> v = binary_string_function(e.name, args)) return *v;
  if (is_text_function(e.name)) {
    if (e.name == "substring" && (args.at(1).type() == Type::unknown || args[1].type() == Type::text)) {
      throw SqlError("0A000", "substring(... FROM pattern) (a regular expression) is not in lockstep's SQL subset");
    }
    return text_function(e.name, args);
  }
  return context.call(e, args);
}

}  // namespace

bool is_true(const Value& v, std::string_view clause) { return truth(v, clause).value_or(false); }

Value comparison(std::string_view op, const Value& a, const Value& b) {
  if (a.is_null() || b.is_null()) return Value::null(Type::boolean);
  if (is_array_operand(a, b)) return array_operator(op, a, b);
  const auto c = compare(a, b, op);
  if (op == "=") return Value::boolean(c == 0);
  if (op == "<>") return Value::boolean(c != 0);
  if (op == "<") return Value::boolean(c < 0);
  if (op == "<=") return Value::boolean(c <= 0);
  if (op == ">") return Value::boolean(c > 0);
  return Value::boolean(c >= 0);
}

Value evaluate(const Expr& e, EvalContext& context) {
  using K = Expr::Kind;
  switch (e.kind) {
    case K::constant: return e.value;
    case K::param: return context.param(e.number);
    case K::column: return context.column(e);
    case K::op: return operator_value(e, context);
    case K::and_: return logic(e, context, false, "AND");
    case K::or_: return logic(e, context, true, "OR");
    case K::not_: {
      const auto t = truth(evaluate(e.args.at(0), context), "NOT");
      return t ? Value::boolean(!*t) : Value::null(Type::boolean);
    }
    case K::is_null: {
      const Value v = evaluate(e.args.at(0), context);
      if (v.type() == Type::record && !v.is_null()) {  // a row IS NULL when every field is, IS NOT NULL when none is
        const auto fields = record_field_texts(v.payload());
        const auto null_field = [](const std::optional<std::string>& f) { return !f.has_value(); };
        return Value::boolean(e.negated ? std::none_of(fields.begin(), fields.end(), null_field)
                                        : std::all_of(fields.begin(), fields.end(), null_field));
      }
      return Value::boolean(e.negated ? !v.is_null() : v.is_null());
    }
    case K::bool_test: {  // IS [NOT] TRUE / FALSE / UNKNOWN: never NULL
      const auto t = truth(evaluate(e.args.at(0), context), e.name);
      const bool is = e.name.ends_with("UNKNOWN") ? !t : e.name.ends_with("TRUE") ? t && *t : t && !*t;
      return Value::boolean(e.name.starts_with("IS NOT") ? !is : is);
    }
    case K::field: {
      try {
        return record_field(evaluate(e.args.at(0), context), e.name);
      } catch (const SqlError& err) {  // (t).x of a table t is its column t.x to the server
        if (err.sqlstate() != "42703" || e.args[0].kind != K::column) throw;
        throw SqlError("42703", fmt::format("column {}.{} does not exist", e.args[0].name, e.name));
      }
    }
    case K::in_list: return in_list(e, context);
    case K::between: return between(e, context);
    case K::cast: {
      const auto is_row = [](const Expr& a) { return a.kind == K::row; };
      if (e.args[0].kind == K::array && e.type == Type::array && std::any_of(e.args[0].args.begin(), e.args[0].args.end(), is_row)) {
        Expr element = e;  // ARRAY[ROW(...), ...]::rowtype[]: each element cast to the row type (transformArrayExpr)
        element.type = e.element;
        element.args.assign(1, Expr{});
        std::vector<Value> elements;
        for (const Expr& a : e.args[0].args) {
          element.args[0] = a;
          elements.push_back(evaluate(element, context));
        }
        return cast_value(e, array_constructor(elements));
      }
      if (e.args.at(0).kind != K::row && !e.name.empty()) {  // uuid(x): a function-style cast (parse_expr.cc), no function of a type without one
        const Value v = evaluate(e.args[0], context);
        try {
          return cast_value(e, v);
        } catch (const SqlError& err) {
          if (err.sqlstate() != "42846") throw;
          throw SqlError("42883", fmt::format("function {}({}) does not exist", e.name, v.type() == Type::array ? array_type_name(v) : std::string(type_name(v.type()))));
        }
      }
      if (e.args.at(0).kind != K::row) return cast_value(e, evaluate(e.args[0], context));
      std::vector<Value> fields;  // ROW(...)::rowtype
      for (const Expr& a : e.args[0].args) fields.push_back(evaluate(a, context));
      return row_constructor_cast(e, fields);
    }
    case K::func: return function_value(e, context);
    case K::window: return context.call(e, {});  // the executor's value for the current row
    case K::user_func: {  // a LANGUAGE sql function: the server's
      std::vector<Value> args;
      args.reserve(e.args.size());
      for (const Expr& a : e.args) args.push_back(evaluate(a, context));
      return call_user_function(e, std::move(args), context);
    }
    case K::coalesce: return coalesce_value(e, context);
    case K::case_: return case_value(e, context);
    case K::subquery:
    case K::exists:
    case K::in_subquery: return context.subquery(e);
    case K::array: {
      std::vector<Value> elements;
      elements.reserve(e.args.size());
      for (const Expr& a : e.args) elements.push_back(evaluate(a, context));
      return array_constructor(elements);
    }
    case K::quantified: {
      const Value x = evaluate(e.args.at(0), context);
      return quantified(e.name, e.all, x, evaluate(e.args.at(1), context));
    }
    case K::subscript: {
      const Value array = evaluate(e.args.at(0), context);
      return array_subscript(array, evaluate(e.args.at(1), context));
    }
    case K::slice: {
      const Value array = evaluate(e.args.at(0), context);
      std::optional<Value> lower, upper;
      std::size_t next = 1;
      if ((e.number & 1) != 0) lower = evaluate(e.args.at(next++), context);
      if ((e.number & 2) != 0) upper = evaluate(e.args.at(next), context);
      return array_slice(array, lower, upper);
    }
    case K::row: throw SqlError("0A000", "a row constructor outside a comparison or IN is not in lockstep's SQL subset");
    case K::like: {
      const Value text = evaluate(e.args.at(0), context);
      const Value pattern = evaluate(e.args.at(1), context);
      const Value matched = e.name == "regex" || e.name == "iregex" ? regex_match(text, pattern, e.name == "iregex")
                                                                   : like(text, pattern, e.name == "ilike");
      return e.negated && !matched.is_null() ? Value::boolean(!matched.as_bool()) : matched;
    }
  }
  throw SqlError("XX000", "internal: an expression of unknown kind");
}

}  // namespace lockstep::sql
