// sim/pg/executor/sql_scan_choice.h: which scan PostgreSQL 15's planner picks for one table
// read with a WHERE, where the table was never analyzed and fits its 10-page estimate: the
// costs of costsize.c's sequential, bitmap heap and index scans (btcostestimate's index
// costs), clausesel.c's selectivities without statistics, add_path's 1% fuzz and a Limit's
// fraction, as the server computes them (checked against EXPLAIN on PostgreSQL 15). The pick
// decides the order rows come in: heap order, their HOT chains' roots, or an index's keys.
// Where the estimate is not known here, or two plans' costs fall within the model's margin,
// the pick is `unknown` and the caller answers only if the orders agree.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/eval.h"
#include "lockstep/sim/pg/heap/sql_table.h"

namespace lockstep::sim::pg {

enum class ScanPick : std::uint8_t { seq, bitmap, index, unknown };

struct ScanChoice {
  ScanPick pick = ScanPick::seq;
  std::vector<int> index_columns;  // index: its key columns (rows in their order, ascending, ties by root)
  // unknown: the index scans still in the running (seq and bitmap always are)
  std::vector<std::vector<int>> index_orders;
  std::string why;  // unknown: what kept it from being decided
};

// Whether `where` may be served by an index the model does not cost: a partial, expression or
// other-method index whose columns it reads, or a LIKE / ~ / starts_with prefix on an indexed column.
bool sql_scan_may_use_uncosted_index(const SqlTable& t, const sql::Expr& where);

// The scan of t (named `alias`) under `where`; `limit`: the rows a Limit right above the scan
// (or above its LockRows) pulls, LIMIT + OFFSET, or -1 when every row is read. `widest_row`:
// SqlRun::widest_row. `run` evaluates $n and `variables` names a running function's variables
// (may be null); both as a custom plan sees them.
ScanChoice sql_scan_choice(const SqlTable& t, std::string_view alias, const sql::Expr& where, std::int64_t limit, std::size_t widest_row,
                           sql::EvalContext& run, sql::EvalContext* variables);

}  // namespace lockstep::sim::pg
