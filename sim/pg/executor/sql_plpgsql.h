// sim/pg/executor/sql_plpgsql.h: what running a LANGUAGE plpgsql function on the simulated server needs
// beside SqlRun (sim/pg/executor/sql_plpgsql.cc): a statement text's plans, parsed once per thread, and
// a trigger's firing (its TG_ variables, NEW and OLD), and which triggers lockstep fires.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/plan.h"
#include "lockstep/sim/pg/server/sim_pg.h"

namespace lockstep::sim::pg {

// The statements of `text` as PostgreSQL's parser reads them (model/sql/parse.h), kept per
// thread (sim/pg/server/sql_text.cc); throws the parser's SqlError.
std::shared_ptr<const std::vector<sql::Statement>> cached_plans(std::string_view text);

// A row trigger's firing: TG_OP, TG_NAME, TG_TABLE_NAME, TG_WHEN; NEW and OLD (a NULL row of
// the table's type where the operation has none).
struct PlTrigger {
  std::string op, name, table;
  bool before = false;
  sql::Value new_row, old_row;
  bool statement = false;  // FOR EACH STATEMENT: TG_LEVEL's, NEW and OLD NULL
};

// RAISE's error as pl_exec.c's exec_stmt_raise makes it: its SQLSTATE (the condition's, USING
// ERRCODE's (a SQLSTATE or a condition name), else P0001 for an EXCEPTION, 00000 below) and its
// message (each % the next argument's text, NULL as <NULL>, %% a %; else USING MESSAGE's, else
// the condition's name or the SQLSTATE). `argument` gives an expression's text (nullopt: NULL).
// Throws the server's errors: 22004 for a NULL option, 42601 for one given twice; a condition
// name lockstep does not list is refused. DETAIL and HINT are evaluated, not kept (a client's primary message lacks them).
struct RaisedError {
  std::string sqlstate;
  std::string message;
};
RaisedError raise_error(const sql::PlStatement& s, const std::function<std::optional<std::string>(const std::string&)>& argument);

// A set-returning function's row of RETURN NEXT's value: a row type's fields (42804 for a
// record of another type), else the value as the return type stores it.
std::vector<sql::Value> returned_set_row(const sql::CreateFunction& f, const sql::Value& v);
// RETURN QUERY's rows appended to `into`, each of the function's result columns and their
// types, as exec_stmt_return_query checks them (42804 otherwise).
void append_query_rows(const sql::CreateFunction& f, std::vector<std::vector<sql::Value>> rows, std::vector<std::vector<sql::Value>>& into,
                       const char* mismatch = "structure of query does not match function result type");

// `record` with its field `field` set to v as an assignment casts (42703 for no such field;
// `record_name` names the variable).
sql::Value with_field(const sql::Value& record, std::string_view record_name, const std::string& field, const sql::Value& v);
// A plpgsql variable's declared type read as a column's (nullopt: not one the subset reads).
std::optional<sql::ColumnDef> variable_type(const std::string& text);

// The row type of a function's several OUT parameters (their names and types): its value's.
int out_row_type(const sql::CreateFunction& f, const Server& server);

// FOR i IN lower..upper BY by's bounds as int4 (22004 for a NULL one, 22023 for BY below 1).
struct PlRange {
  std::int64_t lower = 0, upper = 0, step = 1;
};
PlRange for_range(const sql::Value& lower, const sql::Value& upper, const sql::Value& by);
// FOREACH x IN ARRAY a's elements in order, NULLs too (22004 for a NULL array, 42804 for a
// value that is no array: exec_stmt_foreach_a's errors).
std::vector<sql::Value> foreach_elements(const sql::Value& array);

// A query's LIMIT where it is a constant integer without OFFSET (a plpgsql fetch's bound).
std::optional<std::int64_t> constant_limit(const sql::Select& sel);
// Whether it gives at most one row whatever the data: LIMIT 0 or 1, or no FROM and no
// set-returning call in its select list (a fetch that stops after its first row reads it all).
bool at_most_one_row(const sql::Select& sel);
// Whether `sel` reads one table by its whole primary key, each column `=` a value (a variable
// of `variables` counts as one): a key lookup, at most one row.
bool key_lookup(const sql::Select& sel, Server& server, const sql::EvalContext* variables);
// Whether a statement calls a function that is a step of its own (calls_stepping_function) or a
// created function whose body is statements (each takes steps): other sessions commit meanwhile.
// A STABLE or IMMUTABLE function (LANGUAGE sql or plpgsql) whose statements and expressions name
// no table, EXECUTE nothing, catch nothing, and call created functions only of the same kind: it
// reads nothing a snapshot decides (it runs on its caller's), so a statement scanning a table may
// call it per row (message-db's category(), hash_64()); a lock call in it is a step of the scan.
bool takes_steps(const sql::Statement& st, Server& server);
bool reads_nothing_per_row(const sql::CreateFunction& f, Server& server);

// The command a READ ONLY transaction refuses (the server's tag for it: "UPDATE", "SELECT FOR
// SHARE"), or "" for one it runs (sim/pg/executor/sql_exec.cc).
std::string read_only_command(const sql::Statement& st);
// A STABLE or IMMUTABLE function's statement that is not read-only: the server's 0A000 (a
// plpgsql function's as it runs, SPI's; a LANGUAGE sql function's as a call starts, for each
// of its statements, unless the planner inlines it: SETOF, not STRICT, one SELECT).
void check_function_volatility(const sql::CreateFunction& f, const sql::Statement& st);

// EXECUTE's text parsed (22004 for NULL; 0A000 past 2048 bytes, for the fiber's stack).
std::shared_ptr<const std::vector<sql::Statement>> execute_plans(const sql::Value& text);

// EXECUTE ... USING's values as the dynamic statement's $1, $2, ... (42P02 past them); the
// statement sees none of the function's variables, as the server's.
class PlUsingParams final : public sql::EvalContext {
 public:
  explicit PlUsingParams(std::vector<sql::Value> values) : values_(std::move(values)) {}
  sql::Value column(const sql::Expr& ref) override;
  sql::Value param(int number) override;
  sql::Value call(const sql::Expr& call, const std::vector<sql::Value>& args) override;
  sql::Value subquery(const sql::Expr& e) override;

 private:
  std::vector<sql::Value> values_;
};

// Whether lockstep fires the trigger (AFTER, FOR EACH ROW, without arguments, its function's body
// one it runs: SqlRun::queue_after_row); a statement that would fire another is refused.
bool fires_after_row(const SqlTable::Trigger& tr);
// BEFORE ... FOR EACH ROW, no arguments, a body it runs: fired as each row is written
// (SqlRun::before_row). has_before_row: t has such a trigger on `op` (its WHEN aside).
bool fires_before_row(const SqlTable::Trigger& tr);
bool has_before_row(const SqlTable& t, std::string_view op);
// AFTER ... FOR EACH STATEMENT, no arguments nor WHEN, a body it runs: fired as its statement
// ends (SqlRun::queue_after_statement), where that statement alone writes the table.
bool fires_after_statement(const SqlTable::Trigger& tr);

}  // namespace lockstep::sim::pg
