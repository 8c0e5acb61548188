// model/sql/parse_functions.cc: the reader's CREATE FUNCTION, DROP FUNCTION, CREATE TRIGGER
// and DROP TRIGGER (plan.h's CreateFunction, AlterTable): part of model/sql/parse.h's parser.
// A LANGUAGE sql body is one SELECT of one column, read by the same parser: of one expression
// without FROM, or over set-returning functions and VALUES; anything else there (SETOF, OUT
// parameters, defaults, a body of several statements or reading a table) is refused by name. A
// LANGUAGE plpgsql body is read by PostgreSQL's plpgsql parser (libpg_query) into the
// statements lockstep runs (model/sql/parse_do.cc); one it does not run is kept with the reason.
#include <algorithm>
#include <cstdlib>
#include <optional>
#include <regex>

#include <fmt/ranges.h>
#include <pg_query.h>

#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/parse.h"
#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql {
namespace detail {
namespace {

// The server's checks of a plpgsql body's RETURNs as CREATE compiles it (pl_gram.y): the first
// misplaced one's message (SQLSTATE 42804), or none.
std::optional<std::string_view> misplaced_return(const CreateFunction& f, const std::vector<PlStatement>& body) {
  using K = PlStatement::Kind;
  for (const PlStatement& s : body) {
    const bool value = s.kind == K::stop && !s.text.empty();
    if (value && f.returns_set) return "RETURN cannot have a parameter in function returning set";
    if (value && f.returns.user_type == "void") return "RETURN cannot have a parameter in function returning void";
    if (value && !f.outs.empty()) return "RETURN cannot have a parameter in function with OUT parameters";
    if (s.kind == K::return_next && !f.returns_set) return "cannot use RETURN NEXT in a non-SETOF function";
    if (s.kind == K::return_query && !f.returns_set) return "cannot use RETURN QUERY in a non-SETOF function";
    if (s.kind == K::return_next && !f.outs.empty() && s.target != PlStatement::kOutRow) return "RETURN NEXT cannot have a parameter in function with OUT parameters";
    std::optional<std::string_view> inner = misplaced_return(f, s.body);
    for (const PlBranch& b : s.branches) inner = inner ? inner : misplaced_return(f, b.body);
    for (const PlHandler& h : s.handlers) inner = inner ? inner : misplaced_return(f, h.body);
    if (inner) return inner;
  }
  return std::nullopt;
}

}  // namespace

CreateFunction Reader::create_function(const json& body) {
  const int loc = statement_start_;
  known(body, "CreateFunctionStmt", {"replace", "funcname", "parameters", "returnType", "options", "is_procedure", "sql_body"}, loc);
  if (body.value("is_procedure", false)) refuse("CREATE PROCEDURE", loc);
  if (body.contains("sql_body")) refuse("a function body in the SQL-standard form (RETURN or BEGIN ATOMIC)", loc);
  CreateFunction f;
  f.replace = body.value("replace", false);
  std::vector<std::string> name = names(body.at("funcname"));
  if (name.size() > 2) refuse("a database-qualified name", loc);
  f.name = fmt::format("{}", fmt::join(name, "."));  // schema.function kept (pg_temp's: the session's own; plan.h's Schema)
  if (find_function(name.back()) != nullptr) refuse(fmt::format("a function named as a built-in one ({})", f.name), loc);
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
      } else if (option == "volatility") {
        f.non_volatile = str(d.at("arg")) != "volatile";
      } else if (option == "set") {  // search_path only: another setting is not applied for the call
        const SetVariable set = set_variable(*node(d.at("arg")).second);
        if (set.name != "search_path" || !set.value || set.value->empty()) refuse(fmt::format("the function option SET {}", set.name), oloc);
        f.search_path = *set.value;
      } else if (option == "cost") {
        const json& n = *node(d.at("arg")).second;
        f.cost = n.contains("ival") ? n.value("ival", 0.0) : std::strtod(n.value("fval", std::string("100")).c_str(), nullptr);
      } else if (option == "security") {
        f.security_definer = node(d.at("arg")).second->value("boolval", false);
      } else if (option != "parallel" && option != "leakproof") {
        refuse(fmt::format("the function option {}", option), oloc);
      }
    }
  }
  if (language.empty()) fail("42P13", "no language specified", loc);
  std::transform(language.begin(), language.end(), language.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (language != "sql" && language != "plpgsql") refuse(fmt::format("LANGUAGE {}", language), loc);
  f.plpgsql = language == "plpgsql";
  // A plpgsql function is never called here: what the subset cannot type in its signature
  // (OUT parameters, SETOF, a composite type) is left unread rather than refused, its type
  // known by its text (so that two signatures still differ: overloading stays refused).
  auto lenient = [&](ColumnDef& into, const json& type_name, std::string_view mode, auto&& read) {
    try {
      read();
    } catch (const SqlInputError& e) {
      if (!f.plpgsql || e.sqlstate() != "0A000") throw;
      into.type = Type::text;
      into.user_type = fmt::format("unread {} {}{}{}", mode, fmt::join(names(type_name.at("names")), "."),
                                   type_name.contains("arrayBounds") ? "[]" : "", type_name.value("setof", false) ? " setof" : "");
    }
  };
  if (body.contains("parameters")) {
    for (const json& p : body.at("parameters")) {
      const auto [type, param] = node(p);
      known(*param, "FunctionParameter", {"name", "argType", "mode", "defexpr"}, loc);
      const int ploc = location_of(param->at("argType"), loc);
      const std::string mode = param->value("mode", "FUNC_PARAM_DEFAULT");
      FunctionParam fp;
      fp.name = param->value("name", "");
      fp.type.name = fp.name;
      // OUT parameters and RETURNS TABLE's columns: its result's columns (a LANGUAGE sql
      // body does not name them: its last query's columns fill them in order).
      const bool out = (f.plpgsql || mode == "FUNC_PARAM_TABLE") && (mode == "FUNC_PARAM_OUT" || mode == "FUNC_PARAM_TABLE") && !fp.name.empty();
      lenient(fp.type, param->at("argType"), mode, [&] {
        if (mode != "FUNC_PARAM_DEFAULT" && mode != "FUNC_PARAM_IN" && !out) refuse("OUT, INOUT and VARIADIC parameters", ploc);
        fp.type.type = type_of(param->at("argType"), ploc, &fp.type, &fp.type.user_type);
      });
      if (out) {
        if (param->contains("defexpr")) refuse("a default of an OUT parameter", ploc);
        f.arg_order.push_back(-1 - static_cast<int>(f.outs.size()));
        f.outs.push_back(std::move(fp));
        continue;
      }
      if (!fp.name.empty()) f.arg_order.push_back(static_cast<int>(f.params.size()));
      if (param->contains("defexpr")) {
        fp.default_value = std::make_shared<Expr>(expr(param->at("defexpr"), ploc));
      } else if (!f.params.empty() && f.params.back().default_value != nullptr) {
        fail("42P13", "input parameters after one with a default value must also have defaults", ploc);
      }
      f.params.push_back(std::move(fp));
    }
  }
  if (!body.contains("returnType") && f.outs.empty()) refuse("a function without RETURNS", loc);
  static const json kRecord = {{"names", json::array({{{"String", {{"sval", "record"}}}}})}};
  const json& returns = body.contains("returnType") ? body.at("returnType") : kRecord;
  const std::vector<std::string> returned = names(returns.at("names"));
  f.returns_trigger = f.plpgsql && returned.size() == 1 && returned[0] == "trigger" && !returns.contains("arrayBounds");
  if (!returns.contains("arrayBounds") && !returned.empty() && returned.back() == "void" && !returns.value("setof", false)) {
    f.returns.type = Type::text;  // RETURNS void: a call's value prints as an empty text
    f.returns.user_type = "void";
  } else if (!f.outs.empty()) {
    // OUT parameters' or RETURNS TABLE's: one column is its type, several a record of them.
    const std::vector<std::string> declared = names(returns.at("names"));
    const bool record = !declared.empty() && declared.back() == "record" && !returns.contains("arrayBounds");
    if (f.outs.size() > 1 && !record) fail("42P13", "function result type must be record because of OUT parameters", loc);
    f.returns_set = returns.value("setof", false);
    f.returns = f.outs.size() == 1 ? f.outs[0].type : ColumnDef{.name = "", .type = Type::record};
    f.returns.name = "";
  } else if (!f.returns_trigger) {
    lenient(f.returns, returns, "", [&] {
      f.returns_set = returns.value("setof", false);
      f.returns.type = type_of(returns, location_of(returns, loc), &f.returns, &f.returns.user_type);
    });
  }
  if (as == nullptr) fail("42P13", "no function body specified", loc);
  const std::vector<const json*> parts = items(*as);
  if (parts.size() != 1) refuse("a function body in several strings", as_loc);
  const std::string text = str(*parts[0]);
  if (f.plpgsql) {
    // CREATE FUNCTION compiles the body (check_function_bodies): a body the plpgsql parser
    // rejects is refused (the server's error names a line of the body, not modelled).
    std::string own(text_.substr(static_cast<std::size_t>(statement_start_)));
    if (statement_len_ > 0) own.resize(std::min(own.size(), static_cast<std::size_t>(statement_len_)));
    if (!f.outs.empty()) {
      static const std::regex bare(R"(\b(RETURN\s+NEXT)(\s*);)", std::regex::icase);
      own = std::regex_replace(own, bare, fmt::format("$1 {}$2;", kBareReturnNext));
    }
    PgQueryPlpgsqlParseResult checked = pg_query_parse_plpgsql(own.c_str());
    const std::string error = checked.error != nullptr ? checked.error->message : "";
    pg_query_free_plpgsql_parse_result(checked);
    if (error == "cannot use RETURN NEXT in a non-SETOF function" || error == "cannot use RETURN QUERY in a non-SETOF function") fail("42804", error, as_loc);
    if (!error.empty()) refuse(fmt::format("a plpgsql body PostgreSQL's plpgsql parser rejects ({})", error), as_loc);
    PlFunction pl = read_plpgsql_function(own);
    // A signature read in part (OUT parameters, SETOF, a type outside the subset) is not run.
    for (const std::vector<FunctionParam>* list : {&f.params, &f.outs}) {
      for (const FunctionParam& p : *list) {
        if (pl.refused.empty() && p.type.user_type.starts_with("unread")) pl.refused = fmt::format("a parameter of {}", p.type.user_type.substr(7));
      }
    }
    if (pl.refused.empty() && f.returns.user_type.starts_with("unread")) pl.refused = fmt::format("RETURNS {}", f.returns.user_type.substr(7));
    if (const auto misplaced = misplaced_return(f, pl.body)) fail("42804", *misplaced, as_loc);
    f.pl = std::make_shared<const PlFunction>(std::move(pl));
    return f;
  }
  std::vector<Statement> statements;
  try {
    statements = parse_sql(text);
  } catch (const SqlInputError& e) {
    if (e.sqlstate() == "0A000") refuse(fmt::format("in the body of function {}: {}", f.name, e.what()), as_loc);
    fail(e.sqlstate(), fmt::format("in the body of function {}: {}", f.name, e.what()), as_loc);
  }
  const auto* select = statements.size() == 1 ? std::get_if<Select>(&statements[0].body) : nullptr;
  const bool one_column = select != nullptr && select->targets.size() == 1 && !select->targets[0].star;
  const bool one_expression = one_column && select->table.empty() && select->from.empty() && select->with.empty() &&
                              select->set_op == nullptr && !select->where && select->order_by.empty() && !select->limit &&
                              !select->offset && !select->aggregate && !select->distinct;
  // A SET search_path: never inlined, its statements run by the runner with the call's path.
  if (one_expression && !f.returns_set && !f.search_path) {
    f.body = std::make_shared<Expr>(select->targets[0].expr);
    return f;
  }
  // A query over set-returning functions of its parameters (Que's que_validate_tags: an
  // aggregate over jsonb_array_elements): run as a query when called, its first row's value.
  const bool over_functions = one_column && !f.returns_set && select->table.empty() && select->with.empty() &&
                              select->set_op == nullptr && select->lock == RowLock::none && !statements[0].has_subquery &&
                              std::all_of(select->from.begin(), select->from.end(), [](const FromItem& i) {
                                return i.kind == FromItem::Kind::function || i.kind == FromItem::Kind::values;
                              });
  if (over_functions && !f.search_path) {
    auto query = std::make_shared<Expr>();
    query->kind = Expr::Kind::subquery;
    query->select = std::make_shared<Select>(*select);
    f.body = std::move(query);
    f.query_body = true;
    return f;
  }
  // Any other body (several statements, tables read or written, RETURNS SETOF): statements
  // the plpgsql runner runs as the server's SQL function executor does (sql_function_body).
  f.pl = std::make_shared<const PlFunction>(sql_function_body(f, statements, as_loc));
  f.plpgsql = true;
  return f;
}

// What CREATE FUNCTION checks of a LANGUAGE sql body's last statement (check_sql_fn_retval),
// then the body as statements: each in turn (a SELECT's rows dropped), a statement of its own
// (in READ COMMITTED a snapshot of its own: checked on PostgreSQL 15, a statement after a wait
// sees what committed during it), a column before a parameter of its name; the last one's
// rows the result: a set's all (RETURN QUERY), a value's first row (a SELECT fetches one row,
// INSERT, UPDATE or DELETE ... RETURNING runs to its end).
PlFunction Reader::sql_function_body(const CreateFunction& f, const std::vector<Statement>& statements, int loc) const {
  PlFunction pl;
  pl.sql_body = true;
  for (const int a : f.arg_order) {
    if (a < 0) continue;  // RETURNS TABLE's columns: not variables of a LANGUAGE sql body
    PlDatum d;
    d.name = f.params[static_cast<std::size_t>(a)].name;
    pl.datums.push_back(std::move(d));
  }
  const bool returns_void = f.returns.type == Type::text && f.returns.user_type == "void";
  // A statement's result columns: a SELECT's targets, DML's RETURNING (nullptr: no rows).
  const auto result_targets = [](const Statement& st) {
    const std::vector<Target>* targets = nullptr;
    std::visit([&](const auto& b) {
      if constexpr (requires { b.returning; }) targets = &b.returning;
      if constexpr (requires { b.targets; }) targets = &b.targets;
    }, st.body);
    return targets == nullptr || targets->empty() ? nullptr : targets;
  };
  if (!returns_void && (statements.empty() || result_targets(statements.back()) == nullptr)) {
    fail("42P13", fmt::format("return type mismatch in function declared to return {}", f.returns.user_type.empty() ? std::string(type_name(f.returns.type)) : f.returns.user_type), loc);
  }
  for (std::size_t i = 0; i < statements.size(); ++i) {
    const Statement& st = statements[i];
    const bool dml = std::holds_alternative<Insert>(st.body) || std::holds_alternative<Update>(st.body) || std::holds_alternative<Delete>(st.body);
    if (!dml && !std::holds_alternative<Select>(st.body)) {
      pl.refused = fmt::format("{} in a LANGUAGE sql function", st.tag());
      return pl;
    }
    PlStatement s;
    s.text = st.text;
    s.kind = dml ? PlStatement::Kind::sql : PlStatement::Kind::perform;
    if (i + 1 == statements.size() && !returns_void) {
      if (f.returns_set) {
        s.kind = PlStatement::Kind::return_query;
      } else {
        const std::vector<Target>* targets = result_targets(st);
        if (f.returns.type == Type::record || targets == nullptr || targets->size() != 1 || targets->front().star) {
          pl.refused = "a LANGUAGE sql function returning one row of a query's columns";
          return pl;
        }
        PlDatum result;  // the value: a variable of no name (sql_plpgsql.cc), the first row's
        pl.datums.push_back(result);
        s.kind = PlStatement::Kind::sql;
        s.target = static_cast<int>(pl.datums.size()) - 1;
        pl.body.push_back(std::move(s));
        s = PlStatement{};
        s.kind = PlStatement::Kind::stop;
        s.target = static_cast<int>(pl.datums.size()) - 1;
      }
    }
    pl.body.push_back(std::move(s));
  }
  return pl;
}

AlterTable Reader::trigger(const std::string& type, const json& body) {
  const int loc = statement_start_;
  AlterTable a;
  AlterCommand c;
  if (type == "DropStmt") {
    known(body, "DropStmt", {"objects", "removeType", "behavior", "missing_ok"}, loc);
    const json& objects = body.at("objects");
    if (objects.size() != 1) fail("42601", "syntax error", loc);
    std::vector<std::string> parts;
    for (const json* p : items(objects[0])) parts.push_back(str(*p));
    if (parts.size() < 2) fail("42601", "syntax error", loc);
    c.kind = AlterCommand::Kind::drop_trigger;
    c.name = parts.back();
    a.table = parts[parts.size() - 2];  // [schema.]table.trigger: the table (plan.h's Schema)
    c.missing_ok = a.if_exists = body.value("missing_ok", false);
    a.commands.push_back(std::move(c));
    return a;
  }
  known(body, "CreateTrigStmt", {"replace", "trigname", "relation", "funcname", "args", "row", "timing", "events", "columns", "whenClause"}, loc);
  // TRIGGER_TYPE_* of PostgreSQL's pg_trigger.h: BEFORE 2, INSTEAD 64 (AFTER is 0); INSERT 4,
  // DELETE 8, UPDATE 16, TRUNCATE 32.
  if ((body.value("timing", 0) & 64) != 0) refuse("an INSTEAD OF trigger", loc);
  const int events = body.value("events", 0);
  c.kind = AlterCommand::Kind::add_trigger;
  c.name = body.value("trigname", "");
  c.missing_ok = body.value("replace", false);
  c.constraint = fmt::format("{}", fmt::join(names(body.at("funcname")), "."));  // schema.function kept
  for (const auto& [bit, event] : {std::pair{4, "INSERT"}, {16, "UPDATE"}, {8, "DELETE"}, {32, "TRUNCATE"}}) {
    if ((events & bit) != 0) c.keys.emplace_back(event);
  }
  if (body.contains("whenClause")) c.when = std::make_shared<Expr>(expr(body.at("whenClause"), loc));
  c.before = (body.value("timing", 0) & 2) != 0;
  c.row = body.value("row", false);
  c.trigger_args = body.contains("args") && !body.at("args").empty();
  if (body.contains("columns")) {
    for (const json& col : body.at("columns")) c.of_columns.push_back(str(col));
  }
  a.table = relation(body.at("relation"), loc).first;
  a.commands.push_back(std::move(c));
  return a;
}

}  // namespace detail
}  // namespace lockstep::sql
