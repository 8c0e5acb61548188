// model/sql/jsonb_tree.h: a jsonb value as a tree, internal to model/sql's jsonb files
// (jsonb.cc parses, prints and operates on it; jsonb_order.cc orders it). Objects keep
// jsonb's canonical key order (shorter keys first, then by bytes) without duplicates.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace lockstep::sql::jsonb_tree {

struct Jv {
  enum class K : std::uint8_t { null, boolean, number, string, array, object } k = K::null;
  bool b = false;
  std::string s;  // a number's canonical text, a string's value
  std::vector<Jv> items;
  std::vector<std::pair<std::string, Jv>> members;
};

// JSON text as a tree (22P02 "invalid input syntax for type json" when it is not JSON).
Jv parse(std::string_view text);

inline bool is_scalar(const Jv& j) { return j.k != Jv::K::array && j.k != Jv::K::object; }

}  // namespace lockstep::sql::jsonb_tree
