// model/sql/parse_constructs.cc: the SQL words for a parse-tree node the subset refuses
// (JoinExpr is JOIN, CreateRoleStmt is CREATE ROLE), so that a refusal names the construct
// as its writer knows it.
#include <cctype>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql::detail {

// A statement node's name in SQL words: CreateRole is CREATE ROLE (the parser's short names
// spelled out).
namespace {

std::string statement_words(std::string_view node) {
  static const std::pair<std::string_view, std::string_view> kSpelled[] = {
      {"Createdb", "CREATE DATABASE"}, {"Dropdb", "DROP DATABASE"}, {"CreateTrig", "CREATE TRIGGER"},
      {"RefreshMatView", "REFRESH MATERIALIZED VIEW"}, {"CheckPoint", "CHECKPOINT"}, {"Rule", "CREATE RULE"},
      {"ConstraintsSet", "SET CONSTRAINTS"}, {"SecLabel", "SECURITY LABEL"}, {"CreateStats", "CREATE STATISTICS"}};
  for (const auto& [name, words] : kSpelled) {
    if (name == node) return std::string(words);
  }
  std::string out;
  for (const char c : node) {
    if (std::isupper(static_cast<unsigned char>(c)) != 0 && !out.empty()) out += ' ';
    out += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

// The construct a node type stands for, when the subset has no such node where it appears.
std::string construct_of_node(std::string_view type, const json& body) {
  static const std::initializer_list<std::pair<std::string_view, std::string_view>> names = {
      {"JoinExpr", "JOIN"},
      {"RangeSubselect", "a subquery in FROM"},
      {"RangeFunction", "a function in FROM"},
      {"A_ArrayExpr", "ARRAY[...]"},
      {"A_Indirection", "subscripts or field selection"},
      {"MinMaxExpr", "GREATEST or LEAST"},
      {"CollateClause", "COLLATE"},
      {"GroupingFunc", "GROUPING"},
      {"XmlExpr", "XML"},
      {"MultiAssignRef", "SET (a, b) = (...)"},
      {"SetToDefault", "DEFAULT outside INSERT ... VALUES"},
      {"CopyStmt", "COPY"},
      {"ExplainStmt", "EXPLAIN"},
      {"CreateFunctionStmt", "CREATE FUNCTION"},
      {"DoStmt", "DO"},
      {"AlterTableStmt", "ALTER TABLE"},
      {"ViewStmt", "CREATE VIEW"},
      {"CreateSeqStmt", "CREATE SEQUENCE"},
      {"PrepareStmt", "PREPARE"},
      {"ExecuteStmt", "EXECUTE"},
      {"DeallocateStmt", "DEALLOCATE"},
      {"VacuumStmt", "VACUUM"},
      {"CallStmt", "CALL"},
      {"CreateTableAsStmt", "CREATE TABLE AS"},
      {"DiscardStmt", "DISCARD"},
      {"VariableShowStmt", "SHOW"},
      {"MergeStmt", "MERGE"},
  };
  for (const auto& [k, name] : names) {
    if (k == type) return std::string(name);
  }
  if (type == "SubLink") {
    const std::string kind = body.value("subLinkType", "");
    if (kind == "ANY_SUBLINK") return "IN (SELECT ...) or = ANY (SELECT ...)";
    if (kind == "ALL_SUBLINK") return "ALL (SELECT ...)";
    if (kind == "ARRAY_SUBLINK") return "ARRAY (SELECT ...)";
    return "this kind of subquery";
  }
  if (type.ends_with("Stmt")) return statement_words(type.substr(0, type.size() - 4));
  return fmt::format("the construct {}", type);
}

}  // namespace lockstep::sql::detail
