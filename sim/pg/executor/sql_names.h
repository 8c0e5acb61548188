// sim/pg/executor/sql_names.h: what PostgreSQL's parser finds in a statement before any row is read:
// the tables it opens anywhere (each locked by the statement, subqueries' too), and its
// qualified column references (x.c) checked against the relations its FROM clauses name. PostgreSQL's parse
// analysis refuses `job.locke` with 42703 even where no row would ever evaluate it (a WITH
// RECURSIVE round that never runs, `false AND s.nope`); an executor that resolves names as
// it evaluates them would answer instead.
//
// Guarantees: throws only sql::SqlError 42703 ("column x.c does not exist", the server's
// words), for a reference whose qualifier names, in the innermost scope that has it, a
// relation whose columns are all known from the statement and the catalog: a table, a WITH
// query or FROM subquery whose targets are named, VALUES (anything else: a function's
// columns, `excluded`, an outer name the executor resolves, is left to the executor); or
// 42702 for a bare name both relations of an UPDATE ... FROM or DELETE ... USING have; or
// 0A000 for a GROUP BY of an output column's name that a FROM item's column may shadow; or
// 42P01 for a table named by its name where its FROM item gives it an alias, or by a schema
// (s.t.c) it is not in (the server's "invalid reference to FROM-clause entry"). With
// `check_types`, each clause's types too, as the parser types them (model/sql/type_check.h),
// columns of tables resolved through the same scopes: SqlError 42883, 42804, 42846, 42725, or a
// literal's input error.
#pragma once

#include <functional>

#include "lockstep/model/sql/plan.h"
#include "lockstep/model/sql/qual_cost.h"

namespace lockstep::sim::pg {

class Server;
struct SqlTable;

// The table whose whole row an expression of a query is, or nullptr (SqlRun::record_table_of):
// what a `(x).*` target expands to.
using RecordOf = std::function<const SqlTable*(const sql::Expr&, const sql::Select&)>;

// Returns the order of each WHERE's, JOIN/ON's and HAVING's conditions (model/sql/qual_cost.h),
// subqueries' by `correlated`.
sql::QualOrders check_qualified_columns(const sql::Statement& st, Server& server, const RecordOf& record_of, bool check_types,
                                        const std::function<bool(const sql::Select&)>& correlated);

// The server's 42P01 for a qualified column reference no relation in scope resolves:
// "invalid reference to FROM-clause entry" where a table of the qualifier's name is in scope
// (under an alias, or in another schema than the one written), else "missing FROM-clause entry".
sql::SqlError unresolved_qualifier(const sql::Expr& ref, bool table_in_scope);
// Whether the relation `t` (a table, or nullptr), in scope as `shown` (its alias, or its own
// name), is the one such a reference meant (errorMissingRTE's search): its name is the
// qualifier, or its table is the one [schema.]table finds (search_path where no schema).
bool meant_by(const sql::Expr& ref, const SqlTable* t, std::string_view shown, Server& server);

// Each table name a SELECT, INSERT, UPDATE or DELETE reads or writes, anywhere in it (WITH
// queries, FROM, subqueries in any clause), in the order written, WITH queries' own names
// left out; a name may come more than once.
void each_table_named(const sql::Statement& st, const std::function<void(const std::string&)>& fn);
// ... and whether the locking clause (FOR UPDATE / SHARE [OF]) of the query whose FROM names
// it covers it (the parser opens such a table with RowShareLock).
void each_table_named(const sql::Statement& st, const std::function<void(const std::string&, bool locked)>& fn);

}  // namespace lockstep::sim::pg
