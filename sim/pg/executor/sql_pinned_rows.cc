// sim/pg/executor/sql_pinned_rows.cc: the row a statement's WHERE pins by its whole primary key (sim/pg/executor/sql_run.h:
// pinned_row): such a statement touches that row only, so its first step is on the row's
// object rather than a scan of the table. Keys of array or bit columns are never pinned.
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

namespace {

// Whether evaluating `e` may wait (an advisory lock function that blocks, pg_sleep): a
// WHERE that does is no pinned row's, since the server reads the row on the statement's
// snapshot before its qual waits (the lock step comes after), as the scan does.
bool pin_where_may_wait(const Expr& e) {
  if (e.kind == Expr::Kind::constant) return false;  // folded: its kept arguments never run
  if (e.kind == Expr::Kind::func &&
      (e.name == "pg_advisory_lock" || e.name == "pg_advisory_xact_lock" || e.name == "pg_advisory_lock_shared" ||
       e.name == "pg_advisory_xact_lock_shared" || e.name == "pg_sleep" || e.name == "pg_sleep_for" || e.name == "pg_sleep_until")) {
    return true;
  }
  return std::any_of(e.args.begin(), e.args.end(), [](const Expr& a) { return pin_where_may_wait(a); });
}

}  // namespace

std::vector<const Expr*> SqlRun::key_values(const SqlTable& t, std::string_view alias, const Expr& where) const {
  if (pin_where_may_wait(where)) return {};
  auto fixed = [this](const Expr& e) {
    const Expr* x = &e;
    while (x->kind == Expr::Kind::cast) x = &x->args[0];
    // (a plpgsql variable is a Param to the server's planner: exec_prepare_plan)
    return x->kind == Expr::Kind::constant || x->kind == Expr::Kind::param ||
           (x->kind == Expr::Kind::column && function_params_ != nullptr && function_params_->names_variable(*x));
  };
  // The constant or $n an equality among WHERE's conjuncts gives the column, or nullptr.
  auto value_for = [&](const sql::ColumnDef& col) {
    const Expr* value = nullptr;
    auto visit = [&](const Expr& c, const auto& self) -> void {
      if (value != nullptr) return;
      if (c.kind == Expr::Kind::and_) {
        for (const Expr& a : c.args) self(a, self);
        return;
      }
      if (c.kind != Expr::Kind::op || c.name != "=") return;
      for (int side = 0; side < 2 && value == nullptr; ++side) {
        const Expr& l = c.args[static_cast<std::size_t>(side)];
        const Expr& r = c.args[static_cast<std::size_t>(1 - side)];
        if (l.kind == Expr::Kind::column && l.name == col.name && (l.qualifier.empty() || l.qualifier == t.def.table || l.qualifier == alias) &&
            fixed(r)) {
          value = &r;
        }
      }
    };
    visit(where, visit);
    return value;
  };
  std::vector<const Expr*> values;
  for (int i : t.key) {
    const Expr* value = value_for(t.def.columns[static_cast<std::size_t>(i)]);
    if (value == nullptr) return {};
    values.push_back(value);
  }
  return values;
}

std::optional<std::int64_t> SqlRun::pinned_row(SqlTable& t, const std::string& alias, const std::optional<Expr>& where) {
  // A SERIALIZABLE transaction's read takes its SIREAD locks (the key's leaf and the tuple)
  // in a scan (SqlSsi::plan_scan): its statements are not pinned (SqlConformance seed 95010,
  // a 40001 missed: a pinned UPDATE's key read did not lock the leaf an INSERT then wrote).
  if (!where || t.key.empty() || c_.serializable_) return std::nullopt;
  const std::vector<const Expr*>* values = nullptr;
  for (const SqlTable::Pins& p : t.pins) {
    if (p.where == &*where && p.plan.get() == plans_.get()) values = &p.values;
  }
  if (values == nullptr) {
    std::vector<const Expr*> found = key_values(t, alias, *where);
    if (plans_ == nullptr) return key_row(t, found);
    values = &t.pins.emplace_back(SqlTable::Pins{plans_, &*where, std::move(found)}).values;
  }
  return key_row(t, *values);
}

std::optional<std::int64_t> SqlRun::key_row(SqlTable& t, const std::vector<const Expr*>& values) {
  if (values.empty()) return std::nullopt;
  std::string key;  // as id_of() makes it
  for (std::size_t k = 0; k < values.size(); ++k) {
    table_ = nullptr;
    const Value v = sql::evaluate(*values[k], *this);
    if (v.is_null()) return std::nullopt;
    const sql::ColumnDef& col = t.def.columns[static_cast<std::size_t>(t.key[k])];
    if (col.type == Type::array || col.type == Type::bit || col.type == Type::bpchar) return std::nullopt;  // not pinned: the scan finds it
    key += sql::cast_to_column(v, col.type, col.user_type).text_output();
    key += '\x1f';
  }
  return id_of_key(t, std::move(key));
}

}  // namespace lockstep::sim::pg
