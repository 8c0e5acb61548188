// sim/pg/executor/sql_truncate.cc: TRUNCATE on the simulated server, as ExecuteTruncate runs it: an
// ACCESS EXCLUSIVE lock on each table in turn (waiting as LOCK TABLE does), then the foreign
// keys checked (a table another one references goes only with that one: 0A000), then every
// row of each table deleted by the transaction (a ROLLBACK brings them back). Identity and
// serial sequences go on (CONTINUE IDENTITY); RESTART IDENTITY is refused when read.
// Not MVCC-safe, as the server's: once it commits, a snapshot taken before it (a REPEATABLE
// READ transaction that had not read the table yet) sees the rows gone too, also those another
// transaction deleted after that snapshot and this one before the TRUNCATE.
#include <algorithm>

#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

Result<Rows> SqlRun::truncate(const sql::LockTables& l, const std::vector<std::pair<std::string, AdvisoryKey>>& tables) {
  // SERIALIZABLE: the server checks the whole relation for conflicts in
  // (CheckTableForSerializableConflictIn), which the simulated SIREAD locks do not model.
  if (c_.serializable_) throw SqlError("0A000", "TRUNCATE in a SERIALIZABLE transaction is not in lockstep's SQL subset (docs/sql.md)");
  const Status st = c_.maintain_tables(tables, Mode::access_exclusive, "truncate");
  if (!st.ok()) return st.error();
  auto listed = [&](const std::string& name) {
    return std::any_of(tables.begin(), tables.end(), [&](const auto& t) { return table(t.first)->def.table == name; });
  };
  for (const auto& [name, key] : tables) {  // heap_truncate_check_FKs, after the locks
    const SqlTable* t = table(name);
    for (const auto& [child, index] : t->referenced_by) {
      if (listed(child)) continue;
      if (l.cascade) throw SqlError("0A000", "TRUNCATE ... CASCADE to a referencing table is not in lockstep's SQL subset (docs/sql.md)");
      throw SqlError("0A000", "cannot truncate a table referenced in a foreign key constraint");
    }
  }
  Rows ignored;
  for (const auto& [name, key] : tables) {
    SqlTable* t = table(name);
    std::vector<std::int64_t> ids;
    server_.each_row(t->def.table, [&](std::int64_t id, RowState&) { ids.push_back(id); });
    std::int64_t deleted = 0;
    for (const std::int64_t id : ids) {
      // No other transaction has a version pending: they hold no table lock.
      if (c_.newest(t->def.table, id)) {
        write_version(*t, id, std::nullopt, {}, ignored);
        ++deleted;
      } else if (!server_.row(t->def.table, id).pending.contains(c_.pid_)) {
        // Deleted by a committed transaction, its old versions kept for older snapshots: the
        // new relfilenode has none of them either.
        if (server_.row(t->def.table, id).older.empty()) continue;
        server_.row(t->def.table, id).write(c_.pid_, std::nullopt, false, 0, false);
        c_.wrote(t->def.table, id);
      }
      server_.row(t->def.table, id).pending.at(c_.pid_).truncated = true;  // also a deletion of its own before
    }
    if (s_.logging()) s_.add_detail(fmt::format("{}: {} rows deleted", t->def.table, deleted));
  }
  return done(Rows{{}, {}, "TRUNCATE TABLE"});
}

}  // namespace lockstep::sim::pg
