// sim/pg/executor/rows.cc: a session's row statements: reads, inserts, updates and row locks
// (FOR UPDATE, NOWAIT, SKIP LOCKED, FOR SHARE) under MVCC visibility.
#include "lockstep/sim/pg/server/connection.h"

namespace lockstep::sim::pg {
namespace {

// A compare-and-set's outcome for the event log: what it compared, and what it set or saw.
std::string cas_text(const std::optional<Row>& now, std::string_view column, std::string_view expected, const Row& values,
                     bool changed) {
  if (changed) return fmt::format("{} was \"{}\": set {}", column, expected, row_text(values));
  if (!now) return "no row: unchanged";
  const auto it = now->find(std::string(column));
  return fmt::format("{} is \"{}\", not \"{}\": unchanged", column, it == now->end() ? std::string("(none)") : it->second,
                     expected);
}

}  // namespace

Result<std::optional<Row>> SimConnection::read_row(std::string_view table, std::int64_t id) {
  Statement st(*this);
  const OpDesc first{name(Stmt::read_row), {server_.row_object(table, id), Access::read}, id, true};
  if (auto refused = begin_statement(first)) return *refused;
  std::optional<Row> row = visible(table, id);
  if (s_.logging()) s_.note_detail(row_text(row));
  return row;
}

Status SimConnection::insert_row(std::string_view table, std::int64_t id, const Row& values) {
  Statement st(*this);
  const Result<bool> inserted = insert(table, id, values, Stmt::insert_row);
  return inserted.ok() ? Status() : Status(inserted.error());
}

Result<bool> SimConnection::insert_row_if_absent(std::string_view table, std::int64_t id, const Row& values) {
  Statement st(*this);
  return insert(table, id, values, Stmt::insert_row_if_absent);
}

Result<int> SimConnection::update_row(std::string_view table, std::int64_t id, const Row& values) {
  Statement st(*this);
  if (dead_) return lost();
  const Result<bool> locked = lock_row(table, id, false, Stmt::update_row);
  if (!locked.ok()) return locked.error();
  std::optional<Row> row = locked.value() ? visible(table, id) : std::nullopt;  // the newest committed version, after the wait
  const bool found = row.has_value();
  if (found) {
    for (const auto& [k, v] : values) (*row)[k] = v;
    server_.row(table, id).write(pid_, std::move(row), holds_for_update(table, id), server_.new_tuple(table), /*hot=*/true);
    wrote(table, id);
  }
  if (s_.logging()) s_.add_detail(found ? "set " + row_text(values) : std::string("no row"));
  if (Status ended = end_statement(); !ended.ok()) return ended.error();
  return found ? 1 : 0;
}

Result<std::optional<Row>> SimConnection::select_for_update(std::string_view table, std::int64_t id, bool nowait) {
  Statement st(*this);
  if (dead_) return lost();
  const Result<bool> locked = lock_row(table, id, nowait, nowait ? Stmt::select_for_update_nowait : Stmt::select_for_update);
  if (!locked.ok()) return locked.error();
  std::optional<Row> row = locked.value() ? visible(table, id) : std::nullopt;
  if (s_.logging()) s_.note_detail(row_text(row));
  if (Status ended = end_statement(); !ended.ok()) return ended.error();
  return row;
}

Result<std::optional<Row>> SimConnection::select_for_update_skip_locked(std::string_view table, std::int64_t id) {
  Statement st(*this);
  const OpDesc first = narrowing({name(Stmt::select_for_update_skip_locked), {server_.row_object(table, id), Access::acquire}, id, true});
  if (auto refused = begin_statement(first)) return *refused;
  const AdvisoryKey key = server_.row_key(table, id);
  bool got = visible(table, id).has_value();
  if (got && server_.row_locks().held(pid_, key, Mode::exclusive) == 0) {
    got = server_.row_locks().try_request_row(pid_, key, Mode::exclusive, Scope::transaction);
    if (got) locked_rows_.emplace(std::string(table), id);
  }
  if (!got) s_.refine_access(Access::read);  // absent, or locked by another: skipped
  s_.note_result({Kind::value, got ? 1 : 0});
  std::optional<Row> row = got ? visible(table, id) : std::nullopt;
  if (s_.logging()) s_.note_detail(row_text(row));
  if (Status ended = end_statement(); !ended.ok()) return ended.error();
  return row;
}

Result<std::optional<Row>> SimConnection::select_for_share(std::string_view table, std::int64_t id) {
  Statement st(*this);
  if (dead_) return lost();
  const Result<bool> locked = lock_row(table, id, false, Stmt::select_for_share, Mode::share);
  if (!locked.ok()) return locked.error();
  std::optional<Row> row = locked.value() ? visible(table, id) : std::nullopt;
  if (s_.logging()) s_.note_detail(row_text(row));
  if (Status ended = end_statement(); !ended.ok()) return ended.error();
  return row;
}

Result<int> SimConnection::update_row_if(std::string_view table, std::int64_t id, std::string_view column, std::string_view expected,
                          const Row& values) {
  Statement st(*this);
  if (dead_) return lost();
  auto matches = [&] {
    const std::optional<Row>& row = visible(table, id);
    if (!row) return false;
    const auto it = row->find(std::string(column));
    return it != row->end() && it->second == expected;
  };
  // A row that does not match as the statement first sees it is neither locked nor
  // waited for: lock_row's step reads it.
  const UpdateHeap heap(*this, server_.sql_table(table));
  const Result<bool> locked = lock_row(table, id, false, Stmt::update_row_if, Mode::exclusive, matches);
  if (!locked.ok()) return locked.error();
  // After a wait, the newest committed version is checked again; a row that no longer
  // matches stays locked (as the server's EvalPlanQual leaves it) and is not changed.
  const bool change = locked.value() && matches();
  if (change) {
    std::optional<Row> row = visible(table, id);
    for (const auto& [k, v] : values) (*row)[k] = v;
    server_.row(table, id).write(pid_, std::move(row), holds_for_update(table, id), server_.new_tuple(table), /*hot=*/true);
    wrote(table, id);
  }
  if (s_.logging()) s_.add_detail(cas_text(visible(table, id), column, expected, values, change));
  if (Status ended = end_statement(); !ended.ok()) return ended.error();
  return change ? 1 : 0;
}

Result<bool> SimConnection::insert(std::string_view table, std::int64_t id, const Row& values, Stmt verb) {
  if (!s_.in_actor() && seed(table, id, values)) return true;
  const OpDesc first{name(verb), {server_.row_object(table, id), Access::write}, id, true};
  if (auto refused = begin_statement(first)) return *refused;
  // A conflict: 23505, or with ON CONFLICT DO NOTHING, no row and no error.
  auto duplicate = [&]() -> Result<bool> {
    if (verb == Stmt::insert_row_if_absent) {
      s_.note_result({Kind::value, 0});
      if (Status ended = end_statement(); !ended.ok()) return ended.error();
      return false;
    }
    return abort_with({std::string(sqlstate::kUniqueViolation),
                       fmt::format("duplicate key value violates unique constraint \"{}\"", primary_key_name(server_.sql_table(table), table))});
  };
  RowState& r = server_.row(table, id);
  if (r.pending.count(pid_) != 0) return duplicate();
  // Another transaction wrote the id and has not ended (inserted it, or updated the row):
  // the unique check waits for that transaction, as the server does (on its transaction
  // id), then looks again; a committed row is a duplicate. A row only locked FOR UPDATE is
  // a duplicate at once.
  for (int writer = other_writer(r); writer != 0; writer = other_writer(r)) {
    const AdvisoryKey xact = server_.writer_key(writer, r.pending.at(writer));
    auto waiter = server_.row_locks().request(pid_, xact, Mode::share, Scope::transaction);
    LOCKSTEP_INVARIANT(waiter != nullptr, "a session with an uncommitted row version holds its transaction key");
    note_queued(server_.row_locks(), xact, Mode::share);
    if (Status waited = wait_for(server_.row_locks(), waiter, server_.row_object(table, id), Access::acquire,
                                 "row_lock_wait", fmt::format("the transaction of session {} (it wrote {}#{})", writer, table, id));
        !waited.ok()) {
      return waited.error();
    }
    server_.row_locks().release_key(pid_, xact, Scope::transaction);  // it ended: nothing left to wait for
  }
  if (r.committed) return duplicate();
  const bool locked = server_.row_locks().try_request(pid_, server_.row_key(table, id), Mode::exclusive, Scope::transaction);
  LOCKSTEP_INVARIANT(locked, "no session locks a row that none sees");
  Row row = values;
  row["id"] = std::to_string(id);
  if (s_.logging()) s_.add_detail(row_text(row));
  const std::uint64_t position = server_.new_tuple(table);
  r.pending[pid_] = RowState::Written{std::move(row), {position, position}};
  wrote(table, id);
  if (Status ended = end_statement(); !ended.ok()) return ended.error();
  return true;
}

bool SimConnection::seed(std::string_view table, std::int64_t id, const Row& values) {
  if (dead_ || session_.aborted || session_.in_transaction || session_.terminated || config_.backend_terminated || config_.server_restart || s_.logging() ||
      server_.statement_log() != nullptr) {
    return false;
  }
  const ObjectId obj = server_.row_object(table, id);
  RowState& r = server_.row(table, id);
  if (r.committed || !r.pending.empty()) return false;
  Row row = values;
  row["id"] = std::to_string(id);
  r.committed = std::move(row);
  const std::uint64_t position = server_.new_tuple(table);
  r.committed_place = {position, position};
  ++session_.transactions;
  session_.query_start = s_.now();
  last_.first_step = s_.step_count();
  last_step_ = {server_.on(obj, Access::release), s_.step_count()};
  return true;
}

void SimConnection::wrote(std::string_view table, std::int64_t id) {
  if (written_.empty()) {  // a new transaction id
    ssi_note_xid();
    LOCKSTEP_INVARIANT(subtransaction_keys_.empty(), "a subtransaction that wrote left a row written");
    ++session_.transactions;
    const AdvisoryKey own_key = Server::transaction_key(pid_, session_.transactions);
    const bool own = server_.row_locks().try_request(pid_, own_key, Mode::exclusive, Scope::transaction);
    LOCKSTEP_INVARIANT(own, "nobody else takes a transaction's own key exclusively");
  }
  const int sub = savepoints_.empty() ? 0 : savepoints_.back().subtransaction;
  const auto mine = server_.row(table, id).pending.find(pid_);
  LOCKSTEP_INVARIANT(mine != server_.row(table, id).pending.end(), "a written row has the writer's version");
  if (written_.emplace(std::string(table), id).second) mine->second.subtransaction = sub;  // its first write in the transaction
  mine->second.made_in = sub;  // the version just written: its tuple's xmin
  if (sub != 0 && subtransaction_keys_.insert(sub).second) {
    const bool own = server_.row_locks().try_request(pid_, Server::transaction_key(pid_, session_.transactions, sub), Mode::exclusive,
                                                      Scope::transaction);
    LOCKSTEP_INVARIANT(own, "nobody else takes a subtransaction's own key exclusively");
  }
}

int SimConnection::other_writer(const RowState& r) const {
  for (const auto& [pid, version] : r.pending) {
    if (pid != pid_ && version.version) return pid;
  }
  return 0;
}

const std::optional<Row>& SimConnection::visible(std::string_view table, std::int64_t id) {
  const RowState& r = server_.row(table, id);
  if (auto mine = r.pending.find(pid_); mine != r.pending.end()) return mine->second.version;
  if (snapshot_) return r.version_at(*snapshot_);
  return r.committed;
}

HeapPlace SimConnection::visible_place(std::string_view table, std::int64_t id) {
  const RowState& r = server_.row(table, id);
  if (auto mine = r.pending.find(pid_); mine != r.pending.end()) return mine->second.place;
  if (snapshot_) return r.place_at(*snapshot_);
  return r.committed_place;
}

const std::optional<Row>& SimConnection::newest(std::string_view table, std::int64_t id) {
  const RowState& r = server_.row(table, id);
  if (auto mine = r.pending.find(pid_); mine != r.pending.end()) return mine->second.version;
  return r.committed;
}

std::optional<Error> SimConnection::serialization_failure(std::string_view table, std::int64_t id, bool locking_clause, Mode mode) {
  if (!snapshot_) return std::nullopt;
  const RowState& r = server_.row(table, id);
  if (r.pending.count(pid_) != 0 || r.committed_seq <= *snapshot_) return std::nullopt;
  // FOR KEY SHARE passes updates that kept the key (heap_lock_tuple: a key share lock does
  // not conflict with them, whatever the snapshot), each along the chain to the newest
  // version (heap_lock_updated_tuple); not a key update or a deletion among them (an update
  // then a delete: lock-update-delete's first permutation).
  if (mode == Mode::key_share && r.changed_keeping_keys_only_since(*snapshot_)) return std::nullopt;
  return Error{std::string(sqlstate::kSerializationFailure), r.updated_since(*snapshot_) || locking_clause
                                                                 ? "could not serialize access due to concurrent update"
                                                                 : "could not serialize access due to concurrent delete"};
}

bool SimConnection::holds_for_update(std::string_view table, std::int64_t id) {
  return server_.row_locks().holds(pid_, server_.row_key(table, id), Scope::transaction)[static_cast<std::size_t>(Mode::exclusive)] > 0;
}

Result<bool> SimConnection::lock_row(std::string_view table, std::int64_t id, bool nowait, Stmt verb, Mode mode,
                      const std::function<bool()>& wanted, const std::function<Mode()>& mode_now,
                      std::optional<std::uint64_t> read_at) {
  locked_as_read_.reset();
  const ObjectId obj = server_.row_object(table, id);
  const Access access = acquire_access(mode);
  if (auto refused = begin_statement(narrowing({name(verb), {obj, access}, id, true}))) return *refused;
  if (!visible(table, id) || (wanted && !wanted())) {
    s_.refine_access(Access::read);
    s_.note_result({Kind::value, 0});
    return false;
  }
  if (mode_now) {
    mode = mode_now();
    LOCKSTEP_INVARIANT(acquire_access(mode) == access, "a mode decided in the lock's step has the footprint declared for it");
  }
  const AdvisoryKey key = server_.row_key(table, id);
  if (server_.row_locks().holds_at_least(pid_, key, mode)) return true;
  // Under REPEATABLE READ a row changed since the snapshot fails the statement: at once when
  // the change committed already (the snapshot's version is updated: heap_lock_tuple's
  // TM_Updated, whoever holds the newest), else once locked.
  const bool locking_clause = verb == Stmt::select_for_share || verb == Stmt::select_for_update || verb == Stmt::select_for_update_nowait;
  auto serialization = [&]() -> std::optional<Error> {
    auto e = serialization_failure(table, id, locking_clause, mode);
    if (e) {
      s_.note_result({Kind::failed});
      if (s_.logging()) s_.note_detail("40001 " + e->message);
    }
    return e;
  };
  // A committed change beside a locker still running that conflicts (a FOR KEY SHARE taken
  // before a non-key UPDATE committed: a multixact on the version the snapshot sees) makes
  // the server wait for that locker first (HeapTupleSatisfiesUpdate's TM_BeingModified), then
  // fail (as try_lock_row skips such a row).
  const auto sharer_in_the_way = [&] {
    const std::vector<int> in_the_way = server_.row_locks().conflicting_holders(pid_, key, mode);
    const auto& sharers = server_.row(table, id).key_sharers_at_commit;
    return std::any_of(in_the_way.begin(), in_the_way.end(),
                       [&](int other) { return std::find(sharers.begin(), sharers.end(), other) != sharers.end(); });
  };
  const bool locker_first = snapshot_ && serialization_failure(table, id, locking_clause, mode) && sharer_in_the_way();
  if (!locker_first) {
    if (auto e = serialization()) return abort_with(*e);
  }
  // A row this transaction locked before (FOR SHARE, then FOR UPDATE) stays in its list
  // when the stronger lock fails: its release must let the first one go.
  const bool held_before = !locked_rows_.emplace(std::string(table), id).second;
  ssi_note_xid();  // heap_lock_tuple takes a transaction id
  // FOR KEY SHARE under READ COMMITTED: the version read, kept while the lock is taken.
  const bool passes_updates = mode == Mode::key_share && !snapshot_;
  const std::uint64_t read = read_at.value_or(server_.commits());
  if (passes_updates) server_.open_snapshot();
  auto locked = [&]() -> Result<bool> {
    if (auto e = serialization()) return abort_with(*e);
    if (passes_updates) {
      const RowState& r = server_.row(table, id);
      if (r.pending.count(pid_) == 0 && r.changed_keeping_keys_only_since(read)) locked_as_read_ = r.version_at(read);
    }
    return true;
  };
  struct SnapshotGuard {
    Server& server;
    bool open;
    ~SnapshotGuard() {
      if (open) server.close_snapshot();
    }
  } guard{server_, passes_updates};
  if (nowait) {
    if (server_.row_locks().try_request_row(pid_, key, mode, Scope::transaction)) return locked();
    if (!held_before) locked_rows_.erase({std::string(table), id});
    s_.refine_access(Access::read);
    s_.note_result({Kind::failed});
    return abort_with({std::string(sqlstate::kLockNotAvailable), fmt::format("could not obtain lock on row in relation \"{}\"", table)});
  }
  auto waiter = server_.row_locks().request(pid_, key, mode, Scope::transaction);
  if (!waiter) return locked();
  note_queued(server_.row_locks(), key, mode);
  // An UPDATE or DELETE checks its tuple again once the transaction that changed it ends, and
  // fails then under REPEATABLE READ (heap_update, heap_delete); a row lock first locks the
  // versions after it, waiting for their lockers (heap_lock_updated_tuple): it fails once granted.
  if (!locking_clause) waiter->snapshot = snapshot_;
  waiter->stale = locker_first && !locking_clause;  // its check comes when its wait ends
  const std::uint64_t tuple = server_.row(table, id).tuple;
  Status st = wait_for(server_.row_locks(), waiter, obj, access, "row_lock_wait", fmt::format("the row lock of {}#{}", table, id),
                       [&] { return serialization_failure(table, id, locking_clause, mode); });
  if (!st.ok()) {
    if (!held_before) locked_rows_.erase({std::string(table), id});
    return st.error();
  }
  if (!snapshot_ && server_.row(table, id).tuple != tuple) {
    // The tuple it waited for was deleted; the key names another one now (inserted again by
    // the transaction that deleted it), which this statement did not find: none locked.
    if (!held_before) {
      locked_rows_.erase({std::string(table), id});
      if (written_.count({std::string(table), id}) == 0) server_.row_locks().release_key(pid_, key, Scope::transaction);
    }
    s_.note_result({Kind::value, 0});
    return false;
  }
  return locked();
}

}  // namespace lockstep::sim::pg
