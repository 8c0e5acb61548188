// model/sql/jsonb_order.cc: jsonb's order (jsonb_order in model/sql/jsonb.h), as the
// server's btree compares two values (jsonb_util.c's compareJsonbContainers).
#include <compare>

#include "lockstep/model/sql/jsonb.h"
#include "lockstep/model/sql/jsonb_tree.h"
#include "lockstep/model/sql/numeric.h"

namespace lockstep::sql {
namespace {

using jsonb_tree::is_scalar;
using jsonb_tree::Jv;

// compareJsonbContainers' order of two values in one place: by type (null < string < number
// < boolean < array < object), then an array by its length and an object by its count of
// pairs, then item by item (an object's pairs in its key order, each key, then its value);
// strings by bytes (the C collation, as text compares here), numbers by value.
int jb_rank(Jv::K k) {
  switch (k) {
    case Jv::K::null: return 0;
    case Jv::K::string: return 1;
    case Jv::K::number: return 2;
    case Jv::K::boolean: return 3;
    case Jv::K::array: return 4;
    case Jv::K::object: return 5;
  }
  return 0;
}

std::strong_ordering jb_order(const Jv& a, const Jv& b) {
  if (a.k != b.k) return jb_rank(a.k) <=> jb_rank(b.k);
  switch (a.k) {
    case Jv::K::null: return std::strong_ordering::equal;
    case Jv::K::boolean: return a.b <=> b.b;
    case Jv::K::number: return numeric_compare(numeric_input(a.s), numeric_input(b.s));
    case Jv::K::string: return a.s.compare(b.s) <=> 0;
    case Jv::K::array:
      if (a.items.size() != b.items.size()) return a.items.size() <=> b.items.size();
      for (std::size_t i = 0; i < a.items.size(); ++i) {
        if (const auto c = jb_order(a.items[i], b.items[i]); c != 0) return c;
      }
      return std::strong_ordering::equal;
    case Jv::K::object:
      if (a.members.size() != b.members.size()) return a.members.size() <=> b.members.size();
      for (std::size_t i = 0; i < a.members.size(); ++i) {
        if (const auto c = a.members[i].first.compare(b.members[i].first) <=> 0; c != 0) return c;
        if (const auto c = jb_order(a.members[i].second, b.members[i].second); c != 0) return c;
      }
      return std::strong_ordering::equal;
  }
  return std::strong_ordering::equal;
}

}  // namespace

std::strong_ordering jsonb_order(const std::string& a, const std::string& b) {
  const Jv x = jsonb_tree::parse(a);
  const Jv y = jsonb_tree::parse(b);
  // A scalar at the top is stored as a one-element "raw scalar" array: beside an array it is
  // the lesser, unless their lengths differ, which decide ('[]' < 'null' < '[1, 2]').
  if (is_scalar(x) != is_scalar(y) && (x.k == Jv::K::array || y.k == Jv::K::array)) {
    const std::size_t nx = is_scalar(x) ? 1 : x.items.size();
    const std::size_t ny = is_scalar(y) ? 1 : y.items.size();
    if (nx != ny) return nx <=> ny;
    return is_scalar(x) ? std::strong_ordering::less : std::strong_ordering::greater;
  }
  return jb_order(x, y);
}

}  // namespace lockstep::sql
