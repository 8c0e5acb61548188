// model/sql/parse_do.cc: plpgsql bodies as the subset runs them, read by PostgreSQL's plpgsql
// parser (libpg_query's pg_query_parse_plpgsql): a DO block (plan.h's DoBlock, given the body
// as a function's), whose variables (DECLARE, INTO, FOUND) are refused by name with the DO's
// position; and a LANGUAGE plpgsql function's (plan.h's PlFunction: its variables, INTO,
// assignments, RETURN of a value). Any other plpgsql statement, an EXCEPTION handler or a RAISE
// option is refused by name. Part of model/sql/parse.h's parser.
#include <algorithm>
#include <cctype>
#include <memory>

#include <pg_query.h>

#include "lockstep/model/sql/parse.h"
#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql {
namespace detail {
namespace {

// The plpgsql tree's statements as plan.h's PlStatement; `refuse` names what is not run.
class PlReader {
 public:
  // `function`: a function's body (variables, INTO, RETURN of a value) into `datums`; else a DO's.
  explicit PlReader(const std::function<void(const std::string&)>& refuse, std::vector<PlDatum>* datums = nullptr)
      : refuse_(refuse), datums_(datums), where_(datums != nullptr ? "in a plpgsql function" : "in a DO block") {}

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
      if (body.contains("exceptions")) refuse_(fmt::format("EXCEPTION {}", where_));
      if (body.contains("body")) {
        for (PlStatement& inner : statements(body.at("body"))) out.push_back(std::move(inner));
      }
      return;
    }
    if (type == "PLpgSQL_stmt_execsql") {
      if (body.value("into", false)) {
        if (datums_ == nullptr) refuse_("INTO in a DO block (its variables)");
        s.target = target(body.at("target"));
        s.strict = body.value("strict", false);
      }
      s.text = expression(body.at("sqlstmt"));
    } else if (type == "PLpgSQL_stmt_perform") {
      s.kind = PlStatement::Kind::perform;
      s.text = expression(body.at("expr"));
    } else if (type == "PLpgSQL_stmt_dynexecute") {
      if (body.value("into", false) || body.contains("params")) refuse_(fmt::format("EXECUTE ... INTO or USING {}", where_));
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
        refuse_(fmt::format("RAISE with USING, a condition name or no message {}", where_));
      }
      s.kind = PlStatement::Kind::raise;
      s.level = body.value("elog_level", 21);
      s.text = body.value("message", "");
      if (body.contains("params")) {
        for (const json& p : body.at("params")) s.args.push_back(expression(p));
      }
    } else if (type == "PLpgSQL_stmt_return") {
      if (body.contains("expr") && datums_ == nullptr) refuse_("RETURN of a value in a DO block");
      if (body.contains("retvarno")) refuse_(fmt::format("RETURN of a variable the plpgsql parser names by number {}", where_));
      s.kind = PlStatement::Kind::stop;
      if (body.contains("expr")) s.text = expression(body.at("expr"));
    } else if (type == "PLpgSQL_stmt_assign" && datums_ != nullptr) {
      s.kind = PlStatement::Kind::assign;
      s.target = body.value("varno", 0);
      // "n := n + 1" (or "n = ..."): the value is what follows the first := or =.
      const std::string text = expression(body.at("expr"));
      std::size_t at = text.find(":=");
      std::size_t skip = 2;
      if (at == std::string::npos) {
        at = text.find('=');
        skip = 1;
      }
      if (at == std::string::npos || s.target < 0 || s.target >= static_cast<int>(datums_->size())) refuse_("an assignment the plpgsql parser reads otherwise");
      s.text = text.substr(at + skip);
    } else {
      std::string words = type.starts_with("PLpgSQL_stmt_") ? type.substr(13) : type;  // fors: a FOR loop over a query
      refuse_(fmt::format("the plpgsql statement {} {}", words, where_));
    }
    out.push_back(std::move(s));
  }

  // INTO's target: a row of variables (a new datum), or a record or variable by number.
  int target(const json& t) {
    const auto node = t.begin();
    const json& body = node.value();
    if (node.key() == "PLpgSQL_row") {
      PlDatum row;
      row.kind = PlDatum::Kind::row;
      for (const json& f : body.value("fields", json::array())) row.fields.push_back(f.value("varno", 0));
      if (row.fields.empty() || std::any_of(row.fields.begin(), row.fields.end(), [&](int d) { return d < 0 || d >= static_cast<int>(datums_->size()); })) {
        refuse_("an INTO target the plpgsql parser reads otherwise");
      }
      datums_->push_back(std::move(row));
      return static_cast<int>(datums_->size()) - 1;
    }
    const int dno = body.value("dno", 0);
    if (dno < 0 || dno >= static_cast<int>(datums_->size())) refuse_("an INTO target the plpgsql parser reads otherwise");
    return dno;
  }

  // An expression's or statement's text; in a DO block, one that names FOUND (the only
  // variable) is refused.
  std::string expression(const json& e) {
    const std::string query = e.at("PLpgSQL_expr").value("query", "");
    if (datums_ != nullptr) return query;
    std::string lower;
    for (const char c : query) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (std::size_t at = lower.find("found"); at != std::string::npos; at = lower.find("found", at + 1)) {
      const auto word = [&](std::size_t i) { return std::isalnum(static_cast<unsigned char>(lower[i])) != 0 || lower[i] == '_'; };
      if ((at == 0 || !word(at - 1)) && (at + 5 >= lower.size() || !word(at + 5))) refuse_("FOUND in a DO block");
    }
    return query;
  }

  const std::function<void(const std::string&)>& refuse_;
  std::vector<PlDatum>* datums_;
  std::string where_;
};

// The plpgsql parser's datums of a function (numbered as its varnos).
std::vector<PlDatum> read_datums(const json& list, const std::function<void(const std::string&)>& refuse) {
  std::vector<PlDatum> out;
  for (const json& item : list) {
    const auto node = item.begin();
    const json& body = node.value();
    PlDatum d;
    d.name = body.value("refname", "");
    if (node.key() == "PLpgSQL_var") {
      if (body.contains("cursor_explicit_expr") || body.contains("promise")) refuse("a cursor variable in a plpgsql function");
      if (body.value("isconst", false) || body.value("notnull", false)) refuse("a CONSTANT or NOT NULL variable in a plpgsql function");
      const json& type = body.at("datatype").at("PLpgSQL_type");
      d.type = type.value("typname", "");
      while (!d.type.empty() && d.type.back() == ' ') d.type.pop_back();
      if (d.type == "UNKNOWN") d.type.clear();  // a parameter's or FOUND's: the function's own
      if (body.contains("default_val")) d.default_value = body.at("default_val").at("PLpgSQL_expr").value("query", "");
    } else if (node.key() == "PLpgSQL_rec") {
      d.kind = PlDatum::Kind::record;
    } else if (node.key() == "PLpgSQL_recfield") {
      d.kind = PlDatum::Kind::field;
      d.name = body.value("fieldname", "");
      d.parent = body.value("recparentno", 0);
    } else if (node.key() == "PLpgSQL_row") {
      d.kind = PlDatum::Kind::row;
      for (const json& f : body.value("fields", json::array())) d.fields.push_back(f.value("varno", 0));
    } else {
      refuse(fmt::format("the plpgsql variable kind {}", node.key()));
    }
    out.push_back(std::move(d));
  }
  for (const PlDatum& d : out) {  // a field's record, a row's variables: datums of the list
    const auto inside = [&](int i) { return i >= 0 && i < static_cast<int>(out.size()); };
    if ((d.kind == PlDatum::Kind::field && !inside(d.parent)) || !std::all_of(d.fields.begin(), d.fields.end(), inside)) {
      refuse("a plpgsql variable the plpgsql parser reads otherwise");
    }
  }
  return out;
}

}  // namespace

PlFunction read_plpgsql_function(const std::string& create_function) {
  PlFunction f;
  PgQueryPlpgsqlParseResult parsed = pg_query_parse_plpgsql(create_function.c_str());
  const std::string error = parsed.error != nullptr ? parsed.error->message : "";
  json tree = error.empty() && parsed.plpgsql_funcs != nullptr ? json::parse(parsed.plpgsql_funcs, nullptr, false) : json();
  pg_query_free_plpgsql_parse_result(parsed);
  if (!error.empty()) {
    f.refused = fmt::format("a plpgsql body PostgreSQL's plpgsql parser rejects ({})", error);
    return f;
  }
  struct Refused {
    std::string what;
  };
  const std::function<void(const std::string&)> refuse = [](const std::string& what) { throw Refused{what}; };
  try {
    if (!tree.is_array() || tree.size() != 1 || !tree[0].contains("PLpgSQL_function")) refuse("a plpgsql body the plpgsql parser reads otherwise");
    const json& fn = tree[0].at("PLpgSQL_function");
    if (fn.contains("datums")) f.datums = read_datums(fn.at("datums"), refuse);
    f.body = PlReader(refuse, &f.datums).statements(json::array({fn.at("action")}));
    // Each statement and expression read now, on the caller's stack (a call runs on a fiber's,
    // where PostgreSQL's parser would recurse as deep as the text nests): what the subset
    // refuses in them (nesting past Reader::kMaxDepth) refuses the function's calls.
    const std::function<void(const std::vector<PlStatement>&)> check = [&](const std::vector<PlStatement>& list) {
      for (const PlStatement& st : list) {
        if (st.kind == PlStatement::Kind::sql || st.kind == PlStatement::Kind::perform) parse_sql(st.text);
        if ((st.kind == PlStatement::Kind::assign || st.kind == PlStatement::Kind::stop || st.kind == PlStatement::Kind::execute) && !st.text.empty()) {
          parse_sql("SELECT " + st.text);
        }
        for (const std::string& a : st.args) parse_sql("SELECT " + a);
        for (const PlBranch& b : st.branches) {
          if (!b.condition.empty()) parse_sql("SELECT " + b.condition);
          check(b.body);
        }
      }
    };
    check(f.body);
    for (const PlDatum& d : f.datums) {
      if (!d.default_value.empty()) parse_sql("SELECT " + d.default_value);
    }
  } catch (const SqlInputError& e) {
    f = PlFunction{};
    const std::string what = e.what();  // the construct, without "is not in lockstep's SQL subset ..." (its position is the statement's)
    const std::size_t cut = what.find(" is not in lockstep's SQL subset");
    f.refused = e.sqlstate() == "0A000" ? what.substr(0, cut) : fmt::format("a statement PostgreSQL's parser reads otherwise ({})", what);
  } catch (const Refused& r) {
    f = PlFunction{};
    f.refused = r.what;
  } catch (const json::exception&) {  // a tree of another shape than read here
    f = PlFunction{};
    f.refused = "a plpgsql body the plpgsql parser reads otherwise";
  }
  return f;
}

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
