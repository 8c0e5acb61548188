// model/sql/parse_insert.cc: INSERT's parse: its target columns, VALUES rows or a SELECT (a
// single VALUES row that calls a set-returning function is the server's ProjectSet: read as
// INSERT ... SELECT of those values), ON CONFLICT and RETURNING.
#include <algorithm>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/parse_reader.h"
#include "lockstep/model/stack_room.h"

namespace lockstep::sql::detail {
namespace {

// An `xmax` reference of e that is not the left operand of = or <> with 0, or nullptr.
const Expr* parse_bare_xmax(const Expr& e) {
  const auto is_xmax = [](const Expr& x) { return x.kind == Expr::Kind::column && x.name == "xmax"; };
  const auto is_zero = [](const Expr& x) {
    return x.kind == Expr::Kind::constant && !x.value.is_null() && is_integer(x.value.type()) && x.value.as_integer() == 0;
  };
  if (e.kind == Expr::Kind::op && (e.name == "=" || e.name == "<>") && e.args.size() == 2 && is_xmax(e.args[0]) && is_zero(e.args[1])) {
    return nullptr;  // (0 = xmax: the server has no int4 = xid)
  }
  if (is_xmax(e)) return &e;
  for (const Expr& a : e.args) {
    if (const Expr* found = parse_bare_xmax(a)) return found;
  }
  return nullptr;
}

}  // namespace

const json* set_returning_call(const json& j, int depth) {
  // A tree deeper than any statement the reader takes is left to the reader's refusal.
  if (depth > kMaxTreeDepth || stack_room() < kStackRoomNeeded) return nullptr;
  if (j.is_array()) {
    for (const json& e : j) {
      if (const json* found = set_returning_call(e, depth + 1)) return found;
    }
    return nullptr;
  }
  if (!j.is_object()) return nullptr;
  if (j.contains("FuncCall")) {
    const json& f = j.at("FuncCall");
    if (f.contains("funcname") && !f.at("funcname").empty()) {
      const json& last = f.at("funcname").back();
      const std::string name = last.contains("String") ? last.at("String").value("sval", "") : std::string();
      if (f.at("funcname").size() == 1 && select_list_set_returning(name)) return &f;
    }
  }
  for (const auto& [key, value] : j.items()) {
    if (key == "SubLink") continue;
    if (const json* found = set_returning_call(value, depth + 1)) return found;
  }
  return nullptr;
}

const json* set_returning_in_conditional(const json& j, const char** construct, int depth) {
  if (depth > kMaxTreeDepth || stack_room() < kStackRoomNeeded) return nullptr;  // (as set_returning_call)
  if (j.is_array()) {
    for (const json& e : j) {
      if (const json* found = set_returning_in_conditional(e, construct, depth + 1)) return found;
    }
    return nullptr;
  }
  if (!j.is_object()) return nullptr;
  for (const auto& [key, value] : j.items()) {
    if (key == "CaseExpr" || key == "CoalesceExpr") {
      if (const json* srf = set_returning_call(value)) {
        *construct = key == "CaseExpr" ? "CASE" : "COALESCE";
        return srf;
      }
    }
    if (const json* found = set_returning_in_conditional(value, construct, depth + 1)) return found;
  }
  return nullptr;
}

Insert Reader::insert(const json& body) {
  const int loc = statement_start_;
  known(body, "InsertStmt", {"relation", "cols", "selectStmt", "onConflictClause", "returningList", "override", "withClause"}, loc);
  Insert ins;
  if (body.contains("withClause")) ins.with = with_clause(body.at("withClause"), loc, body);
  const std::string overriding = body.value("override", "OVERRIDING_NOT_SET");
  ins.overriding = overriding == "OVERRIDING_SYSTEM_VALUE" ? Insert::Overriding::system
                   : overriding == "OVERRIDING_USER_VALUE" ? Insert::Overriding::user
                                                           : Insert::Overriding::none;
  std::tie(ins.table, ins.alias) = relation(body.at("relation"), loc);
  if (body.contains("cols")) {
    for (const json& c : body.at("cols")) {
      const json& t = *node(c).second;
      known(t, "ResTarget", {"name"}, loc);
      ins.columns.push_back(t.at("name"));
    }
  }
  // INSERT ... VALUES (unnest($1), unnest($2), ...) (pgqueuer's enqueue): one row of
  // set-returning calls is a ProjectSet, read as INSERT ... SELECT of those values; among
  // two or more rows the server's 0A000.
  std::optional<json> projected;
  if (body.contains("selectStmt")) {
    const json& sel = *node(body.at("selectStmt")).second;
    const json* srf = sel.contains("valuesLists") ? set_returning_call(sel.at("valuesLists")) : nullptr;
    if (srf != nullptr && sel.at("valuesLists").size() > 1) fail("0A000", "set-returning functions are not allowed in VALUES", location_of(*srf, loc));
    if (srf != nullptr) {
      json targets = json::array();
      for (const json* v : items(sel.at("valuesLists").at(0))) {
        if (node(*v).first == "SetToDefault") refuse("DEFAULT beside a set-returning function in VALUES", location_of(*node(*v).second, loc));
        targets.push_back(json{{"ResTarget", json{{"val", *v}, {"location", location_of(*node(*v).second, loc)}}}});
      }
      projected = json{{"targetList", std::move(targets)}, {"limitOption", "LIMIT_OPTION_DEFAULT"}, {"op", "SETOP_NONE"}};
    }
  }
  if (!body.contains("selectStmt")) {
    ins.rows.emplace_back();  // DEFAULT VALUES
  } else if (const json& sel = projected ? *projected : *node(body.at("selectStmt")).second; !sel.contains("valuesLists")) {
    ins.select = std::make_shared<Select>(select(sel, loc, false));  // INSERT ... SELECT
    if (!ins.select->with.empty()) refuse("WITH inside INSERT ... SELECT", loc);
    // (SELECT * and (x).* give their columns when run: counted then, sql_write.cc)
    const bool expands = std::any_of(ins.select->targets.begin(), ins.select->targets.end(), [](const Target& x) { return x.star || x.expand; });
    if (!ins.columns.empty() && ins.select->targets.size() > ins.columns.size()) {
      fail("42601", "INSERT has more expressions than target columns", loc);
    }
    if (!expands && !ins.columns.empty() && ins.select->targets.size() < ins.columns.size()) {
      fail("42601", "INSERT has more target columns than expressions", loc);
    }
  } else {
    known(sel, "SelectStmt", {"valuesLists", "limitOption", "op"}, loc);
    for (const json& row : sel.at("valuesLists")) {
      std::vector<std::optional<Expr>> values;
      for (const json* v : items(row)) {
        if (node(*v).first == "SetToDefault") {
          values.emplace_back(std::nullopt);
        } else {
          values.emplace_back(expr(*v, loc));
        }
      }
      if (!ins.columns.empty() && values.size() > ins.columns.size()) {
        fail("42601", "INSERT has more expressions than target columns", loc);
      }
      if (!ins.columns.empty() && values.size() < ins.columns.size()) {
        fail("42601", "INSERT has more target columns than expressions", loc);
      }
      ins.rows.push_back(std::move(values));
    }
  }
  if (body.contains("onConflictClause")) {
    const json& oc = body.at("onConflictClause");
    known(oc, "OnConflictClause", {"action", "infer", "targetList", "whereClause"}, loc);
    const std::string action = oc.value("action", "");
    ins.on_conflict = action == "ONCONFLICT_UPDATE" ? Insert::OnConflict::update : Insert::OnConflict::nothing;
    if (oc.contains("infer")) {
      const json& infer = oc.at("infer");
      known(infer, "InferClause", {"indexElems", "whereClause", "conname"}, loc);
      if (infer.contains("whereClause")) ins.conflict_index_where = std::make_shared<Expr>(expr(infer.at("whereClause"), loc));
      ins.conflict_constraint = infer.value("conname", "");
      for (const json& ie : infer.value("indexElems", json::array())) {
        const json& elem = *node(ie).second;
        known(elem, "IndexElem", {"name", "expr", "ordering", "nulls_ordering"}, loc);
        if (!elem.contains("name")) {  // an expression index's part, matched as written
          ins.conflict_expressions.resize(ins.conflict_columns.size());
          ins.conflict_expressions.push_back(std::make_shared<Expr>(expr(elem.at("expr"), loc)));
          ins.conflict_columns.push_back("(expression)");
          continue;
        }
        ins.conflict_columns.push_back(elem.at("name"));
        if (!ins.conflict_expressions.empty()) ins.conflict_expressions.emplace_back();
      }
    }
    if (ins.on_conflict == Insert::OnConflict::update) {
      if (ins.conflict_columns.empty() && ins.conflict_constraint.empty()) {
        fail("42601", "ON CONFLICT DO UPDATE requires inference specification or constraint name", location_of(oc, loc));
      }
      for (const json& t : oc.at("targetList")) ins.conflict_set.push_back(assignment(t, loc));
      if (oc.contains("whereClause")) ins.conflict_where = expr(oc.at("whereClause"), loc);
    }
  }
  if (body.contains("returningList")) {
    // The upsert's `xmax = 0` (inserted) / `xmax <> 0` (updated), River's unique_skipped_as_duplicate:
    // the raw xmax compared with 0 there, nowhere else (its number is the server's xid).
    xmax_allowed_ = ins.on_conflict == Insert::OnConflict::update;
    ins.returning = returning(body.at("returningList"), loc);
    xmax_allowed_ = false;
    for (const Target& t : ins.returning) {
      if (const Expr* bare = t.star ? nullptr : parse_bare_xmax(t.expr)) refuse("xmax other than compared with 0", bare->location >= 0 ? bare->location : loc);
    }
  }
  return ins;
}

}  // namespace lockstep::sql::detail
