// sim/pg/executor/sql_set_operations.cc: UNION, INTERSECT and EXCEPT [ALL] on the simulated server
// (sim/pg/executor/sql_run.h). Each side runs as a subquery in the step running (its tables read there);
// a column's values take the two sides' common type (an untyped literal takes the other's,
// numbers the wider, else 42804); without ALL, rows repeat once (NULLs equal); with ALL,
// INTERSECT keeps the fewer copies and EXCEPT the difference. ORDER BY (output columns),
// OFFSET and LIMIT apply to the result. Without ORDER BY rows come left side first, in each
// side's order; at the top, two or more rows of a hashed operation are refused, a UNION over a
// column no hash opclass has comes sorted on every column (its plan's Sort and Unique).
#include <algorithm>

#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {
namespace {

// A column's type on one side: its declared one (a table's column), else its first value's;
// an enum's by its own name.
struct SetType {
  Type type = Type::unknown;
  std::string user_type;
  std::string name() const { return type == Type::enum_ && !user_type.empty() ? user_type : std::string(sql::type_name(type)); }
};

// The common type of a column's two sides.
SetType set_common_type(const SetType& a, const SetType& b, std::string_view op) {
  if ((a.type == b.type && (a.type != Type::enum_ || a.user_type == b.user_type)) || b.type == Type::unknown) return a;
  if (a.type == Type::unknown) return b;
  if (sql::is_numeric_category(a.type) && sql::is_numeric_category(b.type)) return {sql::numeric_common_type(a.type, b.type), {}};
  if (sql::is_timestamp(a.type) && sql::is_timestamp(b.type)) return {Type::timestamptz, {}};
  throw SqlError("42804", fmt::format("{} types {} and {} cannot be matched", op, a.name(), b.name()));
}

// A type PostgreSQL has no hash opclass for (bit, bit varying; json has no equality at all),
// or an array of one: a UNION over such a column is a Sort and a Unique, never hashed.
bool set_unhashable(Type t, Type element) { return t == Type::bit || t == Type::json || (t == Type::array && set_unhashable(element, Type::unknown)); }

// Rows as a Sort on every column in order (ascending, NULLS LAST: the default operators) puts them.
bool set_sorted_before(const std::vector<Value>& a, const std::vector<Value>& b) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].is_null() || b[i].is_null()) {
      if (a[i].is_null() != b[i].is_null()) return b[i].is_null();
      continue;
    }
    const auto order = sql::compare(a[i], b[i], "<");
    if (order != 0) return order < 0;
  }
  return false;
}

}  // namespace

std::vector<std::vector<Value>> SqlRun::set_operation_values(const sql::Select& sel) {
  const sql::SetOperation& so = *sel.set_op;
  const std::string_view op = so.op == sql::SetOperation::Op::union_ ? "UNION" : so.op == sql::SetOperation::Op::intersect ? "INTERSECT" : "EXCEPT";
  // The output columns: the first query's (`*` expanded now, with the catalog).
  const std::vector<sql::ColumnDef> columns = output_columns(*so.left);
  const std::vector<sql::ColumnDef> right_columns = output_columns(*so.right);
  const std::size_t width = columns.size();
  if (right_columns.size() != width) throw SqlError("42601", fmt::format("each {} query must have the same number of columns", op));
  std::vector<std::vector<Value>> left = run_subquery(*so.left, /*per_row=*/false);
  std::vector<std::vector<Value>> right = run_subquery(*so.right, /*per_row=*/false);
  std::vector<SetType> types(width);
  for (const auto& [side, declared] : {std::pair{&left, &columns}, std::pair{&right, &right_columns}}) {
    for (std::size_t i = 0; i < width; ++i) {
      SetType t{(*declared)[i].type, (*declared)[i].user_type};
      for (const auto& row : *side) {
        if (t.type != Type::unknown) break;
        if (!row[i].is_null() && row[i].type() != Type::unknown) t = {row[i].type(), row[i].type() == Type::enum_ ? sql::enum_type_name(row[i]) : ""};
      }
      types[i] = set_common_type(types[i], t, op);
    }
  }
  for (auto* side : {&left, &right}) {
    for (auto& row : *side) {
      for (std::size_t i = 0; i < width; ++i) {
        const Type t = types[i].type == Type::unknown ? Type::text : types[i].type;
        if (t == Type::enum_ && row[i].type() == Type::unknown) {
          row[i] = row[i].is_null() ? row[i] : sql::cast_to_column(row[i], t, types[i].user_type);
        } else if (row[i].type() != t && (row[i].type() == Type::unknown || sql::is_numeric_category(t) || sql::is_timestamp(t))) {
          row[i] = sql::cast(row[i], t);
        }
      }
    }
  }
  if (!(so.all && so.op == sql::SetOperation::Op::union_)) {  // rows compared: json has no equality operator
    for (const SetType& t : types) {
      if (t.type == Type::json) throw SqlError("42883", "could not identify an equality operator for type json");
    }
  }
  std::vector<std::vector<Value>> out;
  auto count_in = [](const std::vector<std::vector<Value>>& rows, const std::vector<Value>& row) {
    return std::count_if(rows.begin(), rows.end(), [&](const auto& r) { return same_values(r, row); });
  };
  auto distinct = [&](std::vector<std::vector<Value>> rows) {
    std::vector<std::vector<Value>> kept;
    for (auto& r : rows) {
      if (count_in(kept, r) == 0) kept.push_back(std::move(r));
    }
    return kept;
  };
  if (so.op == sql::SetOperation::Op::union_) {
    out = std::move(left);
    for (auto& r : right) out.push_back(std::move(r));
    if (!so.all) out = distinct(std::move(out));
  } else if (so.all) {
    std::vector<std::vector<Value>> remaining = right;
    for (auto& r : left) {
      const auto it = std::find_if(remaining.begin(), remaining.end(), [&](const auto& x) { return same_values(x, r); });
      const bool found = it != remaining.end();
      if (found) remaining.erase(it);
      if (found == (so.op == sql::SetOperation::Op::intersect)) out.push_back(std::move(r));
    }
  } else {
    for (auto& r : distinct(std::move(left))) {
      if ((count_in(right, r) > 0) == (so.op == sql::SetOperation::Op::intersect)) out.push_back(std::move(r));
    }
  }
  if (sel.order_by.empty() && !sel.limit && !sel.offset) return out;
  // ORDER BY, OFFSET and LIMIT over the result: a relation of the output columns.
  SqlTable result;
  for (std::size_t i = 0; i < width; ++i) result.def.columns.push_back(sql::ColumnDef{.name = columns[i].name, .type = types[i].type == Type::unknown ? Type::text : types[i].type, .user_type = types[i].user_type});
  std::vector<std::pair<std::int64_t, Row>> rows;
  for (std::size_t k = 0; k < out.size(); ++k) {
    Row& row = rows.emplace_back(static_cast<std::int64_t>(k), Row{}).second;
    for (std::size_t i = 0; i < width; ++i) {
      if (!out[k][i].is_null()) row.emplace(result.def.columns[i].name, out[k][i].text_output());
    }
  }
  const Saved saved = save();
  sort(rows, sel, &result);
  restore(saved);
  const std::int64_t offset = bound(sel.offset, "OFFSET");
  const std::int64_t limit = sel.limit ? bound(sel.limit, "LIMIT") : -1;
  std::vector<std::vector<Value>> ordered;
  for (std::size_t k = static_cast<std::size_t>(offset); k < rows.size(); ++k) {
    if (limit >= 0 && static_cast<std::int64_t>(ordered.size()) >= limit) break;
    ordered.push_back(std::move(out[static_cast<std::size_t>(rows[k].first)]));
  }
  return ordered;
}

Result<Rows> SqlRun::select_set_operation(const sql::Select& sel) {
  SimConnection::Statement guard(c_);
  declare_ctes(sel.with);  // those that lock rows take their steps now
  if (auto refused = begin("sql_scan", Footprint{})) return *refused;  // each side's tables are touched as read
  Rows out;
  for (const sql::ColumnDef& c : output_columns(sel)) out.columns.push_back(c.name);
  std::vector<std::vector<Value>> rows = select_values(sel, nullptr, true);
  bool sorted = false;
  // UNION, INTERSECT and EXCEPT without ALL (and INTERSECT ALL, EXCEPT ALL) run on the server
  // as a HashAggregate or HashSetOp: two or more rows come in its hash table's order, which
  // lockstep does not model. Refused rather than answered in another order; UNION ALL is an
  // Append (left side first), and ORDER BY fixes the order.
  // A UNION of two plain queries with a column no hash opclass has (River's unique_states bit(8))
  // is always a Sort on every column and a Unique: its rows come in that order.
  const sql::SetOperation* so = sel.set_op ? &*sel.set_op : nullptr;
  if (rows.size() >= 2 && sel.order_by.empty() && !sel.limit && !sel.offset && so != nullptr && so->op == sql::SetOperation::Op::union_ && !so->all && !so->left->set_op &&
      !so->right->set_op) {
    const std::vector<sql::ColumnDef> columns = output_columns(*so->left);
    bool unhashable = false;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      unhashable = unhashable || set_unhashable(columns[i].type, columns[i].element);
      for (const std::vector<Value>& row : rows) {
        if (i < row.size() && !row[i].is_null()) unhashable = unhashable || set_unhashable(row[i].type(), row[i].type() == Type::array ? row[i].array_element() : Type::unknown);
      }
    }
    if (unhashable) std::stable_sort(rows.begin(), rows.end(), set_sorted_before);
    sorted = unhashable;
  }
  if (rows.size() >= 2 && sel.order_by.empty() && !sorted) {
    if (const char* op = hashed_set_operation(sel)) {
      throw SqlError("0A000", fmt::format("{} returning two or more rows without ORDER BY is not in lockstep's SQL subset: the "
                                          "server returns them in its hash table's order (add ORDER BY)",
                                          op));
    }
  }
  add_rows(out, std::move(rows));
  return done(std::move(out));
}

const char* SqlRun::hashed_set_operation(const sql::Select& sel) {
  if (!sel.set_op) return nullptr;
  const sql::SetOperation& so = *sel.set_op;
  if (!so.all || so.op != sql::SetOperation::Op::union_) {
    return so.op == sql::SetOperation::Op::union_ ? "UNION" : so.op == sql::SetOperation::Op::intersect ? "INTERSECT" : "EXCEPT";
  }
  if (const char* left = hashed_set_operation(*so.left)) return left;
  return hashed_set_operation(*so.right);
}

}  // namespace lockstep::sim::pg
