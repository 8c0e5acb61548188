// model/sql/parse_pushdown.cc: the planner's pushing of an outer query's WHERE into its FROM
// subquery (set_subquery_pathlist's qual pushdown in allpaths.c), where it changes what runs.
//
// A subquery with ORDER BY (and no LIMIT) is not pulled up into its query; the planner then
// moves each outer condition that reads only the subquery's columns into the subquery's own
// WHERE, below its Sort. A lock call there (`SELECT id FROM (SELECT ... ORDER BY priority) s
// WHERE pg_try_advisory_lock(id) LIMIT 1`) runs on every row before the Sort, not until the
// Limit has its row: every job is locked, and a second worker's claim finds none. Rewritten
// here as the plan runs it, the executor makes the same calls.
#include "lockstep/model/sql/parse_reader.h"

#include <algorithm>
#include <map>

#include "lockstep/model/sql/functions.h"

namespace lockstep::sql::detail {
namespace {

// A call the planner never moves past (a volatile function: a lock, a sleep, a draw, a
// session's state; a function of the server's own whose volatility is not known here).
bool pushdown_volatile(const Expr& e) {
  if (e.kind == Expr::Kind::user_func) return true;
  if (e.kind == Expr::Kind::func) {
    const FunctionInfo* f = find_function(e.name);
    if (f == nullptr || f->kind == FunctionKind::advisory_lock || f->kind == FunctionKind::session || e.name == "clock_timestamp") return true;
  }
  for (const Expr& a : e.args) {
    if (pushdown_volatile(a)) return true;
  }
  return false;
}

// What keeps the subquery's rows from being filtered below its own plan (or a qual from
// moving): a set operation, LIMIT / OFFSET, DISTINCT, grouping, window functions,
// set-returning calls in its select list, a locking clause, WITH, `*`.
bool pushdown_blocked(const Select& sub) {
  if (sub.set_op || sub.limit || sub.offset || sub.distinct || !sub.distinct_on.empty() || sub.aggregate || !sub.group_by.empty() ||
      sub.having || sub.lock != RowLock::none || !sub.with.empty()) {
    return true;
  }
  const auto blocks = [](const Expr& e, const auto& self) -> bool {
    if (e.kind == Expr::Kind::window || (e.kind == Expr::Kind::func && select_list_set_returning(e.name))) return true;
    for (const Expr& a : e.args) {
      if (self(a, self)) return true;
    }
    return false;
  };
  for (const Target& t : sub.targets) {
    if (t.star || t.expand || blocks(t.expr, blocks)) return true;
  }
  return false;
}

class QualPushdown {
 public:
  QualPushdown(const Select& sub, const FromItem& f) : name_(from_item_name(f)) {
    for (std::size_t i = 0; i < sub.targets.size(); ++i) {
      const std::string& output = i < f.column_aliases.size() ? f.column_aliases[i] : sub.targets[i].name;
      const auto [it, fresh] = outputs_.emplace(output, &sub.targets[i].expr);
      if (!fresh) it->second = nullptr;  // two of that name: the executor's 42702
    }
  }

  // Whether qual reads only the subquery's columns, none of them volatile, and holds no subquery.
  bool pushable(const Expr& e) const {
    if (is_sublink(e) || e.kind == Expr::Kind::window || e.kind == Expr::Kind::field) return false;
    if (e.kind == Expr::Kind::func) {
      const FunctionInfo* f = find_function(e.name);
      if (f != nullptr && f->kind == FunctionKind::aggregate) return false;
    }
    if (e.kind == Expr::Kind::column) {
      if (!e.qualifier.empty() && e.qualifier != name_) return false;
      const auto it = outputs_.find(e.name);
      return it != outputs_.end() && it->second != nullptr && !pushdown_volatile(*it->second);
    }
    for (const Expr& a : e.args) {
      if (!pushable(a)) return false;
    }
    return true;
  }

  // qual with each column replaced by the subquery's expression for it. REQUIRES: pushable(qual).
  Expr substituted(Expr e) const {
    if (e.kind == Expr::Kind::column) {
      Expr out = *outputs_.at(e.name);
      return out;
    }
    for (Expr& a : e.args) a = substituted(std::move(a));
    return e;
  }

 private:
  std::string name_;
  std::map<std::string, const Expr*> outputs_;
};

// How many times the statement's FROM clauses name `cte` (a WITH query), at any depth.
int cte_references(const Select& s, const std::string& cte);

int cte_references(const Expr& e, const std::string& cte) {
  int n = e.select != nullptr ? cte_references(*e.select, cte) : 0;
  for (const Expr& a : e.args) n += cte_references(a, cte);
  return n;
}

int cte_references(const FromItem& f, const std::string& cte) {
  int n = f.kind == FromItem::Kind::table && f.table == cte ? 1 : 0;
  if (f.select != nullptr) n += cte_references(*f.select, cte);
  for (const FromItem& side : f.sides) n += cte_references(side, cte);
  for (const Expr& on : f.on) n += cte_references(on, cte);
  for (const Expr& call : f.function) n += cte_references(call, cte);
  return n;
}

int cte_references(const Select& s, const std::string& cte) {
  int n = s.table == cte ? 1 : 0;
  if (s.set_op) n += cte_references(*s.set_op->left, cte) + cte_references(*s.set_op->right, cte);
  for (const CommonTable& w : s.with) n += w.select != nullptr ? cte_references(*w.select, cte) : 0;
  for (const FromItem& f : s.from) n += cte_references(f, cte);
  for (const Target& t : s.targets) n += cte_references(t.expr, cte);
  for (const std::optional<Expr>* e : {&s.where, &s.having, &s.limit, &s.offset}) n += *e ? cte_references(**e, cte) : 0;
  for (const OrderItem& o : s.order_by) n += cte_references(o.expr, cte);
  for (const std::vector<Expr>* list : {&s.group_by, &s.distinct_on}) {
    for (const Expr& e : *list) n += cte_references(e, cte);
  }
  return n;
}

// The WITH query the FROM item names, where the planner inlines it as a subquery (inline_cte:
// a SELECT, not recursive nor MATERIALIZED, read once, calling nothing volatile) and it has
// ORDER BY: its index in s.with, or -1.
int inlined_cte(const Select& s, const FromItem& f) {
  if (f.kind != FromItem::Kind::table) return -1;
  for (std::size_t i = 0; i < s.with.size(); ++i) {
    const CommonTable& w = s.with[i];
    if (w.name != f.table) continue;
    if (w.select == nullptr || w.recursive || w.materialized || w.select->order_by.empty() || w.select->lock != RowLock::none) return -1;
    const auto volatile_target = [](const Target& t) { return pushdown_volatile(t.expr); };
    if (std::any_of(w.select->targets.begin(), w.select->targets.end(), volatile_target) || (w.select->where && pushdown_volatile(*w.select->where))) return -1;
    return cte_references(s, w.name) == 1 ? static_cast<int>(i) : -1;
  }
  return -1;
}

Expr conjunction(std::vector<Expr> conjuncts) {
  if (conjuncts.size() == 1) return std::move(conjuncts.front());
  Expr all;
  all.kind = Expr::Kind::and_;
  all.args = std::move(conjuncts);
  return all;
}

}  // namespace

void push_quals_into_subquery(Select& s) {
  if (!s.where || s.from.size() > 1 || (s.table.empty() && s.from.empty())) return;
  if (!s.table.empty()) {  // FROM a WITH query the planner inlines: a subquery of its query
    FromItem named;
    named.table = s.table;
    named.alias = s.alias;
    const int i = inlined_cte(s, named);
    if (i < 0) return;
    Select inlined = s;
    FromItem& f = inlined.from.emplace_back();
    f.kind = FromItem::Kind::subquery;
    f.select = inlined.with[static_cast<std::size_t>(i)].select;
    f.alias = s.alias.empty() ? s.table : s.alias;
    f.column_aliases = inlined.with[static_cast<std::size_t>(i)].column_names;
    inlined.table.clear();
    inlined.alias.clear();
    inlined.with.erase(inlined.with.begin() + i);
    const std::shared_ptr<const Select> before = f.select;
    push_quals_into_subquery(inlined);
    if (inlined.from.front().select != before) s = std::move(inlined);  // only where a condition moved
    return;
  }
  FromItem& f = s.from.front();
  if (f.kind != FromItem::Kind::subquery || f.lateral || f.select == nullptr || f.select->order_by.empty() || pushdown_blocked(*f.select)) {
    return;  // (without ORDER BY the planner pulls the subquery up: its scan filters as it reads)
  }
  const QualPushdown pushdown(*f.select, f);
  std::vector<Expr> conjuncts = s.where->kind == Expr::Kind::and_ ? s.where->args : std::vector<Expr>{*s.where};
  std::vector<Expr> kept, pushed;
  for (Expr& c : conjuncts) {
    if (pushdown.pushable(c)) {
      pushed.push_back(pushdown.substituted(std::move(c)));
    } else {
      kept.push_back(std::move(c));
    }
  }
  if (pushed.empty()) return;
  auto inner = std::make_shared<Select>(*f.select);
  if (inner->where) pushed.insert(pushed.begin(), std::move(*inner->where));
  inner->where = conjunction(std::move(pushed));
  f.select = std::move(inner);
  if (kept.empty()) {
    s.where.reset();
  } else {
    s.where = conjunction(std::move(kept));
  }
}

}  // namespace lockstep::sql::detail
