// model/sql/parse_views.cc: CREATE [OR REPLACE] VIEW name AS query (plan.h's CreateTable with
// a view_query): the query read here for the subset's refusals and errors, and kept as the
// text a statement naming the view reads in its place (model/sql/views.h), with the relations
// it names. Part of model/sql/parse.h's parser (Reader: parse_reader.h).
#include <algorithm>
#include <cctype>

#include "lockstep/model/sql/parse_reader.h"
#include "lockstep/model/sql/views.h"

namespace lockstep::sql {
namespace detail {

CreateTable Reader::create_view(const json& body) {
  const int loc = statement_start_;
  known(body, "ViewStmt", {"view", "query", "replace", "options", "withCheckOption", "aliases"}, loc);
  if (body.contains("options")) refuse("a view's options (WITH (...))", loc);
  if (body.value("withCheckOption", "NO_CHECK_OPTION") != "NO_CHECK_OPTION") refuse("WITH CHECK OPTION", loc);
  if (body.contains("aliases")) refuse("a view's column names (CREATE VIEW v (a, b))", loc);
  const json& rel = body.at("view");
  const int at = location_of(rel, loc);
  if (rel.value("relpersistence", "p") == "t") refuse("a temporary view", at);
  CreateTable c;
  c.table = relation(rel, loc).first;
  c.schema = rel.value("schemaname", "");
  c.view_replace = body.value("replace", false);
  // Its text: after the name, blanks and AS, to the statement's end.
  const std::size_t end = statement_len_ == 0 ? text_.size()  // (the text's last statement, without a ';')
                                              : std::min(text_.size(), static_cast<std::size_t>(std::max(0, statement_start_ + statement_len_)));
  std::size_t i = std::min(text_.size(), static_cast<std::size_t>(std::max(0, at)));
  i += written_name_length(text_.substr(i));
  i += static_cast<std::size_t>(leading_blank(text_.substr(i), 0));
  const std::string_view as = text_.substr(std::min(i, text_.size()), 2);
  if (as.size() != 2 || std::tolower(static_cast<unsigned char>(as[0])) != 'a' || std::tolower(static_cast<unsigned char>(as[1])) != 's') {
    refuse("a view written otherwise than CREATE VIEW name AS query", at);
  }
  i += 2;
  i += static_cast<std::size_t>(leading_blank(text_.substr(std::min(i, text_.size())), 0));
  if (i >= end) refuse("a view written otherwise than CREATE VIEW name AS query", at);
  c.view_query = std::string(trim(text_.substr(i, end - i)));
  const std::size_t named = relations_.size();  // (the view's own name is the first)
  (void)select(body.at("query").at("SelectStmt"), loc, false);  // its refusals, as it is created
  for (std::size_t k = 1; k < relations_.size() && named > 0; ++k) c.view_reads.push_back(relations_[k].second);
  return c;
}

}  // namespace detail
}  // namespace lockstep::sql
