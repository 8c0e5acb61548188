// sim/pg/lock/ssi.cc: serializable snapshot isolation's state and checks (sim/pg/lock/ssi.h), as
// PostgreSQL 15's predicate.c decides them (docs/postgres-ssi.md, sections 1-5).
#include "lockstep/sim/pg/lock/ssi.h"

#include <fmt/format.h>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim::pg {
namespace {

constexpr int kMaxLocksPerPage = 2;       // max_pred_locks_per_page
constexpr int kMaxLocksPerRelation = 31;  // max_pred_locks_per_transaction 64 / -max_pred_locks_per_relation 2 - 1

// Every SSI failure's message (its DETAIL, the reason code at each call, is not a client's).
lockstep::pg::Error ssi_failure() { return {"40001", "could not serialize access due to read/write dependencies among transactions"}; }

}  // namespace

Ssi::Sxact& Ssi::get(Xact x) {
  LOCKSTEP_INVARIANT(x >= 0 && static_cast<std::size_t>(x) < xacts_.size(), "ssi: a known serializable transaction");
  return xacts_[static_cast<std::size_t>(x)];
}

const Ssi::Sxact& Ssi::get(Xact x) const {
  LOCKSTEP_INVARIANT(x >= 0 && static_cast<std::size_t>(x) < xacts_.size(), "ssi: a known serializable transaction");
  return xacts_[static_cast<std::size_t>(x)];
}

std::uint64_t Ssi::snapshot_xmin() const {
  std::uint64_t xmin = next_xid_;
  for (const Sxact& s : xacts_) {
    if (s.live && !s.committed && s.xid != 0 && s.xid < xmin) xmin = s.xid;
  }
  return xmin;
}

Ssi::Xact Ssi::begin(int pid, bool declared_read_only) {
  const Xact x = static_cast<Xact>(xacts_.size());
  std::vector<Xact> writers;  // read-write sxacts running: a READ ONLY one's possible unsafe conflicts
  for (Xact y = 0; y < x; ++y) {
    const Sxact& s = get(y);
    if (s.live && !s.committed && !s.doomed && !s.read_only) writers.push_back(y);
  }
  if (declared_read_only && writers.empty()) return kNone;  // opts out: it can never fail
  Sxact s;
  s.pid = pid;
  s.declared_read_only = s.read_only = declared_read_only;
  s.last_commit_before_snapshot = last_seq_;
  s.xmin = snapshot_xmin();
  if (declared_read_only) {
    for (const Xact y : writers) {
      s.possible_unsafe.insert(y);
      get(y).possible_unsafe.insert(x);
    }
  }
  xacts_.push_back(std::move(s));
  return x;
}

void Ssi::assign_xid(Xact x) {
  if (!tracked(x)) return;
  Sxact& s = get(x);
  if (s.xid == 0) s.xid = next_xid_++;
}

bool Ssi::beside_others(Xact x) const {
  const Sxact& me = get(x);
  for (Xact y = 0; y < static_cast<Xact>(xacts_.size()); ++y) {
    const Sxact& s = get(y);
    if (y == x || !s.live) continue;
    if (!s.committed || s.commit_seq > me.last_commit_before_snapshot) return true;
  }
  return false;
}

void Ssi::note_imprecise(Xact x, std::string what) {
  Sxact& s = get(x);
  if (s.imprecise.empty()) s.imprecise = std::move(what);
}

std::string Ssi::begin_refusal() const {
  for (const Sxact& s : xacts_) {
    if (s.live && !s.committed && !s.imprecise.empty()) return s.imprecise;
  }
  return {};
}

std::optional<Ssi::Error> Ssi::before_tuple_read(Xact x) {
  if (!tracked(x)) return std::nullopt;
  release_if_safe(x);
  if (!tracked(x)) return std::nullopt;
  if (get(x).doomed) return ssi_failure();  // Canceled on identification as a pivot, during conflict out checking.
  return std::nullopt;
}

void Ssi::release_if_safe(Xact x) {
  // SerializationNeededForRead: a READ ONLY transaction found safe lets everything go and
  // runs on without serializable checks (ReleasePredicateLocks(false, true)).
  if (tracked(x) && get(x).ro_safe) release(x, false);
}

void Ssi::add_lock(Xact x, const SsiTarget& t) {
  get(x).locks.insert(t);
  holders_[t].insert(x);
}

void Ssi::drop_lock(Xact x, const SsiTarget& t) {
  Sxact& s = get(x);
  if (s.locks.erase(t) == 0) return;
  if (auto it = holders_.find(t); it != holders_.end()) {
    it->second.erase(x);
    if (it->second.empty()) holders_.erase(it);
  }
  // DecrementParentLocks
  auto decrement = [&](const SsiTarget& parent) {
    if (auto it = s.child_locks.find(parent); it != s.child_locks.end() && --it->second <= 0) s.child_locks.erase(it);
  };
  if (t.kind == SsiTarget::Kind::tuple) decrement(SsiTarget::page(t.name));
  if (t.kind == SsiTarget::Kind::tuple || t.kind == SsiTarget::Kind::page) decrement(SsiTarget::relation(t.name));
}

void Ssi::lock(Xact x, const SsiTarget& t) {
  release_if_safe(x);
  if (!tracked(x)) return;
  Sxact& s = get(x);
  if (s.locks.contains(t)) return;
  using K = SsiTarget::Kind;
  if (t.kind == K::tuple && s.locks.contains(SsiTarget::page(t.name))) return;  // CoarserLockCovers
  if ((t.kind == K::tuple || t.kind == K::page) && s.locks.contains(SsiTarget::relation(t.name))) return;
  add_lock(x, t);
  // CheckAndPromotePredicateLockRequest: each parent counts the lock; the coarsest one over
  // its limit is taken instead (which drops the finer ones).
  std::optional<SsiTarget> promote;
  if (t.kind == K::tuple && ++s.child_locks[SsiTarget::page(t.name)] > kMaxLocksPerPage) promote = SsiTarget::page(t.name);
  if ((t.kind == K::tuple || t.kind == K::page) && ++s.child_locks[SsiTarget::relation(t.name)] > kMaxLocksPerRelation) {
    promote = SsiTarget::relation(t.name);
  }
  if (promote) {
    lock(x, *promote);
    return;
  }
  if (t.kind == K::page || t.kind == K::relation) {  // DeleteChildTargetLocks
    std::vector<SsiTarget> finer;
    for (const SsiTarget& held : s.locks) {
      if (held.name == t.name && (held.kind == K::tuple || (t.kind == K::relation && held.kind == K::page))) finer.push_back(held);
    }
    for (const SsiTarget& f : finer) drop_lock(x, f);
  }
}

bool Ssi::edge_exists(Xact reader, Xact writer) const {
  const Sxact& r = get(reader);
  if (r.doomed || get(writer).doomed) return false;  // RWConflictExists
  return r.out.contains(writer);
}

std::optional<Ssi::Error> Ssi::flag(Xact reader, Xact writer, Xact me) {
  Sxact& r = get(reader);
  Sxact& w = get(writer);
  // OnConflict_CheckForSerializationFailure: the edge reader -> writer closes a dangerous
  // structure whose transaction out committed (prepared) first.
  bool failure = w.committed && w.conflict_out;
  for (auto it = w.out.begin(); !failure && it != w.out.end(); ++it) {
    const Sxact& t2 = get(*it);
    failure = t2.prepared && (!r.committed || t2.prepare_seq <= r.commit_seq) && (!w.committed || t2.prepare_seq <= w.commit_seq) &&
              (!r.read_only || t2.prepare_seq <= r.last_commit_before_snapshot);
  }
  if (!failure && w.prepared && !r.read_only) {
    for (auto it = r.in.begin(); !failure && it != r.in.end(); ++it) {
      const Sxact& t0 = get(*it);
      failure = !t0.doomed && (!t0.committed || t0.commit_seq >= w.prepare_seq) &&
                (!t0.read_only || t0.last_commit_before_snapshot >= w.prepare_seq);
    }
  }
  if (failure) {
    if (me == writer) return ssi_failure();  // Canceled on identification as a pivot, during write.
    if (w.prepared) return ssi_failure();  // Canceled on conflict out to pivot, during read.
    w.doomed = true;
  }
  r.out.insert(writer);
  w.in.insert(reader);
  return std::nullopt;
}

std::optional<Ssi::Error> Ssi::conflict_out(Xact x, Xact writer) {
  if (!tracked(x)) return std::nullopt;
  Sxact& me = get(x);
  if (me.doomed) return ssi_failure();  // Canceled on identification as a pivot, during conflict out checking.
  if (writer == kNone || writer == x) return std::nullopt;
  const Sxact& w = get(writer);
  if (!w.live || w.doomed) return std::nullopt;
  if (me.read_only && w.committed && (!w.conflict_out || me.last_commit_before_snapshot < w.earliest_out_conflict_commit)) {
    return std::nullopt;
  }
  if (edge_exists(x, writer)) return std::nullopt;
  return flag(x, writer, x);
}

std::optional<Ssi::Error> Ssi::conflict_in(Xact x, const std::vector<SsiTarget>& targets, bool in_subtransaction) {
  if (!tracked(x)) return std::nullopt;
  Sxact& me = get(x);
  if (me.doomed) return ssi_failure();  // Canceled on identification as a pivot, during conflict in checking.
  me.did_write = true;
  for (const SsiTarget& t : targets) {
    const auto it = holders_.find(t);
    if (it == holders_.end()) continue;
    const std::vector<Xact> holders(it->second.begin(), it->second.end());
    bool own_tuple = false;
    for (const Xact s : holders) {
      if (s == x) {
        own_tuple = t.kind == SsiTarget::Kind::tuple && !in_subtransaction;
        continue;
      }
      const Sxact& other = get(s);
      if (!other.doomed && (!other.committed || me.xmin < other.finished_before) && !edge_exists(s, x)) {
        if (auto e = flag(s, x, x)) return e;
      }
    }
    if (own_tuple) drop_lock(x, t);  // the writer's own lock on the tuple it replaces
  }
  return std::nullopt;
}

std::optional<Ssi::Error> Ssi::pre_commit(Xact x) {
  if (!tracked(x)) return std::nullopt;
  Sxact& me = get(x);
  if (me.doomed) return ssi_failure();  // Canceled on identification as a pivot, during commit attempt.
  // A pivot that has not committed, with this transaction (or another read-write one still
  // running) on its way in, is doomed: the one committing first wins.
  for (const Xact p : std::vector<Xact>(me.in.begin(), me.in.end())) {
    Sxact& pivot = get(p);
    if (pivot.committed || pivot.doomed) continue;
    for (const Xact far : pivot.in) {
      const Sxact& f = get(far);
      if (far == x || (!f.committed && !f.read_only && !f.doomed)) {
        LOCKSTEP_INVARIANT(!pivot.prepared, "ssi: a prepared pivot needs two-phase commit, not modelled");
        pivot.doomed = true;
        break;
      }
    }
  }
  me.prepare_seq = ++last_seq_;
  me.prepared = true;
  return std::nullopt;
}

void Ssi::release(Xact x, bool commit) {
  if (!tracked(x)) return;
  Sxact& me = get(x);
  const bool declared_read_only = me.read_only;  // before a commit adds the implicit one
  me.finished_before = next_xid_;
  if (commit) {
    me.committed = true;
    me.commit_seq = ++last_seq_;
    if (!me.did_write) me.read_only = true;
  } else {
    me.doomed = true;
    me.prepared = false;
  }
  if (declared_read_only) {
    for (const Xact y : me.possible_unsafe) get(y).possible_unsafe.erase(x);
    me.possible_unsafe.clear();
  }
  for (const Xact w : std::vector<Xact>(me.out.begin(), me.out.end())) {
    Sxact& writer = get(w);
    if (commit && !me.read_only && writer.committed) {
      if (!me.conflict_out || writer.prepare_seq < me.earliest_out_conflict_commit) me.earliest_out_conflict_commit = writer.prepare_seq;
      me.conflict_out = true;
    }
    if (!commit || writer.committed || writer.last_commit_before_snapshot >= last_seq_) {
      me.out.erase(w);
      writer.in.erase(x);
    }
  }
  for (const Xact r : std::vector<Xact>(me.in.begin(), me.in.end())) {
    Sxact& reader = get(r);
    if (!commit || reader.committed || reader.read_only) {
      me.in.erase(r);
      reader.out.erase(x);
    }
  }
  if (!declared_read_only) {
    for (const Xact ro : std::vector<Xact>(me.possible_unsafe.begin(), me.possible_unsafe.end())) {
      Sxact& r = get(ro);
      if (commit && me.did_write && me.conflict_out && me.earliest_out_conflict_commit <= r.last_commit_before_snapshot) {
        r.ro_unsafe = true;  // FlagSxactUnsafe: it keeps every check, and no link
        for (const Xact y : r.possible_unsafe) get(y).possible_unsafe.erase(ro);
        r.possible_unsafe.clear();
      } else {
        me.possible_unsafe.erase(ro);
        r.possible_unsafe.erase(x);
        if (r.possible_unsafe.empty() && !r.ro_unsafe) r.ro_safe = true;
      }
    }
  }
  if (!commit) release_all(x);
}

void Ssi::release_all(Xact x) {
  Sxact& me = get(x);
  me.live = false;
  for (const SsiTarget& t : me.locks) {
    if (auto it = holders_.find(t); it != holders_.end()) {
      it->second.erase(x);
      if (it->second.empty()) holders_.erase(it);
    }
  }
  me.locks.clear();
  me.child_locks.clear();
  for (const Xact w : me.out) get(w).in.erase(x);
  for (const Xact r : me.in) get(r).out.erase(x);
  for (const Xact y : me.possible_unsafe) get(y).possible_unsafe.erase(x);
  me.out.clear();
  me.in.clear();
  me.possible_unsafe.clear();
}

Ssi::Xact Ssi::writer_of(std::uint64_t commit_seq) const {
  const auto it = writers_.find(commit_seq);
  return it == writers_.end() ? kNone : it->second;
}

Ssi::Xact Ssi::running_of(int pid) const {
  for (Xact y = static_cast<Xact>(xacts_.size()) - 1; y >= 0; --y) {
    const Sxact& s = get(y);
    if (s.pid == pid && s.live && !s.committed) return y;
  }
  return kNone;
}

}  // namespace lockstep::sim::pg
