// sim/pg/executor/sql_triggers.cc: FOR EACH ROW triggers of LANGUAGE plpgsql functions on the simulated
// server, and AFTER ... FOR EACH STATEMENT ones (queue_after_statement). AFTER: which ones lockstep fires (fires_after_row), their events queued as rows are
// written (WHEN evaluated then, UPDATE OF's columns, name order) and fired as the statement
// ends (SqlRun::fire_after_rows). BEFORE: fired as each row is about to be written, its row
// locked (ExecBRInsertTriggers, ExecBRUpdateTriggers, ExecBRDeleteTriggers): the row each
// returns is the next one's NEW and the row written, NULL skips the row. Each a call of its
// function with NEW, OLD and TG_.
#include <algorithm>
#include <tuple>

#include "lockstep/model/sql/records.h"
#include "lockstep/model/sql/session_style.h"
#include "lockstep/sim/invariant.h"
#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/heap/sql_rows.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

namespace {

// A trigger's WHEN, read with NEW and OLD (new.x, old.x) and the statement's functions.
class TriggerWhen final : public sql::EvalContext {
 public:
  TriggerWhen(SqlRun& run, const Value& new_row, const Value& old_row) : run_(run), new_(new_row), old_(old_row) {}
  Value column(const Expr& ref) override {
    const Value* r = ref.qualifier == "new" ? &new_ : ref.qualifier == "old" ? &old_ : nullptr;
    if (r == nullptr) throw sql::missing_column_error(ref);
    if (r->type() != Type::record) throw SqlError("0A000", "a trigger's WHEN reading a row its event does not have is not in lockstep's SQL subset");
    return sql::record_field(*r, ref.name);
  }
  Value param(int number) override { throw SqlError("42P02", fmt::format("there is no parameter ${}", number)); }
  Value call(const Expr& e, const std::vector<Value>& args) override { return run_.call(e, args); }
  Value subquery(const Expr&) override { throw SqlError("0A000", "a subquery in a trigger's WHEN is not in lockstep's SQL subset"); }

 private:
  SqlRun& run_;
  const Value& new_;
  const Value& old_;
};

}  // namespace

// Whether the trigger is one lockstep fires: AFTER, FOR EACH ROW, no arguments, its function's
// body one it runs.
bool fires_after_row(const SqlTable::Trigger& tr) {
  if (tr.before || !tr.row || tr.args) return false;
  const sql::CreateFunction* f = sql::current_sql_function(tr.function);
  return f != nullptr && f->pl != nullptr && f->pl->refused.empty();
}

bool fires_before_row(const SqlTable::Trigger& tr) {
  if (!tr.before || !tr.row || tr.args) return false;
  const sql::CreateFunction* f = sql::current_sql_function(tr.function);
  return f != nullptr && f->pl != nullptr && f->pl->refused.empty();
}

bool fires_after_statement(const SqlTable::Trigger& tr) {
  if (tr.before || tr.row || tr.args || tr.when) return false;
  const sql::CreateFunction* f = sql::current_sql_function(tr.function);
  return f != nullptr && f->pl != nullptr && f->pl->refused.empty();
}

bool has_before_row(const SqlTable& t, std::string_view op) {
  return std::ranges::any_of(t.triggers, [&](const SqlTable::Trigger& tr) { return fires_before_row(tr) && std::ranges::find(tr.events, op) != tr.events.end(); });
}

// The row triggers `fires` picks on `op` of t, UPDATE OF's columns among `set`'s (an UPDATE's
// SET; null: any), in the server's order: by name.
std::vector<const SqlTable::Trigger*> SqlRun::row_triggers(const SqlTable& t, const char* op, const std::vector<sql::Assignment>* set,
                                                           bool (*fires)(const SqlTable::Trigger&)) {
  std::vector<const SqlTable::Trigger*> firing;
  for (const SqlTable::Trigger& tr : t.triggers) {
    if (!fires(tr) || std::ranges::find(tr.events, op) == tr.events.end()) continue;
    if (!tr.of_columns.empty() && set != nullptr &&
        std::ranges::none_of(*set, [&](const sql::Assignment& a) { return std::ranges::find(tr.of_columns, a.column) != tr.of_columns.end(); })) {
      continue;
    }
    firing.push_back(&tr);
  }
  std::ranges::sort(firing, [](const auto* a, const auto* b) { return a->name < b->name; });
  return firing;
}

bool SqlRun::before_row(const SqlTable& t, const char* op, const Row* old_row, Row* new_row, const std::vector<sql::Assignment>* set) {
  if (t.triggers.empty()) return true;
  const std::vector<const SqlTable::Trigger*> firing = row_triggers(t, op, set, fires_before_row);
  const int type = server_.record_type_index(t.def.table);
  const Saved saved = save();
  for (const SqlTable::Trigger* tr : firing) {
    Row shown_new = new_row != nullptr ? *new_row : Row{};  // its generated columns NULL (computed after the triggers)
    for (const sql::ColumnDef& c : t.def.columns) {
      if (c.generated != nullptr) shown_new.erase(c.name);
    }
    const Value new_rec = new_row != nullptr ? whole_row(t, shown_new) : Value::null_record(type);
    const Value old_rec = old_row != nullptr ? whole_row(t, *old_row) : Value::null_record(type);
    if (tr->when) {
      TriggerWhen when(*this, new_rec, old_rec);
      if (!sql::is_true(sql::evaluate(*tr->when, when), "WHEN")) continue;
    }
    const sql::CreateFunction* f = sql::current_sql_function(tr->function);
    PlTrigger trigger{op, tr->name, t.def.table, true, new_rec, old_rec};
    static const std::vector<Value> kNoArgs;
    // The session's own versions of t's rows: its trigger writing one is the server's later
    // command, which the statement's scan does not see (a row it then reaches fails with 27000).
    auto own_versions = [&] {
      std::vector<std::pair<std::int64_t, std::optional<Row>>> out;
      server_.each_row(t.def.table, [&](std::int64_t row_id, RowState& r) {
        if (const auto w = r.pending.find(c_.pid_); w != r.pending.end()) out.emplace_back(row_id, w->second.version);
      });
      return out;
    };
    const auto before = own_versions();
    const Value returned = call_plpgsql(*f, kNoArgs, &trigger);
    restore(saved);
    if (own_versions() != before) {
      throw SqlError("0A000", fmt::format("a BEFORE trigger whose function {}() writes rows of \"{}\", the table its statement writes, is "
                                          "not in lockstep's SQL subset (docs/sql.md)", f->name, t.def.table));
    }
    if (returned.is_null()) return false;  // the row is skipped: no later trigger, no write
    if (returned.type() != Type::record || returned.record_type() != type) {
      throw SqlError("42804", "returned row structure does not match the structure of the triggering table");
    }
    if (new_row == nullptr) continue;  // a DELETE's: any row goes on
    const std::vector<std::optional<std::string>> fields = sql::record_field_texts(returned.text_output());
    LOCKSTEP_INVARIANT(fields.size() == t.def.columns.size(), "a record of a table's row type has its columns");
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (fields[i]) {
        (*new_row)[t.def.columns[i].name] = *fields[i];
      } else {
        new_row->erase(t.def.columns[i].name);
      }
    }
  }
  return true;
}

void SqlRun::queue_after_row(const SqlTable& t, const char* op, const Row* old_row, const Row* new_row, const std::vector<sql::Assignment>* set) {
  if (t.triggers.empty()) return;
  const std::vector<const SqlTable::Trigger*> firing = row_triggers(t, op, set, fires_after_row);
  if (firing.empty()) return;
  const Value new_rec = new_row != nullptr ? whole_row(t, *new_row) : Value::null();
  const Value old_rec = old_row != nullptr ? whole_row(t, *old_row) : Value::null();
  SqlRun* top = this;  // a data-modifying WITH query's events are its statement's
  while (top->nested_ && top->enclosing_ != nullptr) top = top->enclosing_;
  for (const SqlTable::Trigger* tr : firing) {
    if (tr->when) {  // evaluated as the event is queued
      TriggerWhen when(*this, new_rec, old_rec);
      if (!sql::is_true(sql::evaluate(*tr->when, when), "WHEN")) continue;
    }
    top->after_rows_.push_back({t.def.table, tr->name, tr->function, op, old_row != nullptr ? std::optional<Row>(*old_row) : std::nullopt,
                                new_row != nullptr ? std::optional<Row>(*new_row) : std::nullopt});
  }
}

// Queued as the statement's ModifyTable ends (fireASTriggers), after its rows' events, also
// where it changed no row: INSERT ... ON CONFLICT DO UPDATE's UPDATE ones, then its INSERT
// ones; each TRUNCATEd table's in turn (refuse_triggers let only these through).
void SqlRun::queue_after_statement() {
  const auto has_triggers = [&](const std::string& table) {  // (most statements: no allocation here)
    const SqlTable* t = server_.sql_table(table);
    return t != nullptr && !t->triggers.empty();
  };
  const auto* target = std::get_if<sql::Insert>(&st_.body) != nullptr   ? &std::get<sql::Insert>(st_.body).table
                       : std::get_if<sql::Update>(&st_.body) != nullptr ? &std::get<sql::Update>(st_.body).table
                       : std::get_if<sql::Delete>(&st_.body) != nullptr ? &std::get<sql::Delete>(st_.body).table
                                                                        : nullptr;
  const auto* lock = std::get_if<sql::LockTables>(&st_.body);
  if (target != nullptr ? !has_triggers(*target) : lock == nullptr || lock->maintenance != sql::LockTables::Maintenance::truncate) return;
  std::vector<std::tuple<const std::string*, const char*, const std::vector<sql::Assignment>*>> events;
  if (const auto* i = std::get_if<sql::Insert>(&st_.body)) {
    if (i->on_conflict == sql::Insert::OnConflict::update) events.emplace_back(&i->table, "UPDATE", &i->conflict_set);
    events.emplace_back(&i->table, "INSERT", nullptr);
  } else if (const auto* u = std::get_if<sql::Update>(&st_.body)) {
    events.emplace_back(&u->table, "UPDATE", &u->set);
  } else if (const auto* d = std::get_if<sql::Delete>(&st_.body)) {
    events.emplace_back(&d->table, "DELETE", nullptr);
  } else if (const auto* l = std::get_if<sql::LockTables>(&st_.body); l != nullptr && l->maintenance == sql::LockTables::Maintenance::truncate) {
    for (const std::string& table : l->tables) events.emplace_back(&table, "TRUNCATE", nullptr);
  }
  for (const auto& [table, op, set] : events) {
    const SqlTable* t = server_.sql_table(*table);
    if (t == nullptr || t->triggers.empty()) continue;
    for (const SqlTable::Trigger* tr : row_triggers(*t, op, set, fires_after_statement)) {
      after_rows_.push_back({t->def.table, tr->name, tr->function, op, std::nullopt, std::nullopt, true});
    }
  }
}

void SqlRun::fire_after_rows() {
  std::vector<AfterRow> events = std::exchange(after_rows_, {});
  for (const AfterRow& e : events) {
    const SqlTable* t = server_.sql_table(e.table);
    const sql::CreateFunction* f = sql::current_sql_function(e.function);
    LOCKSTEP_INVARIANT(t != nullptr && f != nullptr && f->pl != nullptr, "a queued trigger's table and function exist");
    // NEW of a DELETE, OLD of an INSERT: a NULL row of the table's type (PostgreSQL 11 on).
    const int type = server_.record_type_index(e.table);
    PlTrigger trigger{e.op, e.trigger, e.table, false, e.new_row ? whole_row(*t, *e.new_row) : Value::null_record(type),
                      e.old_row ? whole_row(*t, *e.old_row) : Value::null_record(type), e.statement};
    static const std::vector<Value> kNoArgs;
    call_plpgsql(*f, kNoArgs, &trigger);
  }
}

}  // namespace lockstep::sim::pg
