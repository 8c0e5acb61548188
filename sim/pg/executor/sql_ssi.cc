// sim/pg/executor/sql_ssi.cc: a SERIALIZABLE transaction's statements and ends against serializable
// snapshot isolation (sim/pg/executor/sql_ssi.h, sim/pg/lock/ssi.h; the rules: docs/postgres-ssi.md).
#include "lockstep/sim/pg/executor/sql_ssi.h"

#include <algorithm>

namespace lockstep::sim::pg {
namespace {

using Xact = Ssi::Xact;

bool ssi_indexed(const SqlTable& t) { return !t.key.empty() || !t.unique.empty() || !t.indexes.empty(); }

// A committed version of a row as a scan meets it: the commit that made it (or deleted the
// row: `tuple` false), and where its tuple is.
struct SsiVersion {
  std::uint64_t seq;
  bool tuple;
  HeapPlace place;
};

// The index whose order sql_limit_reads_index_order's ORDER BY column `column` is.
SingleColumnIndex ssi_order_index(const SqlTable& t, const Expr& column) {
  return column.kind == Expr::Kind::column ? sql_single_column_index(t, t.column(column.name)) : SingleColumnIndex{};
}

// Whether every version of each of t's rows that a snapshot may still meet (committed, older,
// written by a running transaction and replaced since) has the same values in u's columns:
// then the index's entries point at the rows' HOT chains as the primary key's do.
bool ssi_unique_values_kept(Server& server, const SqlTable& t, const SqlTable::UniqueKey& u) {
  bool kept = true;
  const Row* first = nullptr;
  auto same = [&](const Row& row) {
    if (first == nullptr) {
      first = &row;
      return;
    }
    for (const int c : u.columns) {
      const std::string& name = t.def.columns[static_cast<std::size_t>(c)].name;
      const auto a = first->find(name), b = row.find(name);
      const bool a_null = a == first->end(), b_null = b == row.end();
      kept = kept && a_null == b_null && (a_null || a->second == b->second);
    }
  };
  server.each_row(t.def.table, [&](std::int64_t, RowState& r) {
    first = nullptr;
    if (r.committed) same(*r.committed);
    for (const RowState::Older& o : r.older) {
      if (o.version) same(*o.version);
    }
    for (const auto& [pid, w] : r.pending) {
      if (w.version) same(*w.version);
      for (const RowState::Written::Earlier& e : w.earlier) same(e.version);
    }
  });
  return kept;
}


// `key IN (SELECT c FROM u WHERE ... c = v ...)`, a conjunct of WHERE with t's one-column
// primary key and a constant or parameter v: the planner pulls it up as a semi join whose
// equivalence class {key, c, v} gives t's scan the index cond key = v. Returns (key, v), or nulls.
std::pair<const Expr*, const Expr*> ssi_semi_join_pin(const SqlTable& t, const std::string& alias, const Expr& where) {
  if (t.key.size() != 1) return {};
  const std::string& key = t.def.columns[static_cast<std::size_t>(t.key.front())].name;
  auto names = [](const Expr& e, const std::string& column, const std::string& a, const std::string& table) {
    return e.kind == Expr::Kind::column && e.name == column && (e.qualifier.empty() || e.qualifier == a || e.qualifier == table);
  };
  auto pin = [&](const Expr& e) -> const Expr* {
    if (e.kind != Expr::Kind::in_subquery || e.negated || !e.select || !names(e.args.at(0), key, alias, t.def.table)) return nullptr;
    const sql::Select& sub = *e.select;
    if (sub.targets.size() != 1 || sub.targets.front().star || sub.targets.front().expr.kind != Expr::Kind::column || sub.table.empty() ||
        !sub.from.empty() || !sub.with.empty() || sub.aggregate || !sub.group_by.empty() || sub.limit || sub.offset || sub.set_op || sub.distinct ||
        !sub.where) {
      return nullptr;
    }
    const std::string& column = sub.targets.front().expr.name;
    const auto value = [](const Expr& v) { return v.kind == Expr::Kind::constant || v.kind == Expr::Kind::param; };
    const auto equality = [&](const Expr& c) -> const Expr* {
      if (c.kind != Expr::Kind::op || c.name != "=" || c.args.size() != 2) return nullptr;
      if (names(c.args[0], column, sub.alias, sub.table) && value(c.args[1])) return &c.args[1];
      if (names(c.args[1], column, sub.alias, sub.table) && value(c.args[0])) return &c.args[0];
      return nullptr;
    };
    if (sub.where->kind != Expr::Kind::and_) return equality(*sub.where);
    for (const Expr& c : sub.where->args) {
      if (const Expr* v = equality(c)) return v;
    }
    return nullptr;
  };
  if (where.kind != Expr::Kind::and_) {
    const Expr* v = pin(where);
    return v != nullptr ? std::pair{&where.args.at(0), v} : std::pair<const Expr*, const Expr*>{};
  }
  for (const Expr& c : where.args) {
    if (const Expr* v = pin(c)) return {&c.args.at(0), v};
  }
  return {};
}

}  // namespace

// ---- The connection: the sxact's life.

bool SimConnection::ssi_tracking() {
  if (ssi_ == Ssi::kNone) return false;
  if (server_.ssi().tracked(ssi_)) return true;
  ssi_ = session_.ssi = Ssi::kNone;  // a READ ONLY one found safe released itself
  return false;
}

std::optional<Error> SimConnection::begin_ssi() {
  Ssi& ssi = server_.ssi();
  if (s_.in_actor()) s_.also_touch(server_.ssi_object());
  const std::string refusal = ssi.begin_refusal();
  if (!refusal.empty()) {
    return Error{"0A000", fmt::format("a SERIALIZABLE transaction beside another that {} (serializable snapshot isolation's SIREAD "
                                      "locks there are not modelled) is not in lockstep's SQL subset (docs/sql.md)",
                                      refusal)};
  }
  ssi_ = session_.ssi = ssi.begin(pid_, read_only_);
  if (ssi_ != Ssi::kNone && implicit_block_) {
    if (auto e = ssi_unsupported("runs in a string's implicit transaction block")) return e;
  }
  return std::nullopt;
}

std::optional<Error> SimConnection::ssi_unsupported(std::string what) {
  if (!ssi_tracking()) return std::nullopt;
  Ssi& ssi = server_.ssi();
  if (s_.in_actor()) s_.also_touch(server_.ssi_object());
  if (ssi.beside_others(ssi_)) {
    return Error{"0A000", fmt::format("a SERIALIZABLE transaction that {} beside another (serializable snapshot isolation's SIREAD "
                                      "locks there are not modelled) is not in lockstep's SQL subset (docs/sql.md)",
                                      what)};
  }
  ssi.note_imprecise(ssi_, std::move(what));
  return std::nullopt;
}

std::optional<Error> SimConnection::pre_commit_ssi() {
  if (!ssi_tracking()) return std::nullopt;
  if (s_.in_actor()) s_.also_touch(server_.ssi_object());
  return server_.ssi().pre_commit(ssi_);
}

void SimConnection::end_ssi(bool commit) {
  if (ssi_ == Ssi::kNone) return;
  if (s_.in_actor()) s_.also_touch(server_.ssi_object());
  if (session_.ssi != Ssi::kNone) server_.ssi().release(ssi_, commit);  // else a termination released it
  ssi_ = session_.ssi = Ssi::kNone;
}

void SimConnection::ssi_note_xid() {
  if (!ssi_tracking()) return;
  if (s_.in_actor()) s_.also_touch(server_.ssi_object());
  server_.ssi().assign_xid(ssi_);
}

// ---- Reads.

void SqlSsi::plan_scan(SqlRun& run, SqlTable& t, const std::string& alias, const std::optional<Expr>& where) {
  if (!run.c_.ssi_tracking() || run.derived_of(&t) != nullptr || t.joined || run.ssi_grain_ != nullptr) return;  // (plan_select's)
  std::vector<const Expr*> quals = where ? sql_primary_key_quals(t, alias, *where, run.function_params_) : std::vector<const Expr*>{};
  // Without primary key quals: those of the one unique index on columns (not partial) that
  // has some. Its rows are judged on one version of their slot as the primary key's are,
  // which holds while no version of a slot the scan meets has other values in its columns.
  const SqlTable::UniqueKey* unique = nullptr;
  bool several = false;
  for (const SqlTable::UniqueKey& u : t.unique) {
    if (!where || !quals.empty() || u.where || !u.expressions.empty()) continue;
    std::vector<const Expr*> q = sql_index_quals(t, alias, *where, u.columns, run.function_params_);
    if (q.empty()) continue;
    several = several || unique != nullptr;
    if (unique == nullptr) unique = &u, quals = std::move(q);
  }
  if (quals.empty() && unique == nullptr && where) {
    if (const auto [key, v] = ssi_semi_join_pin(t, alias, *where); v != nullptr) {  // an index scan of the key = v
      run.table_ = nullptr;
      run.row_ = nullptr;
      const Value wanted = sql::evaluate(*v, run);
      std::vector<std::int64_t> ids;
      for (const auto& [id, row] : index_rows(run, t, alias, {})) {
        const Value k = run.value_in(t, *row, *key);
        if (!k.is_null() && !wanted.is_null() && sql::compare(k, wanted, "=") == 0) ids.push_back(id);
      }
      run.ssi_grain_ = std::make_shared<SsiGrain>(SsiGrain{true, std::move(ids), false, std::string()});
      return;
    }
  }
  std::string refused;
  if (several) {
    refused = "by index quals of two unique indexes";
  } else if (!quals.empty()) {  // an index (or bitmap) scan of the primary key or of `unique`
    std::vector<std::int64_t> ids;
    for (const auto& [id, key] : index_rows(run, t, alias, quals)) ids.push_back(id);
    if (unique == nullptr || ssi_unique_values_kept(run.server_, t, *unique)) {
      run.ssi_grain_ = std::make_shared<SsiGrain>(SsiGrain{true, std::move(ids), false, unique ? unique->name : std::string()});
      return;
    }
    refused = fmt::format("by its unique index \"{}\" after an update changed a row's value there", unique->name);
  } else if (where && sql_scan_has_index_qual(t, alias, *where, run.function_params_)) {
    refused = "by an index qual the model does not follow (IS NULL, OR arms, a partial or expression index's)";
  }
  if (!refused.empty()) {
    if (auto e = run.c_.ssi_unsupported(fmt::format("scans \"{}\" {}", t.def.table, refused))) throw SqlError(e->sqlstate, e->message);
  }
  run.ssi_grain_ = std::make_shared<SsiGrain>();  // a sequential scan
}

std::vector<std::pair<std::int64_t, const Row*>> SqlSsi::index_rows(SqlRun& run, SqlTable& t, const std::string& alias,
                                                                     const std::vector<const Expr*>& quals) {
  // Each row judged on a version of its slot (they all have the slot's key).
  std::vector<std::pair<std::int64_t, const Row*>> rows;
  run.server_.each_row(t.def.table, [&](std::int64_t id, RowState& r) {
    const Row* key = r.committed ? &*r.committed : nullptr;
    for (auto it = r.pending.begin(); key == nullptr && it != r.pending.end(); ++it) {
      if (it->second.version) key = &*it->second.version;
    }
    for (auto it = r.older.rbegin(); key == nullptr && it != r.older.rend(); ++it) {
      if (it->version) key = &*it->version;
    }
    if (key == nullptr) return;  // no tuple with its key is left that a snapshot could care about
    run.table_ = &t;
    run.alias_ = alias;
    run.row_ = key;
    const bool in = std::all_of(quals.begin(), quals.end(), [&](const Expr* q) { return run.where_holds(*q, id, /*recheck=*/false); });
    run.row_ = nullptr;
    if (in) rows.emplace_back(id, key);
  });
  return rows;
}

bool SqlSsi::plan_min_max(SqlRun& run, const sql::Select& sel, SqlTable& t, const Expr& aggregate) {
  // The planner's min/max path (planagg.c): an index-only scan of the primary key (or of a unique index) in the
  // aggregated column's order under Limit 1, where the columns before it are pinned by WHERE's
  // equalities and WHERE has nothing else.
  if (aggregate.args.size() != 1 || aggregate.distinct || aggregate.filtered || !sel.group_by.empty() || sel.having || !sel.from.empty()) return false;
  const Expr& arg = aggregate.args[0];
  if (arg.kind != Expr::Kind::column || (!arg.qualifier.empty() && arg.qualifier != sel.alias && arg.qualifier != t.def.table)) return false;
  const auto at = std::find(t.key.begin(), t.key.end(), t.column(arg.name));
  // Else a unique index of that column alone, without WHERE (EXPLAIN on PostgreSQL 15: an
  // index-only scan of it, backward for max, its NULLs left out by an Index Cond).
  const SqlTable::UniqueKey* unique = at == t.key.end() ? sql_single_column_index(t, t.column(arg.name)).unique : nullptr;
  if (at == t.key.end() && (unique == nullptr || sel.where || !ssi_unique_values_kept(run.server_, t, *unique))) return false;
  const std::size_t prefix = unique != nullptr ? 0 : static_cast<std::size_t>(at - t.key.begin());
  std::vector<const Expr*> quals = sel.where ? sql_primary_key_quals(t, sel.alias, *sel.where, run.function_params_) : std::vector<const Expr*>{};
  std::size_t conjuncts = sel.where ? 1 : 0;
  if (sel.where && sel.where->kind == Expr::Kind::and_) conjuncts = sel.where->args.size();
  if (quals.size() != prefix || conjuncts != prefix) return false;
  std::vector<bool> pinned(prefix, false);
  for (const Expr* q : quals) {
    if (q->kind != Expr::Kind::op || q->name != "=") return false;
    for (const Expr& side : q->args) {
      if (side.kind != Expr::Kind::column) continue;
      const auto k = std::find(t.key.begin(), t.key.end(), t.column(side.name));
      if (k != t.key.end() && static_cast<std::size_t>(k - t.key.begin()) < prefix) pinned[static_cast<std::size_t>(k - t.key.begin())] = true;
    }
  }
  if (std::find(pinned.begin(), pinned.end(), false) != pinned.end()) return false;
  std::vector<std::pair<Value, std::int64_t>> order;
  for (const auto& [id, key] : index_rows(run, t, sel.alias, quals)) {
    run.table_ = &t;
    run.alias_ = sel.alias;
    run.row_ = key;
    Value v = run.column(arg);
    run.row_ = nullptr;
    if (!v.is_null()) order.emplace_back(std::move(v), id);
  }
  const bool max = aggregate.name == "max";
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return max ? sql::compare(a.first, b.first) > 0 : sql::compare(a.first, b.first) < 0;
  });
  auto grain = std::make_shared<SsiGrain>(SsiGrain{true, {}, true, unique != nullptr ? unique->name : std::string()});
  for (const auto& [v, id] : order) grain->ids.push_back(id);
  run.ssi_grain_ = std::move(grain);
  return true;
}

void SqlSsi::plan_select(SqlRun& run, const sql::Select& sel, SqlTable& t, bool index_limit, bool index_order) {
  if (!run.c_.ssi_tracking() || !ssi_indexed(t) || run.derived_of(&t) != nullptr) return;
  std::vector<const Expr*> min_max;
  auto collect = [&](const Expr& e, const auto& self) -> void {
    if (e.kind == Expr::Kind::func && (e.name == "min" || e.name == "max")) min_max.push_back(&e);
    for (const Expr& a : e.args) self(a, self);
  };
  if (sel.aggregate) {
    for (const sql::Target& x : sel.targets) {
      if (!x.star) collect(x.expr, collect);
    }
  }
  if (!index_limit && min_max.empty()) return;
  if (!index_limit && min_max.size() == 1 && plan_min_max(run, sel, t, *min_max[0])) return;
  // The Limit over an index scan in ORDER BY's order: its locks wait for WHERE to say where
  // it stops. A WHERE that calls the server (a lock function, which may wait) would run
  // between the server's fetches, each with its SIREAD lock: not followed.
  // (index_order implies one ORDER BY item.)
  if (const SingleColumnIndex index = index_order ? ssi_order_index(t, sel.order_by.front().expr) : SingleColumnIndex{};
      min_max.empty() && !(sel.where && SqlRun::calls_server(*sel.where)) && index.found) {
    if (index.primary || ssi_unique_values_kept(run.server_, t, *index.unique)) {
      run.ssi_grain_ = std::make_shared<SsiGrain>(SsiGrain{.by_index = true, .deferred = true});
      return;
    }
  }
  const bool min_max_read = !min_max.empty();
  if (auto e = run.c_.ssi_unsupported(fmt::format("reads \"{}\" in an index's order ({})", t.def.table,
                                                  min_max_read ? "min or max" : "ORDER BY under LIMIT"))) {
    throw SqlError(e->sqlstate, e->message);
  }
}

void SqlSsi::read_index_order(SqlRun& run, SqlTable& t, const std::string& alias, const Expr& column, bool descending,
                              const std::optional<Value>& stop) {
  if (!run.c_.ssi_tracking()) return;
  const SingleColumnIndex index = ssi_order_index(t, column);
  LOCKSTEP_INVARIANT(index.found, "ssi: an index-order Limit's column has an index of its own");
  // The slots in the index's order (each judged on a version with its key: the index's value
  // is the same in all of them), up to the one the Limit stopped at.
  std::vector<std::pair<Value, std::int64_t>> order;
  for (const auto& [id, key] : index_rows(run, t, alias, {})) {
    Value v = run.value_in(t, *key, column);
    if (!stop || (descending ? sql::compare(v, *stop) >= 0 : sql::compare(v, *stop) <= 0)) order.emplace_back(std::move(v), id);
  }
  std::stable_sort(order.begin(), order.end(), [&](const auto& a, const auto& b) {
    return descending ? sql::compare(a.first, b.first) > 0 : sql::compare(a.first, b.first) < 0;
  });
  auto grain = std::make_shared<SsiGrain>(SsiGrain{.by_index = true, .index = index.primary ? std::string() : index.unique->name});
  for (const auto& [v, id] : order) grain->ids.push_back(id);
  run.ssi_grain_ = std::move(grain);
  read(run, t);
}

void SqlSsi::read(SqlRun& run, const SqlTable& t) {
  SimConnection& c = run.c_;
  const std::shared_ptr<SsiGrain> grain = std::exchange(run.ssi_grain_, nullptr);
  if (grain && grain->deferred) return;  // read_index_order's, once WHERE ran
  if (!c.ssi_tracking()) return;
  const std::string& name = t.def.table;
  if (!grain && ssi_indexed(t)) {
    if (auto e = c.ssi_unsupported(fmt::format("reads the indexed table \"{}\" in a join, a subquery or a FROM item", name))) {
      throw SqlError(e->sqlstate, e->message);
    }
  }
  if (!t.indexes.empty()) {
    if (auto e = c.ssi_unsupported(fmt::format("reads \"{}\", which has a plain index (CREATE INDEX)", name))) throw SqlError(e->sqlstate, e->message);
  }
  const bool by_index = grain && grain->by_index;  // an index scan of the primary key: those rows' tuples
  const std::vector<std::int64_t> no_ids;
  std::vector<std::int64_t> ids = by_index ? grain->ids : no_ids;
  auto seen = [&](const RowState& r) { return r.pending.contains(c.pid_) ? r.pending.at(c.pid_).version.has_value() : r.version_at(*c.snapshot_).has_value(); };
  Server& server = run.server_;
  Ssi& ssi = server.ssi();
  if (run.s_.in_actor()) run.s_.also_touch(server.ssi_object());
  ssi.release_if_safe(c.ssi_);
  if (!c.ssi_tracking()) return;
  const Xact me = c.ssi_;
  LOCKSTEP_INVARIANT(c.snapshot_.has_value(), "ssi: a SERIALIZABLE statement reads on its transaction's snapshot");
  const std::uint64_t snapshot = *c.snapshot_;
  // The writers of the tuples the plan examines that this snapshot does not see as they are
  // (HeapCheckForSerializableConflictOut), by heap position: a sequential scan meets every
  // tuple of the page; an index scan each HOT chain of the key up to its visible member.
  std::vector<std::pair<std::uint64_t, Xact>> writers;
  bool examined = false;
  std::vector<SsiVersion> chain;
  auto examine = [&](const RowState& r, bool by_index) {
    chain.clear();
    for (const RowState::Older& o : r.older) chain.push_back({o.seq, o.version.has_value(), o.place});
    chain.push_back({r.committed_seq, r.committed.has_value(), r.committed_place});
    const bool any = r.committed || r.committed_seq > 0 || !r.older.empty() || !r.pending.empty();
    if (!any) return;
    examined = true;
    const bool mine = r.pending.contains(c.pid_);
    int visible = -1;  // the version the snapshot sees
    for (std::size_t k = 0; k < chain.size(); ++k) {
      if (chain[k].seq <= snapshot) visible = static_cast<int>(k);
    }
    const bool sees = visible >= 0 && chain[static_cast<std::size_t>(visible)].tuple;
    bool new_chain = !sees;  // an index scan past the visible member: only chains that start later
    for (std::size_t k = static_cast<std::size_t>(visible + 1); k < chain.size(); ++k) {
      if (!chain[k].tuple) continue;
      new_chain = new_chain || chain[k].place.root == chain[k].place.position;
      if (!by_index || new_chain) writers.emplace_back(chain[k].place.position, ssi.writer_of(chain[k].seq));  // inserted since
    }
    if (sees && !mine) {
      const SsiVersion& v = chain[static_cast<std::size_t>(visible)];
      if (static_cast<std::size_t>(visible) + 1 < chain.size()) {
        writers.emplace_back(v.place.position, ssi.writer_of(chain[static_cast<std::size_t>(visible) + 1].seq));  // its xmax, committed
      } else {
        for (const auto& [pid, w] : r.pending) {
          if (pid != c.pid_) writers.emplace_back(v.place.position, ssi.running_of(pid));  // its xmax, in progress
        }
      }
    }
    for (const auto& [pid, w] : r.pending) {
      if (pid == c.pid_ || !(w.version || !w.earlier.empty())) continue;
      if (!by_index || w.place.root == w.place.position) writers.emplace_back(w.place.position, ssi.running_of(pid));  // inserting
    }
  };
  if (by_index) {
    for (std::size_t k = 0; k < ids.size(); ++k) {
      examine(server.row(name, ids[k]), true);
      if (grain->first_visible && seen(server.row(name, ids[k]))) {  // the Limit has its row: the scan stops
        ids.resize(k + 1);
        break;
      }
    }
  } else {
    server.each_row(name, [&](std::int64_t, RowState& r) { examine(r, false); });
  }
  if (examined) {
    if (auto e = ssi.before_tuple_read(me)) throw SqlRun::Raised{*e};
    if (!c.ssi_tracking()) return;
  }
  std::stable_sort(writers.begin(), writers.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [position, writer] : writers) {
    if (auto e = ssi.conflict_out(me, writer)) throw SqlRun::Raised{*e};
  }
  if (!by_index) {
    ssi.lock(me, SsiTarget::relation(name));
    return;
  }
  ssi.lock(me, SsiTarget::index(grain->index.empty() ? primary_key_name(&t, name) : grain->index));
  for (const std::int64_t id : ids) {
    const RowState& r = server.row(name, id);
    if (r.pending.contains(c.pid_) || !r.version_at(snapshot)) continue;  // its own tuple, or none seen
    ssi.lock(me, SsiTarget::at(name, r.place_at(snapshot).position));
  }
}

// ---- Writes.

void SqlSsi::check_writable(SqlRun& run, const SqlTable& t) {
  if (!run.c_.ssi_tracking()) return;
  std::string what;
  if (!t.foreign_keys.empty() || !t.referenced_by.empty()) {
    what = fmt::format("writes \"{}\", which has foreign keys", t.def.table);
  } else if (!t.indexes.empty()) {
    what = fmt::format("writes \"{}\", which has a plain index (CREATE INDEX)", t.def.table);
  }
  if (what.empty()) return;
  if (auto e = run.c_.ssi_unsupported(std::move(what))) throw SqlError(e->sqlstate, e->message);
}

void SqlSsi::heap_write(SqlRun& run, const SqlTable& t, std::int64_t id) {
  SimConnection& c = run.c_;
  if (!c.ssi_tracking()) return;
  check_writable(run, t);
  const std::string& name = t.def.table;
  const RowState& r = run.server_.row(name, id);
  const auto mine = r.pending.find(c.pid_);
  const std::uint64_t position = mine != r.pending.end() ? mine->second.place.position : r.committed_place.position;
  if (run.s_.in_actor()) run.s_.also_touch(run.server_.ssi_object());
  const std::vector<SsiTarget> targets{SsiTarget::at(name, position), SsiTarget::page(name), SsiTarget::relation(name)};
  if (auto e = run.server_.ssi().conflict_in(c.ssi_, targets, !c.savepoints_.empty())) throw SqlRun::Raised{*e};
}

void SqlSsi::heap_insert(SqlRun& run, const SqlTable& t) {
  SimConnection& c = run.c_;
  if (!c.ssi_tracking()) return;
  check_writable(run, t);
  if (run.s_.in_actor()) run.s_.also_touch(run.server_.ssi_object());
  if (auto e = run.server_.ssi().conflict_in(c.ssi_, {SsiTarget::relation(t.def.table)}, !c.savepoints_.empty())) throw SqlRun::Raised{*e};
}

void SqlSsi::index_insert(SqlRun& run, const SqlTable& t, const Row& row, bool primary, bool uniques) {
  SimConnection& c = run.c_;
  if (!c.ssi_tracking()) return;
  std::vector<SsiTarget> targets;
  if (primary && !t.key.empty()) targets.push_back(SsiTarget::index(primary_key_name(&t, t.def.table)));
  if (uniques) {
    for (const SqlTable::UniqueKey& u : t.unique) {
      if (in_partial_index(u, t, row)) targets.push_back(SsiTarget::index(u.name));
    }
  }
  if (targets.empty()) return;
  if (run.s_.in_actor()) run.s_.also_touch(run.server_.ssi_object());
  if (auto e = run.server_.ssi().conflict_in(c.ssi_, targets, !c.savepoints_.empty())) throw SqlRun::Raised{*e};
}

}  // namespace lockstep::sim::pg
