// model/sql/parse_targets.cc: select-list and RETURNING items (`*`, `t.*`, `(x).*`), SET
// items, and the names PostgreSQL gives output columns (FigureColnameInternal), of the parse
// tree (model/sql/parse_reader.h).
#include <string>
#include <utility>
#include <vector>

#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql::detail {

Target Reader::target(const json& n, int fallback) {
  const auto [type, b] = node(n);
  known(*b, "ResTarget", {"name", "val"}, fallback);
  Target t;
  const json& val = b->at("val");
  const auto [vtype, vb] = node(val);
  if (vtype == "ColumnRef") {
    const json& fields = vb->at("fields");
    if (node(fields.back()).first == "A_Star") {
      if (fields.size() > 2) refuse("schema.table.*", location_of(*vb, fallback));
      t.star = true;
      if (fields.size() == 2) t.star_of = str(fields.at(0));
      return t;
    }
  }
  if (vtype == "A_Indirection") {  // (x).*: the fields of a row value
    const json& ind = vb->at("indirection");
    if (ind.size() == 1 && node(ind.at(0)).first == "A_Star") {
      if (b->contains("name")) fail("42601", "a row's fields (x).* cannot be named with AS", location_of(*b, fallback));
      t.expand = true;
      t.expr = expr(vb->at("arg"), fallback);
      return t;
    }
  }
  t.expr = expr(val, fallback);
  t.name = b->contains("name") ? b->at("name").get<std::string>() : column_name(val);
  return t;
}

std::string Reader::column_name(const json& n) { return column_name_of(n).first; }

// PostgreSQL's FigureColnameInternal: the name and its strength (0 none, 1 a cast's type
// name, 2 a column, function or keyword name); an outer cast renames only a weaker name.
std::pair<std::string, int> Reader::column_name_of(const json& n) {
  const auto [type, b] = node(n);
  if (type == "ColumnRef") {
    const json& fields = b->at("fields");
    return {str(fields.back()), 2};
  }
  if (type == "FuncCall") return {str(b->at("funcname").back()), 2};
  if (type == "TypeCast") {
    auto inner = column_name_of(b->at("arg"));
    if (inner.second > 1) return inner;
    return {type_display(b->at("typeName")), 1};
  }
  if (type == "CaseExpr") return {"case", 2};
  if (type == "RowExpr") return {"row", 2};
  if (type == "A_ArrayExpr") return {"array", 2};
  if (type == "A_Indirection") {  // (x).name is named name; x[i] as x
    const json& ind = b->at("indirection");
    if (!ind.empty() && node(ind.back()).first == "String") return {str(ind.back()), 2};
    return column_name_of(b->at("arg"));
  }
  if (type == "MinMaxExpr") return {b->value("op", "") == "IS_GREATEST" ? "greatest" : "least", 2};
  if (type == "A_Expr" && b->value("kind", "") == "AEXPR_NULLIF") return {"nullif", 2};
  if (type == "CoalesceExpr") return {"coalesce", 2};
  if (type == "SQLValueFunction") return {sql_value_function_name(b->value("op", "")), 2};
  if (type == "SubLink") {
    if (b->value("subLinkType", "") == "EXISTS_SUBLINK") return {"exists", 2};
    if (b->value("subLinkType", "") == "ARRAY_SUBLINK") return {"array", 2};
    const json* subp = node(b->at("subselect")).second;
    while (!subp->contains("targetList") && subp->contains("larg")) subp = node(subp->at("larg")).second;  // UNION ...: its first query's
    const json& sub = *subp;
    if (sub.contains("targetList")) {
      const json& first = *node(sub.at("targetList").at(0)).second;
      if (first.contains("name")) return {first.at("name"), 2};
      return column_name_of(first.at("val"));
    }
  }
  return {"?column?", 0};
}

std::string Reader::type_display(const json& type_name) {
  const json& names = type_name.at("names");
  return str(names.back());
}

std::string Reader::sql_value_function_name(std::string_view op) {
  if (op == "SVFOP_CURRENT_TIMESTAMP") return "current_timestamp";
  if (op == "SVFOP_CURRENT_TIMESTAMP_N") return "current_timestamp";
  if (op == "SVFOP_LOCALTIMESTAMP") return "localtimestamp";
  if (op == "SVFOP_CURRENT_DATE") return "current_date";
  if (op == "SVFOP_LOCALTIME") return "localtime";
  if (op == "SVFOP_CURRENT_USER") return "current_user";
  if (op == "SVFOP_SESSION_USER") return "session_user";
  if (op == "SVFOP_USER") return "user";
  if (op == "SVFOP_CURRENT_ROLE") return "current_role";
  return "?column?";
}

Assignment Reader::assignment(const json& n, int fallback) {
  const auto [type, b] = node(n);
  if (type != "ResTarget") refuse(construct_of_node(type, *b), fallback);
  known(*b, "ResTarget", {"name", "val"}, fallback);
  const auto [val_type, val] = node(b->at("val"));
  if (val_type == "SetToDefault") return Assignment{b->at("name"), Expr{}, true};
  if (val_type == "MultiAssignRef") {
    // SET (a, b) = ROW(x, y) (or (x, y)): the gram.y target list gives each column the whole
    // source and its number; transformMultiAssignRef takes that column's element of a row.
    known(*val, "MultiAssignRef", {"source", "colno", "ncolumns"}, fallback);
    const int loc = location_of(*b, fallback);
    const auto [source_type, source] = node(val->at("source"));
    if (source_type == "SubLink") refuse("SET (a, b) = (SELECT ...)", loc);
    if (source_type != "RowExpr") fail("42601", "source for a multiple-column UPDATE item must be a sub-SELECT or ROW() expression", loc);
    const json empty = json::array();
    const json& args = source->contains("args") ? source->at("args") : empty;
    const std::size_t colno = val->at("colno").get<std::size_t>(), columns = val->at("ncolumns").get<std::size_t>();
    if (args.size() != columns) fail("42601", "number of columns does not match number of values", location_of(*source, loc));
    if (colno < 1 || colno > args.size()) fail("42601", "number of columns does not match number of values", loc);
    const json& element = args.at(colno - 1);
    if (node(element).first == "SetToDefault") return Assignment{b->at("name"), Expr{}, true};
    return Assignment{b->at("name"), expr(element, loc)};
  }
  return Assignment{b->at("name"), expr(b->at("val"), location_of(*b, fallback))};
}

std::vector<Target> Reader::returning(const json& list, int fallback) {
  std::vector<Target> out;
  for (const json& t : list) {
    out.push_back(target(t, fallback));
    if (out.back().expand) refuse("(x).* in RETURNING", location_of(*node(t).second, fallback));
  }
  return out;
}

}  // namespace lockstep::sql::detail
