// sim/pg/server/release.cc: the end of a statement, a transaction or a session: what it lets go
// of, in one step whose footprint names every key and row.
#include "lockstep/sim/pg/server/connection.h"

namespace lockstep::sim::pg {

Status SimConnection::begin() {
  Statement st(*this);
  if (auto refused = begin_statement({name(Stmt::begin), {}, pid_, true}, false)) return *refused;  // no snapshot
  if (implicit_block_) {  // the string's implicit block becomes this explicit one, as it began
    implicit_block_ = false;
    return {};
  }
  if (session_.in_transaction) warnings_.push_back({"25001", "there is already a transaction in progress"});
  if (!session_.in_transaction) settings_at_begin_ = session_settings_;
  session_.in_transaction = true;
  return {};
}

void SimConnection::close() {
  if (dead_) return;
  end_snapshot();
  release_now({.session_scope = true, .xact_scope = true}, "close");
  end_ssi(false);
  session_.live = false;
}

Status SimConnection::end_transaction(Stmt verb) {
  Statement st(*this);
  if (dead_) return lost();
  // A typed COMMIT after an idle moment the model does not weigh. (Not a ROLLBACK, which ends
  // what the server's ending would: a pool's return sends one.)
  if (sql_depth_ == 0 && verb == Stmt::commit) {
    if (std::optional<Error> refused = idle_timeout_refusal()) return *refused;
  }
  // One step on every row and transaction lock it ends (session advisory locks survive),
  // as the server ends them at one moment. A release: a pooled connection's return rolls
  // back from a destructor.
  bool commit = verb == Stmt::commit && !session_.aborted;  // COMMIT of a failed transaction rolls it back
  Release end{.rows = true, .commit = commit, .xact_scope = true};
  OpDesc op{name(verb), release_footprint(end), pid_, true};
  op.commits = commit;
  step(op);
  end_idle_sessions();  // may end this session too
  if (session_.terminated) return terminated();
  // A SERIALIZABLE transaction's commit may be a dangerous structure's: 40001, rolled back.
  const std::optional<Error> failed = commit ? pre_commit_ssi() : std::nullopt;
  if (failed) commit = end.commit = false;
  if (s_.logging()) s_.note_detail(release_detail(end));  // "" when it let nothing go
  if (!session_.in_transaction || implicit_block_) {
    // As the server says (found by lockstep conform): not an error, a WARNING; also in a
    // string's implicit block, which it ends.
    warnings_.push_back({"25P01", "there is no transaction in progress"});
  }
  end_block(commit);
  apply_release(end);
  end_ssi(commit);
  if (failed) return *failed;
  return {};
}

void SimConnection::end_block(bool commit) {
  if (style_at_block_ && !commit) std::tie(style_, session_.application_name) = *style_at_block_;
  if (style_of_session_ && commit) std::tie(style_, session_.application_name) = *style_of_session_;  // SET LOCAL ends
  style_at_block_.reset();
  style_of_session_.reset();
  if (session_.in_transaction) {
    if (!commit) session_settings_ = settings_at_begin_;  // a SET in a transaction rolled back goes with it
    restore_session_settings();                           // SET LOCAL ends here
  }
  server_.end_temp_changes(pid_, commit);
  deferred_checks_.clear();
  constraint_modes_ = {};
  session_.in_transaction = false;
  session_.idle_until = kForever;
  implicit_block_ = false;
  session_.aborted = false;
  savepoints_.clear();
  end_snapshot();
}

void SimConnection::restore_session_settings() {
  lock_timeout_ = session_settings_.lock_timeout;
  statement_timeout_ = session_settings_.statement_timeout;
  deadlock_timeout_ = session_settings_.deadlock_timeout;
  idle_timeout_ = session_settings_.idle_timeout;
  idle_session_timeout_ = session_settings_.idle_session_timeout;
  planner_off_ = session_settings_.planner_off;
  custom_ = session_settings_.custom;
}

void SimConnection::begin_implicit_block() {
  settings_at_begin_ = session_settings_;
  style_at_block_.emplace(style_, session_.application_name);
  session_.in_transaction = true;
  implicit_block_ = true;
  transaction_start_ = statement_time();
}

void SimConnection::end_implicit_block() {
  if (!implicit_block_) return;
  implicit_block_ = false;
  if (dead_ || session_.terminated || !session_.in_transaction) return;
  const bool commit = !session_.aborted;
  const Release end{.rows = true, .commit = commit, .xact_scope = true};
  end_block(commit);
  release_now(end, commit ? "implicit_commit" : "implicit_rollback");
  end_ssi(commit);
}

Status SimConnection::end_statement() {
  if (!session_.in_transaction) release_now({.rows = true, .commit = true, .xact_scope = true}, "autocommit");
  if (session_.terminated) return terminated();
  return {};
}

Footprint SimConnection::release_footprint(const Release& r) {
  Footprint f{kNoObject, Access::release};
  f.domain = server_.domain();
  f.domain_write = strong_table_lock_ && (r.rows || r.xact_scope);  // LOCK TABLE's locks: waiters anywhere
  keys_.clear();
  if (r.xact_scope) server_.locks().held_keys(pid_, Scope::transaction, keys_);
  if (r.session_scope) server_.locks().held_keys(pid_, Scope::session, keys_);
  for (const AdvisoryKey& key : keys_) add_object(f, server_.object_for(key));
  if (r.rows && r.commit && notifications_pending()) add_object(f, server_.notify_object());  // LISTEN, NOTIFY
  if (r.rows) {
    for (const auto& [table, id] : locked_rows_) add_object(f, server_.row_object(table, id));
    for (const auto& [table, id] : written_) {
      add_object(f, server_.row_object(table, id));
      if (const SqlTable* t = server_.sql_table(table)) add_object(f, t->object);  // scans see the change
    }
  }
  return f;
}

std::string SimConnection::release_detail(const Release& r) {
  std::string locks, rows;
  auto add = [](std::string& list, const std::string& name) { list += (list.empty() ? "" : ", ") + name; };
  keys_.clear();
  if (r.xact_scope) server_.locks().held_keys(pid_, Scope::transaction, keys_);
  if (r.session_scope) server_.locks().held_keys(pid_, Scope::session, keys_);
  for (const AdvisoryKey& key : keys_) {
    add(locks, s_.object_name(server_.object_for(key)));
    s_.note_released(server_.object_for(key));  // all of them, also past a footprint's kMaxExtraObjects
  }
  if (r.rows) {
    for (const auto& [table, id] : locked_rows_) {
      add(locks, "row lock " + s_.object_name(server_.row_object(table, id)));
      s_.note_released(server_.row_object(table, id));
    }
    for (const auto& [table, id] : written_) add(rows, s_.object_name(server_.row_object(table, id)));
  }
  std::string detail = locks.empty() ? std::string() : "released " + locks;
  if (!rows.empty()) detail += fmt::format("{}{} {}", detail.empty() ? "" : "; ", r.commit ? "committed" : "rolled back", rows);
  return detail;
}

void SimConnection::apply_release(const Release& r) {
  if (r.rows) end_notifications(r.commit);  // a transaction's end: sim/pg/server/notifications.cc
  if (r.rows || r.xact_scope) {
    server_.table_locks().release_all(pid_, Scope::transaction);
    strong_table_lock_ = false;
  }
  if (r.rows) {
    // Key-changing UPDATEs: per table and slot whose committed tuple moved, the slot of its
    // newest version (sim/pg/executor/sql_key_update.cc).
    moved_to_.clear();
    if (r.commit) {
      for (const auto& [table, id] : written_) {
        const RowState& state = server_.row(table, id);
        const auto mine = state.pending.find(pid_);
        if (mine != state.pending.end() && mine->second.version && mine->second.moved_from != 0) {
          moved_to_.push_back({table, mine->second.moved_from, id});
        }
      }
    }
    auto finish = [&](const std::pair<std::string, std::int64_t>& row) {
      RowState& state = server_.row(row.first, row.second);
      const bool changed = r.commit && state.pending.contains(pid_);  // a version or a deletion committed
      if (auto mine = state.pending.find(pid_); mine != state.pending.end()) {
        if (r.commit) {
          // A key-changing UPDATE's old slot, or the slot its key came back to: an update of
          // the committed tuple holding it FOR UPDATE.
          const bool moved = mine->second.moved || mine->second.moved_from == row.second;
          const bool updated = moved || state.updated_by == pid_;
          server_.commit_version(state, std::move(mine->second), updated, moved || (updated && state.updated_keys));
          if (ssi_ != Ssi::kNone) server_.ssi().note_version(server_.commits(), ssi_);
          if (moved) {
            for (const MovedRow& m : moved_to_) {
              if (m.table == row.first && m.from == row.second && m.to != row.second) state.forward = m.to;
            }
          }
          state.key_sharers_at_commit.clear();
          if (server_.snapshots_open()) {  // only a snapshot older than this commit asks (RowState)
            const AdvisoryKey key = server_.row_key(row.first, row.second);
            for (const int other : server_.row_locks().conflicting_holders(pid_, key, Mode::exclusive)) {
              if (server_.row_locks().held(other, key, Mode::key_share) > 0) state.key_sharers_at_commit.push_back(other);
            }
          }
        }
        state.pending.erase(mine);
      }
      if (state.updated_by == pid_) state.updated_by = 0;
      if (state.reinserted_by == pid_) {
        if (r.commit) ++state.tuple;
        state.reinserted_by = 0;
      }
      // Its waiters are woken to claim the row in their own steps, not granted it here: a
      // backend that comes to the row first (a newcomer, or one waiting for this
      // transaction's key that then locks the row: ON CONFLICT DO UPDATE's check) finds it
      // free and takes it, as heap_lock_tuple does without the tuple lock the woken waiter
      // holds; that waiter then waits for it.
      const AdvisoryKey key = server_.row_key(row.first, row.second);
      if (changed && server_.snapshots_open()) server_.row_locks().recheck_older(key, state.committed_seq, pid_);
      server_.row_locks().release_key(pid_, key, Scope::transaction, /*raced=*/true);
    };
    for (const auto& row : locked_rows_) finish(row);
    for (const auto& row : written_) {
      if (!locked_rows_.count(row)) finish(row);
    }
    if (!written_.empty()) {
      server_.row_locks().release_key(pid_, Server::transaction_key(pid_, session_.transactions), Scope::transaction);
    }
    for (int sub : subtransaction_keys_) {
      server_.row_locks().release_key(pid_, Server::transaction_key(pid_, session_.transactions, sub), Scope::transaction);
    }
    subtransaction_keys_.clear();
    subtransactions_ = 0;
    locked_rows_.clear();
    written_.clear();
  }
  if (r.xact_scope) server_.locks().release_all(pid_, Scope::transaction);
  if (r.session_scope) server_.locks().release_all(pid_, Scope::session);
}

void SimConnection::release_now(const Release& r, std::string_view verb) {
  const Footprint f = release_footprint(r);
  if (f.object == kNoObject && !f.domain_write) {
    // Only weak table locks, if any: they go with the statement's last step.
    if (r.rows || r.xact_scope) {
      server_.table_locks().release_all(pid_, Scope::transaction);
      if (r.rows) end_notifications(false);  // nothing queued to send; what came for this session goes to its client
    }
    return;
  }
  if (!within_last_step(f)) {
    step({verb, f, pid_, true});
    if (s_.logging() && !session_.terminated) s_.note_detail(release_detail(r));
  } else if (s_.logging()) {  // for reports: the step that took them also let them go
    for_each_object(f, [&](ObjectId obj, Access) { s_.note_released(obj); });
  }
  if (session_.terminated) return;  // pg_terminate_backend let everything go meanwhile
  apply_release(r);
}

bool SimConnection::within_last_step(const Footprint& f) const {
  if (last_step_.number != s_.step_count() || !s_.in_actor() || is_read(s_.current_access()) ||
      s_.current_access() == Access::none || f.domain_write) {
    return false;
  }
  bool all = true;
  for_each_object(f, [&](ObjectId obj, Access) {
    bool found = false;
    for_each_object(last_step_.fp, [&](ObjectId mine, Access) { found = found || mine == obj; });
    all = all && found;
  });
  return all;
}

}  // namespace lockstep::sim::pg
