// sim/pg/executor/sql_joins.cc: the relations a statement reads besides its table (sim/pg/executor/sql_run.h):
// WITH queries (computed once, when first read; one that locks rows in steps of its own,
// before the statement's own scan), and the one relation UPDATE ... FROM or DELETE ... USING
// joins, whose row for each target row is kept as it was through the EvalPlanQual re-check
// (PostgreSQL re-runs the join for the new version with the other relation's row as it was).
#include <algorithm>
#include <functional>
#include <set>
#include <type_traits>
#include <variant>

#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_ssi.h"

namespace lockstep::sim::pg {

void SqlRun::declare_ctes(const std::vector<sql::CommonTable>& with) {
  for (std::size_t k = 0; k < with.size(); ++k) {
    const sql::CommonTable& cte = with[k];
    auto d = std::make_unique<Derived>();
    d->def = &cte;
    d->table.def.table = cte.name;
    if (cte.modifying && cte.streams_into_next) {  // a DELETE whose rows the next query inserts as they come
      auto next = std::make_unique<Derived>();
      next->def = &with[++k];
      next->table.def.table = next->def->name;
      derived_.push_back(std::move(d));
      derived_.push_back(std::move(next));
      run_modifying(*derived_[derived_.size() - 2], derived_.back().get());
      continue;
    }
    if (cte.modifying && !cte.read) {
      // Nothing reads it: the server runs it after the statement's own query, to completion, on
      // the statement's snapshot (so a failing query never starts it; checked on PostgreSQL 15,
      // tests/sql-specs/unread-modifying-with.spec). Its table's own versions as found kept now.
      d->last = true;
      save_own_versions(target_of(*cte.modifying));
      derived_.push_back(std::move(d));
      continue;
    }
    if (cte.modifying) {
      derived_.push_back(std::move(d));
      run_modifying(*derived_.back());
      continue;
    }
    const sql::Select& sel = *cte.select;
    d->table.def.columns = output_columns(sel);
    if (cte.column_names.size() > d->table.def.columns.size()) {
      throw SqlError("42P10", fmt::format("WITH query \"{}\" has {} columns available but {} columns specified", cte.name,
                                          d->table.def.columns.size(), cte.column_names.size()));
    }
    for (std::size_t i = 0; i < cte.column_names.size(); ++i) d->table.def.columns[i].name = cte.column_names[i];
    derived_.push_back(std::move(d));
    // One that locks rows takes its steps now, before the statement's own (one nothing reads
    // never runs: it locks nothing).
    if (sel.lock != sql::RowLock::none && cte.read) materialize(*derived_.back());
  }
}

std::vector<sql::ColumnDef> SqlRun::output_columns(const sql::Select& sel) {
  if (sel.set_op) return output_columns(*sel.set_op->left);
  std::vector<sql::ColumnDef> out;
  const SqlTable* source = sel.table.empty() ? nullptr : table(sel.table);
  for (const sql::Target& target : targets_of(sel)) {
    if (target.star && source == nullptr && !sel.from.empty()) {  // * or t.* of a FROM of several items, a function, VALUES
      for (const sql::ColumnDef& c : from_relation(sel)->def.columns) {
        if (!target.star_of.empty() && joined_name(c).first != target.star_of) continue;  // t.*: t's columns
        sql::ColumnDef column = c;
        column.name = std::string(joined_name(c).second);
        out.push_back(std::move(column));
      }
      continue;
    }
    if (target.star) {
      if (source == nullptr) throw SqlError("42601", "SELECT * with no tables specified is not valid");
      for (const sql::ColumnDef& c : source->def.columns) {
        out.push_back(sql::ColumnDef{.name = c.name, .type = c.type, .user_type = c.user_type, .element = c.element});
      }
      continue;
    }
    // A plain column keeps its type (an enum's or an array's with it); an expression's is
    // its first value's (materialize).
    sql::ColumnDef column{.name = target.name, .type = Type::unknown};
    const auto typed_as = [&](const sql::ColumnDef& c) {
      column.type = c.type;
      column.user_type = c.user_type;
      column.element = c.element;
    };
    if (target.expr.kind == Expr::Kind::column && source != nullptr) {
      if (const int i = source->column(target.expr.name); i >= 0) typed_as(source->def.columns[static_cast<std::size_t>(i)]);
    } else if (const sql::ColumnDef* c = joined_column_def(target.expr, sel)) {  // a join's column, rows or none
      typed_as(*c);
    } else if (std::optional<sql::ColumnDef> typed = static_column(target.expr, sel)) {  // a row, or a row's field
      typed_as(*typed);
    }
    out.push_back(std::move(column));
  }
  return out;
}

const sql::ColumnDef* SqlRun::joined_column_def(const Expr& e, const sql::Select& sel) {
  if (e.kind != Expr::Kind::column || !sel.table.empty() || sel.from.empty()) return nullptr;
  const SqlTable* joined = from_relation(sel);
  const int i = joined_column(*joined, e);
  return i < 0 ? nullptr : &joined->def.columns[static_cast<std::size_t>(i)];
}

void SqlRun::run_modifying(Derived& d, Derived* streamed_into) {
  const sql::Statement& st = *d.def->modifying;
  // Under REPEATABLE READ it reads on the transaction's snapshot (its first step takes it
  // when its statement is the transaction's first); SERIALIZABLE's predicate locks for it are
  // not built.
  if (c_.serializable_) throw SqlError("0A000", "a data-modifying WITH query under SERIALIZABLE is not in lockstep's SQL subset");
  const std::vector<sql::Target>* returning = nullptr;
  std::string target;
  std::visit([&](const auto& body) {
    using B = std::decay_t<decltype(body)>;
    if constexpr (std::is_same_v<B, sql::Insert> || std::is_same_v<B, sql::Update> || std::is_same_v<B, sql::Delete>) {
      returning = &body.returning;
      target = body.table;
    }
  }, st.body);
  if (returning == nullptr) throw SqlError("XX000", "internal: a data-modifying WITH query that is no INSERT, UPDATE or DELETE");
  // Its columns: RETURNING's (a column keeps its table's type; an expression takes its first value's).
  const SqlTable* t = table(target);
  d.table.def.columns.clear();  // (run again per row of the query streamed into it)
  for (const sql::Target& r : *returning) {
    if (r.star) {
      for (const sql::ColumnDef& c : t->def.columns) d.table.def.columns.push_back(sql::ColumnDef{.name = c.name, .type = c.type, .user_type = c.user_type, .element = c.element});
      continue;
    }
    sql::ColumnDef c{.name = r.name, .type = Type::unknown};
    if (r.expr.kind == Expr::Kind::column) {
      if (const int i = t->column(r.expr.name); i >= 0) {
        const sql::ColumnDef& source = t->def.columns[static_cast<std::size_t>(i)];
        c.type = source.type;
        c.user_type = source.user_type;
        c.element = source.element;
      }
    }
    d.table.def.columns.push_back(std::move(c));
  }
  save_own_versions(target);
  SqlRun inner(c_, plans_, st, params_);
  if (d.last) inner.before_writes_[target] = before_writes_.at(target);  // the rows the statement's own query wrote: unseen
  inner.nested_ = true;
  inner.enclosing_ = this;
  inner.function_params_ = function_params_;  // a function's variables (and EXECUTE's USING values) there too
  inner.statement_start_ = statement_start_;
  std::vector<std::vector<Value>> rows;
  inner.returned_ = &rows;
  const auto keep = [&d](std::vector<Value> values) {
    Row& row = d.rows.emplace_back();
    for (std::size_t i = 0; i < values.size() && i < d.table.def.columns.size(); ++i) {
      sql::ColumnDef& c = d.table.def.columns[i];
      if (values[i].is_null()) continue;
      if (c.type == Type::unknown) c.type = values[i].type() == Type::unknown ? Type::text : values[i].type();
      row.emplace(c.name, std::move(values[i]).text_output());
    }
  };
  if (streamed_into != nullptr) {
    // Each row the DELETE returns is the next query's one row now (streams_into_next); its
    // readers then see them all.
    inner.after_row_ = [&] {
      d.rows.clear();
      keep(rows.back());
      d.computed = true;
      run_modifying(*streamed_into);
    };
  }
  const Result<Rows> r = std::visit([&inner](const auto& body) { return inner.statement(body); }, st.body);
  if (!r.ok()) throw Raised{r.error()};
  d.computed = true;
  d.unordered = inner.unordered_returning_;
  if (streamed_into != nullptr) d.rows.clear();  // (its last row's, kept for the streamed query): all of them now
  for (std::vector<Value>& values : rows) keep(std::move(values));
  if (streamed_into != nullptr && !streamed_into->computed) run_modifying(*streamed_into);  // no row: its query runs once, empty
  for (sql::ColumnDef& c : d.table.def.columns) {
    if (c.type == Type::unknown) c.type = Type::text;
  }
}

void SqlRun::save_own_versions(const std::string& table) {
  if (before_writes_.contains(table)) return;
  auto& saved = before_writes_[table];
  server_.each_row(table, [&](std::int64_t id, RowState& r) {
    if (auto mine = r.pending.find(c_.pid_); mine != r.pending.end()) saved.emplace(id, mine->second);
  });
}

const std::string& SqlRun::target_of(const sql::Statement& st) {
  const std::string* target = nullptr;
  std::visit([&](const auto& body) {
    using B = std::decay_t<decltype(body)>;
    if constexpr (std::is_same_v<B, sql::Insert> || std::is_same_v<B, sql::Update> || std::is_same_v<B, sql::Delete>) target = &body.table;
  }, st.body);
  if (target == nullptr) throw SqlError("XX000", "internal: a data-modifying WITH query that is no INSERT, UPDATE or DELETE");
  return *target;
}

void SqlRun::note_own_write(const std::string& table, std::int64_t id) {
  if (own_write(table, id) != nullptr) return;
  const RowState& r = server_.row(table, id);
  std::optional<RowState::Written> before;
  if (auto mine = r.pending.find(c_.pid_); mine != r.pending.end()) before = mine->second;
  own_writes_.push_back({&table, id, std::move(before)});
}

const SqlRun::OwnWrite* SqlRun::own_write(const std::string& table, std::int64_t id) const {
  for (const OwnWrite& w : own_writes_) {
    if (w.id == id && *w.table == table) return &w;
  }
  return nullptr;
}

void SqlRun::check_not_written_by_cte(std::string_view table) const {
  if (before_writes_.contains(table)) {
    throw SqlError("0A000", fmt::format("a row lock on \"{}\" beside a data-modifying WITH query that writes it is not in lockstep's SQL subset (docs/sql.md)", table));
  }
}

SqlRun::Derived* SqlRun::derived(std::string_view name) {
  for (auto& d : derived_) {
    if (d->def->name == name) return d.get();
  }
  return enclosing_ != nullptr ? enclosing_->derived(name) : nullptr;
}

SqlRun::Derived* SqlRun::derived_of(const SqlTable* t) {
  for (auto& d : derived_) {
    if (&d->table == t) return d.get();
  }
  return enclosing_ != nullptr ? enclosing_->derived_of(t) : nullptr;
}

void SqlRun::materialize(Derived& d) {
  if (d.partial) {
    throw SqlError("0A000", fmt::format("a WITH query or FROM subquery (\"{}\") read in part under a LIMIT and then read again is not in "
                                        "lockstep's SQL subset (docs/sql.md)",
                                        d.def->name));
  }
  if (d.computed) return;
  if (std::none_of(derived_.begin(), derived_.end(), [&](const auto& own) { return own.get() == &d; })) {
    enclosing_->materialize(d);  // a WITH query of the statement around this data-modifying one
    return;
  }
  const sql::Select& sel = *d.def->select;
  if (d.def->recursive) {
    while (next_round(d)) {
    }
    return;
  }
  d.computed = true;
  std::vector<std::vector<Value>> rows = run_subquery(sel, /*per_row=*/false);
  type_columns(d, rows);
  d.rows = stored_rows(d, std::move(rows));
}

// A WITH query's columns of no type yet take their first value's.
void SqlRun::type_columns(Derived& d, const std::vector<std::vector<Value>>& rows) {
  if (d.correlated && rows.empty()) return;  // typed by a later outer row's rows
  for (std::size_t i = 0; i < d.table.def.columns.size(); ++i) {
    sql::ColumnDef& c = d.table.def.columns[i];
    if (c.type != Type::unknown) continue;
    c.type = Type::text;  // an untyped literal is text, as PostgreSQL resolves a WITH query's column
    for (const auto& row : rows) {
      if (!row[i].is_null() && row[i].type() != Type::unknown) {
        c.type = row[i].type();
        if (c.type == Type::enum_) c.user_type = sql::enum_type_name(row[i]);
        if (c.type == Type::record) c.user_type = sql::record_definition(row[i].record_type()).table;
        if (c.type == Type::array) c.element = row[i].array_element();
        if (c.type == Type::array && row[i].array_enum() >= 0 && sql::current_enum_types() != nullptr) {
          c.user_type = sql::current_enum_types()->at(static_cast<std::size_t>(row[i].array_enum())).name;
        }
        break;
      }
    }
  }
}

std::vector<Row> SqlRun::stored_rows(const Derived& d, std::vector<std::vector<Value>> rows) {
  std::vector<Row> out;
  for (std::vector<Value>& values : rows) {
    Row& row = out.emplace_back();
    for (std::size_t i = 0; i < values.size() && i < d.table.def.columns.size(); ++i) {
      if (!values[i].is_null()) row.emplace(d.table.def.columns[i].name, std::move(values[i]).text_output());
    }
  }
  return out;
}

bool SqlRun::next_round(Derived& d) {
  // PostgreSQL's RecursiveUnion: the non-recursive term's rows, then rounds of the recursive
  // term over the rows the last round added (its working table) until one adds none; UNION
  // (not ALL) keeps a row only once.
  constexpr std::size_t kMaxRounds = 10'000, kMaxRows = 100'000;
  if (d.computed) return false;
  const sql::SetOperation& so = *d.def->select->set_op;
  std::vector<std::vector<Value>> produced;
  const std::int64_t holds_before = advisory_holds();
  if (d.rounds == 0) {
    if (output_columns(*so.right).size() != d.table.def.columns.size()) {
      throw SqlError("42601", "each UNION query must have the same number of columns");
    }
    produced = run_subquery(*so.left, /*per_row=*/false);
    type_columns(d, produced);
  } else {
    if (d.rounds >= kMaxRounds) throw SqlError("0A000", "a WITH RECURSIVE query of more than 10000 rounds is not in lockstep's SQL subset");
    d.in_round = true;  // the recursive term reads the working table as the query's name
    try {
      produced = run_subquery(*so.right, /*per_row=*/false);
    } catch (...) {
      d.in_round = false;
      throw;
    }
    d.in_round = false;
  }
  ++d.rounds;
  d.last_round_locked = advisory_holds() != holds_before;
  d.working.clear();
  for (Row& r : stored_rows(d, std::move(produced))) {
    if (!so.all && !d.seen.insert(r).second) continue;
    d.rows.push_back(r);
    d.working.push_back(std::move(r));
  }
  if (d.rows.size() > kMaxRows) throw SqlError("0A000", "a WITH RECURSIVE query of more than 100000 rows is not in lockstep's SQL subset");
  if (d.working.empty()) {
    d.computed = true;
    d.seen.clear();
  }
  return !d.computed;
}

bool SqlRun::streamable(const sql::Select& sel) {
  if (sel.set_op || sel.aggregate || !sel.group_by.empty() || sel.having || sel.distinct || !sel.distinct_on.empty() ||
      !sel.order_by.empty() || sel.lock != sql::RowLock::none || !sel.from.empty() || sel.table.empty() || !sel.with.empty() ||
      derived(sel.table) != nullptr) {
    return false;
  }
  std::vector<const Expr*> calls;
  for (const sql::Target& target : targets_of(sel)) {
    window_calls(target.expr, calls);
    set_returning_calls(target.expr, calls);
  }
  return calls.empty();
}

std::vector<std::pair<std::int64_t, Row>> SqlRun::scan_streamed(Derived& d, SqlTable* t, const std::string& alias,
                                                                const std::optional<Expr>& where, std::int64_t enough) {
  const sql::Select& sel = *d.def->select;
  SqlTable* inner = table(sel.table);
  check_once(*inner, &sel, [&] { check_select(sel, *inner); });
  touch(*inner);
  d.computed = true;
  const std::int64_t offset = bound(sel.offset, "OFFSET");
  const std::int64_t limit = sel.limit ? bound(sel.limit, "LIMIT") : -1;
  const bool bitmap = sel.where && !sel.limit && sql_scan_has_index_qual(*inner, sel.alias, *sel.where, function_params_);
  const std::optional<std::int64_t> outer_pinned = std::exchange(pinned_, std::nullopt);  // the statement's, not the query's
  std::vector<std::pair<std::int64_t, Row>> out;
  std::int64_t skipped = 0, produced = 0;
  for (const auto& [id, r] : relation_rows(*inner, bitmap)) {
    if (limit >= 0 && produced >= limit) break;  // its own LIMIT: the query is whole
    if (static_cast<std::int64_t>(out.size()) >= enough) {
      d.partial = true;
      break;
    }
    Row copy = *r;
    table_ = inner;
    alias_ = sel.alias;
    row_ = &copy;
    if (sel.where && !where_holds(*sel.where, id, /*recheck=*/false)) continue;
    if (skipped < offset) {
      ++skipped;
      continue;
    }
    ++produced;
    std::vector<std::vector<Value>> values{project(targets_of(sel))};
    row_ = nullptr;
    type_columns(d, values);
    d.rows.push_back(std::move(stored_rows(d, std::move(values)).front()));
    const auto at = static_cast<std::int64_t>(d.rows.size() - 1);
    Row mine = d.rows.back();  // stays put while WHERE runs
    if (passes(t, alias, where, at, mine)) out.emplace_back(at, std::move(mine));
  }
  pinned_ = outer_pinned;
  return out;
}

std::int64_t SqlRun::advisory_holds() const {
  std::int64_t n = 0;
  std::vector<AdvisoryKey> keys;
  for (const Scope scope : {Scope::transaction, Scope::session}) {
    keys.clear();
    server_.locks().held_keys(c_.pid_, scope, keys);
    for (const AdvisoryKey& k : keys) {
      for (const int count : server_.locks().holds(c_.pid_, k, scope)) n += count;
    }
  }
  return n;
}

std::vector<std::pair<std::int64_t, Row>> SqlRun::scan_recursive(Derived& d, SqlTable* t, const std::string& alias,
                                                                 const std::optional<Expr>& where, std::int64_t enough) {
  std::vector<std::pair<std::int64_t, Row>> out;
  std::size_t next = 0;
  for (;;) {
    for (; next < d.rows.size() && static_cast<std::int64_t>(out.size()) < enough; ++next) {
      const auto at = static_cast<std::int64_t>(next);
      Row copy = d.rows[next];  // stays put while WHERE runs (it may read the query again)
      if (passes(t, alias, where, at, copy)) out.emplace_back(at, std::move(copy));
    }
    if (static_cast<std::int64_t>(out.size()) >= enough) break;
    if (!next_round(d)) break;
  }
  if (next < d.rows.size() && d.last_round_locked && !d.computed) {
    throw SqlError("0A000", "a LIMIT that stops reading a WITH RECURSIVE query inside a round of several rows that takes advisory locks "
                            "is not in lockstep's SQL subset (docs/sql.md)");
  }
  return out;
}

std::vector<std::pair<std::int64_t, const Row*>> SqlRun::relation_rows(const SqlTable& t, bool by_root) {
  std::vector<std::pair<std::int64_t, const Row*>> out;
  if (Derived* d = derived_of(&t)) {
    if (d->in_round) {  // the recursive term's reference to its own query: the working table
      for (std::size_t i = 0; i < d->working.size(); ++i) out.emplace_back(static_cast<std::int64_t>(i), &d->working[i]);
      return out;
    }
    if (d->sequence) sequence_relation(d->def->name);  // its row as it is at this scan
    materialize(*d);
    for (std::size_t i = 0; i < d->rows.size(); ++i) out.emplace_back(static_cast<std::int64_t>(i), &d->rows[i]);
    return out;
  }
  SqlSsi::read(*this, t);  // a SERIALIZABLE transaction's SIREAD locks and conflicts out
  if (!first_scan_at_) first_scan_at_ = server_.commits();
  const std::string& name = t.def.table;
  std::vector<std::int64_t> ids;
  if (pinned_) {
    ids.push_back(*pinned_);
  } else {
    server_.each_row(name, [&](std::int64_t id, RowState&) { ids.push_back(id); });
  }
  // A sequential scan returns the visible versions in heap order (RowState's positions).
  // (One row, a pinned one, needs no order: no allocation for it.)
  std::vector<std::pair<std::uint64_t, std::size_t>> order;
  auto place = [&](const HeapPlace& p) { return by_root ? p.root : p.position; };
  // A statement with a data-modifying WITH query reads on its snapshot, taken in its first
  // step, though that query may have waited for row locks since (a subquery always does).
  const bool snapshot = subquery_depth_ > 0 || !before_writes_.empty() || on_snapshot();
  const std::optional<std::uint64_t> statement_seq = snapshot_seq();
  const auto written = before_writes_.find(name);
  // A row the statement (or its data-modifying WITH query) wrote, as the statement found it:
  // the session's own version before (`before`), else others' view of it.
  auto as_found = [&](std::int64_t id, const RowState& state, const RowState::Written* before) {
    const std::optional<std::uint64_t> seq = snapshot && statement_seq ? statement_seq : c_.snapshot_;
    const std::optional<Row>& r = before != nullptr ? before->version : seq ? state.version_at(*seq) : state.committed;
    if (!r) return;
    const HeapPlace at = before != nullptr ? before->place : seq ? state.place_at(*seq) : state.committed_place;
    if (ids.size() > 1) order.emplace_back(place(at), out.size());
    out.emplace_back(id, &*r);
  };
  for (const std::int64_t id : ids) {
    if (const OwnWrite* w = own_writes_.empty() ? nullptr : own_write(name, id)) {
      as_found(id, server_.row(name, id), w->before ? &*w->before : nullptr);
      continue;
    }
    if (written != before_writes_.end()) {
      const RowState& state = server_.row(name, id);
      const RowState::Written* before = nullptr;
      if (auto it = written->second.find(id); it != written->second.end()) before = &it->second;
      if (before != nullptr || state.pending.contains(c_.pid_)) {
        as_found(id, state, before);
        continue;
      }
    }
    const std::optional<Row>& r = snapshot ? subquery_visible(name, id) : c_.visible(name, id);
    if (!r) continue;
    if (ids.size() > 1) order.emplace_back(place(snapshot ? subquery_place(name, id) : c_.visible_place(name, id)), out.size());
    out.emplace_back(id, &*r);
  }
  if (!std::is_sorted(order.begin(), order.end())) {
    std::sort(order.begin(), order.end());
    std::vector<std::pair<std::int64_t, const Row*>> sorted;
    sorted.reserve(out.size());
    for (const auto& [position, i] : order) sorted.push_back(out[i]);
    out = std::move(sorted);
  }
  // With enable_seqscan off the planner scans an index where it can: rows in its order, which
  // the simulation does not choose for the server.
  if (out.size() > 1 && !c_.planner_switch(0)) {  // bit 0: enable_seqscan, the first switch (model/sql/functions.h)
    throw SqlError("0A000", "a scan of more than one row while enable_seqscan is off (the planner's choice of index) is not in lockstep's SQL subset (docs/sql.md)");
  }
  return out;
}

std::vector<std::tuple<std::int64_t, Row, Row>> SqlRun::join_candidates(SqlTable& t, std::string_view alias, SqlTable& from,
                                                                         std::string_view from_alias, const std::optional<Expr>& where,
                                                                         const sql::Select* join, const std::vector<sql::Assignment>& set,
                                                                         const std::vector<sql::Target>& returning) {
  unplanned_order_.clear();
  other_matches_.clear();
  // Whether SET or RETURNING read the joined row (a column not the target's, a subquery).
  const auto reads_joined = [&](const Expr& e) {
    bool column = false, sub = false;
    const auto walk = [&](const Expr& x, const auto& self) -> void {
      column = column || x.kind == Expr::Kind::column;
      sub = sub || x.select != nullptr;
      for (const Expr& a : x.args) self(a, self);
    };
    walk(e, walk);
    return sub || (column && !reads_target_only(e, t, alias, from));
  };
  const std::string_view named = alias.empty() ? std::string_view(t.def.table) : alias;
  const bool shown = std::any_of(set.begin(), set.end(), [&](const sql::Assignment& a) { return reads_joined(a.value); }) ||
                     std::any_of(returning.begin(), returning.end(), [&](const sql::Target& r) { return r.star ? r.star_of != named : reads_joined(r.expr); });
  std::vector<Row> joined;
  if (join != nullptr) {  // FROM a join: its nested loops, each table touched as it is read
    for (auto& [id, r] : from_scan(*join, from, -1)) joined.push_back(std::move(r));
  } else {
    touch(from);  // the joined relation is read in this step, as the target
    for (const auto& [id, r] : relation_rows(from)) joined.push_back(*r);
  }
  std::vector<std::tuple<std::int64_t, Row, Row>> out;
  std::vector<std::size_t> first_match;  // per candidate, the joined row it goes with
  // The target's scan runs the conditions that read it alone, once per row, before the join
  // (restriction quals, in cost order); the others run per joined row.
  std::vector<const Expr*> own;
  std::vector<const Expr*> others;
  const auto sublinked = [](const Expr& e, const auto& self) -> bool {
    return sql::is_sublink(e) || std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return self(a, self); });
  };
  if (where && !sublinked(*where, sublinked)) {
    const std::vector<const Expr*>* order = server_.qual_order(*where);
    for (const Expr* q : order != nullptr ? *order : sql::qual_order(*where, {})) (reads_target_only(*q, t, alias, from) ? own : others).push_back(q);
  }
  const auto holds = [&](const std::vector<const Expr*>& quals) {
    return std::all_of(quals.begin(), quals.end(), [&](const Expr* q) { return sql::is_true(sql::evaluate(*q, *this)); });
  };
  const Saved saved = save();
  std::size_t scanned = 0;  // target rows past their own conditions
  for (const auto& [id, r] : relation_rows(t)) {
    Row target = *r;
    table_ = &t;
    alias_ = alias;
    row_ = &target;
    if (!own.empty() && !holds(own)) continue;
    ++scanned;
    // The first joined row WHERE accepts: PostgreSQL changes a target row once, with one of
    // them; the others are its next tries when a re-check fails. Which comes first is the
    // plan's (a hashed relation's matches come last row first): refused where it shows.
    // (WHERE with subqueries or lock calls: the first only, its side effects once.)
    const bool all = !st_.has_subquery && !(where && sql_expr_takes_steps(*where));
    std::vector<Row> more;
    bool found = false;
    for (std::size_t k = 0; k < joined.size(); ++k) {
      const Row& j = joined[k];
      const Joined with(*this, Join{&from, from_alias, &j});
      if (!where || (own.empty() ? where_holds(*where, id, /*recheck=*/false) : holds(others))) {
        if (!found) {
          found = true;
          out.emplace_back(id, target, j);
          first_match.push_back(k);
          if (!all) break;
        } else if (shown) {
          throw SqlError("0A000", "an UPDATE or DELETE ... FROM whose target row joins two or more rows, of which SET or RETURNING read "
                                  "the one the server's plan takes first, is not in lockstep's SQL subset (docs/sql.md)");
        } else {
          more.push_back(j);
        }
      }
    }
    if (!more.empty()) other_matches_.emplace(id, std::move(more));
  }
  restore(saved);
  // A locking WITH query this join alone reads was locked whole when declared; the server reads
  // it as its plan pulls: where the CTE Scan is the inner side and the target's scan finds no
  // row, never (probe O's River retry of a job not running). Which side is inner is its costs'.
  const Derived* locking = join == nullptr ? derived_of(&from) : nullptr;
  if (scanned == 0 && !joined.empty() && locking != nullptr && locking->def->select && locking->def->select->lock != sql::RowLock::none &&
      locking->def->read_in_one_place) {
    throw SqlError("0A000", fmt::format("a locking WITH query (\"{}\") read only by UPDATE ... FROM or DELETE ... USING whose target "
                                        "rows are none is not in lockstep's SQL subset (docs/sql.md): whether the server reads it, and "
                                        "locks its rows, is its plan's choice",
                                        locking->def->name));
  }
  // The planner's join on the target's primary key, on tables never analyzed: a WITH query or
  // subquery estimated at few rows drives a nested loop over index scans of the target (rows
  // in its order); one estimated at many is hashed under a scan of the target (heap order).
  const Derived* d = derived_of(&from);
  const sql::Select* q = d != nullptr ? d->def->select.get() : nullptr;
  const auto rows = q != nullptr && where && joins_on_key(*where, t, alias, from, from_alias) ? estimated_rows(*q) : std::nullopt;
  const bool ties = std::adjacent_find(first_match.begin(), first_match.end(), std::greater_equal<>()) != first_match.end();
  order_join(out, first_match, rows ? planned_drive(*rows, t, where->kind == Expr::Kind::and_ ? where->args.size() - 1 : 0) : Drive::unknown,
             ties && may_hash_target(t, alias, from, from_alias, own, others));
  return out;
}

// Target rows that join one row come in heap order where the plan hashes the joined table
// (or loops over it), last inserted first where it hashes the target (a hash bucket's chain).
// Which the planner hashes is its costs' (final_cost_hashjoin, tables never analyzed: rows
// from their widths and their own conditions' default selectivities; a join key unique
// there puts one row in a bucket, any other a tenth of the rows): false only where hashing
// the target costs 15% more than hashing the joined table for every width estimate, or no
// equality joins the two (nested loops).
bool SqlRun::may_hash_target(SqlTable& t, std::string_view alias, SqlTable& from, std::string_view from_alias,
                             const std::vector<const Expr*>& own, const std::vector<const Expr*>& others) {
  if (derived_of(&from) != nullptr || from.joined || others.empty()) return true;
  int target_key = -1, from_key = -1;
  std::vector<const Expr*> from_own;
  for (const Expr* c : others) {
    if (reads_target_only(*c, from, from_alias, t)) {
      from_own.push_back(c);
      continue;
    }
    if (c->kind != Expr::Kind::op || c->name != "=" || c->args.size() != 2 || target_key >= 0) continue;
    for (std::size_t side = 0; side < 2; ++side) {
      const Expr& a = c->args[side];
      const Expr& b = c->args[1 - side];
      if (a.kind == Expr::Kind::column && b.kind == Expr::Kind::column && reads_target_only(a, t, alias, from) &&
          reads_target_only(b, from, from_alias, t)) {
        target_key = t.column(a.name), from_key = from.column(b.name);
      }
    }
  }
  if (target_key < 0 || from_key < 0) return false;
  // Each side's rows as a scan of it with its own conditions estimates them (estimated_rows).
  const auto estimate = [&](const SqlTable& r, std::string_view r_alias, const std::vector<const Expr*>& quals) {
    sql::Select sel;
    sel.table = r.def.table, sel.alias = std::string(r_alias);
    if (quals.size() == 1) sel.where = *quals.front();
    if (quals.size() > 1) {
      Expr all;
      all.kind = Expr::Kind::and_;
      for (const Expr* c : quals) all.args.push_back(*c);
      sel.where = std::move(all);
    }
    return estimated_rows(sel);
  };
  const auto target_rows = estimate(t, alias, own), from_rows = estimate(from, from_alias, from_own);
  if (!target_rows || !from_rows) return true;
  const bool target_unique = sql_single_column_index(t, target_key).found, from_unique = sql_single_column_index(from, from_key).found;
  // Building on `inner` (each row hashed, cpu_operator_cost + cpu_tuple_cost), probing with
  // `outer` (cpu_operator_cost a row, and half its bucket's rows compared).
  const auto hash_cost = [](double inner, bool unique, double outer) {
    const double bucket = unique ? 1.0 : std::max(1.0, std::rint(inner * 0.1));
    return inner * 0.0125 + outer * 0.0025 + outer * bucket * 0.00125;
  };
  for (const double n : {target_rows->first, target_rows->second}) {
    for (const double m : {from_rows->first, from_rows->second}) {
      if (hash_cost(n, target_unique, m) <= 1.15 * hash_cost(m, from_unique, n)) return true;
    }
  }
  return false;
}

const Row* SqlRun::other_joined_match(std::int64_t scanned, SqlTable& t, std::string_view alias, std::int64_t id, const Row& newest, const Expr& where) {
  const auto more = other_matches_.find(scanned);
  if (more == other_matches_.end()) return nullptr;
  for (const Row& j : more->second) {
    const Joined with(*this, Join{join_.table, join_.alias, &j});
    if (still_matches(&t, std::string(alias), id, newest, where)) return &j;
  }
  return nullptr;
}

bool SqlRun::reads_target_only(const Expr& q, const SqlTable& t, std::string_view alias, const SqlTable& from) const {
  std::vector<const Expr*> refs;
  const auto collect = [&](const Expr& e, const auto& self) -> void {
    if (e.kind == Expr::Kind::column) refs.push_back(&e);
    for (const Expr& a : e.args) self(a, self);
  };
  collect(q, collect);
  const std::string_view own = alias.empty() ? std::string_view(t.def.table) : alias;
  const auto has = [&](const SqlTable& r, const std::string& name) {
    return std::any_of(r.def.columns.begin(), r.def.columns.end(), [&](const sql::ColumnDef& c) { return (r.joined ? joined_name(c).second : c.name) == name; });
  };
  return !refs.empty() && std::all_of(refs.begin(), refs.end(), [&](const Expr* ref) {
    return ref->qualifier.empty() ? has(t, ref->name) && !has(from, ref->name) : ref->qualifier == own;
  });
}

bool SqlRun::joins_on_key(const Expr& where, const SqlTable& t, std::string_view alias, const SqlTable& from, std::string_view from_alias) const {
  if (where.kind == Expr::Kind::and_) {
    return std::any_of(where.args.begin(), where.args.end(), [&](const Expr& a) { return joins_on_key(a, t, alias, from, from_alias); });
  }
  if (where.kind != Expr::Kind::op || where.name != "=" || where.args.size() != 2 || t.key.size() != 1) return false;
  const std::string& key = t.def.columns[static_cast<std::size_t>(t.key[0])].name;
  auto is_key = [&](const Expr& e) {
    return e.kind == Expr::Kind::column && e.name == key && (e.qualifier == alias || e.qualifier == t.def.table);
  };
  auto is_joined = [&](const Expr& e) {
    return e.kind == Expr::Kind::column && (e.qualifier == from_alias || e.qualifier == from.def.table) && from.column(e.name) >= 0;
  };
  return (is_key(where.args[0]) && is_joined(where.args[1])) || (is_key(where.args[1]) && is_joined(where.args[0]));
}

}  // namespace lockstep::sim::pg
