// model/sql/parse_grouping.cc: the reader's GROUP BY and its analysis of aggregates (none in
// WHERE or GROUP BY, no ungrouped column outside one, a grouped primary key's columns left to
// the run), and window functions (OVER): part of model/sql/parse.h's parser.
#include <algorithm>
#include <functional>
#include <utility>

#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql {
namespace detail {

const Target* Reader::target_at_position(const Select& s, const Expr& e, std::string_view clause) const {
  if (e.kind != Expr::Kind::constant || e.folded || !is_integer(e.value.type())) return nullptr;
  const std::int64_t n = e.value.as_integer();
  if (n < 1 || n > static_cast<std::int64_t>(s.targets.size()) || s.targets[static_cast<std::size_t>(n) - 1].star) {
    fail("42P10", fmt::format("{} position {} is not in select list", clause, n), e.location);
  }
  return &s.targets[static_cast<std::size_t>(n) - 1];
}

// A bare name in GROUP BY that is no input column but an output column's name stands for that
// column's expression (findTargetlistEntrySQL92); nullptr when no other target is so named.
// Two targets of that name with different expressions are ambiguous (42702).
const Target* Reader::output_column_named(const Select& s, const Expr& e) const {
  if (e.kind != Expr::Kind::column || !e.qualifier.empty()) return nullptr;
  const Target* found = nullptr;
  for (const Target& t : s.targets) {
    if (t.star || t.expand || t.name != e.name) continue;
    if (found != nullptr && !same_expr(found->expr, t.expr)) fail("42702", fmt::format("GROUP BY \"{}\" is ambiguous", e.name), e.location);
    found = &t;
  }
  // A target that is that very column needs no replacing.
  if (found == nullptr || (found->expr.kind == Expr::Kind::column && found->expr.name == e.name)) return nullptr;
  return found;
}

const Expr* Reader::user_call_over(const Expr& e, const std::vector<Expr>& groups) {
  if (e.kind == Expr::Kind::user_func) {
    for (const Expr& a : e.args) {
      if (ungrouped_column(a, groups) != nullptr) return &e;
    }
  }
  if (e.kind == Expr::Kind::subquery || e.kind == Expr::Kind::exists) return nullptr;
  for (const Expr& a : e.args) {
    if (const Expr* call = user_call_over(a, groups)) return call;
  }
  return nullptr;
}

Expr Reader::group_item(const json& item, Select& s, int fallback) {
  Expr e = expr(item, fallback);
  if (const Target* t = target_at_position(s, e, "GROUP BY")) {
    e = t->expr;
  } else if (const Target* named = output_column_named(s, e)) {
    s.group_by_output_names.push_back(e.name);
    e = named->expr;
  }
  if (const Expr* a = aggregate_in(e)) fail("42803", "aggregate functions are not allowed in GROUP BY", a->location);
  return e;
}

std::vector<std::vector<Expr>> Reader::grouping_sets_of(const json& item, Select& s, int fallback, bool top) {
  const auto [type, body] = node(item);
  const int loc = location_of(*body, fallback);
  if (type == "RowExpr" && !top) {  // (a, b) inside ROLLUP, CUBE or GROUPING SETS: one set of them
    if (body->value("row_format", "") != "COERCE_IMPLICIT_CAST") refuse("ROW(...) inside ROLLUP, CUBE or GROUPING SETS", loc);
    std::vector<Expr> set;
    if (body->contains("args")) {
      for (const json& a : body->at("args")) set.push_back(group_item(a, s, loc));
    }
    return {std::move(set)};
  }
  if (type != "GroupingSet") return {{group_item(item, s, fallback)}};
  known(*body, "GroupingSet", {"kind", "content", "location"}, loc);
  const std::string kind = body->value("kind", "");
  std::vector<std::vector<Expr>> parts;  // ROLLUP's and CUBE's elements, each one set
  if (kind != "GROUPING_SET_SETS" && body->contains("content")) {
    for (const json& c : body->at("content")) {
      auto sets = grouping_sets_of(c, s, loc, false);
      if (sets.size() != 1) refuse("a grouping set inside ROLLUP or CUBE", loc);
      parts.push_back(std::move(sets.front()));
    }
  }
  std::vector<std::vector<Expr>> out;
  auto concat = [](std::vector<Expr>& into, const std::vector<Expr>& more) { into.insert(into.end(), more.begin(), more.end()); };
  if (kind == "GROUPING_SET_EMPTY") {
    out.emplace_back();
  } else if (kind == "GROUPING_SET_SIMPLE") {
    out.emplace_back();
    for (const auto& p : parts) concat(out.back(), p);
  } else if (kind == "GROUPING_SET_ROLLUP") {  // (e1 ... en), (e1 ... en-1), ..., ()
    for (std::size_t n = parts.size() + 1; n-- > 0;) {
      out.emplace_back();
      for (std::size_t i = 0; i < n; ++i) concat(out.back(), parts[i]);
    }
  } else if (kind == "GROUPING_SET_CUBE") {  // every subset, by the bits of 0 .. 2^n - 1
    if (parts.size() > 12) fail("54011", "CUBE is limited to 12 elements", loc);
    for (std::uint32_t mask = 0; mask < (1U << parts.size()); ++mask) {
      out.emplace_back();
      for (std::size_t i = 0; i < parts.size(); ++i) {
        if ((mask >> i) & 1U) concat(out.back(), parts[i]);
      }
    }
  } else if (kind == "GROUPING_SET_SETS" && body->contains("content")) {
    for (const json& c : body->at("content")) {
      for (auto& set : grouping_sets_of(c, s, loc, false)) out.push_back(std::move(set));
    }
  } else if (kind != "GROUPING_SET_SETS") {
    refuse(fmt::format("the grouping set {}", kind), loc);
  }
  return out;
}

// GROUP BY's items: expressions, or positions in the select list (GROUP BY 1); with GROUPING
// SETS, ROLLUP or CUBE among them, the sets expand_grouping_sets makes of them (each item's
// sets, their cross product, each set's items once, shortest sets first: a stable sort, as
// the server's qsort is below 7 sets, the most whose order lockstep imitates), the distinct
// items in group_by.
void Reader::group_by(const json& items, Select& s, int fallback) {
  bool sets = false;
  for (const json& item : items) sets = sets || node(item).first == "GroupingSet";
  if (!sets) {
    for (const json& item : items) s.group_by.push_back(group_item(item, s, fallback));
    return;
  }
  std::vector<std::vector<std::size_t>> product{{}};
  for (const json& item : items) {
    std::vector<std::vector<std::size_t>> next;
    const std::vector<std::vector<Expr>> alternatives = grouping_sets_of(item, s, fallback, true);
    std::vector<std::vector<std::size_t>> indexed;
    for (const std::vector<Expr>& set : alternatives) {
      std::vector<std::size_t>& ids = indexed.emplace_back();
      for (const Expr& e : set) {
        if (e.kind != Expr::Kind::column) refuse("an expression other than a column in GROUPING SETS, ROLLUP or CUBE", e.location);
        std::size_t i = 0;
        while (i < s.group_by.size() && !same_expr(s.group_by[i], e)) ++i;
        if (i == s.group_by.size()) s.group_by.push_back(e);
        ids.push_back(i);
      }
    }
    if (product.size() * indexed.size() > 4096) fail("54001", "too many grouping sets present (maximum 4096)", fallback);
    for (const auto& q : product) {
      for (const auto& p : indexed) {
        std::vector<std::size_t> united = q;  // list_union_int: q's, then p's not in it
        for (std::size_t i : p) {
          if (std::find(united.begin(), united.end(), i) == united.end()) united.push_back(i);
        }
        next.push_back(std::move(united));
      }
    }
    product = std::move(next);
  }
  if (s.group_by.size() > 32) refuse("GROUPING SETS, ROLLUP or CUBE over more than 32 columns", fallback);
  std::stable_sort(product.begin(), product.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  s.grouping_sets = std::move(product);
}

// PostgreSQL's analysis of aggregates and GROUP BY: none in WHERE, no column outside an
// aggregate that is not grouped (a grouped expression's columns are; with a GROUP BY of
// columns, one may also be a grouped primary key's table's: Select::grouped_by_key).
void Reader::check_aggregates(Select& s, int fallback) {
  // GROUPING(a, b): each argument is a GROUP BY item of this query, kept as its number.
  const std::function<void(Expr&)> grouping = [&](Expr& e) {
    if (e.kind == Expr::Kind::func && e.name == "grouping") {
      if (e.args.size() > 31) fail("54023", "GROUPING must have fewer than 32 arguments", e.location);
      for (Expr& a : e.args) {
        const auto it = std::find_if(s.group_by.begin(), s.group_by.end(), [&](const Expr& g) { return same_expr(g, a); });
        if (it == s.group_by.end()) fail("42803", "arguments to GROUPING must be grouping expressions of the associated query level", a.location);
        const int at = a.location;
        a = Expr{.value = Value::integer(it - s.group_by.begin(), Type::int4)};
        a.location = at;
      }
      return;
    }
    if (!is_sublink(e)) std::for_each(e.args.begin(), e.args.end(), grouping);
  };
  for (Target& t : s.targets) grouping(t.expr);
  if (s.having) grouping(*s.having);
  for (OrderItem& o : s.order_by) grouping(o.expr);
  if (const Expr* a = s.where ? aggregate_in(*s.where) : nullptr; a != nullptr && a->name == "grouping") {
    fail("42803", "grouping operations are not allowed in WHERE", a->location);
  }
  s.aggregate = !s.group_by.empty() || !s.grouping_sets.empty() || s.having.has_value();
  for (const Target& t : s.targets) s.aggregate = s.aggregate || aggregate_in(t.expr) != nullptr;
  if (const Expr* a = s.where ? aggregate_in(*s.where) : nullptr) {
    fail("42803", "aggregate functions are not allowed in WHERE", a->location);
  }
  if (!s.aggregate) return;
  // A GROUP BY of plain columns may name a table's primary key, which determines the table's
  // other columns: whether it does is known when the statement runs (SqlRun).
  // (With grouping sets, only an item of every set: parseCheckAggregates' gset_common.)
  const bool may_group_by_key = [&] {
    for (std::size_t i = 0; i < s.group_by.size(); ++i) {
      const bool common = std::all_of(s.grouping_sets.begin(), s.grouping_sets.end(),
                                      [&](const auto& set) { return std::find(set.begin(), set.end(), i) != set.end(); });
      if (common && s.group_by[i].kind == Expr::Kind::column) return true;
    }
    return false;
  }();
  std::function<void(const Expr&)> check = [&](const Expr& e) {
    if (const Expr* c = ungrouped_column(e, s.group_by)) {
      if (const Expr* call = user_call_over(e, s.group_by)) {  // jsonb_object_agg(k, v), say: an aggregate the subset lacks?
        refuse(fmt::format("the function {}() over a grouped query's rows", call->name), call->location);
      }
      if (c->qualifier.empty() && !s.table.empty() && c->name == (s.alias.empty() ? s.table : s.alias)) {
        refuse("a whole-row reference outside an aggregate of a grouped query", c->location);
      }
      if (may_group_by_key) {  // every such column, for the run-time check
        if (std::none_of(s.group_by.begin(), s.group_by.end(), [&](const Expr& g) { return same_expr(g, e); })) {
          if (e.kind == Expr::Kind::column) {
            s.grouped_by_key.push_back(e);
            return;
          }
          for (const Expr& a : e.args) check(a);
        }
        return;
      }
      // The server names the column by its relation (its alias when it has one).
      const std::string name = (c->qualifier.empty() ? (s.alias.empty() ? s.table : s.alias) : c->qualifier) + "." + c->name;
      fail("42803", fmt::format("column \"{}\" must appear in the GROUP BY clause or be used in an aggregate function", name),
           c->location);
    }
  };
  for (const Target& t : s.targets) {
    if (t.star) fail("42803", "column \"*\" must appear in the GROUP BY clause or be used in an aggregate function", fallback);
    check(t.expr);
  }
  if (s.having) check(*s.having);
  for (const OrderItem& o : s.order_by) {
    if (!(o.expr.kind == Expr::Kind::constant && !o.expr.folded && is_integer(o.expr.value.type()))) check(o.expr);
  }
  if (!s.grouping_sets.empty() && !s.grouped_by_key.empty()) {
    refuse("a column a grouped primary key determines beside GROUPING SETS, ROLLUP or CUBE", s.grouped_by_key.front().location);
  }
  if (s.lock != RowLock::none) {  // CheckSelectLocking's order: GROUP BY, HAVING, then aggregates
    fail("0A000", fmt::format("{} is not allowed with {}", lock_clause_name(s.lock), !s.group_by.empty() ? "GROUP BY clause" : s.having ? "HAVING clause" : "aggregate functions"),
         fallback);
  }
}

Expr Reader::window_call(const json& body, Expr e, const std::string& name) {
  const int loc = e.location;
  // River's ROW_NUMBER() OVER (PARTITION BY unique_key ORDER BY ...): the ranking functions;
  // lag / lead (offset and default), first_value / last_value and the aggregates count, sum,
  // min, max, avg over the default frame (the partition up to the row's last peer in ORDER
  // BY; without ORDER BY, the whole partition). Other frames are refused.
  static constexpr std::string_view kRanking[] = {"row_number", "rank", "dense_rank"};
  static constexpr std::string_view kValued[] = {"lag", "lead", "first_value", "last_value", "count", "sum", "min", "max", "avg"};
  const bool ranking = std::find(std::begin(kRanking), std::end(kRanking), name) != std::end(kRanking);
  if (!ranking && std::find(std::begin(kValued), std::end(kValued), name) == std::end(kValued)) {
    refuse(fmt::format("the window function {}() OVER", name), loc);
  }
  known(body, "FuncCall", {"funcname", "over", "funcformat", "location", "args", "agg_star"}, loc);
  const std::size_t given = body.contains("args") ? body.at("args").size() : 0;
  const bool star = body.value("agg_star", false);
  if (star && name != "count") fail("42809", fmt::format("{}(*) specified, but {} is not an aggregate function", name, name), loc);
  const std::size_t most = ranking ? 0 : name == "lag" || name == "lead" ? 3 : 1, least = ranking || star ? 0 : 1;
  if (given < least || given > most || (star && given > 0)) {
    fail("42883", fmt::format("function {}() does not exist with {} arguments", name, given), loc);
  }
  const json over = named_window(body.at("over"), loc);
  if (!window_allowed_) refuse("a window function outside a select list", loc);
  constexpr int kDefaultFrame = 0x2 | 0x20 | 0x400;  // RANGE UNBOUNDED PRECEDING AND CURRENT ROW (FRAMEOPTION_DEFAULTS)
  if (over.value("frameOptions", kDefaultFrame) != kDefaultFrame) refuse("a window frame clause (ROWS / RANGE / GROUPS ...)", loc);
  if (given > 0) {
    const bool outer = std::exchange(window_allowed_, false);  // window function calls cannot be nested
    for (const json& a : body.at("args")) e.args.push_back(expr(a, loc));
    window_allowed_ = outer;
  }
  e.star = star;
  auto window = std::make_shared<Select>();
  if (over.contains("partitionClause")) {
    for (const json& p : over.at("partitionClause")) window->order_by.push_back(OrderItem{expr(p, loc)});
  }
  e.number = static_cast<int>(window->order_by.size());
  if (over.contains("orderClause")) {
    for (const json& o : over.at("orderClause")) window->order_by.push_back(order_item(o, loc));
  }
  e.kind = Expr::Kind::window;
  e.name = name;
  e.select = std::move(window);
  return e;
}

json Reader::named_window(const json& over, int loc, std::size_t depth) const {
  known(over, "WindowDef", {"name", "refname", "partitionClause", "orderClause", "frameOptions", "startOffset", "endOffset", "location"}, loc);
  // OVER w names a window of the WINDOW clause as it is; OVER (w ...) and WINDOW x AS (w ...)
  // copy w's (an earlier one's) and add to it.
  const auto window_named = [&](const std::string& wanted) -> const json& {
    if (windows_ != nullptr && depth < windows_->size()) {
      for (const json& w : *windows_) {
        const json& def = w.contains("WindowDef") ? w.at("WindowDef") : w;
        if (def.value("name", "") == wanted) return def;
      }
    }
    fail("42704", fmt::format("window \"{}\" does not exist", wanted), loc);
  };
  const bool definition = depth > 0;  // a WINDOW clause's entry: its name is its own
  if (!definition && over.contains("name")) return named_window(window_named(over.at("name")), loc, depth + 1);
  json merged = over;
  merged.erase("name");
  if (!over.contains("refname")) return merged;
  const std::string ref = over.at("refname");
  merged.erase("refname");
  const json base = named_window(window_named(ref), loc, depth + 1);
  constexpr int kDefaultFrame = 0x2 | 0x20 | 0x400;
  if (over.contains("partitionClause")) fail("42P20", fmt::format("cannot override PARTITION BY clause of window \"{}\"", ref), loc);
  if (over.contains("orderClause") && base.contains("orderClause")) {
    fail("42P20", fmt::format("cannot override ORDER BY clause of window \"{}\"", ref), loc);
  }
  if (base.value("frameOptions", kDefaultFrame) != kDefaultFrame) {
    fail("42P20", fmt::format("cannot copy window \"{}\" because it has a frame clause", ref), loc);
  }
  for (const char* k : {"partitionClause", "orderClause"}) {
    if (base.contains(k)) merged[k] = base.at(k);
  }
  return merged;
}

void Reader::check_window_clause(const json& windows, int loc) const {
  std::vector<std::string> names;
  for (const json& w : windows) {
    const std::string name = (w.contains("WindowDef") ? w.at("WindowDef") : w).value("name", "");
    if (std::find(names.begin(), names.end(), name) != names.end()) fail("42P20", fmt::format("window \"{}\" is already defined", name), loc);
    names.push_back(name);
  }
}

}  // namespace detail
}  // namespace lockstep::sql
