// sim/pg/executor/sql_scan_choice.cc: the planner's scan choice for one table never analyzed
// (sql_scan_choice.h): costsize.c (cost_seqscan, cost_index, cost_bitmap_heap_scan,
// index_pages_fetched), selfuncs.c (btcostestimate, genericcostestimate, eqsel, scalarineqsel,
// scalararraysel, nulltestsel without statistics), clausesel.c's range pairs and pathnode.c's
// add_path with its 1% fuzz, then the cheapest total or fractional path.
#include "lockstep/sim/pg/executor/sql_scan_choice.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "lockstep/model/sql/arrays.h"
#include "lockstep/sim/pg/executor/sql_hash_aggregate.h"

namespace lockstep::sim::pg {
namespace {

using sql::Expr;

constexpr double kRandomPage = 4.0, kTuple = 0.01, kIndexTuple = 0.005, kOperator = 0.0025;
constexpr double kPages = 10;  // a table never vacuumed is estimated at 10 pages at least
constexpr double kFuzz = 1.01;  // add_path's STD_FUZZ_FACTOR

struct Path {
  ScanPick pick = ScanPick::seq;
  std::size_t index = 0;  // into the candidate indexes
  double startup = 0, total = 0;
};

// A btree the planner may scan: its key columns, and whether it is unique (no predicate).
struct Btree {
  std::vector<int> columns;
  bool unique = false;
};

// A conjunct of WHERE as the estimates read it.
struct Conjunct {
  const Expr* e = nullptr;
  int column = -1;        // the table's column it restricts (-1: none known)
  bool equality = false;  // =, IN (...), = ANY (...), IS NULL: a btree's bound continues past it
  bool index_qual = false;  // a btree may check it (a column against a value)
  double saop = 1;          // IN / = ANY: the array's elements
  std::optional<double> selectivity;  // alone (a range side: 1/3, paired below)
  char range = 0;                     // '<' or '>': a range's side
  std::optional<double> cost;         // per tuple, and its comparison value's (an index qual's startup)
  double value_cost = 0;
  std::vector<Conjunct> arms;  // an OR whose every arm is an index qual: a BitmapOr's
};

double list_selectivity(const std::vector<const Conjunct*>& cs, double unknown);

class Model {
 public:
  Model(const SqlTable& t, std::string_view alias, sql::EvalContext& run, sql::EvalContext* variables)
      : t_(t), alias_(alias), run_(run), variables_(variables) {}

  int own_column(const Expr& e) const {
    if (e.kind != Expr::Kind::column) return -1;
    if (variables_ != nullptr && variables_->names_variable(e)) return -1;
    if (!e.qualifier.empty() && e.qualifier != alias_ && e.qualifier != t_.def.table) return -1;
    return t_.column(e.name);
  }
  // An expression of no column of the table (a pseudo-constant to the planner), with its cost
  // per evaluation; nullopt for anything else.
  std::optional<double> value_cost(const Expr& e) const {
    switch (e.kind) {
      case Expr::Kind::constant:
      case Expr::Kind::param:
      case Expr::Kind::subquery: return 0.0;  // an InitPlan's Param
      case Expr::Kind::column: return variables_ != nullptr && variables_->names_variable(e) ? std::optional<double>(0.0) : std::nullopt;
      case Expr::Kind::cast:
        if (!e.args.empty() && (e.args[0].kind == Expr::Kind::constant || e.args[0].kind == Expr::Kind::param)) return 0.0;  // folded
        return std::nullopt;
      case Expr::Kind::array: {
        for (const Expr& a : e.args) {
          if (a.kind != Expr::Kind::constant && a.kind != Expr::Kind::param) return std::nullopt;
        }
        return 0.0;  // folded to a constant array
      }
      case Expr::Kind::func:
        if (!e.args.empty() || (e.name != "now" && e.name != "current_timestamp" && e.name != "transaction_timestamp" &&
                                e.name != "statement_timestamp")) {
          return std::nullopt;
        }
        return kOperator;
      case Expr::Kind::op: {
        double sum = kOperator;
        for (const Expr& a : e.args) {
          const auto c = value_cost(a);
          if (!c) return std::nullopt;
          sum += *c;
        }
        return sum;
      }
      default: return std::nullopt;
    }
  }
  std::optional<sql::Value> value(const Expr& e) const {
    if (e.kind == Expr::Kind::constant) return e.value;
    if (e.kind == Expr::Kind::param) return run_.param(e.number);
    if (e.kind == Expr::Kind::column && variables_ != nullptr && variables_->names_variable(e)) return variables_->column(e);
    if (e.kind == Expr::Kind::cast && value_cost(e)) return sql::evaluate(e, run_);
    return std::nullopt;
  }

  // eqsel without statistics: 1/tuples for a column a one-column unique index holds, 1/2 for a
  // boolean, else 1/200 (or 1/tuples below 200 tuples); 0 for NULL.
  double eq_selectivity(int c, const std::optional<sql::Value>& v, double tuples) const {
    if (v && v->is_null()) return 0;
    if (single_unique(c)) return 1.0 / tuples;
    if (t_.def.columns[static_cast<std::size_t>(c)].type == sql::Type::boolean) return 0.5;
    return 1.0 / (tuples < 200 ? std::max(1.0, std::rint(tuples)) : 200.0);
  }
  bool single_unique(int c) const {
    if (t_.key.size() == 1 && t_.key.front() == c) return true;
    return std::any_of(t_.unique.begin(), t_.unique.end(), [&](const SqlTable::UniqueKey& u) {
      return !u.where && u.expressions.empty() && u.columns.size() == 1 && u.columns.front() == c;
    });
  }

  Conjunct read(const Expr& e, double tuples) const {
    Conjunct out{.e = &e};
    static constexpr std::string_view kComparisons[] = {"=", "<", "<=", ">", ">=", "<>", "!="};
    switch (e.kind) {
      case Expr::Kind::op: {
        if (e.args.size() != 2 || std::find(std::begin(kComparisons), std::end(kComparisons), e.name) == std::end(kComparisons)) break;
        const bool left = own_column(e.args[0]) >= 0;
        const Expr& col = left ? e.args[0] : e.args[1];
        const Expr& other = left ? e.args[1] : e.args[0];
        out.column = own_column(col);
        const auto vc = value_cost(other);
        if (out.column < 0 || !vc) break;
        out.cost = kOperator + *vc;
        out.value_cost = *vc;
        std::string op = e.name;
        if (!left && op != "=" && op != "<>" && op != "!=") op = op[0] == '<' ? ">" + op.substr(1) : "<" + op.substr(1);  // commuted
        if (op == "=") {
          out.equality = out.index_qual = true;
          out.selectivity = eq_selectivity(out.column, value(other), tuples);
        } else if (op == "<>" || op == "!=") {
          out.selectivity = 1 - eq_selectivity(out.column, value(other), tuples);
        } else {
          out.index_qual = true;
          out.range = op[0];
          out.selectivity = 1.0 / 3;
        }
        break;
      }
      case Expr::Kind::between: {
        out.column = e.negated ? -1 : own_column(e.args.at(0));
        const auto lo = value_cost(e.args.at(1)), hi = value_cost(e.args.at(2));
        if (out.column < 0 || !lo || !hi) break;
        out.cost = 2 * kOperator + *lo + *hi;
        out.value_cost = *lo + *hi;
        out.index_qual = true;
        out.range = 'b';  // both sides: a range of its own (DEFAULT_RANGE_INEQ_SEL)
        out.selectivity = 0.005;
        break;
      }
      case Expr::Kind::in_list:
      case Expr::Kind::quantified: {
        if (e.kind == Expr::Kind::in_list ? e.negated : (e.all || e.name != "=")) break;
        out.column = own_column(e.args.at(0));
        if (out.column < 0) break;
        std::vector<sql::Value> elements;
        double cost = 0;
        for (std::size_t i = 1; i < e.args.size(); ++i) {
          const auto vc = value_cost(e.args[i]);
          if (!vc) return out;
          cost += *vc;
          if (e.kind == Expr::Kind::in_list) {
            const auto v = value(e.args[i]);
            elements.push_back(v ? *v : sql::Value::null(sql::Type::unknown));
          } else if (e.args[i].kind == Expr::Kind::array) {
            for (const Expr& a : e.args[i].args) elements.push_back(value(a).value_or(sql::Value::null(sql::Type::unknown)));
          } else if (const auto v = value(e.args[i]); v && !v->is_null()) {
            elements = sql::array_elements(*v);
          } else {  // an array not known when planning (an InitPlan's): scalararraysel's 10 elements, not disjoint
            const double each = eq_selectivity(out.column, std::nullopt, tuples);
            out.selectivity = 1 - std::pow(1 - each, 10);
            out.saop = 10;
            out.cost = kOperator * 10 * 0.5 + cost;
            out.value_cost = cost;
            out.equality = out.index_qual = true;
            return out;
          }
        }
        if (elements.empty()) break;
        double sum = 0;
        for (const sql::Value& v : elements) sum += eq_selectivity(out.column, v, tuples);
        out.selectivity = std::clamp(sum, 0.0, 1.0);
        out.saop = static_cast<double>(elements.size());
        out.cost = kOperator * out.saop * 0.5 + cost;
        out.value_cost = cost;
        out.equality = out.index_qual = true;
        break;
      }
      case Expr::Kind::is_null:
        out.column = own_column(e.args.at(0));
        if (out.column < 0) break;
        out.cost = 0;
        out.selectivity = e.negated ? 0.995 : 0.005;
        out.equality = out.index_qual = !e.negated;
        break;
      case Expr::Kind::or_: {  // clauselist_selectivity_or: s1 + s2 - s1 * s2; every arm evaluated
        double selectivity = 0, cost = 0;
        bool known = true, quals = true;
        for (const Expr& arm : e.args) {
          std::vector<Conjunct> parts;
          if (arm.kind == Expr::Kind::and_) {
            for (const Expr& a : arm.args) parts.push_back(read(a, tuples));
          } else {
            parts.push_back(read(arm, tuples));
          }
          std::vector<const Conjunct*> ptrs;
          for (const Conjunct& c : parts) {
            ptrs.push_back(&c);
            known = known && c.selectivity && c.cost;
            cost += c.cost.value_or(0);
          }
          const double s = list_selectivity(ptrs, 1);
          selectivity = selectivity + s - selectivity * s;
          quals = quals && parts.size() == 1 && parts[0].index_qual && parts[0].selectivity && parts[0].cost;
          if (quals) out.arms.push_back(parts[0]);
        }
        if (!quals) out.arms.clear();
        if (known) out.selectivity = selectivity, out.cost = cost;
        break;
      }
      default: break;
    }
    return out;
  }

 private:
  const SqlTable& t_;
  std::string_view alias_;
  sql::EvalContext& run_;
  sql::EvalContext* variables_;
};

// clauselist_selectivity over conjuncts without statistics: a product, but a column's two
// range sides (each 1/3 alone) make DEFAULT_RANGE_INEQ_SEL together.
double list_selectivity(const std::vector<const Conjunct*>& cs, double unknown) {
  double s = 1;
  std::map<int, std::pair<bool, bool>> ranges;
  for (const Conjunct* c : cs) {
    if (!c->selectivity) {
      s *= unknown;
      continue;
    }
    if (c->range == '<' || c->range == '>') {
      auto& [lo, hi] = ranges[c->column];
      (c->range == '>' ? lo : hi) = true;
      continue;
    }
    s *= *c->selectivity;
  }
  for (const auto& [column, sides] : ranges) s *= sides.first && sides.second ? 0.005 : 1.0 / 3;
  return s;
}

double clamp_rows(double rows) { return rows <= 1 ? 1 : std::rint(rows); }

// index_pages_fetched where T <= b (a table this small is cached): Mackert and Lohman.
double pages_fetched(double tuples, double pages) {
  const double fetched = (2 * pages * tuples) / (2 * pages + tuples);
  return fetched >= pages ? pages : std::ceil(fetched);
}

enum class Cmp : std::uint8_t { better1, better2, equal, different };

Cmp fuzzily(const Path& a, const Path& b, double fuzz, bool startup) {
  if (a.total > b.total * fuzz) return startup && b.startup > a.startup * fuzz ? Cmp::different : Cmp::better2;
  if (b.total > a.total * fuzz) return startup && a.startup > b.startup * fuzz ? Cmp::different : Cmp::better1;
  if (a.startup > b.startup * fuzz) return Cmp::better2;
  if (b.startup > a.startup * fuzz) return Cmp::better1;
  return Cmp::equal;
}

struct Inputs {
  double tuples = 0;
  double unknown_selectivity = 1, unknown_cost = 0;
};

// The plan picked for one set of inputs (a width, the bounds of what is not estimated), with
// whether a comparison fell too near its threshold to trust (`close`).
struct Outcome {
  Path path;
  bool close = false;
};

Outcome choose(const std::vector<Conjunct>& cs, const std::vector<Btree>& indexes, const Inputs& in, std::int64_t limit) {
  const double n = in.tuples;
  std::vector<const Conjunct*> all;
  double qual_cost = 0;
  for (const Conjunct& c : cs) {
    all.push_back(&c);
    qual_cost += c.cost.value_or(in.unknown_cost);
  }
  const double rows = clamp_rows(list_selectivity(all, in.unknown_selectivity) * n);
  bool close = false;
  const auto near = [&](double a, double b, double ratio) {
    const double r = a > b ? a / std::max(b, 1e-9) : b / std::max(a, 1e-9);
    close = close || std::abs(r - ratio) < 0.002 * ratio;
  };
  std::vector<Path> paths;
  const bool consider_startup = limit >= 0;
  auto add = [&](const Path& p) {
    for (std::size_t i = 0; i < paths.size(); ++i) {
      near(p.total, paths[i].total, kFuzz);
      near(p.startup, paths[i].startup, kFuzz);
      const Cmp c = fuzzily(p, paths[i], kFuzz, consider_startup);
      if (c == Cmp::better2) return;
      if (c == Cmp::better1) {
        paths.erase(paths.begin() + static_cast<std::ptrdiff_t>(i--));
        continue;
      }
      if (c == Cmp::equal) {
        if (fuzzily(p, paths[i], 1.0000000001, consider_startup) != Cmp::better1) return;
        paths.erase(paths.begin() + static_cast<std::ptrdiff_t>(i--));
      }
    }
    paths.push_back(p);
  };
  add(Path{.pick = ScanPick::seq, .startup = 0, .total = kPages + n * (kTuple + qual_cost)});
  // btcostestimate and genericcostestimate of one btree's quals: startup, total, selectivity.
  struct IndexCost {
    double startup = 0, total = 0, selectivity = 1;
  };
  const auto index_cost = [&](const std::vector<const Conjunct*>& quals, bool unique_all_equal) {
    double sa = 1, value_cost = 0, ops = 0;
    for (const Conjunct* q : quals) {
      if (q->saop > 1) sa *= q->saop;
      value_cost += q->value_cost;
      ops += q->range == 'b' ? 2 : 1;
    }
    IndexCost c;
    c.selectivity = list_selectivity(quals, 1);
    const double index_tuples = std::clamp(unique_all_equal ? 1.0 : std::rint(c.selectivity * n / sa), 1.0, n);
    constexpr double kIndexPages = 2;  // the metapage and one leaf (the caller bounds the entries)
    const double index_pages = std::ceil(index_tuples * kIndexPages / n);
    c.total = sa > 1 ? pages_fetched(index_pages * sa, kIndexPages) * kRandomPage : index_pages * kRandomPage;
    c.total += value_cost + index_tuples * sa * (kIndexTuple + kOperator * ops);
    const double descent = std::ceil(std::log(n) / std::log(2.0)) * kOperator + 50 * kOperator;
    c.startup = value_cost + descent;
    c.total += sa * descent;
    return c;
  };
  // A bitmap heap scan over a bitmap of `bitmap` cost and `selectivity`: its pages in order, every qual rechecked.
  const auto bitmap_path = [&](std::size_t k, double bitmap, double selectivity) {
    const double fetched = clamp_rows(selectivity * n);
    const double heap_pages = pages_fetched(fetched, kPages);
    const double per_page = heap_pages >= 2 ? kRandomPage - (kRandomPage - 1) * std::sqrt(heap_pages / kPages) : kRandomPage;
    return Path{.pick = ScanPick::bitmap, .index = k, .startup = bitmap, .total = bitmap + heap_pages * per_page + fetched * (kTuple + qual_cost)};
  };
  for (std::size_t k = 0; k < indexes.size(); ++k) {
    const Btree& ix = indexes[k];
    // The bound quals: each key column in turn while the ones before are pinned by equalities.
    std::vector<const Conjunct*> quals;
    bool all_equal = true;
    for (const int col : ix.columns) {
      bool any = false, equal = false;
      for (const Conjunct& c : cs) {
        if (!c.index_qual || c.column != col) continue;
        quals.push_back(&c);
        any = true;
        equal = equal || c.equality;
        all_equal = all_equal && c.e->kind == Expr::Kind::op;  // = itself, not IN, ANY or IS NULL
      }
      all_equal = all_equal && any && equal;
      if (!any || !equal) break;
    }
    if (quals.empty() || quals.front()->column != ix.columns.front()) continue;
    const IndexCost c = index_cost(quals, ix.unique && all_equal);
    const double fetched = clamp_rows(c.selectivity * n);
    // An index scan: the heap pages at random, the quals not in the index per tuple.
    double filter_cost = qual_cost;
    for (const Conjunct* q : quals) filter_cost -= q->cost.value_or(0);
    add(Path{.pick = ScanPick::index, .index = k, .startup = c.startup,
             .total = c.total + pages_fetched(fetched, kPages) * kRandomPage + fetched * (kTuple + filter_cost)});
    add(bitmap_path(k, c.total + 0.1 * kOperator * rows, c.selectivity));
  }
  // A BitmapOr of an OR whose every arm an index serves (each arm's cheapest index).
  for (const Conjunct& c : cs) {
    if (c.arms.empty()) continue;
    double bitmap = 0, selectivity = 0;
    for (const Conjunct& arm : c.arms) {
      std::optional<double> best;
      for (const Btree& ix : indexes) {
        if (ix.columns.front() != arm.column) continue;
        const double cost = index_cost({&arm}, ix.unique && ix.columns.size() == 1 && arm.e->kind == Expr::Kind::op && arm.equality).total;
        if (!best || cost < *best) best = cost;
      }
      if (!best) {
        bitmap = -1;
        break;
      }
      bitmap += *best + 0.1 * kOperator * rows;
      selectivity += *arm.selectivity;
    }
    if (bitmap >= 0) add(bitmap_path(0, bitmap, std::min(selectivity, 1.0)));
  }
  // The cheapest: by total cost, or by the cost of the Limit's fraction of the rows.
  const double fraction = limit >= 0 && static_cast<double>(limit) < rows ? static_cast<double>(limit) / rows : 1;
  const auto cost = [&](const Path& p) { return fraction < 1 ? p.startup + fraction * (p.total - p.startup) : p.total; };
  std::size_t best = 0;
  for (std::size_t i = 1; i < paths.size(); ++i) {
    if (cost(paths[i]) < cost(paths[best]) || (cost(paths[i]) == cost(paths[best]) && paths[i].total < paths[best].total)) best = i;
  }
  for (std::size_t i = 0; i < paths.size(); ++i) {
    if (i != best) near(cost(paths[i]), cost(paths[best]), 1.0);
  }
  return {paths[best], close};
}

void scan_columns_of(const Expr& e, std::vector<std::string>& out) {
  if (e.kind == Expr::Kind::column) out.push_back(e.name);
  if (sql::is_sublink(e)) return;
  for (const Expr& a : e.args) scan_columns_of(a, out);
}


bool scan_same_expr(const Expr& a, const Expr& b) {
  if (a.kind != b.kind || a.name != b.name || a.negated != b.negated || a.type != b.type || a.args.size() != b.args.size()) return false;
  if (a.kind == Expr::Kind::constant && (a.value.is_null() != b.value.is_null() || a.value.text_output() != b.value.text_output())) return false;
  for (std::size_t i = 0; i < a.args.size(); ++i) {
    if (!scan_same_expr(a.args[i], b.args[i])) return false;
  }
  return true;
}

std::vector<const Expr*> scan_conjuncts(const Expr& e) {
  if (e.kind != Expr::Kind::and_) return {&e};
  std::vector<const Expr*> out;
  for (const Expr& a : e.args) {
    for (const Expr* c : scan_conjuncts(a)) out.push_back(c);
  }
  return out;
}

// predtest.c's proof, in the shapes a partial index's predicate takes: each of its conjuncts a
// conjunct of WHERE, or `c IS NOT NULL` beside a comparison of c.
bool scan_predicate_implied(const Expr& predicate, const Expr& where) {
  const std::vector<const Expr*> have = scan_conjuncts(where);
  for (const Expr* p : scan_conjuncts(predicate)) {
    const bool found = std::any_of(have.begin(), have.end(), [&](const Expr* w) {
      if (scan_same_expr(*p, *w)) return true;
      return p->kind == Expr::Kind::is_null && p->negated && w->kind == Expr::Kind::op && !w->args.empty() && scan_same_expr(p->args.at(0), w->args[0]);
    });
    if (!found) return false;
  }
  return true;
}

}  // namespace

bool sql_scan_may_use_uncosted_index(const SqlTable& t, const Expr& where) {
  // A conjunct other than `column op value` over a column an expression or other-method index
  // reads (GIN's @>, lower(x) = ...), or a partial index whose predicate WHERE implies.
  const auto complex_over = [&](const std::vector<std::string>& reads) {
    for (const Expr* c : scan_conjuncts(where)) {
      const bool simple = c->kind == Expr::Kind::op && c->args.size() == 2 && (c->args[0].kind == Expr::Kind::column || c->args[1].kind == Expr::Kind::column);
      std::vector<std::string> used;
      scan_columns_of(*c, used);
      if (!simple && std::any_of(used.begin(), used.end(), [&](const std::string& u) { return std::find(reads.begin(), reads.end(), u) != reads.end(); })) {
        return true;
      }
    }
    return false;
  };
  for (const SqlTable::PlainIndex& x : t.indexes) {
    if (x.where ? scan_predicate_implied(*x.where, where) : x.columns.empty() && complex_over(x.reads)) return true;
  }
  for (const SqlTable::UniqueKey& u : t.unique) {
    if (u.where && scan_predicate_implied(*u.where, where)) return true;
    if (u.where || u.expressions.empty()) continue;
    std::vector<std::string> reads;
    for (const auto& x : u.expressions) {
      if (x) scan_columns_of(*x, reads);
    }
    if (complex_over(reads)) return true;
  }
  // A pattern with a fixed prefix on an indexed column: a range the btree serves (C collation).
  bool pattern = false;
  const auto walk = [&](const Expr& e, const auto& self) -> void {
    if (sql::is_sublink(e)) return;
    const bool is_pattern = (e.kind == Expr::Kind::like && e.name != "ilike") || (e.kind == Expr::Kind::op && (e.name == "~" || e.name == "^@")) ||
                            (e.kind == Expr::Kind::func && e.name == "starts_with");
    if (is_pattern && !e.args.empty() && e.args[0].kind == Expr::Kind::column) {
      const int c = t.column(e.args[0].name);
      pattern = pattern || (c >= 0 && (t.is_key_column(c) || std::any_of(t.indexes.begin(), t.indexes.end(), [&](const SqlTable::PlainIndex& x) {
                                         return std::find(x.reads.begin(), x.reads.end(), e.args[0].name) != x.reads.end();
                                       })));
    }
    for (const Expr& a : e.args) self(a, self);
  };
  walk(where, walk);
  return pattern;
}

ScanChoice sql_scan_choice(const SqlTable& t, std::string_view alias, const Expr& where, std::int64_t limit, std::size_t widest_row,
                           sql::EvalContext& run, sql::EvalContext* variables) {
  ScanChoice out;
  std::vector<Btree> indexes;
  if (!t.key.empty()) indexes.push_back({t.key, true});
  for (const SqlTable::UniqueKey& u : t.unique) {
    if (!u.where && u.expressions.empty()) indexes.push_back({u.columns, true});
  }
  for (const SqlTable::PlainIndex& x : t.indexes) {
    Btree b;
    for (const std::string& c : x.columns) b.columns.push_back(t.column(c));
    if (!b.columns.empty()) indexes.push_back(std::move(b));
  }
  auto unknown = [&](std::string why) {
    out.pick = ScanPick::unknown;
    for (const Btree& b : indexes) out.index_orders.push_back(b.columns);
    out.why = std::move(why);
    return out;
  };
  const auto width = unanalyzed_width(t, widest_row);
  if (!width) return unknown("a table with planner statistics or past 10 pages");
  if (t.tuples_written > 150) return unknown("an index past one leaf page");
  // Past one page an UPDATE's new version may not fit its old one's page: no HOT update then.
  if (static_cast<double>(t.tuples_written) * static_cast<double>(24 + 4 + 8 + widest_row) > 8192 - 24) return unknown("a table past one page");
  if (sql_scan_may_use_uncosted_index(t, where)) return unknown("a pattern, partial or expression index the model does not cost");
  std::vector<const Expr*> parts;
  const auto flatten = [&](const Expr& e, const auto& self) -> void {
    if (e.kind != Expr::Kind::and_) return parts.push_back(&e);
    for (const Expr& a : e.args) self(a, self);
  };
  flatten(where, flatten);
  const Model model(t, alias, run, variables);
  std::optional<ScanChoice> decided;
  for (const int w : {width->first, width->second}) {
    Inputs in{.tuples = unanalyzed_tuples(w)};
    std::vector<Conjunct> cs;
    bool unsure = false;
    for (const Expr* p : parts) {
      cs.push_back(model.read(*p, in.tuples));
      // One the estimates do not know may still be an index's (a LIKE prefix, an OR of quals).
      const Conjunct& c = cs.back();
      if (!c.selectivity || !c.cost) {
        const bool indexed_like = p->kind == Expr::Kind::like && std::any_of(indexes.begin(), indexes.end(), [&](const Btree& b) {
          return !p->args.empty() && b.columns.front() == model.own_column(p->args[0]);
        });
        if (c.index_qual || indexed_like) return unknown("a condition whose estimate is not known here");
        unsure = true;
      }
    }
    for (const double sel : unsure ? std::vector<double>{0.005, 1.0} : std::vector<double>{1.0}) {
      for (const double cost : unsure ? std::vector<double>{kOperator, 5 * kOperator} : std::vector<double>{0.0}) {
        in.unknown_selectivity = sel;
        in.unknown_cost = cost;
        const Outcome o = choose(cs, indexes, in, limit);
        if (o.close) return unknown("two plans' costs within the model's margin");
        ScanChoice c;
        c.pick = o.path.pick;
        if (c.pick == ScanPick::index) c.index_columns = indexes[o.path.index].columns;
        if (decided && (decided->pick != c.pick || decided->index_columns != c.index_columns)) return unknown("plans that change with estimates not known here");
        decided = std::move(c);
      }
    }
  }
  return *decided;
}

}  // namespace lockstep::sim::pg
