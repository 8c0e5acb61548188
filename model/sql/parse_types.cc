// model/sql/parse_types.cc: a type name with its modifiers (bit(n), numeric(p, s),
// timestamp(p), varchar(n), arrays) as a column's, a cast's or a parameter's type; CREATE TYPE
// ... AS ENUM, CREATE TYPE ... AS (fields) and ALTER TYPE ... ADD VALUE read into CreateType
// (model/sql/plan.h); COLLATE clauses.
#include <algorithm>

#include <fmt/ranges.h>

#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql::detail {

Type Reader::type_of(const json& type_name, int fallback, ColumnDef* column, std::string* user_type, Expr* cast) const {
  known(type_name, "TypeName", {"names", "typemod", "typmods", "arrayBounds", "setof"}, fallback);  // setof: RETURNS SETOF's (parse_functions.cc)
  const int loc = location_of(type_name, fallback);
  const std::vector<std::string> parts = names(type_name.at("names"));
  const std::string& name = parts.back();
  const bool array = type_name.contains("arrayBounds");
  if (array && type_name.at("arrayBounds").size() != 1) refuse("multidimensional arrays", loc);
  if (array && name == "bpchar") refuse("arrays of char(n)", loc);
  auto as_array = [&](Type element) {
    if (!array) return element;
    if (column != nullptr) column->element = element;
    if (cast != nullptr) cast->element = element;
    return Type::array;
  };
  const std::optional<Type> t = type_of_name(name);
  if (!t) {
    // A name no built-in type has is a type the server may have (CREATE TYPE ... AS ENUM):
    // the server resolves it (42704 when it has none). Built-in types outside the subset are
    // refused by name.
    static constexpr std::string_view kBuiltIn[] = {
        "numeric", "decimal", "float4", "float8", "real", "double", "money", "varbit", "date", "time",
        "timetz", "xml", "inet", "cidr", "macaddr", "macaddr8", "point", "line", "lseg", "box", "path", "polygon",
        "circle", "tsvector", "tsquery", "bpchar", "char", "character", "name", "oid", "regclass", "int4range", "int8range",
        "tsrange", "tstzrange", "daterange", "numrange", "jsonpath", "pg_lsn", "citext", "hstore", "ltree", "record", "void",
        "timestamptz_", "interval_"};
    const bool built_in = parts.front() == "pg_catalog" || std::find(std::begin(kBuiltIn), std::end(kBuiltIn), name) != std::end(kBuiltIn);
    if (built_in || user_type == nullptr || type_name.contains("typmods")) refuse(fmt::format("the type {}", name), loc);
    *user_type = name;
    add_once(types_, {parts.size() >= 2 ? parts[parts.size() - 2] : std::string(), name});
    return as_array(Type::enum_);
  }
  if (*t == Type::bit) {
    // bit without a length is bit(1), as the server reads it.
    int length = 1;
    if (type_name.contains("typmods")) {
      const json& mods = type_name.at("typmods");
      const json& mod = *node(mods.at(0)).second;
      if (mods.size() != 1 || !mod.contains("ival")) refuse("this type modifier", loc);
      length = mod.at("ival").value("ival", 0);
      if (length < 1) fail("22023", "length for type bit must be at least 1", loc);
      if (length > 83'886'080) fail("22023", "length for type bit cannot exceed 83886080", loc);
      if (length > 65'536) refuse(fmt::format("bit({}) (up to 65536 bits are)", length), loc);
    }
    if (column != nullptr) column->bits = length;
    if (cast != nullptr) cast->typmod = length;
  } else if (type_name.contains("typmods") && *t == Type::numeric) {
    // numeric(precision[, scale]): values rounded to the scale, 22003 beyond the precision.
    const json& mods = type_name.at("typmods");
    std::array<int, 2> m{0, 0};
    if (mods.size() > 2) refuse("this type modifier", loc);
    for (std::size_t i = 0; i < mods.size(); ++i) {
      const json& mod = *node(mods.at(i)).second;
      // A negative scale's (and 0's) "ival" is empty in libpg_query's JSON: read from the text.
      const bool given = mod.contains("ival") && mod.at("ival").contains("ival");
      m[i] = given ? mod.at("ival").value("ival", 0) : static_cast<int>(integer_at(location_of(mod, loc)));
    }
    if (m[0] < 1 || m[0] > 1000) fail("22023", fmt::format("NUMERIC precision {} must be between 1 and 1000", m[0]), loc);
    if (m[1] < -1000 || m[1] > 1000) fail("22023", fmt::format("NUMERIC scale {} must be between -1000 and 1000", m[1]), loc);
    if (m[0] > 38) refuse(fmt::format("numeric precision {} (1 to 38 are)", m[0]), loc);
    if (m[1] > 38 || m[0] - std::min(m[1], 0) > 38) refuse(fmt::format("numeric({}, {}) (38 digits are)", m[0], m[1]), loc);
    if (column != nullptr) {
      column->numeric_precision = m[0];
      column->numeric_scale = m[1];
    }
    if (cast != nullptr) cast->typmod = (m[0] << 16) | (m[1] & 0xffff);  // the scale as int16 (numeric_typmod_scale)
  } else if (type_name.contains("typmods") && is_timestamp(*t)) {
    // timestamp(p): values rounded to p fractional digits (6, the server's own: kept as they are).
    const json& mods = type_name.at("typmods");
    const json& mod = *node(mods.at(0)).second;
    // A 0 or a negative precision has no "ival" of its own: read from the text.
    const bool given = mod.contains("ival") && mod.at("ival").contains("ival");
    const int precision = given ? mod.at("ival").value("ival", 0) : mod.contains("ival") ? static_cast<int>(integer_at(location_of(mod, loc))) : -1;
    if (mods.size() == 1 && mod.contains("ival") && precision < 0) {
      fail("22023", fmt::format("TIMESTAMP({}){} precision must not be negative", precision, *t == Type::timestamptz ? " WITH TIME ZONE" : ""), loc);
    }
    if (mods.size() != 1 || precision < 0 || precision > 6) {
      refuse(fmt::format("a precision other than 0 to 6 on {}", ::lockstep::sql::type_name(*t)), loc);
    }
    if (column != nullptr) column->time_precision = precision;
    if (cast != nullptr) cast->typmod = precision;
  } else if (type_name.contains("typmods")) {
    if (name != "varchar" && name != "bpchar") refuse(fmt::format("a type modifier on {}", name), loc);
    const json& mods = type_name.at("typmods");
    const json& mod = *node(mods.at(0)).second;
    if (mods.size() != 1 || !mod.contains("ival")) refuse("this type modifier", loc);
    const int length = mod.at("ival").value("ival", 0);
    if (length < 1) fail("22023", fmt::format("length for type {} must be at least 1", name == "bpchar" ? "char" : name), loc);
    if (length > 10'485'760) fail("22023", fmt::format("length for type {} cannot exceed 10485760", name == "bpchar" ? "char" : name), loc);
    if (column != nullptr) column->max_length = length;
    if (cast != nullptr) cast->typmod = length;  // an explicit cast truncates to it
  }
  if (column != nullptr) column->serial = !array && (name == "serial" || name == "bigserial" || name == "serial4" ||
                                                     name == "serial8" || name == "smallserial" || name == "serial2");
  return as_array(*t);
}

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
