// sim/pg/executor/sql_lock_rows.cc: the row locks of SELECT ... FOR UPDATE / SHARE [OF ...] over a FROM of
// joined tables on the simulated server (sim/pg/executor/sql_run.h), as the server's LockRows does them:
// each joined row, in the order sorted, locks the row of every locked table in it (FROM order,
// or the OF list's), a step each, with the clause's wait policy. When a locked row changed
// since the scan, EvalPlanQual runs the joins and WHERE once more on one row per FROM item: the
// newest versions of the locked rows, the other items' rows as the scan joined them (a LEFT
// JOIN whose condition now fails gives its NULL side). A joined row that fails that, or whose
// locked row is gone, is left out (the locks it took stay); LIMIT counts the rows kept. Also
// the waiting lock that both SELECT paths take (wait_row_lock), and a one-table SELECT's row
// locks (lock_rows: each candidate in the order sorted, re-checked on its newest version).
#include <algorithm>

#include "lockstep/sim/invariant.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {
namespace {

using Leaves = std::vector<std::pair<const sql::FromItem*, bool>>;

// FROM's items that are no join, in order, each with whether it is the nullable side of a
// LEFT JOIN.
void from_leaves(const sql::FromItem& f, bool nullable, Leaves& out) {
  if (f.kind == sql::FromItem::Kind::join) {
    from_leaves(f.sides.at(0), nullable, out);
    from_leaves(f.sides.at(1), nullable || f.left, out);
    return;
  }
  out.emplace_back(&f, nullable);
}

bool system_view(const sql::FromItem& f) { return f.kind == sql::FromItem::Kind::table && (f.table == "pg_locks" || f.table == "pg_database" || f.table == "pg_stat_activity"); }

// The part of joined row `row` that an item gave (its columns and `key`, the key of its heap id,
// SqlRun::joined_row_id); nullopt when it gave none (the NULL side of a LEFT JOIN).
std::optional<Row> leaf_part(const Row& row, const std::string& key) {
  if (!row.contains(key)) return std::nullopt;
  const std::string prefix = key.substr(0, key.size() - 1);  // "relation\x1f"
  Row part;
  for (auto it = row.lower_bound(prefix); it != row.end() && it->first.starts_with(prefix); ++it) part.insert(*it);
  return part;
}

}  // namespace

bool SqlRun::wait_row_lock(const std::string& table, std::int64_t& id, Mode mode, sql::LockWait wait, std::optional<std::uint64_t> read_at,
                           const std::function<bool()>& wanted, const std::function<bool()>& follow) {
  const bool nowait = wait == sql::LockWait::nowait;
  const Stmt verb = !modes_conflict(mode, mode) ? Stmt::select_for_share : nowait ? Stmt::select_for_update_nowait : Stmt::select_for_update;
  Result<bool> got = c_.lock_row(table, id, nowait, verb, mode, wanted, nullptr, read_at);
  if (!got.ok()) throw Raised{got.error()};
  // A row a key-changing UPDATE moved: EvalPlanQual follows it to its newest version.
  for (std::int64_t next = follow && !follow() ? 0 : followed(table, id, read_at); next != 0; next = followed(table, id, read_at)) {
    if (got.value()) forget_gone_row(table, id);
    id = next;
    got = c_.lock_row(table, id, nowait, verb, mode, nullptr, nullptr, read_at);
    if (!got.ok()) throw Raised{got.error()};
  }
  return got.value();
}

std::vector<const sql::FromItem*> SqlRun::locked_tables(const sql::Select& sel) {
  using K = sql::FromItem::Kind;
  const std::string clause = sql::lock_clause_name(sel.lock);
  Leaves leaves;
  for (const sql::FromItem& f : sel.from) from_leaves(f, false, leaves);
  auto refuse = [&](std::string_view what) {
    throw SqlError("0A000", fmt::format("{} {} is not in lockstep's SQL subset (docs/sql.md)", clause, what));
  };
  auto with_query = [&](const sql::FromItem& f) {
    const Derived* d = f.kind == K::table && !system_view(f) ? derived_of(table(f.table)) : nullptr;
    if (d != nullptr && d->sequence) throw SqlError("42809", fmt::format("cannot lock rows in sequence \"{}\"", f.table));
    return d != nullptr;
  };
  Leaves locked;
  if (sel.lock_of.empty()) {  // every table (a subquery's would be locked inside it; functions, VALUES, WITH queries have none)
    for (const auto& [f, nullable] : leaves) {
      if (f->kind == K::subquery) refuse("over a subquery in FROM (it locks the subquery's rows)");
      if (system_view(*f)) refuse(fmt::format("of the system view {}", f->table));
      if (f->kind == K::table && !with_query(*f)) locked.emplace_back(f, nullable);
    }
  } else {
    for (const std::string& named : sel.lock_of) {
      const auto leaf = std::find_if(leaves.begin(), leaves.end(), [&](const auto& l) { return sql::from_item_name(*l.first) == named; });
      if (leaf == leaves.end()) throw SqlError("42P01", fmt::format("relation \"{}\" in {} clause not found in FROM clause", named, clause));
      const sql::FromItem& f = *leaf->first;
      if (f.kind == K::function) throw SqlError("0A000", fmt::format("{} cannot be applied to a function", clause));
      if (f.kind == K::values) throw SqlError("0A000", fmt::format("{} cannot be applied to VALUES", clause));
      if (f.kind == K::subquery) refuse("OF a subquery in FROM (it locks the subquery's rows)");
      if (system_view(f)) refuse(fmt::format("of the system view {}", f.table));
      if (with_query(f)) throw SqlError("0A000", fmt::format("{} cannot be applied to a WITH query", clause));
      if (std::none_of(locked.begin(), locked.end(), [&](const auto& l) { return l.first == &f; })) locked.push_back(*leaf);
    }
  }
  std::vector<const sql::FromItem*> out;
  for (const auto& [f, nullable] : locked) {
    // A WHERE may make the LEFT JOIN an inner one first (reduce_outer_joins): then the server locks.
    if (nullable && sel.where) refuse("of the nullable side of a LEFT JOIN beside a WHERE (the planner may make it an inner join)");
    if (nullable) throw SqlError("0A000", fmt::format("{} cannot be applied to the nullable side of an outer join", clause));
    out.push_back(f);
  }
  return out;
}

std::vector<std::pair<std::int64_t, Row>> SqlRun::lock_joined_rows(std::vector<std::pair<std::int64_t, Row>> rows, const sql::Select& sel,
                                                                   SqlTable& jt, std::int64_t offset, std::int64_t limit) {
  const std::vector<const sql::FromItem*> locked = locked_tables(sel);
  Leaves leaves;
  for (const sql::FromItem& f : sel.from) from_leaves(f, false, leaves);
  const Mode mode = row_mode(sel.lock);
  if (sel.order_by.empty() && rows.size() >= 2 && (sel.limit || sel.wait != sql::LockWait::wait)) {
    throw SqlError("0A000", fmt::format("{} over a join under LIMIT, NOWAIT or SKIP LOCKED without ORDER BY is not in lockstep's SQL "
                                        "subset (docs/sql.md): the server's join plan decides which rows come first",
                                        sql::lock_clause_name(sel.lock)));
  }
  std::vector<std::pair<std::int64_t, Row>> kept;
  for (auto& [n, row] : rows) {
    if (limit >= 0 && static_cast<std::int64_t>(kept.size()) >= offset + limit) break;
    std::map<const sql::FromItem*, std::optional<Row>> versions;  // one row per item, for EvalPlanQual
    bool skip = false, changed = false;
    for (const sql::FromItem* f : locked) {
      const std::string relation = sql::from_item_name(*f);
      const std::optional<Row> found = leaf_part(row, joined_row_id(relation));
      LOCKSTEP_INVARIANT(found.has_value(), "a locked table is on no nullable side: each joined row has its row");
      std::int64_t id = std::stoll(found->at(joined_row_id(relation)));
      const std::string name = table(f->table)->def.table;
      check_not_written_by_cte(name);
      std::optional<Row> version;
      if (sel.wait == sql::LockWait::skip_locked) {
        skip = !try_lock_row(name, id, mode);
      } else {
        skip = !wait_row_lock(name, id, mode, sel.wait, snapshot_seq());
        if (!skip && c_.locked_as_read_) version = std::exchange(c_.locked_as_read_, std::nullopt);  // the version read, as it was
      }
      if (skip) break;
      if (!version) {
        const std::optional<Row>& newest = c_.visible(name, id);
        if (!newest) {
          forget_gone_row(name, id);
          skip = true;
          break;
        }
        version = newest;
      }
      Row part;
      const std::string key = joined_row_id(relation), prefix = key.substr(0, key.size() - 1);  // "relation\x1f"
      for (const auto& [column, text] : *version) part.emplace(prefix + column, text);
      part.emplace(key, std::to_string(id));
      changed = changed || part != *found;
      versions[f] = std::move(part);
    }
    if (skip) continue;
    if (changed) {
      for (const auto& [f, nullable] : leaves) {
        if (!versions.contains(f)) versions[f] = leaf_part(row, joined_row_id(sql::from_item_name(*f)));
      }
      const Saved saved = save();
      epq_rows_ = &versions;
      std::vector<Row> again{Row{}};
      try {
        for (const sql::FromItem& f : sel.from) again = from_rows(f, jt, again);
      } catch (...) {
        epq_rows_ = nullptr;
        throw;
      }
      epq_rows_ = nullptr;
      LOCKSTEP_INVARIANT(again.size() <= 1, "EvalPlanQual joins one row per FROM item: at most one joined row");
      table_ = &jt;
      alias_ = {};
      if (!again.empty()) row_ = &again.front();
      const bool passes = !again.empty() && (!sel.where || sql::is_true(sql::evaluate(*sel.where, *this)));
      restore(saved);
      if (!passes) continue;
      row = std::move(again.front());
    }
    kept.emplace_back(n, std::move(row));
  }
  return kept;
}

std::vector<std::pair<std::int64_t, Row>> SqlRun::lock_rows(std::vector<std::pair<std::int64_t, Row>> rows, const sql::Select& sel, SqlTable* t, std::int64_t offset, std::int64_t limit) {
  const std::string name = t->def.table;
  check_not_written_by_cte(name);
  const Mode mode = row_mode(sel.lock);
  std::vector<std::pair<std::int64_t, Row>> locked;
  for (auto& [id, row] : rows) {
    if (limit >= 0 && static_cast<std::int64_t>(locked.size()) >= offset + limit) break;
    if (sel.wait == sql::LockWait::skip_locked) {
      if (!try_lock_row(name, id, mode)) continue;
    } else {
      std::function<bool()> wanted;
      bool seen = false;  // the pinned row matched when looked at (then it is followed if moved)
      if (pinned_ && *pinned_ == id && sel.where) {
        wanted = [&, id = id] {
          const std::optional<Row>& current = c_.visible(name, id);
          const bool ok = current.has_value() && still_matches(t, sel.alias, id, *current, *sel.where);
          seen = seen || ok;
          return ok;
        };
      }
      const std::optional<std::uint64_t> read_at = pinned_ && *pinned_ == id ? std::nullopt : snapshot_seq();
      std::function<bool()> follow;
      if (pinned_) follow = [&] { return seen; };
      if (!wait_row_lock(name, id, mode, sel.wait, read_at, wanted, follow)) continue;
      if (c_.locked_as_read_) {  // no EvalPlanQual: the version read, as it was
        locked.emplace_back(id, std::move(*c_.locked_as_read_));
        if (pull_.sel == &sel && pull_.until != nullptr && (*pull_.until)(locked.back().second)) break;
        continue;
      }
    }
    std::optional<Row> newest = c_.visible(name, id);
    if (!newest) {
      forget_gone_row(name, id);
      continue;
    }
    // Re-checked on a newer version only (EvalPlanQual), as WHERE's lock calls show.
    if (sel.where && !sql_row_as_read(server_.row(name, id), snapshot_seq(), c_.pid_) && !still_matches(t, sel.alias, id, *newest, *sel.where)) continue;
    locked.emplace_back(id, std::move(*newest));
    if (pull_.sel == &sel && pull_.until != nullptr && (*pull_.until)(locked.back().second)) break;  // an IN's match
  }
  return locked;
}

void SqlRun::forget_gone_row(const std::string& table, std::int64_t id) {
  const std::pair<std::string, std::int64_t> row{table, id};
  if (c_.written_.count(row) != 0 || c_.locked_rows_.count(row) == 0) return;
  c_.locked_rows_.erase(row);
  server_.row_locks().release_key(c_.pid_, server_.row_key(table, id), Scope::transaction);
}

bool SqlRun::still_matches(SqlTable* t, const std::string& alias, std::int64_t id, const Row& row, const Expr& where) {
  const Saved saved = save();
  table_ = t;
  alias_ = alias;
  row_ = &row;
  const bool ok = where_holds(where, id, /*recheck=*/true);
  restore(saved);
  return ok;
}

bool SqlRun::try_lock_row(const std::string& table, std::int64_t id, Mode mode) {
  check_not_written_by_cte(table);
  const ObjectId obj = server_.row_object(table, id);
  const OpDesc first = narrowing({name(Stmt::select_for_update_skip_locked), {obj, acquire_access(mode)}, id, true});
  if (auto refused = c_.begin_statement(first)) throw Raised{*refused};
  const AdvisoryKey key = server_.row_key(table, id);
  bool got = c_.visible(table, id).has_value();
  if (got && !server_.row_locks().holds_at_least(c_.pid_, key, mode)) {
    // Under REPEATABLE READ a row whose change since the snapshot committed fails it before
    // any lock is looked at (heap_lock_tuple's TM_Updated), unless a key share taken before
    // that commit still holds the version the snapshot sees and FOR UPDATE conflicts with it
    // (TM_BeingModified: skipped); one still changing is skipped.
    if (auto e = c_.serialization_failure(table, id, true, mode)) {
      const RowState& r = server_.row(table, id);
      const bool being_modified = mode == Mode::exclusive && std::any_of(r.key_sharers_at_commit.begin(), r.key_sharers_at_commit.end(), [&](int other) {
        return other != c_.pid_ && server_.row_locks().held(other, key, Mode::key_share) > 0;
      });
      if (!being_modified) throw Raised{c_.abort_with(*e)};
      s_.refine_access(Access::read);
      s_.note_result({Kind::value, 0});
      return false;
    }
    got = server_.row_locks().try_request_row(c_.pid_, key, mode, Scope::transaction);
    if (got) {
      c_.locked_rows_.emplace(table, id);
      c_.ssi_note_xid();  // heap_lock_tuple takes a transaction id
    }
  }
  if (!got) s_.refine_access(Access::read);
  s_.note_result({Kind::value, got ? 1 : 0});
  return got;
}

}  // namespace lockstep::sim::pg
