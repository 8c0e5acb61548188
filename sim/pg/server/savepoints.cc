// sim/pg/server/savepoints.cc: SAVEPOINT, RELEASE SAVEPOINT and ROLLBACK TO SAVEPOINT on the simulated
// server (sim/pg/server/connection.h): a savepoint keeps what the transaction's rows and row locks
// were; rolling back to it puts them back in one step on every row that changed since, as
// the server aborts the subtransaction at one moment. A plpgsql EXCEPTION block's
// subtransaction is an unnamed savepoint of the same kind.
#include "lockstep/sim/pg/server/connection.h"

#include "lockstep/sim/invariant.h"

namespace lockstep::sim::pg {
namespace {

Error not_in_block(std::string_view statement) {
  return {"25P01", fmt::format("{} can only be used in transaction blocks", statement)};
}

Error no_such(const std::string& name) { return {"3B001", fmt::format("savepoint \"{}\" does not exist", name)}; }

// The transaction-scope holds of `pid` in `locks`, per key: what a savepoint keeps.
std::map<AdvisoryKey, std::array<int, kModes>> savepoint_holds(const LockTable& locks, int pid) {
  std::vector<AdvisoryKey> keys;
  locks.held_keys(pid, Scope::transaction, keys);
  std::map<AdvisoryKey, std::array<int, kModes>> out;
  for (const AdvisoryKey& k : keys) out[k] = locks.holds(pid, k, Scope::transaction);
  return out;
}

// Lets go of what `pid` took in `locks` since the savepoint's `kept` holds.
void savepoint_reduce(LockTable& locks, int pid, const std::map<AdvisoryKey, std::array<int, kModes>>& kept) {
  std::vector<AdvisoryKey> keys;
  locks.held_keys(pid, Scope::transaction, keys);
  for (const AdvisoryKey& k : keys) {
    const auto was = kept.find(k);
    locks.reduce_to(pid, k, Scope::transaction, was != kept.end() ? was->second : std::array<int, kModes>{});
  }
}

}  // namespace

Status SimConnection::savepoint(const std::string& name) {
  Statement st(*this);
  if (auto refused = begin_statement({"savepoint", {}, pid_, true}, false)) return *refused;
  if (!session_.in_transaction || implicit_block_) return not_in_block("SAVEPOINT");
  savepoints_.push_back(mark_here(name));
  return {};
}

SimConnection::Savepoint SimConnection::mark_here(const std::string& name) {
  Savepoint mark;
  mark.name = name;
  mark.subtransaction = ++subtransactions_;
  mark.locked_rows = locked_rows_;
  mark.written = written_;
  auto keep = [&](const std::pair<std::string, std::int64_t>& row) {
    mark.holds[row] = server_.row_locks().holds(pid_, server_.row_key(row.first, row.second), Scope::transaction);
  };
  for (const auto& row : locked_rows_) keep(row);
  for (const auto& row : written_) {
    keep(row);
    const RowState& r = server_.row(row.first, row.second);
    if (const auto mine = r.pending.find(pid_); mine != r.pending.end()) mark.versions[row] = mine->second;
  }
  mark.table_holds = savepoint_holds(server_.table_locks(), pid_);
  mark.advisory_holds = savepoint_holds(server_.locks(), pid_);
  mark.settings = session_settings_;
  mark.lock_timeout = lock_timeout_;
  mark.statement_timeout = statement_timeout_;
  mark.deadlock_timeout = deadlock_timeout_;
  mark.idle_timeout = idle_timeout_;
  mark.idle_session_timeout = idle_session_timeout_;
  mark.planner_off = planner_off_;
  mark.custom = custom_;
  mark.style_of_session = style_of_session_;
  mark.style = {style_, session_.application_name};
  mark.read_only = read_only_;
  mark.listens = pending_listens_.size();
  mark.notifies = pending_notifies_.size();
  mark.deferred_checks = deferred_checks_;
  mark.constraint_modes = constraint_modes_;
  return mark;
}

std::size_t SimConnection::begin_internal_subtransaction() {
  savepoints_.push_back(mark_here(""));  // a name no SAVEPOINT can give (a zero-length identifier)
  return savepoints_.size() - 1;
}

void SimConnection::release_internal_subtransaction(std::size_t at) {
  LOCKSTEP_INVARIANT(at < savepoints_.size() && savepoints_[at].name.empty(), "a plpgsql block releases its own subtransaction");
  savepoints_.resize(at);  // what it kept is its parent's now
}

void SimConnection::rollback_internal_subtransaction(std::size_t at, bool was_aborted) {
  LOCKSTEP_INVARIANT(at < savepoints_.size() && savepoints_[at].name.empty(), "a plpgsql block rolls back its own subtransaction");
  savepoints_.resize(at + 1);  // blocks nested in it, left by the error, go with it
  const Footprint f = undo_footprint();
  if (f.object != kNoObject && !within_last_step(f)) step({"abort_subtransaction", f, pid_, true});
  if (!session_.terminated) roll_back_to(savepoints_[at]);
  savepoints_.resize(at);
  session_.aborted = was_aborted;
}

Status SimConnection::release_savepoint(const std::string& name) {
  Statement st(*this);
  if (auto refused = begin_statement({"release_savepoint", {}, pid_, true}, false)) return *refused;
  if (!session_.in_transaction || implicit_block_) return not_in_block("RELEASE SAVEPOINT");
  for (std::size_t i = savepoints_.size(); i-- > 0;) {
    if (savepoints_[i].name == name) {
      savepoints_.resize(i);  // it and the newer ones: what they kept is the transaction's now
      return {};
    }
  }
  return abort_with(no_such(name));
}

std::vector<std::pair<std::string, std::int64_t>> SimConnection::changed_since_mark() const {
  std::vector<std::pair<std::string, std::int64_t>> changed(locked_rows_.begin(), locked_rows_.end());
  for (const auto& row : written_) {
    if (locked_rows_.count(row) == 0) changed.push_back(row);
  }
  return changed;
}

Footprint SimConnection::undo_footprint() {
  // One step on every row whose version or lock may change back, and on the tables whose
  // rows changed (the unique check reads other sessions' versions).
  Footprint f{kNoObject, Access::release};
  f.domain = server_.domain();
  f.domain_write = strong_table_lock_;  // a LOCK TABLE's lock may go with the subtransaction: waiters anywhere
  for (const auto& row : changed_since_mark()) {
    add_object(f, server_.row_object(row.first, row.second));
    if (written_.count(row) != 0) {
      if (const SqlTable* t = server_.sql_table(row.first)) add_object(f, t->object);
    }
  }
  std::vector<AdvisoryKey> advisory;  // pg_advisory_xact_lock's: those since the mark go
  server_.locks().held_keys(pid_, Scope::transaction, advisory);
  for (const AdvisoryKey& k : advisory) add_object(f, server_.object_for(k));
  return f;
}

void SimConnection::undo_to(const Savepoint& mark) {
  for (const auto& row : changed_since_mark()) {
    RowState& r = server_.row(row.first, row.second);
    if (written_.count(row) != 0) {
      if (const auto was = mark.versions.find(row); was != mark.versions.end()) {
        r.pending[pid_] = was->second;
      } else {
        r.pending.erase(pid_);
        if (r.reinserted_by == pid_) r.reinserted_by = 0;
        if (r.updated_by == pid_) r.updated_by = 0;
      }
    }
    const auto held = mark.holds.find(row);
    server_.row_locks().reduce_to(pid_, server_.row_key(row.first, row.second), Scope::transaction,
                                  held != mark.holds.end() ? held->second : std::array<int, kModes>{}, /*raced=*/true);
  }
  if (mark.written.empty() && !written_.empty()) {
    // The transaction key its first write took goes too: nothing it wrote is left.
    server_.row_locks().release_key(pid_, Server::transaction_key(pid_, session_.transactions), Scope::transaction);
  }
  locked_rows_ = mark.locked_rows;
  written_ = mark.written;
  // The table and transaction-scope advisory locks the subtransaction took go too (its
  // resource owner's), as an error inside it lets them go at once (AbortSubTransaction).
  savepoint_reduce(server_.table_locks(), pid_, mark.table_holds);
  savepoint_reduce(server_.locks(), pid_, mark.advisory_holds);
}

void SimConnection::restart_subtransaction(Savepoint& mark) {
  // Numbers grow: those from mark's on were begun while it was open, so they are it and
  // its children.
  for (auto it = subtransaction_keys_.lower_bound(mark.subtransaction); it != subtransaction_keys_.end();) {
    server_.row_locks().release_key(pid_, Server::transaction_key(pid_, session_.transactions, *it), Scope::transaction);
    it = subtransaction_keys_.erase(it);
  }
  mark.subtransaction = ++subtransactions_;
}

void SimConnection::abort_subtransaction() {
  // The server aborts the subtransaction at the error: what it took goes, the rest stays.
  const Footprint f = undo_footprint();
  if (f.object != kNoObject && !within_last_step(f)) step({"abort_subtransaction", f, pid_, true});
  if (session_.terminated) return;
  undo_to(savepoints_.back());
  restart_subtransaction(savepoints_.back());
  idle_timeout_ = savepoints_.back().idle_timeout;  // AtEOSubXact_GUC: idle in the failed block as before it
}

void SimConnection::roll_back_to(Savepoint& mark) {
  undo_to(mark);
  restart_subtransaction(mark);
  session_settings_ = mark.settings;
  lock_timeout_ = mark.lock_timeout;
  statement_timeout_ = mark.statement_timeout;
  deadlock_timeout_ = mark.deadlock_timeout;
  idle_timeout_ = mark.idle_timeout;
  idle_session_timeout_ = mark.idle_session_timeout;
  planner_off_ = mark.planner_off;
  if (style_at_block_) {  // a SET of the display settings or search_path after it goes with it
    std::tie(style_, session_.application_name) = mark.style;
    style_of_session_ = mark.style_of_session;
  }
  custom_ = mark.custom;
  read_only_ = mark.read_only;
  pending_listens_.resize(mark.listens);  // what the subtransaction queued is dropped with it
  pending_notifies_.resize(mark.notifies);
  deferred_checks_ = mark.deferred_checks;  // those queued since dropped, those a SET CONSTRAINTS ran since queued again
  constraint_modes_ = mark.constraint_modes;
}

Status SimConnection::rollback_to_savepoint(const std::string& name) {
  Statement st(*this);
  if (dead_) return lost();
  std::size_t at = savepoints_.size();
  for (std::size_t i = savepoints_.size(); i-- > 0;) {
    if (savepoints_[i].name == name) {
      at = i;
      break;
    }
  }
  const bool found = at < savepoints_.size();
  step({"rollback_to_savepoint", found ? undo_footprint() : Footprint{}, pid_, true});
  if (killed()) return terminated();
  if (!session_.in_transaction || implicit_block_) return not_in_block("ROLLBACK TO SAVEPOINT");
  if (!found) return abort_with(no_such(name));
  roll_back_to(savepoints_[at]);
  savepoints_.resize(at + 1);  // newer savepoints go; this one stays
  session_.aborted = false;
  return {};
}

}  // namespace lockstep::sim::pg
