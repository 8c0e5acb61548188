// model/sql/ranges.h: containment in a range built where it is tested, `tstzrange(a, b[,
// '[)']) @> x` and `x <@ int4range(a, b)` (River's unique-job lookup by a created_at window):
// the parser reads the pair as one call of kRangeContains (model/sql/parse_ranges.cc), named
// by the range type. Range values themselves (a column, a range printed) are not in the subset.
//
// Guarantees: the server's answers and errors for the six built-in range types' constructors:
// a NULL bound is unbounded, the flags '[)' (the default), '[]', '(]' or '()' say which bound is
// in; 22000 for a lower bound above the upper, 42601 for other flags, 22004 for NULL flags; a
// NULL element gives NULL; 42883 for an element not of the range's own type.
#pragma once

#include <string_view>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

// The internal function the parser makes of a containment test (no SQL name can be it).
inline constexpr std::string_view kRangeContains = "@range_contains";

// Whether `name` is a range type's constructor (tstzrange, tsrange, daterange, int4range,
// int8range, numrange).
bool is_range_constructor(std::string_view name);

// Whether range(args[0], args[1], args[2]) contains args[3], as `op` ("tstzrange @>" or
// "<@ tstzrange", the expression's qualifier) answers it.
Value range_contains(std::string_view op, const std::vector<Value>& args);

}  // namespace lockstep::sql
