// sim/pg/heap/row_versions.h: the heap layer's row: one key's tuple versions as the simulated
// server keeps them (the committed one, older ones a snapshot may still see, each session's
// uncommitted one) with their heap positions and HOT chains, and the visibility questions
// the executor asks of them (version_at, changed_since, updated_since). No step, no lock.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <boost/container/flat_map.hpp>
#include <boost/container/small_vector.hpp>

#include "lockstep/model/pg.h"

namespace lockstep::sim::pg {

// A row's committed version, and the versions transactions wrote but did not commit.
// Every version that is a new tuple (an INSERT's row, an UPDATE's new row, also one that
// updates the transaction's own version) gets the next heap position of the server: the
// heap's physical order, in which a sequential scan returns rows (a table of a few rows fits
// one page and is never pruned, so each new tuple goes to its end). A DELETE or a row lock
// changes the tuple in place and keeps its position. A version also has its HOT chain's
// root: an UPDATE that changes no indexed column (primary or unique key) is a heap-only
// tuple reached through the old version's line pointer, so a bitmap heap scan (an index
// qual) lists it where the chain starts; any other new tuple is its own root.
struct HeapPlace {
  std::uint64_t position = 0;
  std::uint64_t root = 0;
};
struct RowState {
  std::optional<lockstep::pg::Row> committed;
  std::uint64_t committed_seq = 0;  // the server's commit count when `committed` was committed
  HeapPlace committed_place;  // where `committed` sits in the heap
  // Versions `committed` replaced while a REPEATABLE READ snapshot was open (one may still
  // see them), with their commit counts and how they ended, oldest first.
  struct Older {
    std::uint64_t seq = 0;
    std::optional<lockstep::pg::Row> version;
    HeapPlace place;
    bool updated = false;       // replaced by an UPDATE (a new tuple), not deleted
    bool keys_updated = false;  // ... by one that held the row FOR UPDATE (HEAP_KEYS_UPDATED)
  };
  std::vector<Older> older;
  // The committed version a snapshot taken at commit count `seq` sees.
  const std::optional<lockstep::pg::Row>& version_at(std::uint64_t seq) const;
  // ... and its place in the heap.
  HeapPlace place_at(std::uint64_t seq) const;
  // Whether that version was replaced by an UPDATE of it (heap_update: a new tuple, even one
  // the same transaction then deleted) rather than deleted: what a REPEATABLE READ statement
  // that meets it reports ("concurrent update" or "concurrent delete"). REQUIRES: a commit
  // after `seq` changed the row.
  bool updated_since(std::uint64_t seq) const;
  // Whether a commit after `seq` changed it: else a lock taken now holds the version a
  // snapshot at `seq` read, and the server's executor does not re-check it (no EvalPlanQual).
  bool changed_since(std::uint64_t seq) const { return committed_seq > seq; }
  // Whether the row changed since `seq` by updates that kept its keys only (no FOR UPDATE
  // lock: a key change takes one), each committed (so it is still there, in a later
  // version): what FOR KEY SHARE locks through, whatever the snapshot. REQUIRES:
  // a snapshot was open since `seq` (older versions kept).
  bool changed_keeping_keys_only_since(std::uint64_t seq) const;
  // Writes `pid`'s version of the row (nullopt: deleted) for an UPDATE or a DELETE: its first
  // write to a committed row that is an update makes a new tuple (updated_by), one whose
  // keys count as updated when the writer holds the row FOR UPDATE (`for_update`). A version
  // (not a deletion) is a new tuple at heap position `position`, in the old version's HOT
  // chain when `hot` (no indexed column changed).
  void write(int pid, std::optional<lockstep::pg::Row> version, bool for_update, std::uint64_t position, bool hot);
  // Which tuple holds the key: a transaction that deleted the row and inserted its key again
  // made another one, and its commit counts it here (an UPDATE that waited for the old tuple
  // finds it deleted, as EvalPlanQual does, and leaves the new one alone).
  std::uint64_t tuple = 0;
  // The committed tuple was moved to another slot by a key-changing UPDATE: the slot of its
  // newest version, which a READ COMMITTED statement that found this one follows
  // (EvalPlanQual along the ctid chain); 0 when it was not moved. Reset by each commit.
  std::int64_t forward = 0;
  // The sessions that held the row FOR KEY SHARE when its newest version was committed: their
  // locks sit on the version it replaced (a multixact beside the update), so a REPEATABLE
  // READ FOR UPDATE SKIP LOCKED of that version finds it being modified and skips it.
  boost::container::small_vector<int, 2> key_sharers_at_commit;
  int reinserted_by = 0;  // the session whose pending version is such a new tuple, or 0
  int updated_by = 0;     // the session whose first write of the committed version updated it, or 0
  bool updated_keys = false;  // ... holding the row FOR UPDATE
  // A version a transaction wrote (nullopt: it deleted the row) and its heap position.
  struct Written {
    std::optional<lockstep::pg::Row> version;
    HeapPlace place;
    // The subtransaction (a savepoint's number; 0: the top level) whose write first made this
    // version since the committed one: the id a unique check of another session waits on
    // (the tuple's xmin or xmax), so a ROLLBACK TO that ends it ends the wait.
    int subtransaction = 0;
    // Its INSERT waits in a unique check: its entries in the table's unique indexes (but the
    // primary key's) are not in yet (the server checks a unique index before it inserts the
    // entry), so another session's check does not find them.
    bool checking_unique = false;
    // A key-changing UPDATE (sim/pg/executor/sql_key_update.cc): rows are slots by primary key, so
    // the new version goes to its key's slot. `moved`: the committed tuple of this slot left
    // that way (an update, HEAP_KEYS_UPDATED, not a deletion). `moved_from`: the slot whose
    // committed tuple this version continues (its own when the key came back), or 0.
    bool moved = false;
    std::int64_t moved_from = 0;
    // A deletion by TRUNCATE, which is not MVCC-safe: its commit keeps no older version, so a
    // snapshot taken before it sees the row gone too (sim/pg/executor/sql_truncate.cc).
    bool truncated = false;
    // The subtransaction whose write made `version` (its tuple's xmin): what a unique check
    // that finds the version's key waits on.
    int made_in = 0;
    // The versions this transaction wrote before `version` and replaced since, each with its
    // subtransaction: their tuples keep their unique index entries while it runs (xmin in
    // progress), so another session's unique check of one of their keys waits for it.
    struct Earlier {
      lockstep::pg::Row version;
      int made_in = 0;
    };
    std::vector<Earlier> earlier;
  };
  // Per session, in pid order (at most one holds a version: a version needs the row lock).
  boost::container::flat_map<int, Written, std::less<int>, boost::container::small_vector<std::pair<int, Written>, 1>> pending;
};

}  // namespace lockstep::sim::pg
