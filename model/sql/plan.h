// model/sql/plan.h: a statement of lockstep's SQL subset, as parse_sql (model/sql/parse.h)
// reads it from PostgreSQL's own parse tree.
//
// Plain data: the executor (sim/pg/) evaluates it, nothing here runs. Every construct the
// parser accepts has a field here; anything else was refused at parse time, so an executor
// never meets a construct it does not know. `location` fields are byte offsets into the
// statement's text, as PostgreSQL's parser reports them (-1: none).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "lockstep/model/sql/value.h"

namespace lockstep::sql {

struct Select;
struct Statement;

// WITH name AS (SELECT ...): a relation of the statement, computed once, when first read (a
// SELECT that locks rows: in steps of its own, before the statement's own scan). WITH name AS
// (INSERT | UPDATE | DELETE ... RETURNING ...): a data-modifying one, run to completion first,
// its RETURNING rows the relation (sim/pg/executor/sql_joins.cc).
struct CommonTable {
  std::string name;
  std::shared_ptr<const Select> select;        // a SELECT; else
  std::shared_ptr<const Statement> modifying;  // an INSERT, UPDATE or DELETE
  int location = -1;
  // WITH RECURSIVE of a query that names itself: select is `non-recursive term UNION [ALL]
  // recursive term`, the second reading the rows the last round added (its working table).
  bool recursive = false;
  std::vector<std::string> column_names;  // WITH name (a, b) AS ...: its columns renamed
  bool read = true;  // some part of the statement reads it (one that is not is never run, as the server's)
  bool read_in_one_place = false;  // the statement names it once, outside any subquery expression
  bool materialized = false;  // AS MATERIALIZED: never inlined into the query that reads it
  // A DELETE whose rows the next WITH query, an INSERT into the same table, pulls one at a time
  // (pg-boss's fail: model/sql/parse_from.cc): each deleted row is inserted before the next.
  bool streams_into_next = false;
};

struct Expr {
  enum class Kind : std::uint8_t {
    constant,   // value
    param,      // $n: number
    column,     // name (table qualifier in `qualifier`: "excluded" in ON CONFLICT DO UPDATE)
    op,         // name is the operator (+ - * / % = <> < <= > >= ||); args: 1 (unary -) or 2
    and_, or_, not_,
    is_null,    // args[0] IS NULL (negated: IS NOT NULL)
    bool_test,  // args[0] IS [NOT] TRUE / FALSE / UNKNOWN, as name says
    in_list,    // args[0] IN (args[1..]) (negated: NOT IN)
    between,    // args[0] BETWEEN args[1] AND args[2] (negated: NOT BETWEEN)
    cast,       // args[0]::type
    func,       // name(args), lower case; star: count(*)
    coalesce,   // COALESCE(args)
    case_,      // CASE [args[0] when has_operand] WHEN a THEN b ... [ELSE e]: pairs follow
    subquery,   // (SELECT ...) returning one value: select
    exists,     // EXISTS (SELECT ...)
    in_subquery,  // args[0] IN (SELECT one column), = ANY (SELECT ...): select
    array,        // ARRAY[args...]
    quantified,   // args[0] name ANY (args[1]) (all: ALL), args[1] an array
    subscript,    // args[0][args[1]]
    slice,        // args[0][lower:upper]: number's bit 1 says a lower bound follows in args, bit 2 an upper
    like,         // args[0] LIKE args[1] (name "ilike": ILIKE; negated: NOT)
    row,          // (args...) or ROW(args...): an operand of a comparison or of IN only
    user_func,    // name(args) of no built-in function: a LANGUAGE sql function (CREATE FUNCTION), found when run
    window,       // row_number(), rank() or dense_rank() OVER (...): name; select holds the window, its
                  // order_by the PARTITION BY expressions (number of them: `number`) then ORDER BY's
    field,        // (args[0]).name: a field of a row value (model/sql/records.h)
  };
  Kind kind = Kind::constant;
  Value value;
  int number = 0;
  std::string name;
  std::string qualifier;
  std::string schema;  // a column written schema.table.column: its schema
  Type type = Type::unknown;  // of a cast
  Type element = Type::unknown;  // ... to an array (type Type::array): its elements'
  int typmod = -1;               // ... to bit(n): n; to timestamp(p): p
  bool all = false;              // quantified: ALL (else ANY)
  bool distinct = false;         // an aggregate of DISTINCT values: count(DISTINCT x)
  bool negated = false;
  bool star = false;
  bool has_operand = false;  // CASE x WHEN ...
  bool has_else = false;     // CASE ... ELSE args.back()
  bool filtered = false;     // an aggregate's FILTER (WHERE args.back())
  bool folded = false;       // a constant the planner's folding made, no literal (ORDER BY 1 + 1 names no position)
  std::vector<Expr> args;
  std::vector<std::string> arg_names;  // user_func: its last arguments' names (`name => value`), in order
  std::shared_ptr<const Select> select;
  int location = -1;
};

// A subquery of an expression: scalar, EXISTS or IN.
inline bool is_sublink(const Expr& e) {
  return e.kind == Expr::Kind::subquery || e.kind == Expr::Kind::exists || e.kind == Expr::Kind::in_subquery;
}

// An output column: `expr AS name`, or `*` (every column of the table, in its order), or
// `t.*` (every column of relation t).
struct Target {
  Expr expr;
  std::string name;  // as the output names it ("?column?" when PostgreSQL would)
  bool star = false;
  std::string star_of;  // t.*: the relation's name or alias; "" for *
  // (x).*: every field of row value `expr` (a whole-row reference), as columns named so;
  // the runner expands it with the catalog (sim/pg: SqlRun::targets_of).
  bool expand = false;
};

struct OrderItem {
  Expr expr;
  bool descending = false;
  std::optional<bool> nulls_first;  // default: NULLS FIRST when descending, as PostgreSQL
};

// A locking clause's strength: FOR UPDATE, FOR NO KEY UPDATE, FOR SHARE, FOR KEY SHARE.
enum class RowLock : std::uint8_t { none, update, no_key_update, share, key_share };
enum class LockWait : std::uint8_t { wait, nowait, skip_locked };
// The clause as the server's messages name it: "FOR UPDATE", "FOR NO KEY UPDATE", ...
constexpr const char* lock_clause_name(RowLock lock) {
  return lock == RowLock::update ? "FOR UPDATE" : lock == RowLock::no_key_update ? "FOR NO KEY UPDATE" : lock == RowLock::share ? "FOR SHARE" : "FOR KEY SHARE";
}

// An item of a FROM other than one table (sim/pg/executor/sql_from.cc runs them as nested loops): a
// table or WITH query, a subquery, VALUES, a set-returning function (unnest, generate_series,
// jsonb_array_elements[_text], jsonb_each[_text], jsonb_object_keys; WITH ORDINALITY), or a
// JOIN (inner, left, cross) of two items. `lateral`: it may read the items before it.
struct FromItem {
  enum class Kind : std::uint8_t { table, subquery, values, function, join };
  Kind kind = Kind::table;
  std::string table;                        // table: its (or a WITH query's) name
  std::string alias;
  std::vector<std::string> column_aliases;  // AS a (x, y)
  std::shared_ptr<const Select> select;     // subquery
  std::vector<std::vector<Expr>> values;    // VALUES rows
  std::vector<Expr> function;               // function: the call (one)
  // AS x(name type, ...): the columns a function returning records gives (json_to_recordset).
  std::vector<struct ColumnDef> column_definitions;
  bool ordinality = false;                  // WITH ORDINALITY
  bool lateral = false;
  bool left = false;                        // join: LEFT (else inner)
  std::vector<FromItem> sides;              // join: left, right
  std::vector<Expr> on;                     // join: its condition (none: CROSS JOIN)
  std::vector<std::string> using_columns;   // join: USING's (`on` compares them), an unqualified one the left side's
  int location = -1;
};

// The name a FROM item is known by: its alias, else its table's or function's name.
inline std::string from_item_name(const FromItem& f) {
  if (!f.alias.empty()) return f.alias;
  if (f.kind != FromItem::Kind::function) return f.table;
  const std::string& called = f.function.at(0).name;  // a schema's function by its own name
  return called.substr(called.rfind('.') + 1);
}

// UNION, INTERSECT or EXCEPT [ALL] of two queries (sim/pg/executor/sql_set_operations.cc).
struct SetOperation {
  enum class Op : std::uint8_t { union_, intersect, except };
  Op op = Op::union_;
  bool all = false;
  std::shared_ptr<const Select> left, right;
};

struct Select {
  std::vector<CommonTable> with;  // at the statement's top only
  // A set operation: its rows are the operation's; `targets` are its first query's (the output
  // names); ORDER BY names output columns; LIMIT, OFFSET apply to the result.
  std::shared_ptr<const SetOperation> set_op;
  std::vector<Target> targets;
  std::string table;  // "" for SELECT without FROM, or a FROM other than one table (`from`)
  std::string alias;
  std::vector<FromItem> from;  // a FROM of several items, a JOIN, subqueries, VALUES or functions
  std::optional<Expr> where;
  std::vector<OrderItem> order_by;
  std::optional<Expr> limit, offset;
  RowLock lock = RowLock::none;
  LockWait wait = LockWait::wait;
  std::vector<std::string> lock_of;  // FOR UPDATE OF these FROM items (with `from`; empty: every table)
  bool aggregate = false;  // aggregates in its targets, GROUP BY or HAVING: a row per group
  bool distinct = false;          // SELECT DISTINCT
  std::vector<Expr> distinct_on;  // SELECT DISTINCT ON (exprs): the first row of each, in ORDER BY's order
  std::vector<Expr> group_by;  // GROUP BY (a position already replaced by its target's expression)
  // GROUPING SETS, ROLLUP and CUBE: each set's group_by items by index, in the order
  // expand_grouping_sets leaves them (the items' cross product, shortest first); empty: none.
  std::vector<std::vector<std::size_t>> grouping_sets;
  // GROUP BY items that named an output column (`SELECT q AS name ... GROUP BY name`), replaced
  // by its expression: the server does so when no FROM item has a column of that name (checked
  // when the statement runs, sim/pg/executor/sql_names.cc).
  std::vector<std::string> group_by_output_names;
  // Columns outside GROUP BY and aggregates that a grouped primary key may determine (the
  // server's functional dependency): checked when the statement runs, against the tables.
  std::vector<Expr> grouped_by_key;
  std::optional<Expr> having;
  bool show = false;  // SHOW name: current_setting(name) as the setting's name (its tag SHOW)
};

struct Assignment {
  std::string column;
  Expr value;
  bool to_default = false;  // SET column = DEFAULT (value is unused)
};

struct Insert {
  std::vector<CommonTable> with;
  std::string table;
  std::string alias;  // INSERT INTO t AS x
  std::vector<std::string> columns;  // empty: the table's, in order
  // One list per row; nullopt is DEFAULT.
  std::vector<std::vector<std::optional<Expr>>> rows;
  std::shared_ptr<const Select> select;  // INSERT ... SELECT: its rows instead
  // OVERRIDING SYSTEM VALUE: explicit values of GENERATED ALWAYS identity columns are taken;
  // USER VALUE: explicit values of identity columns are ignored (the sequence's are used).
  enum class Overriding : std::uint8_t { none, system, user } overriding = Overriding::none;
  enum class OnConflict : std::uint8_t { none, nothing, update } on_conflict = OnConflict::none;
  std::vector<std::string> conflict_columns;  // empty: any unique key (DO NOTHING only)
  // Per conflict target element, its expression (`ON CONFLICT (lower(key))`), or null for a
  // column; empty when every element is a column. An expression's entry in conflict_columns
  // is no column's name.
  std::vector<std::shared_ptr<const Expr>> conflict_expressions;
  std::string conflict_constraint;  // ON CONFLICT ON CONSTRAINT name (then no columns)
  std::shared_ptr<const Expr> conflict_index_where;  // ON CONFLICT (cols) WHERE predicate: a partial index's
  std::vector<Assignment> conflict_set;
  std::optional<Expr> conflict_where;
  std::vector<Target> returning;
};

struct Update {
  std::vector<CommonTable> with;
  std::string table;
  std::string alias;
  std::string from, from_alias;  // UPDATE ... FROM one relation (a table or a WITH query); "": none
  std::shared_ptr<Select> from_join;  // ... or FROM a join or several relations: SELECT * FROM them (from: "")
  std::vector<Assignment> set;
  std::optional<Expr> where;
  std::vector<Target> returning;
};

struct Delete {
  std::vector<CommonTable> with;
  std::string table;
  std::string alias;
  std::string from, from_alias;  // DELETE ... USING one relation (a table or a WITH query); "": none
  std::shared_ptr<Select> from_join;  // ... or USING a join or several relations (as Update's)
  std::optional<Expr> where;
  std::vector<Target> returning;
};

struct ColumnDef {
  std::string name;
  Type type = Type::int4;
  int max_length = 0;   // varchar(n): n; 0: no limit
  std::string user_type;  // an enum column's type (type == Type::enum_, or an array of enums): CREATE TYPE ... AS ENUM
  Type element = Type::unknown;  // an array column's (type == Type::array) element type
  int bits = 0;                  // bit(n): n
  int numeric_precision = 0, numeric_scale = 0;  // numeric(p, s); precision 0: unconstrained
  int time_precision = -1;  // timestamp(p), timestamptz(p): p; -1: none (6, the server's own)
  bool serial = false;  // serial / bigserial / an identity column: a sequence default
  std::string refused;  // a column whose values lockstep does not model (a sequence's log_cnt): what, for the refusal
  // GENERATED ALWAYS AS IDENTITY: an explicit value is refused (428C9) unless the INSERT says
  // OVERRIDING SYSTEM VALUE; BY DEFAULT: as a serial.
  bool identity_always = false;
  std::int64_t sequence_start = 1, sequence_increment = 1;  // START WITH, INCREMENT BY
  bool not_null = false;
  std::optional<Expr> default_value;
  std::shared_ptr<const Expr> generated;  // GENERATED ALWAYS AS (expr) STORED: computed from the row's other columns
};

// REFERENCES / FOREIGN KEY: MATCH SIMPLE; ON DELETE NO ACTION, RESTRICT, CASCADE, SET NULL or SET DEFAULT;
// ON UPDATE NO ACTION or RESTRICT; DEFERRABLE INITIALLY DEFERRED with NO ACTION or RESTRICT
// (others are refused).
struct ForeignKey {
  std::string name;                         // the constraint's: given, or <table>_<columns>_fkey
  std::vector<std::string> columns;         // of the referencing table
  std::string parent;                       // the referenced table
  std::vector<std::string> parent_columns;  // empty: its primary key
  bool restrict_delete = false, restrict_update = false;  // RESTRICT (else NO ACTION)
  // ON UPDATE CASCADE: taken where the referenced columns are the parent's primary key, which
  // lockstep's UPDATE never changes (so it never cascades); refused on another unique key.
  bool cascade_update = false;
  // ON DELETE CASCADE (the referencing rows deleted), SET NULL or SET DEFAULT (their key
  // columns set NULL, or to their defaults), as the RI trigger at the end of the deleting
  // statement does.
  enum class OnDelete : std::uint8_t { no_action, cascade, set_null, set_default };
  OnDelete on_delete = OnDelete::no_action;
  // DEFERRABLE: SET CONSTRAINTS may defer it; INITIALLY DEFERRED: deferred as a transaction
  // block begins. Deferred, its NO ACTION checks run at COMMIT (RESTRICT's at the statement's
  // end, as the server's).
  bool deferrable = false, deferred = false;
};

// CHECK (expr): a row whose expr is false is refused (23514); NULL passes.
struct CheckConstraint {
  std::string name;  // given, or as the server names it: <table>_<column>_check, <table>_check, then 1, 2, ...
  std::shared_ptr<const Expr> expr;
};

struct CreateTable {
  std::string table;
  // The schema written before its name ("": the first of search_path the server has, set as
  // it is created; a table of lockstep's own is public's).
  std::string schema;
  bool if_not_exists = false;
  std::vector<ColumnDef> columns;
  std::vector<std::string> primary_key;            // columns; empty: none
  std::vector<std::vector<std::string>> unique;    // further unique keys
  // CONSTRAINT name PRIMARY KEY / UNIQUE: the names given ("": the server's, <table>_pkey and
  // <table>_<columns>_key); unique_names is parallel to unique (or empty).
  std::string primary_key_name;
  std::vector<std::string> unique_names;
  std::vector<ForeignKey> foreign_keys;
  std::vector<CheckConstraint> checks;  // in the order they are written
  // PRIMARY KEY / UNIQUE (...) INCLUDE (columns): stored in the key's index, not part of the
  // key (no uniqueness, not a key for FOR KEY SHARE); an UPDATE of one is not a HOT update.
  std::vector<std::string> included;
  // CREATE [OR REPLACE] VIEW name AS query: the query's text (non-empty: a view, no columns),
  // read in place of the view's name in a statement's FROM (model/sql/views.h), and the
  // relations it names (a DROP TABLE of one fails 2BP01 unless CASCADE, which drops the view).
  std::string view_query;
  bool view_replace = false;
  std::vector<std::string> view_reads;
};

struct DropTable {
  std::vector<std::string> tables;
  bool if_exists = false;
  bool functions = false;  // DROP FUNCTION instead
  bool types = false;  // DROP TYPE (of enum types) instead
  bool sequences = false;  // DROP SEQUENCE instead
  bool views = false;  // DROP VIEW instead
  bool cascade = false;  // DROP TABLE ... CASCADE: other tables' foreign keys to it go too
};

// CREATE [OR REPLACE] FUNCTION name(params) RETURNS type LANGUAGE sql [IMMUTABLE | STABLE |
// VOLATILE] [STRICT] AS $$ SELECT expr $$: a function whose body is one expression of its
// parameters (by name or $n), as the server inlines it, or one query over set-returning
// functions of them (SELECT bool_and(...) FROM jsonb_array_elements(p)): its first row's value. A call casts its arguments to the
// parameters' types and the body's value to the return type; STRICT returns NULL for a NULL
// argument. One function per name (no overloading).
struct FunctionParam {
  std::string name;  // "": referred to as $n only
  ColumnDef type;    // its type, as a column's
  std::shared_ptr<const Expr> default_value;  // DEFAULT expr: a call may leave it out (and those after it)
};
struct PlFunction;  // below
struct CreateFunction {
  std::string name;
  bool replace = false;
  std::vector<FunctionParam> params;
  ColumnDef returns;
  std::shared_ptr<const Expr> body;
  // The body is a query (FROM over set-returning functions of the parameters): `body` is its
  // scalar subquery, run by the calling context (EvalContext::function_body).
  bool query_body = false;
  bool strict = false;
  // STABLE or IMMUTABLE: a statement that is not read-only is 0A000 (sim/pg/executor/sql_plpgsql.cc).
  bool non_volatile = false;
  // SET search_path = ...: the path its statements and current_setting see while it runs (a
  // LANGUAGE sql one is then never inlined: run as statements).
  std::optional<std::string> search_path;
  double cost = -1;                 // COST n (-1: not given, the server's 100); the planner's order of a WHERE's conditions
  bool security_definer = false;    // SECURITY DEFINER: never inlined (model/sql/qual_cost.h)
  // LANGUAGE plpgsql: its body as PostgreSQL's plpgsql parser reads it (`pl`), run by the
  // calling statement's context (EvalContext::plpgsql_call); `body` is null, params and
  // returns hold what the subset reads of them.
  bool plpgsql = false;
  std::shared_ptr<const PlFunction> pl;
  bool returns_trigger = false;  // RETURNS trigger (plpgsql): CREATE TRIGGER's function
  // RETURNS SETOF type (plpgsql): rows by RETURN NEXT and RETURN QUERY, called in FROM only.
  bool returns_set = false;
  // plpgsql OUT parameters and RETURNS TABLE's columns: the result's columns (variables in the
  // body, NULL as it starts); `params` are the IN ones. arg_order: the named arguments as
  // declared, an IN one as its index in params, an OUT one as -1 - its index in outs.
  std::vector<FunctionParam> outs;
  std::vector<int> arg_order;
};

// CREATE TYPE name AS ENUM ('label', ...).
// (And ALTER TYPE name ADD VALUE [IF NOT EXISTS] 'label' [BEFORE | AFTER 'neighbor']: `alter`.)
struct CreateType {
  std::string name;
  std::string schema;  // as written ("": the first schema of search_path)
  std::vector<std::string> labels;
  bool composite = false;  // CREATE TYPE name AS (fields): labels are the fields' names
  std::vector<ColumnDef> fields;  // a composite type's, in order (a row type: model/sql/records.h)
  bool alter = false;
  std::string neighbor;  // ALTER: the label the new one goes before or after ("": at the end)
  bool after = true;
  bool if_not_exists = false;
};

// CREATE SEQUENCE [IF NOT EXISTS] name [AS type] [INCREMENT BY n] [MINVALUE n] [MAXVALUE n]
// [START WITH n] [CACHE n] [[NO] CYCLE] [OWNED BY ...]: bounds resolved as the server's
// defaults (an ascending one from 1 to the type's maximum, a descending one from -1 down).
struct CreateSequence {
  std::string name;
  std::string schema;  // as written ("": the first schema of search_path)
  bool if_not_exists = false;
  std::int64_t increment = 1, min = 1, max = 0, start = 1;
  bool cycle = false;
  std::string owned_by;  // OWNED BY table.column: the table (dropping it drops the sequence)
};

// CREATE [UNIQUE] INDEX: a unique one adds a unique key; others change no result (accepted).
struct CreateIndex {
  std::string name;  // "" when the statement names none
  std::string table;
  std::vector<std::string> columns;
  // A unique index's key parts that are expressions (`(name, COALESCE(key, ''))`), by part
  // (nullptr: a column; empty when no part is an expression); such a part's `columns` entry
  // is the name the server gives it in the index's default name ("coalesce", "lower", "expr").
  std::vector<std::shared_ptr<const Expr>> expressions;
  bool unique = false;
  bool if_not_exists = false;
  bool concurrently = false;  // CREATE INDEX CONCURRENTLY: refused in a transaction block (25001)
  std::shared_ptr<const Expr> where;  // a partial index: the rows it holds
  // A non-unique index on an expression, USING another method than btree, or with INCLUDE:
  // no scan here reads it (`columns` may then be empty).
  bool opaque = false;
  // Every column the index reads (key parts, expressions, INCLUDE, predicate), by name: an
  // UPDATE that changes one is no heap-only tuple.
  std::vector<std::string> reads;
};

// ALTER TABLE [IF EXISTS] t cmd, ...: the forms migrations use, each applied in turn to the
// table and its rows (DDL outside the sessions: no transaction sees the table change).
// DROP INDEX [IF EXISTS] name is `drop_index` with `table` empty; ALTER SEQUENCE is
// `alter_sequence` likewise.
struct AlterCommand {
  enum class Kind : std::uint8_t {
    add_column,        // column (its constraints follow as add_* commands)
    drop_column,       // name
    set_default,       // name, column.default_value (nullopt: DROP DEFAULT)
    set_not_null,      // name; not_null false: DROP NOT NULL
    alter_type,        // name, column's type fields
    add_check,         // check
    add_unique,        // keys, constraint (its name or "")
    add_primary_key,   // keys, constraint
    add_foreign_key,   // foreign_key
    drop_constraint,   // constraint
    drop_index,        // constraint: the index's name
    alter_sequence,    // constraint: the sequence; AS bigint / MAXVALUE its max (a serial's: no change);
                       // keys: OWNED BY {table, column}, {"", ""} for OWNED BY NONE, empty if not given
    rename_table,      // RENAME TO name
    rename_column,     // RENAME COLUMN name TO constraint
    rename_index,      // ALTER INDEX constraint RENAME TO name (table empty)
    rename_sequence,   // ALTER SEQUENCE constraint RENAME TO name (table empty)
    no_effect,         // SET (storage parameters), SET LOGGED / UNLOGGED: nothing lockstep models
    add_trigger,       // CREATE [OR REPLACE] TRIGGER name (missing_ok: OR REPLACE) ON table [WHEN (when)]
                       // EXECUTE FUNCTION constraint(); keys: its events (INSERT, UPDATE, DELETE, TRUNCATE)
    drop_trigger,      // DROP TRIGGER [IF EXISTS] name ON table
  };
  Kind kind = Kind::no_effect;
  std::string name;  // the column
  ColumnDef column;
  bool not_null = false;
  bool missing_ok = false;  // IF [NOT] EXISTS
  bool validate = true;     // false: NOT VALID
  bool widen = false;       // alter_sequence: AS bigint or MAXVALUE was given
  std::shared_ptr<const Expr> using_expr;  // ALTER COLUMN ... TYPE ... USING expr (of the row's old values)
  std::shared_ptr<const Expr> when;        // add_trigger: its WHEN (condition), or null
  // add_trigger: BEFORE (else AFTER), FOR EACH ROW (else STATEMENT), arguments given, UPDATE OF's columns
  bool before = false, row = false, trigger_args = false;
  std::vector<std::string> of_columns;
  CheckConstraint check;
  std::vector<std::string> keys;
  std::string constraint;
  ForeignKey foreign_key;
};
struct AlterTable {
  std::string table;
  bool if_exists = false;
  std::vector<AlterCommand> commands;
};

// CREATE SCHEMA [IF NOT EXISTS] name, DROP SCHEMA [IF EXISTS] name [CASCADE]: names only.
// A table is known by its own name, whatever its schema (two tables of one name in two
// schemas are refused when the second is created); a name without a schema is found through
// search_path, one with a schema in that schema only (sim/pg/executor/sql_schemas.cc).
// Created functions are the schema's: "s.f" ("f" in public), found the same way.
struct Schema {
  std::string name;
  bool create = true;
  bool if_clause = false;  // IF NOT EXISTS / IF EXISTS
  bool extension = false;  // CREATE / DROP EXTENSION name (uuid-ossp, pgcrypto)
};

enum class Isolation : std::uint8_t { read_committed, repeatable_read, serializable };

struct Transaction {
  // set_transaction: SET TRANSACTION with the options below.
  // set_constraints: SET CONSTRAINTS {ALL | names} {DEFERRED | IMMEDIATE}.
  enum class Kind : std::uint8_t { begin, commit, rollback, savepoint, release, rollback_to, set_transaction, set_constraints } kind = Kind::begin;
  std::optional<Isolation> isolation;  // BEGIN ISOLATION LEVEL ...
  std::optional<bool> read_only;       // READ ONLY (true), READ WRITE (false)
  bool start = false;                  // written START TRANSACTION (its command tag)
  std::string savepoint;
  std::vector<std::string> constraints;  // SET CONSTRAINTS' names (empty: ALL)
  bool deferred = false;                 // ... DEFERRED (else IMMEDIATE)
};

// SET [LOCAL] name = value / TO value (lock_timeout, statement_timeout), RESET name.
struct SetVariable {
  std::string name;
  std::optional<std::string> value;  // nullopt: RESET / SET ... TO DEFAULT
  bool local = false;
  bool style = false;  // a display setting set to the value modeled (functions.h's is_pinned_style), or application_name
  bool reset = false;  // RESET (its command tag; SET ... TO DEFAULT's is SET)
};

// LOCK [TABLE] name, ... [IN mode MODE] [NOWAIT]: mode 1 (ACCESS SHARE) to 8 (ACCESS
// EXCLUSIVE, the default), as lockdefs.h numbers them. VACUUM [FREEZE] [ANALYZE] tables and
// ANALYZE tables (`maintenance`) are the lock they take, SHARE UPDATE EXCLUSIVE (4), and no
// change a statement can see: the simulated heap keeps no dead tuple a snapshot cannot see.
struct LockTables {
  std::vector<std::string> tables;
  int mode = 8;
  bool nowait = false;
  // VACUUM, ANALYZE, COMMENT ON TABLE (the comment itself is not kept: nothing reads it), or
  // TRUNCATE (ACCESS EXCLUSIVE, then every row of each table deleted; `cascade`: its CASCADE)
  enum class Maintenance : std::uint8_t { none, vacuum, analyze, comment, truncate } maintenance = Maintenance::none;
  bool cascade = false;
};

// DO [LANGUAGE plpgsql] $$ body $$, as migrations use it: the body as PostgreSQL's plpgsql
// parser reads it, in the statements the subset runs (sim/pg/executor/sql_do.cc: outside the sessions,
// a spec's setup and teardown or a model's constructor): SQL statements, PERFORM, EXECUTE of
// a text, IF / ELSIF / ELSE, RAISE, RETURN. No variables (DECLARE, INTO, FOUND), loops or
// EXCEPTION handlers: refused by name when read.
struct PlBranch;
struct PlHandler;
struct PlStatement {
  enum class Kind : std::uint8_t { sql, perform, execute, branch, raise, stop, assign, loop, exit, block, diagnostics, return_next, return_query };
  Kind kind = Kind::sql;
  // sql, perform: the statement (PERFORM's as SELECT ...); execute: the expression giving the
  // statement's text; raise: the message, each % standing for the next of `args`; stop:
  // RETURN's expression ("": none); assign: the value's expression; loop: WHILE's condition or
  // FOR's query; exit: WHEN's condition ("": none); return_next: its expression ("": the
  // variable `target`, or the OUT parameters' row: kOutRow); return_query: the query (`dynamic`:
  // the expression giving its text)
  static constexpr int kOutRow = -2;
  std::string text;
  bool dynamic = false;  // return_query: RETURN QUERY EXECUTE
  int target = -1;      // assign: the datum set; sql with INTO, FOR over a query: the row datum it fills; FOR i: i
  bool strict = false;  // INTO STRICT: exactly one row (P0002, P0003)
  std::vector<std::string> args;  // raise: expressions; loop (FOR i): lower, upper and BY's ("": 1); execute, return_query: USING's
  int level = 0;                  // raise: PostgreSQL's elog level (21 ERROR, 19 WARNING, 18 NOTICE, ...)
  std::vector<PlBranch> branches;  // branch: IF's and ELSIF's, then ELSE's (an empty condition)
  // loop: LOOP, WHILE, FOR i IN [REVERSE] a..b [BY c], FOR target IN query, FOREACH target IN ARRAY a
  enum class Loop : std::uint8_t { plain, while_, integers, query, array };
  Loop loop = Loop::plain;
  bool reverse = false;  // FOR i IN REVERSE
  bool is_exit = true;   // exit: EXIT (else CONTINUE)
  std::string label;     // loop, block: its <<label>>; exit: the one it leaves ("": the innermost loop)
  std::vector<PlStatement> body;     // loop, block
  std::vector<PlHandler> handlers;   // block: EXCEPTION WHEN ... THEN (its body runs in a subtransaction)
  // diagnostics: GET [STACKED] DIAGNOSTICS's items, each (the datum set, the item: ROW_COUNT,
  // RETURNED_SQLSTATE, MESSAGE_TEXT); raise: USING's options, each (0 ERRCODE, 1 MESSAGE,
  // 2 DETAIL, 3 HINT; its expression), and `label` its condition (RAISE unique_violation,
  // RAISE SQLSTATE '22012': "" for none)
  std::vector<std::pair<int, std::string>> items;
};
struct PlBranch {
  std::string condition;  // an expression ("": ELSE)
  std::vector<PlStatement> body;
};
struct PlHandler {
  // Each a condition's SQLSTATE (a class's ends in 000) or "others"
  std::vector<std::string> sqlstates;
  std::vector<PlStatement> body;
};
struct DoBlock {
  std::vector<PlStatement> body;
};

// A plpgsql function's variable (the plpgsql parser's datum, numbered as its varno): a
// parameter, FOUND, a DECLAREd one, a trigger's NEW and OLD; a field of a record (`parent`);
// or an INTO target's list (`fields`).
struct PlDatum {
  enum class Kind : std::uint8_t { var, record, field, row };
  Kind kind = Kind::var;
  std::string name;           // lower case; a field's name
  std::string type;           // DECLARE's type text ("": a parameter's, the function's)
  std::string default_value;  // DECLARE's := expression ("": NULL)
  int parent = -1;            // field: its record's datum
  std::vector<int> fields;    // row: the datums an INTO fills, in order
  int line = 0;               // where it is declared (the plpgsql parser's lineno; 0: a parameter's, FOUND)
  bool loop_variable = false; // FOR i's: named only inside its loop
};
// A LANGUAGE plpgsql function's body as lockstep runs it. `refused` names the first construct
// it does not run (a cursor, RETURN NEXT, ...): the function exists, a call is refused.
struct PlFunction {
  std::vector<PlDatum> datums;
  std::vector<PlStatement> body;
  std::string refused;
  // A LANGUAGE sql body run by the plpgsql runner (parse_functions.cc's sql_function_body):
  // its parameters' datums, then the result's (no name); a column before a parameter of its
  // name; its statements checked when a call starts, a DML one's first row of RETURNING kept.
  bool sql_body = false;
};

// LISTEN channel, UNLISTEN channel | *, NOTIFY channel [, 'payload']: delivered at commit to
// the sessions listening then (sim/pg/server/notifications.cc).
struct Notify {
  enum class Kind : std::uint8_t { listen, unlisten, notify };
  Kind kind = Kind::notify;
  std::string channel;  // "" with UNLISTEN *
  std::string payload;
};

// RESET ALL, and DISCARD ALL | PLANS | SEQUENCES | TEMP: the session's settings back to their
// defaults; DISCARD ALL (never in a transaction block: 25001) also drops its prepared
// statements, listens, session advisory locks, temporary functions and sequence values.
struct SessionReset {
  enum class Kind : std::uint8_t { reset_all, discard_all, discard_plans, discard_sequences, discard_temp };
  Kind kind = Kind::reset_all;
};

struct Statement {
  std::variant<Select, Insert, Update, Delete, CreateTable, DropTable, CreateIndex, Transaction, SetVariable, LockTables, Schema, CreateType,
               CreateSequence, Notify, CreateFunction, AlterTable, DoBlock, SessionReset>
      body;
  std::string text;    // this statement's own text
  int max_param = 0;   // the highest $n it uses
  bool locking_subquery = false;  // some subquery of it locks rows (FOR UPDATE / SHARE)
  // The strength its locking subqueries share (the server's first row mark's, which a READ
  // ONLY transaction names in its 25006); none when they differ or the planner may fold one
  // away (a constant arm of AND, OR or COALESCE beside it).
  RowLock subquery_lock = RowLock::none;
  bool has_subquery = false;      // it has a subquery (EXISTS or scalar), anywhere
  // It calls a function that is a step of its own (an advisory lock function, pg_sleep,
  // pg_cancel_backend, pg_terminate_backend, set_config): other sessions commit meanwhile,
  // so a READ COMMITTED statement that reads tables keeps its first step's snapshot.
  bool calls_stepping_function = false;
  // The functions it calls that are no built-in (created ones, by name): one whose body is
  // statements takes steps of its own too (sim/pg/executor/sql_plpgsql.h's takes_steps).
  std::vector<std::string> user_calls;
  // Each relation it names (FROM, INSERT INTO, UPDATE, ...): (schema as written or "", name),
  // once each; resolved through search_path as it runs (sim/pg/executor/sql_schemas.cc).
  std::vector<std::pair<std::string, std::string>> relations;
  // Each type it names that no built-in type has (a cast, a column's type): (schema as
  // written or "", name), once each; resolved as relations are.
  std::vector<std::pair<std::string, std::string>> types;
  // An error the planner's constant folding raises (1/0, 'x'::int beside no column): the
  // statement fails with it before it runs anything, after parse analysis (parse_fold.cc).
  std::shared_ptr<const SqlError> plan_error;
  std::string tag() const;  // the command tag: SELECT, INSERT, UPDATE, DELETE, BEGIN, ...
};

}  // namespace lockstep::sql
