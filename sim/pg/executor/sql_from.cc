// sim/pg/executor/sql_from.cc: a FROM other than one table (model/sql/plan.h's FromItem) on the simulated
// server (sim/pg/executor/sql_run.h). Its items are joined as nested loops, in the order written, into
// one relation whose columns are named "relation\x1fcolumn" (SqlTable::joined); the rest of
// SELECT (WHERE, GROUP BY, ORDER BY, LIMIT, the select list) runs on that relation as on a
// table. Every table the FROM names is read in the step running (a statement's first step),
// so the join sees one moment of the database. A LEFT JOIN keeps a left row without a match,
// the right side NULL; a subquery or function is evaluated once per row of the items before it
// (LATERAL or not: an uncorrelated one gives the same rows each time).
#include <algorithm>
#include <array>
#include <utility>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/json_populate.h"
#include "lockstep/model/sql/json_text.h"
#include "lockstep/sim/invariant.h"
#include "lockstep/model/sql/user_functions.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {
namespace {

constexpr char kFromSeparator = '\x1f';
constexpr char kDuplicateMark = '\x1d';  // a column's name repeated in its relation: "name" kDuplicateMark n

// The column names a set-returning function gives without column aliases.
std::vector<std::string> from_function_columns(const sql::FromItem& f) {
  const std::string& n = f.function.at(0).name;
  std::vector<std::string> names;
  if (n == "jsonb_each" || n == "jsonb_each_text") {
    names = {"key", "value"};
  } else if (n == "jsonb_array_elements" || n == "jsonb_array_elements_text" || n == "json_array_elements" || n == "json_array_elements_text") {
    names = {"value"};
  } else if (n == "unnest" && f.function.at(0).args.size() > 1) {
    names.assign(f.function.at(0).args.size(), "unnest");  // unnest(a, b, ...): a column each
  } else {
    names = {f.alias.empty() ? n : f.alias};  // a function of no named output: the relation's name
  }
  if (f.ordinality) names.emplace_back("ordinality");
  return names;
}

// A composite type's row type a value of `e` has, as the parser types it: a cast to the type
// (`NULL::job_spec`), json[b]_populate_record[set] of such a base; else -1.
int from_static_row_type(const Expr& e) {
  if (e.kind == Expr::Kind::cast && e.type == Type::enum_) return sql::row_type_index(e.name);
  if (e.kind == Expr::Kind::func && sql::is_json_populate(e.name) && !e.args.empty()) return from_static_row_type(e.args[0]);
  return -1;
}

// unnest(array)'s row type when the array's elements are records (a composite type's array:
// graphile-worker's `unnest(specs) spec`), else -1: a cast to job_spec[], ARRAY[...] or ARRAY
// (SELECT ...) of such values, or a parameter's or variable's value (typed when bound).
int from_unnest_row_type(const sql::FromItem& f, sql::EvalContext& run, sql::EvalContext* variables) {
  if (f.kind != sql::FromItem::Kind::function || f.function.size() != 1 || f.function[0].name != "unnest" || f.function[0].args.size() != 1) return -1;
  const Expr& a = f.function[0].args[0];
  auto of_value = [](const Value& v) { return v.type() == Type::array && v.array_element() == Type::record ? v.array_enum() : -1; };
  switch (a.kind) {
    case Expr::Kind::cast: return a.type == Type::array && a.element == Type::enum_ ? sql::row_type_index(a.name) : -1;
    case Expr::Kind::array: return a.args.empty() ? -1 : from_static_row_type(a.args[0]);
    case Expr::Kind::subquery:
      return a.name == "ARRAY" && a.select != nullptr && a.select->targets.size() == 1 ? from_static_row_type(a.select->targets[0].expr) : -1;
    case Expr::Kind::param: return of_value(run.param(a.number));
    case Expr::Kind::column: return variables != nullptr && variables->names_variable(a) ? of_value(variables->column(a)) : -1;
    default: return -1;
  }
}

// pg_locks' columns as lockstep models them (an advisory lock's row: relation, page, tuple,
// virtualxid and transactionid NULL; virtualtransaction and waitstart refused when the
// statement is read); pg_database's (the one database).
constexpr std::string_view kFromDatabaseOid = "5";  // initdb's postgres, current_database()
std::vector<std::pair<std::string_view, Type>> from_pg_locks_columns() {
  return {{"locktype", Type::text},     {"database", Type::oid},     {"relation", Type::oid},     {"page", Type::int4},  {"tuple", Type::int2},
          {"virtualxid", Type::text},   {"transactionid", Type::text}, {"classid", Type::oid}, {"objid", Type::oid},
          {"objsubid", Type::int2},     {"pid", Type::int4},         {"mode", Type::text},  {"granted", Type::boolean},
          {"fastpath", Type::boolean}};
}

// pg_stat_activity's columns as lockstep models them: a client backend's (the others are
// refused when the statement is read: model/sql/parse_system_views.cc).
std::vector<std::pair<std::string_view, Type>> from_pg_stat_activity_columns() {
  return {{"datid", Type::oid},          {"datname", Type::text}, {"pid", Type::int4},  {"usename", Type::text},
          {"application_name", Type::text}, {"state", Type::text},   {"query", Type::text}, {"backend_type", Type::text}};
}

// json[b]_populate_record[set](NULL::name, ...)'s columns: its base's row type's (a table's or
// a composite type's).
std::vector<sql::ColumnDef> from_populate_columns(const sql::FromItem& f) {
  const Expr& call = f.function.at(0);
  const std::string& type = call.args.at(0).name;
  const int row = sql::row_type_index(type);
  if (row < 0 && sql::has_declared_type(type)) throw SqlError("42804", fmt::format("first argument of {} must be a row type", call.name));
  if (row < 0) throw SqlError("42704", fmt::format("type \"{}\" does not exist", type));
  std::vector<sql::ColumnDef> columns;
  for (const sql::ColumnDef& c : sql::record_definition(row).columns) {
    columns.push_back(sql::ColumnDef{.name = c.name, .type = c.type, .max_length = c.max_length, .user_type = c.user_type, .element = c.element,
                                     .bits = c.bits, .numeric_precision = c.numeric_precision, .numeric_scale = c.numeric_scale,
                                     .time_precision = c.time_precision});
  }
  return columns;
}


// A FROM of one subquery over one table, sorted first by no column an index of that table
// leads with: its Sort reads every row (and makes its lock calls) before the first goes up,
// on the server too, so a Limit above it stops nothing those calls did.
bool sorted_whole(Server& server, const sql::Select& sel) {
  if (sel.from.size() != 1 || sel.from[0].kind != sql::FromItem::Kind::subquery || sel.from[0].select == nullptr) return false;
  const sql::Select& sub = *sel.from[0].select;
  const SqlTable* t = sub.table.empty() || sub.limit ? nullptr : server.sql_table(sub.table);
  if (t == nullptr || sub.order_by.empty()) return false;
  const Expr* first = &sub.order_by.front().expr;
  if (first->kind == Expr::Kind::constant && !first->folded && sql::is_integer(first->value.type())) {
    const std::int64_t n = first->value.as_integer();
    if (n < 1 || n > static_cast<std::int64_t>(sub.targets.size()) || sub.targets[static_cast<std::size_t>(n) - 1].star) return false;
    first = &sub.targets[static_cast<std::size_t>(n) - 1].expr;
  }
  if (first->kind != Expr::Kind::column) return std::none_of(t->unique.begin(), t->unique.end(), [](const SqlTable::UniqueKey& u) { return !u.expressions.empty(); }) &&
                                              std::all_of(t->indexes.begin(), t->indexes.end(), [](const SqlTable::PlainIndex& i) { return !i.columns.empty(); });
  const int column = t->column(first->name);
  const auto leads = [&](int c) { return c == column; };
  if (!t->key.empty() && leads(t->key.front())) return false;
  for (const SqlTable::UniqueKey& u : t->unique) {
    if (u.columns.empty() || leads(u.columns.front()) || u.columns.front() < 0) return false;
  }
  return std::none_of(t->indexes.begin(), t->indexes.end(), [&](const SqlTable::PlainIndex& i) { return i.columns.empty() || i.columns.front() == first->name; });
}

}  // namespace

int SqlRun::joined_column(const SqlTable& t, const Expr& ref) const {
  int found = -1;
  const std::size_t end = &t == arguments_of_.relation ? arguments_of_.columns : t.def.columns.size();
  std::string_view qualifier = ref.qualifier;
  if (const auto merged = using_columns_.find({&t, ref.name}); qualifier.empty() && merged != using_columns_.end()) {
    // JOIN ... USING's column: the left side's, unless another relation has one of the name.
    const UsingColumn& u = merged->second;
    const bool elsewhere = std::any_of(t.def.columns.begin(), t.def.columns.begin() + static_cast<std::ptrdiff_t>(end), [&](const sql::ColumnDef& c) {
      const auto [relation, column] = joined_name(c);
      return column == ref.name && relation != u.left && relation != u.right;
    });
    if (u.left.empty() || elsewhere) throw SqlError("42702", fmt::format("column reference \"{}\" is ambiguous", ref.name));
    qualifier = u.left;
  }
  for (std::size_t i = 0; i < end; ++i) {
    const auto [relation, column] = joined_name(t.def.columns[i]);
    if (column != ref.name) continue;
    if (!qualifier.empty() && relation != qualifier) continue;
    if (found >= 0) {
      throw SqlError("42702", fmt::format("column reference \"{}\" is ambiguous", ref.name));  // (qualified too: one relation's two)
    }
    found = static_cast<int>(i);
  }
  if (found >= 0 || !qualifier.empty()) return found;
  for (const auto& [relation, name] : scalar_functions_) {
    if (relation != &t || name != ref.name) continue;
    for (std::size_t i = 0; i < end; ++i) {
      if (joined_name(t.def.columns[i]).first == name) return static_cast<int>(i);
    }
  }
  return -1;
}

std::string SqlRun::joined_row_id(std::string_view relation) {
  return fmt::format("{}{}\x1e", relation, kFromSeparator);  // no column's name
}

std::pair<std::string_view, std::string_view> SqlRun::joined_name(const sql::ColumnDef& c) {
  const std::size_t sep = c.name.find(kFromSeparator);
  const std::string_view column = std::string_view(c.name).substr(sep + 1);
  return {std::string_view(c.name).substr(0, sep), column.substr(0, column.find(kDuplicateMark))};
}

void SqlRun::from_columns(const sql::FromItem& f, SqlTable& jt) {
  using K = sql::FromItem::Kind;
  if (f.kind == K::join) {
    for (const sql::FromItem& side : f.sides) from_columns(side, jt);
    for (const std::string& column : f.using_columns) {  // JOIN ... USING
      std::array<const sql::ColumnDef*, 2> found{};
      for (std::size_t side = 0; side < 2; ++side) {
        const std::string name = sql::from_item_name(f.sides[side]) + kFromSeparator + column;
        const auto c = std::find_if(jt.def.columns.begin(), jt.def.columns.end(), [&](const sql::ColumnDef& c) { return c.name == name; });
        if (c == jt.def.columns.end()) {
          throw SqlError("42703", fmt::format("column \"{}\" specified in USING clause does not exist in {} table", column, side == 0 ? "left" : "right"));
        }
        found[side] = &*c;
      }
      // The merged column has the two's common type (buildMergedJoinVar): one type only here.
      if (found[0]->type != found[1]->type && found[0]->type != Type::unknown && found[1]->type != Type::unknown) {
        throw SqlError("0A000", fmt::format("JOIN ... USING ({}) of columns of two types is not in lockstep's SQL subset (docs/sql.md)", column));
      }
      const auto [merged, added] = using_columns_.emplace(std::pair{&jt, column}, UsingColumn{sql::from_item_name(f.sides[0]), sql::from_item_name(f.sides[1])});
      if (!added) merged->second = {};  // merged by two joins: ambiguous
    }
    return;
  }
  const std::string relation = sql::from_item_name(f);
  if (std::any_of(jt.def.columns.begin(), jt.def.columns.end(), [&](const sql::ColumnDef& c) { return joined_name(c).first == relation; })) {
    throw SqlError("42712", fmt::format("table name \"{}\" specified more than once", relation));
  }
  std::vector<sql::ColumnDef> columns;
  if (f.kind == K::table && f.table == "pg_locks") {
    for (const auto& [name, type] : from_pg_locks_columns()) columns.push_back(sql::ColumnDef{.name = std::string(name), .type = type});
  } else if (f.kind == K::table && f.table == "pg_database") {
    columns.push_back(sql::ColumnDef{.name = "oid", .type = Type::oid});
    columns.push_back(sql::ColumnDef{.name = "datname", .type = Type::text});
  } else if (f.kind == K::table && f.table == "pg_stat_activity") {
    for (const auto& [name, type] : from_pg_stat_activity_columns()) columns.push_back(sql::ColumnDef{.name = std::string(name), .type = type});
  } else if (f.kind == K::table) {
    const SqlTable* t = table(f.table);
    for (const sql::ColumnDef& c : t->def.columns) {
      columns.push_back(c);
      columns.back().default_value.reset();
      columns.back().generated.reset();
    }
  } else if (f.kind == K::subquery) {
    const sql::Select& sub = *f.select;
    declare_subquery_ctes(sub);
    const SqlTable* source = sub.table.empty() ? nullptr : table(sub.table);
    static const std::vector<sql::Target> kNone;
    if (sub.set_op) {  // UNION ...: its first query's columns
      for (const sql::ColumnDef& c : output_columns(sub)) columns.push_back(sql::ColumnDef{.name = c.name, .type = Type::unknown});
    }
    for (const sql::Target& target : sub.set_op ? kNone : targets_of(sub)) {
      if (target.star && source == nullptr && !sub.from.empty()) {  // * or t.* of the subquery's own FROM items
        for (const sql::ColumnDef& c : from_relation(sub)->def.columns) {
          if (target.star_of.empty() || joined_name(c).first == target.star_of) {  // keeps an enum's or array's type
            columns.push_back(sql::ColumnDef{.name = std::string(joined_name(c).second), .type = c.type, .user_type = c.user_type, .element = c.element});
          }
        }
        continue;
      }
      if (target.star) {
        if (source == nullptr) throw SqlError("0A000", "SELECT * in a subquery in FROM without one table is not in lockstep's SQL subset");
        for (const sql::ColumnDef& c : source->def.columns) {
          columns.push_back(sql::ColumnDef{.name = c.name, .type = c.type, .user_type = c.user_type, .element = c.element});
        }
        continue;
      }
      sql::ColumnDef column{.name = target.name, .type = Type::unknown};
      if (std::optional<sql::ColumnDef> typed = static_column(target.expr, sub)) {  // a row, or a row's field
        column.type = typed->type;
        column.user_type = typed->user_type;
        column.element = typed->element;
      }
      columns.push_back(std::move(column));
    }
  } else if (f.kind == K::values) {
    for (std::size_t i = 0; i < f.values.front().size(); ++i) {
      columns.push_back(sql::ColumnDef{.name = fmt::format("column{}", i + 1), .type = Type::unknown});
    }
  } else if (f.kind == K::function && f.function.at(0).kind == Expr::Kind::user_func) {
    // A function the server has: a table's row type gives its columns, another type one column.
    const std::string& n = f.function.at(0).name;
    const sql::CreateFunction* fn = sql::user_function_of_call(f.function.at(0), *this);
    if (fn == nullptr) throw SqlError("0A000", fmt::format("the function {}() in FROM is not in lockstep's SQL subset (docs/sql.md), nor a function created on the server", n));
    const SqlTable* table = fn->returns.type == Type::enum_ ? server_.sql_table(fn->returns.user_type) : nullptr;
    const sql::CreateTable* rows = table != nullptr ? &table->def : fn->returns.type == Type::enum_ ? server_.composite_type(fn->returns.user_type) : nullptr;
    if (!fn->outs.empty()) {  // OUT parameters or RETURNS TABLE: a column each, of its name
      for (const sql::FunctionParam& p : fn->outs) columns.push_back(p.type);  // a parameter's type is named as it
    } else if (rows != nullptr) {
      for (const sql::ColumnDef& c : rows->columns) columns.push_back(sql::ColumnDef{.name = c.name, .type = c.type, .user_type = c.user_type, .element = c.element});
    } else {
      columns.push_back(sql::ColumnDef{.name = f.alias.empty() ? std::string(sql::bare_function_name(n)) : f.alias, .type = fn->returns.type, .user_type = fn->returns.user_type, .element = fn->returns.element});
    }
  } else if (!f.column_definitions.empty() || (f.kind == K::function && sql::is_json_populate(f.function.at(0).name))) {
    // json_to_recordset(...) AS x(name type, ...); json_populate_record(NULL::name, ...)
    columns = f.column_definitions.empty() ? from_populate_columns(f) : f.column_definitions;
    if (f.ordinality) columns.push_back(sql::ColumnDef{.name = "ordinality", .type = Type::int8});
  } else if (const int row = from_unnest_row_type(f, *this, function_params_); row >= 0) {  // a composite type's fields
    for (const sql::ColumnDef& c : sql::record_definition(row).columns) {
      columns.push_back(sql::ColumnDef{.name = c.name, .type = c.type, .user_type = c.user_type, .element = c.element});
    }
    if (f.ordinality) columns.push_back(sql::ColumnDef{.name = "ordinality", .type = Type::int8});
  } else {
    for (const std::string& n : from_function_columns(f)) columns.push_back(sql::ColumnDef{.name = n, .type = Type::unknown});
    if (f.ordinality) columns.back().type = Type::int8;
  }
  if (f.column_aliases.size() > columns.size()) {
    throw SqlError("42P10", fmt::format("table \"{}\" has {} columns available but {} columns specified", relation, columns.size(),
                                        f.column_aliases.size()));
  }
  for (std::size_t i = 0; i < f.column_aliases.size(); ++i) columns[i].name = f.column_aliases[i];
  if (f.kind == K::function && f.column_definitions.empty() && columns.size() == 1 && f.function.size() == 1) {
    scalar_functions_.emplace_back(&jt, relation);
  }
  from_first_column_[&f] = jt.def.columns.size();
  if (f.kind != K::table) jt.derived.push_back(relation);
  std::map<std::string, int> seen;  // a name twice (`unnest(a, b)`, a subquery's `1 AS x, 2 AS x`): the later one kept apart
  for (sql::ColumnDef& c : columns) {
    if (const int n = seen[c.name]++; n > 0) c.name += fmt::format("{}{}", kDuplicateMark, n);
    c.name = relation + kFromSeparator + c.name;
    jt.def.columns.push_back(std::move(c));
  }
}

// A leaf's rows as values (subquery, VALUES, function), read with the row of the items before it.
std::vector<std::vector<Value>> SqlRun::from_leaf_values(const sql::FromItem& f) {
  using K = sql::FromItem::Kind;
  if (f.kind == K::subquery) return run_subquery(*f.select, /*per_row=*/false);
  std::vector<std::vector<Value>> out;
  if (f.kind == K::values) {
    for (const std::vector<Expr>& row : f.values) {
      std::vector<Value> values;
      for (const Expr& e : row) values.push_back(sql::evaluate(e, *this));
      out.push_back(std::move(values));
    }
    return out;
  }
  const Expr& call = f.function.at(0);
  if (call.kind == Expr::Kind::user_func) {  // one row: a record's fields (all NULL for a NULL record), or the value
    if (const sql::CreateFunction* fn = sql::user_function_of_call(call, *this); fn != nullptr && (fn->returns_set || !fn->outs.empty())) {
      struct Reset {  // the call's RETURN NEXT and RETURN QUERY rows (sql_plpgsql.cc)
        std::vector<std::vector<Value>>*& slot;
        ~Reset() { slot = nullptr; }
      } reset{set_rows_};
      set_rows_ = &out;
      (void)sql::evaluate(call, *this);
      return out;
    }
    const Value v = sql::evaluate(call, *this);
    if (v.type() != Type::record) return {{v}};
    std::vector<Value>& row = out.emplace_back();
    for (const sql::ColumnDef& c : sql::record_definition(v.record_type()).columns) row.push_back(sql::record_field(v, c.name));
    return out;
  }
  if (call.name.ends_with("_to_recordset") || sql::is_json_populate(call.name)) {
    // A JSON object's fields as the columns' values (model/sql/json_populate.h).
    const bool populate = sql::is_json_populate(call.name);
    const std::vector<sql::ColumnDef> columns = populate ? from_populate_columns(f) : f.column_definitions;
    const Value base = populate ? sql::evaluate(call.args.at(0), *this) : Value::null(Type::unknown);
    const Value json = sql::evaluate(call.args.at(populate ? 1 : 0), *this);
    const std::vector<Value> base_fields = base.is_null() ? std::vector<Value>{} : sql::record_fields(base);
    const sql::ColumnInput input = [&](Value text, const sql::ColumnDef& c) { return assigned(std::move(text), c, call.name); };
    if (call.name.ends_with("_recordset")) {
      out = sql::json_array_rows(call.name, json, columns, base_fields, input);
    } else {
      const Value object = json.is_null() ? json : sql::cast(json, call.name.starts_with("jsonb") ? Type::jsonb : Type::json);
      out.push_back(sql::json_populate_row(object, columns, base_fields, input));
    }
  } else {
    out = function_rows(call);
    const bool records = std::any_of(out.begin(), out.end(), [](const std::vector<Value>& r) { return r.size() == 1 && r[0].type() == Type::record; });
    if (const int row = from_unnest_row_type(f, *this, function_params_); row >= 0) {
      for (std::vector<Value>& r : out) r = sql::record_fields(sql::cast_to_row_type(r.at(0), row));
    } else if (records && call.name == "unnest") {
      throw SqlError("0A000", "unnest() in FROM of an array of records whose type is not written beside it (a cast, ARRAY[...] of casts, a parameter) is not in lockstep's SQL subset");
    }
  }
  if (f.ordinality) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i].push_back(Value::integer(static_cast<std::int64_t>(i) + 1, Type::int8));
  }
  return out;
}

std::vector<std::vector<Value>> SqlRun::function_rows(const Expr& call) {
  LOCKSTEP_INVARIANT(!call.name.ends_with("_to_recordset"), "a recordset's rows are from_leaf_values'");
  std::vector<std::vector<Value>> out;
  std::vector<Value> args;
  for (const Expr& a : call.args) args.push_back(sql::evaluate(a, *this));
  const std::string& n = call.name;
  if (sql::is_json_populate(n)) {  // json[b]_populate_recordset in a select list: a record of base's type per element
    if (args.at(0).type() != Type::record) throw SqlError("42804", fmt::format("first argument of {} must be a row type", n));
    const int type = args[0].record_type();
    const std::vector<sql::ColumnDef>& columns = sql::record_definition(type).columns;
    const std::vector<Value> base = args[0].is_null() ? std::vector<Value>{} : sql::record_fields(args[0]);
    const sql::ColumnInput input = [&](Value text, const sql::ColumnDef& c) { return assigned(std::move(text), c, n); };
    for (const std::vector<Value>& row : sql::json_array_rows(n, args.at(1), columns, base, input)) out.push_back({sql::make_record(type, row)});
  } else if (n == "unnest") {  // several arrays (FROM's): side by side, NULLs past a shorter one's end
    std::vector<std::vector<Value>> columns;
    for (const Value& a : args) {
      if (!a.is_null() && a.type() != Type::array) throw SqlError("42883", fmt::format("function unnest({}) does not exist", sql::type_name(a.type())));
      columns.push_back(a.is_null() ? std::vector<Value>{} : sql::array_elements(a));
      out.resize(std::max(out.size(), columns.back().size()));
    }
    for (std::size_t i = 0; i < out.size(); ++i) {
      for (const std::vector<Value>& c : columns) out[i].push_back(i < c.size() ? c[i] : Value::null());
    }
  } else if (n == "generate_series") {
    for (const Value& a : args) {
      if (a.is_null()) return out;
    }
    if (args.size() == 3 && sql::is_timestamp(args[0].type())) {
      out = from_time_series(args);
    } else {
      for (const Value& a : args) {
        if (!sql::is_integer(a.type()) && a.type() != Type::unknown) {
          throw SqlError("0A000", fmt::format("generate_series of {} is not in lockstep's SQL subset (integers and timestamps are)",
                                              sql::type_name(a.type())));
        }
      }
      const Type type = std::any_of(args.begin(), args.end(), [](const Value& a) { return a.type() == Type::int8; }) ? Type::int8 : Type::int4;
      const std::int64_t from = sql::cast(args[0], type).as_integer(), to = sql::cast(args.at(1), type).as_integer();
      const std::int64_t step = args.size() > 2 ? sql::cast(args[2], type).as_integer() : 1;
      if (step == 0) throw SqlError("22023", "step size cannot equal zero");
      // In 128 bits: the span of int8 bounds overflows 64 (the spec fuzzer's -9223372036854775808).
      if ((static_cast<__int128>(to) - from) / step > 100'000) {
        throw SqlError("0A000", "generate_series of more than 100000 rows is not in lockstep's SQL subset");
      }
      for (__int128 i = from; step > 0 ? i <= to : i >= to; i += step) out.push_back({Value::integer(static_cast<std::int64_t>(i), type)});
    }
  } else if (n.starts_with("json_")) {
    out = sql::json_rows(n, args.at(0));  // json_array_elements[_text]: json as written (model/sql/json_text.h)
  } else {
    out = sql::jsonb_rows(n, args.at(0));  // jsonb_array_elements[_text], jsonb_each[_text], jsonb_object_keys
  }
  return out;
}

// generate_series(start, stop, step interval) of timestamps (with or without time zone):
// start, start + step, ... while not past stop (in step's direction), each added as `+` adds.
std::vector<std::vector<Value>> SqlRun::from_time_series(const std::vector<Value>& args) {
  const Type type = args[0].type();
  const Value stop = sql::cast(args[1], type);
  if (args[2].type() != Type::interval && args[2].type() != Type::unknown) {
    throw SqlError("42883", fmt::format("function generate_series({}, {}, {}) does not exist", sql::type_name(type),
                                        sql::type_name(args[1].type()), sql::type_name(args[2].type())));
  }
  const Value step = sql::cast(args[2], Type::interval);
  const auto direction = sql::compare(step, Value::interval(0));
  if (direction == 0) throw SqlError("22023", "step size cannot equal zero");
  Expr plus;
  plus.kind = Expr::Kind::op;
  plus.name = "+";
  plus.args.resize(2);
  plus.args[1].kind = Expr::Kind::constant;
  plus.args[1].value = step;
  std::vector<std::vector<Value>> out;
  for (Value t = args[0];;) {
    const auto c = sql::compare(t, stop);
    if (direction > 0 ? c > 0 : c < 0) break;
    if (out.size() >= 100'000) throw SqlError("0A000", "generate_series of more than 100000 rows is not in lockstep's SQL subset");
    out.push_back({t});
    plus.args[0].kind = Expr::Kind::constant;
    plus.args[0].value = t;
    t = sql::evaluate(plus, *this);
  }
  return out;
}

std::vector<Row> SqlRun::from_rows(const sql::FromItem& f, SqlTable& jt, const std::vector<Row>& left) {
  using K = sql::FromItem::Kind;
  const Saved saved = save();
  std::vector<Row> out;
  // EvalPlanQual: the item's one row (sql_lock_rows.cc); a subquery's own FROM runs as usual.
  if (const auto one = epq_rows_ != nullptr ? epq_rows_->find(&f) : decltype(epq_rows_->find(&f)){}; epq_rows_ != nullptr && one != epq_rows_->end()) {
    for (const Row& l : one->second ? left : std::vector<Row>{}) {
      Row& joined = out.emplace_back(l);
      joined.insert(one->second->begin(), one->second->end());
    }
    return out;
  }
  if (f.kind == K::join) {
    const std::vector<Row> l = from_rows(f.sides[0], jt, left);
    auto keep = [&](Row& r) {
      if (f.on.empty()) return true;
      table_ = &jt;
      alias_ = {};
      row_ = &r;
      const auto rest = leaf_quals_ != nullptr ? leaf_quals_->on_rest.find(&f.on.front()) : decltype(leaf_quals_->on_rest.find(nullptr)){};
      if (leaf_quals_ == nullptr || rest == leaf_quals_->on_rest.end()) return sql::is_true(sql::evaluate(f.on.front(), *this), "JOIN/ON");
      return std::all_of(rest->second.begin(), rest->second.end(), [&](const Expr* q) { return sql::is_true(sql::evaluate(*q, *this), "JOIN/ON"); });
    };
    for (const Row& row : l) {
      std::vector<Row> matched = from_rows(f.sides[1], jt, {row});
      std::erase_if(matched, [&](Row& r) { return !keep(r); });
      if (matched.empty() && f.left && (leaf_quals_ == nullptr || !leaf_quals_->reduced.contains(&f))) out.push_back(row);  // (a WHERE made it inner)
      for (Row& r : matched) out.push_back(std::move(r));
    }
    restore(saved);
    return out;
  }
  if (f.kind == K::table && f.table == "pg_database") {
    const std::string prefix = sql::from_item_name(f) + kFromSeparator;
    for (const Row& l : left) {
      Row& joined = out.emplace_back(l);
      joined.emplace(joined_row_id(sql::from_item_name(f)), "");
      joined.emplace(prefix + "oid", kFromDatabaseOid);
      joined.emplace(prefix + "datname", "postgres");
    }
    return out;
  }
  if (f.kind == K::table && f.table == "pg_stat_activity") {
    // The live client backends (a statement keeps one pid: parse_system_views.cc): reading
    // them reads every session's state, in the step running now.
    if (s_.in_actor()) s_.also_touch_domain();
    const std::string prefix = sql::from_item_name(f) + kFromSeparator;
    // As the transaction's first read found them (pgstat's snapshot).
    if (!c_.activity_) {
      c_.activity_.emplace();
      for (const int pid : server_.live_pids()) {
        const Session& backend = *server_.live_session(pid);
        c_.activity_->push_back({pid, backend.application_name, std::string(backend.state()), backend.query});
      }
    }
    for (const Row& l : left) {
      for (const SimConnection::Activity& backend : *c_.activity_) {
        Row& joined = out.emplace_back(l);
        joined.emplace(joined_row_id(sql::from_item_name(f)), "");
        joined.emplace(prefix + "datid", kFromDatabaseOid);
        joined.emplace(prefix + "datname", "postgres");
        joined.emplace(prefix + "pid", std::to_string(backend.pid));
        joined.emplace(prefix + "usename", "postgres");
        joined.emplace(prefix + "application_name", backend.application_name);
        joined.emplace(prefix + "state", backend.state);
        joined.emplace(prefix + "query", backend.query);
        joined.emplace(prefix + "backend_type", "client backend");
      }
    }
    return out;
  }
  if (f.kind == K::table && f.table == "pg_locks") {
    // The lock manager's advisory rows (model/sql/parse_system_views.cc keeps a statement to
    // those): reading them reads the whole server, in the step running now.
    if (s_.in_actor()) s_.also_touch_domain();
    const std::string prefix = sql::from_item_name(f) + kFromSeparator;
    std::vector<Row> rows;
    for (const lockstep::pg::AdvisoryLockRow& l : server_.advisory_lock_rows(s_.now())) {
      Row& r = rows.emplace_back();
      r.emplace(joined_row_id(sql::from_item_name(f)), "");
      r.emplace(prefix + "locktype", "advisory");
      r.emplace(prefix + "database", kFromDatabaseOid);
      r.emplace(prefix + "classid", std::to_string(l.classid));
      r.emplace(prefix + "objid", std::to_string(l.objid));
      r.emplace(prefix + "objsubid", std::to_string(l.objsubid));
      r.emplace(prefix + "pid", std::to_string(l.pid));
      r.emplace(prefix + "mode", l.mode);
      r.emplace(prefix + "granted", l.granted ? "t" : "f");
      r.emplace(prefix + "fastpath", "f");
    }
    for (const Row& l : left) {
      for (const Row& r : rows) {
        Row& joined = out.emplace_back(l);
        joined.insert(r.begin(), r.end());
      }
    }
    return out;
  }
  if (f.kind == K::table) {
    const std::string prefix = sql::from_item_name(f) + kFromSeparator;
    SqlTable* t = table(f.table);
    touch(*t);  // read in the step running now
    std::vector<Row> rows;
    const auto read = relation_rows(*t);
    if (derived_of(t) != nullptr) {  // a WITH query's columns are typed as it runs (type_columns): their copies here too
      const std::size_t first = from_first_column_.at(&f);
      for (std::size_t i = 0; i < t->def.columns.size() && first + i < jt.def.columns.size(); ++i) {
        sql::ColumnDef& c = jt.def.columns[first + i];
        if (c.type != Type::unknown) continue;
        const sql::ColumnDef& typed = t->def.columns[i];
        c.type = typed.type, c.user_type = typed.user_type, c.element = typed.element;
      }
    }
    for (const auto& [id, r] : read) {
      Row& renamed = rows.emplace_back();
      for (const auto& [column, text] : *r) renamed.emplace(prefix + column, text);
      renamed.emplace(joined_row_id(sql::from_item_name(f)), derived_of(t) == nullptr ? std::to_string(id) : "");  // for FOR UPDATE
    }
    filter_leaf(f, jt, rows);  // its scan's own conditions (sql_scan_quals.cc)
    for (const Row& l : left) {
      for (const Row& r : rows) {
        Row& joined = out.emplace_back(l);
        joined.insert(r.begin(), r.end());
      }
    }
    return out;
  }
  const std::size_t first = from_first_column_.at(&f);
  for (const Row& l : left) {
    table_ = &jt;
    alias_ = {};
    row_ = &l;
    // Its arguments name the items before it only (not its own columns: `value`).
    const ArgumentsOf outer = std::exchange(arguments_of_, {&jt, first});
    std::vector<std::vector<Value>> leaf;
    try {
      leaf = from_leaf_values(f);
    } catch (...) {
      arguments_of_ = outer;
      throw;
    }
    arguments_of_ = outer;
    for (std::vector<Value>& values : leaf) {
      Row& joined = out.emplace_back(l);
      joined.emplace(joined_row_id(sql::from_item_name(f)), "");
      for (std::size_t i = 0; i < values.size(); ++i) {
        Value& v = values[i];
        if (v.is_null()) continue;
        sql::ColumnDef& c = jt.def.columns.at(first + i);
        if (c.type == Type::unknown) {  // a column of no declared type takes its first value's (an untyped literal: text)
          c.type = v.type() == Type::unknown ? Type::text : v.type();
          if (v.type() == Type::array) c.element = v.array_element();
          if (v.type() == Type::enum_) c.user_type = sql::enum_type_name(v);
          if (v.type() == Type::record) c.user_type = sql::record_definition(v.record_type()).table;
        }
        joined.emplace(c.name, std::move(v).text_output());
      }
    }
  }
  restore(saved);
  return out;
}

SqlTable* SqlRun::from_relation(const sql::Select& sel) {
  auto jt = std::make_unique<SqlTable>();
  jt->joined = true;
  for (const sql::FromItem& f : sel.from) from_columns(f, *jt);
  from_tables_.push_back(std::move(jt));
  return from_tables_.back().get();
}

std::vector<std::pair<std::int64_t, Row>> SqlRun::from_scan(const sql::Select& sel, SqlTable& jt, std::int64_t enough) {
  std::vector<Row> rows{Row{}};
  const std::int64_t holds = enough >= 0 ? advisory_holds() : 0;
  LeafQuals leaves;
  const std::vector<const Expr*> rest = push_to_leaves(sel, jt, leaves);
  LeafQuals* const outer_leaves = std::exchange(leaf_quals_, leaves.at.empty() ? nullptr : &leaves);
  try {
    for (const sql::FromItem& f : sel.from) rows = from_rows(f, jt, rows);
  } catch (...) {
    leaf_quals_ = outer_leaves;
    throw;
  }
  leaf_quals_ = outer_leaves;
  // Its relations are read whole here; the server's Limit stops pulling them: a reader that
  // stops early while they took advisory locks would lock rows the server never reaches.
  const bool locked = enough >= 0 && advisory_holds() != holds && !sorted_whole(server_, sel);
  std::vector<std::pair<std::int64_t, Row>> out;
  const Saved saved = save();
  for (Row& r : rows) {
    if (enough >= 0 && static_cast<std::int64_t>(out.size()) >= enough) {
      if (locked) {
        throw SqlError("0A000", "a LIMIT that stops reading a FROM of joins or subqueries whose rows took advisory locks is not in "
                                "lockstep's SQL subset (docs/sql.md)");
      }
      break;
    }
    table_ = &jt;
    alias_ = {};
    row_ = &r;
    if (sel.where && leaves.at.empty() && !sql::is_true(sql::evaluate(*sel.where, *this))) continue;
    if (!leaves.at.empty() && !std::all_of(rest.begin(), rest.end(), [&](const Expr* q) { return sql::is_true(sql::evaluate(*q, *this)); })) continue;
    out.emplace_back(static_cast<std::int64_t>(out.size()), std::move(r));
  }
  restore(saved);
  return out;
}

void SqlRun::touch(const SqlTable& t) {
  if (t.object == kNoObject || !s_.in_actor()) return;
  if (c_.try_step_ != s_.step_count()) {
    s_.also_touch(t.object);
    return;
  }
  // A lock try's step ends at its try: a read after it, as the try's outcome decides (Que's
  // recursive lock_job reads the next job when a try fails), is a step of its own, so the
  // try's footprint is its lock's alone, which is what optimal DPOR works out for a try that
  // a race moves (docs/engine.md).
  c_.step(OpDesc{"sql_scan", on(t.object, Access::read)});
  if (c_.killed()) throw Raised{c_.terminated()};
}

Result<Rows> SqlRun::select_from_items(const sql::Select& sel) {
  SimConnection::Statement guard(c_);
  if (!sel.with.empty()) check_read_only();  // before a WITH query's locks or writes
  declare_ctes(sel.with);  // those that lock rows take their steps now
  SqlTable* jt = from_relation(sel);
  if (sel.lock != sql::RowLock::none) (void)locked_tables(sel);  // its errors, before any step (the server's: after the table locks)
  check_read_only();
  if (auto refused = begin("sql_scan", Footprint{})) return *refused;  // each table is touched as it is read
  Rows out;
  std::vector<std::vector<Value>> rows = select_values(sel, jt, true);
  // pg_locks lists its rows in the lock manager's hash table order, which lockstep does not
  // model: two or more rows of a statement that reads it are refused without ORDER BY.
  auto reads_pg_locks = [](const sql::FromItem& f, const auto& self) -> bool {
    if (f.kind == sql::FromItem::Kind::table && f.table == "pg_locks") return true;
    return std::any_of(f.sides.begin(), f.sides.end(), [&](const sql::FromItem& side) { return self(side, self); });
  };
  if (rows.size() >= 2 && sel.order_by.empty() &&
      std::any_of(sel.from.begin(), sel.from.end(), [&](const sql::FromItem& f) { return reads_pg_locks(f, reads_pg_locks); })) {
    throw SqlError("0A000", "pg_locks returning two or more rows without ORDER BY is not in lockstep's SQL subset: the server "
                            "lists them in its lock table's hash order (add ORDER BY)");
  }
  add_rows(out, std::move(rows));
  out.columns = column_names(targets_of(sel), jt, {});
  return done(std::move(out));
}

}  // namespace lockstep::sim::pg
