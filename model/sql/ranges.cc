// model/sql/ranges.cc: containment in a range built where it is tested (model/sql/ranges.h).
#include "lockstep/model/sql/ranges.h"

#include <algorithm>
#include <array>
#include <utility>

#include <fmt/format.h>

#include "lockstep/model/sql/eval.h"

namespace lockstep::sql {
namespace {

constexpr std::array<std::pair<std::string_view, Type>, 6> kRanges = {{{"tstzrange", Type::timestamptz},
                                                                       {"tsrange", Type::timestamp},
                                                                       {"daterange", Type::date},
                                                                       {"int4range", Type::int4},
                                                                       {"int8range", Type::int8},
                                                                       {"numrange", Type::numeric}}};

Type element_of(std::string_view range) {
  const auto* it = std::find_if(kRanges.begin(), kRanges.end(), [&](const auto& r) { return r.first == range; });
  // (A call written as "@range_contains"(...) in quotes names no range.)
  if (it == kRanges.end()) throw SqlError("42883", fmt::format("function {}() does not exist", kRangeContains));
  return it->second;
}

// Whether a value of type `from` goes to `to` by an implicit cast (or is of it): integers up
// to numeric, date up to timestamptz, as a range constructor's arguments are resolved.
bool implicit_to(Type from, Type to) {
  static constexpr std::array<Type, 4> kNumbers = {Type::int2, Type::int4, Type::int8, Type::numeric};
  static constexpr std::array<Type, 3> kTimes = {Type::date, Type::timestamp, Type::timestamptz};
  const auto up = [&](const auto& chain) {
    const auto* a = std::find(chain.begin(), chain.end(), from);
    const auto* b = std::find(chain.begin(), chain.end(), to);
    return a != chain.end() && b != chain.end() && a <= b;
  };
  return from == to || up(kNumbers) || up(kTimes);
}

}  // namespace

bool is_range_constructor(std::string_view name) {
  return std::any_of(kRanges.begin(), kRanges.end(), [&](const auto& r) { return r.first == name; });
}

Value range_contains(std::string_view op, const std::vector<Value>& args) {
  const bool within = op.starts_with("<@ ");  // x <@ range (else range @> x)
  const std::string_view range = within ? op.substr(3) : op.substr(0, op.find(' '));
  const Type element = element_of(range);
  // The constructor's arguments, as range_constructor3 reads them.
  for (std::size_t i = 0; i < 2; ++i) {
    if (args.at(i).type() != Type::unknown && !implicit_to(args[i].type(), element)) {
      throw SqlError("42883", fmt::format("function {}({}, {}) does not exist", range, type_name(args[0].type()), type_name(args[1].type())));
    }
  }
  const Value lower = cast(args[0], element), upper = cast(args[1], element);
  if (args.at(2).is_null()) throw SqlError("22004", "range constructor flags argument must not be null");
  const std::string flags = cast(args[2], Type::text).as_text();
  if (flags.size() != 2 || (flags[0] != '[' && flags[0] != '(') || (flags[1] != ']' && flags[1] != ')')) {
    throw SqlError("42601", "invalid range bound flags");
  }
  if (!lower.is_null() && !upper.is_null() && compare(lower, upper, "<") > 0) {
    throw SqlError("22000", "range lower bound must be less than or equal to range upper bound");
  }
  // The element's type is the range's own (anyelement and anyrange resolve together: no cast).
  const Value& x = args.at(3);
  if (x.type() != Type::unknown && x.type() != element) {
    throw SqlError("42883", within ? fmt::format("operator does not exist: {} <@ {}", type_name(x.type()), range)
                                   : fmt::format("operator does not exist: {} @> {}", range, type_name(x.type())));
  }
  if (x.is_null()) return Value::null(Type::boolean);
  const Value v = cast(x, element);
  const bool above = lower.is_null() || (flags[0] == '[' ? compare(v, lower, ">=") >= 0 : compare(v, lower, ">") > 0);
  const bool below = upper.is_null() || (flags[1] == ']' ? compare(v, upper, "<=") <= 0 : compare(v, upper, "<") < 0);
  return Value::boolean(above && below);
}

}  // namespace lockstep::sql
