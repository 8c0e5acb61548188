// model/sql/parse_cte_scope.cc: WITH query names scoped as PostgreSQL's parser scopes them
// (parse_relation.c's scanNameSpaceForCTE). The executor finds a relation by its name, a WITH
// query's before a table's; the server does that only where the WITH query is in scope:
//  - a non-recursive WITH query is not visible in its own body nor in an earlier sibling's
//    (`WITH jobs AS (SELECT id FROM jobs)` reads the table jobs), a RECURSIVE list's are;
//  - a schema-qualified name (`s.jobs`) is never a WITH query;
//  - the target of INSERT, UPDATE and DELETE is never a WITH query.
// Where a statement names a WITH query's name in one of those places, the WITH query and the
// references that do mean it are renamed (relname and ctename: `name (WITH)`, each reference
// keeping the name as its alias), so the executor's lookup by name finds the table elsewhere.
// Statements without such a clash are left as they are.
#include <deque>
#include <string>
#include <unordered_set>
#include <vector>

#include "lockstep/model/sql/parse_reader.h"
#include "lockstep/model/stack_room.h"

namespace lockstep::sql::detail {
namespace {

struct CteInfo {
  json* cte = nullptr;  // the CommonTableExpr's fields
  std::string name;
  std::vector<json*> references;  // RangeVars that mean it
};

class CteScoper {
 public:
  void walk(json& j, const std::vector<CteInfo*>& scope, bool target) {
    // A tree deeper than any statement the reader takes (it refuses past 128 levels of
    // expressions and subqueries) is left as it is: the reader's refusal names it.
    if (depth_ >= kMaxTreeDepth || stack_room() < kStackRoomNeeded) {
      gave_up_ = true;
      return;
    }
    ++depth_;
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    if (j.is_array()) {
      for (json& element : j) walk(element, scope, false);
      return;
    }
    if (!j.is_object()) return;
    if (j.contains("relname") && j.at("relname").is_string()) {
      range_var(j, scope, target);
      return;
    }
    if (j.contains("withClause") && j.at("withClause").is_object() && j.at("withClause").contains("ctes")) {
      statement_with(j, scope);
      return;
    }
    for (auto& [key, value] : j.items()) {
      if (key == "lockedRels") continue;  // FOR UPDATE OF names FROM items, not relations
      walk(value, scope, key == "relation");
    }
  }

  // Where a WITH RECURSIVE query reads a later query of its list, or -1.
  int forward_reference_at() const { return forward_at_; }

  // Renames each WITH query a table reference clashes with; true when one was.
  bool rename() {
    if (gave_up_) return false;
    bool any = false;
    for (CteInfo& c : ctes_) {
      if (!table_names_.contains(c.name)) continue;
      const std::string internal = c.name + " (WITH)";
      (*c.cte)["ctename"] = internal;
      for (json* ref : c.references) {
        if (!ref->contains("alias")) (*ref)["alias"] = json{{"aliasname", c.name}};
        (*ref)["relname"] = internal;
      }
      any = true;
    }
    return any;
  }

 private:
  void range_var(json& rv, const std::vector<CteInfo*>& scope, bool target) {
    const std::string name = rv.at("relname").get<std::string>();
    if (!target && !rv.contains("schemaname") && !rv.contains("catalogname")) {
      for (auto it = scope.rbegin(); it != scope.rend(); ++it) {
        if ((*it)->name == name) {
          (*it)->references.push_back(&rv);
          return;
        }
      }
    }
    table_names_.insert(name);
  }

  void statement_with(json& body, const std::vector<CteInfo*>& outer) {
    json& clause = body.at("withClause");
    const bool recursive = clause.value("recursive", false);
    std::vector<CteInfo*> mine;
    const std::size_t first = ctes_.size();
    for (json& c : clause.at("ctes")) {
      json* fields = c.contains("CommonTableExpr") ? &c.at("CommonTableExpr") : &c;
      if (!fields->contains("ctename")) continue;
      ctes_.push_back(CteInfo{fields, fields->at("ctename").get<std::string>(), {}});
    }
    // (ctes_ is a deque: the pointers stay valid as nested statements add theirs.)
    for (std::size_t k = first; k < ctes_.size(); ++k) mine.push_back(&ctes_[k]);
    for (std::size_t i = 0; i < mine.size(); ++i) {
      std::vector<CteInfo*> scope = outer;
      const std::size_t visible = recursive ? mine.size() : i;
      scope.insert(scope.end(), mine.begin(), mine.begin() + static_cast<std::ptrdiff_t>(visible));
      std::vector<std::size_t> before;
      for (const CteInfo* c : mine) before.push_back(c->references.size());
      if (mine[i]->cte->contains("ctequery")) walk(mine[i]->cte->at("ctequery"), scope, false);
      for (std::size_t j = i + 1; j < mine.size() && forward_at_ < 0; ++j) {  // RECURSIVE: a later query of the list
        if (mine[j]->references.size() > before[j]) forward_at_ = mine[j]->references[before[j]]->value("location", 0);
      }
    }
    std::vector<CteInfo*> scope = outer;
    scope.insert(scope.end(), mine.begin(), mine.end());
    for (auto& [key, value] : body.items()) {
      if (key == "withClause" || key == "lockedRels") continue;
      walk(value, scope, key == "relation");
    }
  }

  std::deque<CteInfo> ctes_;
  int depth_ = 0;
  bool gave_up_ = false;
  int forward_at_ = -1;  // where a WITH RECURSIVE query reads a later query of its list, or -1
  std::unordered_set<std::string> table_names_;
};

}  // namespace

bool scope_cte_names(json& statement, int* forward_reference_at) {
  CteScoper scoper;
  scoper.walk(statement, {}, false);
  *forward_reference_at = scoper.forward_reference_at();
  return scoper.rename();
}

}  // namespace lockstep::sql::detail
