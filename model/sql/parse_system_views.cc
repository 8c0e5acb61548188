// model/sql/parse_system_views.cc: the system views a SELECT may read. pg_locks is read as
// its advisory lock rows (the simulated server's lock manager; the server's other lock rows,
// of relations, transactions and virtual transactions, are not modelled), so a SELECT of it
// must keep those only: a conjunct `locktype = 'advisory'` in WHERE or in a JOIN's ON. Its
// columns virtualtransaction and waitstart (and `*`) are refused: not modelled. pg_database is
// read as the one database the simulated server has: its oid and datname (postgres, oid 5, as
// initdb makes it); its other columns are refused. pg_stat_activity is read as the simulated
// sessions' backends, by a statement that keeps one pid (`pid = x`): datid, datname, pid,
// usename, application_name, state, query and backend_type; its other columns are refused.
#include <algorithm>
#include <array>
#include <span>

#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql::detail {
namespace {

void sys_relations(const FromItem& f, std::vector<const FromItem*>& out, std::string_view view = "pg_locks") {
  if (f.kind == FromItem::Kind::table && f.table == view) out.push_back(&f);
  for (const FromItem& side : f.sides) sys_relations(side, out, view);
}

// Whether `e` (a WHERE or ON) has the conjunct locktype = 'advisory'.
bool sys_keeps_advisory(const Expr& e) {
  if (e.kind == Expr::Kind::and_) return std::any_of(e.args.begin(), e.args.end(), sys_keeps_advisory);
  if (e.kind != Expr::Kind::op || e.name != "=" || e.args.size() != 2) return false;
  for (std::size_t i = 0; i < 2; ++i) {
    const Expr& column = e.args[i];
    const Expr& constant = e.args[1 - i];
    if (column.kind == Expr::Kind::column && column.name == "locktype" && constant.kind == Expr::Kind::constant &&
        (constant.value.type() == Type::unknown || constant.value.type() == Type::text) && !constant.value.is_null() &&
        constant.value.as_text() == "advisory") {
      return true;
    }
  }
  return false;
}

// Whether `e` (a WHERE or ON) has a conjunct `pid = x` on a view named one of `names`.
bool sys_keeps_one_pid(const Expr& e, const std::vector<std::string>& names) {
  if (e.kind == Expr::Kind::and_) return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& a) { return sys_keeps_one_pid(a, names); });
  if (e.kind != Expr::Kind::op || e.name != "=" || e.args.size() != 2) return false;
  return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& c) {
    return c.kind == Expr::Kind::column && c.name == "pid" && (c.qualifier.empty() || std::find(names.begin(), names.end(), c.qualifier) != names.end());
  });
}

// Whether a join's ON keeps pg_locks' advisory rows only: an inner join's, or a LEFT JOIN's
// with pg_locks on its right (its other rows then match nothing and are dropped).
bool sys_any_on_keeps_advisory(const FromItem& f) {
  if (f.kind != FromItem::Kind::join) return false;
  std::vector<const FromItem*> right;
  if (f.left) sys_relations(f.sides.at(1), right);
  if ((!f.left || !right.empty()) && std::any_of(f.on.begin(), f.on.end(), sys_keeps_advisory)) return true;
  return std::any_of(f.sides.begin(), f.sides.end(), sys_any_on_keeps_advisory);
}

// The first column reference of `e` to one of the unmodelled columns of a view called one
// of `names` in the statement, or nullptr.
const Expr* sys_unmodelled(const Expr& e, const std::vector<std::string>& names, std::span<const std::string_view> unmodelled) {
  if (e.kind == Expr::Kind::column && std::find(unmodelled.begin(), unmodelled.end(), e.name) != unmodelled.end() &&
      (e.qualifier.empty() || std::find(names.begin(), names.end(), e.qualifier) != names.end())) {
    return &e;
  }
  for (const Expr& a : e.args) {
    if (const Expr* found = sys_unmodelled(a, names, unmodelled)) return found;
  }
  return nullptr;
}

constexpr std::array<std::string_view, 2> kLocksUnmodelled = {"virtualtransaction", "waitstart"};
constexpr std::array<std::string_view, 14> kActivityUnmodelled = {
    "leader_pid",    "usesysid",     "client_addr", "client_hostname", "client_port", "backend_start", "xact_start",
    "query_start",  "state_change",  "wait_event_type", "wait_event",   "backend_xid", "backend_xmin",  "query_id"};
constexpr std::array<std::string_view, 14> kDatabaseUnmodelled = {
    "datdba",        "encoding",     "datlocprovider", "datistemplate", "datallowconn", "datconnlimit", "datfrozenxid",
    "datminmxid",    "dattablespace", "datcollate",    "datctype",      "daticulocale", "datcollversion", "datacl"};

}  // namespace

bool Reader::is_pg_locks(const json& range_var) { return system_view(range_var) == "pg_locks"; }

std::string_view Reader::system_view(const json& range_var) {
  if (range_var.value("schemaname", "pg_catalog") != "pg_catalog") return {};
  const std::string name = range_var.value("relname", "");
  if (name == "pg_locks") return "pg_locks";
  if (name == "pg_database") return "pg_database";
  if (name == "pg_stat_activity") return "pg_stat_activity";
  return {};
}

void Reader::check_system_views(const Select& s, int fallback, bool pid_set) const {
  std::vector<const FromItem*> locks, databases, activity;
  for (const FromItem& f : s.from) {
    sys_relations(f, locks);
    sys_relations(f, databases, "pg_database");
    sys_relations(f, activity, "pg_stat_activity");
  }
  if (locks.empty() && databases.empty() && activity.empty()) return;
  if (!activity.empty()) {
    // The server lists its background processes and other clients' backends too (the isolation
    // runner's own): a statement must keep one backend, by `pid = x`.
    std::vector<std::string> names;
    for (const FromItem* v : activity) names.push_back(v->alias.empty() ? v->table : v->alias);
    // Or `x IN (SELECT pid FROM pg_stat_activity ...)` (queue_classic's dead workers): the others'
    // pids are none a session stored (pg_backend_pid()), so the set answers as the server's.
    const bool pids = pid_set && s.from.size() == 1 && s.targets.size() == 1 && s.targets[0].expr.kind == Expr::Kind::column &&
                      s.targets[0].expr.name == "pid" && !s.limit && !s.aggregate && s.group_by.empty();
    const bool kept = pids || (s.where && sys_keeps_one_pid(*s.where, names)) || std::any_of(s.from.begin(), s.from.end(), [&](const FromItem& f) {
                        return f.kind == FromItem::Kind::join && std::any_of(f.on.begin(), f.on.end(), [&](const Expr& e) { return sys_keeps_one_pid(e, names); });
                      });
    const int loc = activity.front()->location >= 0 ? activity.front()->location : fallback;
    if (!kept) refuse("pg_stat_activity without `pid = ...` in WHERE or ON (lockstep models the simulated sessions' backends only)", loc);
  }
  if (!locks.empty()) {
    const int loc = locks.front()->location >= 0 ? locks.front()->location : fallback;
    const bool kept = (s.where && sys_keeps_advisory(*s.where)) || std::any_of(s.from.begin(), s.from.end(), sys_any_on_keeps_advisory);
    if (!kept) refuse("pg_locks without `locktype = 'advisory'` in WHERE or ON (lockstep models its advisory lock rows only)", loc);
  }
  std::vector<const Expr*> exprs;
  for (const Target& t : s.targets) exprs.push_back(&t.expr);
  if (s.where) exprs.push_back(&*s.where);
  for (const OrderItem& o : s.order_by) exprs.push_back(&o.expr);
  for (const Expr& g : s.group_by) exprs.push_back(&g);
  std::vector<const FromItem*> items;
  for (const FromItem& f : s.from) items.push_back(&f);
  while (!items.empty()) {
    const FromItem* f = items.back();
    items.pop_back();
    for (const Expr& e : f->on) exprs.push_back(&e);
    for (const FromItem& side : f->sides) items.push_back(&side);
  }
  const auto check = [&](const std::vector<const FromItem*>& views, std::string_view view, std::span<const std::string_view> unmodelled) {
    if (views.empty()) return;
    const int loc = views.front()->location >= 0 ? views.front()->location : fallback;
    std::vector<std::string> names;
    for (const FromItem* v : views) names.push_back(v->alias.empty() ? v->table : v->alias);
    for (const Target& t : s.targets) {
      if (t.star && (t.star_of.empty() || std::find(names.begin(), names.end(), t.star_of) != names.end())) {
        refuse(fmt::format("* of {} (name its columns: lockstep models some)", view), loc);
      }
    }
    for (const Expr* e : exprs) {
      if (const Expr* col = sys_unmodelled(*e, names, unmodelled)) {
        refuse(fmt::format("{}.{} (not modelled)", view, col->name), col->location >= 0 ? col->location : loc);
      }
    }
  };
  check(locks, "pg_locks", kLocksUnmodelled);
  check(databases, "pg_database", kDatabaseUnmodelled);
  check(activity, "pg_stat_activity", kActivityUnmodelled);
}

}  // namespace lockstep::sql::detail
