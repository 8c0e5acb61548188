// model/sql/parse_expr.cc: expressions and types of the parse tree (model/sql/parse_reader.h),
// each node kind by a function of its own (select-list items: parse_targets.cc).
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <memory>
#include <optional>

#include <fmt/ranges.h>

#include "lockstep/model/sql/binary_types.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql::detail {

const Expr* Reader::aggregate_in(const Expr& e) {
  if (e.kind == Expr::Kind::func) {
    const FunctionInfo* f = find_function(e.name);
    if (f != nullptr && f->kind == FunctionKind::aggregate) return &e;
  }
  for (const Expr& a : e.args) {
    if (const Expr* found = aggregate_in(a)) return found;
  }
  return nullptr;
}

bool Reader::same_expr(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || a.name != b.name || a.number != b.number || a.type != b.type || a.negated != b.negated ||
      a.args.size() != b.args.size() || a.star != b.star || a.distinct != b.distinct || !(a.value == b.value)) {
    return false;
  }
  if (a.kind == Expr::Kind::column && !a.qualifier.empty() && !b.qualifier.empty() && a.qualifier != b.qualifier) return false;
  if (a.select || b.select) return false;  // subqueries are never grouped expressions here
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    if (!same_expr(a.args[i], b.args[i])) return false;
  }
  return true;
}

const Expr* Reader::ungrouped_column(const Expr& e, const std::vector<Expr>& groups) {
  for (const Expr& g : groups) {
    if (same_expr(e, g)) return nullptr;
  }
  if (e.kind == Expr::Kind::column) return &e;
  if (e.kind == Expr::Kind::func) {
    const FunctionInfo* f = find_function(e.name);
    if (f != nullptr && f->kind == FunctionKind::aggregate) return nullptr;
  }
  if (e.kind == Expr::Kind::subquery || e.kind == Expr::Kind::exists) return nullptr;
  for (const Expr& a : e.args) {
    if (const Expr* c = ungrouped_column(a, groups)) return c;
  }
  return nullptr;
}

Expr Reader::expr(const json& n, int fallback) {
  const auto [type, b] = node(n);
  const json& body = *b;
  Expr e;
  e.location = location_of(body, fallback);
  const int loc = e.location;
  const Deeper deeper(*this, loc);
  const std::string_view t = type;
  if (t == "A_Const") return constant(body, std::move(e));
  if (t == "ParamRef") return parameter(body, std::move(e));
  if (t == "ColumnRef") return column_ref(body, std::move(e));
  if (t == "A_Expr") return a_expr(body, std::move(e));
  if (t == "BoolExpr") return bool_expr(body, std::move(e));
  if (t == "NullTest") return null_test(body, std::move(e));
  if (t == "BooleanTest") {
    known(body, "BooleanTest", {"arg", "booltesttype"}, loc);
    std::string test = body.value("booltesttype", "");  // IS_NOT_TRUE, ...
    std::replace(test.begin(), test.end(), '_', ' ');
    e.kind = Expr::Kind::bool_test;
    e.name = test;
    e.args.push_back(expr(body.at("arg"), loc));
    return fold(std::move(e));
  }
  if (t == "TypeCast") return type_cast(body, std::move(e));
  if (t == "CollateClause") return collate_clause(body, loc);
  if (t == "FuncCall") return func_call(body, std::move(e));
  if (t == "GroupingFunc") {  // GROUPING(a, ...): its arguments become GROUP BY items' numbers (check_aggregates)
    known(body, "GroupingFunc", {"args", "location"}, loc);
    e.kind = Expr::Kind::func;
    e.name = "grouping";
    for (const json& a : body.at("args")) e.args.push_back(expr(a, loc));
    return e;
  }
  if (t == "SQLValueFunction") return sql_value_function(body, std::move(e));
  if (t == "CoalesceExpr") return coalesce(body, std::move(e));
  if (t == "CaseExpr") return case_expr(body, std::move(e));
  if (t == "SubLink") return sublink(body, std::move(e));
  if (t == "RowExpr") {  // a row constructor: compared element by element (model/sql/eval.cc)
    known(body, "RowExpr", {"args", "row_format", "location"}, loc);
    e.kind = Expr::Kind::row;
    if (body.contains("args")) {
      for (const json& a : body.at("args")) e.args.push_back(expr(a, loc));
    }
    return e;
  }
  if (t == "A_ArrayExpr") {
    known(body, "A_ArrayExpr", {"elements"}, loc);
    if (!body.contains("elements")) fail("42P18", "cannot determine type of empty array", loc);
    e.kind = Expr::Kind::array;
    for (const json& a : body.at("elements")) {
      if (node(a).first == "A_ArrayExpr") refuse("multidimensional arrays", loc);
      e.args.push_back(expr(a, loc));
    }
    return e;
  }
  if (t == "A_Indirection") {  // array[i], a slice, or (row).field
    known(body, "A_Indirection", {"arg", "indirection"}, loc);
    const json& ind = body.at("indirection");
    if (ind.size() == 1 && node(ind.at(0)).first == "String") {
      e.kind = Expr::Kind::field;
      e.name = str(ind.at(0));
      e.args.push_back(expr(body.at("arg"), loc));
      return e;
    }
    if (ind.size() == 1 && node(ind.at(0)).first == "A_Star") refuse("(x).* other than as a column of a select list", loc);
    if (ind.size() != 1 || node(ind.at(0)).first != "A_Indices") refuse("field selection or several subscripts", loc);
    const json& indices = *node(ind.at(0)).second;
    if (indices.value("is_slice", false)) {
      e.kind = Expr::Kind::slice;
      e.args.push_back(expr(body.at("arg"), loc));
      if (indices.contains("lidx")) {
        e.number |= 1;
        e.args.push_back(expr(indices.at("lidx"), loc));
      }
      if (indices.contains("uidx")) {
        e.number |= 2;
        e.args.push_back(expr(indices.at("uidx"), loc));
      }
      return e;
    }
    if (!indices.contains("uidx")) refuse("an array subscript without an index", loc);
    e.kind = Expr::Kind::subscript;
    e.args.push_back(expr(body.at("arg"), loc));
    e.args.push_back(expr(indices.at("uidx"), loc));
    return e;
  }
  if (t == "MinMaxExpr") {  // GREATEST / LEAST: a function of the subset's table
    known(body, "MinMaxExpr", {"op", "args"}, loc);
    e.kind = Expr::Kind::func;
    e.name = body.value("op", "") == "IS_GREATEST" ? "greatest" : "least";
    for (const json& a : body.at("args")) e.args.push_back(expr(a, loc));
    return e;
  }
  refuse(construct_of_node(type, body), loc);
}

Expr Reader::constant(const json& body, Expr e) {
  const std::string_view type = "A_Const";
  const int loc = e.location;
  known(body, type, {"ival", "sval", "boolval", "fval", "isnull", "bsval"}, loc);
  e.kind = Expr::Kind::constant;
  if (body.value("isnull", false)) {
    e.value = Value::null();
  } else if (body.contains("ival")) {
    // libpg_query 15's JSON leaves a negative integer's value out ("ival": {}), as it leaves 0
    // out: the literal is read back from the statement's text at its location.
    const json& ival = body.at("ival");
    e.value = Value::integer(ival.contains("ival") ? ival.value("ival", std::int64_t{0}) : integer_at(loc), Type::int4);
  } else if (body.contains("sval")) {
    e.value = Value::unknown(body.at("sval").value("sval", ""));
  } else if (body.contains("bsval")) {  // B'101', X'1F': a bit string
    try {
      e.value = bit_input(body.at("bsval").value("bsval", ""));
    } catch (const SqlError& error) {
      fail(error.sqlstate(), error.what(), loc);
    }
  } else if (body.contains("boolval")) {
    e.value = Value::boolean(body.at("boolval").value("boolval", false));
  } else if (body.contains("fval")) {
    // An integer literal beyond int4 is a bigint, beyond that numeric; a decimal one is numeric
    // (model/sql/numeric.h).
    const std::string f = body.at("fval").value("fval", "");
    try {
      e.value = f.find_first_of(".eE") == std::string::npos ? cast(Value::unknown(f), Type::int8) : numeric_input(f);
    } catch (const SqlError&) {
      try {
        e.value = numeric_input(f);
      } catch (const SqlError& error) {
        fail(error.sqlstate(), error.what(), loc);
      }
    }
  }
  return e;
}

std::int64_t Reader::integer_at(int location) const {
  // The grammar folds a minus (and parentheses) into the constant: '-2', '- 2', '-(2)'.
  std::size_t i = location < 0 ? text_.size() : static_cast<std::size_t>(location);
  bool negative = false;
  while (i < text_.size() && (text_[i] == '-' || text_[i] == '(' || text_[i] == '+' || std::isspace(static_cast<unsigned char>(text_[i])) != 0)) {
    if (text_[i] == '-') negative = !negative;
    ++i;
  }
  const std::size_t start = i;
  while (i < text_.size() && std::isdigit(static_cast<unsigned char>(text_[i])) != 0) ++i;
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(text_.data() + start, text_.data() + i, v);
  if (i == start || ec != std::errc()) fail("XX000", "internal: an integer constant whose text lockstep cannot read", location);
  return negative ? -v : v;
}

Expr Reader::parameter(const json& body, Expr e) {
  const std::string_view type = "ParamRef";
  const int loc = e.location;
  known(body, type, {"number"}, loc);
  e.kind = Expr::Kind::param;
  e.number = body.value("number", 0);
  if (e.number < 1) refuse("a parameter without a number", loc);
  max_param_ = std::max(max_param_, e.number);
  return e;
}

Expr Reader::column_ref(const json& body, Expr e) {
  const std::string_view type = "ColumnRef";
  const int loc = e.location;
  known(body, type, {"fields"}, loc);
  const json& fields = body.at("fields");
  if (node(fields.back()).first == "A_Star") refuse("* outside the select list", loc);
  if (fields.size() > 3) refuse("a database-qualified column", loc);
  e.kind = Expr::Kind::column;
  e.name = str(fields.back());
  if (fields.size() >= 2) e.qualifier = str(fields.at(fields.size() - 2)), e.schema = fields.size() == 3 ? str(fields[0]) : "";
  // A table's columns cannot take these names (42701): they are the system columns of each
  // tuple version, which lockstep does not model (River's xmax != 0 after an upsert).
  static constexpr std::string_view kSystemColumns[] = {"xmin", "xmax", "cmin", "cmax", "ctid", "tableoid"};
  if (std::find(std::begin(kSystemColumns), std::end(kSystemColumns), e.name) != std::end(kSystemColumns) && !(xmax_allowed_ && e.name == "xmax")) {
    refuse(fmt::format("the system column {}", e.name), loc);
  }
  return e;
}

Expr Reader::a_expr(const json& body, Expr e) {
  const std::string_view type = "A_Expr";
  const int loc = e.location;
  known(body, type, {"kind", "name", "lexpr", "rexpr"}, loc);
  const std::string kind = body.value("kind", "");
  const std::vector<std::string> op = names(body.at("name"));
  if (kind == "AEXPR_OP" && op.size() == 1 && body.contains("lexpr") && (op[0] == "~" || op[0] == "~*" || op[0] == "!~" || op[0] == "!~*")) {
    e.kind = Expr::Kind::like;  // a POSIX regular expression match (model/sql/regex.h)
    e.name = op[0].ends_with('*') ? "iregex" : "regex";
    e.negated = op[0].starts_with('!');
    e.args.push_back(expr(body.at("lexpr"), loc));
    e.args.push_back(expr(body.at("rexpr"), loc));
    return e;
  }
  if ((kind == "AEXPR_OP" && op.size() == 1 && op[0] == "@" && !body.contains("lexpr")) || kind == "AEXPR_NULLIF") {  // prefix @: the absolute value
    e.kind = Expr::Kind::func, e.name = kind == "AEXPR_NULLIF" ? "nullif" : "abs";
    if (e.name == "abs") e.qualifier = "@";  // (its errors name the operator)
    for (const char* side : {"lexpr", "rexpr"}) if (body.contains(side)) e.args.push_back(expr(body.at(side), loc));
    return e;
  }
  if (kind == "AEXPR_OP") {
    static const std::initializer_list<std::string_view> ops = {"+", "-", "*", "/", "%", "=", "<>", "!=", "<", "<=", ">", ">=", "||", "->", "->>", "@>", "<@", "?", "?|", "?&", "&&", "^", "#>", "#>>", "<<", ">>", "&", "|", "#", "~"};
    if (op.size() != 1 || std::find(ops.begin(), ops.end(), op[0]) == ops.end()) {
      refuse(fmt::format("the operator {}", fmt::join(op, ".")), loc);
    }
    if (auto contains = range_containment(body, op[0], loc)) return std::move(*contains);
    e.kind = Expr::Kind::op, e.name = op[0] == "!=" ? "<>" : op[0];
    if (body.contains("lexpr")) e.args.push_back(expr(body.at("lexpr"), loc));
    e.args.push_back(expr(body.at("rexpr"), loc));
    if (e.args.size() == 1 && e.name != "-" && e.name != "~") refuse(fmt::format("the prefix operator {}", e.name), loc);
    if (e.args.size() == 2 && e.name == "~") refuse("the operator ~", loc);
    return fold(std::move(e));
  }
  if (kind == "AEXPR_IN") {
    e.kind = Expr::Kind::in_list;
    e.negated = op.at(0) == "<>";
    e.args.push_back(expr(body.at("lexpr"), loc));
    const auto list = items(body.at("rexpr"));
    if (list.empty()) refuse("IN with a subquery", loc);
    for (const json* i : list) e.args.push_back(expr(*i, loc));
    return fold(std::move(e));
  }
  if (kind == "AEXPR_BETWEEN" || kind == "AEXPR_NOT_BETWEEN") {
    e.kind = Expr::Kind::between;
    e.negated = kind == "AEXPR_NOT_BETWEEN";
    e.args.push_back(expr(body.at("lexpr"), loc));
    for (const json* i : items(body.at("rexpr"))) e.args.push_back(expr(*i, loc));
    return fold(std::move(e));
  }
  if (kind == "AEXPR_OP_ANY" || kind == "AEXPR_OP_ALL") {
    static const std::initializer_list<std::string_view> compared = {"=", "<>", "!=", "<", "<=", ">", ">="};
    if (op.size() != 1 || std::find(compared.begin(), compared.end(), op[0]) == compared.end()) {
      refuse(fmt::format("the operator {} with ANY / ALL", fmt::join(op, ".")), loc);
    }
    e.kind = Expr::Kind::quantified;
    e.name = op[0] == "!=" ? "<>" : op[0];
    e.all = kind == "AEXPR_OP_ALL";
    e.args.push_back(expr(body.at("lexpr"), loc));
    e.args.push_back(expr(body.at("rexpr"), loc));
    return e;
  }
  if (kind == "AEXPR_LIKE" || kind == "AEXPR_ILIKE") {
    if (node(body.at("rexpr")).first == "FuncCall") refuse("LIKE ... ESCAPE", loc);
    e.kind = Expr::Kind::like;
    e.name = kind == "AEXPR_LIKE" ? "like" : "ilike";
    e.negated = !op.empty() && op[0].starts_with("!");
    e.args.push_back(expr(body.at("lexpr"), loc));
    e.args.push_back(expr(body.at("rexpr"), loc));
    return e;
  }
  if (kind == "AEXPR_DISTINCT" || kind == "AEXPR_NOT_DISTINCT") {
    e.kind = Expr::Kind::op;
    e.name = "is distinct from";
    e.negated = kind == "AEXPR_NOT_DISTINCT";
    e.args.push_back(expr(body.at("lexpr"), loc));
    e.args.push_back(expr(body.at("rexpr"), loc));
    if (e.args[0].kind == Expr::Kind::row || e.args[1].kind == Expr::Kind::row) refuse(fmt::format("a row constructor in {}", e.name), loc);
    return e;
  }
  static const std::initializer_list<std::pair<std::string_view, std::string_view>> kinds = {
      {"AEXPR_SIMILAR", "SIMILAR TO"},
      {"AEXPR_OP_ANY", "= ANY (...)"}, {"AEXPR_OP_ALL", "ALL (...)"},
      {"AEXPR_BETWEEN_SYM", "BETWEEN SYMMETRIC"}, {"AEXPR_NOT_BETWEEN_SYM", "NOT BETWEEN SYMMETRIC"}};
  for (const auto& [k, name] : kinds) {
    if (k == kind) refuse(name, loc);
  }
  refuse(fmt::format("the expression {}", kind), loc);
}

Expr Reader::bool_expr(const json& body, Expr e) {
  const std::string_view type = "BoolExpr";
  const int loc = e.location;
  known(body, type, {"boolop", "args"}, loc);
  const std::string op = body.value("boolop", "");
  e.kind = op == "AND_EXPR" ? Expr::Kind::and_ : op == "OR_EXPR" ? Expr::Kind::or_ : Expr::Kind::not_;
  std::vector<std::size_t> marks;
  for (const json& a : body.at("args")) {
    marks.push_back(fold_errors_.size());
    e.args.push_back(expr(a, loc));
  }
  return e.kind == Expr::Kind::not_ ? fold(std::move(e)) : fold_short_circuit(std::move(e), marks);
}

Expr Reader::null_test(const json& body, Expr e) {
  const std::string_view type = "NullTest";
  const int loc = e.location;
  known(body, type, {"arg", "nulltesttype", "argisrow"}, loc);
  e.kind = Expr::Kind::is_null;
  e.negated = body.value("nulltesttype", "") == "IS_NOT_NULL";
  e.args.push_back(expr(body.at("arg"), loc));
  return fold(std::move(e));
}

Expr Reader::type_cast(const json& body, Expr e) {
  const std::string_view type = "TypeCast";
  const int loc = e.location;
  known(body, type, {"arg", "typeName"}, loc);
  e.kind = Expr::Kind::cast;
  e.type = type_of(body.at("typeName"), loc, nullptr, &e.name, &e);  // an enum's name in e.name
  const auto [arg_type, arg] = node(body.at("arg"));
  if (std::string_view(arg_type) == "A_ArrayExpr" && !arg->contains("elements") && e.type == Type::array) {
    Expr empty;  // ARRAY[]::type[]: typed by its cast
    empty.kind = Expr::Kind::array;
    empty.location = loc;
    e.args.push_back(std::move(empty));
    return e;
  }
  e.args.push_back(expr(body.at("arg"), loc));
  return fold(std::move(e));
}

Expr Reader::func_call(const json& body, Expr e) {
  const std::string_view type = "FuncCall";
  const int loc = e.location;
  if (body.contains("over")) return window_call(body, std::move(e), names(body.at("funcname")).back());
  known(body, type, {"funcname", "args", "agg_star", "agg_distinct", "agg_filter", "agg_order", "funcformat"}, loc);
  std::vector<std::string> name = names(body.at("funcname"));
  if (name.size() == 2 && name[0] == "pg_catalog") name.erase(name.begin());
  if (name.size() == 2 && name[0] == "pg_temp") return user_function_call(body, std::move(e), std::string(kTempSchemaPrefix) + name[1]);  // the session's own
  if (name.size() == 2 && find_function(name[1]) == nullptr) return user_function_call(body, std::move(e), name[0] + "." + name[1]);  // a schema's own
  if (name.size() != 1) refuse(fmt::format("the function {}", fmt::join(name, ".")), loc);
  const FunctionInfo* f = find_function(name[0]);
  if (f == nullptr) return user_function_call(body, std::move(e), name[0]);
  e.kind = Expr::Kind::func;
  e.name = name[0];
  if (is_stepping_function(e.name)) stepping_call_ = true;
  e.star = body.value("agg_star", false);
  e.distinct = body.value("agg_distinct", false);
  if (e.distinct && f->kind != FunctionKind::aggregate) fail("42809", fmt::format("DISTINCT specified, but {} is not an aggregate function", e.name), loc);
  // make_interval's arguments by position or by name (secs => 30); those not given are 0.
  static constexpr std::array<std::string_view, 7> kMakeInterval = {"years", "months", "weeks", "days", "hours", "mins", "secs"};
  const bool make_interval = e.name == "make_interval";
  std::vector<std::optional<Expr>> slots(make_interval ? kMakeInterval.size() : 0);
  std::size_t position = 0;
  if (body.contains("args")) {
    for (const json& a : body.at("args")) {
      const json* wrapped = &a;
      std::size_t slot = position++;
      if (const auto [named_type, named_arg] = node(a); named_type == "NamedArgExpr") {
        const std::string arg_name = named_arg->value("name", "");
        const auto* named = std::find(kMakeInterval.begin(), kMakeInterval.end(), arg_name);
        if (!make_interval || named == kMakeInterval.end()) refuse(fmt::format("the named argument {} => in {}()", arg_name, e.name), loc);
        slot = static_cast<std::size_t>(named - kMakeInterval.begin());
        wrapped = &named_arg->at("arg");
      }
      if (slot == 0 && (e.name == "nextval" || e.name == "currval" || e.name == "setval")) {
        // nextval('seq'::regclass), as migrations' serial defaults spell it: the name, which the
        // sequence function looks up (42P01 when there is none, as the cast's lookup gives).
        if (const auto [cast_type, cast] = node(*wrapped); cast_type == "TypeCast" && node(cast->at("arg")).first == "A_Const") {
          const std::vector<std::string> type = names(cast->at("typeName").at("names"));
          if (type.back() == "regclass" && !cast->at("typeName").contains("arrayBounds")) wrapped = &cast->at("arg");
        }
      }
      const auto [arg_type, arg] = node(*wrapped);
      // pg_sleep(0.3), the most common call of a test, and make_interval(secs => 0.5): a
      // decimal literal is their double precision argument (elsewhere a numeric value, outside
      // the subset).
      Expr value;
      if ((e.name == "pg_sleep" || (make_interval && slot == 6)) && std::string_view(arg_type) == "A_Const" && arg->contains("fval")) {
        value.location = location_of(*arg, loc);
        value.kind = Expr::Kind::constant;
        value.value = Value::unknown(arg->at("fval").value("fval", ""));
      } else {
        value = expr(*wrapped, loc);
      }
      if (!make_interval) {
        e.args.push_back(std::move(value));
        continue;
      }
      if (slot >= slots.size()) fail("42883", "function make_interval() does not exist with more than 7 arguments", loc);
      if (slots[slot]) fail("42601", fmt::format("argument name \"{}\" used more than once", kMakeInterval[slot]), loc);
      slots[slot] = std::move(value);
    }
  }
  for (std::optional<Expr>& slot : slots) {
    if (!slot) {
      slot.emplace();
      slot->location = loc;
      slot->kind = Expr::Kind::constant;
      slot->value = Value::integer(0, Type::int4);
    }
    e.args.push_back(std::move(*slot));
  }
  const int count = static_cast<int>(e.args.size());
  if (e.star && e.name != "count") refuse(fmt::format("{}(*)", e.name), loc);
  if ((e.name == "count" && count + (e.star ? 1 : 0) != 1) || (e.name != "count" && (count < f->min_args || count > f->max_args))) {
    // The server's message names the arguments' types: known here for constants (and none).
    std::vector<std::string> types;
    for (const Expr& a : e.args) {
      if (a.kind != Expr::Kind::constant || a.value.is_null()) break;
      types.emplace_back(a.value.type() == Type::unknown ? "unknown" : ::lockstep::sql::type_name(a.value.type()));
    }
    if (types.size() == e.args.size() && !e.star) fail("42883", fmt::format("function {}({}) does not exist", e.name, fmt::join(types, ", ")), loc);
    fail("42883", fmt::format("function {}() does not exist with {} arguments", e.name, count), loc);
  }
  if (body.contains("agg_order")) {  // string_agg(x, ',' ORDER BY y): the order its input is read in (e.select's ORDER BY)
    if (f->kind != FunctionKind::aggregate) fail("42809", fmt::format("ORDER BY specified, but {} is not an aggregate function", e.name), loc);
    if (e.distinct) refuse("DISTINCT with ORDER BY inside an aggregate", loc);
    auto order = std::make_shared<Select>();
    for (const json& o : body.at("agg_order")) order->order_by.push_back(order_item(o, loc));
    e.select = std::move(order);
  }
  if (body.contains("agg_filter")) {  // FILTER (WHERE ...): the aggregate's last argument
    if (f->kind != FunctionKind::aggregate) fail("42809", fmt::format("FILTER specified, but {} is not an aggregate function", e.name), loc);
    e.args.push_back(expr(body.at("agg_filter"), loc));
    e.filtered = true;
  }
  return e;
}

// A call of no built-in function: a LANGUAGE sql function the server may have (CREATE
// FUNCTION), found when the statement runs; a name it does not have is refused then.
Expr Reader::user_function_call(const json& body, Expr e, std::string name) {
  const int loc = e.location;
  // A type's name called on one value is a cast (func_get_detail's FUNCDETAIL_COERCION): uuid('...'), int8('7'), date(ts).
  static constexpr std::string_view kCastNames[] = {"int2", "int4", "int8", "text", "jsonb", "json", "bool", "timestamptz", "uuid", "bytea", "float8", "oid", "date"};
  if (std::find(std::begin(kCastNames), std::end(kCastNames), name) != std::end(kCastNames) && body.contains("args") && body.at("args").size() == 1 && node(body.at("args")[0]).first != "NamedArgExpr" && !body.contains("agg_order")) {
    e.kind = Expr::Kind::cast, e.type = *type_of_name(name), e.name = name;
    e.args.push_back(expr(body.at("args")[0], loc));
    return e;
  }
  if (body.value("agg_star", false) || body.value("agg_distinct", false) || body.contains("agg_filter")) {
    refuse(fmt::format("the aggregate {}()", name), loc);
  }
  e.kind = Expr::Kind::user_func;
  e.name = std::move(name);
  if (std::find(user_calls_.begin(), user_calls_.end(), e.name) == user_calls_.end()) user_calls_.push_back(e.name);
  if (body.contains("args")) {
    for (const json& a : body.at("args")) {
      if (const auto [type, named] = node(a); type == "NamedArgExpr") {  // name => value, after the positional ones
        e.arg_names.push_back(named->value("name", ""));
        e.args.push_back(expr(named->at("arg"), loc));
        continue;
      }
      e.args.push_back(expr(a, loc));
    }
  }
  return e;
}

Expr Reader::sql_value_function(const json& body, Expr e) {
  known(body, "SQLValueFunction", {"op", "typmod"}, e.location);
  const std::string op = body.value("op", "");
  e.kind = Expr::Kind::func;
  static const std::pair<std::string_view, std::string_view> kValues[] = {
      {"SVFOP_CURRENT_SCHEMA", "current_schema"}, {"SVFOP_CURRENT_TIMESTAMP", "now"},      {"SVFOP_LOCALTIMESTAMP", "localtimestamp"},
      {"SVFOP_CURRENT_DATE", "current_date"},     {"SVFOP_CURRENT_USER", "current_user"}, {"SVFOP_SESSION_USER", "current_user"},
      {"SVFOP_USER", "current_user"},             {"SVFOP_CURRENT_ROLE", "current_user"}, {"SVFOP_LOCALTIME", "localtime"}};
  for (const auto& [svf, function] : kValues) {
    if (op == svf) {
      e.name = std::string(function);
      return e;
    }
  }
  if (op == "SVFOP_CURRENT_TIMESTAMP_N" || op == "SVFOP_LOCALTIMESTAMP_N") {  // CURRENT_TIMESTAMP(p): rounded to p digits, as a cast to timestamptz(p)
    const bool zoned = op == "SVFOP_CURRENT_TIMESTAMP_N";
    e.name = zoned ? "now" : "localtimestamp";
    Expr cast{.kind = Expr::Kind::cast, .location = e.location};
    cast.type = zoned ? Type::timestamptz : Type::timestamp;
    cast.typmod = body.value("typmod", 0);  // (0 is left out of the parse tree)
    cast.args.push_back(std::move(e));
    return cast;
  }
  // Refused by its SQL keyword (CURRENT_DATE, LOCALTIME, CURRENT_USER, ...), not the parser's name for it.
  std::string word = op.starts_with("SVFOP_") ? op.substr(6) : op;
  if (word.ends_with("_N")) word.resize(word.size() - 2);
  refuse(word, e.location);
}

Expr Reader::coalesce(const json& body, Expr e) {
  const std::string_view type = "CoalesceExpr";
  const int loc = e.location;
  known(body, type, {"args"}, loc);
  e.kind = Expr::Kind::coalesce;
  std::vector<std::size_t> marks;
  for (const json& a : body.at("args")) {
    marks.push_back(fold_errors_.size());
    e.args.push_back(expr(a, loc));
  }
  return fold_short_circuit(std::move(e), marks);
}

Expr Reader::case_expr(const json& body, Expr e) {
  const std::string_view type = "CaseExpr";
  const int loc = e.location;
  known(body, type, {"arg", "args", "defresult"}, loc);
  e.kind = Expr::Kind::case_;
  if (body.contains("arg")) {
    e.has_operand = true;
    e.args.push_back(expr(body.at("arg"), loc));
  }
  // The planner's folding skips a WHEN whose condition folds to FALSE or NULL, and what
  // follows one that folds to TRUE: errors folding their results are not raised.
  bool skip_rest = false;
  for (const json& w : body.at("args")) {
    const json& when = *node(w).second;
    known(when, "CaseWhen", {"expr", "result"}, loc);
    const std::size_t before = fold_errors_.size();
    e.args.push_back(expr(when.at("expr"), loc));
    const std::size_t mark = fold_errors_.size();
    e.args.push_back(expr(when.at("result"), loc));
    const Expr& cond = e.args[e.args.size() - 2];
    const bool constant = !e.has_operand && cond.kind == Expr::Kind::constant && mark == before;
    if (skip_rest) {
      drop_fold_errors(before);
    } else if (constant && (cond.value.is_null() || (cond.value.type() == Type::boolean && !cond.value.as_bool()))) {
      drop_fold_errors(mark);
    } else if (constant && cond.value.type() == Type::boolean && cond.value.as_bool()) {
      skip_rest = true;
    }
  }
  if (body.contains("defresult")) {
    e.has_else = true;
    const std::size_t before = fold_errors_.size();
    e.args.push_back(expr(body.at("defresult"), loc));
    if (skip_rest) drop_fold_errors(before);
  }
  return e;
}

Expr Reader::sublink(const json& body, Expr e) {
  const std::string_view type = "SubLink";
  const int loc = e.location;
  const std::string kind = body.value("subLinkType", "");
  const bool any = kind == "ANY_SUBLINK";
  if (kind != "EXPR_SUBLINK" && kind != "EXISTS_SUBLINK" && kind != "ARRAY_SUBLINK" && !any) refuse(construct_of_node(type, body), loc);
  if (kind == "ARRAY_SUBLINK") e.name = "ARRAY";  // ARRAY (SELECT ...): its rows' values as one array
  known(body, type, {"subLinkType", "subselect", "testexpr", "operName"}, loc);
  if (any && body.contains("operName")) {
    const std::vector<std::string> op = names(body.at("operName"));
    if (op.size() != 1 || op[0] != "=") refuse(fmt::format("{} ANY (SELECT ...)", fmt::join(op, ".")), loc);
  }
  e.kind = any ? Expr::Kind::in_subquery : kind == "EXISTS_SUBLINK" ? Expr::Kind::exists : Expr::Kind::subquery;
  if (any) {
    e.args.push_back(expr(body.at("testexpr"), loc));
  }
  const auto [stype, sb] = node(body.at("subselect"));
  pid_set_ = any;
  auto sub = std::make_shared<Select>(select(*sb, loc, false));
  if (any && e.args[0].kind == Expr::Kind::row) {  // (a, b) IN (SELECT x, y ...): db-scheduler's pick
    const std::size_t n = e.args[0].args.size();
    if (sub->set_op || std::any_of(sub->targets.begin(), sub->targets.end(), [](const Target& t) { return t.star; })) {
      refuse("a row IN a subquery with * or UNION", loc);
    }
    if (sub->targets.size() != n) fail("42601", sub->targets.size() > n ? "subquery has too many columns" : "subquery has too few columns", loc);
    note_locking_subquery(sub->lock);
    subquery_ = true;
    e.select = std::move(sub);
    return e;
  }
  for (const CommonTable& c : sub->with) {  // its own WITH queries are computed once (sim/pg/executor/sql_subqueries.cc)
    if (c.modifying) fail("0A000", "WITH clause containing a data-modifying statement must be at the top level", c.location >= 0 ? c.location : loc);
  }
  if (e.kind != Expr::Kind::exists && (sub->targets.size() != 1 || sub->targets[0].star)) {
    fail("42601", "subquery must return only one column", loc);
  }
  note_locking_subquery(sub->lock);
  subquery_ = true;
  e.select = std::move(sub);
  return e;
}

}  // namespace lockstep::sql::detail
