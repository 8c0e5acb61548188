// sim/pg/server/server.cc: the simulated server's shared state: sessions, termination, the pg_locks
// view, and the objects that stand for advisory keys and rows.
#include "lockstep/sim/pg/server/connection.h"

#include <algorithm>

#include "lockstep/model/sql/user_functions.h"
#include "lockstep/sim/invariant.h"

namespace lockstep::sim::pg {

using lockstep::pg::AdvisoryLockRow;

Session& Server::open_session(std::string application_name) {
  const int pid = next_pid_++;
  Session& s = sessions_[pid];
  s.pid = pid;
  s.application_name = std::move(application_name);
  return s;
}

Session* Server::live_session(int pid) {
  auto it = sessions_.find(pid);
  return it != sessions_.end() && it->second.live ? &it->second : nullptr;
}

void Server::terminate(Session& victim) {
  for (auto& [table, rows] : tables_) {
    for (auto& [id, row] : rows) {
      RowState& r = row.state;
      auto mine = r.pending.find(victim.pid);
      if (mine == r.pending.end()) continue;
      r.pending.erase(mine);  // a commit is one step: never half done when this runs
      if (r.reinserted_by == victim.pid) r.reinserted_by = 0;
      if (r.updated_by == victim.pid) r.updated_by = 0;
    }
  }
  row_locks_.end_session(victim.pid);
  table_locks_.end_session(victim.pid);
  locks_.end_session(victim.pid);
  if (victim.ssi != Ssi::kNone) ssi_.release(victim.ssi, false);  // its SIREAD locks and conflicts
  victim.ssi = Ssi::kNone;
  victim.idle_until = kForever;
  victim.terminated = true;
  victim.terminated_idle = !victim.active;
  victim.live = false;
  victim.active = false;
  victim.in_transaction = false;
}

Time Server::next_idle_end() const {
  Time first = kForever;
  for (const auto& [pid, session] : sessions_) {
    if (session.live) first = std::min(first, session.idle_until);
  }
  return first;
}

bool Server::end_idle_sessions(Time now) {
  bool any = false;
  for (auto& [pid, session] : sessions_) {
    if (!session.live || session.idle_until > now) continue;
    // (The session itself may be starting its next string: an implicit block may have begun.)
    terminate(session);
    session.idle_timed_out = true;
    any = true;
  }
  return any;
}

void Server::cancel(Session& victim) {
  bool waiting = false;
  for (LockTable* table : {&row_locks_, &table_locks_, &locks_}) waiting = table->cancel_waits(victim.pid) || waiting;
  victim.canceled = victim.canceled || waiting || victim.sleeping;
}

void Server::restart() {
  restart_used_ = true;
  for (auto& [pid, session] : sessions_) {
    if (session.live) terminate(session);
  }
}

std::vector<AdvisoryLockRow> Server::advisory_lock_rows(Time now) const {
  std::vector<AdvisoryLockRow> rows;
  for (const LockEntry& e : locks_.entries()) {
    auto it = sessions_.find(e.session);
    if (it == sessions_.end() || !it->second.live) continue;  // the join with pg_stat_activity
    const Session& s = it->second;
    rows.push_back({s.pid, s.application_name, std::string(s.state()), s.query_start, e.key.classid(), e.key.objid(),
                    e.key.objsubid(), std::string(lock_type(e.mode)), e.granted, now - s.query_start});
  }
  std::sort(rows.begin(), rows.end(), [](const AdvisoryLockRow& a, const AdvisoryLockRow& b) {
    return std::tie(a.pid, a.classid, a.objid, a.objsubid, a.mode, a.granted) <
           std::tie(b.pid, b.classid, b.objid, b.objsubid, b.mode, b.granted);
  });
  return rows;
}

void Server::commit_version(RowState& row, RowState::Written written, bool updated, bool keys_updated) {
  if (written.truncated) {
    row.older.clear();  // no snapshot sees what TRUNCATE removed
  } else if (open_snapshots_ > 0) {
    row.older.push_back({row.committed_seq, std::move(row.committed), row.committed_place, updated, keys_updated});
  }
  row.committed = std::move(written.version);
  row.committed_place = written.place;
  row.committed_seq = ++commits_;
  row.forward = 0;
}

std::uint64_t Server::new_tuple(std::string_view table) {
  if (SqlTable* t = sql_table(table)) {
    ++t->tuples_written;
    if (s_.in_actor()) s_.also_touch(t->heap);
  }
  return ++heap_positions_;
}

SqlTable& Server::add_sql_table(sql::CreateTable def) {
  SqlTable t;
  t.object = s_.new_object("table " + def.table);
  t.heap = s_.new_object("heap " + def.table);
  for (const std::string& k : def.primary_key) {
    for (std::size_t i = 0; i < def.columns.size(); ++i) {
      if (def.columns[i].name == k) t.key.push_back(static_cast<int>(i));
    }
  }
  for (const sql::ColumnDef& c : def.columns) t.sequences.push_back({.last = c.sequence_start});
  for (std::size_t u = 0; u < def.unique.size(); ++u) {
    const auto& names = def.unique[u];
    SqlTable::UniqueKey k;
    k.name = def.table;
    for (const std::string& n : names) {
      for (std::size_t i = 0; i < def.columns.size(); ++i) {
        if (def.columns[i].name == n) k.columns.push_back(static_cast<int>(i));
      }
      k.name += "_" + n;
    }
    k.name += "_key";  // PostgreSQL's name for the constraint
    if (u < def.unique_names.size() && !def.unique_names[u].empty()) k.name = def.unique_names[u];  // CONSTRAINT name UNIQUE
    t.unique.push_back(std::move(k));
  }
  // Ids go on from a dropped table's: its row slots stay in the store, empty.
  if (const auto old = tables_.find(def.table); old != tables_.end() && !old->second.empty()) {
    t.next_id = old->second.rbegin()->first + 1;
  }
  auto index_of = [&](const sql::CreateTable& d, const std::string& column) {
    for (std::size_t i = 0; i < d.columns.size(); ++i) {
      if (d.columns[i].name == column) return static_cast<int>(i);
    }
    return -1;
  };
  for (const sql::ForeignKey& fk : def.foreign_keys) {
    const bool self = fk.parent == def.table;  // a foreign key to its own table
    SqlTable& parent = self ? t : sql_tables_.at(fk.parent);  // statement(CreateTable) checked it exists
    SqlTable::ForeignKey k{fk.name, {}, fk.parent, {}, fk.restrict_delete, fk.restrict_update, fk.on_delete, fk.deferrable, fk.deferred};
    for (const std::string& c : fk.columns) k.columns.push_back(index_of(def, c));
    if (fk.parent_columns.empty()) {
      k.parent_columns = parent.key;
    } else {
      for (const std::string& c : fk.parent_columns) k.parent_columns.push_back(index_of(self ? def : parent.def, c));
    }
    parent.referenced_by.emplace_back(def.table, t.foreign_keys.size());
    t.foreign_keys.push_back(std::move(k));
  }
  std::string name = def.table;
  t.def = std::move(def);
  return sql_tables_.insert_or_assign(std::move(name), std::move(t)).first->second;
}

void Server::rename_sql_table(const std::string& from, const std::string& to) {
  LOCKSTEP_INVARIANT(!has_row_slots(from), "a table renamed after rows were stored");
  auto node = sql_tables_.extract(sql_tables_.find(from));
  SqlTable& t = node.mapped();
  if (!t.key.empty() && t.def.primary_key_name.empty()) t.def.primary_key_name = from + "_pkey";  // the index keeps its name
  t.def.table = to;
  node.key() = to;
  sql_tables_.insert(std::move(node));
  for (auto& [name, other] : sql_tables_) {
    for (SqlTable::ForeignKey& fk : other.foreign_keys) {
      if (fk.parent == from) fk.parent = to;
    }
    for (sql::ForeignKey& fk : other.def.foreign_keys) {
      if (fk.parent == from) fk.parent = to;
    }
    for (auto& [child, index] : other.referenced_by) {
      if (child == from) child = to;
    }
  }
}

void Server::drop_sql_table(std::string_view name) {
  for (const auto& fk : sql_tables_.find(name)->second.foreign_keys) {
    if (const auto parent = sql_tables_.find(fk.parent); parent != sql_tables_.end()) {
      std::erase_if(parent->second.referenced_by, [&](const auto& r) { return r.first == name; });
    }
  }
  each_row(name, [](std::int64_t, RowState& r) {
    r.committed.reset();
    r.pending.clear();
    r.reinserted_by = 0;
  });
  std::erase_if(sequences_, [&](const auto& entry) { return entry.second.def.owned_by == name; });  // OWNED BY this table
  sql_tables_.erase(sql_tables_.find(name));
}

void Server::drop_foreign_key(const std::string& child, std::size_t index) {
  SqlTable& t = sql_tables_.find(child)->second;
  LOCKSTEP_INVARIANT(index < t.foreign_keys.size(), "a foreign key dropped is the table's");
  if (SqlTable* parent = sql_table(t.foreign_keys[index].parent)) std::erase(parent->referenced_by, std::pair<std::string, std::size_t>(child, index));
  for (std::size_t later = index + 1; later < t.foreign_keys.size(); ++later) {
    for (auto& entry : sql_table(t.foreign_keys[later].parent)->referenced_by) {
      if (entry.first == child && entry.second == later) --entry.second;
    }
  }
  t.foreign_keys.erase(t.foreign_keys.begin() + static_cast<std::ptrdiff_t>(index));
}

ObjectId Server::object_for(AdvisoryKey key) {
  auto [it, inserted] = objects_.emplace(key, kNoObject);
  if (inserted) it->second = s_.new_object(fmt::format("advisory({},{},{})", key.classid(), key.objid(), key.objsubid()));
  return it->second;
}

void Server::touch_waits_for_graph() {
  std::vector<int> waiting;
  for (const LockTable* t : {&locks_, &row_locks_, &table_locks_}) t->waiting_sessions(waiting);
  if (waiting.empty()) return;
  std::sort(waiting.begin(), waiting.end());
  waiting.erase(std::unique(waiting.begin(), waiting.end()), waiting.end());
  for (const auto& [key, obj] : objects_) {
    if (locks_.held_by_any_of(key, waiting)) s_.also_touch(obj);
  }
  for (const auto& [table, rows] : tables_) {
    for (const auto& [id, slot] : rows) {
      const ObjectId obj = slot.object;
      if (obj != kNoObject && row_locks_.held_by_any_of(AdvisoryKey::single(static_cast<std::int64_t>(obj)), waiting)) {
        s_.also_touch(obj);  // row_key(table, id)
      }
    }
  }
}

AdvisoryKey Server::row_key(std::string_view table, std::int64_t id) {
  // The row's own object number: one key per (table, id), whatever the id's 64 bits. Row
  // locks have a table of their own, so these keys never meet advisory ones.
  return AdvisoryKey::single(static_cast<std::int64_t>(row_object(table, id)));
}

Server::RowSlot& Server::slot(std::string_view table, std::int64_t id) {
  if (last_slot_ != nullptr && id == last_id_ && table == last_table_) return *last_slot_;
  // A model names a handful of tables, several times a statement: a scan of their names
  // costs less than the ordered map's string comparisons.
  std::pair<std::string_view, std::map<std::int64_t, RowSlot>*> found{};
  for (const auto& entry : table_index_) {
    if (entry.first == table) found = entry;
  }
  if (found.second == nullptr) {
    auto& [name, rows] = *tables_.emplace(std::string(table), std::map<std::int64_t, RowSlot>()).first;
    found = table_index_.emplace_back(name, &rows);
  }
  last_table_ = found.first;  // the key in tables_: it outlives the caller's string
  last_id_ = id;
  last_slot_ = &(*found.second)[id];
  return *last_slot_;
}

ObjectId Server::row_object(std::string_view table, std::int64_t id) {
  RowSlot& row = slot(table, id);
  if (row.object == kNoObject) {
    std::string name(table);  // "{table}#{id}", without fmt's parsing: a few times per execution
    name += '#';
    name += std::to_string(id);
    row.object = s_.new_object(std::move(name));
  }
  return row.object;
}

const sql::SessionStyle& Server::style() const {
  static const sql::SessionStyle kDefault;
  if (s_.in_actor()) {
    const auto actor = static_cast<std::size_t>(s_.current());
    if (actor < running_styles_.size() && running_styles_[actor].style != nullptr) return *running_styles_[actor].style;
    return kDefault;
  }
  return outside_style_.style != nullptr ? *outside_style_.style : kDefault;
}

int Server::running_pid() const {
  if (!s_.in_actor()) return outside_style_.pid;
  const auto actor = static_cast<std::size_t>(s_.current());
  return actor < running_styles_.size() ? running_styles_[actor].pid : 0;
}

Server::RunningStyle::RunningStyle(Server& server, const sql::SessionStyle& style, int pid)
    : server_(server), actor_(server.s_.in_actor() ? server.s_.current() : -1) {
  if (actor_ < 0) {
    saved_ = std::exchange(server_.outside_style_, Running{&style, pid});
    return;
  }
  const auto a = static_cast<std::size_t>(actor_);
  if (server_.running_styles_.size() <= a) server_.running_styles_.resize(a + 1);
  saved_ = std::exchange(server_.running_styles_[a], Running{&style, pid});
}

const std::string* Server::function_key(std::string_view name) const {
  if (name.find('.') != std::string_view::npos) {  // schema.name: that schema's only
    const auto it = functions_.find(sql::function_key(name));
    return it == functions_.end() ? nullptr : &it->first;
  }
  if (schemas_.size() == 1 && style().search_path == sql::kDefaultSearchPath) {  // public alone
    const auto it = functions_.find(name);
    return it == functions_.end() ? nullptr : &it->first;
  }
  const std::string* found = nullptr;  // the first schema of search_path that has it
  for (const std::string& schema : sql::path_schemas(style().search_path, this)) {
    const auto it = functions_.find(schema == "public" ? std::string(name) : fmt::format("{}.{}", schema, name));
    if (it == functions_.end()) continue;
    if (found == nullptr) {
      found = &it->first;
      continue;
    }
    if (overloaded(*found) || overloaded(it->first) || !sql::same_parameter_types(functions_.at(*found), it->second)) {
      // the server picks among them by the arguments (func_get_detail)
      throw sql::SqlError("0A000", fmt::format("a call of {}(), which two schemas of search_path have with other parameters (overloading), is not in "
                                               "lockstep's SQL subset (docs/sql.md)", name));
    }
  }
  return found;
}

bool Server::overloaded(const std::string& key) const {
  const auto next = functions_.upper_bound(key);
  return next != functions_.end() && next->first.starts_with(key + kOverload);
}

std::vector<const sql::CreateFunction*> Server::sql_functions(std::string_view name) const {
  if (name.starts_with(kTempSchema)) {
    const sql::CreateFunction* f = sql_function(name);
    return f == nullptr ? std::vector<const sql::CreateFunction*>{} : std::vector{f};
  }
  std::vector<const sql::CreateFunction*> out;
  const std::string* key = function_key(name);
  if (key == nullptr) return out;
  for (auto it = functions_.find(*key); it != functions_.end() && (it->first == *key || it->first.starts_with(*key + kOverload)); ++it) {
    out.push_back(&it->second);
  }
  return out;
}

const sql::CreateFunction* Server::sql_function(std::string_view name) const {
  if (name.starts_with(kTempSchema)) {  // the running session's own (pg_temp.name)
    const auto session = sessions_.find(running_pid());
    if (session == sessions_.end() || !session->second.live) return nullptr;
    const auto it = session->second.temp_functions.find(name);
    return it == session->second.temp_functions.end() ? nullptr : &it->second;
  }
  const std::string* key = function_key(name);
  if (key == nullptr) return nullptr;
  const sql::CreateFunction& first = functions_.at(*key);
  if (overloaded(*key)) {
    // Found by its name alone (its result's columns, a trigger's function): its overloads must
    // agree on what is asked of them; a call picks one by its arguments (sql::call_user_function).
    for (const sql::CreateFunction* other : sql_functions(name)) {
      if (!sql::same_result_shape(first, *other)) {
        throw sql::SqlError("0A000", fmt::format("the overloaded function {}() found by its name alone here (its overloads return other types) is not "
                                                 "in lockstep's SQL subset (docs/sql.md)", name));
      }
    }
  }
  return &first;
}

bool Server::function_named_anywhere(std::string_view name) const {
  return std::ranges::any_of(functions_, [&](const auto& f) { return f.first == name || f.first.ends_with(fmt::format(".{}", name)); });
}

void Server::add_sql_function(const sql::CreateFunction& f) {
  if (f.name.starts_with(kTempSchema)) {
    Session& session = sessions_.at(running_pid());
    note_temp_change(session, f.name);
    session.temp_functions.insert_or_assign(f.name, f);
    return;
  }
  for (const sql::CreateFunction* same : sql_functions(explicit_function_name(f))) {  // CREATE OR REPLACE of one overload
    if (!sql::same_parameter_types(*same, f)) continue;
    for (auto& [key, g] : functions_) {
      if (&g == same) g = f;
    }
    return;
  }
  if (!functions_.contains(f.name)) {
    functions_.emplace(f.name, f);
    return;
  }
  int n = 1;  // another overload: kept after the first, in the order created
  while (functions_.contains(fmt::format("{}{}{:04}", f.name, kOverload, n))) ++n;
  functions_.emplace(fmt::format("{}{}{:04}", f.name, kOverload, n), f);
}

void Server::drop_sql_function(std::string_view name) {
  if (!name.starts_with(kTempSchema)) return drop_function_of(0, name);
  Session& session = sessions_.at(running_pid());
  note_temp_change(session, name);
  session.temp_functions.erase(session.temp_functions.find(name));
}

bool Server::has_temp_schema() const {
  const auto session = sessions_.find(running_pid());
  return session != sessions_.end() && session->second.temp_schema;
}

void Server::note_temp_change(Session& session, std::string_view name) {
  if (!session.temp_schema && session.in_transaction) session.temp_undo.emplace_back("", std::nullopt);
  session.temp_schema = true;
  if (!session.in_transaction) return;
  const auto it = session.temp_functions.find(name);
  session.temp_undo.emplace_back(std::string(name), it == session.temp_functions.end() ? std::nullopt : std::optional{it->second});
}

void Server::end_temp_changes(int pid, bool commit) {
  const auto at = sessions_.find(pid);
  if (at == sessions_.end()) return;
  Session& session = at->second;
  for (auto undo = session.temp_undo.rbegin(); !commit && undo != session.temp_undo.rend(); ++undo) {
    if (undo->first.empty()) {
      session.temp_schema = false;
    } else if (undo->second) {
      session.temp_functions.insert_or_assign(undo->first, *undo->second);
    } else if (const auto it = session.temp_functions.find(undo->first); it != session.temp_functions.end()) {
      session.temp_functions.erase(it);
    }
  }
  session.temp_undo.clear();
}

std::vector<std::pair<int, std::string>> Server::functions_of_row_type(std::string_view table) const {
  std::vector<std::pair<int, std::string>> out;
  const auto depends = [&](const sql::CreateFunction& f) {
    return std::any_of(f.params.begin(), f.params.end(), [&](const sql::FunctionParam& p) {
      return p.type.type == sql::Type::enum_ && p.type.user_type == table;  // (an enum type cannot share its name)
    });
  };
  for (const auto& [name, f] : functions_) {
    if (depends(f)) out.emplace_back(0, name);
  }
  for (const auto& [pid, session] : sessions_) {
    for (const auto& [name, f] : session.temp_functions) {
      if (session.live && depends(f)) out.emplace_back(pid, name);
    }
  }
  return out;
}

void Server::drop_function_of(int pid, std::string_view name) {
  if (pid == 0) {
    const std::string base(name.substr(0, name.find(kOverload)));
    functions_.erase(functions_.find(name));
    if (base == name && overloaded(base)) {  // its next overload is found by the name now
      const auto next = functions_.upper_bound(base);
      sql::CreateFunction moved = next->second;
      functions_.erase(next);
      functions_.emplace(base, std::move(moved));
    }
    return;
  }
  auto& temp = sessions_.at(pid).temp_functions;  // (DDL outside the sessions: no transaction of its to undo it)
  temp.erase(temp.find(name));
}

Server::RunningStyle::~RunningStyle() {
  if (actor_ < 0) {
    server_.outside_style_ = saved_;
  } else {
    server_.running_styles_[static_cast<std::size_t>(actor_)] = saved_;
  }
}

}  // namespace lockstep::sim::pg
