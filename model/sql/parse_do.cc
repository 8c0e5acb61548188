// model/sql/parse_do.cc: plpgsql bodies as the subset runs them, read by PostgreSQL's plpgsql
// parser (libpg_query's pg_query_parse_plpgsql): a DO block (plan.h's DoBlock, given the body
// as a function's), whose variables (DECLARE, INTO, FOUND) are refused by name with the DO's
// position; and a LANGUAGE plpgsql function's (plan.h's PlFunction: its variables, INTO,
// assignments, RETURN of a value, loops, EXIT and CONTINUE, EXCEPTION handlers, GET
// DIAGNOSTICS). Any other plpgsql statement or a RAISE option is refused by name. Part of model/sql/parse.h's parser.
#include <algorithm>
#include <cctype>
#include <memory>
#include <regex>

#include <pg_query.h>

#include "lockstep/model/sql/error_conditions.h"
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
  // A function's `RETURN NEXT var;`: libpg_query's tree keeps neither the expression nor the
  // variable (plpgsql reads a lone variable as retvarno, which its JSON leaves out), so the
  // variables are read from the source, in order; every one must be used (read_plpgsql_function).
  PlReader& bare_return_next(std::vector<std::string> names) {
    bare_return_next_ = std::move(names);
    return *this;
  }
  bool all_bare_return_next_read() const { return next_bare_ == bare_return_next_.size(); }

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
      std::vector<PlStatement> inner = body.contains("body") ? statements(body.at("body")) : std::vector<PlStatement>{};
      if (!body.contains("exceptions") && (!body.contains("label") || datums_ == nullptr)) {  // (a DO has no EXIT: its label is idle)
        for (PlStatement& st : inner) out.push_back(std::move(st));
        return;
      }
      if (body.contains("exceptions") && datums_ == nullptr) refuse_("EXCEPTION in a DO block");
      s.kind = PlStatement::Kind::block;
      s.label = body.value("label", "");
      s.body = std::move(inner);
      if (body.contains("exceptions")) {
        for (const json& e : body.at("exceptions").at("PLpgSQL_exception_block").at("exc_list")) {
          const json& handler = e.at("PLpgSQL_exception");
          PlHandler h;
          for (const json& c : handler.at("conditions")) {
            const std::string name = c.at("PLpgSQL_condition").value("condname", "");
            // WHEN SQLSTATE '55P03' arrives as the code itself
            const bool code = name.size() == 5 && std::all_of(name.begin(), name.end(), [](char ch) { return std::isdigit(static_cast<unsigned char>(ch)) || std::isupper(static_cast<unsigned char>(ch)); });
            const std::optional<std::string> state = code ? std::optional<std::string>(name) : condition_sqlstate(name);
            if (!state) refuse_(fmt::format("the exception condition {} {}", name, where_));
            h.sqlstates.push_back(*state);
          }
          if (handler.contains("action")) h.body = statements(handler.at("action"));
          s.handlers.push_back(std::move(h));
        }
      }
    } else if (type == "PLpgSQL_stmt_loop" || type == "PLpgSQL_stmt_while" || type == "PLpgSQL_stmt_fori" || type == "PLpgSQL_stmt_fors") {
      if (datums_ == nullptr) refuse_("a loop in a DO block (its variables)");
      s.kind = PlStatement::Kind::loop;
      s.label = body.value("label", "");
      if (type == "PLpgSQL_stmt_while") {
        s.loop = PlStatement::Loop::while_;
        s.text = expression(body.at("cond"));
      } else if (type == "PLpgSQL_stmt_fori") {
        s.loop = PlStatement::Loop::integers;
        s.reverse = body.value("reverse", false);
        s.target = loop_variable(body.at("var"));
        s.args = {expression(body.at("lower")), expression(body.at("upper")), body.contains("step") ? expression(body.at("step")) : std::string()};
      } else if (type == "PLpgSQL_stmt_fors") {
        s.loop = PlStatement::Loop::query;
        s.target = target(body.at("var"));
        s.text = expression(body.at("query"));
      }
      if (body.contains("body")) s.body = statements(body.at("body"));
    } else if (type == "PLpgSQL_stmt_foreach_a") {
      if (datums_ == nullptr) refuse_("a loop in a DO block (its variables)");
      if (body.value("slice", 0) != 0) refuse_(fmt::format("FOREACH ... SLICE {}", where_));
      s.kind = PlStatement::Kind::loop;
      s.loop = PlStatement::Loop::array;
      s.label = body.value("label", "");
      s.target = body.value("varno", -1);
      if (s.target < 0 || s.target >= static_cast<int>(datums_->size())) refuse_("a FOREACH target the plpgsql parser reads otherwise");
      s.text = expression(body.at("expr"));
      if (body.contains("body")) s.body = statements(body.at("body"));
    } else if (type == "PLpgSQL_stmt_exit") {
      if (datums_ == nullptr) refuse_("EXIT or CONTINUE in a DO block");
      s.kind = PlStatement::Kind::exit;
      s.is_exit = body.value("is_exit", false);
      s.label = body.value("label", "");
      if (body.contains("cond")) s.text = expression(body.at("cond"));
    } else if (type == "PLpgSQL_stmt_getdiag") {
      if (datums_ == nullptr) refuse_("GET DIAGNOSTICS in a DO block (its variables)");
      s.kind = PlStatement::Kind::diagnostics;
      const bool stacked = body.value("is_stacked", false);
      for (const json& d : body.at("diag_items")) {
        const json& item = d.at("PLpgSQL_diag_item");
        const std::string kind = item.value("kind", "");
        const int to = item.value("target", -1);
        const bool known = stacked ? kind == "RETURNED_SQLSTATE" || kind == "MESSAGE_TEXT" : kind == "ROW_COUNT";
        if (!known || to < 0 || to >= static_cast<int>(datums_->size())) {
          refuse_(fmt::format("GET {}DIAGNOSTICS ... = {} {}", stacked ? "STACKED " : "", kind, where_));
        }
        s.items.emplace_back(to, kind);
      }
    } else if (type == "PLpgSQL_stmt_execsql") {
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
      if ((body.value("into", false) || body.contains("params")) && datums_ == nullptr) refuse_("EXECUTE ... INTO or USING in a DO block");
      s.kind = PlStatement::Kind::execute;
      s.text = expression(body.at("query"));
      if (body.value("into", false)) {
        s.target = target(body.at("target"));
        s.strict = body.value("strict", false);
      }
      using_params(body, s);
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
      if (!body.contains("options") && !body.contains("condname") && !body.contains("message")) {
        refuse_(fmt::format("RAISE without a message (a handler's re-raise) {}", where_));
      }
      s.kind = PlStatement::Kind::raise;
      s.level = body.value("elog_level", 21);
      s.text = body.value("message", "");
      s.label = body.value("condname", "");
      for (const json& o : body.value("options", json::array())) {
        const json& option = o.at("PLpgSQL_raise_option");
        const int kind = option.value("opt_type", 0);
        if (kind > 3) refuse_(fmt::format("a RAISE option other than ERRCODE, MESSAGE, DETAIL and HINT {}", where_));
        s.items.emplace_back(kind, expression(option.at("expr")));
      }
      if (body.contains("params")) {
        for (const json& p : body.at("params")) s.args.push_back(expression(p));
      }
    } else if (type == "PLpgSQL_stmt_return") {
      if (body.contains("expr") && datums_ == nullptr) refuse_("RETURN of a value in a DO block");
      if (body.contains("retvarno")) refuse_(fmt::format("RETURN of a variable the plpgsql parser names by number {}", where_));
      s.kind = PlStatement::Kind::stop;
      if (body.contains("expr")) s.text = expression(body.at("expr"));
    } else if (type == "PLpgSQL_stmt_return_next" && datums_ != nullptr) {
      s.kind = PlStatement::Kind::return_next;
      if (body.contains("expr")) {
        s.text = expression(body.at("expr"));
        if (s.text == kBareReturnNext) s.text.clear(), s.target = PlStatement::kOutRow;
      } else if (body.contains("retvarno")) {
        s.target = body.value("retvarno", -1);
        if (s.target < 0 || s.target >= static_cast<int>(datums_->size())) refuse_(fmt::format("RETURN NEXT without a value {}", where_));
      } else if (next_bare_ < bare_return_next_.size()) {
        s.text = bare_return_next_[next_bare_++];  // RETURN NEXT var; (the tree drops the variable)
      } else {
        refuse_(fmt::format("RETURN NEXT without a value {}", where_));
      }
    } else if (type == "PLpgSQL_stmt_return_query" && datums_ != nullptr) {
      s.kind = PlStatement::Kind::return_query;
      s.dynamic = body.contains("dynquery");  // RETURN QUERY EXECUTE text [USING ...]
      s.text = expression(body.at(s.dynamic ? "dynquery" : "query"));
      using_params(body, s);
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
  // EXECUTE's USING expressions, the values of the text's $1, $2, ...
  void using_params(const json& body, PlStatement& s) {
    if (!body.contains("params")) return;
    for (const json& p : body.at("params")) s.args.push_back(expression(p));
  }

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

  // FOR i's variable: the datum the parser declared for it (by name and line; the first such
  // not yet taken by another loop), an integer named only inside the loop.
  int loop_variable(const json& v) {
    const json& var = v.at("PLpgSQL_var");
    const std::string name = var.value("refname", "");
    const int line = var.value("lineno", 0);
    for (std::size_t d = 0; d < datums_->size(); ++d) {
      PlDatum& p = (*datums_)[d];
      if (p.kind != PlDatum::Kind::var || p.name != name || p.line != line || p.loop_variable || !p.type.empty()) continue;
      p.type = "integer";
      p.loop_variable = true;
      return static_cast<int>(d);
    }
    refuse_("a FOR loop's variable the plpgsql parser reads otherwise");
    return -1;
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
  std::vector<std::string> bare_return_next_;
  std::size_t next_bare_ = 0;
};

// The variables of a function's `RETURN NEXT name;` statements, in the order of the text, of
// names its datums declare (plpgsql's lone-variable form). A comment or string holding such a
// statement makes the list longer than the tree's: the function is then refused, not misread.
std::vector<std::string> bare_return_next_variables(const std::string& text, const std::vector<PlDatum>& datums) {
  static const std::regex statement(R"(\bRETURN\s+NEXT\s+([A-Za-z_][A-Za-z0-9_]*)\s*;)", std::regex::icase);
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), statement); it != std::sregex_iterator(); ++it) {
    std::string name = (*it)[1].str();
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (std::any_of(datums.begin(), datums.end(), [&](const PlDatum& d) { return d.kind != PlDatum::Kind::field && d.name == name; })) out.push_back(name);
  }
  return out;
}

// The plpgsql parser's datums of a function (numbered as its varnos).
std::vector<PlDatum> read_datums(const json& list, const std::function<void(const std::string&)>& refuse) {
  std::vector<PlDatum> out;
  for (const json& item : list) {
    const auto node = item.begin();
    const json& body = node.value();
    PlDatum d;
    d.name = body.value("refname", "");
    d.line = body.value("lineno", 0);
    if (node.key() == "PLpgSQL_var") {
      if (body.contains("cursor_explicit_expr") || body.contains("promise")) refuse("a cursor variable in a plpgsql function");
      const bool handler_variable = d.name == "sqlstate" || d.name == "sqlerrm";  // an EXCEPTION's (constants)
      if ((body.value("isconst", false) && !handler_variable) || body.value("notnull", false)) {
        refuse("a CONSTANT or NOT NULL variable in a plpgsql function");
      }
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

// Whether the text has a DECLARE after its first BEGIN (words of either case; one in a string
// or a comment counts too).
bool declares_in_nested_block(const std::string& text) {
  std::string lower;
  for (const char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto word_at = [&](std::string_view w, std::size_t from) {
    for (std::size_t at = lower.find(w, from); at != std::string::npos; at = lower.find(w, at + 1)) {
      const auto inside = [&](std::size_t i) { return std::isalnum(static_cast<unsigned char>(lower[i])) != 0 || lower[i] == '_'; };
      if ((at == 0 || !inside(at - 1)) && (at + w.size() >= lower.size() || !inside(at + w.size()))) return at;
    }
    return std::string::npos;
  };
  const std::size_t begin = word_at("begin", 0);
  return begin != std::string::npos && word_at("declare", begin) != std::string::npos;
}

}  // namespace

PlFunction read_plpgsql_function(const std::string& create_function) {
  PlFunction f;
  refuse_trees_too_deep_to_parse(create_function, true);  // (its body's statements' trees are written out too)
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
    PlReader reader(refuse, &f.datums);
    f.body = reader.bare_return_next(bare_return_next_variables(create_function, f.datums)).statements(json::array({fn.at("action")}));
    if (!reader.all_bare_return_next_read()) refuse("RETURN NEXT of a variable the plpgsql parser reads otherwise");
    // Each statement and expression read now, on the caller's stack (a call runs on a fiber's,
    // where PostgreSQL's parser would recurse as deep as the text nests): what the subset
    // refuses in them (nesting past Reader::kMaxDepth) refuses the function's calls.
    bool loops = false;
    const std::function<void(const std::vector<PlStatement>&)> check = [&](const std::vector<PlStatement>& list) {
      using K = PlStatement::Kind;
      for (const PlStatement& st : list) {
        const bool query = st.kind == K::sql || st.kind == K::perform || (st.kind == K::loop && st.loop == PlStatement::Loop::query);
        if (query) parse_sql(st.text);
        if ((st.kind == K::assign || st.kind == K::stop || st.kind == K::execute || st.kind == K::exit || st.kind == K::loop) && !query && !st.text.empty()) {
          parse_sql("SELECT " + st.text);
        }
        for (const std::string& a : st.args) {
          if (!a.empty()) parse_sql("SELECT " + a);
        }
        for (const PlBranch& b : st.branches) {
          if (!b.condition.empty()) parse_sql("SELECT " + b.condition);
          check(b.body);
        }
        loops = loops || st.kind == K::loop;
        check(st.body);
        for (const PlHandler& h : st.handlers) check(h.body);
      }
    };
    check(f.body);
    // A nested block's DECLAREs are set when the call starts (PlRun), not each time the block
    // is entered: in a loop that would keep a value the server sets again.
    if (loops && declares_in_nested_block(create_function)) refuse("DECLARE in a nested block of a plpgsql function with a loop");
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
