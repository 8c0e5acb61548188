// sim/pg/executor/sql_write.cc: INSERT (ON CONFLICT; unique checks are sim/pg/executor/sql_unique.cc), UPDATE and
// DELETE (a scan or the pinned row, each row's lock, EvalPlanQual) on the simulated server
// (sim/pg/executor/sql_run.h).
#include <algorithm>
#include <iterator>

#include <boost/container/small_vector.hpp>

#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_ssi.h"

namespace lockstep::sim::pg {

Result<Rows> SqlRun::statement(const sql::Insert& ins) {
  std::optional<SimConnection::Statement> guard;  // a data-modifying WITH query runs inside its statement's
  if (!nested_) guard.emplace(c_);
  if (!ins.with.empty()) check_read_only();  // before a WITH query's locks or writes
  declare_ctes(ins.with);  // those that lock rows or modify take their steps now
  SqlTable* t = table(ins.table);
  if (const Derived* d = derived_of(t); d != nullptr && d->sequence) throw SqlError("42809", fmt::format("cannot change sequence \"{}\"", ins.table));
  // The statement's first step writes the table (its lock: parse analysis opens the table
  // before it checks columns and the planner infers the arbiter, so their errors come after a
  // wait for the lock). The first row's values are evaluated in it, or the SELECT run.
  if (auto refused = begin("sql_insert", on(t->object, Access::write))) return *refused;
  std::vector<int> columns;
  if (ins.columns.empty()) {
    for (std::size_t i = 0; i < t->def.columns.size(); ++i) columns.push_back(static_cast<int>(i));
  } else {
    for (const std::string& name : ins.columns) {
      const int i = t->column(name);
      if (i < 0) throw SqlError("42703", fmt::format("column \"{}\" of relation \"{}\" does not exist", name, ins.table));
      columns.push_back(i);
    }
  }
  for (const sql::Assignment& a : ins.conflict_set) {
    if (t->column(a.column) < 0) throw SqlError("42703", fmt::format("column \"{}\" of relation \"{}\" does not exist", a.column, ins.table));
    check_columns(a.value, *t, ins.alias);
  }
  if (ins.conflict_where) check_columns(*ins.conflict_where, *t, ins.alias);
  check_columns(ins.returning, *t, ins.alias);
  alias_ = ins.alias;  // RETURNING's and DO UPDATE's name of the table
  if (!ins.conflict_columns.empty() || !ins.conflict_constraint.empty()) {
    // The arbiter: the primary key or a unique key, by its columns or its constraint's name.
    bool named = conflict_pk_arbiter(ins, *t);
    for (const SqlTable::UniqueKey& u : t->unique) named = named || conflict_arbiter(ins, *t, u);
    if (!named && !ins.conflict_constraint.empty()) {
      throw SqlError("42704", fmt::format("constraint \"{}\" for table \"{}\" does not exist", ins.conflict_constraint, ins.table));
    }
    if (!named) throw SqlError("42P10", "there is no unique or exclusion constraint matching the ON CONFLICT specification");
  }
  check_read_only();
  Rows out;
  out.columns = column_names(ins.returning, t, ins.alias);
  std::int64_t inserted = 0;
  bool first = true;
  // The rows inserted, and those ON CONFLICT DO UPDATE changed, when the table has keys: their
  // RI checks run at the statement's end, in the order the rows were written (AFTER triggers).
  const bool keyed = !t->foreign_keys.empty() || !t->referenced_by.empty();
  KeyChanges changes;
  const std::vector<std::vector<std::optional<Expr>>>* rows = &ins.rows;
  std::vector<std::vector<std::optional<Expr>>> selected;  // INSERT ... SELECT's rows, as constants
  if (ins.select) {
    // ModifyTable inserts each row its SELECT pulls before the next row's lock call runs (and
    // a unique check may wait between them); here the SELECT runs whole first.
    const sql::Select& sel = *ins.select;
    const bool per_row_steps = (sel.where && sql_expr_takes_steps(*sel.where)) ||
                               std::any_of(sel.targets.begin(), sel.targets.end(), [](const sql::Target& x) { return !x.star && sql_expr_takes_steps(x.expr); });
    if (per_row_steps && (!sel.table.empty() || !sel.from.empty()) && !sel.aggregate && sel.order_by.empty()) {
      throw SqlError("0A000", "an INSERT ... SELECT whose SELECT calls a lock function for each row of a table it reads (the server inserts a row "
                              "before the next row's call) is not in lockstep's SQL subset (docs/sql.md)");
    }
    auto pulled = run_subquery(*ins.select, /*per_row=*/false);
    if (pulled.size() > 1 && sel.order_by.empty() && sel.where && semi_joined(*sel.where)) {
      throw SqlError("0A000", "an INSERT ... SELECT of rows an IN (subquery) or a correlated EXISTS keeps, without ORDER BY, inserts them in the "
                              "order of the join the server's planner picks by its costs (not modelled) and is not in lockstep's SQL subset "
                              "(docs/sql.md); ORDER BY in the SELECT is");
    }
    for (std::vector<Value>& values : pulled) {
      auto& row = selected.emplace_back();
      for (Value& v : values) row.emplace_back(Expr{.kind = Expr::Kind::constant, .value = std::move(v)});
    }
    rows = &selected;
  }
  for (const auto& values : *rows) {
    if (values.size() > columns.size()) throw SqlError("42601", "INSERT has more expressions than target columns");
    if (ins.select && !ins.columns.empty() && values.size() < columns.size()) throw SqlError("42601", "INSERT has more target columns than expressions");
    Row row = new_row(*t, columns, values, /*step_taken=*/first, ins.overriding);
    first = false;
    if (!before_row(*t, "INSERT", nullptr, &row)) continue;  // BEFORE INSERT triggers, then the row's checks
    compute_generated(*t, row);
    if (has_before_row(*t, "INSERT")) check_not_null(*t, row);  // (else as each value was assigned)
    check_constraints(*t, row, this);
    std::optional<Row> proposed;
    if (keyed) proposed = row;
    const std::size_t updates = changes.size();
    upsert_changes_ = keyed ? &changes : nullptr;
    struct Noting {  // DO UPDATE notes its change in `changes` during this row only
      KeyChanges*& to;
      ~Noting() { to = nullptr; }
    } noting{upsert_changes_};
    const auto r = insert_one(*t, ins, std::move(row), out);
    if (!r.ok()) return r.error();
    inserted += r.value();
    // Inserted, not updated by DO UPDATE (which noted its change) nor left by DO NOTHING.
    if (keyed && r.value() == 1 && changes.size() == updates) changes.push_back({{}, std::move(proposed), false, true});
  }
  check_keys(*t, changes);
  out.tag = fmt::format("INSERT 0 {}", inserted);
  return done(std::move(out));
}

Row SqlRun::new_row(SqlTable& t, const std::vector<int>& columns, const std::vector<std::optional<Expr>>& values, bool step_taken,
                    sql::Insert::Overriding overriding) {
  if (!step_taken) {  // a later row's step (the first row's is the statement's first: it writes the table and its sequences)
    if (auto refused = c_.begin_statement(OpDesc{"sql_insert", on(t.object, Access::write), 0, false})) throw Raised{*refused};
  }
  table_ = nullptr;
  row_ = nullptr;
  std::vector<std::optional<Value>> given(t.def.columns.size());
  for (std::size_t k = 0; k < values.size(); ++k) {
    if (values[k]) given[static_cast<std::size_t>(columns[k])] = sql::evaluate(*values[k], *this);
  }
  Row row;
  const bool not_null_now = !has_before_row(t, "INSERT");  // else after the BEFORE INSERT triggers
  for (std::size_t i = 0; i < t.def.columns.size(); ++i) {
    const sql::ColumnDef& c = t.def.columns[i];
    Value v;
    if (given[i] && c.serial && overriding == sql::Insert::Overriding::user) given[i].reset();
    if (given[i] && c.generated != nullptr) {
      throw SqlError("428C9", fmt::format("cannot insert a non-DEFAULT value into column \"{}\"", c.name));
    }
    if (c.generated != nullptr) continue;  // computed below, from the others
    if (given[i] && c.identity_always && overriding != sql::Insert::Overriding::system) {
      throw SqlError("428C9", fmt::format("cannot insert a non-DEFAULT value into column \"{}\"", c.name));
    }
    v = given[i] ? *given[i] : column_default(t, i);
    const Value stored_value = assigned(v, c, t.def.table, not_null_now);
    if (!stored_value.is_null()) row[c.name] = stored_value.text_output();
  }
  return row;  // (its generated columns and constraints after its BEFORE triggers)
}

Value SqlRun::column_default(SqlTable& t, std::size_t i) {
  const sql::ColumnDef& c = t.def.columns[i];
  if (c.serial) {
    // The table's sequences are its object's: an UPDATE ... SET c = DEFAULT writes it too.
    if (s_.in_actor()) s_.also_touch(t.object);
    const std::int64_t next = t.sequences[i].next(c.sequence_increment);
    c_.currvals_[fmt::format("{}_{}_seq", t.def.table, c.name)] = next;  // the session's currval of it
    return Value::integer(next, c.type);
  }
  if (c.default_value) return sql::evaluate(*c.default_value, *this);
  return Value::null(c.type);
}

std::string SqlRun::key_text(const SqlTable& t, const Row& row) {
  std::string key;
  for (int i : t.key) {
    const auto it = row.find(t.def.columns[static_cast<std::size_t>(i)].name);
    key += it == row.end() ? std::string("\x01null") : it->second;
    key += '\x1f';
  }
  return key;
}

std::int64_t SqlRun::id_of(SqlTable& t, const Row& row) {
  if (t.key.empty()) return t.next_id++;
  return id_of_key(t, key_text(t, row));
}

std::int64_t SqlRun::id_of_key(SqlTable& t, std::string key) {
  if (const auto it = t.ids.find(key); it != t.ids.end()) return it->second;
  t.ids.emplace(std::move(key), t.next_id);
  return t.next_id++;
}

Result<std::int64_t> SqlRun::insert_one(SqlTable& t, const sql::Insert& ins, Row row, Rows& out) {
  const std::string name = t.def.table;
  const std::int64_t id = id_of(t, row);
  const ObjectId obj = server_.row_object(name, id);
  if (s_.in_actor()) s_.also_touch(obj);
  // A plain INSERT puts its tuple in the heap before a unique check waits; ON CONFLICT after.
  const std::uint64_t early = ins.on_conflict == sql::Insert::OnConflict::none ? server_.new_tuple(name) : 0;
  if (early != 0) SqlSsi::heap_insert(*this, t);  // heap_insert, before the index entries' checks
  RowState& r = server_.row(name, id);
  // The unique check: a transaction in progress that wrote this key (inserted, updated, deleted
  // its row) is waited for, then it looks again (a committed delete frees the key).
  // ON CONFLICT without the primary key among its arbiters checks them first: a writer of the
  // key is waited for only when no arbiter conflicts (ExecCheckIndexConstraints, then insert).
  const bool arbiters_first = ins.on_conflict != sql::Insert::OnConflict::none && !conflict_pk_arbiter(ins, t) && !t.unique.empty();
  for (;;) {
    std::optional<std::int64_t> conflict;  // the row whose arbiter key this one repeats
    bool waited = false;
    if (arbiters_first) {
      std::int64_t other = 0;
      const auto repeated = unique_conflict(t, id, row, nullptr, &waited, &other);
      if (!repeated.ok()) return repeated.error();
      if (waited) continue;
      if (repeated.value() != nullptr && conflict_arbiter(ins, t, *repeated.value())) conflict = other;
    }
    if (Status w = conflict ? Status{} : wait_for_row_writers(name, id, obj); !w.ok()) {
      return w.error();
    }
    // The unique check sees the newest version, whatever a REPEATABLE READ snapshot sees. A
    // conflict on a key that is not an arbiter is 23505, whatever the action.
    const std::optional<Row> newest = c_.newest(name, id);
    if (!conflict && ins.on_conflict != sql::Insert::OnConflict::none && (newest || !t.unique.empty())) {
      if (newest && (conflict_pk_arbiter(ins, t) || conflict_repeats_arbiter(ins, t, row, *newest))) {
        conflict = id;
      } else if (!t.unique.empty()) {
        std::int64_t other = 0;
        const auto repeated = unique_conflict(t, id, row, nullptr, &waited, &other);
        if (!repeated.ok()) return repeated.error();
        if (waited) continue;  // someone may have written this primary key meanwhile: all again
        if (repeated.value() != nullptr && conflict_arbiter(ins, t, *repeated.value())) {
          conflict = other;
        } else if (repeated.value() != nullptr && !newest) {
          return fail(Error{std::string(sqlstate::kUniqueViolation),
                            fmt::format("duplicate key value violates unique constraint \"{}\"", repeated.value()->name)});
        }
      }
    }
    if (conflict) {
      const RowState& held = server_.row(name, *conflict);
      const bool newer = c_.snapshot_ && held.pending.count(c_.pid_) == 0 && held.committed_seq > *c_.snapshot_;
      if (!c_.visible(name, *conflict).has_value() || newer) {
        // ON CONFLICT under REPEATABLE READ on a row its snapshot does not see, or whose
        // conflicting version (the newest) it does not see (ExecCheckTIDVisible).
        return fail(Error{std::string(sqlstate::kSerializationFailure), "could not serialize access due to concurrent update"});
      }
      if (ins.on_conflict == sql::Insert::OnConflict::nothing) return 0;
      const Result<std::int64_t> updated = conflict_update(t, ins, *conflict, row, out);
      if (updated.ok() && updated.value() == kConflictGone) continue;
      return updated;
    }
    if (newest) {
      if (early == 0) SqlSsi::heap_insert(*this, t);  // ON CONFLICT's speculative insertion
      SqlSsi::index_insert(*this, t, row, true, false);  // the leaf's check comes before 23505
      return fail(Error{std::string(sqlstate::kUniqueViolation),
                        fmt::format("duplicate key value violates unique constraint \"{}\"", primary_key_name(&t, name))});
    }
    // A key whose row this REPEATABLE READ snapshot still sees, deleted since by another: the
    // server's heap holds both tuples, later statements see both; the simulation one (notes).
    if (c_.snapshot_ && r.pending.count(c_.pid_) == 0 && r.version_at(*c_.snapshot_).has_value()) {
      throw SqlError("0A000", "an INSERT of a key whose deleted row this REPEATABLE READ snapshot still sees is not in lockstep's SQL subset (docs/sql.md)");
    }
    // A plain INSERT's row is in the table, for the primary key's check of others, while its
    // other unique keys are checked (heap_insert, then each index in turn: a wait there
    // holds the key it inserted): a conflict then fails the statement, which drops it.
    if (early == 0) SqlSsi::heap_insert(*this, t);  // ON CONFLICT's speculative insertion
    SqlSsi::index_insert(*this, t, row, true, early == 0);
    if (!t.unique.empty() && ins.on_conflict == sql::Insert::OnConflict::none) return insert_then_check(t, ins, id, std::move(row), out, early);
    break;
  }
  if (Status locked = lock_new_row(name, id, obj); !locked.ok()) return locked.error();
  if (s_.in_actor()) s_.also_touch(obj);  // after a wait, the step that writes the row is the wait's
  if (s_.logging()) s_.add_detail(row_text(row));
  returning(t, ins.returning, row, out);
  queue_after_row(t, "INSERT", nullptr, &row);
  const std::uint64_t position = early != 0 ? early : server_.new_tuple(name);
  note_own_write(t.def.table, id);
  put_new_version(r, std::move(row), position);
  c_.wrote(name, id);
  upserted_.push_back(id);
  return 1;
}

Status SqlRun::lock_new_row(const std::string& name, std::int64_t id, ObjectId obj) {
  const AdvisoryKey key = server_.row_key(name, id);
  if (server_.row_locks().try_request(c_.pid_, key, Mode::exclusive, Scope::transaction)) return {};
  // A session granted the lock of this key's deleted version has not run since: it lets
  // the lock go as it finds the row gone (forget_gone_row), and the insert takes it then.
  auto waiter = server_.row_locks().request(c_.pid_, key, Mode::exclusive, Scope::transaction);
  LOCKSTEP_INVARIANT(waiter != nullptr, "a row lock held by another session makes a request wait");
  c_.note_queued(server_.row_locks(), key, Mode::exclusive);
  return c_.wait_for(server_.row_locks(), waiter, obj, Access::acquire, "row_lock_wait",
                     fmt::format("the row lock of {}#{} (a deleted version's)", name, id));
}

void compute_generated(const SqlTable& t, Row& row) {
  for (const sql::ColumnDef& c : t.def.columns) {
    if (c.generated == nullptr) continue;
    StoredRowContext context(t, row);
    const Value v = assigned(sql::evaluate(*c.generated, context), c, t.def.table);
    if (v.is_null()) {
      row.erase(c.name);
    } else {
      row[c.name] = v.text_output();
    }
  }
}

void check_constraints(const SqlTable& t, const Row& row, sql::EvalContext* queries) {
  if (t.def.checks.empty()) return;
  // The server evaluates them in the order of their names (CheckConstraintFetch sorts them).
  std::vector<const sql::CheckConstraint*> checks;
  for (const sql::CheckConstraint& k : t.def.checks) checks.push_back(&k);
  std::sort(checks.begin(), checks.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
  for (const sql::CheckConstraint* k : checks) {
    StoredRowContext context(t, row, {}, queries);
    const Value v = sql::evaluate(*k->expr, context);
    if (!v.is_null() && !sql::is_true(v, "CHECK")) {
      throw SqlError("23514", fmt::format("new row for relation \"{}\" violates check constraint \"{}\"", t.def.table, k->name));
    }
  }
}

void SqlRun::put_new_version(RowState& r, Row row, std::uint64_t position) {
  RowState::Written version{std::move(row), {position, position}};
  if (const auto own = r.pending.find(c_.pid_); own != r.pending.end()) {
    if (!own->second.version && r.committed) r.reinserted_by = c_.pid_;
    version.subtransaction = own->second.subtransaction;  // its deletion's: what others wait on
    version.moved = own->second.moved;  // the committed tuple left by a key change, not deleted
    version.earlier = std::move(own->second.earlier);
  }
  r.pending[c_.pid_] = std::move(version);
}

bool SqlRun::key_changes(SqlTable& t, const Row& row, const std::vector<sql::Assignment>& set, std::string_view alias) {
  const Saved saved = save();
  table_ = &t;
  alias_ = alias;
  row_ = &row;
  bool changes = false;
  for (const sql::Assignment& a : set) {
    const int i = t.column(a.column);
    if (changes || !t.is_key_column(i)) continue;
    try {
      const Value v = assigned(sql::evaluate(a.value, *this), t.def.columns[static_cast<std::size_t>(i)], t.def.table);
      const auto old = row.find(a.column);
      changes = v.is_null() ? old != row.end() : old == row.end() || old->second != v.text_output();
    } catch (const SqlError&) {
      changes = true;  // the statement fails on this row anyway: the stronger lock
    }
  }
  restore(saved);
  return changes;
}

Mode SqlRun::update_mode(const SqlTable& t, const std::vector<sql::Assignment>& set) {
  for (const sql::Assignment& a : set) {
    if (t.is_key_column(t.column(a.column))) return Mode::exclusive;
  }
  return Mode::no_key_update;
}

Row SqlRun::apply_set(SqlTable& t, const Row& row, const std::vector<sql::Assignment>& set) {
  Row updated = row;
  table_ = &t;
  row_ = &row;
  for (const sql::Assignment& a : set) {
    const int i = t.column(a.column);
    if (i < 0) throw SqlError("42703", fmt::format("column \"{}\" of relation \"{}\" does not exist", a.column, t.def.table));
    const sql::ColumnDef& c = t.def.columns[static_cast<std::size_t>(i)];
    if (c.generated != nullptr) {
      if (a.to_default) continue;  // computed below, from the others
      throw SqlError("428C9", fmt::format("column \"{}\" can only be updated to DEFAULT", a.column));
    }
    if (c.identity_always && !a.to_default) {
      throw SqlError("428C9", fmt::format("column \"{}\" can only be updated to DEFAULT", a.column));
    }
    Value v = assigned(a.to_default ? column_default(t, static_cast<std::size_t>(i)) : sql::evaluate(a.value, *this), c, t.def.table,
                       !has_before_row(t, "UPDATE"));
    if (v.is_null()) {
      updated.erase(a.column);
    } else {
      updated[a.column] = std::move(v).text_output();
    }
  }
  if (!has_before_row(t, "UPDATE")) {  // else after the BEFORE UPDATE triggers (write_change)
    compute_generated(t, updated);
    check_constraints(t, updated, this);
  }
  row_ = nullptr;
  return updated;
}

namespace {

bool write_column_changed(const Row& before, const Row& after, const std::string& c) {
  const auto b = before.find(c), a = after.find(c);
  return (b == before.end()) != (a == after.end()) || (b != before.end() && b->second != a->second);
}

bool write_named_column_changed(const sql::Expr& e, const Row& before, const Row& after) {
  if (e.kind == sql::Expr::Kind::column && write_column_changed(before, after, e.name)) return true;
  return std::any_of(e.args.begin(), e.args.end(), [&](const sql::Expr& a) { return write_named_column_changed(a, before, after); });
}

// Whether an UPDATE from `before` to `after` changes a column an index reads (a key's, a plain
// index's, or one an index's predicate names): then it is no heap-only tuple
// (HeapDetermineColumnsInfo's HOT-blocking columns).
bool write_changes_indexed_column(const SqlTable& t, const Row& before, const Row& after) {
  auto changed = [&](int k) { return k >= 0 && write_column_changed(before, after, t.def.columns[static_cast<std::size_t>(k)].name); };
  if (std::any_of(t.key.begin(), t.key.end(), changed)) return true;
  const auto any_changed = [&](const std::vector<std::string>& cs) {
    return std::any_of(cs.begin(), cs.end(), [&](const std::string& c) { return write_column_changed(before, after, c); });
  };
  if (any_changed(t.def.included)) return true;
  if (std::any_of(t.indexes.begin(), t.indexes.end(), [&](const SqlTable::PlainIndex& x) { return any_changed(x.reads); })) return true;
  for (const SqlTable::UniqueKey& u : t.unique) {
    if (std::any_of(u.columns.begin(), u.columns.end(), changed)) return true;
    if (u.where && write_named_column_changed(*u.where, before, after)) return true;
    for (const auto& e : u.expressions) {
      if (e && write_named_column_changed(*e, before, after)) return true;
    }
  }
  return false;
}

}  // namespace

void SqlRun::write_version(SqlTable& t, std::int64_t id, std::optional<Row> version, const std::vector<sql::Target>& ret, Rows& out,
                           std::uint64_t position) {
  const std::string& name = t.def.table;
  // heap_update, heap_delete: the tuple, its page, the table (a key change's new slot: done at its old one)
  if (position == 0) SqlSsi::heap_write(*this, t, id);
  note_own_write(name, id);
  // heap_update places the new tuple before its index entries are checked: a unique check
  // that waits does so with the tuple in place.
  if (version && position == 0) position = server_.new_tuple(name);  // a deletion stays where it is
  if (version && !t.unique.empty()) return write_then_check(t, id, std::move(*version), ret, out, position);
  if (!t.unique.empty() && s_.in_actor()) {  // a deletion's step: the unique checks read its row
    s_.also_touch(server_.row_object(name, id));
    s_.also_touch(t.object);
  }
  if (version) {
    returning(t, ret, *version, out);
    if (s_.logging()) s_.add_detail("set " + row_text(version));
  }
  const std::optional<Row>& before = c_.newest(name, id);
  const bool hot = version && before && !write_changes_indexed_column(t, *before, *version);
  const bool updated = version.has_value();
  server_.row(name, id).write(c_.pid_, std::move(version), c_.holds_for_update(name, id), position, hot);
  c_.wrote(name, id);
  if (updated && !hot) SqlSsi::index_insert(*this, t, *server_.row(name, id).pending.at(c_.pid_).version, true, false);
}

// An UPDATE's new version where the table has unique keys: heap_update writes it, then each
// index's entry is checked in turn (a wait there holds the tuple in place, so an INSERT of its
// primary key waits for this transaction); its other unique entries are not in while it waits.
void SqlRun::write_then_check(SqlTable& t, std::int64_t id, Row version, const std::vector<sql::Target>& ret, Rows& out,
                              std::uint64_t position) {
  const std::string& name = t.def.table;
  const ObjectId obj = server_.row_object(name, id);
  if (s_.in_actor()) {  // the check reads every row's versions, the write changes one
    s_.also_touch(obj);
    s_.also_touch(t.object);
  }
  std::optional<Row> before = c_.newest(name, id);
  const bool hot = before && !write_changes_indexed_column(t, *before, version);
  server_.row(name, id).write(c_.pid_, std::move(version), c_.holds_for_update(name, id), position, hot);
  c_.wrote(name, id);
  server_.row(name, id).pending.at(c_.pid_).checking_unique = true;
  const Row& written = *server_.row(name, id).pending.at(c_.pid_).version;
  const auto repeated = unique_conflict(t, id, written, before ? &*before : nullptr, nullptr);
  if (!repeated.ok()) throw Raised{repeated.error()};
  if (!hot) SqlSsi::index_insert(*this, t, written, true, true);  // a new tuple's entries, in every index
  if (repeated.value() != nullptr) {
    throw Raised{Error{std::string(sqlstate::kUniqueViolation),
                       fmt::format("duplicate key value violates unique constraint \"{}\"", repeated.value()->name)}};
  }
  RowState::Written& mine = server_.row(name, id).pending.at(c_.pid_);
  mine.checking_unique = false;
  if (s_.in_actor()) {  // after a wait, the step that writes is the wait's
    s_.also_touch(obj);
    s_.also_touch(t.object);
  }
  returning(t, ret, *mine.version, out);
  if (s_.logging()) s_.add_detail("set " + row_text(mine.version));
}

void SqlRun::returning(SqlTable& t, const std::vector<sql::Target>& ret, const Row& row, Rows& out) {
  if (ret.empty()) return;
  const Saved saved = save();
  table_ = &t;
  row_ = &row;
  std::vector<Value> returned;
  returned.reserve(ret.size());
  for (const sql::Target& target : ret) {
    if (!target.star) {
      returned.push_back(sql::evaluate(target.expr, *this));
      continue;
    }
    if (stars(target, t)) {
      for (std::size_t i = 0; i < t.def.columns.size(); ++i) returned.push_back(stored(t, row, static_cast<int>(i)));
    }
    if (join_.row != nullptr && stars(target, *join_.table, join_.alias)) {
      for (std::size_t i = 0; i < join_.table->def.columns.size(); ++i) returned.push_back(stored(*join_.table, *join_.row, static_cast<int>(i)));
    }
  }
  restore(saved);
  std::vector<std::optional<std::string>>& values = out.rows.emplace_back();
  values.reserve(returned.size());
  for (const Value& v : returned) values.push_back(output(v));
  if (returned_ != nullptr) returned_->push_back(std::move(returned));  // a data-modifying WITH query's rows
}

template <typename Body>
Result<Rows> SqlRun::change_rows(const Body& b, bool remove) {
  std::optional<SimConnection::Statement> guard;  // a data-modifying WITH query runs inside its statement's
  if (!nested_) guard.emplace(c_);
  if (!b.with.empty()) check_read_only();  // before a WITH query's locks or writes
  declare_ctes(b.with);  // those that lock rows take their steps now
  SqlTable* t = table(b.table);
  if (const Derived* d = derived_of(t)) {
    throw SqlError("42809", d->sequence ? fmt::format("cannot change sequence \"{}\"", b.table) : fmt::format("relation \"{}\" is a WITH query, not a table", b.table));
  }
  SqlTable* from = b.from_join ? from_relation(*b.from_join) : b.from.empty() ? nullptr : table(b.from);
  join_ = Join{from, b.from_alias, nullptr};
  {
    const Joined scope(*this, join_);  // the joined relation's columns are names of the statement
    check_once(*t, &b, [&] {
      if (b.where) check_columns(*b.where, *t, b.alias);
      check_columns(b.returning, *t, b.alias);
      for (const sql::Assignment& a : set_of(b)) check_columns(a.value, *t, b.alias);
    });
  }
  check_read_only();
  prepare_locking_subqueries(b.where);
  // A statement with subqueries or a join scans first: its InitPlans and the joined rows are
  // read there, on its snapshot.
  pinned_ = st_.has_subquery || from != nullptr || on_snapshot() ? std::nullopt : pinned_row(*t, b.alias, b.where);
  // A pinned statement's one row needs no allocation.
  boost::container::small_vector<std::pair<std::int64_t, Row>, 1> candidates;
  const bool filter_each = !pinned_ && from == nullptr && b.where && sql_filter_steps_per_row(*b.where) &&
                           !sql_scan_has_index_qual(*t, b.alias, *b.where, function_params_);
  std::vector<Row> joined;  // per candidate, the joined relation's row (UPDATE ... FROM)
  if (pinned_) {
    // One row: its lock is the first step, taken only when the row matches (update_row_if's way).
    statement_start_ = c_.statement_time();
    started_ = true;
    candidates.emplace_back(*pinned_, Row{});
  } else {
    if (auto refused = begin(remove ? "sql_delete_scan" : "sql_update_scan", on(t->object, Access::read))) return *refused;
    if (st_.has_subquery || from != nullptr) take_statement_snapshot();
    if (st_.has_subquery) {
      for (const sql::Assignment& a : set_of(b)) compute_initplans(a.value);
      if (b.where) compute_initplans(*b.where);
      compute_initplans(b.returning);
    }
    if (from != nullptr) {
      for (auto& [id, target, row] : join_candidates(*t, b.alias, *from, b.from_alias, b.where, b.from_join.get(), set_of(b), b.returning)) {
        candidates.emplace_back(id, std::move(target));
        joined.push_back(std::move(row));
      }
    } else if (filter_each) {
      // ModifyTable pulls a row from the scan and writes it, waiting for its lock, before the
      // Filter runs for the next: WHERE's lock calls interleave with the rows' writes, so every
      // row is a candidate here, filtered one at a time below.
      auto scanned = scan(t, b.alias, std::nullopt);  // (a sequential scan: filter_each's)
      candidates.assign(std::make_move_iterator(scanned.begin()), std::make_move_iterator(scanned.end()));
    } else {
      auto scanned = scan(t, b.alias, b.where);
      candidates.assign(std::make_move_iterator(scanned.begin()), std::make_move_iterator(scanned.end()));
    }
    if (!b.returning.empty() && nested_ && enclosing_ != nullptr) {
      unordered_returning_ = unplanned_order_;  // its statement's readers judge whether the order shows (SqlRun::scan)
    } else if (!b.returning.empty()) {
      refuse_unplanned_order(unplanned_order_);
    }
  }
  Rows out;
  out.columns = column_names(b.returning, t, b.alias);
  std::int64_t changed = 0;
  const std::string& name = t->def.table;
  KeyChanges changes;
  for (std::size_t k = 0; k < candidates.size(); ++k) {
    std::int64_t id = candidates[k].first;
    if (filter_each && !passes(t, b.alias, b.where, id, candidates[k].second)) continue;
    join_.row = from != nullptr ? &joined[k] : nullptr;
    const Joined with(*this, join_);  // the joined row, as it was, through the re-check
    std::optional<Row> projected;
    if (!remove && !pinned_) {
      // The scanned version's new values are computed before its lock is asked for, as PostgreSQL's plan projects
      // them (and ExecUpdate checks NOT NULL) before heap_update: an error there does not wait for the row. They are
      // the row's new version unless the row changed meanwhile (EvalPlanQual projects again: a second nextval).
      const Saved saved = save();
      alias_ = b.alias;
      projected = apply_set(*t, candidates[k].second, set_of(b));
      restore(saved);
    }
    std::optional<std::uint64_t> matched_at;  // the step in which `wanted` found the row matching
    struct Check {  // what `wanted` needs, behind one pointer: the function keeps it without allocating
      SqlRun* run; SqlTable* t;                   // NOLINT(readability-isolate-declaration)
      const std::string* alias; const Expr* where;  // NOLINT(readability-isolate-declaration)
      std::int64_t id; std::optional<std::uint64_t>* matched_at;  // NOLINT(readability-isolate-declaration)
      const std::vector<sql::Assignment>* set;  // an UPDATE's (nullptr: a DELETE)
      Row* read;                                // the version the lock step read
      std::optional<Row>* projected;            // ... and its new values
    } check{this, t, &b.alias, b.where ? &*b.where : nullptr, id, &matched_at, remove ? nullptr : &set_of(b), &candidates[k].second,
            &projected};
    std::function<bool()> wanted;
    if (pinned_ && b.where) {
      // A pinned UPDATE projects the row its lock step reads before asking for the lock, as
      // the scanning one does: NOT NULL, a CHECK or an error computing SET fails there
      // without waiting for the row.
      wanted = [c = &check] {
        const std::optional<Row>& current = c->run->c_.visible(c->t->def.table, c->id);
        const bool ok = current.has_value() && c->run->still_matches(c->t, *c->alias, c->id, *current, *c->where);
        if (ok) *c->matched_at = c->run->s_.step_count();
        if (ok && c->set != nullptr) {
          *c->read = *current;
          const Saved saved = c->run->save();
          c->run->alias_ = *c->alias;
          *c->projected = c->run->apply_set(*c->t, *current, *c->set);
          c->run->restore(saved);
        }
        return ok;
      };
    }
    const Mode mode = remove ? Mode::exclusive : update_mode(*t, set_of(b));
    // An UPDATE that assigns a key column takes FOR UPDATE only when the value changes
    // (heap_update compares the values), decided on the row its lock step sees.
    std::function<Mode()> mode_now;  // (a BEFORE UPDATE trigger's lock: by SET's columns, ExecUpdateLockMode)
    if (mode == Mode::exclusive && !remove && !has_before_row(*t, "UPDATE")) {
      mode_now = [this, t, &b, &id] {  // `id` as it is when the lock is asked for (after a move, the followed one)
        const std::optional<Row>& current = c_.visible(t->def.table, id);
        return current && key_changes(*t, *current, set_of(b), b.alias) ? Mode::exclusive : Mode::no_key_update;
      };
    }
    const SimConnection::UpdateHeap heap(c_, remove ? nullptr : t);  // (OpDesc::may_write)
    Result<bool> got = c_.lock_row(name, id, false, Stmt::update_row_if, mode, wanted, mode_now);
    if (!got.ok()) return got.error();
    // A row a key-changing UPDATE moved: EvalPlanQual follows it to its newest version and
    // locks it, even when the re-check then fails (a pinned one: when its first look saw it).
    for (std::int64_t next = pinned_ && !matched_at ? 0 : followed(name, id); next != 0; next = followed(name, id)) {
      if (got.value()) forget_gone_row(name, id);
      id = next;
      got = c_.lock_row(name, id, false, Stmt::update_row_if, mode, nullptr, mode_now);
      if (!got.ok()) return got.error();
    }
    std::optional<Row> newest = c_.visible(name, id);
    if (!got.value()) continue;
    if (!newest) {
      forget_gone_row(name, id);
      continue;
    }
    // Checked again unless the lock came in the very step that checked it (no wait between).
    const bool checked = matched_at && *matched_at == s_.step_count();
    const bool as_read = sql_row_as_read(server_.row(name, id), snapshot_seq(), c_.pid_);  // no EvalPlanQual
    std::optional<Joined> retried;  // EvalPlanQual failed with the first joined row: ModifyTable goes on to the next
    if (b.where && !checked && !as_read && !still_matches(t, b.alias, id, *newest, *b.where)) {
      const Row* other = from != nullptr ? other_joined_match(candidates[k].first, *t, b.alias, id, *newest, *b.where) : nullptr;
      if (other == nullptr) continue;  // (one this session changed in the meantime was not scanned)
      retried.emplace(*this, Join{from, b.from_alias, other});
    }
    const bool unchanged = projected && *newest == candidates[k].second;
    if (!write_change(*t, id, *newest, remove ? nullptr : &set_of(b), b.returning, b.alias, out, changes, unchanged ? &*projected : nullptr)) continue;
    ++changed;
    if (after_row_) after_row_();
  }
  check_keys(*t, changes);
  out.tag = (remove ? "DELETE " : "UPDATE ") + std::to_string(changed);
  return done(std::move(out));
}

bool SqlRun::write_change(SqlTable& t, std::int64_t id, const Row& newest, const std::vector<sql::Assignment>* set,
                          const std::vector<sql::Target>& ret, std::string_view alias, Rows& out, KeyChanges& changes,
                          const Row* projected) {
  const bool keyed = !t.foreign_keys.empty() || !t.referenced_by.empty();
  const bool ours = keyed && server_.row(t.def.table, id).pending.count(c_.pid_) != 0;
  alias_ = alias;
  if (set == nullptr) {
    if (!before_row(t, "DELETE", &newest, nullptr)) return false;
    returning(t, ret, newest, out);
    queue_after_row(t, "DELETE", &newest, nullptr);
    if (s_.logging()) s_.add_detail("deleted " + row_text(newest));
    if (keyed) changes.push_back({newest, std::nullopt, ours});
    write_version(t, id, std::nullopt, {}, out);
    return true;
  }
  Row updated = projected != nullptr ? *projected : apply_set(t, newest, *set);
  if (has_before_row(t, "UPDATE")) {
    if (!before_row(t, "UPDATE", &newest, &updated, set)) return false;
    compute_generated(t, updated);
    check_not_null(t, updated);
    check_constraints(t, updated, this);
  }
  queue_after_row(t, "UPDATE", &newest, &updated, set);
  if (keyed) changes.push_back({newest, updated, ours});
  if (changes_primary_key(t, newest, updated)) {
    move_row(t, id, std::move(updated), ret, out);
  } else {
    write_version(t, id, std::move(updated), ret, out);
  }
  return true;
}

const std::vector<sql::Assignment>& SqlRun::set_of(const sql::Delete&) {
  static const std::vector<sql::Assignment> none;
  return none;
}

Result<Rows> SqlRun::statement(const sql::Update& u) { return change_rows(u, false); }

Result<Rows> SqlRun::statement(const sql::Delete& d) { return change_rows(d, true); }

}  // namespace lockstep::sim::pg
