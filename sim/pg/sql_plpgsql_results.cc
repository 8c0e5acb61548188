// sim/pg/sql_plpgsql_results.cc: what a LANGUAGE plpgsql function gives back besides RETURN's
// value: RAISE's message text, and a set-returning function's rows (RETURN NEXT, RETURN QUERY)
// checked against its result type as pl_exec.c checks them.
#include <fmt/format.h>

#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/sim/pg/sql_plpgsql.h"
#include "lockstep/sim/pg/sql_rows.h"

namespace lockstep::sim::pg {
namespace {

using sql::SqlError;
using sql::Type;
using sql::Value;

// The function's result columns: its row type's (a table's or a composite type's), or one of
// its scalar type.
std::vector<sql::ColumnDef> set_result_columns(const sql::CreateFunction& f, int& row_type) {
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

}  // namespace

std::string raise_message(const sql::PlStatement& s, const std::function<std::optional<std::string>(const std::string&)>& argument) {
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

std::vector<Value> returned_set_row(const sql::CreateFunction& f, const Value& v) {
  int row_type = -1;
  const std::vector<sql::ColumnDef> columns = set_result_columns(f, row_type);
  if (row_type < 0) return {assigned(v, f.returns, f.name)};
  if (v.type() != Type::record || (!v.is_null() && v.record_type() != row_type)) throw SqlError("42804", "wrong record type supplied in RETURN NEXT");
  if (v.is_null()) return std::vector<Value>(columns.size(), Value::null());
  return sql::record_fields(v);
}

void append_query_rows(const sql::CreateFunction& f, std::vector<std::vector<Value>> rows, std::vector<std::vector<Value>>& into) {
  int row_type = -1;
  const std::vector<sql::ColumnDef> columns = set_result_columns(f, row_type);
  for (std::vector<Value>& row : rows) {
    bool matches = row.size() == columns.size();
    for (std::size_t i = 0; matches && i < row.size(); ++i) matches = set_same_type(row[i], columns[i]);
    if (!matches) throw SqlError("42804", "structure of query does not match function result type");
    into.push_back(std::move(row));
  }
}

}  // namespace lockstep::sim::pg
