// sim/pg/executor/sql_ssi.h: where a SQL statement of a SERIALIZABLE transaction meets serializable
// snapshot isolation (sim/pg/lock/ssi.h), internal to sim/pg. A read takes the SIREAD locks of the
// plan the server picks for an unanalyzed table (a whole primary key pinned by WHERE: an index
// scan, its leaf and the tuple it fetches; no index qual: a sequential scan, the table) and
// conflicts out to the concurrent writers of the tuples that plan examines; a write checks
// the targets heapam and nbtree check. Plans whose locks are not modelled (another index
// qual, a plain index, an ORDER BY an index gives under LIMIT but the Limit over an index
// scan that sql_limit_reads_index_order knows, min/max of an indexed table, a join's read of
// an indexed table) go through SimConnection::ssi_unsupported.
//
// Every hook writes the server's SSI object in the running step (Server::ssi_object).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

// The conjuncts of WHERE that an index scan of t's primary key checks in the index (its index
// conds), when one is on the key's leading column; else none (sim/pg/executor/sql_scan_order.cc).
std::vector<const sql::Expr*> sql_primary_key_quals(const SqlTable& t, std::string_view alias, const sql::Expr& where,
                                                   const sql::EvalContext* variables = nullptr);
// ... of the btree index on the columns `key` (by number, leading first): a unique index's.
std::vector<const sql::Expr*> sql_index_quals(const SqlTable& t, std::string_view alias, const sql::Expr& where, const std::vector<int>& key,
                                              const sql::EvalContext* variables = nullptr);

// The plan a SERIALIZABLE statement's next read of a table takes, as SIREAD locks see it.
struct SsiGrain {
  bool by_index = false;          // an index scan of the primary key or a unique index (else a sequential scan)
  std::vector<std::int64_t> ids;  // ... the rows whose key its index conds pass, in the order it meets them
  bool first_visible = false;     // ... stopping at the first visible one (min or max: an index-only scan under Limit 1)
  std::string index;              // ... a unique index's name (empty: the primary key's)
  // An index scan under a Limit whose Filter decides where it stops: read() leaves it to
  // read_index_order, once the SELECT ran its WHERE in that order.
  bool deferred = false;
};

struct SqlSsi {
  // Before scan() reads table t: the plan's grain for its relation_rows (SqlRun::ssi_grain_).
  // THROWS: SqlError (a refusal).
  static void plan_scan(SqlRun& run, SqlTable& t, const std::string& alias, const std::optional<sql::Expr>& where);
  // A SELECT's shape the scan does not see (ORDER BY an index under LIMIT, min or max);
  // `index_order`: the Limit over an index scan of sql_limit_reads_index_order.
  static void plan_select(SqlRun& run, const sql::Select& sel, SqlTable& t, bool index_limit, bool index_order);
  // That Limit's read, after its WHERE ran row by row in the index's order (by `column`,
  // `descending`): the index's leaf, then each slot in that order up to the row with key
  // value `stop` that completed the Limit (nullopt: it was not reached, every slot), as
  // read() does for an index scan's rows. THROWS: Raised (40001).
  static void read_index_order(SqlRun& run, SqlTable& t, const std::string& alias, const sql::Expr& column, bool descending,
                               const std::optional<Value>& stop);
  // min(c) or max(c) of a primary key's column c after columns WHERE pins: planagg's index scan.
  static bool plan_min_max(SqlRun& run, const sql::Select& sel, SqlTable& t, const sql::Expr& aggregate);
  // The rows of t (and a version with their key) whose key passes the index conds `quals`.
  static std::vector<std::pair<std::int64_t, const Row*>> index_rows(SqlRun& run, SqlTable& t, const std::string& alias,
                                                                     const std::vector<const sql::Expr*>& quals);
  // relation_rows of table t: conflicts out, then SIREAD locks. THROWS: Raised (40001), SqlError.
  static void read(SqlRun& run, const SqlTable& t);
  // heap_update or heap_delete of row id's newest tuple (before the write).
  static void heap_write(SqlRun& run, const SqlTable& t, std::int64_t id);
  // heap_insert of a new row of t.
  static void heap_insert(SqlRun& run, const SqlTable& t);
  // An index entry of `row` in t's primary key (`primary`) or in its unique indexes whose
  // predicate holds (`uniques`).
  static void index_insert(SqlRun& run, const SqlTable& t, const Row& row, bool primary, bool uniques);
  // A write the SIREAD checks do not model here (foreign keys, a plain index, a key change).
  static void check_writable(SqlRun& run, const SqlTable& t);
};

}  // namespace lockstep::sim::pg
