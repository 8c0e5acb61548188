// The SQL subset's reader (model/sql/parse.h) and values (model/sql/value.h): what it
// accepts becomes the plan the text says; what it refuses is named, with its position.
#include <chrono>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "lockstep/model/sql/civil_days.h"
#include "lockstep/model/sql/parse.h"
#include "lockstep/model/sql/qual_cost.h"
#include "lockstep/model/sql/regex.h"

namespace lockstep::sql {
namespace {

template <typename T>
const T& body(const Statement& s) {
  const T* b = std::get_if<T>(&s.body);
  if (b == nullptr) throw std::runtime_error("statement is not of the expected kind: " + s.tag());
  return *b;
}

// The refusal's message, or "" when the text was accepted.
std::string refusal(std::string_view text) {
  try {
    parse_sql(text);
  } catch (const SqlInputError& e) {
    return fmt::format("{} {} @{}", e.sqlstate(), e.what(), e.position());
  }
  return "";
}

// Statements of PostgreSQL's own regression suite (src/test/regress/sql, 51,822 of them, each
// through the parser) that stopped it with an internal error before: CREATE TABLESPACE's
// `location` is its path (a string), not a token's offset; a prefix ~ has no left side.
TEST(SqlParse, RegressionSuiteStatementsThatCrashedAreRefusedOrRead) {
  EXPECT_EQ(refusal("CREATE TABLESPACE regress_tblspace LOCATION 'relative'").substr(0, 6), "0A000 ");
  EXPECT_EQ(refusal("CREATE TABLESPACE s LOCATION '' WITH (random_page_cost = 3.0)").substr(0, 6), "0A000 ");
  EXPECT_EQ(refusal("SELECT ~ 5, ~ B'1100', 6 & 3, 6 | 3, 6 # 3"), "");
  EXPECT_EQ(refusal("SELECT 'a' ~ 'b'"), "");
}

TEST(SqlParse, TheLeaseAcquireInOneStatement) {
  const Statement s = parse_statement(
      "UPDATE leases SET holder = $1, token = token + 1, expires_at = now() + $2 "
      "WHERE name = $3 AND (holder IS NULL OR expires_at < now()) RETURNING token");
  const Update& u = body<Update>(s);
  EXPECT_EQ(s.tag(), "UPDATE");
  EXPECT_EQ(s.max_param, 3);
  EXPECT_EQ(u.table, "leases");
  ASSERT_EQ(u.set.size(), 3u);
  EXPECT_EQ(u.set[0].column, "holder");
  EXPECT_EQ(u.set[0].value.kind, Expr::Kind::param);
  EXPECT_EQ(u.set[1].value.kind, Expr::Kind::op);
  EXPECT_EQ(u.set[1].value.name, "+");
  EXPECT_EQ(u.set[2].value.args.at(0).kind, Expr::Kind::func);
  EXPECT_EQ(u.set[2].value.args.at(0).name, "now");
  ASSERT_TRUE(u.where.has_value());
  EXPECT_EQ(u.where->kind, Expr::Kind::and_);
  EXPECT_EQ(u.where->args.at(1).kind, Expr::Kind::or_);
  EXPECT_EQ(u.where->args.at(1).args.at(0).kind, Expr::Kind::is_null);
  ASSERT_EQ(u.returning.size(), 1u);
  EXPECT_EQ(u.returning[0].name, "token");
}

TEST(SqlParse, TheSkipLockedQueueClaim) {
  const Statement s = parse_statement(
      "UPDATE jobs SET status = 'running' WHERE id = (SELECT id FROM jobs WHERE status = 'queued' "
      "ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) RETURNING id");
  const Update& u = body<Update>(s);
  const Expr& sub = u.where->args.at(1);
  ASSERT_EQ(sub.kind, Expr::Kind::subquery);
  EXPECT_EQ(sub.select->table, "jobs");
  EXPECT_EQ(sub.select->lock, RowLock::update);
  EXPECT_EQ(sub.select->wait, LockWait::skip_locked);
  ASSERT_TRUE(sub.select->limit.has_value());
  EXPECT_EQ(sub.select->limit->value, Value::integer(1, Type::int4));
  ASSERT_EQ(sub.select->order_by.size(), 1u);
  EXPECT_FALSE(sub.select->order_by[0].descending);
}

TEST(SqlParse, SchemaWithKeysDefaultsAndSerial) {
  const Statement s = parse_statement(
      "CREATE TABLE leases (id serial, name varchar(40) PRIMARY KEY, holder text, token bigint NOT NULL DEFAULT 0, "
      "expires_at timestamptz DEFAULT now(), UNIQUE (holder, token))");
  const CreateTable& c = body<CreateTable>(s);
  ASSERT_EQ(c.columns.size(), 5u);
  EXPECT_TRUE(c.columns[0].serial);
  EXPECT_EQ(c.columns[0].type, Type::int4);
  EXPECT_EQ(c.columns[1].max_length, 40);
  EXPECT_TRUE(c.columns[1].not_null);  // a primary key's
  EXPECT_EQ(c.columns[3].type, Type::int8);
  EXPECT_TRUE(c.columns[3].not_null);
  ASSERT_TRUE(c.columns[4].default_value.has_value());
  EXPECT_EQ(c.columns[4].default_value->name, "now");
  EXPECT_EQ(c.primary_key, std::vector<std::string>{"name"});
  ASSERT_EQ(c.unique.size(), 1u);
  EXPECT_EQ(c.unique[0], (std::vector<std::string>{"holder", "token"}));
}

TEST(SqlParse, InsertWithDefaultsConflictAndReturning) {
  const Statement s = parse_statement(
      "INSERT INTO t (a, b) VALUES (1, DEFAULT), (2, 'x') ON CONFLICT (a) DO UPDATE SET b = EXCLUDED.b "
      "WHERE t.b IS NULL RETURNING *");
  const Insert& i = body<Insert>(s);
  EXPECT_EQ(i.columns, (std::vector<std::string>{"a", "b"}));
  ASSERT_EQ(i.rows.size(), 2u);
  EXPECT_FALSE(i.rows[0][1].has_value());  // DEFAULT
  EXPECT_EQ(i.rows[1][1]->value, Value::unknown("x"));
  EXPECT_EQ(i.on_conflict, Insert::OnConflict::update);
  EXPECT_EQ(i.conflict_columns, std::vector<std::string>{"a"});
  EXPECT_EQ(i.conflict_set.at(0).value.qualifier, "excluded");
  ASSERT_TRUE(i.conflict_where.has_value());
  ASSERT_EQ(i.returning.size(), 1u);
  EXPECT_TRUE(i.returning[0].star);
}

TEST(SqlParse, SeveralStatementsKeepTheirOwnText) {
  const auto all = parse_sql("BEGIN ISOLATION LEVEL READ COMMITTED; SELECT 1; COMMIT;");
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].text, "BEGIN ISOLATION LEVEL READ COMMITTED");
  EXPECT_EQ(body<Transaction>(all[0]).isolation, Isolation::read_committed);
  EXPECT_EQ(all[1].text, "SELECT 1");
  EXPECT_EQ(all[2].tag(), "COMMIT");
  EXPECT_TRUE(parse_sql("-- nothing\n").empty());
}

TEST(SqlParse, OutputColumnsAreNamedAsPostgresNamesThem) {
  const Select s = body<Select>(parse_statement(
      "SELECT 1, x, y AS z, now(), current_timestamp, '5'::int, x::text, CASE WHEN x THEN 1 END, "
      "coalesce(x, 1), (SELECT a FROM t), EXISTS (SELECT 1), pg_advisory_lock(1) FROM t"));
  std::vector<std::string> names;
  for (const Target& t : s.targets) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"?column?", "x", "z", "now", "current_timestamp", "int4", "x", "case", "coalesce",
                                             "a", "exists", "pg_advisory_lock"}));
  const Select counted = body<Select>(parse_statement("SELECT count(*), max(x) AS top, count(*) <= 1 FROM t"));
  EXPECT_TRUE(counted.aggregate);
  EXPECT_EQ(counted.targets.at(0).name, "count");
  EXPECT_EQ(counted.targets.at(1).name, "top");
  EXPECT_EQ(counted.targets.at(2).name, "?column?");
}

// The job-claim shapes of queue libraries: a WITH query that locks rows, UPDATE ... FROM it,
// DELETE ... USING, IN (SELECT ...), INSERT ... SELECT, t.*, FOR UPDATE OF, INSERT INTO t AS x.
TEST(SqlParse, ClaimShapesOfQueueLibraries) {
  const Update u = body<Update>(parse_statement(
      "WITH locked AS (SELECT id FROM jobs WHERE state = 'available' ORDER BY id LIMIT $1 FOR UPDATE OF jobs SKIP LOCKED) "
      "UPDATE jobs j SET state = 'running' FROM locked WHERE j.id = locked.id RETURNING j.*"));
  ASSERT_EQ(u.with.size(), 1u);
  EXPECT_EQ(u.with[0].name, "locked");
  EXPECT_EQ(u.with[0].select->lock, RowLock::update);
  EXPECT_EQ(u.with[0].select->wait, LockWait::skip_locked);
  EXPECT_EQ(u.from, "locked");
  EXPECT_EQ(u.alias, "j");
  ASSERT_EQ(u.returning.size(), 1u);
  EXPECT_TRUE(u.returning[0].star);
  EXPECT_EQ(u.returning[0].star_of, "j");
  const Delete d = body<Delete>(parse_statement("DELETE FROM jobs USING done d WHERE jobs.id = d.job_id"));
  EXPECT_EQ(d.from, "done");
  EXPECT_EQ(d.from_alias, "d");
  const Select s = body<Select>(parse_statement("SELECT id FROM jobs WHERE queue NOT IN (SELECT name FROM paused)"));
  ASSERT_TRUE(s.where.has_value());
  EXPECT_EQ(s.where->kind, Expr::Kind::not_);
  EXPECT_EQ(s.where->args.at(0).kind, Expr::Kind::in_subquery);
  const Insert i = body<Insert>(parse_statement("INSERT INTO archive AS a (id) SELECT id FROM jobs WHERE state = 'done'"));
  EXPECT_EQ(i.alias, "a");
  ASSERT_NE(i.select, nullptr);
  EXPECT_EQ(i.select->table, "jobs");
  EXPECT_EQ(refusal("WITH q AS (UPDATE jobs SET state = 'x' RETURNING id) SELECT id FROM q"), "");  // data-modifying WITH
  EXPECT_EQ(refusal("UPDATE jobs SET state = 'x' FROM a, b WHERE jobs.id = a.id"), "");  // a join of several relations (from_join)
  EXPECT_NE(body<Update>(parse_statement("UPDATE jobs SET state = 'x' FROM a JOIN b ON a.id = b.id WHERE jobs.id = a.id")).from_join, nullptr);
  EXPECT_EQ(refusal("SELECT id FROM jobs FOR UPDATE OF other"),
            "42P01 relation \"other\" in FOR UPDATE clause not found in FROM clause, at position 35 @35");
  EXPECT_EQ(refusal("SELECT 1 WHERE 1 > ANY (SELECT 2)"),
            "0A000 > ANY (SELECT ...) is not in lockstep's SQL subset (docs/sql.md), at position 18 @18");
}

// Probe L (PostgreSQL 15): a WITH RECURSIVE query that reads a later query of its list (the
// server evaluates such lists in an order of its own: rows written or read differed), and a
// locking FROM subquery on a UNION side (run as a WITH query only the top runs) are refused;
// a set-returning call inside CASE or COALESCE fails as on the server.
TEST(SqlParse, ForwardWithReadsLockingSubqueriesOfUnionSidesAndSetReturningConditionals) {
  EXPECT_EQ(refusal("WITH RECURSIVE a AS (SELECT n FROM b), b AS (SELECT 1 AS n) SELECT * FROM a"),
            "0A000 a WITH RECURSIVE query reading a later query of its list is not in lockstep's SQL subset (docs/sql.md), at position 36 @36");
  EXPECT_EQ(refusal("WITH RECURSIVE b AS (SELECT 1 AS n), a AS (SELECT n FROM b) SELECT * FROM a"), "");
  EXPECT_EQ(refusal("SELECT 9 AS id UNION ALL SELECT id FROM (SELECT id FROM t FOR UPDATE) s").substr(0, 95),
            "0A000 a WITH query or a locking FROM subquery inside a UNION, INTERSECT or EXCEPT side is not i");
  EXPECT_EQ(refusal("SELECT CASE WHEN true THEN unnest(ARRAY[1, 2]) END"),
            "0A000 set-returning functions are not allowed in CASE, at position 28 @28");
  EXPECT_EQ(refusal("SELECT coalesce(unnest(ARRAY[1, 2]), 0)"), "0A000 set-returning functions are not allowed in COALESCE, at position 17 @17");
  EXPECT_EQ(refusal("SELECT CASE WHEN true THEN (SELECT max(x) FROM unnest(ARRAY[1, 2]) x) END"), "");
}

TEST(SqlParse, ConstructsOutsideTheSubsetAreNamedWithTheirPosition) {
  EXPECT_EQ(refusal("EXPLAIN SELECT 1"), "0A000 EXPLAIN is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  // Past a statement's first line, by line and column (a model's multi-line SQL).
  EXPECT_EQ(refusal("SELECT name\n  FROM queues\n  RIGHT JOIN jobs ON true"),
            "0A000 RIGHT JOIN is not in lockstep's SQL subset (docs/sql.md), at line 3, column 9 @35");
  EXPECT_EQ(refusal("SELECT lower(a) FROM t GROUP BY CUBE (lower(a))"),
            "0A000 an expression other than a column in GROUPING SETS, ROLLUP or CUBE is not in lockstep's SQL subset (docs/sql.md), at position 39 @39");
  EXPECT_EQ(refusal("SELECT * FROM t RIGHT JOIN u ON true"),
            "0A000 RIGHT JOIN is not in lockstep's SQL subset (docs/sql.md), at position 23 @23");
  EXPECT_EQ(refusal("SELECT * FROM t JOIN u USING (a)"),
            "0A000 SELECT * over JOIN ... USING (name the columns) is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  EXPECT_EQ(refusal("SELECT t.a FROM t JOIN u USING (a) JOIN v USING (a)"),
            "0A000 JOIN ... USING beside another join (write ON) is not in lockstep's SQL subset (docs/sql.md), at position 36 @36");
  EXPECT_EQ(refusal("SELECT t.a FROM t JOIN u USING (a)"), "");
  // information_schema's views by their schema (River's ColumnExists; the server answers rows).
  EXPECT_EQ(refusal("SELECT column_name FROM information_schema.columns WHERE table_name = 't'"),
            "0A000 the system view information_schema.columns is not in lockstep's SQL subset (docs/sql.md), at position 25 @25");
  EXPECT_EQ(refusal("SELECT * FROM t, u FOR UPDATE"), "");  // over joined tables: sim/pg/executor/sql_lock_rows.cc
  // A function in FROM may be one the server has (a plpgsql one): known when the statement
  // runs (SqlSim.TriggersAreKeptAndWhatFiresThemIsRefused has json_each's refusal).
  EXPECT_EQ(refusal("SELECT * FROM json_each('x')"), "");
  EXPECT_EQ(refusal("SELECT * FROM (SELECT 1) s, generate_series(1, 2) g JOIN t ON true"), "");
  EXPECT_EQ(refusal("SELECT generate_series(1, 2)"), "");  // a select list's ProjectSet
  // An SQL keyword is named as written, not by the parser's name for it.
  EXPECT_EQ(refusal("SELECT CURRENT_DATE, CURRENT_USER, LOCALTIME"), "");
  EXPECT_EQ(refusal("SELECT LOCALTIME(2)"), "0A000 LOCALTIME is not in lockstep's SQL subset (docs/sql.md), at position 8 @8");
  // A statement refused is named in SQL words, not by its parse-tree node.
  EXPECT_EQ(refusal("CREATE ROLE worker"), "0A000 CREATE ROLE is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  EXPECT_EQ(refusal("REFRESH MATERIALIZED VIEW v"),
            "0A000 REFRESH MATERIALIZED VIEW is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  EXPECT_EQ(refusal("CREATE EXTENSION hstore"), "0A000 the extension hstore is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  EXPECT_EQ(refusal("SELECT current_time(2)"), "0A000 CURRENT_TIME is not in lockstep's SQL subset (docs/sql.md), at position 8 @8");
  // pg_locks: its advisory rows only, the columns lockstep models.
  EXPECT_EQ(refusal("SELECT pid FROM pg_locks"), "0A000 pg_locks without `locktype = 'advisory'` in WHERE or ON (lockstep models its advisory lock rows only) is not in lockstep's SQL subset (docs/sql.md), at position 17 @17");
  EXPECT_EQ(refusal("SELECT pid FROM pg_locks WHERE locktype = 'advisory' OR granted"), "0A000 pg_locks without `locktype = 'advisory'` in WHERE or ON (lockstep models its advisory lock rows only) is not in lockstep's SQL subset (docs/sql.md), at position 17 @17");
  EXPECT_EQ(refusal("SELECT * FROM pg_locks l WHERE l.locktype = 'advisory'"),
            "0A000 * of pg_locks (name its columns: lockstep models some) is not in lockstep's SQL subset (docs/sql.md), at position 15 @15");
  EXPECT_EQ(refusal("SELECT l.waitstart FROM pg_locks l WHERE l.locktype = 'advisory'"),
            "0A000 pg_locks.waitstart (not modelled) is not in lockstep's SQL subset (docs/sql.md), at position 8 @8");
  EXPECT_EQ(refusal("SELECT datname, datdba FROM pg_database"),
            "0A000 pg_database.datdba (not modelled) is not in lockstep's SQL subset (docs/sql.md), at position 17 @17");
  EXPECT_EQ(refusal("SELECT * FROM pg_catalog.pg_database d"),
            "0A000 * of pg_database (name its columns: lockstep models some) is not in lockstep's SQL subset (docs/sql.md), at position 15 @15");
  EXPECT_EQ(refusal("SELECT oid FROM pg_database WHERE datname = current_database()"), "");
  // pg_stat_activity: the simulated sessions' backends, one by pid (the server lists others).
  EXPECT_EQ(refusal("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"),
            "0A000 pg_stat_activity without `pid = ...` in WHERE or ON (lockstep models the simulated sessions' backends only) is not in "
            "lockstep's SQL subset (docs/sql.md), at position 22 @22");
  EXPECT_EQ(refusal("SELECT wait_event FROM pg_stat_activity WHERE pid = 7"),
            "0A000 pg_stat_activity.wait_event (not modelled) is not in lockstep's SQL subset (docs/sql.md), at position 8 @8");
  EXPECT_EQ(refusal("SELECT state, query, application_name FROM pg_stat_activity WHERE pid = 7"), "");
  EXPECT_EQ(refusal("SELECT 1 FROM q WHERE NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = q.pid)"), "");
  // A WITH query inside a subquery may read, not write (the server's error, at the query's name).
  EXPECT_EQ(refusal("SELECT a FROM t WHERE a IN (WITH r AS (SELECT a FROM t) SELECT a FROM r)"), "");
  EXPECT_EQ(refusal("SELECT a FROM t WHERE a IN (WITH d AS (DELETE FROM t RETURNING a) SELECT a FROM d)"),
            "0A000 WITH clause containing a data-modifying statement must be at the top level, at position 34 @34");
  EXPECT_EQ(refusal("INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET b = 1 RETURNING (xmax != 0) AS skipped"), "");
  EXPECT_EQ(refusal("INSERT INTO t (a) VALUES (1) ON CONFLICT (a) DO UPDATE SET b = 1 RETURNING xmax"),
            "0A000 xmax other than compared with 0 is not in lockstep's SQL subset (docs/sql.md), at position 76 @76");
  EXPECT_EQ(refusal("INSERT INTO t (a) VALUES (1) ON CONFLICT DO NOTHING RETURNING xmax = 0"),
            "0A000 the system column xmax is not in lockstep's SQL subset (docs/sql.md), at position 63 @63");
  EXPECT_EQ(refusal("SELECT a, row_number() OVER (PARTITION BY b ORDER BY a DESC) FROM t"), "");
  EXPECT_EQ(refusal("SELECT count(*) OVER (), lag(a, 2, 0) OVER (ORDER BY a), last_value(a) OVER (PARTITION BY b) FROM t"), "");
  EXPECT_EQ(refusal("SELECT ntile(2) OVER () FROM t"), "0A000 the window function ntile() OVER is not in lockstep's SQL subset (docs/sql.md), at position 8 @8");
  EXPECT_EQ(refusal("SELECT sum(a) OVER (ORDER BY a ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t"),
            "0A000 a window frame clause (ROWS / RANGE / GROUPS ...) is not in lockstep's SQL subset (docs/sql.md), at position 8 @8");
  EXPECT_EQ(refusal("SELECT a FROM t WHERE rank() OVER () = 1"),
            "0A000 a window function outside a select list is not in lockstep's SQL subset (docs/sql.md), at position 23 @23");
  EXPECT_EQ(refusal("UPDATE t SET b = 1 RETURNING ctid"), "0A000 the system column ctid is not in lockstep's SQL subset (docs/sql.md), at position 30 @30");
  EXPECT_EQ(refusal("SELECT count(*) FROM pg_locks LEFT JOIN t ON locktype = 'advisory'"), "0A000 pg_locks without `locktype = 'advisory'` in WHERE or ON (lockstep models its advisory lock rows only) is not in lockstep's SQL subset (docs/sql.md), at position 22 @22");
  EXPECT_EQ(refusal("SELECT count(*) FROM t LEFT JOIN pg_catalog.pg_locks l ON l.locktype = 'advisory' AND l.objid = t.a::oid"), "");
  EXPECT_EQ(refusal("DELETE FROM pg_locks"), "0A000 the system view pg_locks is not in lockstep's SQL subset (docs/sql.md), at position 13 @13");
  EXPECT_EQ(refusal("SELECT lower(a) FILTER (WHERE true) FROM t"), "42809 FILTER specified, but lower is not an aggregate function, at position 8 @8");
  EXPECT_EQ(refusal("SELECT 'x1'::bit(2147483647)"), "22023 length for type bit cannot exceed 83886080, at position 14 @14");
  EXPECT_EQ(refusal("SELECT 'x1'::bit(100000)"),
            "0A000 bit(100000) (up to 65536 bits are) is not in lockstep's SQL subset (docs/sql.md), at position 14 @14");
  // A function the subset does not know may be a LANGUAGE sql one the server has (CREATE
  // FUNCTION): it parses, and is refused when it runs without one (sql-functions.spec).
  EXPECT_EQ(refusal("SELECT sha512(a) FROM t"), "");
  EXPECT_EQ(refusal("SELECT count(DISTINCT my_fn(a)) FROM t"), "");
  EXPECT_EQ(refusal("SELECT my_agg(DISTINCT a) FROM t"), "0A000 the aggregate my_agg() is not in lockstep's SQL subset (docs/sql.md), at position 8 @8");
  // plpgsql: parsed by PostgreSQL's plpgsql parser, kept (a call is refused when run).
  EXPECT_EQ(refusal("CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS 'begin return 1; end'"), "");
  EXPECT_EQ(refusal("CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS 'begin return 1 end'"),
            "0A000 a plpgsql body PostgreSQL's plpgsql parser rejects (syntax error at end of input) is not in lockstep's SQL subset "
            "(docs/sql.md), at position 50 @50");
  EXPECT_EQ(refusal("CREATE FUNCTION f() RETURNS int LANGUAGE plperl AS 'return 1'"),
            "0A000 LANGUAGE plperl is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  EXPECT_EQ(refusal("CREATE CONSTRAINT TRIGGER c AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()").substr(0, 6), "0A000 ");
  EXPECT_EQ(refusal("CREATE TRIGGER c INSTEAD OF INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()"),
            "0A000 an INSTEAD OF trigger is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  // A LANGUAGE sql body of statements runs (library-graphile-complete-jobs.spec); its last
  // statement must give the result, as check_sql_fn_retval checks at CREATE.
  EXPECT_EQ(refusal("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT a FROM t'"), "");
  EXPECT_EQ(refusal("CREATE FUNCTION f() RETURNS SETOF t LANGUAGE sql AS 'SELECT 1; UPDATE t SET a = 1 RETURNING *'"), "");
  EXPECT_EQ(refusal("CREATE FUNCTION f() RETURNS SETOF t LANGUAGE sql AS 'UPDATE t SET a = 1'"),
            "42P13 return type mismatch in function declared to return t, at position 50 @50");
  EXPECT_EQ(refusal("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1; DELETE FROM t'"),
            "42P13 return type mismatch in function declared to return integer, at position 46 @46");
  EXPECT_EQ(refusal("CREATE FUNCTION f() RETURNS void LANGUAGE sql AS 'DELETE FROM t'"), "");
  EXPECT_EQ(refusal("SELECT a FROM t WHERE a LIKE 'x%' ESCAPE '#'"),
            "0A000 LIKE ... ESCAPE is not in lockstep's SQL subset (docs/sql.md), at position 25 @25");
  EXPECT_EQ(refusal("SELECT ARRAY[ARRAY[1]]"), "0A000 multidimensional arrays is not in lockstep's SQL subset (docs/sql.md), at position 8 @8");
  EXPECT_EQ(refusal("SELECT ARRAY[]"), "42P18 cannot determine type of empty array, at position 8 @8");
  EXPECT_EQ(refusal("CREATE TABLE t (a int, EXCLUDE (a WITH =))"),
            "0A000 an EXCLUDE constraint is not in lockstep's SQL subset (docs/sql.md), at position 24 @24");
  EXPECT_EQ(refusal("BEGIN ISOLATION LEVEL SERIALIZABLE"), "");  // as REPEATABLE READ while alone, else refused when run
  EXPECT_EQ(refusal("BEGIN ISOLATION LEVEL READ UNCOMMITTED"),
            "0A000 ISOLATION LEVEL read uncommitted is not in lockstep's SQL subset (docs/sql.md), at position 7 @7");
  EXPECT_EQ(refusal("SELECT 1.5::real"), "0A000 the type float4 is not in lockstep's SQL subset (docs/sql.md), at position 13 @13");
  EXPECT_EQ(refusal("SELECT 'NaN'::numeric"), "");  // refused when run: the value is read then
  EXPECT_EQ(refusal("SELECT 1.5::numeric(50, 2)"),
            "0A000 numeric precision 50 (1 to 38 are) is not in lockstep's SQL subset (docs/sql.md), at position 13 @13");
  EXPECT_EQ(refusal("SELECT * FROM pg_stat_activity WHERE pid = 1"),
            "0A000 * of pg_stat_activity (name its columns: lockstep models some) is not in lockstep's SQL subset (docs/sql.md), at position 15 @15");
  EXPECT_EQ(refusal("SELECT * FROM pg_stat_replication"),
            "0A000 the system view pg_stat_replication is not in lockstep's SQL subset (docs/sql.md), at position 15 @15");
  EXPECT_EQ(refusal("VACUUM FREEZE t"), "");  // its table lock: vacuum-and-planner-switches.spec
  EXPECT_EQ(refusal("VACUUM"), "0A000 VACUUM of every table is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  EXPECT_EQ(refusal("VACUUM (VERBOSE) t"), "0A000 VACUUM (verbose) is not in lockstep's SQL subset (docs/sql.md), at position 9 @9");
  EXPECT_EQ(refusal("SET enable_seqscan = off"), "");
  EXPECT_EQ(refusal("TRUNCATE t"), "");  // truncate.spec
  EXPECT_EQ(refusal("TRUNCATE t RESTART IDENTITY"),
            "0A000 TRUNCATE ... RESTART IDENTITY is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  // A statement after another is placed at its first token, past blanks and comments.
  EXPECT_EQ(refusal("SELECT 1;\n  -- c\n  TRUNCATE t RESTART IDENTITY"),
            "0A000 TRUNCATE ... RESTART IDENTITY is not in lockstep's SQL subset (docs/sql.md), at line 3, column 3 @20");
  EXPECT_EQ(refusal("SELECT 1; /* x */ TRUNCATE t RESTART IDENTITY"),
            "0A000 TRUNCATE ... RESTART IDENTITY is not in lockstep's SQL subset (docs/sql.md), at position 19 @19");
  EXPECT_EQ(refusal("PREPARE TRANSACTION 'x'"), "0A000 prepared transactions is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  EXPECT_EQ(refusal("RESET ALL"), "");
  EXPECT_EQ(refusal("DISCARD ALL"), "");
  EXPECT_EQ(refusal("RESET TimeZone"), "");
  EXPECT_EQ(refusal("SET TIME ZONE LOCAL"), "");
  EXPECT_EQ(refusal("CREATE TABLE c (a int REFERENCES p ON UPDATE SET NULL)"),
            "0A000 ON UPDATE SET NULL is not in lockstep's SQL subset (docs/sql.md), at position 23 @23");
  EXPECT_EQ(refusal("CREATE TABLE c (a int REFERENCES p ON UPDATE CASCADE)"), "");  // of p's primary key: alter-table.spec
  EXPECT_EQ(refusal("SET LOCAL work_mem = 1"), "0A000 the setting work_mem is not in lockstep's SQL subset (docs/sql.md), at position 1 @1");
  EXPECT_EQ(refusal("SET search_path = x, public"), "");  // search-path.spec
  EXPECT_EQ(refusal("SELECT * FROM t FOR NO KEY UPDATE"), "");  // the four row lock strengths are in the subset
  // The position counts characters of the whole text, statements before it included.
  EXPECT_EQ(refusal("SELECT 1; SELECT 'é' FROM t NATURAL JOIN u"),
            "0A000 NATURAL JOIN is not in lockstep's SQL subset (docs/sql.md), at position 37 @37");
}

// A LANGUAGE plpgsql function is created whatever its body holds; what a call would not run
// is kept as the function's refusal (its calls are refused with it).
std::string body_refusal(const std::string& declare, const std::string& statements) {
  const std::vector<Statement> st =
      parse_sql(fmt::format("CREATE FUNCTION f(k int) RETURNS int LANGUAGE plpgsql AS $$ {} BEGIN {} RETURN 1; END $$", declare, statements));
  return body<CreateFunction>(st.at(0)).pl->refused;
}

TEST(SqlParse, PlpgsqlBodiesNameWhatTheirCallsDoNotRun) {
  EXPECT_EQ(body_refusal("DECLARE n int; r record;",
                         "<<l>> LOOP EXIT l WHEN k > 0; CONTINUE; END LOOP; WHILE false LOOP END LOOP; FOR i IN REVERSE 3..1 BY 2 LOOP END LOOP; "
                         "FOR r IN SELECT 1 AS x LOOP END LOOP; GET DIAGNOSTICS n = ROW_COUNT; "
                         "BEGIN PERFORM 1; EXCEPTION WHEN unique_violation OR SQLSTATE '55P03' THEN NULL; WHEN data_exception OR others THEN "
                         "GET STACKED DIAGNOSTICS r = MESSAGE_TEXT; END;"),
            "");
  EXPECT_EQ(body_refusal("", "LOOP DECLARE n int := 0; BEGIN n := n + 1; EXIT WHEN n > 1; END; END LOOP;"),
            "DECLARE in a nested block of a plpgsql function with a loop");
  EXPECT_EQ(body_refusal("", "DECLARE n int := 0; BEGIN n := n + 1; END;"), "");  // entered once: set at the call's start is the same
  EXPECT_EQ(body_refusal("", "BEGIN PERFORM 1; EXCEPTION WHEN sql_json_member_not_found THEN NULL; END;"),
            "the exception condition sql_json_member_not_found in a plpgsql function");
  EXPECT_EQ(body_refusal("DECLARE i int;", "FOR i IN 1..2 LOOP END LOOP; FOR i IN 1..2 LOOP END LOOP;"), "");  // each loop's own i
  EXPECT_EQ(body_refusal("DECLARE t text;", "GET DIAGNOSTICS t = PG_CONTEXT;"), "GET DIAGNOSTICS ... = PG_CONTEXT in a plpgsql function");
  // A condition PostgreSQL does not know: its plpgsql parser rejects the function (refused).
  EXPECT_EQ(refusal("CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $$ BEGIN PERFORM 1; EXCEPTION WHEN no_such_thing THEN NULL; END $$")
                .substr(0, 92),
            "0A000 a plpgsql body PostgreSQL's plpgsql parser rejects (unrecognized exception condition \"");
}

TEST(SqlParse, SyntaxAndAnalysisErrorsAreTheServers) {
  EXPECT_EQ(refusal("SELEC 1"), "42601 syntax error at or near \"SELEC\", at position 1 @1");
  EXPECT_EQ(refusal("SELECT a, count(*) FROM t"),
            "42803 column \"t.a\" must appear in the GROUP BY clause or be used in an aggregate function, at position 8 @8");
  EXPECT_EQ(refusal("SELECT a, b FROM t x GROUP BY a + 1"),
            "42803 column \"x.a\" must appear in the GROUP BY clause or be used in an aggregate function, at position 8 @8");
  // A GROUP BY of columns may name a primary key, which determines b: known when it runs
  // (queue-library-answers.spec).
  EXPECT_EQ(refusal("SELECT a, b FROM t x GROUP BY a"), "");
  EXPECT_EQ(refusal("SELECT a FROM t GROUP BY count(*)"), "42803 aggregate functions are not allowed in GROUP BY, at position 26 @26");
  EXPECT_EQ(refusal("SELECT a FROM t GROUP BY 2"), "42P10 GROUP BY position 2 is not in select list, at position 26 @26");
  EXPECT_EQ(refusal("SELECT lower(a), count(*) FROM t GROUP BY lower(a) HAVING count(*) > 1 ORDER BY 2 DESC"), "");
  EXPECT_EQ(refusal("SELECT 1, 2 UNION SELECT 3"), "42601 each UNION query must have the same number of columns, at position 26 @26");
  EXPECT_EQ(refusal("SELECT a FROM t UNION SELECT b FROM u ORDER BY a + 1"),
            "0A000 invalid UNION/INTERSECT/EXCEPT ORDER BY clause, at position 48 @48");
  EXPECT_EQ(refusal("SELECT a FROM t UNION SELECT b FROM u FOR UPDATE"),
            "0A000 FOR UPDATE is not allowed with UNION/INTERSECT/EXCEPT, at position 1 @1");
  EXPECT_EQ(refusal("SELECT * FROM (SELECT 1) AS s (a, b)"), "");
  EXPECT_EQ(refusal("SELECT DISTINCT a FROM t ORDER BY b"),
            "42P10 for SELECT DISTINCT, ORDER BY expressions must appear in select list, at position 35 @35");
  EXPECT_EQ(refusal("SELECT DISTINCT ON (a) a, b FROM t ORDER BY b"),
            "42P10 SELECT DISTINCT ON expressions must match initial ORDER BY expressions, at position 21 @21");
  EXPECT_EQ(refusal("SELECT DISTINCT a FROM t FOR UPDATE"), "0A000 FOR UPDATE is not allowed with DISTINCT clause, at position 1 @1");
  EXPECT_EQ(refusal("WITH d AS (DELETE FROM q RETURNING id) INSERT INTO a (id) SELECT id FROM d"), "");
  EXPECT_EQ(refusal("WITH d AS (DELETE FROM q RETURNING id) SELECT count(*) FROM q"), "");
  EXPECT_EQ(refusal("WITH d AS (DELETE FROM q RETURNING id) UPDATE q SET v = 1"),
            "0A000 a data-modifying WITH query on \"q\" beside another part of the statement that writes it is not in "
            "lockstep's SQL subset (docs/sql.md), at position 6 @6");
  EXPECT_EQ(refusal("WITH d AS (DELETE FROM q RETURNING id), i AS (INSERT INTO q VALUES (1)) SELECT 1"),
            "0A000 a data-modifying WITH query on \"q\" beside another part of the statement that writes it is not in "
            "lockstep's SQL subset (docs/sql.md), at position 6 @6");
  // pg-boss's fail: a DELETE's rows pulled one at a time by the INSERT after it (streamed), its
  // other readers reading that INSERT too; without that, the order is another's: refused.
  EXPECT_EQ(refusal("WITH d AS (DELETE FROM q RETURNING *), r AS (INSERT INTO q SELECT id, v FROM d RETURNING *), "
                    "f AS (INSERT INTO q SELECT id, v FROM d WHERE id NOT IN (SELECT id FROM r)) SELECT count(*) FROM r"),
            "");
  for (const char* other : {"WITH d AS (DELETE FROM q RETURNING *), r AS (INSERT INTO q SELECT id, v FROM d RETURNING *) SELECT count(*) FROM d",
                            "WITH d AS (DELETE FROM q RETURNING *), r AS (INSERT INTO q SELECT id, v FROM d ORDER BY id RETURNING *) SELECT count(*) FROM r",
                            "WITH d AS (DELETE FROM q RETURNING *), r AS (INSERT INTO q SELECT id, v FROM d RETURNING *), "
                            "f AS (INSERT INTO q SELECT id, v FROM d) SELECT count(*) FROM r"}) {
    EXPECT_NE(refusal(other).find("beside another part of the statement that writes it"), std::string::npos) << other;
  }
  // An aggregate the subset lacks beside one it has: refused, not the server's 42803.
  EXPECT_EQ(refusal("SELECT count(*), regr_count(v, id) FROM t"),
            "0A000 the function regr_count() over a grouped query's rows is not in lockstep's SQL subset (docs/sql.md), at position 18 @18");
  // WITH RECURSIVE's forms, as checkWellFormedRecursion checks them.
  EXPECT_EQ(refusal("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT a.n FROM r AS a, r AS b) SELECT * FROM r"),
            "42P19 recursive reference to query \"r\" must not appear more than once, at position 16 @16");
  EXPECT_EQ(refusal("WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n FROM t WHERE n IN (SELECT n FROM r)) SELECT * FROM r"),
            "42P19 recursive reference to query \"r\" must not appear within a subquery, at position 16 @16");
  EXPECT_EQ(refusal("WITH RECURSIVE r(n) AS (SELECT n FROM r) SELECT * FROM r"),
            "42P19 recursive query \"r\" does not have the form non-recursive-term UNION [ALL] recursive-term, at position 16 @16");
  EXPECT_EQ(refusal("WITH RECURSIVE r(n) AS (SELECT n FROM r UNION SELECT 1) SELECT * FROM r"),
            "42P19 recursive reference to query \"r\" must not appear within its non-recursive term, at position 16 @16");
  EXPECT_EQ(refusal("WITH RECURSIVE r(n) AS (SELECT 1 UNION SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r"), "");
  // pg-boss's fail: the main query reads all of the UPDATE's rows before the INSERT runs.
  EXPECT_EQ(refusal("WITH u AS (UPDATE q SET v = 1 RETURNING *), i AS (INSERT INTO q SELECT id + 10 FROM u) SELECT count(*) FROM u"), "");
  EXPECT_EQ(refusal("WITH u AS (UPDATE q SET v = 1 RETURNING *), i AS (INSERT INTO q SELECT id + 10 FROM u) SELECT id FROM u LIMIT 1"),
            "0A000 a data-modifying WITH query on \"q\" beside another part of the statement that writes it is not in "
            "lockstep's SQL subset (docs/sql.md), at position 6 @6");
  EXPECT_EQ(refusal("SELECT 1 FROM t WHERE count(*) > 1"),
            "42803 aggregate functions are not allowed in WHERE, at position 23 @23");
  EXPECT_EQ(refusal("INSERT INTO t (a) VALUES (1, 2)"), "42601 INSERT has more expressions than target columns, at position 1 @1");
  EXPECT_EQ(refusal("SELECT * FROM json_to_recordset('[]') AS x(a int[])"), "");  // an array from a JSON array's elements
  EXPECT_EQ(refusal("SELECT * FROM json_populate_record(NULL::t, '{}') AS x(a int)"),
            "42601 a column definition list is redundant for a function returning a named composite type, at position 56 @56");
  EXPECT_EQ(refusal("SELECT * FROM jsonb_populate_recordset(NULL::int, '[]')"),
            "42804 first argument of jsonb_populate_recordset must be a row type, at position 15 @15");
  EXPECT_EQ(refusal("SELECT * FROM json_populate_record(NULL, '{}')"),
            "42804 could not determine polymorphic type because input has type unknown, at position 15 @15");
  EXPECT_EQ(refusal("SELECT * FROM t, json_populate_record(t, '{}')"),
            "0A000 json_populate_record() of a base other than NULL::rowtype is not in lockstep's SQL subset (docs/sql.md), at position 18 @18");
  EXPECT_EQ(refusal("SELECT * FROM json_to_recordset('[]')"),
            "42601 a column definition list is required for functions returning \"record\", at position 15 @15");
  EXPECT_EQ(refusal("SELECT * FROM json_to_recordset('[]') WITH ORDINALITY AS t(a int)"),
            "42601 WITH ORDINALITY cannot be used with a column definition list, at position 60 @60");
  EXPECT_EQ(refusal("SELECT * FROM json_array_elements('[]') AS t(a int)"),
            "42601 a column definition list is only allowed for functions returning \"record\", at position 46 @46");
}

TEST(SqlValue, TextOutputIsPostgres) {
  EXPECT_EQ(Value::boolean(true).text_output(), "t");
  EXPECT_EQ(Value::integer(-5).text_output(), "-5");
  EXPECT_EQ(Value::timestamptz(0).text_output(), "2000-01-01 00:00:00+00");
  EXPECT_EQ(Value::timestamptz(86'400'000'000LL + 1'500).text_output(), "2000-01-02 00:00:00.0015+00");
  EXPECT_EQ(Value::timestamptz(-1'000'000).text_output(), "1999-12-31 23:59:59+00");
  EXPECT_EQ(Value::interval(1'000).text_output(), "00:00:00.001");
  EXPECT_EQ(Value::interval(-3'723'000'000LL).text_output(), "-01:02:03");
  EXPECT_EQ(cast(Value::boolean(false), Type::text), Value::text("false"));
}

TEST(SqlValue, InputAndCastsFailAsTheServerDoes) {
  EXPECT_EQ(cast(Value::unknown(" 42 "), Type::int4), Value::integer(42, Type::int4));
  EXPECT_EQ(cast(Value::unknown("yes"), Type::boolean), Value::boolean(true));
  EXPECT_EQ(cast(Value::unknown("1 ms"), Type::interval), Value::interval(1'000));
  EXPECT_EQ(cast(Value::unknown("00:00:05"), Type::interval), Value::interval(5'000'000));
  EXPECT_EQ(cast(Value::unknown("2 minutes 3 s"), Type::interval), Value::interval(123'000'000));
  EXPECT_EQ(cast(Value::unknown("2000-01-01 00:00:01+00"), Type::timestamptz), Value::timestamptz(1'000'000));
  auto error = [](const Value& v, Type t) {
    try {
      cast(v, t);
    } catch (const SqlError& e) {
      return e.sqlstate() + " " + e.what();
    }
    return std::string("no error");
  };
  EXPECT_EQ(error(Value::unknown("x"), Type::int4), "22P02 invalid input syntax for type integer: \"x\"");
  EXPECT_EQ(error(Value::unknown("3000000000"), Type::int4), "22003 value \"3000000000\" is out of range for type integer");
  EXPECT_EQ(error(Value::integer(70000), Type::int2), "22003 smallint out of range");
  EXPECT_EQ(error(Value::timestamptz(0), Type::int8), "42846 cannot cast type timestamp with time zone to bigint");
  EXPECT_EQ(compare(Value::integer(2, Type::int4), Value::unknown("10")), std::strong_ordering::less);
  EXPECT_EQ(compare(Value::text("b"), Value::text("ab")), std::strong_ordering::greater);
  EXPECT_THROW(compare(Value::integer(1), Value::text("1")), SqlError);
}

// `~` reads the server's AREs where std::regex's ECMAScript grammar agrees, and refuses the
// rest by name: a construct matched otherwise would be a wrong answer.
TEST(SqlValue, RegularExpressionsMatchAsTheServerOrAreRefused) {
  auto match = [](std::string_view text, std::string_view pattern, bool icase = false) {
    return regex_match(Value::text(std::string(text)), Value::unknown(std::string(pattern)), icase);
  };
  EXPECT_EQ(match("20240101", "^[0-9]{8}$"), Value::boolean(true));
  EXPECT_EQ(match("a\nb", "a.b"), Value::boolean(true));
  EXPECT_EQ(match("a\nb", "^a.b$"), Value::boolean(true));  // `.` matches a newline, as the server's default
  EXPECT_EQ(match("Queue_1", "^[[:alpha:]]\\w*$"), Value::boolean(true));
  EXPECT_EQ(match("ABC", "^[a-c]+$", true), Value::boolean(true));
  EXPECT_EQ(match("a.b", "a\\.b"), Value::boolean(true));
  EXPECT_TRUE(regex_match(Value::null(Type::text), Value::unknown("a"), false).is_null());
  auto refusal = [&](std::string_view pattern) {
    try {
      match("abc", pattern);
    } catch (const SqlError& e) {
      return e.sqlstate();
    }
    return std::string("no error");
  };
  for (std::string_view refused : {"a(?=b)", "(?i)a", "\\mabc", "\\1", "[[.a.]]", "(a", "a{x}", "***:a", "[]a]", "\\y"}) {
    EXPECT_EQ(refusal(refused), "0A000") << refused;
  }
}

// A statement whose tree libpg_query would write out past the stack (20,000 terms of `1 + 1 + ...`,
// found by fuzz_inputs --spec: a crash) is refused before it reaches the parser; a statement
// the server answers (1,000 terms) still reaches the reader, which refuses its nesting.
// A WHERE's conditions in the order PostgreSQL 15's planner gives them (each checked with
// EXPLAIN VERBOSE's Filter line): by cost per row, equalities of its equivalence classes after
// the others of their cost, the written order among equals.
TEST(SqlParse, WhereConditionsRunInThePlannersOrder) {
  const auto order = [](std::string_view where) {
    const Statement s = parse_statement(fmt::format("SELECT 1 FROM t WHERE {}", where));
    const Expr& w = *body<Select>(s).where;
    const ColumnPrototypes columns = [](const Expr& ref) -> std::optional<Value> {
      if (ref.name == "id" || ref.name == "p") return Value::integer(1, Type::int4);
      if (ref.name == "b") return Value::integer(1, Type::int8);
      if (ref.name == "s") return Value::text("");
      if (ref.name == "n") return Value::numeric("1");
      return std::nullopt;
    };
    std::vector<std::size_t> at;
    for (const Expr* q : qual_order(w, {columns, {}})) at.push_back(static_cast<std::size_t>(q - w.args.data()));
    return at;
  };
  using V = std::vector<std::size_t>;
  EXPECT_EQ(order("pg_try_advisory_lock(id) AND p < 3"), (V{1, 0}));        // the cast to bigint: 2 > 1
  EXPECT_EQ(order("pg_try_advisory_lock(b) AND p < 3"), (V{0, 1}));         // 1 = 1: as written
  EXPECT_EQ(order("s = 'b' AND pg_try_advisory_lock(b)"), (V{1, 0}));       // an equivalence class's, after
  EXPECT_EQ(order("pg_try_advisory_lock(id) AND s = 'b'"), (V{1, 0}));      // 1 < 2
  EXPECT_EQ(order("pg_try_advisory_lock(b) AND p IS NULL"), (V{1, 0}));     // a NULL test costs nothing
  EXPECT_EQ(order("pg_try_advisory_lock(id) AND p IN (1, 2, 3)"), (V{1, 0}));  // 1.5 < 2
  EXPECT_EQ(order("pg_try_advisory_lock(b) AND p IN (1, 2, 3)"), (V{0, 1}));   // 1.5 > 1
  EXPECT_EQ(order("pg_try_advisory_lock(hashtext(s)) AND p IN (1, 2, 3, 4, 5, 6, 7, 8, 9)"), (V{1, 0}));  // hashed: 2 < 3
  EXPECT_EQ(order("n < 3 AND pg_try_advisory_lock(b)"), (V{0, 1}));         // the constant's cast is folded
  EXPECT_EQ(order("p < 2.5 AND pg_try_advisory_lock(b)"), (V{1, 0}));       // the column's is not
  EXPECT_EQ(order("EXISTS (SELECT 1 FROM k) AND pg_try_advisory_lock(b)"), (V{0, 1}));  // an InitPlan: its Param
}

TEST(SqlParse, TreesTooDeepForTheParsersOutputAreRefusedNotACrash) {
  const auto terms = [](int n) {
    std::string sql = "SELECT 1";
    for (int i = 1; i < n; ++i) sql += " + 1";
    return sql;
  };
  EXPECT_NE(refusal(terms(20000)).find("0A000 a statement string of more than 4096 operators or 1024 levels"), std::string::npos) << refusal(terms(20000));
  std::string nested = "SELECT ";  // 2,200 nested subqueries in a plpgsql body crashed the same way
  for (int i = 0; i < 2200; ++i) nested += "(SELECT ";
  nested += "1" + std::string(2200, ')');
  EXPECT_NE(refusal(nested).find("1024 levels"), std::string::npos) << refusal(nested).substr(0, 200);
  EXPECT_NE(refusal(terms(1000)).find("nesting deeper than 128 levels"), std::string::npos) << refusal(terms(1000));
  EXPECT_EQ(refusal("SELECT '" + std::string(9000, '+') + "' AS quoted, $$" + std::string(9000, '(') + "$$ AS dollar"), "");
}

// The calendar of dates and timestamps (model/sql/civil_days.h) is std::chrono's where that
// reaches (years to 32767), and a day number's date gives the day number back to the end of
// the date type's range.
RC_GTEST_PROP(SqlCalendar, DayNumbersAreChronosAndRoundTripToTheEndOfDates, ()) {
  using namespace std::chrono;
  const auto chrono_days = *rc::gen::inRange<std::int64_t>(-4'000'000, 11'000'000);  // years -8951 to 32117
  const sys_days day = sys_days{year{2000} / January / 1} + days{chrono_days};
  const year_month_day ymd{day};
  const CivilDate c = civil_from_days(chrono_days);
  RC_ASSERT(c.year == static_cast<int>(ymd.year()));
  RC_ASSERT(c.month == static_cast<unsigned>(ymd.month()));
  RC_ASSERT(c.day == static_cast<unsigned>(ymd.day()));
  RC_ASSERT(weekday_of_days(chrono_days) == weekday{day}.c_encoding());
  RC_ASSERT(days_in_month(c.year, c.month) == static_cast<unsigned>(year_month_day_last{ymd.year() / ymd.month() / last}.day()));
  const auto far = *rc::gen::inRange<std::int64_t>(-2'500'000, 2'146'000'000);  // 4714 BC to 5874897 AD
  const CivilDate d = civil_from_days(far);
  RC_ASSERT(d.month >= 1u && d.month <= 12u && d.day >= 1u && d.day <= days_in_month(d.year, d.month));
  RC_ASSERT(days_from_civil(d.year, d.month, d.day) == far);
}

TEST(SqlCalendar, TheEndsOfTheServersRanges) {
  EXPECT_EQ(days_from_civil(kTimestampLastYear + 1, 1, 1) * kCivilMicrosPerDay, kTimestampEnd);
  EXPECT_EQ(days_from_civil(-4713, 11, 24) * kCivilMicrosPerDay, kTimestampLow);  // 4714-11-24 BC
  const CivilDate last = civil_from_days(days_from_civil(kDateLastYear, 12, 31));
  EXPECT_EQ(last.year, kDateLastYear);
  EXPECT_EQ(nth_weekday_of_month(2024, 3, 0, 2), days_from_civil(2024, 3, 10));  // US daylight time began
  EXPECT_EQ(nth_weekday_of_month(2024, 10, 0, 0), days_from_civil(2024, 10, 27));
}

}  // namespace
}  // namespace lockstep::sql
