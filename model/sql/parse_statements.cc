// model/sql/parse_statements.cc: the reader's DDL, transaction and setting statements
// (CREATE TABLE with its keys and foreign keys, DROP TABLE, CREATE INDEX, BEGIN / COMMIT /
// ROLLBACK / savepoints, SET): part of model/sql/parse.h's parser, whose Reader
// (parse_reader.h) the rest of it shares.
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <set>

#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/parse_reader.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/model/sql/time_zones.h"

namespace lockstep::sql {
namespace detail {

ColumnDef Reader::column_def(const json& body, CreateTable& c, int eloc) {
  known(body, "ColumnDef", {"colname", "typeName", "is_local", "constraints", "collClause"}, eloc);
  if (body.contains("collClause")) byte_order_collation(body.at("collClause"), eloc);
  ColumnDef col;
  col.name = body.at("colname");
  col.type = type_of(body.at("typeName"), eloc, &col, &col.user_type);
  if (body.contains("constraints")) {
    std::string previous;  // the constraint a [NOT] DEFERRABLE / INITIALLY ... after it applies to
    for (const json& cn : body.at("constraints")) {
      const json& con = *node(cn).second;
      const std::string contype = con.value("contype", "");
      const int cloc = location_of(con, eloc);
      if (contype.starts_with("CONSTR_ATTR_")) {
        if (previous != "CONSTR_FOREIGN" || contype == "CONSTR_ATTR_NOT_DEFERRABLE") refuse(fmt::format("{} here", contype.substr(12)), cloc);
        ForeignKey& fk = c.foreign_keys.back();
        if (fk.on_delete != ForeignKey::OnDelete::no_action || fk.cascade_update) refuse("an ON DELETE or ON UPDATE action of a deferrable foreign key", cloc);
        fk.deferrable = fk.deferrable || contype != "CONSTR_ATTR_IMMEDIATE";
        fk.deferred = fk.deferred || contype == "CONSTR_ATTR_DEFERRED";
        continue;
      }
      previous = contype;
      if (contype == "CONSTR_PRIMARY") {
        if (!c.primary_key.empty()) fail("42P16", fmt::format("multiple primary keys for table \"{}\" are not allowed", c.table), cloc);
        c.primary_key = {col.name};
        col.not_null = true;
      } else if (contype == "CONSTR_UNIQUE") {
        c.unique.push_back({col.name});
      } else if (contype == "CONSTR_NOTNULL") {
        col.not_null = true;
      } else if (contype == "CONSTR_NULL") {
      } else if (contype == "CONSTR_DEFAULT") {
        col.default_value = expr(con.at("raw_expr"), cloc);
      } else if (contype == "CONSTR_FOREIGN") {
        c.foreign_keys.push_back(foreign_key(con, c.table, col.name, cloc));
      } else if (contype == "CONSTR_IDENTITY") {
        identity(con, col, cloc);
      } else if (contype == "CONSTR_CHECK") {
        known(con, "Constraint", {"contype", "conname", "raw_expr", "initially_valid", "is_no_inherit", "skip_validation", "location"}, cloc);
        c.checks.push_back({con.value("conname", ""), std::make_shared<Expr>(expr(con.at("raw_expr"), cloc))});
      } else if (contype == "CONSTR_GENERATED") {
        known(con, "Constraint", {"contype", "generated_when", "raw_expr", "location"}, cloc);
        col.generated = std::make_shared<Expr>(expr(con.at("raw_expr"), cloc));
      } else {
        refuse(constraint_name(contype), cloc);
      }
    }
  }
  return col;
}

void Reader::identity(const json& con, ColumnDef& col, int loc) {
  known(con, "Constraint", {"contype", "generated_when", "options", "location"}, loc);
  if (!is_integer(col.type)) refuse(fmt::format("GENERATED AS IDENTITY on a column of type {}", type_name(col.type)), loc);
  if (col.serial) fail("42601", fmt::format("multiple default values specified for column \"{}\"", col.name), loc);
  col.serial = true;
  col.not_null = true;
  col.identity_always = con.value("generated_when", "a") == "a";
  if (!con.contains("options")) return;
  for (const json& o : con.at("options")) {
    const json& def = *node(o).second;
    const std::string option = def.value("defname", "");
    const int oloc = location_of(def, loc);
    if (option != "start" && option != "increment") refuse(fmt::format("the identity option {}", option), oloc);
    const json* arg = def.contains("arg") ? node(def.at("arg")).second : nullptr;
    // libpg_query's JSON leaves 0 and negative values out ({}): refused, not read as 0.
    if (arg == nullptr || !arg->contains("ival")) refuse(fmt::format("this value (zero or below?) of the identity option {}", option), oloc);
    const std::int64_t v = arg->value("ival", std::int64_t{0});
    if (option == "increment" && v == 0) fail("22023", "INCREMENT must not be zero", oloc);
    (option == "start" ? col.sequence_start : col.sequence_increment) = v;
  }
}

namespace {

void check_columns_of(const Expr& e, std::set<std::string>& out) {
  if (e.kind == Expr::Kind::column) out.insert(e.name);
  for (const Expr& a : e.args) check_columns_of(a, out);
}

}  // namespace

// CHECK constraints without a name get the server's (ChooseConstraintName): <table>_<column>_check
// when the expression reads one column, else <table>_check; a taken name gets 1, 2, ...
void Reader::name_checks(CreateTable& c) {
  std::set<std::string> taken;
  for (const CheckConstraint& k : c.checks) {
    if (!k.name.empty()) taken.insert(k.name);
  }
  for (CheckConstraint& k : c.checks) {
    if (!k.name.empty()) continue;
    std::set<std::string> columns;
    check_columns_of(*k.expr, columns);
    const std::string base = columns.size() == 1 ? fmt::format("{}_{}_check", c.table, *columns.begin()) : fmt::format("{}_check", c.table);
    std::string name = base;
    for (int n = 1; taken.count(name) != 0; ++n) name = fmt::format("{}{}", base, n);
    taken.insert(name);
    k.name = name;
  }
}

CreateTable Reader::create_table(const json& body) {
  const int loc = statement_start_;
  known(body, "CreateStmt", {"relation", "tableElts", "if_not_exists", "oncommit", "options"}, loc);
  if (body.contains("options")) storage_parameters(body.at("options"), loc);
  if (body.value("oncommit", "ONCOMMIT_NOOP") != "ONCOMMIT_NOOP") refuse("ON COMMIT", loc);
  CreateTable c;
  const json& rel = body.at("relation");
  if (rel.value("relpersistence", "p") == "t") refuse("a temporary table", location_of(rel, loc));
  std::string alias;
  std::tie(c.table, alias) = relation(rel, loc);
  c.schema = rel.value("schemaname", "");
  c.if_not_exists = body.value("if_not_exists", false);
  if (body.contains("tableElts")) {
    for (const json& el : body.at("tableElts")) {
      const auto [type, b] = node(el);
      const int eloc = location_of(*b, loc);
      if (type == "ColumnDef") {
        c.columns.push_back(column_def(*b, c, eloc));
      } else if (type == "Constraint") {
        const std::string contype = b->value("contype", "");
        if (contype == "CONSTR_FOREIGN") {
          c.foreign_keys.push_back(foreign_key(*b, c.table, "", eloc));
          continue;
        }
        if (contype == "CONSTR_CHECK") {
          known(*b, "Constraint", {"contype", "conname", "raw_expr", "initially_valid", "is_no_inherit", "skip_validation", "location"}, eloc);
          c.checks.push_back({b->value("conname", ""), std::make_shared<Expr>(expr(b->at("raw_expr"), eloc))});
          continue;
        }
        if (contype != "CONSTR_PRIMARY" && contype != "CONSTR_UNIQUE") refuse(constraint_name(contype), eloc);
        known(*b, type, {"contype", "keys", "conname", "including"}, eloc);
        if (b->contains("including")) {
          for (std::string& k : names(b->at("including"))) c.included.push_back(std::move(k));
        }
        if (contype == "CONSTR_PRIMARY") {
          if (!c.primary_key.empty()) fail("42P16", fmt::format("multiple primary keys for table \"{}\" are not allowed", c.table), eloc);
          c.primary_key = names(b->at("keys"));
          c.primary_key_name = b->value("conname", "");
        } else if (contype == "CONSTR_UNIQUE") {
          c.unique.push_back(names(b->at("keys")));
          c.unique_names.resize(c.unique.size());
          c.unique_names.back() = b->value("conname", "");
        } else {
          refuse(constraint_name(contype), eloc);
        }
      } else {
        refuse(construct_of_node(type, *b), eloc);
      }
    }
  }
  name_checks(c);
  for (const std::string& k : c.primary_key) {
    auto it = std::find_if(c.columns.begin(), c.columns.end(), [&](const ColumnDef& d) { return d.name == k; });
    if (it == c.columns.end()) fail("42703", fmt::format("column \"{}\" named in key does not exist", k), loc);
    it->not_null = true;
  }
  for (const auto& key : c.unique) {
    for (const std::string& k : key) {
      if (std::none_of(c.columns.begin(), c.columns.end(), [&](const ColumnDef& d) { return d.name == k; })) {
        fail("42703", fmt::format("column \"{}\" named in key does not exist", k), loc);
      }
    }
  }
  for (const std::string& k : c.included) {
    if (std::none_of(c.columns.begin(), c.columns.end(), [&](const ColumnDef& d) { return d.name == k; })) {
      fail("42703", fmt::format("column \"{}\" named in key does not exist", k), loc);
    }
  }
  return c;
}

ForeignKey Reader::foreign_key(const json& con, const std::string& table, const std::string& column, int fallback) const {
  known(con, "Constraint",
        {"contype", "conname", "pktable", "fk_attrs", "pk_attrs", "fk_matchtype", "fk_upd_action", "fk_del_action", "initially_valid",
         "deferrable", "initdeferred", "skip_validation"},
        fallback);
  if (con.value("fk_matchtype", "s") != "s") refuse("MATCH FULL", fallback);
  auto action = [&](const char* field, const char* what) {
    const std::string a = con.value(field, "a");
    if (a != "a" && a != "r" && !(std::string_view(field) == "fk_del_action" && (a == "c" || a == "n" || a == "d")) &&
        !(std::string_view(field) == "fk_upd_action" && a == "c")) {
      const char* name = a == "c" ? "CASCADE" : a == "n" ? "SET NULL" : "SET DEFAULT";
      refuse(fmt::format("{} {}", what, name), fallback);
    }
    return a == "r";
  };
  ForeignKey fk;
  fk.deferred = con.value("initdeferred", false);
  fk.deferrable = fk.deferred || con.value("deferrable", false);
  if (fk.deferrable && (con.value("fk_del_action", "a").find_first_of("cnd") == 0 || con.value("fk_upd_action", "a").find_first_of("cnd") == 0)) {
    refuse("an ON DELETE or ON UPDATE action of a deferrable foreign key", fallback);
  }
  fk.restrict_delete = action("fk_del_action", "ON DELETE");
  fk.restrict_update = action("fk_upd_action", "ON UPDATE");
  fk.cascade_update = con.value("fk_upd_action", "a") == "c";
  const std::string on_delete = con.value("fk_del_action", "a");
  fk.on_delete = on_delete == "c"   ? ForeignKey::OnDelete::cascade
                 : on_delete == "n" ? ForeignKey::OnDelete::set_null
                 : on_delete == "d" ? ForeignKey::OnDelete::set_default
                                    : ForeignKey::OnDelete::no_action;
  fk.parent = relation(con.at("pktable"), fallback).first;
  fk.columns = column.empty() ? names(con.at("fk_attrs")) : std::vector<std::string>{column};
  if (con.contains("pk_attrs")) fk.parent_columns = names(con.at("pk_attrs"));
  fk.name = con.value("conname", "");
  if (fk.name.empty()) fk.name = fmt::format("{}_{}_fkey", table, fmt::join(fk.columns, "_"));  // ChooseConstraintName's
  // (a foreign key to its own table: pg-boss's dead_letter queue)
  return fk;
}

std::string Reader::constraint_name(std::string_view contype) {
  if (contype == "CONSTR_CHECK") return "a CHECK constraint";
  if (contype == "CONSTR_FOREIGN") return "REFERENCES (a foreign key)";
  if (contype == "CONSTR_EXCLUSION") return "an EXCLUDE constraint";
  if (contype == "CONSTR_IDENTITY") return "GENERATED AS IDENTITY";
  if (contype == "CONSTR_GENERATED") return "a generated column";
  return fmt::format("the constraint {}", contype);
}

DropTable Reader::drop(const json& body) {
  const int loc = statement_start_;
  known(body, "DropStmt", {"objects", "removeType", "behavior", "missing_ok"}, loc);
  const std::string what = body.value("removeType", "");
  if (what != "OBJECT_TABLE" && what != "OBJECT_TYPE" && what != "OBJECT_SEQUENCE" && what != "OBJECT_FUNCTION" && what != "OBJECT_VIEW") refuse(fmt::format("DROP of {}", what), loc);
  DropTable d;
  d.cascade = body.value("behavior", "DROP_RESTRICT") != "DROP_RESTRICT";
  if (d.cascade && what != "OBJECT_TABLE") refuse("DROP ... CASCADE of other objects than tables", loc);
  d.if_exists = body.value("missing_ok", false);
  d.types = what == "OBJECT_TYPE";
  d.sequences = what == "OBJECT_SEQUENCE";
  d.functions = what == "OBJECT_FUNCTION";
  d.views = what == "OBJECT_VIEW";
  for (const json& o : body.at("objects")) {
    std::vector<std::string> parts;
    if (d.functions) {  // name [(argument types)]: one function per name, so the types are not compared
      parts = names(node(o).second->at("objname"));
    } else if (d.types) {
      parts = names(node(o).second->at("names"));
    } else {
      for (const json* p : items(o)) parts.push_back(str(*p));
    }
    if (parts.size() > 2) refuse("a database-qualified name", loc);
    // schema.table: the table (plan.h's Schema); schema.function: kept (the schema's own)
    d.tables.push_back(parts.size() == 2 && d.functions ? parts[0] + "." + parts[1] : parts.back());
  }
  return d;
}

Schema Reader::schema_or_extension(std::string_view type, const json& body) {
  if (type == "CreateSchemaStmt") {
    known(body, "CreateSchemaStmt", {"schemaname", "if_not_exists"}, statement_start_);
    return Schema{body.value("schemaname", ""), true, body.value("if_not_exists", false)};
  }
  // The extensions whose functions the subset has (uuid-ossp's uuid_generate_v4; pgcrypto's
  // gen_random_uuid is the server's own since 13): others are refused by name.
  auto modeled = [&](const std::string& name) {
    if (name != "uuid-ossp" && name != "pgcrypto") refuse(fmt::format("the extension {}", name), statement_start_);
    return name;
  };
  if (type == "CreateExtensionStmt") {
    known(body, "CreateExtensionStmt", {"extname", "if_not_exists"}, statement_start_);
    return Schema{modeled(body.value("extname", "")), true, body.value("if_not_exists", false), true};
  }
  known(body, "DropStmt", {"objects", "removeType", "behavior", "missing_ok"}, statement_start_);
  const bool extension = body.value("removeType", "") == "OBJECT_EXTENSION";
  const json& objects = body.at("objects");
  if (objects.size() != 1) refuse(extension ? "DROP EXTENSION of several extensions" : "DROP SCHEMA of several schemas", statement_start_);
  const std::string name = str(objects.at(0));
  return Schema{extension ? modeled(name) : name, false, body.value("missing_ok", false), extension};
}

CreateSequence Reader::create_sequence(const json& body) {
  const int loc = statement_start_;
  known(body, "CreateSeqStmt", {"sequence", "options", "if_not_exists", "for_identity"}, loc);
  CreateSequence q;
  std::string alias;
  std::tie(q.name, alias) = relation(body.at("sequence"), loc);
  q.schema = body.at("sequence").value("schemaname", "");
  q.if_not_exists = body.value("if_not_exists", false);
  std::int64_t type_max = std::numeric_limits<std::int64_t>::max();
  std::optional<std::int64_t> min, max, start;
  // An option's number: libpg_query's JSON omits negative ones, so it is read from the text
  // after the option's keywords.
  auto number = [&](const json& option) {
    const int at = location_of(option, loc);
    std::size_t i = static_cast<std::size_t>(std::max(at, 0));
    while (i < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[i])) != 0 || text_[i] == ' ' || text_[i] == '_')) ++i;
    return integer_at(static_cast<int>(i));
  };
  if (body.contains("options")) {
    for (const json& o : body.at("options")) {
      const json& option = *node(o).second;
      const std::string name = option.value("defname", "");
      if (name == "as") {
        const Type t = type_of(*node(option.at("arg")).second, loc);
        if (!is_integer(t)) fail("22023", "sequence type must be smallint, integer, or bigint", loc);
        type_max = t == Type::int2 ? 32767 : t == Type::int4 ? 2147483647 : type_max;
      } else if (name == "increment") {
        q.increment = number(option);
        if (q.increment == 0) fail("22023", "INCREMENT must not be zero", loc);
      } else if (name == "minvalue" || name == "maxvalue" || name == "start") {
        if (!option.contains("arg")) continue;  // NO MINVALUE / NO MAXVALUE: the default
        (name == "minvalue" ? min : name == "maxvalue" ? max : start) = number(option);
      } else if (name == "cycle") {
        q.cycle = option.contains("arg") && node(option.at("arg")).second->value("boolval", false);
      } else if (name == "owned_by") {
        const std::vector<std::string> parts = names(node(option.at("arg")).second->at("items"));
        if (parts.size() >= 2) q.owned_by = parts[parts.size() - 2];  // table.column: dropped with the table
      } else if (name != "cache") {
        refuse(fmt::format("the sequence option {}", name), loc);
      }
    }
  }
  const bool ascending = q.increment > 0;
  q.min = min.value_or(ascending ? 1 : -type_max - 1);
  q.max = max.value_or(ascending ? type_max : -1);
  q.start = start.value_or(ascending ? q.min : q.max);
  if (q.min >= q.max) fail("22023", fmt::format("MINVALUE ({}) must be less than MAXVALUE ({})", q.min, q.max), loc);
  if (q.start < q.min) fail("22023", fmt::format("START value ({}) cannot be less than MINVALUE ({})", q.start, q.min), loc);
  if (q.start > q.max) fail("22023", fmt::format("START value ({}) cannot be greater than MAXVALUE ({})", q.start, q.max), loc);
  return q;
}

CreateIndex Reader::create_index(const json& body) {
  const int loc = statement_start_;
  known(body, "IndexStmt", {"idxname", "relation", "accessMethod", "indexParams", "unique", "if_not_exists", "whereClause", "indexIncludingParams", "concurrent", "options"}, loc);
  if (body.contains("options")) storage_parameters(body.at("options"), loc);
  CreateIndex ix;
  std::string alias;
  std::tie(ix.table, alias) = relation(body.at("relation"), loc);
  ix.unique = body.value("unique", false);
  ix.name = body.value("idxname", "");
  ix.if_not_exists = body.value("if_not_exists", false);
  ix.concurrently = body.value("concurrent", false);
  // A unique index decides which rows conflict: it is a btree on columns, whose INCLUDE
  // columns are not part of the key. Another index only speeds reads up.
  if (body.value("accessMethod", "btree") != "btree") {
    if (ix.unique) refuse(fmt::format("a unique index USING {}", body.value("accessMethod", "")), loc);
    ix.opaque = true;
  }
  if (body.contains("indexIncludingParams") && !ix.unique) ix.opaque = true;
  for (const json& p : body.at("indexParams")) {
    const json& elem = *node(p).second;
    if (!elem.contains("name")) {
      if (!ix.unique) {
        ix.opaque = true;
        continue;
      }
      // A unique index on an expression: its value in each row is the key part.
      known(elem, "IndexElem", {"expr", "ordering", "nulls_ordering"}, loc);
      ix.expressions.resize(ix.columns.size());
      ix.expressions.push_back(std::make_shared<Expr>(expr(elem.at("expr"), loc)));
      const std::string figured = column_name(elem.at("expr"));  // what the index's own name takes
      ix.columns.push_back(figured == "?column?" ? "expr" : figured);
      continue;
    }
    // An operator class (pg-boss's `name text_pattern_ops`) decides what a plain index can
    // serve, never which rows it holds; a unique one's could change what conflicts.
    if (elem.contains("opclass") && ix.unique) refuse("an operator class in a unique index", loc);
    if (!ix.opaque) known(elem, "IndexElem", {"name", "ordering", "nulls_ordering", "opclass"}, loc);
    ix.columns.push_back(elem.at("name"));
    if (!ix.expressions.empty()) ix.expressions.emplace_back();
  }
  if (body.contains("whereClause")) ix.where = std::make_shared<Expr>(expr(body.at("whereClause"), loc));
  const auto reads = [&ix](const json& j, const auto& self) -> void {
    if (j.is_array()) {
      for (const json& e : j) self(e, self);
      return;
    }
    if (!j.is_object()) return;
    if (const auto elem = j.find("IndexElem"); elem != j.end() && elem->contains("name")) ix.reads.push_back(elem->at("name"));
    if (const auto ref = j.find("ColumnRef"); ref != j.end() && !ref->value("fields", json::array()).empty()) {
      ix.reads.push_back(ref->at("fields").back().value("String", json::object()).value("sval", ""));
    }
    for (const auto& [k, v] : j.items()) self(v, self);
  };
  for (const char* part : {"indexParams", "indexIncludingParams", "whereClause"}) {
    if (body.contains(part)) reads(body.at(part), reads);
  }
  return ix;
}

Transaction Reader::transaction(const json& body) {
  const int loc = statement_start_;
  known(body, "TransactionStmt", {"kind", "options", "savepoint_name"}, loc);
  const std::string kind = body.value("kind", "");
  Transaction t;
  if (kind == "TRANS_STMT_BEGIN" || kind == "TRANS_STMT_START") {
    t.kind = Transaction::Kind::begin;
    t.start = kind == "TRANS_STMT_START";
  } else if (kind == "TRANS_STMT_COMMIT") {
    t.kind = Transaction::Kind::commit;
  } else if (kind == "TRANS_STMT_ROLLBACK") {
    t.kind = Transaction::Kind::rollback;
  } else if (kind == "TRANS_STMT_SAVEPOINT") {
    t.kind = Transaction::Kind::savepoint;
  } else if (kind == "TRANS_STMT_RELEASE") {
    t.kind = Transaction::Kind::release;
  } else if (kind == "TRANS_STMT_ROLLBACK_TO") {
    t.kind = Transaction::Kind::rollback_to;
  } else {
    refuse(kind == "TRANS_STMT_PREPARE" || kind == "TRANS_STMT_COMMIT_PREPARED" || kind == "TRANS_STMT_ROLLBACK_PREPARED"
               ? std::string("prepared transactions")
               : fmt::format("the transaction statement {}", kind),
           loc);
  }
  t.savepoint = body.value("savepoint_name", "");
  if (body.contains("options")) transaction_options(body.at("options"), t, loc);
  return t;
}

void Reader::transaction_options(const json& options, Transaction& t, int loc) {
  for (const json& o : options) {
    const json& d = *node(o).second;
    const std::string name = d.value("defname", "");
    const int dloc = location_of(d, loc);
    if (name == "transaction_read_only") {  // an integer constant: 1 READ ONLY, 0 (no value) READ WRITE
      const json& c = *node(d.at("arg")).second;
      t.read_only = c.contains("ival") && c.at("ival").value("ival", 0) != 0;
      continue;
    }
    if (name != "transaction_isolation") refuse(fmt::format("the transaction option {}", name == "transaction_deferrable" ? "DEFERRABLE" : name), dloc);
    const std::string level = node(d.at("arg")).second->at("sval").value("sval", "");
    if (level == "read committed") {
      t.isolation = Isolation::read_committed;
    } else if (level == "repeatable read") {
      t.isolation = Isolation::repeatable_read;
    } else if (level == "serializable") {
      t.isolation = Isolation::serializable;
    } else {
      refuse(fmt::format("ISOLATION LEVEL {}", level), dloc);
    }
  }
}

Select Reader::show(const json& body) {
  known(body, "VariableShowStmt", {"name"}, statement_start_);
  std::string name = body.value("name", "");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
  if (name == "all") refuse("SHOW ALL", statement_start_);
  // Its column: the setting's name as the server spells it.
  const std::string column = name == "timezone" ? "TimeZone" : name == "datestyle" ? "DateStyle" : name == "intervalstyle" ? "IntervalStyle" : name;
  Expr call;
  call.kind = Expr::Kind::func;
  call.name = "current_setting";
  call.location = statement_start_;
  Expr& arg = call.args.emplace_back();
  arg.kind = Expr::Kind::constant;
  arg.value = Value::text(name);
  Select s;
  s.targets.push_back(Target{.expr = std::move(call), .name = column});
  s.show = true;
  return s;
}

LockTables Reader::lock_tables(const json& body) {
  known(body, "LockStmt", {"relations", "mode", "nowait"}, statement_start_);
  LockTables l;
  for (const json& r : body.at("relations")) l.tables.push_back(relation(*node(r).second, statement_start_).first);
  l.mode = body.value("mode", 8);
  l.nowait = body.value("nowait", false);
  return l;
}

LockTables Reader::vacuum(const json& body) {
  const int loc = statement_start_;
  known(body, "VacuumStmt", {"options", "rels", "is_vacuumcmd"}, loc);
  LockTables l;
  l.mode = 4;  // SHARE UPDATE EXCLUSIVE
  l.maintenance = body.value("is_vacuumcmd", false) ? LockTables::Maintenance::vacuum : LockTables::Maintenance::analyze;
  const char* command = l.maintenance == LockTables::Maintenance::vacuum ? "VACUUM" : "ANALYZE";
  if (body.contains("options")) {
    for (const json& o : body.at("options")) {
      const json& d = *node(o).second;
      const std::string name = d.value("defname", "");
      if (name != "freeze" && name != "analyze") refuse(fmt::format("{} ({})", command, name), location_of(d, loc));
    }
  }
  if (!body.contains("rels")) refuse(fmt::format("{} of every table", command), loc);
  for (const json& r : body.at("rels")) {
    const json& rel = *node(r).second;
    if (rel.contains("va_cols")) refuse(fmt::format("{} of named columns", command), loc);
    l.tables.push_back(relation(rel.at("relation"), loc).first);
  }
  return l;
}

LockTables Reader::truncate(const json& body) {
  const int loc = statement_start_;
  known(body, "TruncateStmt", {"relations", "restart_seqs", "behavior"}, loc);
  if (body.value("restart_seqs", false)) refuse("TRUNCATE ... RESTART IDENTITY", loc);
  LockTables l;
  l.mode = 8;  // ACCESS EXCLUSIVE
  l.maintenance = LockTables::Maintenance::truncate;
  l.cascade = body.value("behavior", "") == "DROP_CASCADE";
  for (const json& r : body.at("relations")) l.tables.push_back(relation(*node(r).second, loc).first);
  return l;
}

LockTables Reader::comment(const json& body) {
  const int loc = statement_start_;
  known(body, "CommentStmt", {"objtype", "object", "comment"}, loc);
  const std::string kind = body.value("objtype", "");
  if (kind != "OBJECT_TABLE") {
    std::string words = kind.starts_with("OBJECT_") ? kind.substr(7) : kind;  // OBJECT_MATVIEW: COMMENT ON MATVIEW
    std::replace(words.begin(), words.end(), '_', ' ');
    refuse(fmt::format("COMMENT ON {}", words), loc);
  }
  std::vector<std::string> parts;
  for (const json* p : items(body.at("object"))) parts.push_back(str(*p));
  if (parts.size() == 2) parts.erase(parts.begin());  // schema.table: the table (plan.h's Schema)
  if (parts.size() != 1) refuse("a database-qualified name", loc);
  LockTables l;
  l.mode = 4;  // SHARE UPDATE EXCLUSIVE, to the transaction's end
  l.maintenance = LockTables::Maintenance::comment;
  l.tables.push_back(parts[0]);
  return l;
}

int Reader::leading_blank(std::string_view s, int len) {
  const std::size_t end = len > 0 ? std::min(s.size(), static_cast<std::size_t>(len)) : s.size();
  std::size_t at = 0;
  while (at < end) {
    if (std::isspace(static_cast<unsigned char>(s[at])) != 0) {
      ++at;
    } else if (s.substr(at, 2) == "--") {
      const std::size_t eol = s.find('\n', at);
      at = eol == std::string_view::npos ? end : eol + 1;
    } else if (s.substr(at, 2) == "/*") {  // (not nested: a nested comment ends the skip early)
      const std::size_t close = s.find("*/", at + 2);
      at = close == std::string_view::npos ? end : close + 2;
    } else {
      break;
    }
  }
  return static_cast<int>(std::min(at, end));
}

std::string_view Reader::trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

SetVariable Reader::set_variable(const json& body) {
  const int loc = statement_start_;
  known(body, "VariableSetStmt", {"kind", "name", "args", "is_local"}, loc);
  const std::string kind = body.value("kind", "");
  SetVariable s;
  s.name = body.value("name", "");
  s.local = body.value("is_local", false);
  s.reset = kind == "VAR_RESET";
  if (kind == "VAR_SET_MULTI" && s.name == "SESSION CHARACTERISTICS") {  // pgjdbc's setTransactionIsolation
    Transaction t;
    transaction_options(body.at("args"), t, loc);
    if (t.read_only || !t.isolation) refuse("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY / READ WRITE", loc);
    s.name = "default_transaction_isolation";
    s.value = *t.isolation == Isolation::serializable ? "serializable" : *t.isolation == Isolation::repeatable_read ? "repeatable read" : "read committed";
    return s;
  }
  if (kind == "VAR_SET_MULTI") refuse(fmt::format("SET {}", s.name == "TRANSACTION" ? "TRANSACTION" : s.name), loc);
  // application_name: any text (pg_stat_activity's), RESET the connection's;
  // default_transaction_isolation: the level BEGIN takes (checked as it runs).
  if (s.name == "application_name" || s.name == "default_transaction_isolation") {
    s.style = s.name == "application_name";
    if (kind == "VAR_RESET" || kind == "VAR_SET_DEFAULT") return s;
    const json* args = kind == "VAR_SET_VALUE" ? &body.at("args") : nullptr;
    const json* c = args != nullptr && args->size() == 1 ? node(args->at(0)).second : nullptr;
    if (c == nullptr || !c->contains("sval")) refuse(fmt::format("this value for {}", s.name), loc);
    s.value = c->at("sval").value("sval", "");
    return s;
  }
  if (is_pinned_style(s.name)) {
    // SET TimeZone / DateStyle / IntervalStyle: the value the simulation models, or refused;
    // search_path: any list of schemas.
    const bool path = s.name == "search_path";
    if (kind == "VAR_RESET" || kind == "VAR_SET_DEFAULT") {  // RESET, SET ... TO DEFAULT, SET TIME ZONE LOCAL: the server's default
      s.value = "";
      s.style = true;
      s.reset = kind == "VAR_RESET";
      return s;
    }
    if (kind != "VAR_SET_VALUE") refuse(fmt::format("SET ({}) of {}", kind, s.name), loc);
    if (s.name == "timezone") {
      if (auto offset = zone_offset_value(body.at("args"), loc)) {
        s.value = std::move(*offset);
        s.style = true;
        return s;
      }
    }
    std::vector<std::string> words;
    std::string as_written;  // the last word before lower case (a TimeZone's name in 22023)
    for (const json& a : body.at("args")) {
      const json& c = *node(a).second;
      if (!c.contains("sval")) refuse(fmt::format("this value for {}", s.name), location_of(c, loc));
      std::string w = c.at("sval").value("sval", "");
      if (path) {  // a name that is not a plain identifier is printed quoted, as SHOW does
        const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](unsigned char ch) { return std::islower(ch) || std::isdigit(ch) || ch == '_'; }) &&
                           std::isdigit(static_cast<unsigned char>(w[0])) == 0;
        words.push_back(plain ? w : fmt::format("\"{}\"", w));
        continue;
      }
      as_written = w;
      std::transform(w.begin(), w.end(), w.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
      words.push_back(std::move(w));
    }
    const std::string value = fmt::format("{}", fmt::join(words, ", "));
    if (!is_modeled_style(s.name, value)) {
      // A zone name the system's tzdata lacks is the server's 22023; an offset or a POSIX rule is refused.
      const bool zone_name = s.name == "timezone" && words.size() == 1 && is_zone_name(value) &&
                             std::none_of(value.begin(), value.end(), [](unsigned char ch) { return std::isdigit(ch) != 0; });
      if (zone_name) fail("22023", fmt::format("invalid value for parameter \"TimeZone\": \"{}\"", as_written), loc);
      refuse(fmt::format("{} '{}' (the simulation models TimeZone UTC, the system tzdata's zones, hours and POSIX rules, DateStyle ISO "
                         "and Postgres, IntervalStyle postgres and postgres_verbose)", s.name, value), loc);
    }
    // pg_tz_acceptable: a zone whose offset at 2000-01-01 has seconds (a POSIX rule's) is refused.
    if (const TimeZone* zone = s.name == "timezone" ? find_time_zone(value) : nullptr; zone != nullptr && zone->at(0).seconds % 60 != 0) {
      fail("22023", fmt::format("time zone \"{}\" appears to use leap seconds", as_written), loc);
    }
    s.value = value;
    s.style = true;
    return s;
  }
  if (!is_setting(s.name) && !is_custom_setting(s.name)) refuse(fmt::format("the setting {}", s.name), loc);
  if (kind == "VAR_SET_VALUE") {
    const json& args = body.at("args");
    if (args.size() != 1) refuse("a list value", loc);
    const json& c = *node(args.at(0)).second;
    if (c.contains("sval")) {
      s.value = c.at("sval").value("sval", "");
    } else if (c.contains("ival")) {
      const json& ival = c.at("ival");  // a negative one is left out of the JSON: read from the text
      s.value = std::to_string(ival.contains("ival") ? ival.value("ival", std::int64_t{0}) : integer_at(location_of(c, loc)));
    } else if (c.contains("fval") && is_custom_setting(s.name)) {
      s.value = c.at("fval").value("fval", "");
    } else {
      refuse("this value for a setting", location_of(c, loc));
    }
  } else if (kind != "VAR_SET_DEFAULT" && kind != "VAR_RESET") {
    refuse(fmt::format("SET ({})", kind), loc);
  }
  return s;
}

}  // namespace detail
}  // namespace lockstep::sql
