// sim/pg/lock/ssi.h: PostgreSQL 15's serializable snapshot isolation (predicate.c) for the
// simulated server: per SERIALIZABLE transaction (an "sxact") its SIREAD locks, its
// read/write conflicts in and out, its flags and sequence numbers, and the checks that fail
// one of a dangerous structure's transactions with 40001. docs/postgres-ssi.md gives the
// rules and where each comes from; the callers (sim/pg/executor/sql_ssi.cc) say which targets a read
// locks, which writers it conflicts out to and which targets a write checks.
//
// Guarantees: deterministic (ordered containers, numbers given in call order); a broken
// invariant (an unknown or released transaction used) stops loudly. Not modelled: the
// summarised (SLRU) conflicts of an exhausted pool, two-phase commit, DEFERRABLE, the
// cleanup of committed transactions (kept for the whole execution: every check that could
// meet one filters by concurrency as the server's does), relation promotion past 31 locks.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lockstep/model/pg.h"

namespace lockstep::sim::pg {

// What a SIREAD lock covers: a table, its one heap page, one tuple (its heap position), or
// an index (its one leaf page; an empty index's relation lock conflicts alike).
struct SsiTarget {
  enum class Kind : std::uint8_t { relation, page, tuple, index };
  Kind kind = Kind::relation;
  std::string name;  // the table, or the index's name
  std::uint64_t tuple = 0;
  friend auto operator<=>(const SsiTarget&, const SsiTarget&) = default;
  static SsiTarget relation(std::string table) { return {Kind::relation, std::move(table), 0}; }
  static SsiTarget page(std::string table) { return {Kind::page, std::move(table), 0}; }
  static SsiTarget at(std::string table, std::uint64_t position) { return {Kind::tuple, std::move(table), position}; }
  static SsiTarget index(std::string name) { return {Kind::index, std::move(name), 0}; }
};

class Ssi {
 public:
  using Xact = int;
  static constexpr Xact kNone = -1;
  using Error = lockstep::pg::Error;

  // A SERIALIZABLE transaction of session `pid` takes its snapshot: its sxact, or kNone when
  // it opts out (declared READ ONLY with no read-write sxact running).
  Xact begin(int pid, bool declared_read_only);
  // Its first write or row lock: a transaction id (what snapshots' xmin compare with).
  void assign_xid(Xact x);
  // Whether x is still tracked: false once released, or when a READ ONLY one found safe
  // released itself at a read (it then never fails).
  bool tracked(Xact x) const { return x != kNone && xacts_.at(static_cast<std::size_t>(x)).live; }
  // Whether another sxact runs, or committed after x's snapshot: the conflicts x can meet.
  bool beside_others(Xact x) const;
  // What x did that the simulation's SIREAD locks may not model (a scan of a plain index):
  // another sxact beside it is refused (begin_refusal).
  void note_imprecise(Xact x, std::string what);
  // A running or concurrent sxact's imprecise read, for a new one to refuse, or "".
  std::string begin_refusal() const;

  // ---- Reads. Before a read examines a tuple: a doomed x fails; a READ ONLY one found safe
  // releases everything (then tracked() is false).
  std::optional<Error> before_tuple_read(Xact x);
  void release_if_safe(Xact x);
  // A SIREAD lock, coarser locks covering finer ones, a third tuple lock on the page
  // promoting to the page (max_pred_locks_per_page 2).
  void lock(Xact x, const SsiTarget& t);
  // x read past a version `writer` wrote concurrently (CheckForSerializableConflictOut).
  std::optional<Error> conflict_out(Xact x, Xact writer);

  // ---- Writes (CheckForSerializableConflictIn): a heap write of a tuple checks it, the
  // page and the table; an insert the table; an index entry its index.
  std::optional<Error> conflict_in(Xact x, const std::vector<SsiTarget>& targets, bool in_subtransaction);

  // ---- The end. PreCommit_CheckForSerializationFailure, then ReleasePredicateLocks.
  std::optional<Error> pre_commit(Xact x);
  void release(Xact x, bool commit);

  // ---- Who wrote what: committed versions by the server's commit count; running writers by pid.
  void note_version(std::uint64_t commit_seq, Xact writer) { writers_[commit_seq] = writer; }
  Xact writer_of(std::uint64_t commit_seq) const;
  Xact running_of(int pid) const;

 private:
  struct Sxact {
    int pid = 0;
    bool live = true;  // not yet released by an abort (committed ones stay)
    bool committed = false, prepared = false, doomed = false, conflict_out = false, read_only = false;
    bool declared_read_only = false, ro_safe = false, ro_unsafe = false, did_write = false;
    std::uint64_t xid = 0;  // 0: none yet
    std::uint64_t xmin = 0, finished_before = 0;
    std::uint64_t last_commit_before_snapshot = 0, prepare_seq = 0, commit_seq = 0, earliest_out_conflict_commit = 0;
    std::set<Xact> out, in;  // rw-conflicts: x read what `out` wrote; `in` read what x wrote
    std::set<Xact> possible_unsafe;  // a declared READ ONLY one: the read-write ones beside it (and back)
    std::set<SsiTarget> locks;
    std::map<SsiTarget, int> child_locks;  // per page or relation: x's finer locks under it
    std::string imprecise;
  };
  Sxact& get(Xact x);
  const Sxact& get(Xact x) const;
  bool edge_exists(Xact reader, Xact writer) const;
  std::optional<Error> flag(Xact reader, Xact writer, Xact me);
  void add_lock(Xact x, const SsiTarget& t);
  void drop_lock(Xact x, const SsiTarget& t);
  void release_all(Xact x);  // an abort's ReleaseOneSerializableXact: locks, edges, links
  std::uint64_t snapshot_xmin() const;

  std::vector<Sxact> xacts_;
  std::map<SsiTarget, std::set<Xact>> holders_;
  std::map<std::uint64_t, Xact> writers_;
  std::uint64_t last_seq_ = 0;   // LastSxactCommitSeqNo
  std::uint64_t next_xid_ = 3;   // FirstNormalTransactionId
};

}  // namespace lockstep::sim::pg
