// sim/pg/executor/sql_run.h: one SQL statement run on a simulated session (SqlRun), internal to sim/pg;
// SimConnection::exec (sim/pg/server/sql_text.cc) makes one per statement; docs/sql.md says what it
// runs, with PostgreSQL 15's READ COMMITTED and REPEATABLE READ semantics.
//
// A statement that reads a table takes one step that scans it (its snapshot); one that locks
// or changes rows then takes each candidate's row lock in a step of its own, waiting as the
// server does, then re-checks the newest version (EvalPlanQual). An INSERT takes a step per
// row. An error aborts the transaction, or, outside one, drops what the statement wrote.
// Its parts live by job (sql_exec.cc: the statement's frame, transactions, settings; sql_select.cc,
// sql_subqueries.cc, sql_write.cc, sql_joins.cc: WITH queries, ...); rows outside: sql_rows.h.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lockstep/model/sql/eval.h"
#include "lockstep/model/sql/functions.h"
#include "lockstep/sim/pg/server/connection.h"
#include "lockstep/sim/pg/heap/sql_rows.h"
namespace lockstep::sim::pg {

// The row lock mode of a locking clause.
constexpr Mode row_mode(sql::RowLock lock) {
  return lock == sql::RowLock::update          ? Mode::exclusive
         : lock == sql::RowLock::no_key_update ? Mode::no_key_update
         : lock == sql::RowLock::key_share     ? Mode::key_share
                                               : Mode::share;
}
struct ScanChoice;  // sql_scan_choice.h

using lockstep::pg::Param, lockstep::pg::Rows, sql::Expr, sql::SqlError, sql::Type, sql::Value;

// The server's error for a SqlError.
Error error_of(const SqlError& e);
// A value as the result shows it: its text, or nullopt for NULL.
std::optional<std::string> output(const Value& v);
// lock_timeout and statement_timeout: milliseconds, or a number with a unit.
Duration setting_duration(const std::string& name, const std::string& text);
// A time setting as SHOW and current_setting print it: "0", "50ms", "2s", "1min".
std::string shown_duration(Duration d);

class SqlRun final : public sql::EvalContext {
  // An error inside a helper that returns rows: unwound to run_checked(), which fails the statement.
  struct Raised {
    Error error;
  };

 public:
  // `plans` holds st (and keeps it alive); it may be null (st then is checked on each run).
  SqlRun(SimConnection& c, const std::shared_ptr<const std::vector<sql::Statement>>& plans, const sql::Statement& st,
         const std::vector<Param>& params)
      : c_(c), server_(c.server_), s_(c.s_), plans_(plans), st_(st), params_(params) {}
  SqlRun(const SqlRun&) = delete; SqlRun& operator=(const SqlRun&) = delete;
  ~SqlRun() { if (statement_snapshot_) server_.close_snapshot(); }

  Result<Rows> run();

  Value column(const Expr& ref) override;  // EvalContext
  Value param(int number) override;
  Value call(const Expr& e, const std::vector<Value>& args) override;
  Value subquery(const Expr& e) override;
  Value function_body(const Expr& query, sql::EvalContext& params) override;  // sim/pg/executor/sql_functions.cc
  Value plpgsql_call(const sql::CreateFunction& f, const std::vector<Value>& args) override;  // sim/pg/executor/sql_plpgsql.cc
  const std::vector<const Expr*>* qual_order(const Expr& where) const override { return server_.qual_order(where); }
  static Value array_of_rows(const std::vector<std::vector<Value>>& rows);  // ARRAY (SELECT ...)'s value of its rows
  // Whether two rows of values are equal as DISTINCT, UNION and GROUP BY compare them (NULLs equal).
  static bool same_values(const std::vector<Value>& a, const std::vector<Value>& b);

 private:
  struct Saved {
    SqlTable* table;
    std::string_view alias;
    const Row* row;
    const std::vector<const Row*>* group;
    std::uint32_t grouping_absent;
  };
  Saved save() const { return {table_, alias_, row_, group_, grouping_absent_}; }
  void restore(const Saved& s);
  // While a subquery runs: the enclosing query's row is readable to its references (outer_),
  // and the context is put back when it ends, however it ends.
  class Enclosing {
   public:
    explicit Enclosing(SqlRun& run);  // sim/pg/executor/sql_subqueries.cc
    Enclosing(const Enclosing&) = delete;
    Enclosing& operator=(const Enclosing&) = delete;
    ~Enclosing();

   private:
    SqlRun& run_;
    Saved saved_;
  };

  Value value_of(const Row& row, const Expr& ref) const { return value_in(*table_, row, ref); }
  Value value_in(const SqlTable& t, const Row& row, const Expr& ref) const;
  // 42703 for a column t (called `alias`) lacks; 0A000 when it names t itself (a whole-row reference).
  [[noreturn]] static void missing_column(const SqlTable& t, std::string_view alias, const Expr& ref);
  // Whether `ref` names table t (called `alias`) itself, not a column: its whole row (a
  // table's only; a WITH query's, a subquery's or a join's row is refused by missing_column).
  bool whole_row_reference(const SqlTable& t, std::string_view alias, const Expr& ref) const;
  Value whole_row(const SqlTable& t, const Row& row) const;  // ... as a record (model/sql/records.h)
  Value derived_whole_row(const SqlTable& t, std::string_view alias, const Row* row, const Expr& ref) const;  // a subquery's (sql_records.cc)
  // The table whose whole row `e` is, found from the query text (a whole-row reference, a
  // column of a FROM subquery or WITH query that is one, or a scalar subquery of one), or
  // nullptr: what types a row column and expands (x).* before any row is read.
  const SqlTable* record_table_of(const Expr& e, const sql::Select& sel);
  // The column `e` gives, typed from the query text when it is a row or a row's field; and a
  // join's column (`a.id FROM t a, t b`), typed whether rows come or not (nullptr: none).
  std::optional<sql::ColumnDef> static_column(const Expr& e, const sql::Select& sel);
  const sql::ColumnDef* joined_column_def(const Expr& e, const sql::Select& sel);
  // sel's targets with each (x).* expanded into x's fields (sel.targets when it has none).
  const std::vector<sql::Target>& targets_of(const sql::Select& sel);
  std::map<const sql::Select*, std::vector<sql::Target>> expanded_targets_;
  std::map<std::pair<const sql::Select*, std::int64_t>, Expr> star_positions_;  // order_expr's past a `*`

  // ---- Subqueries. A correlated one (a SubPlan) names columns of the queries around it; it
  // runs per outer row and reads them from outer_. An uncorrelated one (an InitPlan) runs
  // once per statement, on the statement's snapshot (compute_initplans).
  bool resolves(const SqlTable& t, std::string_view alias, const Expr& ref) const;  // whether `ref` names a column of t (called `alias`)
  bool resolves_outside(const Expr& ref) const;  // whether some enclosing query's table has the column `ref` names
  bool correlated(const sql::Select& sub);        // whether the subquery names a column of a query around it
  using Scopes = std::vector<std::pair<const SqlTable*, std::string_view>>;
  bool reaches_out(const Expr& e, Scopes& scopes) const;
  bool reaches_out(const sql::Select& sel, Scopes& scopes) const;
  // The statement's InitPlans under e, computed in the step running now: the statement's first, which takes its snapshot, so a
  // later wait for a row lock does not change them (PostgreSQL keeps an InitPlan's value through EvalPlanQual). An error is
  // raised where the subquery is first used. Subqueries that lock rows or call the server's functions run where used.
  void compute_initplans(const Expr& e);
  void compute_initplans(const std::vector<sql::Target>& targets);
  // READ COMMITTED: the statement's snapshot, taken in its first step when it has subqueries (REPEATABLE READ reads its
  // transaction's). Subqueries read it wherever they run, also in an EvalPlanQual re-check after a wait, as PostgreSQL's
  // do. With a call that is a step of its own or an INSERT's subquery, the first step holds it, reading the tables named.
  void take_statement_snapshot();
  void hold_snapshot_for_later_reads();
  bool insert_reads_after_waits() const;
  // The version of the row a subquery reads: this session's own, or the statement's snapshot's.
  const std::optional<Row>& subquery_visible(std::string_view table, std::int64_t id);
  HeapPlace subquery_place(std::string_view table, std::int64_t id);  // ... and its place in the heap
  // A WHERE conjunct PostgreSQL's planner pulls up into a join (pull_up_sublinks): a correlated EXISTS
  // (a semi join) or NOT EXISTS (an anti join) over a simple subquery that names the outer row in its
  // WHERE, or an uncorrelated IN (semi_in). In an EvalPlanQual re-check the new version is joined
  // with the inner row the scan matched (a semi join), or passes (an anti join: the scan
  // matched no inner row, and the re-check has none to join).
  enum class Pulled : std::uint8_t { no, semi, anti, semi_in };
  Pulled pulled_up(const Expr& conjunct);
  // WHERE on the row in the current context: in the statement's scan (recording the inner
  // row of each semi join), or (`recheck`) in the EvalPlanQual re-check of row `id`.
  bool where_holds(const Expr& where, std::int64_t id, bool recheck);
  std::optional<Row> first_inner_match(const sql::Select& sub, std::vector<Row>* others = nullptr);  // the first row (snapshot) WHERE accepts; the others
  bool inner_matches(const sql::Select& sub, const Row& inner);
  // The subquery's rows, run in the current context (a locking one takes its steps; its
  // LockRows stops after `rows` rows: an EXISTS pulls one, a scalar subquery two; or after the
  // row `until` accepts: an IN's first match). pulled(): a LIMIT within that.
  struct Pull { const sql::Select* sel; std::int64_t rows; const std::function<bool(const Row&)>* until; };
  std::vector<std::vector<Value>> run_subquery(const sql::Select& sub, bool per_row, Pull pull = {nullptr, -1, nullptr});
  Pull pull_{nullptr, -1, nullptr};
  std::int64_t pulled(const sql::Select& sel, std::int64_t limit) const;
  // The one column of an IN subquery's rows (kept for the statement when uncorrelated).
  const std::vector<Value>& subquery_list(const Expr& e);
  // ... and the rows of a row IN's subquery ((a, b) IN (SELECT x, y ...): 42601 for another width).
  const std::vector<std::vector<Value>>& subquery_rows(const Expr& e);
  std::vector<Value> row_values(const Expr& row);  // a row constructor's values, in the current row
  // A read of table t by the step running now (a WITH query's relation is the statement's own),
  // or by a step of its own after a lock try's step (sql_from.cc).
  void touch(const SqlTable& t);

  // ---- WITH queries, UPDATE ... FROM and DELETE ... USING (sql_joins.cc).
  // A WITH query's relation: its columns (a plain column keeps its table's type, an expression's
  // is its first value's) and its rows, computed once, when first read.
  struct Derived {
    const sql::CommonTable* def = nullptr;
    std::unique_ptr<sql::CommonTable> sequence;  // a sequence read as a relation: def is this (its name only)
    SqlTable table;
    std::vector<Row> rows;
    bool computed = false;
    // WITH RECURSIVE, computed a round at a time as readers ask (the server's RecursiveUnion
    // pulls rows on demand): the last round's new rows (what the recursive term reads as the
    // query's name while `in_round`), the rows so far for UNION, the rounds run, and whether
    // the last one changed the session's advisory locks.
    std::vector<Row> working;
    std::set<Row> seen;
    std::size_t rounds = 0;
    bool in_round = false, last_round_locked = false;
    bool correlated = false;  // a subquery's naming an outer query's column: computed again per outer row
    bool partial = false;  // read under a LIMIT row by row (scan_streamed), stopped early: another read is refused
    std::string unordered;  // a data-modifying one's RETURNING rows came in an order the planner's costs pick: why
    bool last = false;  // a data-modifying one nothing reads: run after the statement's own query (done), on its snapshot
  };
  // The statement's WITH queries, named; those that lock rows computed now, each in steps of
  // its own (before the statement's own first step, whose scan then sees their locks), and
  // the data-modifying ones something reads (the others run last, in order: ExecPostprocessPlan).
  void declare_ctes(const std::vector<sql::CommonTable>& with);
  // A query's output columns: its targets, `*` and `t.*` expanded over its FROM (a set
  // operation's: its first query's); a plain column keeps its type (an enum's or an array's
  // with it), an expression's is unknown until a value gives it.
  std::vector<sql::ColumnDef> output_columns(const sql::Select& sel);
  // A subquery's own WITH queries, declared once for the statement when first met (refused
  // when one repeats a name the statement declared, or names an outer query's column and
  // writes, locks or recurses; else it is `correlated`).
  void declare_subquery_ctes(const sql::Select& sub);
  Derived* derived(std::string_view name);
  Derived& sequence_relation(const std::string& name);  // SELECT last_value, is_called FROM seq: one row, read now
  Derived* derived_of(const SqlTable* t);
  void materialize(Derived& d);
  // Whether `row` (id `id` of relation t, named `alias`) passes `where` (none: it does).
  bool passes(SqlTable* t, const std::string& alias, const std::optional<Expr>& where, std::int64_t id, const Row& row);
  // WITH RECURSIVE: one more round (the first: the non-recursive term); false when done.
  bool next_round(Derived& d);
  // Whether a plain WITH query (or FROM subquery) can be read a row at a time: one table,
  // no sort, grouping, DISTINCT, window, set-returning call or row lock in it.
  bool streamable(const sql::Select& sel);
  // A scan of such a query by a reader that needs `enough` rows: its rows are made one at a
  // time (its WHERE, then its targets, as the server's scan under a Limit pulls them) until
  // that many passed the reader's WHERE, so its functions run for those rows only.
  std::vector<std::pair<std::int64_t, Row>> scan_streamed(Derived& d, SqlTable* t, const std::string& alias,
                                                          const std::optional<Expr>& where, std::int64_t enough);
  // The session's advisory lock holds, counted (a round that changes them has effects).
  std::int64_t advisory_holds() const;
  // A scan of a WITH RECURSIVE query by a reader that needs `enough` rows: rounds run until
  // that many passed WHERE (refused when it stops inside a round of several rows that took
  // or let go of advisory locks: the server would not have run the rest of it).
  std::vector<std::pair<std::int64_t, Row>> scan_recursive(Derived& d, SqlTable* t, const std::string& alias,
                                                           const std::optional<Expr>& where, std::int64_t enough);
  static void type_columns(Derived& d, const std::vector<std::vector<Value>>& rows);
  static std::vector<Row> stored_rows(const Derived& d, std::vector<std::vector<Value>> rows);
  // A data-modifying WITH query run now, to completion, in steps of this one; its RETURNING rows are the relation;
  // `streamed_into` runs for each row (streams_into_next).
  void run_modifying(Derived& d, Derived* streamed_into = nullptr);
  void save_own_versions(const std::string& table); static const std::string& target_of(const sql::Statement& st);  // NOLINT
  // The rows of relation t the running query sees, (id, row): a WITH query's, or the table's visible versions (a
  // subquery's: the statement's snapshot), in heap order (`by_root`: their HOT chains' roots', a bitmap heap scan's).
  std::vector<std::pair<std::int64_t, const Row*>> relation_rows(const SqlTable& t, bool by_root = false);
  void check_grouped_by_key(const sql::Select& sel);
  // Whether WHERE joins the target's one-column primary key to a column of the joined relation.
  bool joins_on_key(const sql::Expr& where, const SqlTable& t, std::string_view alias, const SqlTable& from, std::string_view from_alias) const;
  // ---- UNION / INTERSECT / EXCEPT (sql_set_operations.cc).
  Result<Rows> select_set_operation(const sql::Select& sel);
  // The first set operation in `sel`'s tree whose rows come in a hash order (not UNION ALL), or nullptr.
  static const char* hashed_set_operation(const sql::Select& sel);
  std::vector<std::vector<Value>> set_operation_values(const sql::Select& sel);
  // ---- A FROM other than one table (sql_from.cc): its items joined into one relation.
  Result<Rows> select_from_items(const sql::Select& sel);
  SqlTable* from_relation(const sql::Select& sel);  // its columns; kept for the statement
  // Its rows that WHERE accepts, each a row of the joined relation, (index, row).
  // `enough` >= 0: stop once that many rows passed WHERE (a Limit above the scan).
  std::vector<std::pair<std::int64_t, Row>> from_scan(const sql::Select& sel, SqlTable& jt, std::int64_t enough = -1);
  void from_columns(const sql::FromItem& f, SqlTable& jt);
  std::vector<std::vector<Value>> from_time_series(const std::vector<Value>& args);
  std::vector<Row> from_rows(const sql::FromItem& f, SqlTable& jt, const std::vector<Row>& left);
  std::vector<std::vector<Value>> from_leaf_values(const sql::FromItem& f);
  // The column of a joined relation `ref` names (-1: none); 42702 when two relations have it.
  // While a FROM function's arguments run, the FROM items before it only (`arguments_of_`).
  int joined_column(const SqlTable& t, const Expr& ref) const;
  struct ArgumentsOf { const SqlTable* relation = nullptr; std::size_t columns = 0; } arguments_of_;  // the joined relation, its columns before the function
  // One-column FROM functions (jsonb_array_elements_text(...) AS q): q read as a column is it.
  std::vector<std::pair<const SqlTable*, std::string>> scalar_functions_;
  // A joined relation's column as (relation, column); the key of a row's heap id.
  static std::pair<std::string_view, std::string_view> joined_name(const sql::ColumnDef& c);
  static std::string joined_row_id(std::string_view relation);
  // EvalPlanQual of a joined row (sql_lock_rows.cc): each leaf's one row (none: no row).
  const std::map<const sql::FromItem*, std::optional<Row>>* epq_rows_ = nullptr;
  static bool joined_star(const sql::Target& target, const SqlTable& t);  // t.* names a relation of t (sql_select.cc)
  // A scan's own conditions (sql_scan_quals.cc): WHERE's / ON's that read one table leaf only run as it is read, once.
  struct LeafQuals { std::map<const sql::FromItem*, std::vector<const Expr*>> at; std::map<const sql::FromItem*, std::vector<Row>> rows; std::map<const Expr*, std::vector<const Expr*>> on_rest; std::deque<Expr> derived; std::set<const sql::FromItem*> reduced; };
  LeafQuals* leaf_quals_ = nullptr;
  std::vector<const Expr*> push_to_leaves(const sql::Select& sel, const SqlTable& jt, LeafQuals& into);  // returns WHERE's others, in order
  void filter_leaf(const sql::FromItem& f, SqlTable& jt, std::vector<Row>& rows);
  void derive_equalities(const sql::Select& sel, const SqlTable& jt, const std::vector<const sql::FromItem*>& leaves, std::map<const sql::FromItem*, std::vector<const Expr*>>& gathered, LeafQuals& into);
  std::vector<std::unique_ptr<SqlTable>> from_tables_;
  std::map<const sql::FromItem*, std::size_t> from_first_column_;  // each leaf's first column in its joined relation
  struct UsingColumn { std::string left, right; };  // JOIN ... USING's column: its two relations (none: two joins merge it)
  std::map<std::pair<const SqlTable*, std::string>, UsingColumn> using_columns_;
  // UPDATE ... FROM / DELETE ... USING: the relation joined, and the row of it the current
  // target row joined (readable by the statement's expressions while set).
  struct Join {
    SqlTable* table = nullptr;
    std::string_view alias;
    const Row* row = nullptr;
  };
  // Makes the joined row readable (an outer row of the statement's expressions) while alive.
  class Joined {
   public:
    Joined(SqlRun& run, const Join& j) : run_(run), on_(j.table != nullptr) {
      if (on_) run_.outer_.push_back(Saved{j.table, j.alias, j.row, nullptr});
    }
    Joined(const Joined&) = delete; Joined& operator=(const Joined&) = delete;
    ~Joined() {
      if (on_) run_.outer_.pop_back();
    }
   private:
    SqlRun& run_;
    bool on_;
  };
  // The target's candidates of a joined UPDATE or DELETE: each visible row of t with the first joined row (`join`'s FROM made
  // them, when given) WHERE accepts, the others in other_matches_ (0A000 when `set` or `returning` read the one picked).
  std::vector<std::tuple<std::int64_t, Row, Row>> join_candidates(SqlTable& t, std::string_view alias, SqlTable& from, std::string_view from_alias, const std::optional<Expr>& where,
                                                                  const sql::Select* join, const std::vector<sql::Assignment>& set, const std::vector<sql::Target>& returning);
  // After a failed re-check with a target's first joined row, the next one with which `newest` passes WHERE, or nullptr.
  const Row* other_joined_match(std::int64_t scanned, SqlTable& t, std::string_view alias, std::int64_t id, const Row& newest, const Expr& where);
  bool reads_target_only(const Expr& q, const SqlTable& t, std::string_view alias, const SqlTable& from) const;
  // ---- Row orders the planner's costs pick (sim/pg/executor/sql_plan_order.cc): why scan()'s or join_candidates()' last rows' order is not decided;
  // a data-modifying WITH query's RETURNING in such an order (its Derived::unordered); a top-level SELECT's scan, which checks it (else a scan of such rows refuses).
  std::string unplanned_order_, unordered_returning_;
  bool order_checked_scan_ = false;
  bool sorted_above_ = false;  // scan(): ORDER BY sorts its rows after (a scan choice not decided is answered)
  static bool shows_order(const sql::Select& sel);  // no ORDER BY, DISTINCT, nor only aggregates of any order (count, sum, ...)
  enum class Drive : std::uint8_t { table, other_side, unknown };  // which side of a join on t's key leads
  Drive planned_drive(std::pair<double, double> rows, const SqlTable& t, std::size_t filters) const;
  std::optional<std::pair<double, double>> estimated_rows(const sql::Select& q);  // a plain one-table query's, (lowest, highest)
  std::optional<std::pair<double, double>> unnest_subquery_rows(const sql::Select& q);  // ... an IN (SELECT unnest(...))'s
  std::optional<std::int64_t> planned_limit(const sql::Select& q);                 // its LIMIT as the plan knows it
  void order_semi_join(std::vector<std::pair<std::int64_t, Row>>& rows, const SqlTable& t, const Expr& where, bool limited);
  void order_exists_semi_join(const std::vector<std::pair<std::int64_t, Row>>& rows, SqlTable& t, const std::string& alias, const Expr& where);
  bool semi_joined(const Expr& where);  // a conjunct of WHERE is an IN or EXISTS semi join
  void order_join(std::vector<std::tuple<std::int64_t, Row, Row>>& rows, const std::vector<std::size_t>& first_match, Drive drive, bool ties_reversed);
  bool may_hash_target(SqlTable& t, std::string_view alias, SqlTable& from, std::string_view from_alias, const std::vector<const Expr*>& own, const std::vector<const Expr*>& others);
  void refuse_unplanned_order(const std::string& why) const;  // 0A000 naming why (none: nothing)
  void refuse_unplanned_join(const sql::Select& sel, std::size_t rows);  // a FROM of joins' rows, shown without ORDER BY
  // Every column the expression names in table t exists (as parse analysis checks): 42703 otherwise. `outputs`: names ORDER BY may also use.
  void check_columns(const Expr& e, const SqlTable& t, const std::string& alias, const std::vector<std::string>& outputs = {}) const;
  void check_columns(const std::vector<sql::Target>& targets, const SqlTable& t, const std::string& alias) const;
  void check_select(const sql::Select& sel, const SqlTable& t) const;
  // Runs check() once per plan node and table in an execution (the catalog is fixed while actors run).
  template <typename Check>
  void check_once(SqlTable& t, const void* node, const Check& check) {
    for (const auto& [plan, n] : t.checked) {
      if (n == node && plan.get() == plans_.get()) return;
    }
    check();
    if (plans_ != nullptr) t.checked.emplace_back(plans_, node);
  }
  // The row a WHERE pins by the whole primary key (`key = constant or $n`, ANDed with anything),
  // or nullopt. Such a statement touches that row only: its first step is on its object.
  std::optional<std::int64_t> pinned_row(SqlTable& t, const std::string& alias, const std::optional<Expr>& where);
  // The constants, $n or plpgsql variables (the server's Params) the WHERE gives each primary
  // key column, in key order (empty: it pins no row), and the row they name.
  std::vector<const Expr*> key_values(const SqlTable& t, std::string_view alias, const Expr& where) const;
  std::optional<std::int64_t> key_row(SqlTable& t, const std::vector<const Expr*>& values);
  SqlTable* table(const std::string& name);
  Error fail(Error e);  // an error: the transaction aborts (25P02); outside one the statement's writes and row locks go
  // A step of the statement (its first: the statement's start, snapshot and table locks).
  std::optional<Error> begin(std::string_view verb, Footprint fp, std::int64_t arg = 0, bool snapshot = true);
  Footprint on(ObjectId obj, Access a) const { return server_.on(obj, a); }
  Result<Rows> done(Rows rows);
  // ---- Transactions and settings: the typed statements.
  Result<Rows> statement(const sql::Transaction& t);
  Result<Rows> set_transaction(const sql::Transaction& t);  // SET TRANSACTION ...
  Result<Rows> set_constraints(const sql::Transaction& t);  // SET CONSTRAINTS ... (sql_foreign_keys.cc)
  void transaction_options(const sql::Transaction& t);      // ... and BEGIN's: level, READ ONLY (25001 checks)
  void check_read_only();  // ExecutorStart's 25006 in a READ ONLY transaction, after the statement's analysis
  Result<Rows> statement(const sql::SetVariable& v);
  Result<Rows> statement(const sql::SessionReset& r);  // RESET ALL, DISCARD (session_reset.cc)
  Result<Rows> statement(const sql::LockTables& l);  // also VACUUM, ANALYZE, COMMENT, TRUNCATE (sql_truncate.cc):
  Result<Rows> truncate(const sql::LockTables& l, const std::vector<std::pair<std::string, AdvisoryKey>>& tables);
  Result<Rows> statement(const sql::Notify& n);  // LISTEN, UNLISTEN, NOTIFY
  Result<Rows> statement(const sql::DoBlock& d);  // in a data-modifying WITH: refused (SimConnection::run_do runs DO)
  void request_table_lock();  // its tables' weak locks (its target, a SELECT's FROM tables), for its first step, and
  std::vector<SimConnection::TableLockRequest> table_locks() const;  // ... those locks

  // ---- DDL: one step that writes the whole server; not inside a transaction block. The catalog
  // is fixed while actors run (a spec's setup and teardown), but a session's own objects (`own`: pg_temp functions).
  std::optional<Error> ddl_step(bool own = false);
  Result<Rows> statement(const sql::CreateTable& ct);
  std::optional<Error> check_foreign_keys(const sql::CreateTable& ct);  // its keys name what exists: else the error

  // ---- Foreign keys (sql_foreign_keys.cc), checked as the statement ends as the RI triggers do (INITIALLY DEFERRED
  // NO ACTION ones in a block: at COMMIT). A new or changed child row locks its parent FOR KEY SHARE (waiting), 23503 for
  // none; a parent deleted or re-keyed locks the children still referencing it FOR KEY SHARE, 23503 for one. REPEATABLE
  // READ: the transaction's snapshot (docs/sql.md). Each RI query first takes its table's weak lock (RowShareLock; a
  // cascade's DELETE or SET NULL's UPDATE: RowExclusiveLock), waiting behind a LOCK TABLE as the server's.
  void check_references(SqlTable& t, const Row& row, const Row* before);
  void check_reference(SqlTable& t, const SqlTable::ForeignKey& fk, const std::vector<std::string>& values);  // one key's
  void check_referenced(SqlTable& t, const Row& old_row, const Row* new_row);
  void check_referenced_by(SqlTable& t, const std::string& child, std::size_t k, const Row& old_row, const Row* new_row, bool at_commit);
  bool defers(const SqlTable::ForeignKey& fk);  // its check is queued: deferred now (0A000 in a string's implicit block)
  std::optional<Error> run_deferred_checks();  // COMMIT's: the checks of still-live rows, in order; an error rolls back
  void run_checks(const std::vector<SimConnection::DeferredCheck>& checks);  // ... and SET CONSTRAINTS IMMEDIATE's
  void lock_for_ri_query(const SqlTable& t, Mode mode);
  // RR, a parent's RI query on a fresh snapshot: the transaction's, its cascade's crosscheck (heap_delete's).
  std::optional<std::uint64_t> crosscheck_;
  // An RI query's row lock (lock_row, `read_at` as there), then along a key-changing UPDATE's
  // moves to the newest version, locked whatever it holds: `id` becomes the slot locked last.
  Result<bool> lock_following(const std::string& name, std::int64_t& id, Stmt verb, Mode mode, const std::function<bool()>& wanted,
                              std::optional<std::uint64_t> read_at = std::nullopt);
  // ON DELETE CASCADE / SET NULL / SET DEFAULT on the rows `referencing` the deleted key `values`.
  void delete_action(SqlTable& child, const SqlTable::ForeignKey& fk, const std::vector<std::string>& values, const std::vector<std::int64_t>& referencing);
  // The rows an UPDATE or DELETE changed, their keys checked as the statement ends, in order. `before_ours`: this
  // transaction wrote the version changed: a child row's check runs though its key stays (RI_FKey_fk_upd_check_required).
  struct KeyChange {
    Row before;  // unused for an inserted row
    std::optional<Row> after;
    bool before_ours = false;
    bool inserted = false;  // an INSERT's new row: its references checked (RI_FKey_check_ins)
  };
  using KeyChanges = std::vector<KeyChange>;
  void check_keys(SqlTable& t, const KeyChanges& changes);
  Result<Rows> statement(const sql::DropTable& d);
  Result<Rows> statement(const sql::CreateType& t);
  Result<Rows> drop_types(const sql::DropTable& d);
  Result<Rows> statement(const sql::CreateSequence& q);
  Result<Rows> drop_sequences(const sql::DropTable& d);
  Result<Rows> statement(const sql::CreateFunction& f);  // and TRIGGER; one firing a trigger refused (sql_functions.cc)
  Result<Rows> drop_functions(const sql::DropTable& d);
  Result<Rows> trigger(const sql::AlterTable& a);
  void refuse_triggers(const sql::Statement& st);  // (unless its WHEN, reading no row, is false: trigger_may_fire)
  bool trigger_may_fire(const Expr& when);
  void start_sql_function(const sql::CreateFunction& f);  // a LANGUAGE sql body's tables locked as a call starts
  // A plpgsql function's call or a trigger's firing, and one statement of its body (sim/pg/executor/sql_plpgsql.cc).
  friend class PlRun;
  Value call_plpgsql(const sql::CreateFunction& f, const std::vector<Value>& args, const struct PlTrigger* trigger);
  Rows run_in_function(const std::shared_ptr<const std::vector<sql::Statement>>& plans, const sql::Statement& st, sql::EvalContext& frame, std::vector<std::vector<Value>>* rows);
  // ALTER TABLE and DROP INDEX (sim/pg/executor/sql_alter.cc).
  Result<Rows> statement(const sql::AlterTable& a);
  Value sequence_function(std::string_view name, const std::vector<Value>& args);  // nextval, currval, setval (sql_ddl.cc)
  void refuse_in_read_only(std::string_view function) const;  // nextval(), setval(): 25006 in READ ONLY
  Value serial_sequence_function(std::string_view name, const std::string& seq_name, const std::vector<Value>& args);
  Result<Rows> statement(const sql::CreateIndex& ix);
  Result<Rows> statement(const sql::Schema& s);
  // ---- SELECT
  Result<Rows> statement(const sql::Select& sel);

  // The output's column names: `*` and `x.*` stand for their relations' columns (the joined
  // relation's too); 42P01 for `x.*` naming none.
  std::vector<std::string> column_names(const std::vector<sql::Target>& targets, const SqlTable* t, std::string_view alias) const;
  // Whether `*` or `x.*` covers relation t, called `alias` in the statement.
  static bool stars(const sql::Target& target, const SqlTable& t, std::string_view alias) {
    return target.star_of.empty() || target.star_of == (alias.empty() ? std::string_view(t.def.table) : alias);
  }
  bool stars(const sql::Target& target, const SqlTable& t) const { return stars(target, t, alias_); }
  std::vector<Value> project(const std::vector<sql::Target>& targets);
  // A SELECT's rows as the result shows them, and its tag ("SELECT n"); as values to returned_ too.
  void add_rows(Rows& out, const std::vector<std::vector<Value>>& values);  // sim/pg/executor/sql_exec.cc

  // The rows of the table this session sees now that match WHERE, as (id, row), in the order of the
  // scan the server's planner picks (sql_scan_choice.h; `limit`: the rows a Limit pulls, -1 none,
  // -2 one above a Sort). `lock_pull`: LockRows above, locking each row before the next is read.
  std::vector<std::pair<std::int64_t, Row>> scan(SqlTable* t, const std::string& alias, const std::optional<Expr>& where,
                                                 std::int64_t enough = -1, std::int64_t limit = -1, const sql::Select* lock_pull = nullptr);
  // relation_rows in the order of the scan the planner picks for `where` (sql_scan_choice.h);
  // refused where that is not decided and the plans in the running order the rows WHERE keeps differently.
  std::vector<std::pair<std::int64_t, const Row*>> scan_rows(SqlTable& t, const std::string& alias, const std::optional<Expr>& where, std::int64_t limit);
  void order_scan(std::vector<std::pair<std::int64_t, const Row*>>& rows, SqlTable& t, const std::string& alias, const std::optional<Expr>& where,
                  const ScanChoice& choice);

  // SELECT's rows as values: scan, ORDER BY, row locks (in order, until LIMIT has its rows),
  // OFFSET and LIMIT, aggregates. With `first_step` false (a subquery) the scan is part of
  // the step running now, and row locks take steps of their own as in a statement.
  std::vector<std::vector<Value>> select_values(const sql::Select& sel, SqlTable* t, bool /*first_step*/);

  std::int64_t bound(const std::optional<Expr>& e, std::string_view what);
  // ORDER BY as a Sort (pg_sort.h; `limit` > 0: a Limit's bound, kept) or, `limit` < 0, an index scan.
  void sort(std::vector<std::pair<std::int64_t, Row>>& rows, const sql::Select& sel, SqlTable* t, std::int64_t limit = 0);
  // The window functions of the select list (row_number, rank, dense_rank, lag, lead,
  // first_value, last_value and aggregates OVER (PARTITION BY ... ORDER BY ...)), for each of
  // the rows WHERE kept, by row id: read while projecting.
  void compute_windows(const sql::Select& sel, SqlTable* t, std::vector<std::pair<std::int64_t, Row>>& rows);
  // Window function w's value at position j of its rows sorted by PARTITION BY then ORDER BY
  // (`keys`: sort keys and row indexes), whose partition starts at `start` and whose default
  // frame ends before `end` (past the row's last peer; without ORDER BY, the partition's end).
  Value window_value(const Expr& w, const std::vector<std::pair<std::int64_t, Row>>& rows,
                     const std::vector<std::pair<std::vector<Value>, std::size_t>>& keys, std::size_t start, std::size_t j, std::size_t end);
  // Whether the first n values of a and b are equal (NULLs equal): one partition's.
  static bool same_values_prefix(const std::vector<Value>& a, const std::vector<Value>& b, std::size_t n);
  static void window_calls(const Expr& e, std::vector<const Expr*>& out);
  std::map<const sql::Select*, std::map<std::int64_t, Value>> window_values_;  // by the call's window
  std::int64_t window_row_ = -1;  // the id of the row being projected or sorted
  static bool order_less(const std::vector<Value>& a, const std::vector<Value>& b, const sql::Select& sel);
  std::vector<std::vector<Value>> grouped_values(const sql::Select& sel, SqlTable* t, const std::vector<std::pair<std::int64_t, Row>>& rows);
  bool few_rows_estimated(const sql::Select& sel, SqlTable* t) const;  // a GROUP BY the planner sorts
  bool group_order_reaches_output(const sql::Select& sel) const;  // sql_aggregates.cc
  std::vector<std::vector<const Row*>> grouping_set_groups(const sql::Select& sel, SqlTable* t, const std::vector<std::pair<std::int64_t, Row>>& rows, std::vector<std::pair<Row, std::uint32_t>>& shown);
  std::uint32_t hashed_buckets(const sql::Select& sel, SqlTable* t, const std::vector<const Expr*>& keys) const;
  std::optional<double> where_selectivity(const sql::Select& sel, SqlTable& t, bool loose = false) const;
  std::size_t widest_row(const SqlTable& t) const;  // bytes of values of t's widest row version, 8 more each
  const Expr& order_expr(const Expr& e, const sql::Select& sel);  // ORDER BY n: a `*` counts its columns (sql_records.cc)

  // Row locks for SELECT ... FOR UPDATE / SHARE (sql_lock_rows.cc), in the rows' order, until
  // OFFSET + LIMIT rows are locked (or pull_.until accepts one): each a step. After a wait, WHERE is evaluated again on the newest
  // version; a row that fails it, or is gone, is left out (and stays locked).
  std::vector<std::pair<std::int64_t, Row>> lock_rows(std::vector<std::pair<std::int64_t, Row>> rows, const sql::Select& sel,
                                                      SqlTable* t, std::int64_t offset, std::int64_t limit);
  // ... of joined tables (sql_lock_rows.cc): those locked (checked before the scan), then each row's.
  std::vector<const sql::FromItem*> locked_tables(const sql::Select& sel);
  std::vector<std::pair<std::int64_t, Row>> lock_joined_rows(std::vector<std::pair<std::int64_t, Row>> rows, const sql::Select& sel,
                                                             SqlTable& jt, std::int64_t offset, std::int64_t limit);
  // A waiting lock of row `id` (NOWAIT: 55P03), following a moved key unless `follow` says no; false: no row.
  bool wait_row_lock(const std::string& table, std::int64_t& id, Mode mode, sql::LockWait wait, std::optional<std::uint64_t> read_at,
                     const std::function<bool()>& wanted = nullptr, const std::function<bool()>& follow = nullptr);

  // A row whose lock this session got after waiting, and found deleted meanwhile: the lock
  // was on a version that is gone, and PostgreSQL holds nothing on it; it goes at once
  // (unless this transaction wrote the row itself), in the step that found it gone.
  void forget_gone_row(const std::string& table, std::int64_t id);
  bool still_matches(SqlTable* t, const std::string& alias, std::int64_t id, const Row& row, const Expr& where);

  // FOR ... SKIP LOCKED on one row: a step that takes the lock if nobody else's conflicts.
  bool try_lock_row(const std::string& table, std::int64_t id, Mode mode);
  // The row lock an UPDATE (or ON CONFLICT DO UPDATE) with these assignments takes: FOR
  // UPDATE when it assigns a key column, else FOR NO KEY UPDATE.
  static Mode update_mode(const SqlTable& t, const std::vector<sql::Assignment>& set);
  // Whether SET changes the value of a key column of `row` (heap_update's test for FOR
  // UPDATE rather than FOR NO KEY UPDATE).
  bool key_changes(SqlTable& t, const Row& row, const std::vector<sql::Assignment>& set, std::string_view alias);

  // A subquery that locks rows takes its steps before the statement's own scan (its value is
  // then fixed for the statement, as an InitPlan's is).
  void prepare_locking_subqueries(const std::optional<Expr>& e);
  void walk(const Expr& e);
  Value aggregate(const Expr& e);
  // Set-returning calls of an expression (not in its subqueries), run for a row (srf_rows_; the
  // longest's row count), and a call's value in the row being made (srf_row_; NULL past its rows).
  std::vector<std::vector<Value>> project_set(const sql::Select& sel, const std::vector<std::pair<std::int64_t, Row>>& rows,
                                              const std::vector<const Expr*>& srfs, std::int64_t offset, std::int64_t limit, bool sort_after);
  static void set_returning_calls(const Expr& e, std::vector<const Expr*>& out);
  Value set_returning_value(const Expr& call);
  std::size_t run_set_returning_calls(const std::vector<const Expr*>& calls);
  std::int64_t srf_row_ = -1;  // the row of a ProjectSet being made; -1: none
  std::map<const Expr*, std::vector<std::vector<Value>>> srf_rows_;  // each call's rows, while srf_row_ >= 0
  // A set-returning function's rows for one call (in FROM, or in a select list).
  std::vector<std::vector<Value>> function_rows(const Expr& call);

  // ---- SELECT without FROM: expressions, and the functions of locks and sessions.
  Result<Rows> select_without_from(const sql::Select& sel);

  static bool calls_server(const Expr& e);
  static AdvisoryKey key_of(const std::vector<Value>& args);
  Value session_function(const Expr& e, const std::vector<Value>& args);

  // ---- INSERT
  Result<Rows> statement(const sql::Insert& ins);

  // The row an INSERT's values make: defaults for the rest, each value as its column stores it. Its step: one of
  // its own, or none (`step_taken`: the step running now is the row's, the statement's first for its first row).
  // Column i's DEFAULT: the next value of its serial or identity sequence, its default expression, or NULL.
  Value column_default(SqlTable& t, std::size_t i);
  Row new_row(SqlTable& t, const std::vector<int>& columns, const std::vector<std::optional<Expr>>& values, bool step_taken,
              sql::Insert::Overriding overriding);

  // The row's id in the store: its primary key's (the same id for the same key), or a new one.
  std::int64_t id_of(SqlTable& t, const Row& row);
  static std::string key_text(const SqlTable& t, const Row& row);  // the primary key of `row` as id_of() spells it
  // Waits, as a primary key's unique check does, until no other transaction in progress has
  // written row `id` (each writer's transaction waited for in turn).
  Status wait_for_row_writers(const std::string& name, std::int64_t id, ObjectId obj);
  // The id of a key as id_of() spells it (each key column's text, then '\x1f').
  std::int64_t id_of_key(SqlTable& t, std::string key);
  // One row of an INSERT, in the step new_row began: 1 when inserted, 0 when ON CONFLICT did
  // nothing; DO UPDATE locks the existing row (waiting) and updates it when its WHERE holds.
  Result<std::int64_t> insert_one(SqlTable& t, const sql::Insert& ins, Row row, Rows& out);
  // ON CONFLICT DO UPDATE of the row `id` that holds the key: 1 (updated), 0 (its WHERE is
  // false), or kConflictGone when the row was deleted while this waited for its lock.
  static constexpr std::int64_t kConflictGone = -1;
  Result<std::int64_t> conflict_update(SqlTable& t, const sql::Insert& ins, std::int64_t id, const Row& proposed, Rows& out);
  // The unique keys besides the primary key, for version `row` of row `id` (replacing
  // `before`, whose unchanged keys are not checked: a HOT update adds no index entry): the
  // key it would repeat (another row's committed version, or this transaction's own), or nullptr.
  // A key another transaction in progress may make or free (its version, or the one it
  // replaces) is waited for, on that transaction, and the check looks again; with
  // `waited_for`, it says so instead (nullptr) and the caller looks again. The step that then
  // writes the version also writes the table's object (SqlTable::unique). `conflicting`: the
  // id of the row that holds the repeated key.
  Result<const SqlTable::UniqueKey*> unique_conflict(SqlTable& t, std::int64_t id, const Row& row, const Row* before,
                                                     bool* waited_for, std::int64_t* conflicting = nullptr);
  // Waits, as the unique check does, for a (sub)transaction to end: its key `xact` (writer_key).
  Status wait_for_transaction(AdvisoryKey xact, ObjectId obj, std::string what);
  // Puts this session's new tuple for a row (an INSERT's), keeping what its own deletion of
  // the row, if any, was: a re-insert, first written by that deletion's subtransaction.
  void put_new_version(RowState& r, Row row, std::uint64_t position);
  // SET's new version of `row` (every value from the row as it was; with BEFORE UPDATE
  // triggers, NOT NULL, generated columns and CHECK are left to the caller, after them).
  Row apply_set(SqlTable& t, const Row& row, const std::vector<sql::Assignment>& set);
  // `position`: the heap position a new version took already (0: it takes the next one).
  void write_version(SqlTable& t, std::int64_t id, std::optional<Row> version, const std::vector<sql::Target>& ret, Rows& out,
                     std::uint64_t position = 0);

  // An UPDATE's version on a table with unique keys: written, then checked (a wait holds
  // it in place, its other unique entries hidden: Written::checking_unique). THROWS: Raised.
  void write_then_check(SqlTable& t, std::int64_t id, Row version, const std::vector<sql::Target>& ret, Rows& out,
                        std::uint64_t position);
  void returning(SqlTable& t, const std::vector<sql::Target>& ret, const Row& row, Rows& out);

  // ---- UPDATE and DELETE: scan, then lock each candidate (a step each), then EvalPlanQual.
  template <typename Body>
  Result<Rows> change_rows(const Body& b, bool remove);
  static const std::vector<sql::Assignment>& set_of(const sql::Update& u) { return u.set; }
  static const std::vector<sql::Assignment>& set_of(const sql::Delete&);

  // One locked row's change: deleted (`set` null) or SET's version, RETURNING, and its
  // (before, after) in `changes` when the table's keys are checked; false: a BEFORE trigger skipped it.
  bool write_change(SqlTable& t, std::int64_t id, const Row& newest, const std::vector<sql::Assignment>* set,
                    const std::vector<sql::Target>& ret, std::string_view alias, Rows& out, KeyChanges& changes,
                    const Row* projected = nullptr);  // the new version computed before the lock, if still right
  // A plain INSERT into a table with unique keys besides the primary key, once its primary
  // key is free: the row is written (others' primary key checks see it), then the other
  // keys are checked, waiting as the server's index insertions do.
  // `position`: the heap position its tuple took before the checks.
  Result<std::int64_t> insert_then_check(SqlTable& t, const sql::Insert& ins, std::int64_t id, Row row, Rows& out,
                                         std::uint64_t position);
  // An inserted row's lock (its key's), waiting for a session that still holds the lock of
  // the key's deleted version.
  Status lock_new_row(const std::string& name, std::int64_t id, ObjectId obj);

  // ---- A key-changing UPDATE (sim/pg/executor/sql_key_update.cc).
  static bool changes_primary_key(const SqlTable& t, const Row& before, const Row& after);
  // Writes `updated`, the new version of row `id` with another primary key, to its key's
  // slot (waiting for another writer of the key, 23505 on a live row) and ends `id`'s tuple
  // as moved there. THROWS: Raised.
  void move_row(SqlTable& t, std::int64_t id, Row updated, const std::vector<sql::Target>& ret, Rows& out);
  // The slot a READ COMMITTED statement follows from row `id` read at `read_at` (else its snapshot's), found but gone
  // since: where a key-changing UPDATE moved it (0: none, it was deleted or is still there).
  std::int64_t followed(const std::string& table, std::int64_t id, std::optional<std::uint64_t> read_at = std::nullopt);

  Result<Rows> statement(const sql::Update& u);
  Result<Rows> statement(const sql::Delete& d);

 public:
  // Runs the statement, turning a helper's Raised into the statement's failure.
  Result<Rows> run_checked();

 private:
  SimConnection& c_;
  Server& server_;
  Scheduler& s_;
  const std::shared_ptr<const std::vector<sql::Statement>>& plans_;
  const sql::Statement& st_;
  const std::vector<Param>& params_;
  Time statement_start_{0};
  bool started_ = false;  // the statement took its first step
  bool nested_ = false;  // a data-modifying WITH query's statement (or a plpgsql function's: no enclosing_), inside its statement's frame
  SqlRun* enclosing_ = nullptr;  // ... and that statement's run, whose earlier WITH queries it reads
  std::vector<std::vector<Value>>* returned_ = nullptr;  // ... its RETURNING rows, as values
  std::vector<std::vector<Value>>* set_rows_ = nullptr;  // the rows of the SETOF function FROM calls (sql_plpgsql.cc)
  std::function<void()> after_row_;  // ... called after each row it wrote (run_modifying's streamed_into)

  std::optional<std::int64_t> pinned_;  // the one row the statement's WHERE pins (pinned_row)
  SqlTable* table_ = nullptr;
  std::string_view alias_;  // names in the plan (which outlives the run)
  const Row* row_ = nullptr;
  const Row* excluded_ = nullptr;
  // The rows this INSERT inserted or updated: ON CONFLICT DO UPDATE of one again is 21000.
  std::vector<std::int64_t> upserted_;
  KeyChanges* upsert_changes_ = nullptr;  // an INSERT's key changes, when its table has keys: DO UPDATE's go here
  bool returning_updated_ = false;  // RETURNING runs for a row ON CONFLICT DO UPDATE updated (xmax <> 0)
  const std::vector<const Row*>* group_ = nullptr;
  std::uint32_t grouping_absent_ = 0;  // GROUPING(): bit i set when GROUP BY item i is not in the running grouping set
  std::map<const Expr*, Value> subqueries_;            // InitPlans computed
  std::map<const Expr*, SqlError> failed_subqueries_;  // InitPlans that failed, raised at first use
  std::map<const sql::Select*, bool> correlated_;
  std::vector<Saved> outer_;  // the rows of the queries around the running subquery (and a joined row), innermost last
  int subquery_depth_ = 0;    // subqueries running now (Enclosing)
  sql::EvalContext* function_params_ = nullptr;  // a running function body's parameters (function_body)
  std::map<const Expr*, std::vector<Value>> subquery_lists_;  // uncorrelated IN subqueries' values (scratch: a correlated one's)
  std::vector<Value> scratch_list_;
  std::map<const Expr*, std::vector<std::vector<Value>>> subquery_row_lists_;  // ... of row IN subqueries
  std::vector<std::vector<Value>> scratch_rows_;
  std::map<std::pair<const Expr*, std::int64_t>, std::vector<Value>> semi_row_values_;  // (row IN semi join, outer row): its row,
  std::map<std::pair<const Expr*, std::int64_t>, Value> semi_values_;  // (IN semi join, outer row): the element it matched
  std::vector<std::unique_ptr<Derived>> derived_;  // the statement's WITH queries
  // The session's own versions of each table a data-modifying WITH query writes, as before it
  // ran: the statement's other parts read those (one snapshot and command id). Row locks refused.
  std::map<std::string, std::map<std::int64_t, RowState::Written>, std::less<>> before_writes_;
  void check_not_written_by_cte(std::string_view table) const;  // a row lock on a table a data-modifying WITH query writes: refused
  // The rows this statement wrote, with the session's own version before (nullopt: none): its
  // scans read that, as a command's own tuples are hidden from it (HeapTupleSatisfiesMVCC);
  // its RI checks at the end see the writes. `table` points at the SqlTable's name.
  struct OwnWrite {
    const std::string* table;
    std::int64_t id;
    std::optional<RowState::Written> before;
  };
  std::vector<OwnWrite> own_writes_;
  // BEFORE ROW triggers (sql_triggers.cc): *new_row as they leave it; false when one returned NULL.
  bool before_row(const SqlTable& t, const char* op, const Row* old_row, Row* new_row, const std::vector<sql::Assignment>* set = nullptr);
  struct AfterRow { std::string table, trigger, function, op; std::optional<Row> old_row, new_row; bool statement = false; };
  std::vector<AfterRow> after_rows_;
  void queue_after_row(const SqlTable& t, const char* op, const Row* old_row, const Row* new_row, const std::vector<sql::Assignment>* set = nullptr);
  static std::vector<const SqlTable::Trigger*> row_triggers(const SqlTable& t, const char* op, const std::vector<sql::Assignment>* set, bool (*fires)(const SqlTable::Trigger&));
  void fire_after_rows(); void queue_after_statement();  // NOLINT: the statement's AFTER ... FOR EACH STATEMENT events, after its rows' 
  void note_own_write(const std::string& table, std::int64_t id);
  const OwnWrite* own_write(const std::string& table, std::int64_t id) const;
  Join join_;  // UPDATE ... FROM's relation; its row set per candidate
  std::map<std::int64_t, std::vector<Row>> other_matches_;  // per target row, its other joined rows, in order
  std::optional<std::uint64_t> statement_snapshot_;  // a commit count (take_statement_snapshot)
  std::optional<std::uint64_t> first_scan_at_;  // the commit count at the statement's first scan of a table
  // A locking query (WITH or subquery FOR UPDATE) took the statement's snapshot in its first step
  // (hold_statement_snapshot); later scans read on it (snapshot_seq), the locked rows newest.
  bool on_snapshot_ = false;
  bool on_snapshot() const; std::optional<std::uint64_t> snapshot_seq() const; void hold_statement_snapshot();  // NOLINT
  std::map<std::pair<const Expr*, std::int64_t>, Row> semi_rows_;  // (semi join, outer row): the inner row it matched
  std::map<std::pair<const Expr*, std::int64_t>, std::vector<Row>> semi_others_;  // ... and the others that match
  friend struct SqlSsi;  // serializable snapshot isolation's reads and writes (sim/pg/executor/sql_ssi.h)
  std::shared_ptr<struct SsiGrain> ssi_grain_;  // the plan of the next relation_rows of a SERIALIZABLE transaction
};

}  // namespace lockstep::sim::pg
