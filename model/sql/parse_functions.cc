// model/sql/parse_functions.cc: the reader's CREATE FUNCTION ... LANGUAGE sql and DROP
// FUNCTION (plan.h's CreateFunction): part of model/sql/parse.h's parser. A body is one
// SELECT of one expression without FROM, read by the same parser; anything else (another
// language, SETOF, OUT parameters, defaults, a body of several statements or with FROM) is
// refused by name.
#include <algorithm>

#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/parse.h"
#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql {
namespace detail {

CreateFunction Reader::create_function(const json& body) {
  const int loc = statement_start_;
  known(body, "CreateFunctionStmt", {"replace", "funcname", "parameters", "returnType", "options", "is_procedure", "sql_body"}, loc);
  if (body.value("is_procedure", false)) refuse("CREATE PROCEDURE", loc);
  if (body.contains("sql_body")) refuse("a function body in the SQL-standard form (RETURN or BEGIN ATOMIC)", loc);
  CreateFunction f;
  f.replace = body.value("replace", false);
  std::vector<std::string> name = names(body.at("funcname"));
  if (name.size() == 2) name.erase(name.begin());  // schema.function: the function (plan.h's Schema)
  if (name.size() != 1) refuse("a database-qualified name", loc);
  f.name = name[0];
  if (find_function(f.name) != nullptr) refuse(fmt::format("a function named as a built-in one ({})", f.name), loc);
  if (body.contains("parameters")) {
    for (const json& p : body.at("parameters")) {
      const auto [type, param] = node(p);
      known(*param, "FunctionParameter", {"name", "argType", "mode", "defexpr"}, loc);
      const int ploc = location_of(param->at("argType"), loc);
      const std::string mode = param->value("mode", "FUNC_PARAM_DEFAULT");
      if (mode != "FUNC_PARAM_DEFAULT" && mode != "FUNC_PARAM_IN") refuse("OUT, INOUT and VARIADIC parameters", ploc);
      if (param->contains("defexpr")) refuse("a parameter's DEFAULT", ploc);
      FunctionParam fp;
      fp.name = param->value("name", "");
      fp.type.name = fp.name;
      fp.type.type = type_of(param->at("argType"), ploc, &fp.type, &fp.type.user_type);
      f.params.push_back(std::move(fp));
    }
  }
  if (!body.contains("returnType")) refuse("a function without RETURNS", loc);
  const json& returns = body.at("returnType");
  if (returns.value("setof", false)) refuse("RETURNS SETOF", location_of(returns, loc));
  f.returns.type = type_of(returns, location_of(returns, loc), &f.returns, &f.returns.user_type);
  std::string language;
  const json* as = nullptr;
  int as_loc = loc;
  if (body.contains("options")) {
    for (const json& o : body.at("options")) {
      const json& d = *node(o).second;
      const std::string option = d.value("defname", "");
      const int oloc = location_of(d, loc);
      if (option == "language") {
        language = str(d.at("arg"));
      } else if (option == "as") {
        as = &d.at("arg");
        as_loc = oloc;
      } else if (option == "strict") {
        f.strict = node(d.at("arg")).second->value("boolval", false);
      } else if (option != "volatility" && option != "parallel" && option != "leakproof" && option != "cost" && option != "security") {
        refuse(fmt::format("the function option {}", option), oloc);
      }
    }
  }
  if (language.empty()) fail("42P13", "no language specified", loc);
  std::transform(language.begin(), language.end(), language.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (language != "sql") refuse(fmt::format("LANGUAGE {} (a LANGUAGE sql function of one SELECT expr is)", language), loc);
  if (as == nullptr) fail("42P13", "no function body specified", loc);
  const std::vector<const json*> parts = items(*as);
  if (parts.size() != 1) refuse("a function body in several strings", as_loc);
  const std::string text = str(*parts[0]);
  std::vector<Statement> statements;
  try {
    statements = parse_sql(text);
  } catch (const SqlInputError& e) {
    if (e.sqlstate() == "0A000") refuse(fmt::format("in the body of function {}: {}", f.name, e.what()), as_loc);
    fail(e.sqlstate(), fmt::format("in the body of function {}: {}", f.name, e.what()), as_loc);
  }
  const auto* select = statements.size() == 1 ? std::get_if<Select>(&statements[0].body) : nullptr;
  const bool one_expression = select != nullptr && select->table.empty() && select->from.empty() && select->with.empty() &&
                              select->set_op == nullptr && !select->where && select->order_by.empty() && !select->limit &&
                              !select->offset && !select->aggregate && !select->distinct && select->targets.size() == 1 &&
                              !select->targets[0].star;
  if (!one_expression) refuse("a LANGUAGE sql function whose body is not one SELECT of one expression without FROM", as_loc);
  f.body = std::make_shared<Expr>(select->targets[0].expr);
  return f;
}

}  // namespace detail
}  // namespace lockstep::sql
