// model/sql/parse_from.cc: data-modifying WITH queries, UNION / INTERSECT / EXCEPT, UPDATE ... FROM
// and DELETE ... USING's relation, and a FROM other than one table, read into FromItems (model/sql/plan.h):
// JOIN (inner, left, cross; ON), comma lists, subqueries, VALUES and set-returning functions,
// LATERAL. RIGHT, FULL and NATURAL joins, JOIN ... USING, ROWS FROM and other functions in
// FROM are refused by name with their position.
#include <algorithm>
#include <array>
#include <memory>
#include <variant>

#include "lockstep/model/sql/functions.h"
#include "lockstep/model/sql/json_populate.h"
#include "lockstep/model/sql/parse_reader.h"

namespace lockstep::sql::detail {
namespace {

constexpr std::string_view kFromFunctions[] = {"unnest",     "generate_series",  "jsonb_array_elements", "jsonb_array_elements_text", "json_array_elements", "json_array_elements_text",
                                               "jsonb_each", "jsonb_each_text", "jsonb_object_keys", "json_to_recordset", "jsonb_to_recordset",
                                               "json_populate_record", "jsonb_populate_record", "json_populate_recordset", "jsonb_populate_recordset"};

// An expression's leftmost position, as the server points at it (exprLocation).
int from_leftmost(const Expr& e) {
  int at = e.location;
  for (const Expr& a : e.args) {
    const int l = from_leftmost(a);
    if (l >= 0 && (at < 0 || l < at)) at = l;
  }
  return at;
}

const std::vector<CommonTable>* from_with_of(const Statement& st) {
  if (const auto* sel = std::get_if<Select>(&st.body)) return &sel->with;
  if (const auto* ins = std::get_if<Insert>(&st.body)) return &ins->with;
  if (const auto* up = std::get_if<Update>(&st.body)) return &up->with;
  if (const auto* del = std::get_if<Delete>(&st.body)) return &del->with;
  return nullptr;
}

std::string from_written_table(const Statement& st) {
  if (const auto* ins = std::get_if<Insert>(&st.body)) return ins->table;
  if (const auto* up = std::get_if<Update>(&st.body)) return up->table;
  if (const auto* del = std::get_if<Delete>(&st.body)) return del->table;
  return {};
}

}  // namespace

std::shared_ptr<const Statement> Reader::modifying_cte(std::string_view type, const json& body, const std::string& name, int loc) {
  auto st = std::make_shared<Statement>();
  if (type == "InsertStmt") {
    st->body = insert(body);
  } else if (type == "UpdateStmt") {
    st->body = update(body);
  } else {
    st->body = remove(body);
  }
  const std::vector<CommonTable>* inner = from_with_of(*st);
  if (inner != nullptr) {  // its own WITH queries (a FROM function's too) are read, none may write
    for (const CommonTable& c : *inner) {
      if (c.modifying) fail("0A000", "WITH clause containing a data-modifying statement must be at the top level", c.location >= 0 ? c.location : loc);
    }
  }
  st->text = fmt::format("WITH {} AS ({} ...)", name, st->tag());
  st->has_subquery = true;  // its scan comes first, as a statement with subqueries scans (no pinned row)
  return st;
}

bool Reader::names_relation(const json& n, std::string_view name) {
  int count = 0;
  bool in_sublink = false;
  count_references(n, name, false, count, in_sublink);
  return count > 0;
}

namespace {

// count_references' walk of the parse tree, before the reader's own depth checks: false where
// the tree nests deeper than `depth` more levels (it runs on the caller's stack).
bool from_count_references(const json& n, std::string_view name, bool under_sublink, int& count, bool& in_sublink, int depth) {
  if (depth <= 0 || stack_room() < kStackRoomNeeded) return false;
  if (n.is_array()) {
    for (const json& c : n) {
      if (!from_count_references(c, name, under_sublink, count, in_sublink, depth - 1)) return false;
    }
    return true;
  }
  if (!n.is_object()) return true;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (it.key() == "RangeVar" && it->is_object() && !it->contains("schemaname") && it->value("relname", "") == name) {
      ++count;
      in_sublink = in_sublink || under_sublink;
      continue;
    }
    if (!from_count_references(*it, name, under_sublink || it.key() == "SubLink", count, in_sublink, depth - 1)) return false;
  }
  return true;
}

}  // namespace

void Reader::count_references(const json& n, std::string_view name, bool under_sublink, int& count, bool& in_sublink) {
  // A parse tree level per JSON object or array: a few per expression or subquery level.
  static_assert(kMaxTreeDepth == 8 * kMaxDepth);
  if (!from_count_references(n, name, under_sublink, count, in_sublink, kMaxTreeDepth)) {
    throw SqlInputError("0A000", fmt::format("nesting deeper than {} levels (expressions and subqueries) is not in lockstep's SQL subset (docs/sql.md)", kMaxDepth), 1);
  }
}

std::vector<std::size_t> Reader::streamed_deletes(Statement& s, const json& tree) const {
  // pg-boss's fail (v11): WITH d AS (DELETE FROM x ... RETURNING *), r AS (INSERT INTO x ...
  // SELECT ... FROM d [ON CONFLICT DO NOTHING] RETURNING *), f AS (INSERT INTO x ... SELECT ...
  // FROM d WHERE id NOT IN (SELECT id FROM r) ...), results AS (SELECT * FROM r UNION ALL
  // SELECT * FROM f), dlq AS (INSERT INTO x ... FROM results ...) SELECT count(*) FROM results.
  // The server's r pulls d's rows one at a time: it deletes a row, inserts what r makes of it,
  // then deletes the next (d's DELETE runs as r asks); the simulation runs them so
  // (streams_into_next). Whatever else reads d also reads r, which it has then read whole
  // (after r's first row at most: the same order); the other writers of x read r, or are read
  // by nothing and come last (ExecPostprocessPlan runs them at the end, as the simulation does).
  auto* sel = std::get_if<Select>(&s.body);
  if (sel == nullptr) return {};
  std::vector<CommonTable>& with = sel->with;
  const auto deletes = [](const CommonTable& c) { return c.modifying && std::holds_alternative<Delete>(c.modifying->body); };
  if (std::none_of(with.begin(), with.end(), deletes)) return {};  // (no copy of the tree for the rest)
  const json& body = *node(tree).second;
  if (!body.contains("withClause")) return {};
  const json& clause = body.at("withClause").contains("WithClause") ? body.at("withClause").at("WithClause") : body.at("withClause");
  std::vector<const json*> queries;  // each WITH query's parse tree, in order
  for (const json& c : clause.at("ctes")) queries.push_back(&node(c).second->at("ctequery"));
  if (queries.size() != with.size()) return {};
  json main_query = body;  // the statement without its WITH
  main_query.erase("withClause");
  const auto names = [&](std::size_t j, const std::string& name) { return j == with.size() ? names_relation(main_query, name) : names_relation(*queries[j], name); };
  std::vector<std::size_t> members;
  for (std::size_t k = 0; k + 1 < with.size(); ++k) {
    const CommonTable& d = with[k];
    const CommonTable& r = with[k + 1];
    const auto* del = d.modifying ? std::get_if<Delete>(&d.modifying->body) : nullptr;
    const auto* ins = r.modifying ? std::get_if<Insert>(&r.modifying->body) : nullptr;
    if (del == nullptr || ins == nullptr || ins->table != del->table || ins->select == nullptr || ins->on_conflict == Insert::OnConflict::update) continue;
    const Select& q = *ins->select;  // row by row: one row of r per row of d, made as it comes
    const std::string r_tree = queries[k + 1]->dump();
    const bool row_by_row = q.table == d.name && q.from.empty() && q.with.empty() && !q.set_op && !q.aggregate && q.group_by.empty() && !q.having &&
                            q.order_by.empty() && !q.limit && !q.offset && !q.distinct && q.distinct_on.empty() &&
                            r_tree.find("SubLink") == std::string::npos && r_tree.find("WindowDef") == std::string::npos;
    bool read_by_main = false;  // r is read as the statement runs (by it, or by a WITH query it reads)
    for (std::size_t j = k + 2; j <= with.size(); ++j) {
      if (names(j, r.name) && (j == with.size() || (!with[j].modifying && names(with.size(), with[j].name)))) read_by_main = true;
    }
    bool fits = row_by_row && read_by_main;
    std::vector<std::size_t> group{k, k + 1};
    bool unread_met = false;
    for (std::size_t j = k + 2; fits && j <= with.size(); ++j) {
      if (names(j, d.name) && !names(j, r.name)) fits = false;  // reads d, not r: d's order is another's
      if (j == with.size() || !with[j].modifying) continue;
      const auto* other = std::get_if<Insert>(&with[j].modifying->body);
      if (from_written_table(*with[j].modifying) != del->table) continue;
      if (other == nullptr || other->on_conflict == Insert::OnConflict::update) fits = false;
      if (!with[j].read) unread_met = true;
      if (with[j].read && (unread_met || !names(j, r.name))) fits = false;  // a read writer after an unread one, or one not after r
      group.push_back(j);
    }
    for (std::size_t j = 0; fits && j < k; ++j) {
      if (with[j].modifying && from_written_table(*with[j].modifying) == del->table) fits = false;
    }
    if (!fits) continue;
    with[k].streams_into_next = true;
    members.insert(members.end(), group.begin(), group.end());
  }
  return members;
}

void Reader::check_modifying_ctes(Statement& s, const json& tree, int loc) const {
  const std::vector<CommonTable>* with = from_with_of(s);
  if (with == nullptr) return;
  const std::vector<std::size_t> streamed = streamed_deletes(s, tree);
  // pg-boss's fail: WITH u AS (UPDATE x ... RETURNING *), i AS (INSERT INTO x SELECT ... FROM
  // u ...) SELECT count(*) FROM u. The main query reads all of u, so the UPDATE runs to
  // completion first; i, which nothing reads, runs at the statement's end
  // (ExecPostprocessPlan): the order the simulation runs them in. (Where the main query does
  // not read all of the first writer, the server runs the INSERT first, pulling the first
  // writer's rows as it needs them: refused.)
  const auto update_then_insert = [&](std::size_t first, std::size_t second) {
    const auto* sel = std::get_if<Select>(&s.body);
    const CommonTable& upd = (*with)[first];
    const CommonTable& ins = (*with)[second];
    const auto* in = std::get_if<Insert>(&ins.modifying->body);
    return first < second && sel != nullptr && std::holds_alternative<Update>(upd.modifying->body) && in != nullptr &&
           in->on_conflict != Insert::OnConflict::update && sel->table == upd.name && sel->from.empty() && !sel->limit && !sel->offset &&
           !sel->set_op && !names_relation(tree, ins.name);
  };
  // Hangfire's upsert: WITH v AS (SELECT $1 AS key, ...), u AS (UPDATE x ... FROM v ...
  // RETURNING ...) INSERT INTO x SELECT ... FROM v WHERE NOT EXISTS (SELECT 1 FROM u ...).
  // The INSERT's one row at most is decided by reading u, which runs the UPDATE first: found
  // there, nothing is inserted (whatever the UPDATE does later); not found, the UPDATE ran to
  // completion before the insert. The simulation's order (the UPDATE, then the INSERT).
  const auto update_then_one_row_insert = [&](std::size_t k) {
    const auto* ins = std::get_if<Insert>(&s.body);
    const CommonTable& upd = (*with)[k];
    if (ins == nullptr || ins->select == nullptr || ins->on_conflict == Insert::OnConflict::update) return false;
    const json& body = *node(tree).second;  // the INSERT's own query reads it (not only RETURNING)
    if (!std::holds_alternative<Update>(upd.modifying->body) || !body.contains("selectStmt") || !names_relation(body.at("selectStmt"), upd.name)) {
      return false;
    }
    const auto one_row = [](const Select& q) {
      return q.table.empty() && q.from.empty() && !q.set_op && q.group_by.empty() &&
             std::none_of(q.targets.begin(), q.targets.end(), [](const Target& t) {
               return t.star || (t.expr.kind == Expr::Kind::func && select_list_set_returning(t.expr.name));
             });
    };
    const Select& sel = *ins->select;
    if (one_row(sel)) return true;
    if (!sel.from.empty() || sel.set_op) return false;
    return std::any_of(with->begin(), with->end(), [&](const CommonTable& v) { return v.name == sel.table && v.select != nullptr && !v.recursive && one_row(*v.select); });
  };
  // Que's reenqueue: WITH d AS (DELETE FROM t ...) INSERT INTO t VALUES (...). The server runs
  // a query nothing reads after the INSERT, on its snapshot: the new rows unseen, an existing
  // key inserted again 23505 (sim/pg/executor/sql_joins.cc). Not beside ON CONFLICT, which
  // would change rows the query then finds changed by its own command.
  const auto after_plain_insert = [&](std::size_t k) {
    const auto* ins = std::get_if<Insert>(&s.body);
    const CommonTable& c = (*with)[k];
    return ins != nullptr && ins->on_conflict == Insert::OnConflict::none && !c.read && !std::holds_alternative<Insert>(c.modifying->body);
  };
  // The other parts of a statement may read the table a data-modifying WITH query writes
  // (they see it as the statement found it: sim/pg/executor/sql_joins.cc); two writers of one table
  // in one statement are refused (the server's outcome depends on which runs first).
  for (std::size_t k = 0; k < with->size(); ++k) {
    const CommonTable& c = (*with)[k];
    if (!c.modifying) continue;
    const std::string written = from_written_table(*c.modifying);
    std::vector<std::string> writers;
    if (!update_then_one_row_insert(k) && !after_plain_insert(k)) writers.push_back(from_written_table(s));
    for (std::size_t i = 0; i < with->size(); ++i) {
      const CommonTable& o = (*with)[i];
      if (&o == &c || !o.modifying) continue;
      if (update_then_insert(k, i) || update_then_insert(i, k)) continue;
      if (std::find(streamed.begin(), streamed.end(), k) != streamed.end() && std::find(streamed.begin(), streamed.end(), i) != streamed.end()) continue;
      writers.push_back(from_written_table(*o.modifying));
    }
    if (std::find(writers.begin(), writers.end(), written) != writers.end()) {
      refuse(fmt::format("a data-modifying WITH query on \"{}\" beside another part of the statement that writes it", written),
             c.location >= 0 ? c.location : loc);
    }
  }
}

// JOIN ... USING (a, b): the condition left.a = right.a AND left.b = right.b, each side one
// relation (a table, subquery or function: a join's merged columns are outside the subset); the
// run reads an unqualified a as the left side's (sim/pg/executor/sql_from.cc: an inner or left join's).
void Reader::using_join(const json& list, FromItem& item, int at) {
  auto name_of = [&](const FromItem& side) {
    if (side.kind == FromItem::Kind::join) refuse("JOIN ... USING beside another join (write ON)", at);
    return from_item_name(side);
  };
  const std::string left = name_of(item.sides[0]), right = name_of(item.sides[1]);
  std::optional<Expr> on;
  for (const json& c : list) {
    const std::string column = str(c);
    if (std::find(item.using_columns.begin(), item.using_columns.end(), column) != item.using_columns.end()) {
      fail("42701", fmt::format("column name \"{}\" appears more than once in USING clause", column), at);
    }
    item.using_columns.push_back(column);
    Expr eq;
    eq.kind = Expr::Kind::op;
    eq.name = "=";
    eq.location = at;
    for (const std::string* relation : {&left, &right}) {
      Expr& ref = eq.args.emplace_back();
      ref.kind = Expr::Kind::column;
      ref.name = column;
      ref.qualifier = *relation;
      ref.location = at;
    }
    if (!on) {
      on = std::move(eq);
      continue;
    }
    Expr both;
    both.kind = Expr::Kind::and_;
    both.location = at;
    both.args.push_back(std::move(*on));
    both.args.push_back(std::move(eq));
    on = std::move(both);
  }
  item.on.push_back(std::move(*on));
}

std::vector<std::string> Reader::from_list(const json& body, Select& s, int fallback) {
  // Its locking clause is pushed into its FROM subqueries (each then a WITH query of its list).
  const json* locks = body.contains("lockingClause") && body.at("lockingClause").size() == 1 ? &body.at("lockingClause").at(0) : nullptr;
  const auto outer = std::tuple(std::exchange(hoist_to_, &s.with), std::exchange(outer_locking_, locks), std::exchange(pushed_, {}));
  for (const json& item : body.at("fromClause")) s.from.push_back(from_item(item, fallback));
  std::tie(hoist_to_, outer_locking_, std::ignore) = outer;
  return std::exchange(pushed_, std::get<2>(outer));
}

FromItem Reader::from_item(const json& n, int fallback) {
  const auto [type, b] = node(n);
  const json& body = *b;
  FromItem item;
  item.location = location_of(body, fallback);
  const int loc = item.location >= 0 ? item.location : fallback;
  auto alias = [&](const json& holder) {
    if (!holder.contains("alias")) return;
    const json& a = holder.at("alias");
    item.alias = a.value("aliasname", "");
    if (a.contains("colnames")) item.column_aliases = names(a.at("colnames"));
  };
  if (const std::string_view view = type == "RangeVar" ? system_view(body) : ""; !view.empty()) {  // model/sql/parse_system_views.cc
    item.table = std::string(view);
    alias(body);
    if (!item.column_aliases.empty()) refuse(fmt::format("column aliases of {}", view), loc);
    return item;
  }
  if (type == "RangeVar") {
    std::tie(item.table, item.alias) = relation(body, fallback);
    return item;
  }
  if (type == "JoinExpr") {
    known(body, "JoinExpr", {"jointype", "larg", "rarg", "quals", "usingClause", "isNatural", "alias", "join_using_alias", "rtindex"}, loc);
    const int right = first_location(body.value("rarg", json()));
    const int at = right >= 0 ? keyword_before(right, "join") : loc;
    const std::string join = body.value("jointype", "JOIN_INNER");
    if (join == "JOIN_RIGHT") refuse("RIGHT JOIN", at);
    if (join == "JOIN_FULL") refuse("FULL JOIN", at);
    if (join != "JOIN_INNER" && join != "JOIN_LEFT") refuse(fmt::format("the join {}", join), at);
    if (body.value("isNatural", false)) refuse("NATURAL JOIN", at);
    if (body.contains("join_using_alias")) refuse("an alias on JOIN ... USING", at);
    if (body.contains("alias")) refuse("an alias on a JOIN", at);
    item.kind = FromItem::Kind::join;
    item.left = join == "JOIN_LEFT";
    item.sides.push_back(from_item(body.at("larg"), loc));
    item.sides.push_back(from_item(body.at("rarg"), loc));
    if (body.contains("quals")) item.on.push_back(expr(body.at("quals"), at));
    if (body.contains("usingClause")) using_join(body.at("usingClause"), item, at);
    return item;
  }
  if (type == "RangeSubselect") {
    known(body, "RangeSubselect", {"lateral", "subquery", "alias"}, loc);
    item.lateral = body.value("lateral", false);
    alias(body);
    auto [stype, sb] = node(body.at("subquery"));
    const int at = first_location(body.at("subquery"));
    if (!body.contains("alias")) fail("42601", "subquery in FROM must have an alias", at >= 0 ? at : loc);
    json pushed;  // the query's FOR UPDATE [OF this], pushed into the subquery (transformLockingClause)
    if (const json* c = outer_locking_ != nullptr ? node(*outer_locking_).second : nullptr; c != nullptr && stype == "SelectStmt") {
      const auto named = [&](const json& r) { return node(r).second->value("relname", "") == item.alias; };
      if (!c->contains("lockedRels") || std::ranges::any_of(c->at("lockedRels"), named)) {
        if (sb->contains("lockingClause") || sb->contains("valuesLists")) refuse("FOR UPDATE over a subquery in FROM with its own locking clause or VALUES", loc);
        // One the planner pulls up (is_simple_subquery: a pushed-down mark does not stop it) has its
        // rows locked above it, those the query returns: not modelled.
        static constexpr std::array<const char*, 8> kKept = {"limitCount", "limitOffset", "sortClause", "groupClause", "havingClause", "distinctClause", "windowClause", "withClause"};
        if (std::none_of(kKept.begin(), kKept.end(), [&](const char* k) { return sb->contains(k); }) && sb->value("op", "SETOP_NONE") == "SETOP_NONE") {
          refuse("FOR UPDATE over a subquery in FROM that the planner pulls up (without LIMIT, ORDER BY, grouping or DISTINCT)", loc);
        }
        if (c->contains("lockedRels")) pushed_.push_back(item.alias);
        pushed = *sb;
        pushed["lockingClause"] = json::array({json{{"LockingClause", *c}}});
        pushed["lockingClause"][0]["LockingClause"].erase("lockedRels");
        sb = &pushed;
      }
    }
    if (stype != "SelectStmt") refuse(construct_of_node(stype, *sb), at >= 0 ? at : loc);
    if (sb->contains("valuesLists")) {
      known(*sb, "SelectStmt", {"valuesLists", "limitOption", "op"}, loc);
      item.kind = FromItem::Kind::values;
      for (const json& list : sb->at("valuesLists")) {
        std::vector<Expr> row;
        for (const json& v : node(list).second->at("items")) row.push_back(expr(v, loc));
        if (!item.values.empty() && row.size() != item.values.front().size()) {
          fail("42601", "VALUES lists must all be the same length", row.empty() ? loc : row.front().location);
        }
        item.values.push_back(std::move(row));
      }
      return item;
    }
    item.kind = FromItem::Kind::subquery;
    Select sub = select(*sb, at >= 0 ? at : loc, false);
    for (const CommonTable& c : sub.with) {  // its own WITH queries are computed once (sim/pg/executor/sql_subqueries.cc)
      if (c.modifying) fail("0A000", "WITH clause containing a data-modifying statement must be at the top level", c.location >= 0 ? c.location : loc);
    }
    if (sub.lock != RowLock::none) {
      // A locking subquery is never pulled up: it runs as a WITH query of its name (which the
      // planner inlines into the same plan), where no other relation of the statement has it.
      const auto taken = [&](const std::string& name) {  // (beside the query's own FOR UPDATE OF it)
        int named = 0, of = 0;
        bool in_sublink = false;
        count_references(*statement_json_, name, false, named, in_sublink);
        if (outer_locking_ != nullptr) count_references(*outer_locking_, name, false, of, in_sublink);
        return named > of || std::ranges::any_of(*hoist_to_, [&](const CommonTable& c) { return c.name == name; });
      };
      if (hoist_to_ == nullptr || statement_json_ == nullptr || item.lateral || !item.column_aliases.empty() || taken(item.alias)) refuse("FOR UPDATE inside a subquery in FROM", loc);
      hoist_to_->push_back(CommonTable{item.alias, std::make_shared<Select>(std::move(sub)), nullptr, loc});
      item.kind = FromItem::Kind::table, item.table = std::exchange(item.alias, "");
      return item;
    }
    item.select = std::make_shared<Select>(std::move(sub));
    return item;
  }
  if (type == "RangeFunction") {
    known(body, "RangeFunction", {"lateral", "ordinality", "is_rowsfrom", "functions", "alias", "coldeflist"}, loc);
    if (body.value("is_rowsfrom", false)) refuse("ROWS FROM", loc);
    const json& functions = body.at("functions");
    if (functions.size() != 1) refuse("ROWS FROM", loc);
    item.kind = FromItem::Kind::function;
    item.lateral = body.value("lateral", false);
    item.ordinality = body.value("ordinality", false);
    alias(body);
    const json& call = node(functions.at(0)).second->at("items").at(0);
    Expr e = expr(call, loc);
    if (e.kind == Expr::Kind::user_func) {
      // A function the server has (a plpgsql one returning a table's row: SELECT * FROM
      // procrastinate_fetch_job(...)): its columns are known when the statement runs.
      if (item.ordinality || body.contains("coldeflist")) refuse(fmt::format("WITH ORDINALITY or a column list on {}()", e.name), loc);
      item.function.push_back(std::move(e));
      return item;
    }
    if (e.kind != Expr::Kind::func ||
        std::find(std::begin(kFromFunctions), std::end(kFromFunctions), e.name) == std::end(kFromFunctions)) {
      refuse(fmt::format("the function {}() in FROM", e.kind == Expr::Kind::func ? e.name : "?"), e.location >= 0 ? e.location : loc);
    }
    const bool records = e.name == "json_to_recordset" || e.name == "jsonb_to_recordset";
    if (is_json_populate(e.name)) {
      // Its columns are the base's row type's (NULL::name: a table's or a composite type's).
      const Expr& base = e.args.at(0);
      const bool scalar = (base.kind == Expr::Kind::cast && base.type != Type::enum_) ||
                          (base.kind == Expr::Kind::constant && base.value.type() != Type::unknown && base.value.type() != Type::record);
      if (scalar) {
        fail("42804", fmt::format("first argument of {} must be a row type", e.name), e.location >= 0 ? e.location : loc);
      }
      if (base.kind == Expr::Kind::constant && base.value.type() == Type::unknown) {
        fail("42804", "could not determine polymorphic type because input has type unknown", e.location >= 0 ? e.location : loc);
      }
      if (base.kind != Expr::Kind::cast || base.type != Type::enum_) refuse(fmt::format("{}() of a base other than NULL::rowtype", e.name), e.location >= 0 ? e.location : loc);
      if (body.contains("coldeflist")) {
        const int at = first_location(body.at("coldeflist"));
        fail("42601", "a column definition list is redundant for a function returning a named composite type", at >= 0 ? at : loc);
      }
    } else if (body.contains("coldeflist")) {
      const int at = first_location(body.at("coldeflist"));
      if (!records) fail("42601", "a column definition list is only allowed for functions returning \"record\"", at >= 0 ? at : loc);
      if (item.ordinality) fail("42601", "WITH ORDINALITY cannot be used with a column definition list", at >= 0 ? at : loc);
      for (const json& d : body.at("coldeflist")) {
        const json& def = *node(d).second;
        known(def, "ColumnDef", {"colname", "typeName", "is_local", "location"}, loc);
        ColumnDef col;
        col.name = def.at("colname");
        col.type = type_of(def.at("typeName"), loc, &col, &col.user_type);
        item.column_definitions.push_back(std::move(col));
      }
    } else if (records) {
      fail("42601", "a column definition list is required for functions returning \"record\"", e.location >= 0 ? e.location : loc);
    }
    item.function.push_back(std::move(e));
    return item;
  }
  refuse(construct_of_node(type, body), loc);
}

void Reader::distinct(const json& clause, Select& s, int fallback) {
  if (s.lock != RowLock::none) fail("0A000", fmt::format("{} is not allowed with DISTINCT clause", lock_clause_name(s.lock)), fallback);
  if (clause.size() == 1 && clause.at(0).empty()) {
    s.distinct = true;
    for (const OrderItem& o : s.order_by) {
      const bool listed = (o.expr.kind == Expr::Kind::constant && !o.expr.folded && is_integer(o.expr.value.type())) ||
                          std::any_of(s.targets.begin(), s.targets.end(), [&](const Target& t) { return !t.star && same_expr(t.expr, o.expr); });
      if (!listed) fail("42P10", "for SELECT DISTINCT, ORDER BY expressions must appear in select list", from_leftmost(o.expr));
    }
    return;
  }
  for (const json& item : clause) {
    Expr e = expr(item, fallback);
    if (const Target* t = target_at_position(s, e, "SELECT DISTINCT ON")) e = t->expr;
    if (e.kind == Expr::Kind::column && e.qualifier.empty()) {  // an output column's name first, as in ORDER BY
      const auto named = std::find_if(s.targets.begin(), s.targets.end(), [&](const Target& t) { return !t.star && t.name == e.name; });
      const int at = e.location;  // (errors point at DISTINCT ON's item)
      if (named != s.targets.end()) e = named->expr, e.location = at;
    }
    s.distinct_on.push_back(std::move(e));
  }
  // The server requires DISTINCT ON's expressions to lead ORDER BY (in any order among them).
  for (std::size_t i = 0; i < s.order_by.size() && i < s.distinct_on.size(); ++i) {
    const Expr& item = s.order_by[i].expr;
    const bool position = item.kind == Expr::Kind::constant && !item.folded && is_integer(item.value.type()) && item.value.as_integer() >= 1 &&
                          item.value.as_integer() <= static_cast<std::int64_t>(s.targets.size());
    const Expr& o = position ? s.targets[static_cast<std::size_t>(item.value.as_integer()) - 1].expr : item;
    const bool leads = std::any_of(s.distinct_on.begin(), s.distinct_on.end(), [&](const Expr& d) { return same_expr(d, o); });
    if (!leads) fail("42P10", "SELECT DISTINCT ON expressions must match initial ORDER BY expressions", from_leftmost(s.distinct_on[i]));
  }
}

Select Reader::set_operation(const json& body, int fallback, bool in_insert) {
  known(body, "SelectStmt", {"op", "all", "larg", "rarg", "sortClause", "limitCount", "limitOffset", "limitOption", "withClause", "lockingClause"},
        fallback);
  // transformSetOperationTree: no locking clause on the operation or on any of its leaves
  // (one in a leaf's FROM subquery is the subquery's own), named by its strength.
  const auto no_locking = [&](const json& select) {
    if (!select.contains("lockingClause") || select.at("lockingClause").empty()) return;
    const std::string strength = node(select.at("lockingClause").at(0)).second->value("strength", "");
    const char* clause = strength == "LCS_FORNOKEYUPDATE" ? "FOR NO KEY UPDATE" : strength == "LCS_FORSHARE" ? "FOR SHARE"
                         : strength == "LCS_FORKEYSHARE"  ? "FOR KEY SHARE"
                                                          : "FOR UPDATE";
    fail("0A000", fmt::format("{} is not allowed with UNION/INTERSECT/EXCEPT", clause), fallback);
  };
  no_locking(body);
  for (const char* side : {"larg", "rarg"}) {
    if (body.contains(side) && body.at(side).value("op", "SETOP_NONE") == "SETOP_NONE") no_locking(body.at(side));
  }
  Select s;
  if (body.contains("withClause")) s.with = with_clause(body.at("withClause"), fallback, body);
  auto so = std::make_shared<SetOperation>();
  const std::string op = body.value("op", "SETOP_UNION");
  so->op = op == "SETOP_INTERSECT" ? SetOperation::Op::intersect : op == "SETOP_EXCEPT" ? SetOperation::Op::except : SetOperation::Op::union_;
  so->all = body.value("all", false);
  so->left = std::make_shared<Select>(select(body.at("larg"), fallback, in_insert));
  so->right = std::make_shared<Select>(select(body.at("rarg"), fallback, in_insert));
  // A side's locking FROM subquery became a WITH query of that side, which only the top runs.
  for (const Select* side : {so->left.get(), so->right.get()}) {
    if (!side->set_op && !side->with.empty()) refuse("a WITH query or a locking FROM subquery inside a UNION, INTERSECT or EXCEPT side", side->with.front().location >= 0 ? side->with.front().location : fallback);
  }
  // A side's `*` is expanded when the statement runs, with the catalog (sim/pg: output_columns):
  // the column counts and ORDER BY's names are checked then.
  auto starred = [](const Select& side) {
    const Select* first = &side;
    while (first->set_op) first = first->set_op->left.get();
    return std::any_of(first->targets.begin(), first->targets.end(), [](const Target& t) { return t.star; });
  };
  const bool stars = starred(*so->left) || starred(*so->right);
  const char* name = so->op == SetOperation::Op::union_ ? "UNION" : so->op == SetOperation::Op::intersect ? "INTERSECT" : "EXCEPT";
  if (!stars && so->left->targets.size() != so->right->targets.size()) {
    fail("42601", fmt::format("each {} query must have the same number of columns", name),
         so->right->targets.empty() ? fallback : so->right->targets.front().expr.location);
  }
  s.targets = so->left->targets;
  if (body.contains("sortClause")) {
    for (const json& o : body.at("sortClause")) {
      OrderItem item = order_item(o, fallback);
      Expr& e = item.expr;
      if (starred(*so->left)) {  // an output column by name, found when it runs
        if (e.kind != Expr::Kind::column || !e.qualifier.empty()) refuse("ORDER BY other than an output column's name over SELECT * in UNION", from_leftmost(e));
      } else if (const Target* t = target_at_position(s, e, "ORDER BY")) {  // the output column of that name
        const int loc = e.location;
        e = Expr{};
        e.kind = Expr::Kind::column;
        e.name = t->name;
        e.location = loc;
      } else if (e.kind != Expr::Kind::column || !e.qualifier.empty() ||
                 std::none_of(s.targets.begin(), s.targets.end(), [&](const Target& t) { return t.name == e.name; })) {
        fail("0A000", "invalid UNION/INTERSECT/EXCEPT ORDER BY clause", from_leftmost(e));
      }
      s.order_by.push_back(std::move(item));
    }
  }
  if (body.contains("limitCount")) s.limit = expr(body.at("limitCount"), fallback);
  if (body.contains("limitOffset")) s.offset = expr(body.at("limitOffset"), fallback);
  s.set_op = std::move(so);
  return s;
}

std::pair<std::string, std::string> Reader::joined(const json& list, std::string_view what, int fallback, std::vector<CommonTable>& with,
                                                   std::shared_ptr<Select>& join) {
  const auto [type, b] = node(list.at(0));
  if (list.size() > 1 || type == "JoinExpr") {
    // FROM a join, or several relations: their rows as a SELECT * FROM them makes them (a
    // nested loop), each column named by its relation (pg-boss's cacheQueueStats: FROM
    // (SELECT ... unnest(...)) q LEFT JOIN stats ON ...).
    join = std::make_shared<Select>();
    Target all;
    all.star = true;
    join->targets.push_back(std::move(all));
    std::vector<CommonTable>* outer = std::exchange(hoist_to_, &with);
    for (const json& item : list) join->from.push_back(from_item(item, fallback));
    hoist_to_ = outer;
    return {"", ""};
  }
  if (type == "RangeSubselect" && !b->value("lateral", false) && b->contains("alias") && !b->at("alias").contains("colnames")) {
    // FROM (SELECT ...) AS x: uncorrelated, it is computed once, as a WITH query named x is
    // (one that locks rows, FOR UPDATE SKIP LOCKED, before the statement's own scan).
    const auto [stype, sb] = node(b->at("subquery"));
    const int at = first_location(b->at("subquery"));
    if (stype == "SelectStmt" && !sb->contains("valuesLists") && !sb->contains("withClause")) {
      CommonTable t{b->at("alias").value("aliasname", ""), std::make_shared<Select>(select(*sb, at >= 0 ? at : fallback, false)),
                    nullptr, at >= 0 ? at : fallback};
      if (std::any_of(with.begin(), with.end(), [&](const CommonTable& o) { return o.name == t.name; })) {
        refuse(fmt::format("{} (SELECT ...) named as a WITH query of the statement", what), t.location);
      }
      with.push_back(t);
      return {t.name, ""};
    }
  }
  if ((type == "RangeFunction" || type == "RangeSubselect") && !b->value("lateral", false)) {
    // FROM unnest(...) AS n(n), FROM (VALUES ...) AS v(a, b), FROM (SELECT ...) AS x(a, b):
    // computed once, as a WITH query x = SELECT * FROM that item is (graphile-worker's
    // completion: DELETE ... USING unnest($1::bigint[]) n(n)).
    FromItem item = from_item(list.at(0), fallback);  // model/sql/parse_from.cc
    const int at = item.location >= 0 ? item.location : fallback;
    std::string name = item.alias.empty() && item.kind == FromItem::Kind::function ? item.function.front().name : item.alias;
    auto sel = std::make_shared<Select>();
    Target all;
    all.star = true;
    sel->targets.push_back(std::move(all));
    sel->from.push_back(std::move(item));
    if (std::any_of(with.begin(), with.end(), [&](const CommonTable& o) { return o.name == name; })) {
      refuse(fmt::format("{} of a relation named as a WITH query of the statement", what), at);
    }
    with.push_back(CommonTable{name, std::move(sel), nullptr, at});
    return {with.back().name, ""};
  }
  if (type != "RangeVar") refuse(fmt::format("{} {}", what, construct_of_node(type, *b)), location_of(*b, fallback));
  return relation(*b, fallback);
}

}  // namespace lockstep::sql::detail
