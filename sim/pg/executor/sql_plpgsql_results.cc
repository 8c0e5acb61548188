// sim/pg/executor/sql_plpgsql_results.cc: the parts of running a LANGUAGE plpgsql function that take no
// step (sim/pg/executor/sql_plpgsql.h): RAISE's message text, a set-returning function's rows (RETURN
// NEXT, RETURN QUERY) checked against its result type as pl_exec.c checks them, EXECUTE's text
// and USING parameters, a record variable's field assigned, a variable's declared type.
#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/error_conditions.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/sim/pg/executor/sql_names.h"
#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/executor/sql_ssi.h"
#include "lockstep/sim/pg/heap/sql_rows.h"

namespace lockstep::sim::pg {
namespace {

using sql::SqlError;
using sql::Type;
using sql::Value;

// The function's result columns: its row type's (a table's or a composite type's), or one of
// its scalar type.
std::vector<sql::ColumnDef> set_result_columns(const sql::CreateFunction& f, int& row_type) {
  row_type = -1;
  if (!f.outs.empty()) {  // RETURNS TABLE's columns
    std::vector<sql::ColumnDef> out;
    for (const sql::FunctionParam& p : f.outs) out.push_back(p.type);
    return out;
  }
  row_type = f.returns.type == Type::enum_ ? sql::row_type_index(f.returns.user_type) : -1;
  if (row_type >= 0) return sql::record_definition(row_type).columns;
  return {f.returns};
}

bool set_same_type(const Value& v, const sql::ColumnDef& c) {
  if (v.is_null()) return true;
  const Type t = v.type() == Type::unknown ? Type::text : v.type();
  if (t != c.type) return false;
  if (t == Type::enum_) return sql::enum_type_name(v) == c.user_type;
  if (t == Type::array) return v.array_element() == c.element;
  return true;
}

// RAISE's format: each % is the next argument's text (NULL prints <NULL>), %% a %.
std::string plr_raise_text(const sql::PlStatement& s, const std::function<std::optional<std::string>(const std::string&)>& argument) {
  std::string out;
  std::size_t next = 0;
  for (std::size_t i = 0; i < s.text.size(); ++i) {
    if (s.text[i] != '%') {
      out += s.text[i];
    } else if (i + 1 < s.text.size() && s.text[i + 1] == '%') {
      out += '%';
      ++i;
    } else if (next < s.args.size()) {
      const std::optional<std::string> v = argument(s.args[next++]);
      out += v ? *v : "<NULL>";
    }
  }
  return out;
}

}  // namespace

RaisedError raise_error(const sql::PlStatement& s, const std::function<std::optional<std::string>(const std::string&)>& argument) {
  // A SQLSTATE of five digits or capitals, else a condition's name (plpgsql_recognize_err_condition).
  auto code_of = [](const std::string& name, bool sqlstate_allowed) {
    if (sqlstate_allowed && name.size() == 5 && name.find_first_not_of("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") == std::string::npos) return name;
    const std::optional<std::string> code = name == "others" ? std::nullopt : sql::condition_sqlstate(name);
    if (!code) {
      throw SqlError("0A000", fmt::format("RAISE of the condition {} (not in the list of condition names lockstep keeps: docs/sql.md) is not in "
                                          "lockstep's SQL subset", name));
    }
    return *code;
  };
  RaisedError out;
  std::string condname = s.label;
  if (!condname.empty()) out.sqlstate = code_of(condname, true);
  std::optional<std::string> message;
  if (!s.text.empty()) message = plr_raise_text(s, argument);  // (RAISE '' reads as no message here)
  static constexpr std::string_view kOption[] = {"ERRCODE", "MESSAGE", "DETAIL", "HINT"};
  std::array<bool, 4> seen{};
  for (const auto& [kind, expr] : s.items) {
    const auto k = static_cast<std::size_t>(kind);
    const bool given = seen[k] || (k == 0 && !out.sqlstate.empty()) || (k == 1 && message);
    if (given) throw SqlError("42601", fmt::format("RAISE option already specified: {}", kOption[k]));
    seen[k] = true;
    const std::optional<std::string> v = argument(expr);
    if (!v) throw SqlError("22004", "RAISE statement option cannot be null");
    if (k == 0) {
      out.sqlstate = code_of(*v, true);
      condname = *v;
    } else if (k == 1) {
      message = *v;
    }
  }
  if (out.sqlstate.empty()) out.sqlstate = s.level >= 21 ? "P0001" : "00000";
  out.message = message ? *message : !condname.empty() ? condname : out.sqlstate;
  return out;
}


std::vector<Value> returned_set_row(const sql::CreateFunction& f, const Value& v) {
  if (!f.outs.empty()) throw SqlError("42804", "RETURN NEXT cannot have a parameter in function with OUT parameters");
  int row_type = -1;
  const std::vector<sql::ColumnDef> columns = set_result_columns(f, row_type);
  if (row_type < 0) return {assigned(v, f.returns, f.name)};
  if (v.type() != Type::record || (!v.is_null() && v.record_type() != row_type)) throw SqlError("42804", "wrong record type supplied in RETURN NEXT");
  if (v.is_null()) return std::vector<Value>(columns.size(), Value::null());
  return sql::record_fields(v);
}

void append_query_rows(const sql::CreateFunction& f, std::vector<std::vector<Value>> rows, std::vector<std::vector<Value>>& into, const char* mismatch) {
  int row_type = -1;
  const std::vector<sql::ColumnDef> columns = set_result_columns(f, row_type);
  for (std::vector<Value>& row : rows) {
    bool matches = row.size() == columns.size();
    for (std::size_t i = 0; matches && i < row.size(); ++i) matches = set_same_type(row[i], columns[i]);
    if (!matches) throw SqlError("42804", mismatch);
    into.push_back(std::move(row));
  }
}

Value with_field(const Value& record, std::string_view record_name, const std::string& field, const Value& v) {
  const sql::CreateTable& def = sql::record_definition(record.record_type());
  std::vector<std::optional<std::string>> texts = record.is_null() ? std::vector<std::optional<std::string>>(def.columns.size())
                                                                   : sql::record_field_texts(record.text_output());
  const auto column = std::find_if(def.columns.begin(), def.columns.end(), [&](const sql::ColumnDef& c) { return c.name == field; });
  if (column == def.columns.end() || texts.size() != def.columns.size()) {
    throw SqlError("42703", fmt::format("record \"{}\" has no field \"{}\"", record_name, field));
  }
  sql::ColumnDef c = *column;
  c.not_null = false;
  const Value cast = assigned(v, c, def.table);
  texts[static_cast<std::size_t>(column - def.columns.begin())] = cast.is_null() ? std::nullopt : std::optional<std::string>(cast.text_output());
  return Value::record(record.record_type(), sql::record_output(texts));
}

std::optional<sql::ColumnDef> variable_type(const std::string& text) {
  try {
    const auto plans = cached_plans(fmt::format("CREATE TABLE lockstep_plpgsql_variable (v {})", text));
    const auto* t = plans->size() == 1 ? std::get_if<sql::CreateTable>(&plans->front().body) : nullptr;
    if (t == nullptr || t->columns.size() != 1) return std::nullopt;
    sql::ColumnDef c = t->columns[0];
    c.not_null = false;
    return c;
  } catch (const SqlError&) {
    return std::nullopt;
  }
}

int out_row_type(const sql::CreateFunction& f, const Server& server) {
  std::vector<sql::ColumnDef> columns;
  for (const sql::FunctionParam& p : f.outs) columns.push_back(p.type);  // named as the parameter (parse_functions.cc)
  return server.anonymous_row_type(columns);
}

PlRange for_range(const Value& lower, const Value& upper, const Value& by) {
  if (lower.is_null()) throw SqlError("22004", "lower bound of FOR loop cannot be null");
  if (upper.is_null()) throw SqlError("22004", "upper bound of FOR loop cannot be null");
  if (by.is_null()) throw SqlError("22004", "BY value of FOR loop cannot be null");
  const std::int64_t step = sql::cast(by, Type::int4).as_integer();
  if (step <= 0) throw SqlError("22023", "BY value of FOR loop must be greater than zero");
  return {sql::cast(lower, Type::int4).as_integer(), sql::cast(upper, Type::int4).as_integer(), step};
}

std::vector<Value> foreach_elements(const Value& array) {
  if (array.is_null()) throw SqlError("22004", "FOREACH expression must not be null");
  if (array.type() != Type::array) {
    throw SqlError("42804", fmt::format("FOREACH expression must yield an array, not type {}", sql::type_name(array.type())));
  }
  return sql::array_elements(array);
}

std::optional<std::int64_t> constant_limit(const sql::Select& sel) {
  if (!sel.limit || sel.offset || sel.limit->kind != sql::Expr::Kind::constant || !sql::is_integer(sel.limit->value.type())) return std::nullopt;
  return sel.limit->value.is_null() ? std::nullopt : std::optional{sel.limit->value.as_integer()};
}

namespace {

bool plr_may_give_rows(const sql::Expr& e) {
  if (e.kind == sql::Expr::Kind::constant || sql::is_sublink(e)) return false;  // folded; a sublink's rows are its own
  if ((e.kind == sql::Expr::Kind::func && sql::select_list_set_returning(e.name)) || e.kind == sql::Expr::Kind::user_func) return true;
  return std::any_of(e.args.begin(), e.args.end(), plr_may_give_rows);
}

}  // namespace

bool at_most_one_row(const sql::Select& sel) {
  if (const auto limit = constant_limit(sel); limit && *limit <= 1) return true;
  if (sel.set_op || !sel.table.empty() || !sel.from.empty()) return false;
  return std::none_of(sel.targets.begin(), sel.targets.end(), [](const sql::Target& t) { return plr_may_give_rows(t.expr); });
}

bool key_lookup(const sql::Select& sel, Server& server, const sql::EvalContext* variables) {
  const SqlTable* t = sel.table.empty() || !sel.from.empty() || sel.set_op || !sel.where ? nullptr : server.sql_table(sel.table);
  if (t == nullptr || t->key.empty()) return false;
  std::vector<int> pinned;
  for (const sql::Expr* q : sql_primary_key_quals(*t, sel.alias, *sel.where, variables)) {
    if (q->kind != sql::Expr::Kind::op || q->name != "=") continue;
    for (const sql::Expr& a : q->args) {
      if (a.kind == sql::Expr::Kind::column && (variables == nullptr || !variables->names_variable(a))) pinned.push_back(t->column(a.name));
    }
  }
  return std::all_of(t->key.begin(), t->key.end(), [&](int c) { return std::find(pinned.begin(), pinned.end(), c) != pinned.end(); });
}

bool takes_steps(const sql::Statement& st, Server& server) {
  return st.calls_stepping_function || std::any_of(st.user_calls.begin(), st.user_calls.end(), [&](const std::string& name) {
           return std::ranges::any_of(server.sql_functions(name), [](const sql::CreateFunction* f) { return f->pl != nullptr; });  // (any overload)
         });
}

namespace {

// Whether each statement and expression of a body names no table and calls no created function
// that may read one (`depth` bounds the search).
bool pl_reads_nothing(const std::vector<sql::PlStatement>& body, Server& server, int depth) {
  const auto reads = [&](const std::string& text, bool statement) {
    if (text.empty()) return false;
    std::shared_ptr<const std::vector<sql::Statement>> plans;
    try {
      plans = cached_plans(statement ? text : "SELECT " + text);
    } catch (const sql::SqlError&) {
      return true;  // its error, or refusal, is the call's where it runs
    }
    for (const sql::Statement& st : *plans) {
      bool named = false;  // (a lock call is a step of the scan, as one in its WHERE)
      each_table_named(st, [&](const std::string& name) { named = named || server.sql_table(name) != nullptr; });
      for (const std::string& called : st.user_calls) {
        for (const sql::CreateFunction* g : server.sql_functions(called)) {  // (any overload)
          named = named || (g->pl != nullptr && (depth == 0 || !g->non_volatile || !pl_reads_nothing(g->pl->body, server, depth - 1)));
        }
      }
      if (named) return true;
    }
    return false;
  };
  using K = sql::PlStatement::Kind;
  return std::none_of(body.begin(), body.end(), [&](const sql::PlStatement& s) {
    if (s.kind == K::execute || s.dynamic || !s.handlers.empty()) return true;  // a text built as it runs; a subtransaction
    const bool statement = s.kind == K::sql || s.kind == K::perform || s.kind == K::return_query || (s.kind == K::loop && s.loop == sql::PlStatement::Loop::query);
    if (reads(s.text, statement)) return true;
    if (std::any_of(s.args.begin(), s.args.end(), [&](const std::string& a) { return reads(a, false); })) return true;
    if (std::any_of(s.items.begin(), s.items.end(), [&](const auto& item) { return s.kind == K::raise && reads(item.second, false); })) return true;
    if (std::any_of(s.branches.begin(), s.branches.end(), [&](const sql::PlBranch& b) { return reads(b.condition, false) || !pl_reads_nothing(b.body, server, depth); })) return true;
    return !pl_reads_nothing(s.body, server, depth);
  });
}

}  // namespace

bool reads_nothing_per_row(const sql::CreateFunction& f, Server& server) {
  constexpr int kCalleeDepth = 4;  // created functions it calls, and theirs
  return f.non_volatile && f.pl != nullptr && pl_reads_nothing(f.pl->body, server, kCalleeDepth);
}

std::shared_ptr<const std::vector<sql::Statement>> execute_plans(const Value& text) {
  if (text.is_null()) throw SqlError("22004", "query string argument of EXECUTE is null");
  const std::string sql_text = sql::cast(text, Type::text).as_text();
  // Parsed here, on the session's fiber stack, where a text nesting thousands of levels deep
  // would overflow PostgreSQL's parser's recursion: a long one is refused.
  if (sql_text.size() > 2048) {
    throw SqlError("0A000", "EXECUTE of a text longer than 2048 bytes in a plpgsql function is not in lockstep's SQL subset (docs/sql.md)");
  }
  return cached_plans(sql_text);
}

Value PlUsingParams::column(const sql::Expr& ref) { throw sql::missing_column_error(ref); }

Value PlUsingParams::param(int number) {
  if (number < 1 || static_cast<std::size_t>(number) > values_.size()) throw SqlError("42P02", fmt::format("there is no parameter ${}", number));
  return values_[static_cast<std::size_t>(number) - 1];
}

// A dynamic statement's calls and subqueries are its own run's: never asked of its parameters.
Value PlUsingParams::call(const sql::Expr&, const std::vector<Value>&) {
  LOCKSTEP_INVARIANT(false, "EXECUTE's parameters asked to call a function");
  return Value::null();
}

Value PlUsingParams::subquery(const sql::Expr&) {
  LOCKSTEP_INVARIANT(false, "EXECUTE's parameters asked for a subquery");
  return Value::null();
}

void check_function_volatility(const sql::CreateFunction& f, const sql::Statement& st) {
  if (!f.non_volatile) return;
  const bool inlined = f.pl->sql_body && f.returns_set && !f.strict && f.pl->body.size() == 1 && std::holds_alternative<sql::Select>(st.body);
  if (const std::string command = read_only_command(st); !inlined && !command.empty()) {
    throw SqlError("0A000", fmt::format("{} is not allowed in a non-volatile function", command));
  }
}

}  // namespace lockstep::sim::pg
