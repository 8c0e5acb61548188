// sim/pg/heap/sql_table.h: a table of the simulated server as the catalog and the heap know it:
// its definition, keys, indexes, triggers, foreign keys and sequences, the scheduler objects
// that stand for it and its heap, and how its rows are numbered. Plain data and lookups.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/model/sql/plan.h"
#include "lockstep/sim/sched/op.h"

namespace lockstep::sim::pg {

// A table created with SQL (sim/pg/executor/sql_exec.cc): its definition, its scheduler object and how
// its rows are numbered in the server's row store (one id per primary key value, in the
// order first named; without a primary key, one per inserted row). A scan of the table reads
// its object; a commit that changes one of its rows writes it (so the two never commute),
// as does an insert, which also takes the table's sequences.
struct SqlTable {
  sql::CreateTable def;
  ObjectId object = kNoObject;
  // Written by each step that adds a tuple (Server::new_tuple), read by none: the order of
  // two new tuples is the heap order later scans see, whoever commits first.
  ObjectId heap = kNoObject;
  std::vector<int> key;  // the primary key's columns, by index
  // UNIQUE constraints and unique indexes besides the primary key: their columns and names.
  // A table with one has every row version written in a step that writes its object (the
  // unique check reads every row's versions).
  struct UniqueKey {
    std::vector<int> columns;  // by key part: a column's number, or -1 for an expression
    // A unique index on expressions: by key part, the expression (nullptr for a column), or
    // empty when every part is a column.
    std::vector<std::shared_ptr<const sql::Expr>> expressions;
    std::string name;
    std::shared_ptr<const sql::Expr> where;  // a partial unique index: the rows it holds (others repeat freely)
    bool constraint = true;  // a UNIQUE constraint (ON CONFLICT ON CONSTRAINT names it), not CREATE UNIQUE INDEX's
  };
  std::vector<UniqueKey> unique;
  // Its other indexes (CREATE INDEX): the name (DROP INDEX finds it), the key columns of a
  // btree whose key parts are all columns and which has no predicate (a scan the planner may
  // pick: sim/pg/executor/sql_scan_choice.h; else empty), and every column it reads (an
  // UPDATE of one is no heap-only tuple).
  struct PlainIndex {
    std::string name;
    std::vector<std::string> columns;
    std::vector<std::string> reads;
    std::shared_ptr<const sql::Expr> where;  // a partial index's predicate
  };
  std::vector<PlainIndex> indexes;
  bool has_index(std::string_view name) const {
    return std::any_of(indexes.begin(), indexes.end(), [&](const PlainIndex& i) { return i.name == name; });
  }
  // An index was built over rows of it (CREATE INDEX, ADD PRIMARY KEY or UNIQUE): the server
  // then has its page and row counts, which the planner's estimates use (sql_hash_aggregate.h).
  bool planner_stats = false;
  std::uint64_t tuples_written = 0;  // tuple versions written to its heap (dead ones too: its pages)
  // CREATE TRIGGER's: a LANGUAGE plpgsql function, never run (a statement firing one is refused).
  struct Trigger {
    std::string name, function;
    std::vector<std::string> events;  // INSERT, UPDATE, DELETE, TRUNCATE
    std::shared_ptr<const sql::Expr> when;  // WHEN (condition), or null
    bool before = false, row = false, args = false;  // BEFORE (else AFTER), FOR EACH ROW, arguments given
    std::vector<std::string> of_columns;              // UPDATE OF's
  };
  std::vector<Trigger> triggers;
  // Foreign keys (REFERENCES): this table's columns, the parent's (its primary key or a
  // unique key), by index; and the children's keys that reference this table.
  struct ForeignKey {
    std::string name;
    std::vector<int> columns;
    std::string parent;
    std::vector<int> parent_columns;
    bool restrict_delete = false, restrict_update = false;
    sql::ForeignKey::OnDelete on_delete = sql::ForeignKey::OnDelete::no_action;
    bool deferrable = false, deferred = false;  // DEFERRABLE, INITIALLY DEFERRED (sql::ForeignKey)
  };
  std::vector<ForeignKey> foreign_keys;
  std::vector<std::pair<std::string, std::size_t>> referenced_by;  // (child table, index in its foreign_keys)
  std::map<std::string, std::int64_t, std::less<>> ids;
  std::int64_t next_id = 1;
  // Per column: a serial's sequence, as the server's sequence relation has it (last_value,
  // is_called: the next nextval returns `last` itself until called).
  struct SerialSequence {
    std::int64_t last = 0;
    bool called = false;
    std::int64_t next(std::int64_t increment) { return called ? last += increment : (called = true, last); }
  };
  std::vector<SerialSequence> sequences;
  // The statements whose column names were checked against this table (SqlRun::check_once),
  // each by its plan node; the entry keeps the plan alive so no other plan takes its address.
  std::vector<std::pair<std::shared_ptr<const void>, const void*>> checked;
  // A FROM of several relations joined into one (sim/pg/executor/sql_from.cc): its columns are named
  // "relation\x1fcolumn"; not a table of the server.
  bool joined = false;
  std::vector<std::string> derived;  // ... its relations that are no table (a subquery, VALUES, a function)
  // Per WHERE run on this table (its plan kept alive likewise): the constant or $n each
  // primary key column is pinned to, in key order; empty when it pins no row (SqlRun::pinned_row).
  struct Pins {
    std::shared_ptr<const void> plan;
    const sql::Expr* where;
    std::vector<const sql::Expr*> values;
  };
  std::vector<Pins> pins;
  // Whether column i is a key column (of the primary key or a unique key): an UPDATE that
  // assigns one locks its row FOR UPDATE, others FOR NO KEY UPDATE (ExecUpdateLockMode).
  bool is_key_column(int i) const {
    if (std::find(key.begin(), key.end(), i) != key.end()) return true;
    // The server's key columns (what FOR KEY SHARE protects): those of unique indexes that
    // have neither a predicate nor an expression (RelationGetIndexAttrBitmap's).
    for (const UniqueKey& u : unique) {
      if (u.where == nullptr && u.expressions.empty() && std::find(u.columns.begin(), u.columns.end(), i) != u.columns.end()) return true;
    }
    return false;
  }
  // The column's index, or -1.
  int column(std::string_view name) const {
    for (std::size_t i = 0; i < def.columns.size(); ++i) {
      if (def.columns[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }
};

}  // namespace lockstep::sim::pg
