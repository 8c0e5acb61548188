// model/sql/parse_do.cc: the reader's DO (plan.h's DoBlock): the body is read by PostgreSQL's
// plpgsql parser (libpg_query's pg_query_parse_plpgsql, given the body as a function's), and
// its tree kept in the statements the subset runs; any other plpgsql statement, a variable
// (DECLARE, INTO, FOUND), an EXCEPTION handler or a RAISE option is refused by name, with the
// DO's position. Part of model/sql/parse.h's parser.
#include <cctype>
#include <memory>

#include <pg_query.h>

#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql {
namespace detail {
namespace {

// The plpgsql tree's statements as plan.h's PlStatement; `refuse` names what is not run.
class PlReader {
 public:
  explicit PlReader(const std::function<void(const std::string&)>& refuse) : refuse_(refuse) {}

  std::vector<PlStatement> statements(const json& list) {
    std::vector<PlStatement> out;
    for (const json& item : list) statement(item, out);
    return out;
  }

 private:
  void statement(const json& item, std::vector<PlStatement>& out) {
    // (items().begin()'s proxy is a temporary that *begin() does not outlive: the iterator's own
    // key and value are the node's)
    const auto node = item.begin();
    const std::string& type = node.key();
    const json& body = node.value();
    PlStatement s;
    if (type == "PLpgSQL_stmt_block") {
      if (body.contains("exceptions")) refuse_("EXCEPTION in a DO block");
      if (body.contains("body")) {
        for (PlStatement& inner : statements(body.at("body"))) out.push_back(std::move(inner));
      }
      return;
    }
    if (type == "PLpgSQL_stmt_execsql") {
      if (body.value("into", false)) refuse_("INTO in a DO block (its variables)");
      s.text = expression(body.at("sqlstmt"));
    } else if (type == "PLpgSQL_stmt_perform") {
      s.kind = PlStatement::Kind::perform;
      s.text = expression(body.at("expr"));
    } else if (type == "PLpgSQL_stmt_dynexecute") {
      if (body.value("into", false) || body.contains("params")) refuse_("EXECUTE ... INTO or USING in a DO block");
      s.kind = PlStatement::Kind::execute;
      s.text = expression(body.at("query"));
    } else if (type == "PLpgSQL_stmt_if") {
      s.kind = PlStatement::Kind::branch;
      s.branches.push_back({expression(body.at("cond")), body.contains("then_body") ? statements(body.at("then_body")) : std::vector<PlStatement>{}});
      if (body.contains("elsif_list")) {
        for (const json& e : body.at("elsif_list")) {
          const json& elsif = e.at("PLpgSQL_if_elsif");
          s.branches.push_back({expression(elsif.at("cond")), elsif.contains("stmts") ? statements(elsif.at("stmts")) : std::vector<PlStatement>{}});
        }
      }
      if (body.contains("else_body")) s.branches.push_back({"", statements(body.at("else_body"))});
    } else if (type == "PLpgSQL_stmt_raise") {
      if (body.contains("options") || body.contains("condname") || !body.contains("message")) {
        refuse_("RAISE with USING, a condition name or no message in a DO block");
      }
      s.kind = PlStatement::Kind::raise;
      s.level = body.value("elog_level", 21);
      s.text = body.value("message", "");
      if (body.contains("params")) {
        for (const json& p : body.at("params")) s.args.push_back(expression(p));
      }
    } else if (type == "PLpgSQL_stmt_return") {
      if (body.contains("expr")) refuse_("RETURN of a value in a DO block");
      s.kind = PlStatement::Kind::stop;
    } else {
      std::string words = type.starts_with("PLpgSQL_stmt_") ? type.substr(13) : type;  // fors: a FOR loop over a query
      refuse_(fmt::format("the plpgsql statement {} in a DO block", words));
    }
    out.push_back(std::move(s));
  }

  // An expression's or statement's text; one that names FOUND (the only variable) is refused.
  std::string expression(const json& e) {
    const std::string query = e.at("PLpgSQL_expr").value("query", "");
    std::string lower;
    for (const char c : query) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::size_t at = lower.find("found"); at != std::string::npos; at = lower.find("found", at + 1)) {
      const auto word = [&](std::size_t i) { return std::isalnum(static_cast<unsigned char>(lower[i])) != 0 || lower[i] == '_'; };
      if ((at == 0 || !word(at - 1)) && (at + 5 >= lower.size() || !word(at + 5))) refuse_("FOUND in a DO block");
    }
    return query;
  }

  const std::function<void(const std::string&)>& refuse_;
};

}  // namespace

DoBlock Reader::do_block(const json& body) {
  const int loc = statement_start_;
  known(body, "DoStmt", {"args"}, loc);
  std::string text, language = "plpgsql";
  for (const json& a : body.at("args")) {
    const json& d = *node(a).second;
    const std::string option = d.value("defname", "");
    if (option == "as") text = str(d.at("arg"));
    if (option == "language") language = str(d.at("arg"));
  }
  if (language != "plpgsql") refuse(fmt::format("DO LANGUAGE {}", language), loc);
  // The body as a function's, which the plpgsql parser reads (a DO block is compiled so).
  const std::string quote = "$lockstep_do$";
  if (text.find(quote) != std::string::npos) refuse("a DO block that holds $lockstep_do$", loc);
  const std::string function = fmt::format("CREATE FUNCTION lockstep_do() RETURNS void LANGUAGE plpgsql AS {}{}{}", quote, text, quote);
  PgQueryPlpgsqlParseResult parsed = pg_query_parse_plpgsql(function.c_str());
  const std::string error = parsed.error != nullptr ? parsed.error->message : "";
  json tree = error.empty() && parsed.plpgsql_funcs != nullptr ? json::parse(parsed.plpgsql_funcs, nullptr, false) : json();
  pg_query_free_plpgsql_parse_result(parsed);
  if (!error.empty()) refuse(fmt::format("a DO block PostgreSQL's plpgsql parser rejects ({})", error), loc);
  if (!tree.is_array() || tree.size() != 1 || !tree[0].contains("PLpgSQL_function")) refuse("a DO block the plpgsql parser reads otherwise", loc);
  const json& f = tree[0].at("PLpgSQL_function");
  if (f.contains("datums") && f.at("datums").size() > 1) refuse("variables in a DO block (DECLARE, a loop's)", loc);
  const std::function<void(const std::string&)> refuse_here = [&](const std::string& what) { refuse(what, loc); };
  DoBlock d;
  const json& action = f.at("action");
  d.body = PlReader(refuse_here).statements(json::array({action}));
  return d;
}

}  // namespace detail
}  // namespace lockstep::sql
