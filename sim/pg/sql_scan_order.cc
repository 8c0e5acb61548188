// sim/pg/sql_scan_order.cc: which scan the server's planner picks for a table's WHERE, as far
// as the order of the rows it returns goes (sim/pg/sql_run.h: sql_scan_has_index_qual).
#include "lockstep/sim/pg/sql_run.h"

namespace lockstep::sim::pg {
namespace {

using sql::Expr;

// An expression the planner can use as an index key's comparand: no column of any row (an
// uncorrelated subquery is an InitPlan), no volatile function.
bool order_free(const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::constant:
    case Expr::Kind::param:
    case Expr::Kind::subquery: return true;
    case Expr::Kind::column: return false;
    case Expr::Kind::func:
      if (e.name != "now" && e.name != "current_timestamp" && e.name != "transaction_timestamp") return false;
      break;
    case Expr::Kind::cast:
    case Expr::Kind::op:
    case Expr::Kind::array: break;
    default: return false;
  }
  return std::all_of(e.args.begin(), e.args.end(), order_free);
}

// A column of t that leads the primary key or a unique index without a predicate.
bool order_leading_column(const SqlTable& t, std::string_view alias, const Expr& e) {
  if (e.kind != Expr::Kind::column) return false;
  if (!e.qualifier.empty() && e.qualifier != alias && e.qualifier != t.def.table) return false;
  const int c = t.column(e.name);
  if (c < 0) return false;
  if (!t.key.empty() && t.key.front() == c) return true;
  return std::any_of(t.unique.begin(), t.unique.end(), [&](const SqlTable::UniqueKey& u) {
    return !u.where && !u.columns.empty() && u.columns.front() == c;
  });
}

bool order_index_qual(const SqlTable& t, std::string_view alias, const Expr& e) {
  switch (e.kind) {
    case Expr::Kind::op: {
      static constexpr std::string_view kComparisons[] = {"=", "<", "<=", ">", ">="};
      if (e.args.size() != 2 || std::find(std::begin(kComparisons), std::end(kComparisons), e.name) == std::end(kComparisons)) return false;
      return (order_leading_column(t, alias, e.args[0]) && order_free(e.args[1])) ||
             (order_leading_column(t, alias, e.args[1]) && order_free(e.args[0]));
    }
    case Expr::Kind::between:
    case Expr::Kind::in_list:
      return !e.negated && order_leading_column(t, alias, e.args.at(0)) && std::all_of(e.args.begin() + 1, e.args.end(), order_free);
    case Expr::Kind::quantified:
      return !e.all && e.name == "=" && order_leading_column(t, alias, e.args.at(0)) && order_free(e.args.at(1));
    case Expr::Kind::is_null: return !e.negated && order_leading_column(t, alias, e.args.at(0));
    case Expr::Kind::or_:
      return std::all_of(e.args.begin(), e.args.end(), [&](const Expr& arm) {
        if (arm.kind == Expr::Kind::and_) {
          return std::any_of(arm.args.begin(), arm.args.end(), [&](const Expr& c) { return order_index_qual(t, alias, c); });
        }
        return order_index_qual(t, alias, arm);
      });
    case Expr::Kind::and_:
      return std::any_of(e.args.begin(), e.args.end(), [&](const Expr& c) { return order_index_qual(t, alias, c); });
    default: return false;
  }
}

}  // namespace

bool sql_order_has_index(const SqlTable& t, std::string_view alias, const Expr& first) { return order_leading_column(t, alias, first); }

bool sql_scan_has_index_qual(const SqlTable& t, std::string_view alias, const Expr& where) {
  if (t.joined) return false;
  return order_index_qual(t, alias, where);
}

}  // namespace lockstep::sim::pg
