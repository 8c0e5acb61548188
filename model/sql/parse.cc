// model/sql/parse.cc: SQL text to plans: libpg_query's parse, the names of what the subset refuses,
// and the statements (model/sql/parse_expr.cc reads their expressions).
#include <algorithm>
#include <cctype>
#include <limits>
#include <memory>

#include <pg_query.h>

#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql {
namespace detail {

// What a field of a parse-tree node means to a reader, when the subset leaves it out.
std::string construct_of(std::string_view type, std::string_view key, const json& value) {
  static const std::initializer_list<std::pair<std::string_view, std::string_view>> names = {
      {"withClause", "WITH"},
      {"distinctClause", "DISTINCT"},
      {"intoClause", "SELECT INTO"},
      {"groupClause", "GROUP BY"},
      {"groupDistinct", "GROUP BY DISTINCT"},
      {"havingClause", "HAVING"},
      {"windowClause", "WINDOW"},
      {"valuesLists", "VALUES outside INSERT"},
      {"larg", "UNION, INTERSECT or EXCEPT"},
      {"rarg", "UNION, INTERSECT or EXCEPT"},
      {"usingClause", "DELETE ... USING"},
      {"over", "a window function (OVER)"},
      {"agg_order", "ORDER BY inside an aggregate"},
      {"agg_distinct", "DISTINCT inside an aggregate"},
      {"agg_within_group", "WITHIN GROUP"},
      {"func_variadic", "VARIADIC"},
      {"indirection", "subscripts or field selection"},
      {"inhRelations", "INHERITS"},
      {"partspec", "PARTITION BY"},
      {"partbound", "PARTITION OF"},
      {"arrayBounds", "an array type"},
      {"lockedRels", "FOR UPDATE OF"},
      {"collClause", "COLLATE"},
      {"options", "WITH (options)"},
      {"tableSpaceName", "TABLESPACE"},
      {"indexIncludingParams", "INCLUDE"},
      {"schemaname", "a schema-qualified name"},
      {"alias", "an alias"},
      {"chain", "AND CHAIN"},
      {"gid", "prepared transactions"},
      {"identitySequence", "GENERATED AS IDENTITY"},
      {"raw_default", "a generated column"},
      {"cooked_default", "a generated column"},
      {"fdwoptions", "foreign tables"},
      {"ofTypename", "a typed table"},
      {"accessMethod", "USING (table access method)"},
      {"returningList", "RETURNING"},
      {"onConflictClause", "ON CONFLICT"},
      {"lockingClause", "FOR UPDATE / FOR SHARE"},
      {"sortClause", "ORDER BY"},
      {"limitCount", "LIMIT"},
      {"limitOffset", "OFFSET"},
      {"whereClause", "WHERE"},
  };
  for (const auto& [k, name] : names) {
    if (k == key) return key == "withClause" && value.is_object() && value.value("recursive", false) ? "WITH RECURSIVE" : std::string(name);
  }
  if (key == "fromClause") return type == "UpdateStmt" ? "UPDATE ... FROM" : "FROM";
  return fmt::format("{} in {}", key, type);
}

std::vector<Statement> Reader::statements(const json& tree) {
  std::vector<Statement> out;
  if (!tree.contains("stmts")) return out;
  for (const json& raw : tree.at("stmts")) {
    const int start = raw.value("stmt_location", 0);
    const int len = raw.value("stmt_len", 0);
    // A statement after another starts right after its ';': positions name its first token.
    const int lead = leading_blank(text_.substr(std::min(text_.size(), static_cast<std::size_t>(start))), len);
    statement_start_ = start + lead;
    statement_len_ = len > 0 ? len - lead : 0;
    max_param_ = 0;
    locking_subquery_ = subquery_locks_differ_ = folded_arms_ = subquery_ = stepping_call_ = false;
    subquery_lock_ = RowLock::none;
    user_calls_.clear();
    relations_.clear();
    types_.clear();
    fold_errors_.clear();
    const std::string kind = node(raw.at("stmt")).first;
    folding_ = kind == "SelectStmt" || kind == "InsertStmt" || kind == "UpdateStmt" || kind == "DeleteStmt";
    // A WITH query's name where the server means a table: renamed in a copy (scope_cte_names).
    std::optional<json> scoped;
    const std::string_view text = text_.substr(std::min(text_.size(), static_cast<std::size_t>(start)), len > 0 ? static_cast<std::size_t>(len) : std::string_view::npos);
    const auto mentions = [&](std::string_view word) {  // (a cheap test first: most statements have no WITH, CASE, ...)
      return std::search(text.begin(), text.end(), word.begin(), word.end(), [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; }) != text.end();
    };
    if (mentions("with")) {
      scoped = raw.at("stmt");
      int forward_at = -1;
      const bool renamed = scope_cte_names(*scoped, &forward_at);
      if (forward_at >= 0) refuse("a WITH RECURSIVE query reading a later query of its list", forward_at);
      if (!renamed) scoped.reset();
    }
    const json& stmt = scoped ? *scoped : raw.at("stmt");
    if (mentions("case") || mentions("coalesce")) {
      const char* construct = nullptr;
      if (const json* srf = set_returning_in_conditional(stmt, &construct)) {
        fail("0A000", fmt::format("set-returning functions are not allowed in {}", construct), location_of(*srf, statement_start_));
      }
    }
    Statement s = statement(*(statement_json_ = &stmt));
    folding_ = false;
    if (!fold_errors_.empty()) s.plan_error = std::make_shared<const SqlError>(fold_errors_.front());
    check_modifying_ctes(s, stmt, start);
    statement_json_ = nullptr;  // (scoped's, gone after this statement)
    std::string_view own = text_.substr(static_cast<std::size_t>(start));
    if (len > 0) own = own.substr(0, static_cast<std::size_t>(len));
    s.text = std::string(trim(own));
    s.max_param = max_param_;
    s.locking_subquery = locking_subquery_;
    if (!subquery_locks_differ_ && !folded_arms_) s.subquery_lock = subquery_lock_;
    s.has_subquery = subquery_;
    s.calls_stepping_function = stepping_call_;
    s.user_calls = std::move(user_calls_);
    s.relations = std::move(relations_);
    s.types = std::move(types_);
    out.push_back(std::move(s));
  }
  return out;
}

int Reader::position(int offset) const {
  if (offset < 0) offset = statement_start_;
  int chars = 0;
  for (int i = 0; i < offset && i < static_cast<int>(text_.size()); ++i) {
    if ((static_cast<unsigned char>(text_[static_cast<std::size_t>(i)]) & 0xC0) != 0x80) ++chars;
  }
  return chars + 1;
}

std::pair<std::string, const json*> Reader::node(const json& n) {
  if (!n.is_object() || n.size() != 1) return {"?", &n};
  return {n.begin().key(), &n.begin().value()};
}

int Reader::keyword_before(int offset, std::string_view keyword) const {
  for (int i = std::min(offset, static_cast<int>(text_.size()) - static_cast<int>(keyword.size())); i >= 0; --i) {
    bool match = true;
    for (std::size_t k = 0; k < keyword.size() && match; ++k) {
      match = std::tolower(static_cast<unsigned char>(text_[static_cast<std::size_t>(i) + k])) == keyword[k];
    }
    const auto word_char = [&](int j) {
      return j >= 0 && j < static_cast<int>(text_.size()) &&
             (std::isalnum(static_cast<unsigned char>(text_[static_cast<std::size_t>(j)])) || text_[static_cast<std::size_t>(j)] == '_');
    };
    if (match && !word_char(i - 1) && !word_char(i + static_cast<int>(keyword.size()))) return i;
  }
  return -1;
}

int Reader::first_location(const json& n) {
  if (n.is_object()) {
    if (n.contains("location") && n.at("location").is_number_integer() && n.at("location").get<int>() >= 0) return n.at("location");
    for (const auto& [k, v] : n.items()) {
      if (const int l = first_location(v); l >= 0) return l;
    }
  } else if (n.is_array()) {
    for (const json& v : n) {
      if (const int l = first_location(v); l >= 0) return l;
    }
  }
  return -1;
}

void Reader::known(const json& body, std::string_view type, std::initializer_list<std::string_view> keys, int fallback) const {
  for (const auto& [key, value] : body.items()) {
    if (key == "location") continue;
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
    int where = location_of(body, fallback);
    if (key == "withClause") {
      const int inside = first_location(value);
      where = inside >= 0 ? std::max(keyword_before(inside, "with"), 0) : where;
    }
    refuse(construct_of(type, key, value), where);
  }
}

std::string Reader::str(const json& n) {
  const auto [type, body] = node(n);
  if (type != "String") return "";
  return body->value("sval", "");
}

std::vector<std::string> Reader::names(const json& list) {
  std::vector<std::string> out;
  for (const json& n : list) out.push_back(str(n));
  return out;
}

std::vector<const json*> Reader::items(const json& n) {
  const auto [type, body] = node(n);
  std::vector<const json*> out;
  if (type == "List" && body->contains("items")) {
    for (const json& i : body->at("items")) out.push_back(&i);
  }
  return out;
}

Statement Reader::statement(const json& n) {
  const auto [type, b] = node(n);
  const json& body = *b;
  Statement s;
  if (type == "SelectStmt") {
    s.body = select(body, statement_start_, false);
  } else if (type == "InsertStmt") {
    s.body = insert(body);
  } else if (type == "UpdateStmt") {
    s.body = update(body);
  } else if (type == "DeleteStmt") {
    s.body = remove(body);
  } else if (type == "ListenStmt" || type == "UnlistenStmt" || type == "NotifyStmt") {
    known(body, type, {"conditionname", "payload"}, statement_start_);
    Notify n;
    n.kind = type == "ListenStmt" ? Notify::Kind::listen : type == "UnlistenStmt" ? Notify::Kind::unlisten : Notify::Kind::notify;
    n.channel = body.value("conditionname", "");
    n.payload = body.value("payload", "");
    s.body = std::move(n);
  } else if (type == "CreateStmt") {
    s.body = create_table(body);
  } else if (type == "ViewStmt") {
    s.body = create_view(body);
  } else if (type == "CreateSchemaStmt" || type == "CreateExtensionStmt" ||
             (type == "DropStmt" && (body.value("removeType", "") == "OBJECT_SCHEMA" || body.value("removeType", "") == "OBJECT_EXTENSION"))) {
    s.body = schema_or_extension(type, body);
  } else if (type == "DropStmt" && body.value("removeType", "") != "OBJECT_INDEX" && body.value("removeType", "") != "OBJECT_TRIGGER") {
    s.body = drop(body);
  } else if (type == "CreateEnumStmt" || type == "CompositeTypeStmt" || type == "AlterEnumStmt") {
    s.body = create_type(type, body);
  } else if (type == "AlterTableStmt") {
    s.body = alter_table(body);
  } else if (type == "DropStmt" && body.value("removeType", "") == "OBJECT_INDEX") {
    s.body = drop_index(body);
  } else if (type == "RenameStmt") {
    s.body = rename(body);
  } else if (type == "AlterSeqStmt") {
    s.body = alter_sequence(body);
  } else if (type == "CreateFunctionStmt") {
    s.body = create_function(body);
  } else if (type == "CreateTrigStmt" || (type == "DropStmt" && body.value("removeType", "") == "OBJECT_TRIGGER")) {
    s.body = trigger(type, body);
  } else if (type == "CreateSeqStmt") {
    s.body = create_sequence(body);
  } else if (type == "IndexStmt") {
    s.body = create_index(body);
  } else if (type == "TransactionStmt") {
    s.body = transaction(body);
  } else if (type == "VariableSetStmt" && body.value("kind", "") == "VAR_SET_MULTI" && body.value("name", "") == "TRANSACTION") {
    Transaction t{.kind = Transaction::Kind::set_transaction};
    if (body.contains("args")) transaction_options(body.at("args"), t, statement_start_);
    s.body = std::move(t);
  } else if (type == "ConstraintsSetStmt") {
    known(body, type, {"constraints", "deferred"}, statement_start_);
    Transaction t{.kind = Transaction::Kind::set_constraints};
    t.deferred = body.value("deferred", false);
    if (body.contains("constraints")) {
      for (const json& c : body.at("constraints")) t.constraints.push_back(relation(*node(c).second, statement_start_).first);
    }
    s.body = std::move(t);
  } else if (type == "VariableSetStmt" && body.value("kind", "") == "VAR_RESET_ALL") {
    s.body = SessionReset{};
  } else if (type == "VariableSetStmt") {
    s.body = set_variable(body);
  } else if (type == "DiscardStmt") {
    known(body, type, {"target"}, statement_start_);
    const std::string target = body.value("target", "");
    using K = SessionReset::Kind;
    s.body = SessionReset{target == "DISCARD_ALL" || target.empty() ? K::discard_all : target == "DISCARD_PLANS" ? K::discard_plans
                          : target == "DISCARD_SEQUENCES"                                  ? K::discard_sequences
                                                                                         : K::discard_temp};
  } else if (type == "VariableShowStmt") {
    s.body = show(body);
  } else if (type == "LockStmt") {
    s.body = lock_tables(body);
  } else if (type == "DoStmt") {
    s.body = do_block(body);
  } else if (type == "VacuumStmt" || type == "CommentStmt" || type == "TruncateStmt") {
    s.body = type == "VacuumStmt" ? vacuum(body) : type == "CommentStmt" ? comment(body) : truncate(body);
  } else {
    refuse(construct_of_node(type, body), location_of(body, statement_start_));
  }
  return s;
}

std::pair<std::string, std::string> Reader::relation(const json& body, int fallback) const {
  known(body, "RangeVar", {"relname", "inh", "relpersistence", "alias", "schemaname"}, fallback);
  const int loc = location_of(body, fallback);
  const std::string name = body.at("relname");  // its schema: resolved as the statement runs (plan.h's Schema)
  if (name.starts_with("pg_") || name.starts_with("information_schema")) refuse(fmt::format("the system view {}", name), loc);
  if (body.value("schemaname", "") == "information_schema") refuse(fmt::format("the system view information_schema.{}", name), loc);
  add_once(relations_, {body.value("schemaname", ""), name});
  std::string alias;
  if (body.contains("alias")) {
    const json& a = body.at("alias");
    if (a.contains("colnames")) refuse("column aliases", loc);
    alias = a.value("aliasname", "");
  }
  return {name, alias};
}

Select Reader::select(const json& body, int fallback, bool in_insert) {
  const Deeper deeper(*this, location_of(body, fallback));
  known(body, "SelectStmt",
        {"targetList", "fromClause", "whereClause", "sortClause", "limitCount", "limitOffset", "limitOption",
         "lockingClause", "op", "valuesLists", "withClause", "groupClause", "havingClause", "all", "larg", "rarg", "distinctClause",
         "windowClause"},
        fallback);
  if (body.value("op", "SETOP_NONE") != "SETOP_NONE") return set_operation(body, fallback, in_insert);  // parse_from.cc
  if (body.contains("valuesLists") && !in_insert) refuse("VALUES outside INSERT", fallback);
  if (body.value("limitOption", "LIMIT_OPTION_DEFAULT") == "LIMIT_OPTION_WITH_TIES") refuse("FETCH ... WITH TIES", fallback);
  const bool pid_set = std::exchange(pid_set_, false);
  Select s;
  std::vector<std::string> pushed_here;  // FROM subqueries its FOR UPDATE OF names, locked inside them
  if (body.contains("withClause")) s.with = with_clause(body.at("withClause"), fallback, body);
  if (body.contains("fromClause")) {
    const json& from = body.at("fromClause");
    const auto [ftype, fb] = node(from.at(0));
    if (from.size() == 1 && ftype == "RangeVar" && system_view(*fb).empty()) {
      std::tie(s.table, s.alias) = relation(*fb, fallback);
    } else {
      pushed_here = from_list(body, s, fallback);  // model/sql/parse_from.cc
    }
  }
  if (body.contains("targetList")) {
    const bool outer_window = std::exchange(window_allowed_, true);  // window functions: in the select list only
    if (body.contains("windowClause")) check_window_clause(body.at("windowClause"), fallback);  // parse_grouping.cc
    const json* outer_windows = std::exchange(windows_, body.contains("windowClause") ? &body.at("windowClause") : nullptr);
    for (const json& t : body.at("targetList")) {
      window_allowed_ = true;
      s.targets.push_back(target(t, fallback));
    }
    window_allowed_ = outer_window;
    windows_ = outer_windows;
  }
  const auto has_using = [](const FromItem& f, const auto& self) -> bool {
    return !f.using_columns.empty() || std::any_of(f.sides.begin(), f.sides.end(), [&](const FromItem& side) { return self(side, self); });
  };
  if (std::any_of(s.targets.begin(), s.targets.end(), [](const Target& t) { return t.star && t.star_of.empty(); }) &&
      std::any_of(s.from.begin(), s.from.end(), [&](const FromItem& f) { return has_using(f, has_using); })) {
    refuse("SELECT * over JOIN ... USING (name the columns)", fallback);
  }
  if (body.contains("whereClause")) s.where = expr(body.at("whereClause"), fallback);
  if (body.contains("sortClause")) {
    for (const json& o : body.at("sortClause")) s.order_by.push_back(order_item(o, fallback));
    // ORDER BY a name: the select list's output column of that name first, as the server
    // reads it (then a column of the FROM).
    for (OrderItem& o : s.order_by) {
      if (o.expr.kind != Expr::Kind::column || !o.expr.qualifier.empty()) continue;
      const auto is_named = [&](const Target& t) { return !t.star && t.name == o.expr.name; };
      const auto named = std::find_if(s.targets.begin(), s.targets.end(), is_named);
      if (named == s.targets.end()) continue;
      const auto other = std::find_if(named + 1, s.targets.end(), is_named);  // a second of another value: 42702
      if (other != s.targets.end() && !same_expr(other->expr, named->expr)) fail("42702", fmt::format("ORDER BY \"{}\" is ambiguous", o.expr.name), o.expr.location);
      o.expr = named->expr;
    }
  }
  if (body.contains("limitCount")) s.limit = expr(body.at("limitCount"), fallback);
  if (body.contains("limitOffset")) s.offset = expr(body.at("limitOffset"), fallback);
  if (body.contains("lockingClause")) locking(body.at("lockingClause"), s, fallback, pushed_here);
  if (body.contains("distinctClause")) distinct(body.at("distinctClause"), s, fallback);  // parse_from.cc
  if (body.contains("groupClause")) group_by(body.at("groupClause"), s, fallback);
  if (body.contains("havingClause")) s.having = expr(body.at("havingClause"), fallback);
  check_aggregates(s, fallback);
  check_system_views(s, fallback, pid_set);  // model/sql/parse_system_views.cc
  push_quals_into_subquery(s);       // model/sql/parse_pushdown.cc
  return s;
}

std::vector<CommonTable> Reader::with_clause(const json& clause, int fallback, const json& statement) {
  const int loc = location_of(clause, fallback);
  const bool recursive = clause.value("recursive", false);
  known(clause, "WithClause", {"ctes", "recursive"}, loc);
  std::vector<CommonTable> out;
  for (const json& c : clause.at("ctes")) {
    const json& cte = *node(c).second;
    const int cloc = location_of(cte, loc);
    known(cte, "CommonTableExpr", {"ctename", "ctematerialized", "ctequery", "aliascolnames"}, cloc);
    const auto [qtype, q] = node(cte.at("ctequery"));
    CommonTable t{cte.at("ctename"), nullptr, nullptr, cloc};
    t.materialized = cte.value("ctematerialized", "") == "CTEMaterializeAlways";
    if (cte.contains("aliascolnames")) {
      for (const json& n : cte.at("aliascolnames")) t.column_names.push_back(str(n));
    }
    t.recursive = recursive && names_relation(cte.at("ctequery"), t.name);
    if (qtype == "InsertStmt" || qtype == "UpdateStmt" || qtype == "DeleteStmt") {
      t.modifying = modifying_cte(qtype, *q, t.name, cloc);  // model/sql/parse_from.cc
    } else if (qtype != "SelectStmt") {
      refuse(fmt::format("{} in WITH", qtype.substr(0, qtype.size() - 4)), cloc);
    } else {
      if (t.recursive && q->contains("lockingClause")) fail("0A000", "FOR UPDATE/SHARE in a recursive query is not implemented", cloc);  // checkWellFormedRecursion's, first
      t.select = std::make_shared<Select>(select(*q, cloc, false));
      if (!t.select->with.empty()) refuse("WITH inside a WITH query", cloc);
      if (t.recursive) {
        const SetOperation* so = t.select->set_op.get();
        if (so == nullptr || so->op != SetOperation::Op::union_) {
          fail("42P19", fmt::format("recursive query \"{}\" does not have the form non-recursive-term UNION [ALL] recursive-term", t.name), cloc);
        }
        if (!t.select->order_by.empty() || t.select->limit || t.select->offset) refuse("ORDER BY, LIMIT or OFFSET in a recursive query", cloc);
        if (names_relation(q->at("larg"), t.name)) {
          fail("42P19", fmt::format("recursive reference to query \"{}\" must not appear within its non-recursive term", t.name), cloc);
        }
        int references = 0;  // checkWellFormedRecursion: once, and not in an expression's subquery
        bool in_sublink = false;
        count_references(q->at("rarg"), t.name, false, references, in_sublink);
        if (in_sublink) fail("42P19", fmt::format("recursive reference to query \"{}\" must not appear within a subquery", t.name), cloc);
        if (references > 1) fail("42P19", fmt::format("recursive reference to query \"{}\" must not appear more than once", t.name), cloc);
      }
    }
    int references = 0;  // anywhere: the statement, another WITH query, itself
    bool in_sublink = false;
    count_references(statement, t.name, false, references, in_sublink);
    t.read = references > 0;
    t.read_in_one_place = references == 1 && !in_sublink;
    if (std::any_of(out.begin(), out.end(), [&](const CommonTable& o) { return o.name == t.name; })) {
      fail("42712", fmt::format("WITH query name \"{}\" specified more than once", t.name), cloc);
    }
    out.push_back(std::move(t));
  }
  return out;
}

Update Reader::update(const json& body) {
  const int loc = statement_start_;
  known(body, "UpdateStmt", {"relation", "targetList", "whereClause", "returningList", "fromClause", "withClause"}, loc);
  Update u;
  if (body.contains("withClause")) u.with = with_clause(body.at("withClause"), loc, body);
  std::tie(u.table, u.alias) = relation(body.at("relation"), loc);
  if (body.contains("fromClause")) std::tie(u.from, u.from_alias) = joined(body.at("fromClause"), "UPDATE ... FROM", loc, u.with, u.from_join);
  for (const json& t : body.at("targetList")) u.set.push_back(assignment(t, loc));
  if (body.contains("whereClause")) u.where = expr(body.at("whereClause"), loc);
  if (body.contains("returningList")) u.returning = returning(body.at("returningList"), loc);
  return u;
}

Delete Reader::remove(const json& body) {
  const int loc = statement_start_;
  known(body, "DeleteStmt", {"relation", "whereClause", "returningList", "usingClause", "withClause"}, loc);
  Delete d;
  if (body.contains("withClause")) d.with = with_clause(body.at("withClause"), loc, body);
  std::tie(d.table, d.alias) = relation(body.at("relation"), loc);
  if (body.contains("usingClause")) std::tie(d.from, d.from_alias) = joined(body.at("usingClause"), "DELETE ... USING", loc, d.with, d.from_join);
  if (body.contains("whereClause")) d.where = expr(body.at("whereClause"), loc);
  if (body.contains("returningList")) d.returning = returning(body.at("returningList"), loc);
  return d;
}

OrderItem Reader::order_item(const json& o, int fallback) {
  const auto [type, b] = node(o);
  known(*b, "SortBy", {"node", "sortby_dir", "sortby_nulls"}, fallback);
  OrderItem item{expr(b->at("node"), fallback)};
  const std::string dir = b->value("sortby_dir", "SORTBY_DEFAULT");
  if (dir == "SORTBY_USING") refuse("ORDER BY ... USING", fallback);
  item.descending = dir == "SORTBY_DESC";
  const std::string nulls = b->value("sortby_nulls", "SORTBY_NULLS_DEFAULT");
  if (nulls == "SORTBY_NULLS_FIRST") item.nulls_first = true;
  if (nulls == "SORTBY_NULLS_LAST") item.nulls_first = false;
  return item;
}

void Reader::locking(const json& clauses, Select& s, int fallback, const std::vector<std::string>& pushed) {
  if (clauses.size() != 1) refuse("several locking clauses", fallback);
  const json& c = *node(clauses.at(0)).second;
  known(c, "LockingClause", {"strength", "waitPolicy", "lockedRels"}, fallback);
  const std::string strength = c.value("strength", "");
  s.lock = strength == "LCS_FORUPDATE" ? RowLock::update : strength == "LCS_FORNOKEYUPDATE" ? RowLock::no_key_update
           : strength == "LCS_FORKEYSHARE" ? RowLock::key_share : RowLock::share;
  if (c.contains("lockedRels")) {  // FOR UPDATE OF: relations by name or alias
    for (const json& r : c.at("lockedRels")) {
      const json& rel = *node(r).second;
      const std::string named = rel.value("relname", "");
      if (rel.contains("schemaname")) fail("42601", fmt::format("{} must specify unqualified relation names", lock_clause_name(s.lock)), location_of(rel, fallback));
      if (!s.from.empty()) {  // checked when run (sim/pg/executor/sql_lock_rows.cc): a FROM item may name a WITH query
        if (std::find(pushed.begin(), pushed.end(), named) == pushed.end()) s.lock_of.push_back(named);
        continue;
      }
      if (named != (s.alias.empty() ? s.table : s.alias)) {
        fail("42P01", fmt::format("relation \"{}\" in {} clause not found in FROM clause", named, lock_clause_name(s.lock)), location_of(rel, fallback));
      }
    }
  }
  const std::string wait = c.value("waitPolicy", "LockWaitBlock");
  // OF its FROM subqueries only (they lock, it does not), or without OF over its WITH query alone (ignored, as the server's)
  const bool with_alone = !c.contains("lockedRels") && s.from.empty() && std::ranges::any_of(s.with, [&](const CommonTable& w) { return w.name == s.table; });
  if ((!pushed.empty() && s.lock_of.empty()) || with_alone) return void(s.lock = RowLock::none);
  s.wait = wait == "LockWaitSkip" ? LockWait::skip_locked : wait == "LockWaitError" ? LockWait::nowait : LockWait::wait;
  if (s.table.empty() && s.from.empty()) fail("0A000", "FOR UPDATE without FROM has no rows to lock", fallback);
}

}  // namespace detail

std::string Statement::tag() const {
  struct Tag {
    std::string operator()(const Select& s) const { return s.show ? "SHOW" : "SELECT"; }
    std::string operator()(const Insert&) const { return "INSERT"; }
    std::string operator()(const Update&) const { return "UPDATE"; }
    std::string operator()(const Delete&) const { return "DELETE"; }
    std::string operator()(const CreateTable&) const { return "CREATE TABLE"; }
    std::string operator()(const DropTable& d) const { return d.types ? "DROP TYPE" : d.sequences ? "DROP SEQUENCE" : d.functions ? "DROP FUNCTION" : "DROP TABLE"; }
    std::string operator()(const CreateSequence&) const { return "CREATE SEQUENCE"; }
    std::string operator()(const CreateType& t) const { return t.alter ? "ALTER TYPE" : "CREATE TYPE"; }
    std::string operator()(const CreateFunction&) const { return "CREATE FUNCTION"; }
    std::string operator()(const DoBlock&) const { return "DO"; }
    std::string operator()(const AlterTable& a) const {
      const AlterCommand::Kind k = a.commands.empty() ? AlterCommand::Kind::drop_index : a.commands[0].kind;
      if (k == AlterCommand::Kind::add_trigger || k == AlterCommand::Kind::drop_trigger) return k == AlterCommand::Kind::add_trigger ? "CREATE TRIGGER" : "DROP TRIGGER";
      if (!a.table.empty()) return "ALTER TABLE";
      if (k == AlterCommand::Kind::rename_index) return "ALTER INDEX";
      return k == AlterCommand::Kind::alter_sequence || k == AlterCommand::Kind::rename_sequence ? "ALTER SEQUENCE" : "DROP INDEX";
    }
    std::string operator()(const CreateIndex&) const { return "CREATE INDEX"; }
    std::string operator()(const Schema& s) const { return s.create ? "CREATE SCHEMA" : "DROP SCHEMA"; }
    std::string operator()(const SetVariable& s) const { return s.reset ? "RESET" : "SET"; }
    std::string operator()(const SessionReset& r) const {
      using K = SessionReset::Kind;
      return r.kind == K::reset_all ? "RESET" : r.kind == K::discard_all ? "DISCARD ALL" : r.kind == K::discard_plans ? "DISCARD PLANS"
             : r.kind == K::discard_sequences ? "DISCARD SEQUENCES" : "DISCARD TEMP";
    }
    std::string operator()(const LockTables& l) const {
      return l.maintenance == LockTables::Maintenance::vacuum    ? "VACUUM"
             : l.maintenance == LockTables::Maintenance::analyze ? "ANALYZE"
             : l.maintenance == LockTables::Maintenance::comment ? "COMMENT"
             : l.maintenance == LockTables::Maintenance::truncate ? "TRUNCATE TABLE"
                                                                 : "LOCK TABLE";
    }
    std::string operator()(const Notify& n) const {
      return n.kind == Notify::Kind::listen ? "LISTEN" : n.kind == Notify::Kind::unlisten ? "UNLISTEN" : "NOTIFY";
    }
    std::string operator()(const Transaction& t) const {
      switch (t.kind) {
        case Transaction::Kind::begin: return t.start ? "START TRANSACTION" : "BEGIN";
        case Transaction::Kind::commit: return "COMMIT";
        case Transaction::Kind::rollback: return "ROLLBACK";
        case Transaction::Kind::savepoint: return "SAVEPOINT";
        case Transaction::Kind::release: return "RELEASE";
        case Transaction::Kind::rollback_to: return "ROLLBACK";
        case Transaction::Kind::set_transaction: return "SET";
        case Transaction::Kind::set_constraints: return "SET CONSTRAINTS";
      }
      return "?";
    }
  };
  return std::visit(Tag{}, body);
}

std::size_t invalid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    std::size_t n = 0;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b < 0x80) {
      ++i;
      continue;
    } else if (b >= 0xC2 && b <= 0xDF) {
      n = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 2;
      if (b == 0xE0) lo = 0xA0;
      if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;
    } else {
      return i;
    }
    for (std::size_t k = 1; k <= n; ++k) {
      if (i + k >= text.size()) return i;
      const auto c = static_cast<unsigned char>(text[i + k]);
      if (c < (k == 1 ? lo : 0x80) || c > (k == 1 ? hi : 0xBF)) return i;
    }
    i += n + 1;
  }
  return std::string_view::npos;
}

std::vector<Statement> parse_sql(std::string_view text) {
  if (const std::size_t bad = invalid_utf8(text); bad != std::string_view::npos) {
    const int position = static_cast<int>(std::count_if(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(bad),
                                                         [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; })) + 1;
    throw SqlInputError("22021", fmt::format("invalid byte sequence for encoding \"UTF8\": 0x{:02x}", static_cast<unsigned char>(text[bad])),
                        position);
  }
  const std::string owned((detail::refuse_trees_too_deep_to_parse(text), text));
  PgQueryParseResult r = pg_query_parse(owned.c_str());
  if (r.error != nullptr) {
    const int position = r.error->cursorpos;
    const std::string message = position > 0 ? fmt::format("{}, {}", r.error->message, detail::where_in(text, position)) : r.error->message;
    pg_query_free_parse_result(r);
    throw SqlInputError("42601", message, position);
  }
  detail::json tree;
  try {
    tree = detail::json::parse(r.parse_tree);
  } catch (...) {
    pg_query_free_parse_result(r);
    throw;
  }
  pg_query_free_parse_result(r);
  return detail::Reader(text).statements(tree);
}

std::size_t statement_count(std::string_view text) {
  const std::string owned(text);
  PgQuerySplitResult r = pg_query_split_with_scanner(owned.c_str());
  const std::size_t n = r.error != nullptr ? 0 : static_cast<std::size_t>(r.n_stmts);
  pg_query_free_split_result(r);
  return n;
}

Statement parse_statement(std::string_view text) {
  std::vector<Statement> all = parse_sql(text);
  if (all.size() != 1) {
    throw SqlInputError("42601", all.empty() ? "no statement in the text" : "several statements where one is expected",
                        all.empty() ? 0 : 1);
  }
  return std::move(all.front());
}

}  // namespace lockstep::sql
