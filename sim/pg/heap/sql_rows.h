// sim/pg/heap/sql_rows.h: a table's stored rows outside a statement's run, internal to sim/pg: a
// row's values read as their columns' types, assignment casts, generated columns, CHECK
// constraints, unique keys and partial indexes, ON CONFLICT's arbiters, and which scan the
// planner picks as far as row order goes (sim/pg/executor/sql_scan_order.cc). No step, no lock: pure
// functions of the table's definition and a row.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/plan.h"
#include "lockstep/sim/pg/server/sim_pg.h"

namespace lockstep::sim::pg {

using lockstep::pg::Row;

// Whether the server's planner, on a table never analyzed, reads `where` on table t (named
// `alias` in the statement) with a bitmap heap scan: a conjunct of it compares the leading
// column of the primary key or of a unique index with an expression of no column (=, <, <=,
// >, >=, BETWEEN, IN (...), = ANY (...), IS NULL), or is an OR of such arms (BitmapOr).
// Such a scan visits rows in the order of their HOT chains' roots (sim/pg/executor/sql_scan_order.cc).
// A plpgsql variable (named by `variables`, a running function's frame) is a Param there.
bool sql_scan_has_index_qual(const SqlTable& t, std::string_view alias, const sql::Expr& where, const sql::EvalContext* variables = nullptr,
                             bool plain = false);  // plain: or a plain btree's leading column
// Whether a scan's Filter `where` takes steps as it runs for each row (a lock function, or a
// created function whose body is statements) and has no subquery: under LockRows or ModifyTable,
// which pull one row at a time, its calls then interleave with the rows' locks and writes.
bool sql_filter_steps_per_row(const sql::Expr& where);
// ... the first half alone: whether evaluating `e` takes steps (outside its subqueries).
bool sql_expr_takes_steps(const sql::Expr& e);
// Whether row `r`, which a statement read on its snapshot at commit count `read` (none held:
// nullopt, false), is still that version for session `pid`: no commit changed it since and
// `pid` has not written it. A lock taken on it then holds the version read, and the server's
// executor does not check WHERE again (no EvalPlanQual: a lock call there runs once).
inline bool sql_row_as_read(const RowState& r, std::optional<std::uint64_t> read, int pid) {
  return read && !r.changed_since(*read) && r.pending.count(pid) == 0;
}
// The btree that holds column c alone, without a predicate: the primary key (`primary`) or a
// unique index or constraint of c (`unique`); neither found: `found` false.
struct SingleColumnIndex {
  bool found = false;
  bool primary = false;
  const SqlTable::UniqueKey* unique = nullptr;
};
SingleColumnIndex sql_single_column_index(const SqlTable& t, int c);
// Whether an ORDER BY starting with `first` may be read from an index instead of sorted: it
// is a column leading the primary key or a unique index without a predicate (plain indexes'
// columns are not kept).
bool sql_order_has_index(const SqlTable& t, std::string_view alias, const sql::Expr& first);
// The order an index scan for ORDER BY `order` (its expression `first`, an output name resolved)
// returns rows in: that column, then the other columns of the index it leads (the primary key,
// else the first unique index without a predicate), in its direction; just `order` otherwise,
// also where WHERE pins the column to one value or a list (the planner then drops the ORDER BY).
std::vector<sql::OrderItem> sql_index_order(const SqlTable& t, std::string_view alias, const sql::OrderItem& order, const sql::Expr& first,
                                            const sql::Expr* where);
// Whether `SELECT ... WHERE where ORDER BY order LIMIT n` (one ORDER BY item, no grouping) is
// the planner's Limit over an index scan in that order, WHERE its Filter: the scan stops once
// the Limit has its rows, so WHERE runs for the rows up to there only. `first` (order's
// expression, an output name resolved) is a NOT NULL column alone in the primary key or a
// unique index (no ties), and no index qual of WHERE makes another plan cheaper (an Index
// Cond on that column, an equality, IN or = ANY, two ranges: not this).
bool sql_limit_reads_index_order(const SqlTable& t, std::string_view alias, const sql::Expr& first, const sql::OrderItem& order,
                                 const std::optional<sql::Expr>& where,
                                 const sql::EvalContext* variables = nullptr);

// A stored row's value of column i: its text read as the column's type (absent: NULL).
// A Sort's order on values in turn: ascending, NULLs last (GROUP BY's and DISTINCT's keys).
bool sql_keys_ascending(const std::vector<sql::Value>& a, const std::vector<sql::Value>& b);

sql::Value stored(const SqlTable& t, const Row& row, int i);
// The value as column c stores it (PostgreSQL's assignment casts, NOT NULL, varchar(n)).
sql::Value assigned(sql::Value v, const sql::ColumnDef& c, const std::string& table, bool not_null_checked = true);
// 23502 for a NOT NULL column `row` has no value of: checked after BEFORE ROW triggers (assigned's otherwise).
void check_not_null(const SqlTable& t, const Row& row);
// Computes the row's generated columns (GENERATED ALWAYS AS (expr) STORED) from its others.
void compute_generated(const SqlTable& t, Row& row);
// 23514 when one of the table's CHECK constraints is false for the row (NULL passes).
// `queries` runs the query body of a LANGUAGE sql function called there (none: refused).
void check_constraints(const SqlTable& t, const Row& row, sql::EvalContext* queries = nullptr);

// The columns of one stored row, for a partial index's predicate or a generated column's
// expression (which the server requires to be immutable: no parameters, no functions of the
// server, no subqueries: 42P17), or for ALTER COLUMN ... TYPE ... USING (`refused_calls`
// names it: a function of the server there is refused, not modelled).
class StoredRowContext final : public sql::EvalContext {
 public:
  StoredRowContext(const SqlTable& t, const Row& row, std::string_view refused_calls = {}, sql::EvalContext* queries = nullptr)
      : t_(t), row_(row), refused_calls_(refused_calls), queries_(queries) {}
  sql::Value column(const sql::Expr& ref) override {
    const int i = t_.column(ref.name);
    if (i < 0) throw sql::missing_column_error(ref);
    return stored(t_, row_, i);
  }
  sql::Value param(int) override { throw sql::SqlError("42P02", "there is no parameter $1"); }
  sql::Value call(const sql::Expr& e, const std::vector<sql::Value>&) override {
    if (!refused_calls_.empty()) {
      throw sql::SqlError("0A000", fmt::format("{}() in {} is not in lockstep's SQL subset (docs/sql.md)", e.name, refused_calls_));
    }
    throw sql::SqlError("42P17", "functions in index predicate or generation expression must be marked IMMUTABLE");
  }
  sql::Value subquery(const sql::Expr&) override {
    throw sql::SqlError("0A000", refused_calls_.empty() ? "cannot use subquery in index predicate" : "cannot use subquery in transform expression");
  }
  sql::Value function_body(const sql::Expr& query, sql::EvalContext& params) override {
    return queries_ != nullptr ? queries_->function_body(query, params) : sql::EvalContext::function_body(query, params);
  }

 private:
  const SqlTable& t_;
  const Row& row_;
  std::string_view refused_calls_;
  sql::EvalContext* queries_;  // runs a function's query body (check_constraints)
};
// Whether a partial unique index holds the row (its WHERE; an index without one holds every row).
bool in_partial_index(const SqlTable::UniqueKey& key, const SqlTable& t, const Row& row);
// ON CONFLICT's arbiters (sim/pg/executor/sql_on_conflict.cc): whether it names unique key `key` (ON
// CONSTRAINT by name, columns and a partial index's predicate, no target: any key), the
// primary key, or a key `row` repeats in `other` (a version of the row of its primary key).
bool conflict_arbiter(const sql::Insert& ins, const SqlTable& t, const SqlTable::UniqueKey& key);
bool conflict_pk_arbiter(const sql::Insert& ins, const SqlTable& t);
bool conflict_repeats_arbiter(const sql::Insert& ins, const SqlTable& t, const Row& row, const Row& other);
// A row's values of a unique key as one text, or nullopt when one is NULL or a partial index
// does not hold the row (neither conflicts).
std::optional<std::string> unique_text(const SqlTable::UniqueKey& key, const SqlTable& t, const Row& row);
// A regclass text as the server reads it (stringToQualifiedNameList): its schema ("" without
// one) and name; 42602 "invalid name syntax" otherwise.
std::pair<std::string, std::string> regclass_name(std::string_view text);
// to_regclass: the relation's name when the server has a table, sequence or index of that name
// (in a schema it has), else nullopt.
std::optional<std::string> to_regclass(Server& server, std::string_view text);
// pg_get_serial_sequence(table, column): the sequence a serial or identity column owns (or
// one OWNED BY its table that its DEFAULT's nextval names), schema-qualified as the server
// prints it; NULL for another column; 42P01 / 42703 for a table / column not found.
sql::Value serial_sequence_of(Server& server, const std::vector<sql::Value>& args);
// has_table_privilege([user,] table, privileges): the session's role is a superuser's, so
// true for a relation to_regclass finds; 42P01 for none, 22023 for a privilege the server
// does not name (SELECT, INSERT, UPDATE, DELETE, TRUNCATE, REFERENCES, TRIGGER [WITH GRANT
// OPTION], comma-separated); another role refused.
sql::Value table_privilege(Server& server, const std::vector<sql::Value>& args);
// A column DEFAULT's nextval('s') (currval, setval) as the server stores it: 's'::regclass is
// resolved as the table is made or altered, so an unqualified name found through that
// moment's search_path becomes schema.s (inserts under another search_path still find it).
void pin_sequence_names(sql::Expr& e, Server& server);
}  // namespace lockstep::sim::pg
