// model/sql/parse_types.cc: CREATE TYPE ... AS ENUM, CREATE TYPE ... AS (fields) and ALTER
// TYPE ... ADD VALUE read into CreateType (model/sql/plan.h); COLLATE clauses.
#include <fmt/ranges.h>

#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql::detail {

CreateType Reader::create_type(std::string_view type, const json& body) {
  CreateType t;
  // An enum's name: schema.type is the type (plan.h's Schema); a database's name is refused.
  auto enum_name = [&] {
    std::vector<std::string> parts = names(body.at("typeName"));
    if (parts.size() == 2) {
      t.schema = parts[0];
      parts.erase(parts.begin());
    }
    if (parts.size() != 1) refuse("a database-qualified name", statement_start_);
    return parts[0];
  };
  if (type == "CreateEnumStmt") {
    known(body, "CreateEnumStmt", {"typeName", "vals"}, statement_start_);
    t.name = enum_name();
    if (body.contains("vals")) t.labels = names(body.at("vals"));
    return t;
  }
  if (type == "CompositeTypeStmt") {
    known(body, "CompositeTypeStmt", {"typevar", "coldeflist"}, statement_start_);
    t.name = relation(body.at("typevar"), statement_start_).first;
    t.schema = body.at("typevar").value("schemaname", "");
    t.composite = true;
    for (const json& d : body.value("coldeflist", json::array())) {
      const json& def = *node(d).second;
      known(def, "ColumnDef", {"colname", "typeName", "is_local", "location"}, statement_start_);
      ColumnDef col;
      col.name = def.at("colname");
      col.type = type_of(def.at("typeName"), location_of(def, statement_start_), &col, &col.user_type);
      t.labels.push_back(col.name);
      t.fields.push_back(std::move(col));
    }
    return t;
  }
  known(body, "AlterEnumStmt", {"typeName", "newVal", "newValNeighbor", "newValIsAfter", "skipIfNewValExists", "oldVal"}, statement_start_);
  if (body.contains("oldVal")) refuse("ALTER TYPE ... RENAME VALUE", statement_start_);
  t.name = enum_name();
  t.alter = true;
  t.labels = {body.value("newVal", "")};
  t.neighbor = body.value("newValNeighbor", "");
  t.after = body.value("newValIsAfter", false) || t.neighbor.empty();
  t.if_not_exists = body.value("skipIfNewValExists", false);
  return t;
}

void Reader::byte_order_collation(const json& coll_clause, int fallback) const {
  const json& coll = coll_clause.contains("CollateClause") ? coll_clause.at("CollateClause") : coll_clause;
  std::vector<std::string> parts = names(coll.at("collname"));
  if (parts.size() == 2 && parts[0] == "pg_catalog") parts.erase(parts.begin());
  if (parts.size() != 1 || (parts[0] != "C" && parts[0] != "POSIX" && parts[0] != "default")) {
    refuse(fmt::format("COLLATE \"{}\" (text compares by bytes here, as under COLLATE \"C\")", fmt::join(parts, ".")), location_of(coll, fallback));
  }
}

Expr Reader::collate_clause(const json& body, int fallback) {
  known(body, "CollateClause", {"arg", "collname"}, fallback);
  byte_order_collation(body, fallback);
  return expr(body.at("arg"), location_of(body, fallback));
}

}  // namespace lockstep::sql::detail
