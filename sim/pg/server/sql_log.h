// sim/pg/server/sql_log.h: how an SQL statement and its outcome read in the event log (sim/pg/server/sql_log.cc).
#pragma once

#include <string>
#include <string_view>

#include "lockstep/sim/pg/server/connection.h"

namespace lockstep::sim::pg {

// The text of a statement, on its first step: "[UPDATE t SET v = 1 WHERE id = 1]" (one line,
// at most 100 characters); and of its outcome, on its last: "UPDATE 1", "SELECT 2: (1, 5),
// (2, 7)", "ERROR 40P01".
std::string sql_log_text(std::string_view sql);
std::string sql_outcome_text(const Result<lockstep::pg::Rows>& r);

}  // namespace lockstep::sim::pg
