// sim/pg/sql_hash_aggregate.h: the order in which PostgreSQL 15's HashAggregate returns its
// groups (GROUP BY, and DISTINCT hashed, without ORDER BY): execGrouping.c's hash of the key
// columns (each column's hash function, rotated and xored, then murmurhash32) into a
// simplehash table (lib/simplehash.h: robin hood insertion, iterated backwards from the first
// empty bucket), sized for the planner's estimate of the groups. Imitated where that estimate
// is known without statistics: a whole scan of a table never analyzed (the 10-page
// heuristic: 116 to 230 groups, 256 buckets); elsewhere callers keep their order and say so.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "lockstep/model/sql/value.h"
#include "lockstep/sim/pg/sim_pg.h"

namespace lockstep::sim::pg {

// The buckets the server's HashAggregate over a whole scan of `t` starts with, or 0 where
// that is not known here (the table has planner statistics, or rows wider than the estimate
// keeps at 256 buckets).
std::uint32_t hash_aggregate_buckets(const SqlTable& t);

// The groups' keys (in the order their first rows came) in the order the hash table returns
// them, as indexes into `keys`; nullopt for a key type whose hash is not imitated or a table
// that would grow.
std::optional<std::vector<std::size_t>> hash_aggregate_order(const std::vector<std::vector<sql::Value>>& keys, std::uint32_t buckets);

}  // namespace lockstep::sim::pg
