// real/statements.h: the SQL of every model/pg.h operation, and how its result reads back.
//
// One place for the statements, so that the libpq backend (real/libpq_backend.h, one
// blocking round trip each) and the conformance replayer (real/conform.h, asynchronous,
// one in flight per connection) send exactly the same SQL. Values are always parameters;
// table names arrive already quoted (PQescapeIdentifier needs a connection).
#pragma once

#include <libpq-fe.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/pg.h"
#include "lockstep/model/pg_statements.h"

namespace lockstep::real::sql {

struct Statement {
  std::string text;
  std::vector<std::string> params;
};

// Schema of the row tables: lockstep.<table> (id int8 primary key, data jsonb).
inline constexpr std::string_view kSchema = "lockstep";
std::string qualified(std::string_view quoted_table);
Statement create_schema();
Statement create_table(std::string_view quoted_table);
Statement drop_schema();

// What a statement of the table (model/pg_statements.h) is sent with; each takes the
// arguments its operation in model/pg.h has, the others are ignored.
struct Args {
  pg::AdvisoryKey key = pg::AdvisoryKey::single(0);
  std::string_view quoted_table = {};
  std::int64_t id = 0;
  pg::Row values = {};
  std::string_view column = {};    // update_row_if: the column compared
  std::string_view expected = {};  // and the value it must have
  Duration timeout{0};
  int pid = 0;
};
// The SQL of a statement. REQUIRES: s is neither Stmt::close (no SQL) nor Stmt::sql (its
// own text).
Statement statement(pg::Stmt s, const Args& args);

// Any setting (set_config(name, value, false)); SET lock_timeout and statement_timeout are
// statement(Stmt::set_lock_timeout, ...).
Statement set(std::string_view setting, std::string value);
Statement advisory_locks();  // seed 000's monitoring query (Stmt::pg_locks)

// The error of a failed result (08006 with the connection's message when the server sent
// no SQLSTATE: the connection is gone); nullopt when it succeeded.
std::optional<pg::Error> error_of(PGconn* conn, const PGresult* r);
// A notice as the notice receiver gets it: the WARNING it carries, or nullopt for any
// other severity.
std::optional<pg::Error> warning_of(const PGresult* notice);
bool read_bool(const PGresult* r);
int read_count(const PGresult* r);  // PQcmdTuples
std::optional<pg::Row> read_row_result(const PGresult* r);
// A result's columns, rows (text; NULL as nullopt) and command tag, as Connection::exec returns them.
pg::Rows read_rows(const PGresult* r);
// A Row as the jsonb the row tables hold (keys sorted), as the simulation's log shows it.
std::string to_json(const pg::Row& row);
std::vector<pg::AdvisoryLockRow> read_lock_rows(const PGresult* r);

}  // namespace lockstep::real::sql
