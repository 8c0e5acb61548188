// sim/pg/executor/sql_foreign_keys.cc: REFERENCES on the simulated server (sim/pg/executor/sql_run.h): the
// checks of CREATE TABLE, and the RI checks at the end of a statement, each a row lock FOR
// KEY SHARE as PostgreSQL's RI triggers take (ri_triggers.c: SELECT ... FOR KEY SHARE).
#include <algorithm>
#include <utility>

#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {
namespace {

// The row's values of `columns` as text, or nullopt when one is NULL (MATCH SIMPLE: no check).
std::optional<std::vector<std::string>> values_of(const SqlTable& t, const Row& row, const std::vector<int>& columns) {
  std::vector<std::string> out;
  for (const int i : columns) {
    const auto it = row.find(t.def.columns[static_cast<std::size_t>(i)].name);
    if (it == row.end()) return std::nullopt;
    out.push_back(it->second);
  }
  return out;
}

// A child row's values of a foreign key as the parent's key columns store them, or nullopt
// when one is NULL. Of columns of another type than the parent's (a timestamp referencing a
// date), each value is cast to the parent's type and kept only when the cast equals it (the
// server's cross-type = ); one no parent value can equal becomes text no stored value has.
std::optional<std::vector<std::string>> child_key(const SqlTable& child, const Row& row, const std::vector<int>& columns,
                                                  const SqlTable& parent, const std::vector<int>& parent_columns) {
  auto out = values_of(child, row, columns);
  if (!out) return out;
  for (std::size_t k = 0; k < columns.size(); ++k) {
    const sql::ColumnDef& c = child.def.columns[static_cast<std::size_t>(columns[k])];
    const sql::ColumnDef& p = parent.def.columns[static_cast<std::size_t>(parent_columns[k])];
    if (c.type == p.type && c.user_type == p.user_type && c.numeric_scale == p.numeric_scale && c.element == p.element) continue;
    const sql::Value v = stored(child, row, columns[k]);
    try {
      const sql::Value as_parent = assigned(sql::cast(v, p.type), p, parent.def.table);
      (*out)[k] = sql::compare(as_parent, v, "=") == 0 ? as_parent.text_output() : std::string("\x1f\x1f");
    } catch (const sql::SqlError&) {  // out of the parent type's range: equal to none of its values
      (*out)[k] = "\x1f\x1f";
    }
  }
  return out;
}

bool same_columns(std::vector<std::string> a, std::vector<std::string> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

}  // namespace

std::optional<Error> SqlRun::check_foreign_keys(const sql::CreateTable& ct) {
  for (const sql::ForeignKey& fk : ct.foreign_keys) {
    const SqlTable* parent = server_.sql_table(fk.parent);
    const bool self = fk.parent == ct.table;  // a foreign key to the table being created (pg-boss's dead letter queue)
    if (parent == nullptr && !self) return Error{"42P01", fmt::format("relation \"{}\" does not exist", fk.parent)};
    const sql::CreateTable& pdef = self ? ct : parent->def;
    const auto has_column = [&](const std::string& c) {
      return std::any_of(pdef.columns.begin(), pdef.columns.end(), [&](const sql::ColumnDef& d) { return d.name == c; });
    };
    for (const std::string& c : fk.columns) {
      if (std::none_of(ct.columns.begin(), ct.columns.end(), [&](const sql::ColumnDef& d) { return d.name == c; })) {
        return Error{"42703", fmt::format("column \"{}\" referenced in foreign key constraint does not exist", c)};
      }
    }
    std::vector<std::string> referenced = fk.parent_columns;
    if (referenced.empty()) {
      if (pdef.primary_key.empty()) {
        return Error{"42830", fmt::format("there is no primary key for referenced table \"{}\"", fk.parent)};
      }
      referenced = pdef.primary_key;
    }
    for (const std::string& c : referenced) {
      if (!has_column(c)) return Error{"42703", fmt::format("column \"{}\" referenced in foreign key constraint does not exist", c)};
    }
    if (referenced.size() != fk.columns.size()) {
      return Error{"42830", "number of referencing and referenced columns for foreign key disagree"};
    }
    if (fk.cascade_update && !same_columns(referenced, pdef.primary_key)) {
      return Error{"0A000", "ON UPDATE CASCADE of a key other than the parent's primary key is not in lockstep's SQL subset (docs/sql.md)"};
    }
    bool keyed = same_columns(referenced, pdef.primary_key);
    for (const auto& u : pdef.unique) keyed = keyed || same_columns(referenced, u);
    if (!self) {  // a unique index serves too (not a partial one, nor one on expressions)
      for (const SqlTable::UniqueKey& u : parent->unique) {
        if (!u.expressions.empty() || u.where != nullptr) continue;
        std::vector<std::string> names;
        for (const int c : u.columns) names.push_back(parent->def.columns[static_cast<std::size_t>(c)].name);
        keyed = keyed || same_columns(referenced, names);
      }
    }
    if (!keyed) return Error{"42830", fmt::format("there is no unique constraint matching given keys for referenced table \"{}\"", fk.parent)};
  }
  return std::nullopt;
}

bool SqlRun::defers(const SqlTable::ForeignKey& fk) {
  bool deferred = fk.deferred;  // INITIALLY, unless SET CONSTRAINTS named it, or ALL after it
  if (fk.deferrable) {
    const SimConnection::ConstraintModes& modes = c_.constraint_modes_;
    if (const auto it = modes.named.find(fk.name); it != modes.named.end()) {
      deferred = it->second;
    } else if (modes.all) {
      deferred = *modes.all;
    }
  }
  if (!deferred || !c_.session_.in_transaction) return false;  // an autocommit statement's: its end is its commit
  if (c_.implicit_block_) {
    throw SqlError("0A000", "a deferred foreign key's check in a string of several statements outside a transaction block is not in "
                            "lockstep's SQL subset (docs/sql.md)");
  }
  return true;
}

void SqlRun::check_references(SqlTable& t, const Row& row, const Row* before) {
  for (std::size_t k = 0; k < t.foreign_keys.size(); ++k) {
    const SqlTable::ForeignKey& fk = t.foreign_keys[k];
    SqlTable& parent = *table(fk.parent);
    const auto values = child_key(t, row, fk.columns, parent, fk.parent_columns);
    if (!values) continue;
    if (before != nullptr && child_key(t, *before, fk.columns, parent, fk.parent_columns) == values) continue;  // the key did not change
    if (defers(fk)) {
      c_.deferred_checks_.push_back({t.def.table, k, row, true});
      continue;
    }
    check_reference(t, fk, *values);
  }
}

void SqlRun::check_reference(SqlTable& t, const SqlTable::ForeignKey& fk, const std::vector<std::string>& values) {
  SqlTable& parent = *table(fk.parent);
  const Error violation{"23503", fmt::format("insert or update on table \"{}\" violates foreign key constraint \"{}\"", t.def.table, fk.name)};
  lock_for_ri_query(parent, Mode::row_share);  // RI_FKey_check's SELECT ... FOR KEY SHARE, before it reads
  // The parent row: by its primary key's id, else the row whose unique key has the values.
  std::optional<std::int64_t> id;
  if (fk.parent_columns == parent.key) {
    std::string key;
    for (const std::string& v : values) key += v + '\x1f';
    if (const auto it = parent.ids.find(key); it != parent.ids.end()) id = it->second;
  } else {
    server_.each_row(parent.def.table, [&](std::int64_t other, RowState&) {
      const std::optional<Row>& version = c_.visible(parent.def.table, other);
      if (!id && version && values_of(parent, *version, fk.parent_columns) == values) id = other;
    });
  }
  // No row has ever had the key (or the scan found none): the answer reads the table, so it
  // is ordered against the insert that would give it one.
  if (s_.in_actor()) s_.also_touch(parent.object);
  if (!id) throw Raised{violation};
  const Result<bool> got = c_.lock_row(parent.def.table, *id, false, Stmt::select_for_share, Mode::key_share);
  if (!got.ok()) throw Raised{got.error()};
  const std::optional<Row>& now = c_.visible(parent.def.table, *id);
  if (!got.value() || !now || values_of(parent, *now, fk.parent_columns) != values) {
    if (got.value() && !now) forget_gone_row(parent.def.table, *id);
    throw Raised{violation};
  }
}

std::optional<Error> SqlRun::run_deferred_checks() {
  SimConnection::Statement guard(c_);  // a statement of its own: its snapshot, steps and waits, before the COMMIT's
  if (auto refused = begin("deferred_checks", Footprint{})) return refused;
  try {
    run_checks(std::exchange(c_.deferred_checks_, {}));
  } catch (const Raised& r) {
    return fail(r.error);
  } catch (const SqlError& e) {
    return fail(error_of(e));
  }
  if (Status ended = c_.end_statement(); !ended.ok()) return ended.error();
  return std::nullopt;
}

void SqlRun::run_checks(const std::vector<SimConnection::DeferredCheck>& checks) {
  for (const SimConnection::DeferredCheck& check : checks) {
    SqlTable* t = server_.sql_table(check.table);
    if (t == nullptr || check.key >= t->foreign_keys.size()) continue;
    const SqlTable::ForeignKey& fk = t->foreign_keys[check.key];
    SqlTable& parent = *table(fk.parent);
    // The row checked only while it is live: deleted, or updated since (whose UPDATE queued its own), it is not.
    bool live = false;
    const SqlTable& scanned = check.child ? *t : parent;
    if (s_.in_actor()) s_.also_touch(scanned.object);
    server_.each_row(scanned.def.table, [&](std::int64_t id, RowState&) {
      const std::optional<Row>& version = c_.visible(scanned.def.table, id);
      if (!version) return;
      live = live || (check.child ? *version == check.row
                                  : values_of(parent, *version, fk.parent_columns) == values_of(parent, check.row, fk.parent_columns));
    });
    if (check.child && live) {
      if (const auto values = child_key(*t, check.row, fk.columns, parent, fk.parent_columns)) check_reference(*t, fk, *values);
    } else if (!check.child && !live) {  // no parent row has the key again (ri_Check_Pk_Match): NO ACTION's check
      check_referenced_by(parent, check.table, check.key, check.row, nullptr, true);
    }
  }
}

Result<Rows> SqlRun::set_constraints(const sql::Transaction& t) {
  SimConnection::Statement guard(c_);
  if (auto refused = begin("set_constraints", Footprint{})) return *refused;
  if (c_.implicit_block_ || (!c_.session_.in_transaction && c_.in_query_string_)) {  // the server's implicit block keeps it to the string's end
    return fail(Error{"0A000", "SET CONSTRAINTS in a string of several statements outside a transaction block is not in lockstep's SQL subset (docs/sql.md)"});
  }
  if (!c_.session_.in_transaction) {  // WarnNoTransactionBlock's
    c_.warnings_.push_back({"25P01", "SET CONSTRAINTS can only be used in transaction blocks"});
    return done(Rows{{}, {}, "SET CONSTRAINTS"});
  }
  SimConnection::ConstraintModes& modes = c_.constraint_modes_;
  if (t.constraints.empty()) {  // ALL: every deferrable key, the names set before forgotten
    modes.all = t.deferred;
    modes.named.clear();
  }
  for (const std::string& name : t.constraints) {
    bool found = false, deferrable = true;
    server_.each_sql_table([&](const SqlTable& table) {
      for (const SqlTable::ForeignKey& fk : table.foreign_keys) {
        if (fk.name != name) continue;
        found = true;
        deferrable = deferrable && fk.deferrable;
      }
    });
    if (!found) {
      return fail(Error{"0A000", fmt::format("SET CONSTRAINTS of \"{}\", which is no foreign key's name, is not in lockstep's SQL subset (docs/sql.md)", name)});
    }
    if (!deferrable) return fail(Error{"55000", fmt::format("constraint \"{}\" is not deferrable", name)});
    modes.named[name] = t.deferred;
  }
  if (!t.deferred) {  // the checks queued for keys now immediate run now (AfterTriggerSetState)
    std::vector<SimConnection::DeferredCheck> now, later;
    for (SimConnection::DeferredCheck& check : c_.deferred_checks_) {
      const SqlTable* table = server_.sql_table(check.table);
      const bool still = table != nullptr && check.key < table->foreign_keys.size() && defers(table->foreign_keys[check.key]);
      (still ? later : now).push_back(std::move(check));
    }
    c_.deferred_checks_ = std::move(later);
    try {
      run_checks(now);
    } catch (const Raised& r) {
      return fail(r.error);
    } catch (const SqlError& e) {
      return fail(error_of(e));
    }
  }
  return done(Rows{{}, {}, "SET CONSTRAINTS"});
}

void SqlRun::check_keys(SqlTable& t, const KeyChanges& changes) {
  for (const auto& [before, after, before_ours, inserted] : changes) {
    if (inserted) {
      check_references(t, *after, nullptr);
      continue;
    }
    if (after) check_references(t, *after, before_ours ? nullptr : &before);
    check_referenced(t, before, after ? &*after : nullptr);
  }
}

void SqlRun::check_referenced(SqlTable& t, const Row& old_row, const Row* new_row) {
  for (const auto& [child_name, k] : t.referenced_by) check_referenced_by(t, child_name, k, old_row, new_row, false);
}

void SqlRun::check_referenced_by(SqlTable& t, const std::string& child_name, std::size_t k, const Row& old_row, const Row* new_row,
                                 bool at_commit) {
  SqlTable& child = *table(child_name);
  const SqlTable::ForeignKey& fk = child.foreign_keys[k];
  const auto values = values_of(t, old_row, fk.parent_columns);
  if (!values) return;
  if (new_row != nullptr && values_of(t, *new_row, fk.parent_columns) == values) return;  // the key stays
  const bool restricts = new_row == nullptr ? fk.restrict_delete : fk.restrict_update;  // RESTRICT: never deferred
  if (!at_commit && !restricts && fk.on_delete == sql::ForeignKey::OnDelete::no_action && defers(fk)) {
    c_.deferred_checks_.push_back({child_name, k, old_row, false});
    return;
  }
  const bool action = new_row == nullptr && fk.on_delete != sql::ForeignKey::OnDelete::no_action;
  lock_for_ri_query(child, action ? Mode::row_exclusive : Mode::row_share);
  // Under REPEATABLE READ these queries scan with a fresh snapshot (ri_PerformCheck's
  // detectNewRows: GetLatestSnapshot), the transaction's kept as the crosscheck of a
  // cascade's writes (delete_action).
  struct FreshSnapshot {
    SqlRun& run;
    std::optional<std::uint64_t> saved, crosscheck;
    explicit FreshSnapshot(SqlRun& r) : run(r), saved(r.c_.snapshot_), crosscheck(r.crosscheck_) {
      if (!saved) return;
      run.c_.snapshot_ = run.server_.open_snapshot();
      if (!run.crosscheck_) run.crosscheck_ = saved;
    }
    ~FreshSnapshot() {
      if (!saved) return;
      run.server_.close_snapshot();
      run.c_.snapshot_ = saved;
      run.crosscheck_ = crosscheck;
    }
  } fresh(*this);
  if (s_.in_actor()) s_.also_touch(child.object);  // the scan of the children
  // In heap order, as the RI query's scan meets them (a sequential scan, or an index on the
  // key, whose equal entries are in heap order): the first one locked may wait.
  std::vector<std::pair<std::uint64_t, std::int64_t>> found;
  const std::uint64_t read_at = server_.commits();  // the RI query's snapshot
  server_.each_row(child_name, [&](std::int64_t id, RowState&) {
    const std::optional<Row>& version = c_.visible(child_name, id);
    if (version && child_key(child, *version, fk.columns, t, fk.parent_columns) == values) {
      found.emplace_back(c_.visible_place(child_name, id).position, id);
    }
  });
  std::sort(found.begin(), found.end());
  std::vector<std::int64_t> referencing;
  referencing.reserve(found.size());
  for (const auto& [position, id] : found) referencing.push_back(id);
  if (action) {
    delete_action(child, fk, *values, referencing);
    return;
  }
  for (std::int64_t id : referencing) {
    const Result<bool> got = lock_following(child_name, id, Stmt::select_for_share, Mode::key_share, nullptr, read_at);
    if (!got.ok()) throw Raised{got.error()};
    // Updates that kept the child's keys are passed: the version the query read is what it
    // finds (heap_lock_tuple returns it without EvalPlanQual), even when the waited-for
    // update changed the foreign key's columns.
    const std::optional<Row> as_read = std::exchange(c_.locked_as_read_, std::nullopt);
    const std::optional<Row>& now = as_read ? as_read : c_.visible(child_name, id);
    if (got.value() && now && child_key(child, *now, fk.columns, t, fk.parent_columns) == values) {
      throw Raised{Error{"23503", fmt::format("update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                                              t.def.table, fk.name, child_name)}};
    }
  }
}

Result<bool> SqlRun::lock_following(const std::string& name, std::int64_t& id, Stmt verb, Mode mode,
                                    const std::function<bool()>& wanted, std::optional<std::uint64_t> read_at) {
  Result<bool> got = c_.lock_row(name, id, false, verb, mode, wanted, nullptr, read_at);
  for (std::int64_t next = got.ok() ? followed(name, id, read_at) : 0; next != 0; next = got.ok() ? followed(name, id, read_at) : 0) {
    if (got.value()) forget_gone_row(name, id);
    id = next;
    got = c_.lock_row(name, id, false, verb, mode, nullptr);
  }
  return got;
}

void SqlRun::lock_for_ri_query(const SqlTable& t, Mode mode) {
  if (auto e = c_.take_table_lock({Server::table_key(t), mode, t.def.table})) throw Raised{*e};
}

// ON DELETE CASCADE / SET NULL / SET DEFAULT: RI_FKey_cascade_del's `DELETE FROM child WHERE
// key = $1` and RI_FKey_setnull_del's `UPDATE child SET key = NULL WHERE key = $1` (setdefault's
// SET key = DEFAULT), each row locked as those
// statements lock it (waiting for its writer, then re-checked), and their own foreign keys
// acted on in turn.
void SqlRun::delete_action(SqlTable& child, const SqlTable::ForeignKey& fk, const std::vector<std::string>& values,
                           const std::vector<std::int64_t>& referencing) {
  const std::string& name = child.def.table;
  const SqlTable& parent = *table(fk.parent);
  const bool cascade = fk.on_delete == sql::ForeignKey::OnDelete::cascade;
  bool keyed = false;  // SET NULL of a unique key's column takes FOR UPDATE, else FOR NO KEY UPDATE
  for (const int col : fk.columns) {
    const std::string& column = child.def.columns[static_cast<std::size_t>(col)].name;
    keyed = keyed || std::find(child.def.primary_key.begin(), child.def.primary_key.end(), column) != child.def.primary_key.end();
    for (const auto& u : child.def.unique) keyed = keyed || std::find(u.begin(), u.end(), column) != u.end();
  }
  const Mode mode = cascade || keyed ? Mode::exclusive : Mode::no_key_update;
  for (std::int64_t id : referencing) {
    std::function<bool()> wanted = [&, id] {
      const std::optional<Row>& current = c_.visible(name, id);
      return current.has_value() && child_key(child, *current, fk.columns, parent, fk.parent_columns) == values;
    };
    const Result<bool> got = lock_following(name, id, Stmt::update_row_if, mode, wanted);
    if (!got.ok()) throw Raised{got.error()};
    const std::optional<Row> newest = c_.visible(name, id);
    if (!got.value()) continue;
    if (!newest) {
      forget_gone_row(name, id);
      continue;
    }
    if (child_key(child, *newest, fk.columns, parent, fk.parent_columns) != values) continue;
    // The crosscheck (heap_delete's, heap_update's): a version the transaction's snapshot does
    // not see, committed since by another, fails it.
    if (crosscheck_ && server_.row(name, id).pending.count(c_.pid_) == 0 && server_.row(name, id).committed_seq > *crosscheck_) {
      throw Raised{Error{std::string(sqlstate::kSerializationFailure), "could not serialize access due to concurrent update"}};
    }
    Rows unused;
    if (cascade) {
      if (s_.logging()) s_.add_detail("deleted " + row_text(*newest) + " (ON DELETE CASCADE)");
      write_version(child, id, std::nullopt, {}, unused);
      check_referenced(child, *newest, nullptr);
      continue;
    }
    Row updated = *newest;
    for (const int col : fk.columns) {
      const sql::ColumnDef& c = child.def.columns[static_cast<std::size_t>(col)];
      if (fk.on_delete == sql::ForeignKey::OnDelete::set_default) {
        Value v = assigned(column_default(child, static_cast<std::size_t>(col)), c, name);
        if (!v.is_null()) {
          updated[c.name] = std::move(v).text_output();
          continue;
        }
      }
      if (c.not_null) {
        throw Raised{Error{"23502", fmt::format("null value in column \"{}\" of relation \"{}\" violates not-null constraint", c.name, name)}};
      }
      updated.erase(c.name);
    }
    write_version(child, id, updated, {}, unused);
    check_referenced(child, *newest, &updated);
    if (fk.on_delete != sql::ForeignKey::OnDelete::set_default) continue;
    // The child's own check of its new key (its UPDATE's RI trigger); a default equal to the
    // deleted key leaves the row referencing it: RI_FKey_setdefault_del's NO ACTION check.
    if (child_key(child, updated, fk.columns, parent, fk.parent_columns) == std::optional(values)) {
      throw Raised{Error{"23503", fmt::format("update or delete on table \"{}\" violates foreign key constraint \"{}\" on table \"{}\"",
                                              fk.parent, fk.name, name)}};
    }
    check_references(child, updated, nullptr);
  }
}

}  // namespace lockstep::sim::pg
