// model/sql/views.h: a statement's views read in place, as PostgreSQL's rewriter reads a view
// (a subquery in the range table, pulled up or not by the planner as any other): each view a
// FROM clause (or JOIN, UPDATE ... FROM, DELETE ... USING, a subquery's) names becomes its
// query in parentheses, keeping the alias written after it (else the view's name). A name a
// WITH query of the statement has is left alone, as are the targets of INSERT, UPDATE,
// DELETE, LOCK and TRUNCATE (the caller refuses a view there). The views a view's query
// names are read in turn, at most kMaxViewDepth deep (0A000 beyond).
#pragma once

#include <functional>
#include <string>
#include <string_view>

namespace lockstep::sql {

inline constexpr int kMaxViewDepth = 16;

// The query text of the view `schema.name` (schema "" when written without one), or nullptr
// where the name is no view's.
using ViewLookup = std::function<const std::string*(std::string_view schema, std::string_view name)>;

// `text` (one or more statements PostgreSQL's parser reads) with its views read in place;
// the text itself when it names none. A text the parser turns down is returned as it is (its
// error is the caller's, as it parses it).
std::string expand_views(std::string_view text, const ViewLookup& view);

// The length of a (possibly qualified, possibly quoted) name written at the start of `s`.
std::size_t written_name_length(std::string_view s);

}  // namespace lockstep::sql
