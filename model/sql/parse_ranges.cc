// model/sql/parse_ranges.cc: `range(a, b[, flags]) @> x` and `x <@ range(...)` read into one
// call of kRangeContains (model/sql/ranges.h).
#include <algorithm>

#include "lockstep/model/sql/parse_reader.h"
#include "lockstep/model/sql/ranges.h"

namespace lockstep::sql::detail {

std::optional<Expr> Reader::range_containment(const json& body, std::string_view op, int loc) {
  if ((op != "@>" && op != "<@") || !body.contains("lexpr") || !body.contains("rexpr")) return std::nullopt;
  const json& range_side = body.at(op == "@>" ? "lexpr" : "rexpr");
  const auto [type, call] = node(range_side);
  if (type != "FuncCall") return std::nullopt;
  std::vector<std::string> name = names(call->at("funcname"));
  if (name.size() == 2 && name[0] == "pg_catalog") name.erase(name.begin());
  if (name.size() != 1 || !is_range_constructor(name[0])) return std::nullopt;
  known(*call, "FuncCall", {"funcname", "args", "funcformat", "location"}, loc);
  const std::size_t given = call->contains("args") ? call->at("args").size() : 0;
  if (given != 2 && given != 3) refuse(fmt::format("{}() of {} arguments", name[0], given), location_of(*call, loc));
  Expr e{.kind = Expr::Kind::func, .name = std::string(kRangeContains), .location = loc};
  e.qualifier = op == "@>" ? name[0] + " @>" : "<@ " + name[0];  // the operator, as its errors name it
  for (const json& a : call->at("args")) e.args.push_back(expr(a, loc));
  if (given == 2) e.args.push_back(Expr{.kind = Expr::Kind::constant, .value = Value::text("[)")});
  // The constructor of constants is folded by the planner: its errors fail the statement
  // before it reads a row.
  if (folding_ && std::all_of(e.args.begin(), e.args.end(), [](const Expr& a) { return a.kind == Expr::Kind::constant; })) {
    try {
      range_contains(e.qualifier, {e.args[0].value, e.args[1].value, e.args[2].value, Value::null(Type::unknown)});
    } catch (const SqlError& error) {
      fold_errors_.push_back(error);
    }
  }
  e.args.push_back(expr(body.at(op == "@>" ? "rexpr" : "lexpr"), loc));
  return e;
}

}  // namespace lockstep::sql::detail
