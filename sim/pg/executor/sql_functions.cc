// sim/pg/executor/sql_functions.cc: functions and triggers on the simulated server (sim/pg/executor/sql_run.h):
// CREATE [OR REPLACE] FUNCTION, DROP FUNCTION, CREATE [OR REPLACE] TRIGGER and DROP TRIGGER
// (DDL: outside the sessions, in one step that writes the whole server). Calls of LANGUAGE
// sql functions: model/sql/user_functions.h; a query body runs here (function_body). A plpgsql body is never run: a call is refused
// there, and a statement that would fire a trigger is refused before it starts (its
// function's effects would be missing, not wrong, so nothing is answered).
#include <algorithm>
#include <functional>
#include <set>

#include <fmt/ranges.h>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/model/sql/enums.h"
#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/numeric.h"
#include "lockstep/model/sql/user_functions.h"
#include "lockstep/sim/invariant.h"
#include "lockstep/sim/pg/executor/sql_plpgsql.h"
#include "lockstep/sim/pg/executor/sql_run.h"
#include "lockstep/sim/pg/executor/sql_schemas.h"

namespace lockstep::sim::pg {
namespace {
using sql::Type;
}  // namespace

Result<Rows> SqlRun::statement(const sql::CreateFunction& created) {
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step(created.name.starts_with(Server::kTempSchema))) return *refused;
  sql::CreateFunction f = created;  // named by the key its schema keeps it by (sql::function_key)
  if (!f.name.starts_with(Server::kTempSchema)) {
    const std::size_t dot = f.name.find('.');
    const std::string schema = creation_schema(dot == std::string::npos ? std::string() : f.name.substr(0, dot), server_);
    f.name = schema == "public" ? f.name.substr(dot + 1) : fmt::format("{}.{}", schema, f.name.substr(dot + 1));
  }
  const std::vector<const sql::CreateFunction*> named = server_.sql_functions(Server::explicit_function_name(f));
  const auto same = std::ranges::find_if(named, [&](const sql::CreateFunction* g) { return sql::same_parameter_types(*g, f); });
  if (same == named.end() && !named.empty() && (f.name.starts_with(Server::kTempSchema) || f.returns_trigger || named.front()->returns_trigger)) {
    return Error{"0A000", fmt::format("a second function named {} (overloading) in pg_temp or returning trigger is not in lockstep's SQL subset", f.name)};
  }
  if (same != named.end()) {  // (another's parameter types: an overload, told apart by a call's arguments)
    const sql::CreateFunction* old = *same;
    if (!f.replace) return Error{"42723", fmt::format("function \"{}\" already exists with same argument types", f.name)};
    if (old->returns.type != f.returns.type || old->returns.user_type != f.returns.user_type) {
      return Error{"42P13", "cannot change return type of existing function"};
    }
  }
  if (f.pl != nullptr && f.pl->sql_body) {  // its statements' relations found as it is created (check_function_bodies), with its SET
    const SearchPathOfCall path(c_.style_, f.search_path);
    for (const sql::PlStatement& s : f.pl->body) {
      if (!s.text.empty()) {
        if (auto missing = unresolved_relation(cached_plans(s.text)->front(), server_, true)) return error_of(*missing);
      }
    }
  }
  std::vector<const sql::ColumnDef*> types{&f.returns};
  for (const sql::FunctionParam& p : f.params) types.push_back(&p.type);
  for (const sql::ColumnDef* type : types) {
    if (type->type != Type::enum_ || (f.returns_trigger && type == &f.returns) || server_.composite_type(type->user_type) != nullptr) continue;
    if (sql::enum_index(type->user_type) >= 0) continue;
    if (server_.sql_table(type->user_type) == nullptr) return Error{"42704", fmt::format("type \"{}\" does not exist", type->user_type)};
    if (!f.plpgsql && type == &f.returns) {  // a parameter of one is read by its fields (que_determine_job_state(job que_jobs))
      return Error{"0A000", fmt::format("a LANGUAGE sql function returning the row type of the table {} is not in lockstep's SQL subset (docs/sql.md)",
                                        type->user_type)};
    }
  }
  server_.add_sql_function(f);
  return done(Rows{{}, {}, "CREATE FUNCTION"});
}

Result<Rows> SqlRun::drop_functions(const sql::DropTable& d) {
  SimConnection::Statement guard(c_);
  const bool own = std::ranges::all_of(d.tables, [](const std::string& name) { return name.starts_with(Server::kTempSchema); });
  if (auto refused = ddl_step(own)) return *refused;
  for (const std::string& name : d.tables) {
    if (server_.sql_functions(name).size() > 1) {
      return Error{"0A000", fmt::format("DROP FUNCTION of {}, which has overloads (the server drops the one its argument types name), is not in "
                                        "lockstep's SQL subset (docs/sql.md)", name)};
    }
    if (const sql::CreateFunction* f = server_.sql_function(name)) {
      const std::string called = Server::explicit_function_name(*f);
      bool used = false;  // by a trigger
      server_.each_sql_table([&](const SqlTable& t) {
        used = used || std::ranges::any_of(t.triggers, [&](const SqlTable::Trigger& tr) { return tr.function == called; });
      });
      if (used) {
        return Error{"2BP01", fmt::format("cannot drop function {}() because other objects depend on it", name)};
      }
      server_.drop_sql_function(std::string(f->name));
      continue;
    }
    if (!d.if_exists) return Error{"42883", fmt::format("could not find a function named \"{}\"", name)};
    c_.warnings_.push_back({"00000", fmt::format("function {}() does not exist, skipping", name)});
  }
  return done(Rows{{}, {}, "DROP FUNCTION"});
}

Result<Rows> SqlRun::trigger(const sql::AlterTable& a) {
  using K = sql::AlterCommand::Kind;
  SimConnection::Statement guard(c_);
  if (auto refused = ddl_step()) return *refused;
  const sql::AlterCommand& c = a.commands.at(0);
  const bool create = c.kind == K::add_trigger;
  const std::string tag = create ? "CREATE TRIGGER" : "DROP TRIGGER";
  SqlTable* t = server_.sql_table(a.table);
  if (t == nullptr) {
    if (!a.if_exists) return Error{"42P01", fmt::format("relation \"{}\" does not exist", a.table)};
    c_.warnings_.push_back({"00000", fmt::format("relation \"{}\" does not exist, skipping", a.table)});
    return done(Rows{{}, {}, tag});
  }
  const auto same = std::ranges::find_if(t->triggers, [&](const SqlTable::Trigger& tr) { return tr.name == c.name; });
  if (!create) {
    if (same == t->triggers.end()) {
      if (!c.missing_ok) return Error{"42704", fmt::format("trigger \"{}\" for table \"{}\" does not exist", c.name, t->def.table)};
      c_.warnings_.push_back({"00000", fmt::format("trigger \"{}\" for relation \"{}\" does not exist, skipping", c.name, t->def.table)});
      return done(Rows{{}, {}, tag});
    }
    t->triggers.erase(same);
    return done(Rows{{}, {}, tag});
  }
  const sql::CreateFunction* f = server_.sql_function(c.constraint);
  if (f == nullptr) return Error{"42883", fmt::format("function {}() does not exist", c.constraint)};
  if (!f->returns_trigger) return Error{"42P17", fmt::format("function {} must return type trigger", c.constraint)};
  if (same != t->triggers.end() && !c.missing_ok) {
    return Error{"42710", fmt::format("trigger \"{}\" for relation \"{}\" already exists", c.name, t->def.table)};
  }
  SqlTable::Trigger tr{c.name, Server::explicit_function_name(*f), c.keys, c.when, c.before, c.row, c.trigger_args, c.of_columns};
  if (same != t->triggers.end()) {
    *same = std::move(tr);
  } else {
    t->triggers.push_back(std::move(tr));
  }
  return done(Rows{{}, {}, tag});
}

void SqlRun::refuse_triggers(const sql::Statement& st) {
  if (const auto* l = std::get_if<sql::LockTables>(&st.body); l != nullptr && l->maintenance == sql::LockTables::Maintenance::truncate) {
    for (const std::string& name : l->tables) {  // TRUNCATE fires statement triggers only
      const SqlTable* t = server_.sql_table(name);
      for (const SqlTable::Trigger& tr : t != nullptr ? t->triggers : std::vector<SqlTable::Trigger>{}) {
        if (std::ranges::find(tr.events, "TRUNCATE") == tr.events.end() || fires_after_statement(tr)) continue;
        throw SqlError("0A000", fmt::format("a TRUNCATE that fires the trigger \"{}\" on \"{}\" (lockstep fires AFTER ... FOR EACH STATEMENT ones "
                                            "without arguments or WHEN) is not in lockstep's SQL subset (docs/sql.md)", tr.name, name));
      }
    }
    return;
  }
  // Most statements: a SELECT, or a change of one table without triggers and without WITH
  // queries, whose deletes reach no child (no allocation on this path: statement_bench).
  const std::string* target = nullptr;
  bool deletes = false, with = false;
  if (const auto* i = std::get_if<sql::Insert>(&st.body)) {
    target = &i->table, with = !i->with.empty();
  } else if (const auto* u = std::get_if<sql::Update>(&st.body)) {
    target = &u->table, with = !u->with.empty();
  } else if (const auto* d = std::get_if<sql::Delete>(&st.body)) {
    target = &d->table, with = !d->with.empty(), deletes = true;
  } else if (const auto* q = std::get_if<sql::Select>(&st.body)) {
    with = std::ranges::any_of(q->with, [](const sql::CommonTable& w) { return w.modifying != nullptr; });
  }
  if (!with) {
    const SqlTable* t = target != nullptr ? server_.sql_table(*target) : nullptr;
    if (t == nullptr || (t->triggers.empty() && (!deletes || t->referenced_by.empty()))) return;
  }
  // The tables a statement changes and how, with the children its foreign keys' actions change.
  std::vector<std::pair<std::string, std::vector<std::string>>> changes;
  auto withs = [&](const std::vector<sql::CommonTable>& with, const auto& self) -> void {
    for (const sql::CommonTable& w : with) {
      if (w.modifying) self(*w.modifying, self);
    }
  };
  auto collect = [&](const sql::Statement& s, const auto& self) -> void {
    if (const auto* i = std::get_if<sql::Insert>(&s.body)) {
      withs(i->with, self);
      changes.push_back({i->table, {"INSERT"}});
      if (i->on_conflict == sql::Insert::OnConflict::update) changes.back().second.emplace_back("UPDATE");
    } else if (const auto* u = std::get_if<sql::Update>(&s.body)) {
      withs(u->with, self);
      changes.push_back({u->table, {"UPDATE"}});
    } else if (const auto* d = std::get_if<sql::Delete>(&s.body)) {
      withs(d->with, self);
      changes.push_back({d->table, {"DELETE"}});
    } else if (const auto* q = std::get_if<sql::Select>(&s.body)) {
      withs(q->with, self);
    }
  };
  collect(st, collect);
  const std::size_t direct = changes.size();  // after these: the children its foreign keys' actions change
  std::set<std::string> seen;
  for (std::size_t k = 0; k < changes.size(); ++k) {
    const SqlTable* t = server_.sql_table(changes[k].first);
    if (t == nullptr || !seen.insert(fmt::format("{}:{}:{}", k < direct, t->def.table, fmt::join(changes[k].second, ","))).second) continue;
    for (const SqlTable::Trigger& tr : t->triggers) {
      if (k < direct && fires_after_row(tr)) continue;  // run as the statement ends (sim/pg/executor/sql_plpgsql.cc)
      // BEFORE: as each row is written (sql_triggers.cc), by a statement that alone writes (no
      // data-modifying WITH).
      if (k == 0 && direct == 1 && target != nullptr && fires_before_row(tr)) continue;
      if (k == 0 && direct == 1 && target != nullptr && fires_after_statement(tr)) continue;  // as it ends (sql_triggers.cc)
      if (tr.when && !trigger_may_fire(*tr.when)) continue;
      for (const std::string& event : tr.events) {
        if (std::ranges::find(changes[k].second, event) == changes[k].second.end()) continue;
        throw SqlError("0A000", fmt::format("a statement that fires the trigger \"{}\" on \"{}\" ({} of its LANGUAGE plpgsql function {}(); lockstep "
                                            "fires AFTER ... FOR EACH ROW triggers without arguments, of a body it runs, on the tables a "
                                            "statement writes, and BEFORE ones and AFTER ... FOR EACH STATEMENT ones on the one table an "
                                            "INSERT, UPDATE or DELETE without a data-modifying WITH writes) is not in lockstep's SQL subset (docs/sql.md)",
                                            tr.name, t->def.table, event, sql::bare_function_name(tr.function)));
      }
    }
    // A DELETE's ON DELETE CASCADE deletes children's rows, SET NULL updates them (ON UPDATE
    // actions are refused where they would run).
    if (std::ranges::find(changes[k].second, "DELETE") == changes[k].second.end()) continue;
    for (const auto& [child, index] : t->referenced_by) {
      const SqlTable* ct = server_.sql_table(child);
      const auto action = ct == nullptr ? sql::ForeignKey::OnDelete::no_action : ct->foreign_keys.at(index).on_delete;
      if (action != sql::ForeignKey::OnDelete::no_action) changes.push_back({child, {action == sql::ForeignKey::OnDelete::cascade ? "DELETE" : "UPDATE"}});
    }
  }
}

// A trigger's WHEN that reads no row (NEW, OLD) nor subquery is the same for each row the
// statement changes (Que's `NOT coalesce(current_setting('que.skip_notify', true), '') =
// 'true'`): evaluated now, the trigger fires only where it is true. One that reads a row may.
bool SqlRun::trigger_may_fire(const Expr& when) {
  bool reads = false;
  const std::function<void(const Expr&)> walk = [&](const Expr& e) {
    reads = reads || e.kind == Expr::Kind::column || sql::is_sublink(e);
    for (const Expr& a : e.args) walk(a);
  };
  walk(when);
  if (reads) return true;
  const Saved saved = save();
  table_ = nullptr;
  row_ = nullptr;
  const Value v = sql::evaluate(when, *this);
  restore(saved);
  return sql::is_true(v, "WHEN");
}

// A LANGUAGE sql function's query body (model/sql/plan.h's CreateFunction::query_body): a
// query of its own, as the server's SQL function executor runs it, seeing none of the calling
// query's rows, its parameters by name (after its own columns) and $n; its first row's first
// column (a function that is not SETOF returns that row: no 21000 for a second).
Value SqlRun::function_body(const Expr& query, sql::EvalContext& params) {
  std::vector<Saved> callers = std::exchange(outer_, {});
  const Saved saved = save();
  sql::EvalContext* const outer_params = std::exchange(function_params_, &params);
  table_ = nullptr;
  row_ = nullptr;
  group_ = nullptr;
  struct Back {
    SqlRun& run;
    std::vector<Saved>& callers;
    const Saved& saved;
    sql::EvalContext* params;
    ~Back() {
      run.outer_ = std::move(callers);
      run.restore(saved);
      run.function_params_ = params;
    }
  } back{*this, callers, saved, outer_params};
  const std::vector<std::vector<Value>> rows = run_subquery(*query.select, /*per_row=*/true, {&*query.select, 1, nullptr});
  return rows.empty() ? Value::null() : rows.front().front();
}

// A LANGUAGE sql function's start (functions.c's init_sql_fcache, init_execution_state): every
// statement of its body parsed and planned, so each table they name is locked as their own
// statements would lock it (a DML target RowExclusiveLock), at once, in a step of the calling
// statement (waiting behind a LOCK TABLE: SqlConformance seed 120707); then a STABLE or
// IMMUTABLE function's statement that is not read-only fails (0A000), before any runs.
void SqlRun::start_sql_function(const sql::CreateFunction& f) {
  static const std::vector<Param> kNoParams;
  LOCKSTEP_INVARIANT(c_.implicit_table_locks_.empty(), "a SQL function's caller took its table locks before the call");
  std::vector<std::shared_ptr<const std::vector<sql::Statement>>> plans;
  for (const sql::PlStatement& s : f.pl->body) {
    if (s.text.empty()) continue;
    plans.push_back(cached_plans(s.text));
    SqlRun(c_, plans.back(), plans.back()->front(), kNoParams).request_table_lock();
  }
  const std::vector<SimConnection::TableLockRequest> locks = std::exchange(c_.implicit_table_locks_, {});
  c_.step(OpDesc{"sql_function", Footprint{}, 0, false});
  if (c_.killed()) throw Raised{c_.terminated()};
  if (c_.session_.aborted) throw Raised{c_.in_failed_transaction()};
  for (const SimConnection::TableLockRequest& lock : locks) {
    if (auto e = c_.take_table_lock(lock, nullptr)) throw Raised{*e};
  }
  for (const auto& p : plans) check_function_volatility(f, p->front());
}

}  // namespace lockstep::sim::pg
