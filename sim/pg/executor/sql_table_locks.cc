// sim/pg/executor/sql_table_locks.cc: the table locks a statement takes on the simulated server
// (sim/pg/executor/sql_run.h), as PostgreSQL's parser opens its relations: the target's or FROM's weak
// lock (AccessShareLock, RowShareLock under a locking clause, RowExclusiveLock for a write),
// and every other table it names, each held to the end of the transaction.
#include <algorithm>
#include <functional>

#include "lockstep/sim/pg/executor/sql_names.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

void SqlRun::request_table_lock() {
  std::vector<SimConnection::TableLockRequest> locks = table_locks();
  // Every other table the statement names (a subquery's, a WITH query's): AccessShareLock, as
  // the parser takes on each relation it opens (a LOCK TABLE ... ACCESS EXCLUSIVE waits for it),
  // RowShareLock where a locking clause covers it (EXCLUSIVE waits for that too).
  each_table_named(st_, std::function<void(const std::string&, bool)>([&](const std::string& name, bool locked) {
    const SqlTable* t = server_.sql_table(name);
    if (t == nullptr) return;
    const AdvisoryKey key = Server::table_key(*t);
    const auto same = std::find_if(locks.begin(), locks.end(), [&](const SimConnection::TableLockRequest& l) { return l.key == key; });
    if (same == locks.end()) {
      locks.push_back({key, locked ? Mode::row_share : Mode::access_share, name});
    } else if (locked && same->mode == Mode::access_share) {
      same->mode = Mode::row_share;  // the server holds both; RowShareLock conflicts with all AccessShareLock does
    }
  }));
  for (SimConnection::TableLockRequest& lock : locks) c_.take_table_lock_first(lock.key, lock.mode, std::move(lock.table));
}

std::vector<SimConnection::TableLockRequest> SqlRun::table_locks() const {
  // The statement's table and the weak mode it takes there (lock.c's AccessShareLock,
  // RowShareLock, RowExclusiveLock), a SELECT's FROM tables in order (RowShareLock for those
  // its locking clause names); request_table_lock adds the other tables it names. A
  // data-modifying WITH query's table first (its RowExclusiveLock: the WITH is analyzed first).
  const std::string* name = nullptr;
  Mode mode = Mode::access_share;
  std::vector<SimConnection::TableLockRequest> out;
  std::visit([&](const auto& body) {
    if constexpr (requires { body.with; }) {
      for (const sql::CommonTable& w : body.with) {
        if (!w.modifying) continue;
        std::visit([&](const auto& m) {
          if constexpr (requires { m.table; m.returning; }) {
            if (const SqlTable* t = server_.sql_table(m.table)) out.push_back({Server::table_key(*t), Mode::row_exclusive, m.table});
          }
        }, w.modifying->body);
      }
    }
  }, st_.body);
  if (const auto* sel = std::get_if<sql::Select>(&st_.body); sel != nullptr && !sel->from.empty() && !sel->set_op) {
    const auto leaves = [&](const sql::FromItem& f, const auto& self) -> void {
      for (const sql::FromItem& side : f.sides) self(side, self);
      const bool with_query = std::any_of(sel->with.begin(), sel->with.end(), [&](const sql::CommonTable& w) { return w.name == f.table; });
      const SqlTable* t = f.kind == sql::FromItem::Kind::table && !with_query ? server_.sql_table(f.table) : nullptr;
      if (t == nullptr) return;
      const std::string& named = f.alias.empty() ? f.table : f.alias;
      const bool locked = sel->lock != sql::RowLock::none &&
                          (sel->lock_of.empty() || std::find(sel->lock_of.begin(), sel->lock_of.end(), named) != sel->lock_of.end());
      out.push_back({Server::table_key(*t), locked ? Mode::row_share : Mode::access_share, f.table});
    };
    for (const sql::FromItem& f : sel->from) leaves(f, leaves);
    return out;
  }
  if (const auto* sel = std::get_if<sql::Select>(&st_.body); sel != nullptr && !sel->table.empty()) {
    name = &sel->table;
    if (sel->lock != sql::RowLock::none) mode = Mode::row_share;
  } else if (const auto* ins = std::get_if<sql::Insert>(&st_.body)) {
    name = &ins->table;
    mode = Mode::row_exclusive;
  } else if (const auto* up = std::get_if<sql::Update>(&st_.body)) {
    name = &up->table;
    mode = Mode::row_exclusive;
  } else if (const auto* del = std::get_if<sql::Delete>(&st_.body)) {
    name = &del->table;
    mode = Mode::row_exclusive;
  }
  const SqlTable* t = name == nullptr ? nullptr : server_.sql_table(*name);
  if (t != nullptr) out.push_back({Server::table_key(*t), mode, *name});
  return out;
}

}  // namespace lockstep::sim::pg
