#include "lockstep/model/sql/views.h"

#include <pg_query.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/model/sql/format_function.h"
#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

namespace {

using json = nlohmann::json;

struct Place {
  std::size_t at = 0, length = 0;
  const std::string* query = nullptr;
  std::string name;
  bool aliased = false;
};

// The RangeVar nodes of FROM positions (a node list's, wrapped as {"RangeVar": ...}; a
// statement's target is a bare RangeVar), and the WITH queries' names.
void collect(const json& j, bool skipped, std::vector<const json*>& ranges, std::set<std::string>& ctes) {
  if (j.is_array()) {
    for (const json& e : j) collect(e, skipped, ranges, ctes);
    return;
  }
  if (!j.is_object()) return;
  for (const auto& [key, value] : j.items()) {
    if (key == "RangeVar" && value.is_object() && !skipped) ranges.push_back(&value);
    if (key == "ctename" && value.is_string()) ctes.insert(value.get<std::string>());
    collect(value, skipped || key == "LockStmt" || key == "TruncateStmt", ranges, ctes);
  }
}

std::string expand(std::string_view text, const ViewLookup& view, int depth) {
  const std::string owned(text);
  PgQueryParseResult r = pg_query_parse(owned.c_str());
  if (r.error != nullptr) {
    pg_query_free_parse_result(r);
    return owned;
  }
  json tree;
  try {
    tree = json::parse(r.parse_tree);
  } catch (...) {
    pg_query_free_parse_result(r);
    throw;
  }
  pg_query_free_parse_result(r);
  std::vector<const json*> ranges;
  std::set<std::string> ctes;
  collect(tree, false, ranges, ctes);
  std::vector<Place> places;
  for (const json* range : ranges) {
    const std::string schema = range->value("schemaname", "");
    const std::string name = range->value("relname", "");
    if (schema.empty() && ctes.contains(name)) continue;
    const std::string* query = view(schema, name);
    const int location = range->value("location", -1);
    if (query == nullptr || location < 0 || static_cast<std::size_t>(location) >= owned.size()) continue;
    const std::size_t at = static_cast<std::size_t>(location);
    places.push_back({at, written_name_length(std::string_view(owned).substr(at)), query, name, range->contains("alias")});
  }
  if (places.empty()) return owned;
  if (depth >= kMaxViewDepth) throw SqlError("0A000", fmt::format("views nested deeper than {} levels are not in lockstep's SQL subset (docs/sql.md)", kMaxViewDepth));
  std::sort(places.begin(), places.end(), [](const Place& a, const Place& b) { return a.at > b.at; });
  std::string out = owned;
  for (const Place& p : places) {
    out.replace(p.at, p.length, fmt::format("({}\n){}", *p.query, p.aliased ? "" : " AS " + quote_ident(p.name)));  // (a query ending in a -- comment)
  }
  return expand(out, view, depth + 1);
}

}  // namespace

std::size_t written_name_length(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '"') {
      for (++i; i < s.size(); ++i) {
        if (s[i] != '"') continue;
        if (i + 1 < s.size() && s[i + 1] == '"') {
          ++i;
          continue;
        }
        ++i;
        break;
      }
    } else {
      while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) != 0 || s[i] == '_' || s[i] == '$' ||
                              static_cast<unsigned char>(s[i]) >= 0x80)) {
        ++i;
      }
    }
    if (i >= s.size() || s[i] != '.') break;
    ++i;
  }
  return i;
}

std::string expand_views(std::string_view text, const ViewLookup& view) { return expand(text, view, 0); }

}  // namespace lockstep::sql
