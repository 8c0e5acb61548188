// sim/pg/executor/sql_key_update.cc: an UPDATE that changes a row's primary key. Rows are slots by
// primary key (SqlTable::ids), so the new version goes to its key's slot as an INSERT's row
// does (the primary key's check waits for another writer of that key and fails on a live
// row), and the old slot's tuple ends as updated with its keys (HEAP_KEYS_UPDATED: FOR KEY
// SHARE conflicts, a REPEATABLE READ reader fails with "concurrent update"), linked to the
// new version: a READ COMMITTED statement that found the old tuple follows the link and
// re-checks its WHERE on the newest version, as EvalPlanQual follows the ctid chain.
#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_ssi.h"

namespace lockstep::sim::pg {

// The primary key's check, an INSERT's (sql_write.cc) and a key-changing UPDATE's.
Status SqlRun::wait_for_row_writers(const std::string& name, std::int64_t id, ObjectId obj) {
  for (;;) {
    const RowState& r = server_.row(name, id);
    if (r.pending.count(c_.pid_) != 0) return {};
    int writer = 0;
    for (const auto& [pid, version] : r.pending) {
      if (pid != c_.pid_) {
        writer = pid;  // the first, in pid order
        break;
      }
    }
    if (writer == 0) return {};
    if (Status waited = wait_for_transaction(server_.writer_key(writer, r.pending.at(writer)), obj,
                                             fmt::format("the transaction of session {} (it wrote {}#{})", writer, name, id));
        !waited.ok()) {
      return waited;
    }
  }
}

bool SqlRun::changes_primary_key(const SqlTable& t, const Row& before, const Row& after) {
  return !t.key.empty() && key_text(t, before) != key_text(t, after);
}

void SqlRun::move_row(SqlTable& t, std::int64_t id, Row updated, const std::vector<sql::Target>& ret, Rows& out) {
  const std::string name = t.def.table;
  for (const auto& [child, k] : t.referenced_by) {  // RI_FKey_cascade_upd is not built
    const SqlTable& c = *table(child);
    for (const sql::ForeignKey& fk : c.def.foreign_keys) {
      if (fk.name == c.foreign_keys[k].name && fk.cascade_update) {
        throw SqlError("0A000", fmt::format("an UPDATE of the primary key of \"{}\", referenced ON UPDATE CASCADE by \"{}\", is not in "
                                            "lockstep's SQL subset (docs/sql.md)",
                                            name, child));
      }
    }
  }
  const std::int64_t to = id_of(t, updated);
  LOCKSTEP_INVARIANT(to != id, "a key-changing UPDATE moves its row to another slot");
  // Which committed tuple the moving version continues: the one it moves from, unless this
  // transaction inserted the row (nothing to follow) or moved it here from elsewhere.
  std::int64_t origin = 0;
  {
    const RowState& from = server_.row(name, id);
    const auto own = from.pending.find(c_.pid_);
    if (own != from.pending.end() && own->second.moved_from != 0) {
      origin = own->second.moved_from;
    } else if (from.committed && from.reinserted_by != c_.pid_) {
      origin = id;
    }
  }
  // heap_update ends the old tuple (its xmax) and places the new one before the primary
  // key's check may wait: while it waits, others' unique checks of the old row's keys wait
  // for this transaction.
  Rows unused;
  write_version(t, id, std::nullopt, {}, unused);
  if (origin == id) server_.row(name, id).pending.at(c_.pid_).moved = true;
  const std::uint64_t position = server_.new_tuple(name);
  const ObjectId obj = server_.row_object(name, to);
  if (s_.in_actor()) s_.also_touch(obj);
  // The primary key's unique check on the new key (_bt_check_unique): another transaction
  // that wrote the key is waited for, then the check looks again.
  if (Status waited = wait_for_row_writers(name, to, obj); !waited.ok()) throw Raised{waited.error()};
  if (s_.in_actor()) s_.also_touch(obj);  // after a wait, the step that writes is the wait's
  if (c_.newest(name, to)) {
    SqlSsi::index_insert(*this, t, updated, true, false);  // _bt_check_unique's SSI check comes before a 23505
    throw Raised{Error{std::string(sqlstate::kUniqueViolation),
                       fmt::format("duplicate key value violates unique constraint \"{}\"", primary_key_name(&t, name))}};
  }
  if (Status locked = lock_new_row(name, to, obj); !locked.ok()) throw Raised{locked.error()};
  if (s_.in_actor()) s_.also_touch(obj);
  write_version(t, to, std::move(updated), ret, out, position);
  server_.row(name, to).pending.at(c_.pid_).moved_from = origin;
}

std::int64_t SqlRun::followed(const std::string& table, std::int64_t id, std::optional<std::uint64_t> read_at) {
  if (c_.snapshot_) return 0;  // REPEATABLE READ fails on an updated row instead
  const RowState& r = server_.row(table, id);
  if (r.forward == 0 || r.pending.count(c_.pid_) != 0) return 0;
  // The version the statement read was moved when the move committed after its snapshot, even
  // if that transaction inserted the key again (a newer tuple the snapshot does not see);
  // without a snapshot held, when the slot shows no row now.
  std::optional<std::uint64_t> read = read_at ? read_at : snapshot_seq();
  if (!read) read = first_scan_at_;
  if (read ? r.committed_seq <= *read : c_.visible(table, id).has_value()) return 0;
  return r.forward;
}

}  // namespace lockstep::sim::pg
