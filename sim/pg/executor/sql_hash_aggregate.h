// sim/pg/executor/sql_hash_aggregate.h: the order in which PostgreSQL 15's HashAggregate returns its
// groups (GROUP BY, and DISTINCT hashed, without ORDER BY): execGrouping.c's hash of the key
// columns (each column's hash function, rotated and xored, then murmurhash32) into a
// simplehash table (lib/simplehash.h: robin hood insertion, iterated backwards from the first
// empty bucket), sized for the planner's estimate of the groups. Imitated where that estimate
// is known without statistics: a scan of a table never analyzed (the 10-page heuristic) that
// keeps 200 or more estimated rows; elsewhere callers keep their order and say so. The table
// grows (doubles) as the server's does when more groups come than it was sized for.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/value.h"
#include "lockstep/sim/pg/server/sim_pg.h"

namespace lockstep::sim::pg {

// The planner's estimate of a row's data width in t without statistics (get_rel_data_width),
// lowest and highest (a text's characters take 1 to 4 bytes), or nullopt: the table has
// planner statistics or may fill 10 pages (its tuples written, each at most `widest_row`
// bytes of values), past which the estimate counts its pages.
std::optional<std::pair<int, int>> unanalyzed_width(const SqlTable& t, std::size_t widest_row);
// The tuples the planner estimates in a table never vacuumed of that data width (tableam.c:
// 10 pages at an integer density).
double unanalyzed_tuples(int data_width);

// The buckets the server's HashAggregate over a scan of `t` keeping `selectivity` of its rows
// (the planner's estimate of WHERE: 1 for none), grouping by `columns` columns, starts with;
// 0 where that is not known here: the table has planner statistics or may fill 10 pages (its
// tuples written, each at most `widest_row` bytes of values), its estimated width is not
// known exactly enough, or the scan keeps fewer than 200 estimated rows (a Sort may be
// cheaper there: the planner sorts a few rows).
std::uint32_t hash_aggregate_buckets(const SqlTable& t, double selectivity, std::size_t columns, std::size_t widest_row);

// The rows the planner estimates for a FROM of one `unnest(array)` call (array_unnest_support's
// estimate_array_length: an ARRAY[...]'s elements, a constant's, a bound parameter's or plpgsql
// variable's, as a custom plan sees it; else 10) and a WHERE of IS [NOT] NULL tests (0.005 and
// 0.995 each, rounded), or nullopt for another FROM or WHERE. `run` reads $n, `variables` a running function's variables (may be null).
std::optional<double> unnest_rows_estimated(const sql::Select& sel, sql::EvalContext& run, sql::EvalContext* variables);
// The same for FROM item f (one `unnest(array)` call) under `where` (may be null).
std::optional<double> unnest_rows_estimated(const sql::FromItem& f, const sql::Expr* where, sql::EvalContext& run, sql::EvalContext* variables);
// Whether the planner hashes DISTINCT of `columns` keys over `rows` estimated input rows:
// cost_agg's HashAggregate against cost_sort's Sort below a Unique (2 rows sort, 3 or more hash).
bool distinct_hashed(double rows, std::size_t columns);
// The buckets a HashAggregate sized for `groups` estimated groups starts with (simplehash's
// fill factor 0.9, a power of two, at least 2).
std::uint32_t hash_buckets_for_groups(double groups);

// The groups' keys in the order the hash table returns them, as indexes into `keys`, given
// each input row's key (`row_keys`, in scan order: a lookup may grow the table); nullopt for a
// key type whose hash is not imitated.
std::optional<std::vector<std::size_t>> hash_aggregate_order(const std::vector<std::vector<sql::Value>>& keys,
                                                             const std::vector<std::size_t>& row_keys, std::uint32_t buckets);

}  // namespace lockstep::sim::pg
