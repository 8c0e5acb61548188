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

#include "model/pg.h"

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

Statement advisory_lock(pg::AdvisoryKey key, pg::LockMode mode);
Statement try_advisory_lock(pg::AdvisoryKey key, pg::LockMode mode);
Statement advisory_unlock(pg::AdvisoryKey key, pg::LockMode mode);
Statement advisory_unlock_all();
Statement advisory_xact_lock(pg::AdvisoryKey key, pg::LockMode mode);
// SET lock_timeout / statement_timeout / any setting (set_config(name, value, false)).
Statement set(std::string_view setting, std::string value);
Statement set_timeout(std::string_view setting, Duration timeout);
Statement read_row(std::string_view quoted_table, std::int64_t id);
Statement insert_row(std::string_view quoted_table, std::int64_t id, const pg::Row& values);
Statement update_row(std::string_view quoted_table, std::int64_t id, const pg::Row& values);
Statement select_for_update(std::string_view quoted_table, std::int64_t id, bool nowait);
Statement begin();
Statement commit();
Statement rollback();
Statement advisory_locks();  // seed 000's monitoring query
Statement terminate_backend(int pid);

// The error of a failed result (08006 with the connection's message when the server sent
// no SQLSTATE: the connection is gone); nullopt when it succeeded.
std::optional<pg::Error> error_of(PGconn* conn, const PGresult* r);
// A notice as the notice receiver gets it: the WARNING it carries, or nullopt for any
// other severity.
std::optional<pg::Error> warning_of(const PGresult* notice);
bool read_bool(const PGresult* r);
int read_count(const PGresult* r);  // PQcmdTuples
std::optional<pg::Row> read_row_result(const PGresult* r);
// A Row as the jsonb the row tables hold (keys sorted), as the simulation's log shows it.
std::string to_json(const pg::Row& row);
std::vector<pg::AdvisoryLockRow> read_lock_rows(const PGresult* r);

}  // namespace lockstep::real::sql
