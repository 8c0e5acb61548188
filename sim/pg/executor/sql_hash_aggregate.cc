// sim/pg/executor/sql_hash_aggregate.cc: PostgreSQL 15's HashAggregate order (sim/pg/executor/sql_hash_aggregate.h),
// from execGrouping.c (TupleHashTableHash_internal), lib/simplehash.h (SH_CREATE,
// SH_INSERT_HASH_INTERNAL, SH_START_ITERATE, SH_ITERATE), tableam.c's size estimate of a
// table never vacuumed and selfuncs.c's estimate_num_groups (200 distinct values a column). Checked on
// PostgreSQL 15: tests/sql-specs/hash-aggregate-order.spec.
#include "lockstep/sim/pg/executor/sql_hash_aggregate.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "lockstep/model/sql/arrays.h"
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
  const double tuples = unanalyzed_tuples(data_width);
  const double rows = std::max(1.0, std::rint(tuples * selectivity));
  if (rows < 200) return 0;
  const double each = std::min(200.0, tuples);
  double distinct = each;
  if (columns > 1) distinct = std::min(std::pow(each, static_cast<double>(columns)), std::min(tuples, std::max(tuples * 0.1, each)));
  if (rows < tuples) distinct *= 1 - std::pow((tuples - rows) / tuples, tuples / distinct);
  return hash_buckets_for_groups(std::min(rows, std::max(1.0, std::ceil(std::max(1.0, std::rint(distinct))))));
}

// A key column's hash as its type's hash function gives it; nullopt where not imitated.
std::optional<std::uint32_t> hagg_hash(const Value& v) {
  switch (v.type()) {
    case Type::int2:
    case Type::int4: return sql::hash_uint32(static_cast<std::uint32_t>(static_cast<std::int32_t>(v.as_integer())));
    case Type::boolean: return sql::hash_uint32(v.as_bool() ? 1 : 0);  // hashchar
    case Type::int8:
    case Type::timestamptz:
    case Type::timestamp: {  // hashint8 (timestamp_hash: of its microseconds since 2000)
      const std::int64_t x = v.type() == Type::int8 ? v.as_integer() : v.micros();
      auto low = static_cast<std::uint32_t>(x);
      const auto high = static_cast<std::uint32_t>(static_cast<std::uint64_t>(x) >> 32);
      low ^= x >= 0 ? high : ~high;
      return sql::hash_uint32(low);
    }
    case Type::date: {  // hashint4 of its days since 2000
      const std::int64_t micros = v.micros(), day = 86'400'000'000;
      return sql::hash_uint32(static_cast<std::uint32_t>(static_cast<std::int32_t>(micros >= 0 ? micros / day : -((-micros + day - 1) / day))));
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

std::optional<std::pair<int, int>> unanalyzed_width(const SqlTable& t, std::size_t widest_row) {
  if (t.planner_stats) return std::nullopt;
  // Past 10 pages the estimate counts the heap's pages: the rows written must fit in fewer
  // (each tuple at most its header, its line pointer, 8 bytes of alignment and its values).
  if (static_cast<double>(t.tuples_written) * static_cast<double>(24 + 4 + 8 + widest_row) > 10 * (8192 - 24) * 0.9) return std::nullopt;
  int low = 0, high = 0;
  for (const sql::ColumnDef& c : t.def.columns) {
    const auto [l, h] = hagg_width(c);
    low += l;
    high += h;
  }
  return std::pair{low, high};
}

double unanalyzed_tuples(int data_width) {
  const int tuple_width = data_width + 24 + 4;  // MAXALIGN(SizeofHeapTupleHeader) + ItemIdData
  return std::rint(static_cast<double>((8192 - 24) / tuple_width) * 10);
}

std::uint32_t hash_aggregate_buckets(const SqlTable& t, double selectivity, std::size_t columns, std::size_t widest_row) {
  const auto width = unanalyzed_width(t, widest_row);
  if (!width) return 0;
  const std::uint32_t buckets = hagg_buckets_for_width(width->first, selectivity, columns);
  return buckets == hagg_buckets_for_width(width->second, selectivity, columns) ? buckets : 0;
}

namespace {

// lib/simplehash.h's table as TupleHashTable instantiates it (SH_STORE_HASH), holding key
// indexes: robin hood insertion, growth by doubling (SH_GROW), iteration backwards.
class hagg_Table {
 public:
  explicit hagg_Table(std::uint64_t size) { resize(size); }

  // SH_INSERT_HASH_INTERNAL: finds `key` or inserts it, growing first as the server does.
  void insert_or_find(std::size_t key, std::uint32_t hash) {
    for (;;) {
      if (members_ >= threshold_) grow();
      if (probe(key, hash)) return;
      threshold_ = 0;  // SH_GROW_MAX_DIB or SH_GROW_MAX_MOVE: grow, then again
    }
  }

  // SH_START_ITERATE and SH_ITERATE: from the first bucket not in use, backwards.
  std::vector<std::size_t> order() const {
    const auto size = static_cast<std::uint32_t>(slots_.size());
    std::uint32_t start = 0;
    while (start < size && slots_[start].used) ++start;
    std::vector<std::size_t> out;
    for (std::uint32_t i = 0, at = start; i < size; ++i, at = (at - 1) & mask_) {
      if (slots_[at].used) out.push_back(slots_[at].key);
    }
    return out;
  }

 private:
  struct Slot {
    bool used = false;
    std::uint32_t hash = 0;
    std::size_t key = 0;
  };

  void resize(std::uint64_t size) {  // SH_COMPUTE_PARAMETERS
    size = std::bit_ceil(std::max<std::uint64_t>(size, 2));
    LOCKSTEP_INVARIANT(size <= (std::uint64_t{1} << 24), "a hash aggregate's table stays small");
    slots_.assign(size, Slot{});
    mask_ = static_cast<std::uint32_t>(size - 1);
    threshold_ = static_cast<std::uint32_t>(static_cast<double>(size) * 0.9);
  }

  // SH_GROW: the new parameters first (so `optimal` below is the new table's bucket), then
  // every entry copied in order from the first empty or optimally placed old bucket.
  void grow() {
    const std::vector<Slot> old = std::move(slots_);
    resize(old.size() * 2);
    std::size_t start = 0;
    for (std::size_t i = 0; i < old.size(); ++i) {
      if (!old[i].used || (old[i].hash & mask_) == i) {
        start = i;
        break;
      }
    }
    for (std::size_t n = 0, at = start; n < old.size(); ++n, at = at + 1 >= old.size() ? 0 : at + 1) {
      if (!old[at].used) continue;
      std::uint32_t to = old[at].hash & mask_;
      while (slots_[to].used) to = (to + 1) & mask_;
      slots_[to] = old[at];
    }
  }

  // One probe from the key's bucket: false when the server grows and starts again.
  bool probe(std::size_t key, std::uint32_t hash) {
    const auto size = static_cast<std::uint32_t>(slots_.size());
    const bool full_enough = static_cast<double>(members_) / size >= 0.1;  // SH_GROW_MIN_FILLFACTOR
    std::uint32_t at = hash & mask_, distance = 0;
    for (;;) {
      Slot& here = slots_[at];
      if (!here.used) {
        here = Slot{true, hash, key};
        ++members_;
        return true;
      }
      if (here.key == key) return true;
      const std::uint32_t optimal = here.hash & mask_;
      const std::uint32_t here_distance = optimal <= at ? at - optimal : size + at - optimal;
      if (distance > here_distance) {
        std::uint32_t empty = at;
        for (int moved = 0;;) {
          empty = (empty + 1) & mask_;
          if (!slots_[empty].used) break;
          if (++moved > 150 && full_enough) return false;  // SH_GROW_MAX_MOVE
        }
        for (std::uint32_t i = empty; i != at; i = (i - 1) & mask_) slots_[i] = slots_[(i - 1) & mask_];
        here = Slot{true, hash, key};
        ++members_;
        return true;
      }
      at = (at + 1) & mask_;
      if (++distance > 25 && full_enough) return false;  // SH_GROW_MAX_DIB
    }
  }

  std::vector<Slot> slots_;
  std::uint32_t mask_ = 0, threshold_ = 0, members_ = 0;
};

}  // namespace

std::uint32_t hash_buckets_for_groups(double groups) {
  const auto size = std::max<std::uint64_t>(static_cast<std::uint64_t>(groups / 0.9), 2);
  return static_cast<std::uint32_t>(std::bit_ceil(size));
}

std::optional<double> unnest_rows_estimated(const sql::Select& sel, sql::EvalContext& run, sql::EvalContext* variables) {
  if (sel.from.size() != 1 || !sel.table.empty()) return std::nullopt;
  return unnest_rows_estimated(sel.from[0], sel.where ? &*sel.where : nullptr, run, variables);
}

std::optional<double> unnest_rows_estimated(const sql::FromItem& f, const sql::Expr* where, sql::EvalContext& run, sql::EvalContext* variables) {
  // WHERE of IS [NOT] NULL tests of columns: nulltestsel without statistics (0.005, 0.995).
  double selectivity = 1;
  if (where != nullptr) {
    std::vector<const sql::Expr*> conjuncts{where};
    if (where->kind == sql::Expr::Kind::and_) {
      conjuncts.clear();
      for (const sql::Expr& c : where->args) conjuncts.push_back(&c);
    }
    for (const sql::Expr* c : conjuncts) {
      if (c->kind != sql::Expr::Kind::is_null || c->args.size() != 1 || c->args[0].kind != sql::Expr::Kind::column) return std::nullopt;
      selectivity *= c->negated ? 0.995 : 0.005;
    }
  }
  auto estimated = [&](double rows) { return std::max(1.0, std::rint(rows * selectivity)); };
  if (f.kind != sql::FromItem::Kind::function || f.function.size() != 1 || f.function[0].name != "unnest" || f.function[0].args.size() != 1) {
    return std::nullopt;
  }
  const sql::Expr& arg = f.function[0].args[0];
  const sql::Expr* a = &arg;
  while (a->kind == sql::Expr::Kind::cast && !a->args.empty()) a = &a->args[0];  // a cast of a constant or parameter keeps its length
  auto length = [](const sql::Value& v) {
    return v.is_null() || v.type() != Type::array ? 1.0 : std::max(1.0, static_cast<double>(sql::array_elements(v).size()));
  };
  switch (a->kind) {
    case sql::Expr::Kind::array: return estimated(std::max(1.0, static_cast<double>(a->args.size())));
    case sql::Expr::Kind::constant: return estimated(length(sql::evaluate(arg, run)));  // the planner folds the casts to a Const
    case sql::Expr::Kind::param: return estimated(length(run.param(a->number)));
    case sql::Expr::Kind::column: return estimated(variables != nullptr && variables->names_variable(*a) ? length(variables->column(*a)) : 10.0);
    default: return estimated(10.0);
  }
}

bool distinct_hashed(double rows, std::size_t columns) {
  // costsize.c with cpu_operator_cost 0.0025, cpu_tuple_cost 0.01, the groups estimated as the
  // rows (no statistics): the input's cost is the same under both.
  const double n = std::max(rows, 2.0), cols = static_cast<double>(columns);
  const double sort = 2 * 0.0025 * n * std::log2(n) + 0.0025 * n + 0.0025 * cols * rows;  // Sort, Unique
  const double hash = 0.0025 * cols * rows + 0.01 * rows;                                   // HashAggregate
  return hash < sort;
}

std::optional<std::vector<std::size_t>> hash_aggregate_order(const std::vector<std::vector<Value>>& keys,
                                                             const std::vector<std::size_t>& row_keys, std::uint32_t buckets) {
  LOCKSTEP_INVARIANT(std::has_single_bit(buckets) && buckets >= 2, "a hash table's size is a power of two");
  std::vector<std::uint32_t> hashes;
  hashes.reserve(keys.size());
  for (const std::vector<Value>& key : keys) {
    std::uint32_t combined = 0;  // hash_iv 0
    for (const Value& v : key) {
      combined = std::rotl(combined, 1);
      if (v.is_null()) continue;  // a NULL hashes as 0
      const std::optional<std::uint32_t> h = hagg_hash(v);
      if (!h) return std::nullopt;
      combined ^= *h;
    }
    hashes.push_back(hagg_murmur32(combined));
  }
  hagg_Table table(buckets);
  for (const std::size_t k : row_keys) {
    LOCKSTEP_INVARIANT(k < keys.size(), "a row's key is one of the groups'");
    table.insert_or_find(k, hashes[k]);
  }
  return table.order();
}

}  // namespace lockstep::sim::pg
