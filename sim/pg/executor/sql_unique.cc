// sim/pg/executor/sql_unique.cc: unique checks on the simulated server (sim/pg/executor/sql_run.h), as
// _bt_check_unique makes them: a key repeated by a committed row fails, one written by a
// transaction in progress waits for that transaction, then the check looks again. An
// INSERT's row is in place while its other unique keys are checked (insert_then_check).
#include <algorithm>

#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_ssi.h"

namespace lockstep::sim::pg {

Result<std::int64_t> SqlRun::insert_then_check(SqlTable& t, const sql::Insert& ins, std::int64_t id, Row row, Rows& out,
                                               std::uint64_t position) {
  const std::string& name = t.def.table;
  const ObjectId obj = server_.row_object(name, id);
  if (Status locked = lock_new_row(name, id, obj); !locked.ok()) return locked.error();
  if (s_.in_actor()) {
    s_.also_touch(obj);
    s_.also_touch(t.object);  // the unique check's step: it reads every row's versions
  }
  if (s_.logging()) s_.add_detail(row_text(row));
  RowState& r = server_.row(name, id);
  note_own_write(name, id);
  put_new_version(r, row, position);
  c_.wrote(name, id);
  r.pending.at(c_.pid_).checking_unique = true;
  const auto repeated = unique_conflict(t, id, row, nullptr, nullptr);  // waits, and looks again, as the server does
  if (!repeated.ok()) return repeated.error();
  SqlSsi::index_insert(*this, t, row, false, true);  // each leaf's check comes before a 23505
  server_.row(name, id).pending.at(c_.pid_).checking_unique = false;
  if (s_.in_actor()) {  // after a wait, the step that decides is the wait's
    s_.also_touch(obj);
    s_.also_touch(t.object);
  }
  if (repeated.value() != nullptr) {
    return fail(Error{std::string(sqlstate::kUniqueViolation),
                      fmt::format("duplicate key value violates unique constraint \"{}\"", repeated.value()->name)});
  }
  returning(t, ins.returning, row, out);
  queue_after_row(t, "INSERT", nullptr, &row);
  return 1;
}

bool in_partial_index(const SqlTable::UniqueKey& key, const SqlTable& t, const Row& row) {
  if (key.where == nullptr) return true;
  StoredRowContext context(t, row);
  return sql::is_true(sql::evaluate(*key.where, context));
}

std::optional<std::string> unique_text(const SqlTable::UniqueKey& key, const SqlTable& t, const Row& row) {
  if (!in_partial_index(key, t, row)) return std::nullopt;  // not in the index: it conflicts with nothing
  std::string text;
  for (std::size_t part = 0; part < key.columns.size(); ++part) {
    if (key.columns[part] < 0) {  // an expression's value in the row
      StoredRowContext context(t, row);
      const Value v = sql::evaluate(*key.expressions.at(part), context);
      if (v.is_null()) return std::nullopt;
      text += v.text_output();
    } else {
      const auto it = row.find(t.def.columns[static_cast<std::size_t>(key.columns[part])].name);
      if (it == row.end()) return std::nullopt;
      text += it->second;
    }
    text += '\x1f';
  }
  return text;
}

Status SqlRun::wait_for_transaction(AdvisoryKey xact, ObjectId obj, std::string what) {
  auto waiter = server_.row_locks().request(c_.pid_, xact, Mode::share, Scope::transaction);
  LOCKSTEP_INVARIANT(waiter != nullptr, "a session with an uncommitted row version holds its transaction key");
  c_.note_queued(server_.row_locks(), xact, Mode::share);
  if (Status waited = c_.wait_for(server_.row_locks(), waiter, obj, Access::acquire, "row_lock_wait", std::move(what)); !waited.ok()) {
    return waited;
  }
  server_.row_locks().release_key(c_.pid_, xact, Scope::transaction);
  return {};
}

Result<const SqlTable::UniqueKey*> SqlRun::unique_conflict(SqlTable& t, std::int64_t id, const Row& row, const Row* before,
                                                           bool* waited_for, std::int64_t* conflicting) {
  for (;;) {
    int writer = 0;
    std::optional<AdvisoryKey> writer_key;  // the key of the (sub)transaction that wrote what it repeats
    const SqlTable::UniqueKey* repeated = nullptr;
    auto repeats_row = [&](const Row& other) -> const SqlTable::UniqueKey* {
      for (const SqlTable::UniqueKey& key : t.unique) {
        const auto mine = unique_text(key, t, row);
        if (before != nullptr && mine == unique_text(key, t, *before)) continue;  // unchanged: no new index entry
        if (mine && mine == unique_text(key, t, other)) return &key;
      }
      return nullptr;
    };
    auto repeats = [&](const std::optional<Row>& other) { return other ? repeats_row(*other) : nullptr; };
    server_.each_row(t.def.table, [&](std::int64_t other, RowState& r) {
      if (other == id || writer != 0 || repeated != nullptr) return;
      if (const auto own = r.pending.find(c_.pid_); own != r.pending.end()) {
        repeated = repeats(own->second.version);  // this transaction's own version is the one there
      } else {
        for (const auto& [pid, version] : r.pending) {
          if (pid == c_.pid_) continue;
          // The tuple whose entry it repeats, by the (sub)transaction the check waits on: the
          // new version's maker (xmin), the committed one's deleter (xmax), an earlier one's.
          std::optional<int> sub;
          if (!version.checking_unique && repeats(version.version) != nullptr) {
            sub = version.made_in;
          } else if (repeats(r.committed) != nullptr) {
            sub = version.subtransaction;
          } else {
            for (const RowState::Written::Earlier& e : version.earlier) {
              if (!sub && repeats_row(e.version) != nullptr) sub = e.made_in;
            }
          }
          if (sub) {
            writer = pid;
            writer_key = server_.writer_key(pid, *sub);
          }
        }
        if (writer == 0) repeated = repeats(r.committed);
      }
      if (repeated != nullptr && conflicting != nullptr) *conflicting = other;
    });
    if (writer == 0) return repeated;
    if (Status waited = wait_for_transaction(*writer_key, t.object,
                                             fmt::format("the transaction of session {} (a unique key of {})", writer, t.def.table));
        !waited.ok()) {
      return waited.error();
    }
    if (s_.in_actor()) s_.also_touch(t.object);
    if (waited_for != nullptr) {
      *waited_for = true;
      return nullptr;
    }
  }
}

}  // namespace lockstep::sim::pg
