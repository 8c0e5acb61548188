// sim/pg/sql_hash_aggregate.cc: PostgreSQL 15's HashAggregate order (sim/pg/sql_hash_aggregate.h),
// from execGrouping.c (TupleHashTableHash_internal), lib/simplehash.h (SH_CREATE,
// SH_INSERT_HASH_INTERNAL, SH_START_ITERATE, SH_ITERATE), tableam.c's size estimate of a
// table never vacuumed and selfuncs.c's estimate_num_groups (200 distinct values a column). Checked on
// PostgreSQL 15: tests/sql-specs/hash-aggregate-order.spec.
#include "lockstep/sim/pg/sql_hash_aggregate.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "lockstep/model/sql/hash_functions.h"

namespace lockstep::sim::pg {
namespace {

using sql::Type;
using sql::Value;

// get_typavgwidth without statistics: (lowest, highest) over the server encoding's
// character widths (1 to 4 bytes) for a type with a length limit.
std::pair<int, int> hagg_width(const sql::ColumnDef& c) {
  auto limited = [](int max_bytes) { return max_bytes <= 32 ? max_bytes : max_bytes < 1000 ? 32 + (max_bytes - 32) / 2 : 516; };
  switch (c.type) {
    case Type::int2: return {2, 2};
    case Type::boolean: return {1, 1};
    case Type::int4: case Type::date: case Type::oid: case Type::enum_: return {4, 4};
    case Type::int8: case Type::timestamptz: case Type::timestamp: case Type::time: case Type::float8: return {8, 8};
    case Type::interval: case Type::uuid: return {16, 16};
    case Type::text: return c.max_length > 0 ? std::pair{limited(c.max_length + 4), limited(c.max_length * 4 + 4)} : std::pair{32, 32};
    case Type::bpchar: return {std::max(c.max_length, 1) + 4, std::max(c.max_length, 1) * 4 + 4};
    case Type::numeric: return c.numeric_precision > 0 ? std::pair{8, 32} : std::pair{32, 32};
    default: return {32, 32};
  }
}

// The buckets SH_CREATE makes for the groups estimate_num_groups gives a scan of a table of
// `data_width` bytes a row (tableam.c: 10 pages, integer density) that keeps `selectivity` of
// it, grouped by `columns` columns without statistics (200 distinct values each); 0 when
// fewer than 200 rows are estimated.
std::uint32_t hagg_buckets_for_width(int data_width, double selectivity, std::size_t columns) {
  const int tuple_width = data_width + 24 + 4;  // MAXALIGN(SizeofHeapTupleHeader) + ItemIdData
  const double tuples = std::rint(static_cast<double>((8192 - 24) / tuple_width) * 10);
  const double rows = std::max(1.0, std::rint(tuples * selectivity));
  if (rows < 200) return 0;
  const double each = std::min(200.0, tuples);
  double distinct = each;
  if (columns > 1) distinct = std::min(std::pow(each, static_cast<double>(columns)), std::min(tuples, std::max(tuples * 0.1, each)));
  if (rows < tuples) distinct *= 1 - std::pow((tuples - rows) / tuples, tuples / distinct);
  const double groups = std::min(rows, std::max(1.0, std::ceil(std::max(1.0, std::rint(distinct)))));
  const auto size = std::max<std::uint64_t>(static_cast<std::uint64_t>(groups / 0.9), 2);
  return static_cast<std::uint32_t>(std::bit_ceil(size));
}

// A key column's hash as its type's hash function gives it; nullopt where not imitated.
std::optional<std::uint32_t> hagg_hash(const Value& v) {
  switch (v.type()) {
    case Type::int2:
    case Type::int4: return sql::hash_uint32(static_cast<std::uint32_t>(static_cast<std::int32_t>(v.as_integer())));
    case Type::boolean: return sql::hash_uint32(v.as_bool() ? 1 : 0);  // hashchar
    case Type::int8: {                                                  // hashint8
      const std::int64_t x = v.as_integer();
      auto low = static_cast<std::uint32_t>(x);
      const auto high = static_cast<std::uint32_t>(static_cast<std::uint64_t>(x) >> 32);
      low ^= x >= 0 ? high : ~high;
      return sql::hash_uint32(low);
    }
    case Type::text: return static_cast<std::uint32_t>(sql::hash_text(v.as_text()));
    case Type::bpchar: return static_cast<std::uint32_t>(sql::hash_text(sql::bpchar_trimmed(v.text_output())));  // hashbpchar
    default: return std::nullopt;
  }
}

std::uint32_t hagg_murmur32(std::uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

}  // namespace

std::uint32_t hash_aggregate_buckets(const SqlTable& t, double selectivity, std::size_t columns) {
  if (t.planner_stats) return 0;
  int low = 0, high = 0;
  for (const sql::ColumnDef& c : t.def.columns) {
    const auto [l, h] = hagg_width(c);
    low += l;
    high += h;
  }
  const std::uint32_t buckets = hagg_buckets_for_width(low, selectivity, columns);
  return buckets == hagg_buckets_for_width(high, selectivity, columns) ? buckets : 0;
}

std::optional<std::vector<std::size_t>> hash_aggregate_order(const std::vector<std::vector<Value>>& keys, std::uint32_t buckets) {
  LOCKSTEP_INVARIANT(std::has_single_bit(buckets) && buckets >= 2, "a hash table's size is a power of two");
  const auto grow_threshold = static_cast<std::uint32_t>(static_cast<double>(buckets) * 0.9);
  if (keys.size() >= grow_threshold) return std::nullopt;  // it would grow (checked at each lookup)
  const std::uint32_t mask = buckets - 1;
  struct Slot {
    bool used = false;
    std::uint32_t hash = 0;
    std::size_t key = 0;
  };
  std::vector<Slot> slots(buckets);
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::uint32_t combined = 0;  // hash_iv 0
    for (const Value& v : keys[k]) {
      combined = std::rotl(combined, 1);
      if (v.is_null()) continue;  // a NULL hashes as 0
      const std::optional<std::uint32_t> h = hagg_hash(v);
      if (!h) return std::nullopt;
      combined ^= *h;
    }
    Slot mine{true, hagg_murmur32(combined), k};
    // Robin hood: take the place of an entry nearer its own bucket, shifting the run after it.
    std::uint32_t at = mine.hash & mask, distance = 0;
    for (;;) {
      Slot& here = slots[at];
      if (!here.used) {
        here = mine;
        break;
      }
      const std::uint32_t optimal = here.hash & mask;
      const std::uint32_t here_distance = optimal <= at ? at - optimal : buckets + at - optimal;
      if (distance > here_distance) {
        std::uint32_t empty = at, moved = 0;
        do {
          empty = (empty + 1) & mask;
          if (++moved > 150) return std::nullopt;  // SH_GROW_MAX_MOVE: it would grow
        } while (slots[empty].used);
        for (std::uint32_t i = empty; i != at; i = (i - 1) & mask) slots[i] = slots[(i - 1) & mask];
        here = mine;
        break;
      }
      at = (at + 1) & mask;
      if (++distance > 25) return std::nullopt;  // SH_GROW_MAX_DIB: it would grow
    }
  }
  std::uint32_t start = 0;  // the first empty bucket, then backwards all the way round
  while (slots[start].used) ++start;
  std::vector<std::size_t> order;
  order.reserve(keys.size());
  for (std::uint32_t i = 0, at = start; i < buckets; ++i, at = (at - 1) & mask) {
    if (slots[at].used) order.push_back(slots[at].key);
  }
  return order;
}

}  // namespace lockstep::sim::pg
