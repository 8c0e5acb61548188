// sim/pg/executor/sql_on_conflict.cc: INSERT ... ON CONFLICT on the simulated server (sim/pg/executor/sql_run.h):
// which unique keys are its arbiters (by columns, a partial index's predicate, or a
// constraint's name) and DO UPDATE of the row that holds the key (its lock, 21000 for a row
// the same INSERT wrote, its WHERE, the new version).
#include <algorithm>

#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

namespace {
// Whether two expressions are written alike (a partial index's predicate and ON CONFLICT's).
bool oc_same_expr(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || a.name != b.name || a.qualifier != b.qualifier || a.negated != b.negated || a.all != b.all ||
      a.type != b.type || a.number != b.number || a.args.size() != b.args.size() || a.select != nullptr || b.select != nullptr) {
    return false;
  }
  if (a.kind == Expr::Kind::constant && (a.value.is_null() != b.value.is_null() || a.value.type() != b.value.type() ||
                                         a.value.text_output() != b.value.text_output())) {
    return false;
  }
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    if (!oc_same_expr(a.args[i], b.args[i])) return false;
  }
  return true;
}

// Whether ON CONFLICT's target (columns, and a partial index's predicate) names the key. A
// predicate written otherwise than the index's own is refused: the server proves one implies
// the other (predtest.c), which lockstep does not model.
bool oc_infers(const sql::Insert& ins, const SqlTable::UniqueKey& key) {
  if (key.where == nullptr) return true;  // a plain unique index serves any predicate
  if (ins.conflict_index_where == nullptr) return false;
  if (!oc_same_expr(*ins.conflict_index_where, *key.where)) {
    throw SqlError("0A000", "an ON CONFLICT predicate written otherwise than its partial index's WHERE is not in lockstep's SQL subset");
  }
  return true;
}

// Whether ON CONFLICT's elements are the key's parts, in any order: a column by its name, an
// expression written as the index's (the server's inference matches them as equal trees).
bool oc_same_parts(const sql::Insert& ins, const SqlTable& t, const SqlTable::UniqueKey& key) {
  if (ins.conflict_columns.size() != key.columns.size()) return false;
  std::vector<bool> used(key.columns.size(), false);
  for (std::size_t e = 0; e < ins.conflict_columns.size(); ++e) {
    const Expr* mine = e < ins.conflict_expressions.size() ? ins.conflict_expressions[e].get() : nullptr;
    bool found = false;
    for (std::size_t k = 0; k < key.columns.size() && !found; ++k) {
      const Expr* theirs = k < key.expressions.size() ? key.expressions[k].get() : nullptr;
      if (used[k] || (mine == nullptr) != (theirs == nullptr)) continue;
      found = mine != nullptr ? oc_same_expr(*mine, *theirs)
                              : t.def.columns[static_cast<std::size_t>(key.columns[k])].name == ins.conflict_columns[e];
      if (found) used[k] = true;
    }
    if (!found) return false;
  }
  return true;
}

std::vector<std::string> oc_sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}
}  // namespace

// Whether ON CONFLICT names the unique key as an arbiter: ON CONSTRAINT by its name (a
// CREATE UNIQUE INDEX is no constraint), columns by the key's own (and a partial index's
// predicate), no target: any key (DO NOTHING).
bool conflict_arbiter(const sql::Insert& ins, const SqlTable& t, const SqlTable::UniqueKey& key) {
  if (!ins.conflict_constraint.empty()) return key.constraint && key.name == ins.conflict_constraint;
  if (ins.conflict_columns.empty()) return true;
  if (!key.expressions.empty() || !ins.conflict_expressions.empty()) return oc_same_parts(ins, t, key) && oc_infers(ins, key);
  std::vector<std::string> names;
  for (int i : key.columns) names.push_back(t.def.columns[static_cast<std::size_t>(i)].name);
  return oc_sorted(names) == oc_sorted(ins.conflict_columns) && oc_infers(ins, key);
}

// Whether ON CONFLICT names the primary key as an arbiter.
bool conflict_pk_arbiter(const sql::Insert& ins, const SqlTable& t) {
  if (t.def.primary_key.empty()) return false;
  if (!ins.conflict_constraint.empty()) return ins.conflict_constraint == primary_key_name(&t, t.def.table);
  return ins.conflict_columns.empty() || (ins.conflict_expressions.empty() && oc_sorted(ins.conflict_columns) == oc_sorted(t.def.primary_key));
}

// Whether `row` repeats, in `other` (a version of the row of the same primary key), a unique
// key ON CONFLICT names: then that row is the conflict the arbiter finds first.
bool conflict_repeats_arbiter(const sql::Insert& ins, const SqlTable& t, const Row& row, const Row& other) {
  for (const SqlTable::UniqueKey& key : t.unique) {
    if (!conflict_arbiter(ins, t, key)) continue;
    const auto mine = unique_text(key, t, row);
    if (mine && mine == unique_text(key, t, other)) return true;
  }
  return false;
}

Result<std::int64_t> SqlRun::conflict_update(SqlTable& t, const sql::Insert& ins, std::int64_t id, const Row& proposed, Rows& out) {
  const std::string name = t.def.table;
  const std::uint64_t found_seq = server_.row(name, id).committed_seq;  // the version the unique check found
  const SimConnection::UpdateHeap heap(c_, &t);  // (OpDesc::may_write)
  const Result<bool> got = c_.lock_row(name, id, false, Stmt::update_row_if, update_mode(t, ins.conflict_set));
  if (!got.ok()) return got.error();
  std::optional<Row> current = c_.visible(name, id);
  if (got.value() && current && server_.row(name, id).committed_seq != found_seq) {
    // Another transaction updated the row while this waited for its lock: heap_lock_tuple
    // answers TM_Updated and lets the lock go, and ExecOnConflictUpdate starts again from the
    // unique check (the new version may no longer conflict), not from the new version.
    forget_gone_row(name, id);
    return kConflictGone;
  }
  if (got.value() && current && std::find(upserted_.begin(), upserted_.end(), id) != upserted_.end()) {
    return fail(Error{"21000", "ON CONFLICT DO UPDATE command cannot affect row a second time"});
  }
  if (!got.value() || !current) {
    // The conflicting row was deleted while this waited for it: the server's speculative
    // insertion starts again from the unique check (ExecOnConflictUpdate's "try again").
    if (got.value()) forget_gone_row(name, id);
    return kConflictGone;
  }
  excluded_ = &proposed;
  table_ = &t;
  alias_ = ins.alias;
  row_ = &*current;
  if (ins.conflict_where && !sql::is_true(sql::evaluate(*ins.conflict_where, *this))) {
    excluded_ = nullptr;
    return 0;
  }
  Row updated = apply_set(t, *current, ins.conflict_set);
  if (has_before_row(t, "UPDATE")) {  // ExecOnConflictUpdate's ExecUpdate: BEFORE UPDATE triggers, then the checks
    if (!before_row(t, "UPDATE", &*current, &updated, &ins.conflict_set)) {
      excluded_ = nullptr;
      return 0;  // not updated: not counted, no RETURNING (nor "a second time" later)
    }
    compute_generated(t, updated);
    check_not_null(t, updated);
    check_constraints(t, updated, this);
  }
  if (changes_primary_key(t, *current, updated)) {
    throw SqlError("0A000", "ON CONFLICT DO UPDATE of a primary key column is not in lockstep's SQL subset (docs/sql.md)");
  }
  excluded_ = nullptr;
  if (upsert_changes_ != nullptr) {
    const bool ours = server_.row(name, id).pending.count(c_.pid_) != 0;
    upsert_changes_->push_back({*current, updated, ours});
  }
  queue_after_row(t, "UPDATE", &*current, &updated, &ins.conflict_set);
  returning_updated_ = true;  // its RETURNING's xmax is not 0
  write_version(t, id, std::move(updated), ins.returning, out);
  returning_updated_ = false;
  upserted_.push_back(id);
  return 1;
}

}  // namespace lockstep::sim::pg
