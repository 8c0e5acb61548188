// model/sql/parse_reader.h: the reader of PostgreSQL's parse tree (JSON) into plans, internal to
// model/sql/parse.cc (statements) and model/sql/parse_expr.cc (expressions, types, output names).
// Every node and field is read strictly: one the subset does not know is refused by name
// with its position (model/sql/parse.h).
#pragma once

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/model/sql/parse.h"
#include "lockstep/model/stack_room.h"

namespace lockstep::sql::detail {

using json = nlohmann::json;

// What a field of a parse-tree node means (withClause: "WITH"), when the subset leaves it out.
std::string construct_of(std::string_view type, std::string_view key, const json& value);
// The construct a node type stands for (JoinExpr: "JOIN"), where the subset has no such node.
std::string construct_of_node(std::string_view type, const json& body);

// Where 1-based character `position` of `text` is, for a message: "at position N" on the
// statement's first line, "at line L, column C" past it (a multi-line statement in a model's
// source reads better by line).
inline std::string where_in(std::string_view text, int position) {
  const TextPlace at = place_in(text, position);
  return at.line == 1 ? fmt::format("at position {}", position) : fmt::format("at line {}, column {}", at.line, at.column);
}

// A CREATE FUNCTION ... LANGUAGE plpgsql statement's body (model/sql/parse_do.cc): what the
// subset does not run is named in PlFunction::refused, never thrown.
PlFunction read_plpgsql_function(const std::string& create_function);
// A function with OUT parameters: its body's `RETURN NEXT;` (which libpg_query's plpgsql parser,
// not knowing the parameters, rejects) written as `RETURN NEXT <this>;` for it to read.
inline constexpr std::string_view kBareReturnNext = "lockstep_bare_return_next";

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  std::vector<Statement> statements(const json& tree);

 private:
  static std::string_view trim(std::string_view s);
  // How many characters of blanks and comments start `s` (within `len` of them when > 0).
  static int leading_blank(std::string_view s, int len);

  // The 1-based character position of a byte offset, as PostgreSQL reports positions.
  int position(int offset) const;

  [[noreturn]] void refuse(std::string_view construct, int location) const {
    const int p = position(location);
    throw SqlInputError("0A000", fmt::format("{} is not in lockstep's SQL subset (docs/sql.md), {}", construct, where_in(text_, p)), p);
  }
  // Expressions and subqueries nest at most this deep: plans are read and evaluated
  // recursively, also on a fiber's stack (a session's statement, EXECUTE, a function's body).
  // PostgreSQL's parser takes thousands of levels; no lock service needs them. A stack with
  // less room left than a level may need (model/stack_room.h) stops the reading sooner.
  static constexpr int kMaxDepth = 128;
  class Deeper {
   public:
    Deeper(Reader& r, int location) : r_(r) {
      if (++r_.depth_ > kMaxDepth) {
        --r_.depth_;
        r_.refuse(fmt::format("nesting deeper than {} levels (expressions and subqueries)", kMaxDepth), location);
      }
      if (stack_room() < kStackRoomNeeded) {
        --r_.depth_;
        r_.refuse(fmt::format("nesting {} levels deep (expressions and subqueries) where the session's stack has no room for more", r_.depth_ + 1), location);
      }
    }
    Deeper(const Deeper&) = delete;
    Deeper& operator=(const Deeper&) = delete;
    ~Deeper() { --r_.depth_; }

   private:
    Reader& r_;
  };

  [[noreturn]] void fail(std::string_view sqlstate, std::string_view message, int location) const {
    const int p = position(location);
    throw SqlInputError(std::string(sqlstate), fmt::format("{}, {}", message, where_in(text_, p)), p);
  }

  // The node's type and body: a node is an object with one key, its type.
  static std::pair<std::string, const json*> node(const json& n);
  // A node's token offset; CREATE TABLESPACE's `location` is its path, a string: the fallback.
  static int location_of(const json& body, int fallback) {
    if (!body.is_object()) return fallback;
    const auto at = body.find("location");
    return at != body.end() && at->is_number_integer() ? at->get<int>() : fallback;
  }

  // The offset of `keyword` (case-insensitive, a whole word) last at or before `offset`, or -1.
  int keyword_before(int offset, std::string_view keyword) const;
  // The first location found inside a node (depth first), or -1.
  static int first_location(const json& n);

  // Refuses any field of `body` but `keys` (and `location`).
  void known(const json& body, std::string_view type, std::initializer_list<std::string_view> keys, int fallback) const;

  static std::string str(const json& n);
  static std::vector<std::string> names(const json& list);
  static std::vector<const json*> items(const json& n);

  Statement statement(const json& n);

  // A table named in FROM, INSERT INTO, UPDATE or DELETE FROM: its name and alias.
  // `body` is a RangeVar's.
  std::pair<std::string, std::string> relation(const json& body, int fallback) const;

  Select select(const json& body, int fallback, bool in_insert);
  // WITH name AS (INSERT | UPDATE | DELETE ...): its statement (model/sql/parse_from.cc).
  std::shared_ptr<const Statement> modifying_cte(std::string_view type, const json& body, const std::string& name, int loc);
  // A data-modifying WITH query's table read or written elsewhere in the statement is refused
  // (the server runs them on one snapshot: neither sees the other's change).
  void check_modifying_ctes(Statement& s, const json& tree, int loc) const;
  std::vector<std::size_t> streamed_deletes(Statement& s, const json& tree) const;  // and marks them
  // SELECT DISTINCT [ON (...)] (model/sql/parse_from.cc), after the select list and ORDER BY.
  void distinct(const json& clause, Select& s, int fallback);
  // UNION / INTERSECT / EXCEPT [ALL] (model/sql/parse_from.cc).
  Select set_operation(const json& body, int fallback, bool in_insert);
  // An item of a FROM other than one table (model/sql/parse_from.cc).
  // A SELECT's FROM list of several items or a join, into s.from; returns the subqueries its FOR
  // UPDATE OF named (locked inside them).
  std::vector<std::string> from_list(const json& body, Select& s, int fallback);
  FromItem from_item(const json& n, int fallback);
  // WITH's queries: SELECTs (a data-modifying one, RECURSIVE, or column names are refused).
  // `statement`: the one the clause belongs to (which of its queries it reads).
  std::vector<CommonTable> with_clause(const json& clause, int fallback, const json& statement);
  // UPDATE's FROM or DELETE's USING: one relation, (name, alias); an uncorrelated subquery
  // there becomes a WITH query of the statement (added to `with`), named by its alias; a join
  // or several relations become `join` (SELECT * FROM them), the name "" then.
  std::pair<std::string, std::string> joined(const json& list, std::string_view what, int fallback, std::vector<CommonTable>& with,
                                             std::shared_ptr<Select>& join);
  void using_join(const json& list, FromItem& item, int at);  // JOIN ... USING (parse_from.cc)
  OrderItem order_item(const json& o, int fallback);
  void locking(const json& clauses, Select& s, int fallback, const std::vector<std::string>& pushed);
  void check_aggregates(Select& s, int fallback);  // (GROUPING's arguments resolved here)
  // pg_locks in FROM (model/sql/parse_system_views.cc): whether a RangeVar names it, and the
  // checks of a SELECT reading it (its advisory rows only, the columns lockstep models).
  static bool is_pg_locks(const json& range_var);
  // Whether the parse tree n reads a relation of that name (no schema): a WITH RECURSIVE
  // query that names itself.
  static bool names_relation(const json& n, std::string_view name);
  // How often n reads that relation, and whether once inside an expression's subquery.
  static void count_references(const json& n, std::string_view name, bool under_sublink, int& count, bool& in_sublink);
  // The system view a FROM's relation names ("pg_locks", "pg_database"), or "" (parse_system_views.cc).
  static std::string_view system_view(const json& range_var);
  void check_system_views(const Select& s, int fallback, bool pid_set) const;
  void group_by(const json& items, Select& s, int fallback);
  // One GROUP BY item as grouping sets (a plain expression: one set of it), expanded as
  // expand_groupingset_node does; `top`: a GROUP BY item (a row there is one expression).
  std::vector<std::vector<Expr>> grouping_sets_of(const json& item, Select& s, int fallback, bool top);
  Expr group_item(const json& item, Select& s, int fallback);  // a position or output name resolved
  // The select list's target an integer constant names in `clause` (GROUP BY 1), nullptr for
  // another expression; 42P10 for a position out of the list.
  const Target* target_at_position(const Select& s, const Expr& e, std::string_view clause) const;
  const Target* output_column_named(const Select& s, const Expr& e) const;
  // GENERATED { ALWAYS | BY DEFAULT } AS IDENTITY [(START WITH n INCREMENT BY n)] on `col`.
  void identity(const json& con, ColumnDef& col, int loc);
  ColumnDef column_def(const json& body, CreateTable& c, int fallback);

  // An aggregate call in `e` (outside subqueries), or nullptr.
  static const Expr* aggregate_in(const Expr& e);
  // A column referenced outside any aggregate call and any of `groups` (GROUP BY's
  // expressions), or nullptr.
  static const Expr* ungrouped_column(const Expr& e, const std::vector<Expr>& groups);
  // A call of a function the subset lacks (user_func) whose arguments read an ungrouped
  // column: perhaps an aggregate lockstep does not have (refused, not the server's 42803).
  static const Expr* user_call_over(const Expr& e, const std::vector<Expr>& groups);
  // Whether two expressions are the same (GROUP BY's matching of the select list's).
  static bool same_expr(const Expr& a, const Expr& b);

  Target target(const json& n, int fallback);

  // The output name PostgreSQL gives an expression (FigureColname).
  // The integer literal at `location` of the text (libpg_query's JSON omits negative ones).
  std::int64_t integer_at(int location) const;
  // CREATE SEQUENCE's options.
  CreateSequence create_sequence(const json& body);
  // CREATE TYPE ... AS ENUM | AS (fields), ALTER TYPE ... ADD VALUE (model/sql/parse_types.cc).
  CreateType create_type(std::string_view type, const json& body);
  // CREATE SCHEMA, DROP SCHEMA, CREATE EXTENSION, DROP EXTENSION (of the extensions modeled).
  Schema schema_or_extension(std::string_view type, const json& body);
  // ALTER TABLE, DROP INDEX, RENAME, ALTER SEQUENCE (model/sql/parse_alter.cc).
  AlterTable alter_table(const json& body);
  AlterTable drop_index(const json& body);
  AlterTable rename(const json& body);
  AlterTable alter_sequence(const json& body);
  // CREATE FUNCTION ... LANGUAGE sql (model/sql/parse_functions.cc).
  CreateFunction create_function(const json& body);
  PlFunction sql_function_body(const CreateFunction& f, const std::vector<Statement>& statements, int loc) const;
  // CREATE TRIGGER and DROP TRIGGER, as commands on their table (model/sql/parse_functions.cc).
  AlterTable trigger(const std::string& type, const json& body);
  static void name_checks(CreateTable& c);
  static std::string column_name(const json& n);
  static std::pair<std::string, int> column_name_of(const json& n);
  static std::string type_display(const json& type_name);
  static std::string sql_value_function_name(std::string_view op);

  // A type name: the type, and in `column` or `cast` (either may be null) its element type,
  // bit length or varchar length.
  Type type_of(const json& type_name, int fallback, ColumnDef* column = nullptr, std::string* user_type = nullptr, Expr* cast = nullptr) const;

  // An expression node: each kind the subset knows is read by its own function below.
  Expr expr(const json& n, int fallback);

  Expr constant(const json& body, Expr e);
  Expr user_function_call(const json& body, Expr e, std::string name);

  Expr parameter(const json& body, Expr e);

  Expr column_ref(const json& body, Expr e);

  Expr a_expr(const json& body, Expr e);
  // `range(a, b[, flags]) @> x` or `x <@ range(...)` of a range type's constructor: one call of
  // kRangeContains (model/sql/ranges.h), named by the range; nullopt for another operand.
  std::optional<Expr> range_containment(const json& body, std::string_view op, int loc);

  Expr bool_expr(const json& body, Expr e);

  Expr null_test(const json& body, Expr e);

  Expr type_cast(const json& body, Expr e);
  // COLLATE "C" (also "POSIX", "default") on a column or an expression: text compares by bytes
  // here, as under the C collation, so it changes nothing; any other collation is refused.
  void byte_order_collation(const json& coll_clause, int fallback) const;
  Expr collate_clause(const json& body, int fallback);

  Expr func_call(const json& body, Expr e);
  Expr window_call(const json& body, Expr e, const std::string& name);  // OVER (...)
  // OVER w or OVER (w ...): the window named in the SELECT's WINDOW clause, merged as
  // transformWindowDefinitions merges it (42704, 42P20 as the server).
  json named_window(const json& over, int loc, std::size_t depth = 0) const;
  void check_window_clause(const json& windows, int loc) const;  // 42P20 for a name defined twice

  Expr sql_value_function(const json& body, Expr e);

  Expr coalesce(const json& body, Expr e);

  Expr case_expr(const json& body, Expr e);

  Expr sublink(const json& body, Expr e);

  Insert insert(const json& body);

  Assignment assignment(const json& n, int fallback);

  std::vector<Target> returning(const json& list, int fallback);

  Update update(const json& body);

  Delete remove(const json& body);

  CreateTable create_table(const json& body);
  CreateTable create_view(const json& body);  // parse_views.cc
  // WITH (storage parameters) of a table or index, or ALTER TABLE ... SET (...): fillfactor
  // (10 to 100) and the vacuum and TOAST settings change nothing lockstep models; others are
  // refused (parse_alter.cc).
  void storage_parameters(const json& options, int fallback) const;

  static std::string constraint_name(std::string_view contype);
  // A REFERENCES column constraint (`column` set) or a FOREIGN KEY table constraint.
  ForeignKey foreign_key(const json& con, const std::string& table, const std::string& column, int fallback) const;

  DropTable drop(const json& body);

  CreateIndex create_index(const json& body);

  Transaction transaction(const json& body);
  Select show(const json& body);  // SHOW name: SELECT current_setting('name') AS "Name"
  // BEGIN's and SET TRANSACTION's options: ISOLATION LEVEL, READ ONLY / READ WRITE.
  void transaction_options(const json& options, Transaction& t, int loc);
  // VACUUM [FREEZE] [ANALYZE] tables, ANALYZE tables: plan.h's LockTables.
  LockTables vacuum(const json& body);
  LockTables lock_tables(const json& body);
  DoBlock do_block(const json& body);  // model/sql/parse_do.cc, as read_plpgsql_function
  LockTables comment(const json& body);
  LockTables truncate(const json& body);

  SetVariable set_variable(const json& body);
  // SET TIME ZONE's value as a number of hours or an interval: the zone's name (<+03>-03), or
  // nullopt for a zone's name.
  std::optional<std::string> zone_offset_value(const json& args, int loc) const;

  // The planner's constant folding (eval_const_expressions, in part: parse_fold.cc), in
  // SELECT, INSERT, UPDATE and DELETE: an operator or a cast of constants of plain types is
  // its value; a constant TRUE ends an OR (FALSE an AND), a non-null constant a COALESCE,
  // whose later arguments are never read. An error folding raises is kept (fold_errors_, in
  // the order the planner meets them) and the statement's plan_error.
  Expr fold(Expr e);
  // and / or / coalesce: args[k] was read after fold_errors_ held marks[k] errors.
  Expr fold_short_circuit(Expr e, const std::vector<std::size_t>& marks);
  void drop_fold_errors(std::size_t from) { fold_errors_.erase(fold_errors_.begin() + static_cast<std::ptrdiff_t>(from), fold_errors_.end()); }
  bool folding_ = false;
  std::vector<SqlError> fold_errors_;

  std::string_view text_;
  int statement_start_ = 0;
  int statement_len_ = 0;  // 0: to the text's end
  int max_param_ = 0;
  bool locking_subquery_ = false;  // the statement has a subquery with FOR UPDATE / SHARE
  RowLock subquery_lock_ = RowLock::none;  // ... their one strength (Statement::subquery_lock)
  bool subquery_locks_differ_ = false;
  bool folded_arms_ = false;  // an AND, OR or COALESCE lost arms to constant folding
  void note_locking_subquery(RowLock lock) {
    if (lock == RowLock::none) return;
    if (locking_subquery_ && subquery_lock_ != lock) subquery_locks_differ_ = true;
    locking_subquery_ = true;
    subquery_lock_ = lock;
  }
  bool subquery_ = false;          // the statement has a subquery
  bool stepping_call_ = false;     // ... a call that is a step of its own (Statement::calls_stepping_function)
  std::vector<std::string> user_calls_;  // Statement::user_calls
  // The WITH list of the query whose FROM is being read: a locking FROM subquery joins it
  // (parse_from.cc); and the statement being read.
  std::vector<CommonTable>* hoist_to_ = nullptr;
  bool pid_set_ = false;  // the SELECT to read is x IN (SELECT ...)'s: its rows a set (of pids)
  const json* outer_locking_ = nullptr;  // that query's locking clause (pushed into its FROM subqueries)
  std::vector<std::string> pushed_;     // the FROM subqueries its FOR UPDATE OF named, pushed into them
  const json* statement_json_ = nullptr;
  mutable std::vector<std::pair<std::string, std::string>> relations_;  // Statement::relations
  mutable std::vector<std::pair<std::string, std::string>> types_;      // Statement::types
  static void add_once(std::vector<std::pair<std::string, std::string>>& names, std::pair<std::string, std::string> name) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
  }
  bool xmax_allowed_ = false;      // reading an upsert's RETURNING, where xmax may be compared with 0
  bool window_allowed_ = false;    // reading a SELECT's select list, where a window function may be
  const json* windows_ = nullptr;  // ... and its WINDOW clause, if any
  int depth_ = 0;                  // the nesting of expr() and select() calls now (Deeper)
};

// The planner's move of an outer WHERE's conditions into a FROM subquery that is not pulled up
// (one with ORDER BY), below its Sort, where they then run on every row (parse_pushdown.cc).
void push_quals_into_subquery(Select& s);

// WITH query names scoped as the server's parser scopes them (parse_cte_scope.cc): a WITH
// query named where a table is meant (its own body, an earlier sibling's, schema.name, an
// INSERT / UPDATE / DELETE target) is renamed with the references that mean it. True when
// the statement's tree changed. `forward_reference_at`: where a WITH RECURSIVE query reads a
// later query of its list (the server evaluates those lists in its own order), or -1.
bool scope_cte_names(json& statement, int* forward_reference_at);

// The first call of a set-returning function in j, not inside a subquery (its own), or
// nullptr (parse_insert.cc).
const json* set_returning_call(const json& j, int depth = 0);
// A set-returning call inside CASE or COALESCE (the server's 0A000: transformCaseExpr's),
// `construct` set to "CASE" or "COALESCE"; or nullptr.
const json* set_returning_in_conditional(const json& statement, const char** construct, int depth = 0);
// The JSON levels those walks (and scope_cte_names) go down: some 6 a subquery, 2 an operator,
// so past the reader's 128 levels (768); deeper trees are left to the reader's refusal.
inline constexpr int kMaxTreeDepth = 1024;

// 0A000 for a string whose parse tree could overflow the stack inside libpg_query (parse_guard.cc).
void refuse_trees_too_deep_to_parse(std::string_view text, bool dollar_quoted_too = false);

}  // namespace lockstep::sql::detail
