// model/sql/parse_alter.cc: the reader's ALTER TABLE (plan.h's AlterTable): part of
// model/sql/parse.h's parser. ADD / DROP COLUMN, ALTER COLUMN SET / DROP DEFAULT, SET / DROP
// NOT NULL and TYPE (without USING), ADD CONSTRAINT (CHECK, UNIQUE, PRIMARY KEY, FOREIGN KEY),
// DROP CONSTRAINT, and storage and replication settings that change nothing lockstep models;
// RENAME (of a table, column, index or sequence), DROP INDEX, ALTER SEQUENCE ... AS bigint;
// other forms (inheritance, triggers, ...) are refused by name.
#include <limits>

#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql {
namespace detail {

namespace {

// A CreateTable's constraints (read from a column or a table constraint) as commands.
void alter_constraints_of(const CreateTable& c, std::vector<AlterCommand>& out) {
  using K = AlterCommand::Kind;
  if (!c.primary_key.empty()) {
    AlterCommand a;
    a.kind = K::add_primary_key;
    a.keys = c.primary_key;
    a.constraint = c.primary_key_name;
    out.push_back(std::move(a));
  }
  for (std::size_t u = 0; u < c.unique.size(); ++u) {
    AlterCommand a;
    a.kind = K::add_unique;
    a.keys = c.unique[u];
    if (u < c.unique_names.size()) a.constraint = c.unique_names[u];
    out.push_back(std::move(a));
  }
  for (const ForeignKey& fk : c.foreign_keys) {
    AlterCommand a;
    a.kind = K::add_foreign_key;
    a.foreign_key = fk;
    out.push_back(std::move(a));
  }
  for (const CheckConstraint& check : c.checks) {
    AlterCommand a;
    a.kind = K::add_check;
    a.check = check;
    out.push_back(std::move(a));
  }
}

}  // namespace

void Reader::storage_parameters(const json& options, int fallback) const {
  for (const json& o : options) {
    const json& d = *node(o).second;
    const int at = location_of(d, fallback);
    const std::string name = d.value("defname", "");
    const bool toast = d.value("defnamespace", "") == "toast";
    if (name == "fillfactor" && !toast) {
      if (!d.contains("arg") || node(d.at("arg")).first != "Integer") refuse("a fillfactor other than an integer", at);
      const long long v = node(d.at("arg")).second->value("ival", 0LL);  // (libpg_query leaves out 0)
      if (v < 10 || v > 100) fail("22023", fmt::format("value {} out of bounds for option \"fillfactor\"", v), at);
      continue;
    }
    const bool vacuum = name.starts_with("autovacuum_") || name == "vacuum_truncate" || name == "vacuum_index_cleanup" ||
                        name == "log_autovacuum_min_duration" || name == "toast_tuple_target" || name == "parallel_workers";
    if (!vacuum) refuse(fmt::format("the storage parameter {}{}", toast ? "toast." : "", name), at);
  }
}

AlterTable Reader::alter_table(const json& body) {
  const int loc = statement_start_;
  known(body, "AlterTableStmt", {"relation", "cmds", "objtype", "missing_ok"}, loc);
  if (body.value("objtype", "OBJECT_TABLE") != "OBJECT_TABLE") refuse(fmt::format("ALTER of {}", body.value("objtype", "")), loc);
  AlterTable a;
  a.if_exists = body.value("missing_ok", false);
  std::string alias;
  std::tie(a.table, alias) = relation(body.at("relation"), loc);
  using K = AlterCommand::Kind;
  for (const json& item : body.at("cmds")) {
    const json& cmd = *node(item).second;
    known(cmd, "AlterTableCmd", {"subtype", "name", "def", "behavior", "missing_ok", "num"}, loc);
    const std::string subtype = cmd.value("subtype", "");
    if (cmd.value("behavior", "DROP_RESTRICT") != "DROP_RESTRICT") refuse(fmt::format("ALTER TABLE ... CASCADE"), loc);
    AlterCommand c;
    c.name = cmd.value("name", "");
    c.missing_ok = cmd.value("missing_ok", false);
    if (subtype == "AT_AddColumn") {
      const json& def = *node(cmd.at("def")).second;
      CreateTable scratch;
      scratch.table = a.table;
      c.kind = K::add_column;
      c.column = column_def(def, scratch, location_of(def, loc));
      a.commands.push_back(std::move(c));
      alter_constraints_of(scratch, a.commands);
      continue;
    }
    if (subtype == "AT_DropColumn") {
      c.kind = K::drop_column;
    } else if (subtype == "AT_ColumnDefault") {
      c.kind = K::set_default;
      if (cmd.contains("def")) c.column.default_value = expr(cmd.at("def"), loc);
    } else if (subtype == "AT_SetNotNull" || subtype == "AT_DropNotNull") {
      c.kind = K::set_not_null;
      c.not_null = subtype == "AT_SetNotNull";
    } else if (subtype == "AT_AlterColumnType") {
      const json& def = *node(cmd.at("def")).second;
      known(def, "ColumnDef", {"typeName", "location", "raw_default", "collClause"}, loc);
      if (def.contains("raw_default")) c.using_expr = std::make_shared<Expr>(expr(def.at("raw_default"), location_of(def, loc)));
      if (def.contains("collClause")) byte_order_collation(def.at("collClause"), location_of(def, loc));
      c.kind = K::alter_type;
      c.column.name = c.name;
      c.column.type = type_of(def.at("typeName"), location_of(def, loc), &c.column, &c.column.user_type);
    } else if (subtype == "AT_AddConstraint") {
      const json& con = *node(cmd.at("def")).second;
      const int cloc = location_of(con, loc);
      CreateTable scratch;
      scratch.table = a.table;
      const std::string contype = con.value("contype", "");
      bool valid = true;
      if (contype == "CONSTR_FOREIGN") {
        json copy = con;
        valid = !copy.value("skip_validation", false);
        copy.erase("skip_validation");
        scratch.foreign_keys.push_back(foreign_key(copy, a.table, "", cloc));
      } else if (contype == "CONSTR_CHECK") {
        known(con, "Constraint", {"contype", "conname", "raw_expr", "initially_valid", "is_no_inherit", "skip_validation", "location"}, cloc);
        valid = !con.value("skip_validation", false);
        scratch.checks.push_back({con.value("conname", ""), std::make_shared<Expr>(expr(con.at("raw_expr"), cloc))});
      } else if (contype == "CONSTR_PRIMARY" || contype == "CONSTR_UNIQUE") {
        known(con, "Constraint", {"contype", "keys", "conname", "location"}, cloc);
        if (contype == "CONSTR_PRIMARY") {
          scratch.primary_key = names(con.at("keys"));
          scratch.primary_key_name = con.value("conname", "");
        } else {
          scratch.unique.push_back(names(con.at("keys")));
          scratch.unique_names.push_back(con.value("conname", ""));
        }
      } else {
        refuse(constraint_name(contype), cloc);
      }
      const std::size_t first = a.commands.size();
      alter_constraints_of(scratch, a.commands);
      for (std::size_t i = first; i < a.commands.size(); ++i) a.commands[i].validate = valid;
      continue;
    } else if (subtype == "AT_DropConstraint") {
      c.kind = K::drop_constraint;
      c.constraint = c.name;
    } else if (subtype == "AT_SetRelOptions" || subtype == "AT_ResetRelOptions" || subtype == "AT_SetLogged" || subtype == "AT_SetUnLogged" ||
               subtype == "AT_ReplicaIdentity" || subtype == "AT_EnableRowSecurity" || subtype == "AT_DisableRowSecurity" ||
               subtype == "AT_ForceRowSecurity" || subtype == "AT_NoForceRowSecurity") {
      // Row security binds roles other than the table's owner (or with FORCE, the owner too)
      // but never a superuser: lockstep's sessions are the superuser postgres, so enabling or
      // forcing it changes nothing they see (docs/sql.md).
      if (subtype == "AT_SetRelOptions" && cmd.contains("def")) {
        const json& list = *node(cmd.at("def")).second;  // a List
        if (list.contains("items")) storage_parameters(list.at("items"), loc);
      }
      c.kind = K::no_effect;
    } else {
      refuse(fmt::format("ALTER TABLE ... {}", subtype.starts_with("AT_") ? subtype.substr(3) : subtype), loc);
    }
    a.commands.push_back(std::move(c));
  }
  return a;
}

AlterTable Reader::drop_index(const json& body) {
  known(body, "DropStmt", {"objects", "removeType", "behavior", "missing_ok", "concurrent"}, statement_start_);
  if (body.value("behavior", "DROP_RESTRICT") != "DROP_RESTRICT") refuse("DROP INDEX ... CASCADE", statement_start_);
  AlterTable a;
  for (const json& o : body.at("objects")) {
    std::vector<std::string> parts;
    for (const json* p : items(o)) parts.push_back(str(*p));
    AlterCommand c;
    c.kind = AlterCommand::Kind::drop_index;
    c.constraint = parts.back();  // schema.index: the index (plan.h's Schema)
    c.missing_ok = body.value("missing_ok", false);
    a.commands.push_back(std::move(c));
  }
  return a;
}

AlterTable Reader::rename(const json& body) {
  known(body, "RenameStmt", {"renameType", "relationType", "relation", "subname", "newname", "behavior", "missing_ok"}, statement_start_);
  const std::string what = body.value("renameType", "");
  AlterTable a;
  AlterCommand c;
  c.missing_ok = body.value("missing_ok", false);
  if (!body.contains("relation")) refuse(fmt::format("RENAME of {}", what), statement_start_);
  const std::string relation_name = relation(body.at("relation"), statement_start_).first;
  if (what == "OBJECT_TABLE") {
    a.table = relation_name;
    c.kind = AlterCommand::Kind::rename_table;
    c.name = body.value("newname", "");
  } else if (what == "OBJECT_COLUMN" && body.value("relationType", "") == "OBJECT_TABLE") {
    a.table = relation_name;
    c.kind = AlterCommand::Kind::rename_column;
    c.name = body.value("subname", "");
    c.constraint = body.value("newname", "");
  } else if (what == "OBJECT_INDEX" || what == "OBJECT_SEQUENCE") {
    c.kind = what == "OBJECT_INDEX" ? AlterCommand::Kind::rename_index : AlterCommand::Kind::rename_sequence;
    c.constraint = relation_name;
    c.name = body.value("newname", "");
  } else {
    refuse(fmt::format("RENAME of {}", what.starts_with("OBJECT_") ? what.substr(7) : what), statement_start_);
  }
  a.if_exists = c.missing_ok;
  a.commands.push_back(std::move(c));
  return a;
}

AlterTable Reader::alter_sequence(const json& body) {
  known(body, "AlterSeqStmt", {"sequence", "options", "missing_ok"}, statement_start_);
  AlterCommand c;
  c.kind = AlterCommand::Kind::alter_sequence;
  c.constraint = relation(body.at("sequence"), statement_start_).first;
  c.missing_ok = body.value("missing_ok", false);
  for (const json& o : body.contains("options") ? body.at("options") : json::array()) {
    const json& d = *node(o).second;
    const std::string option = d.value("defname", "");
    if (option == "owned_by") {  // OWNED BY table.column | NONE
      std::vector<std::string> parts = names(node(d.at("arg")).second->at("items"));
      if (parts.size() == 1 && parts[0] == "none") parts = {"", ""};
      if (parts.size() < 2) fail("42601", "invalid OWNED BY option", location_of(d, statement_start_));
      c.keys = {parts[parts.size() - 2], parts.back()};
      continue;
    }
    const bool to_bigint = option == "as" && type_of(*node(d.at("arg")).second, statement_start_) == Type::int8;
    const bool bigint_max = option == "maxvalue" && (!d.contains("arg") || integer_at(location_of(d, statement_start_) + 8) == std::numeric_limits<std::int64_t>::max());
    c.widen = true;
    if (!to_bigint && !bigint_max) refuse("ALTER SEQUENCE other than AS bigint, MAXVALUE 9223372036854775807 or OWNED BY", location_of(d, statement_start_));
  }
  AlterTable a;
  a.commands.push_back(std::move(c));
  return a;
}

}  // namespace detail
}  // namespace lockstep::sql
