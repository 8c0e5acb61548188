#include "sql_programs.h"

#include <algorithm>

#include <fmt/format.h>
#include <rapidcheck.h>

namespace lockstep::sql_programs {

namespace {

// The parent table's statements: an insert and a move of t's reference (the foreign key's
// check locks the parent row FOR KEY SHARE; 23503 for the missing 3), a delete of a parent
// (the cascade deletes its children, waiting for their row locks), an update of a parent's
// other column (FOR NO KEY UPDATE: it passes the check's KEY SHARE) and of its key (NO
// ACTION: 23503 while a child references it), a parent locked FOR UPDATE and FOR KEY SHARE,
// and children joined to their parents, locking both (a parent's change re-checked) or the
// child only, skipping locked ones; a join USING their key (an unqualified id is t's).
std::string gen_parent_statement(int k, int v) {
  switch (*rc::gen::inRange(0, 10)) {
    case 9: return fmt::format("SELECT id, v, n FROM t LEFT JOIN parent USING (id) WHERE v >= {} ORDER BY id", v);
    case 7: return fmt::format("SELECT t.id, p.n FROM t JOIN parent p ON p.id = t.parent_id WHERE p.n <= {} ORDER BY t.id FOR UPDATE", v % 2);
    case 8: return "SELECT t.id, p.n FROM t JOIN parent p ON p.id = t.parent_id ORDER BY t.id LIMIT 1 FOR SHARE OF t SKIP LOCKED";
    case 0: return fmt::format("INSERT INTO t VALUES ({}, {}, {})", k + 2, v, k);
    case 1: return fmt::format("UPDATE t SET parent_id = {} WHERE id = {} RETURNING id, parent_id", 3 - k % 3, k);
    case 2: return fmt::format("DELETE FROM parent WHERE id = {}", k);
    case 3: return fmt::format("UPDATE parent SET n = n + 1 WHERE id = {} RETURNING n", k);
    case 4: return fmt::format("UPDATE parent SET id = id + 2 WHERE id = {}", k);
    case 5: return fmt::format("SELECT n FROM parent WHERE id = {} FOR UPDATE", k);
    default: return fmt::format("SELECT id FROM parent WHERE id = {} FOR KEY SHARE", k);
  }
}

}  // namespace

std::string gen_statement(bool repeatable_read, bool parent) {
  const int k = *rc::gen::element(1, 1, 1, 2, 3);
  const int v = *rc::gen::inRange(0, 3);
  if (parent && *rc::gen::inRange(0, 4) == 0) return gen_parent_statement(k, v);
  // Writes seven times in ten: they are what orders sessions.
  // The four row lock strengths meet: an UPDATE of v takes FOR NO KEY UPDATE, or FOR UPDATE
  // when v is UNIQUE; a DELETE FOR UPDATE.
  // Subqueries (cases 15 to 17) read the statement's snapshot, also in a re-check after a
  // wait: an InitPlan in SET, a correlated semi join and an anti join on the same table.
  // Case 14 upserts on the unique key v (not the primary key).
  // Joins (18 to 21): the queue claim (a WITH query FOR UPDATE SKIP LOCKED, UPDATE ... FROM
  // it), an IN semi join, INSERT ... SELECT, DELETE ... USING the table itself.
  // Rows without ORDER BY (22, 23) come in heap order: an updated row moves to the end.
  // Case 25 (READ COMMITTED only): a data-modifying WITH query beside a read of its table,
  // which sees the table as the statement found it, also after the query waited.
  // Case 26: a key-pinned UPDATE whose SET fails NOT NULL on the version it reads, and not on
  // some others: the server fails it before asking for the row's lock.
  // Case 27: IS NOT TRUE in a re-check (a NULL v, from case 26, passes it).
  // Cases 28, 29: UPDATEs of the primary key, pinned and scanning (the new key's check waits
  // for its writer or fails 23505; a writer that found the old row follows it to the new one).
  // Advisory locks (30 to 34), on the keys of the rows' ids: a try, a transaction lock that
  // waits, an unlock (a WARNING when not held), a try in WHERE under a LIMIT without ORDER BY
  // (the Limit stops the scan: rows past the first that passed take no lock; heap order) and
  // one under ORDER BY (the Sort reads every row first: each that passes takes its lock).
  // A statement's subqueries of its own table (35 to 37) read it as the statement found it,
  // not its own writes (Hangfire's TrimList: DELETE ... NOT IN (SELECT ... LIMIT)), and an
  // ARRAY (SELECT ...) of ids.
  // FOR UPDATE OF one side of a join (38, 39): after a wait the new version is joined with the
  // other side's row as it was; a LEFT JOIN whose condition now fails gives NULLs.
  // Case 40: Que's lock_job, a WITH RECURSIVE walk that tries each row's advisory lock in
  // turn until one is free (a round runs only when the LIMIT asks for more: a try that
  // fails reads the next row).
  // Cases 41, 42: a lock function that waits, then a read in the same statement: the read is
  // on the snapshot the statement took at its start, from before the wait (a lost update).
  // Case 43: an upsert whose SET reads the table after the wait for the conflicting row, on
  // that snapshot too; case 44: a second row's VALUES subquery after the first's unique check.
  // Cases 45, 46: a correlated EXISTS (... FOR UPDATE [SKIP LOCKED]) on another row, a SubPlan
  // that locks per outer row after the cheaper conditions passed (graphile-worker's claim; its
  // ORDER BY no index gives: a Sort, so every row's WHERE runs, as in the simulation);
  // case 47: an uncorrelated EXISTS (... FOR UPDATE), which locks the one row it pulls;
  // case 48: a correlated IN (... FOR UPDATE), which locks the rows up to its first match.
  // Case 49: constants the planner folds before the statement runs: a lock call beside a
  // constant TRUE in an OR (FALSE in an AND) is never made, and one beside a constant 1/0
  // never runs either (the statement fails first); IN, BETWEEN and IS NULL of constants fold
  // too, and a locking subquery in an arm folded away never runs.
  // Case 50: a lock function in a locking SELECT's list runs for each row before its row lock
  // (LockRows pulls from the projection below it), for a row then skipped too, and again on
  // the newest version a re-check reads; a key-pinned one's too.
  // Case 51: UPDATE ... FROM (DELETE ... USING) a join: the joined rows as they were through
  // the target row's re-check (pg-boss's cacheQueueStats).
  // Case 52: TRUNCATE (pgmq's purge): ACCESS EXCLUSIVE, every row gone, not MVCC-safe (an
  // older REPEATABLE READ snapshot sees the table empty); refused in SERIALIZABLE.
  // Case 53: subqueries that name the outer row through a WITH query, a subquery in FROM or a
  // UNION (SubPlans run per row, also in SET's re-check: procrastinate's list_queues), and
  // set-returning calls beside a FROM's rows with ORDER BY or DISTINCT.
  // Cases 54, 55: LANGUAGE plpgsql functions (table_setup's): bump's UPDATE ... RETURNING INTO
  // and FOUND; claim's SELECT ... INTO ... FOR UPDATE [SKIP LOCKED] LIMIT 1, then an UPDATE of
  // that row, each a statement of its own inside the call.
  // Case 56: plpgsql EXCEPTION blocks (subtransactions) and loops: put's UPDATE-else-INSERT
  // retried on unique_violation (the manual's merge_db), poke's UPDATE undone when its NOWAIT
  // lock of the next row fails; take's RETURN QUERY of an UPDATE of rows a subquery locks FOR
  // UPDATE SKIP LOCKED (a set-returning claim, run to its end inside the call).
  // Case 57: a JSON batch read into rows of t's row type (json_populate_recordset, an upsert of
  // each), a field of a populated row in SET, and a FROM subquery's rows as values (row_to_json).
  // Case 58: dynamic SQL in plpgsql (EXECUTE ... INTO ... USING, RETURN QUERY EXECUTE format()
  // ... USING: xbump, xtake), OUT parameters read FOR SHARE (xpair), and an IN (SELECT ...
  // LIMIT n) semi join's rows in the plan's order.
  // Case 59: graphile-worker's add_jobs shape: an array of a composite type (a cast of rows,
  // ARRAY (SELECT jsonb_populate_recordset(...))) unnested in a plpgsql function, INSERT ...
  // SELECT DISTINCT over it (the HashAggregate's order sets RETURNING's) upserting, UPDATE ...
  // FROM it, named arguments, RAISE USING ERRCODE; DISTINCT over unnest(ARRAY[...]) at the top;
  // rows compared and ordered as values of the composite type.
  // Case 60: LANGUAGE sql functions of statements: RETURNS SETOF t of an UPDATE ... RETURNING,
  // two UPDATEs (void), a SELECT's first row, a DELETE ... RETURNING's first row, a STABLE one
  // that writes (0A000), a parameter named as a column.
  // Case 61: session resets (a pooler's DISCARD ALL between clients): the session's advisory
  // locks go (another session's try then takes the key), its custom settings too; RESET ALL
  // keeps the locks; both fail or are refused in a transaction block.
  // Case 63: window functions over rows others write: ranking, running sums over peers,
  // lag / lead, PARTITION BY, a named WINDOW, and pg-boss's one-per-partition claim (an IN over a
  // row_number() subquery) in an UPDATE; IN (SELECT unnest(ARRAY[...])) and correlated EXISTS semi joins.
  // Case 64: a data-modifying WITH query nothing reads (run after the statement's own query, on
  // its snapshot: Que's reenqueue beside an INSERT into its table), a view read in place
  // (tview, in FROM and UPDATE ... FROM), overloaded functions (ov(int) writes, ov(text) reads).
  switch (*rc::gen::inRange(0, 10) < 7 ? *rc::gen::inRange(8, 65) : *rc::gen::inRange(0, 8)) {
    case 64:
      switch (*rc::gen::inRange(0, 8)) {
        case 0: return fmt::format("WITH d AS (DELETE FROM t WHERE id = {} RETURNING id) INSERT INTO t (id, v) VALUES ({}, {}) RETURNING id, v", k, k + 3, v);
        case 1: return fmt::format("WITH d AS (DELETE FROM t WHERE id = {}) INSERT INTO t (id, v) VALUES ({}, {}) RETURNING id", k, k, v);
        case 2: return fmt::format("WITH u AS (UPDATE t SET v = v + 1 WHERE id = {} RETURNING v) SELECT count(*) AS n FROM t WHERE v >= {}", k, v);
        case 3: return fmt::format("SELECT id, v FROM tview WHERE id >= {} ORDER BY id", k);
        case 4: return fmt::format("UPDATE t SET v = v + 1 FROM tview w WHERE w.id = t.id AND w.id = {} RETURNING t.id, t.v", k);
        case 5: return fmt::format("SELECT ov({}) AS r", k);
        case 6: return fmt::format("SELECT ov('{}') AS r, ov(NULL) AS n", std::string(static_cast<std::size_t>(k), 'x'));
        default: return fmt::format("SELECT count(*) AS n, sum(v) AS s FROM tview WHERE v > {}", v);
      }
    case 63:
      switch (*rc::gen::inRange(0, 11)) {
        case 10:
          return fmt::format("INSERT INTO t (id, v) SELECT id + 10, v + 10 FROM t WHERE id IN (SELECT unnest(ARRAY[{}, 1])){} RETURNING id", k,
                             *rc::gen::element(std::string(), std::string(" ORDER BY id DESC")));
        case 8: return fmt::format("SELECT id, v FROM t WHERE EXISTS (SELECT 1 FROM t AS o WHERE o.id = t.id + {})", k - 2);
        case 9: return fmt::format("UPDATE t SET v = v + 1 WHERE EXISTS (SELECT 1 FROM t AS o WHERE o.v = t.v + {} AND o.id <> t.id) RETURNING id, v", k % 2);
        case 6: return fmt::format("UPDATE t SET v = v + 1 WHERE id IN (SELECT unnest(ARRAY[{}, 2, 1, 3])) RETURNING id, v", k + 2);
        case 7: return fmt::format("WITH r AS (DELETE FROM t WHERE id IN (SELECT x FROM unnest(ARRAY[3, 1, {}]) AS x) RETURNING id) SELECT count(*) AS n FROM r", k);
        case 0: return "SELECT id, v, row_number() OVER (ORDER BY v, id) AS r FROM t ORDER BY id";
        case 1: return fmt::format("SELECT id, sum(v) OVER (PARTITION BY v % 2 ORDER BY id) AS s, count(*) OVER () AS n FROM t WHERE v >= {} ORDER BY id", v);
        case 2: return "SELECT id, rank() OVER (ORDER BY v) AS r, dense_rank() OVER (ORDER BY v DESC) AS d, sum(v) OVER (ORDER BY v) AS run FROM t ORDER BY id";
        case 3: return "SELECT id, lag(v) OVER w AS p, lead(id) OVER w AS nx, first_value(v) OVER (w) AS f FROM t WINDOW w AS (ORDER BY id) ORDER BY id";
        case 4: return "UPDATE t SET v = v + 1 WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY v ORDER BY id) AS rn FROM t) AS s WHERE rn = 1) RETURNING id, v";
        default: return fmt::format("SELECT id FROM (SELECT id, row_number() OVER (ORDER BY v DESC, id) AS rn FROM t) AS s WHERE rn <= {} ORDER BY id", k);
      }
    case 62:
      switch (*rc::gen::inRange(0, 5)) {
        case 0: return "SELECT v, count(*) AS n FROM t GROUP BY ROLLUP (v)";
        case 1: return fmt::format("SELECT v, count(*) AS n, grouping(v) AS g FROM t WHERE id <> {} GROUP BY ROLLUP (v) ORDER BY v NULLS FIRST", k);
        case 2: return "SELECT id, v, count(*) AS n, grouping(id, v) AS g FROM t GROUP BY CUBE (id, v) ORDER BY id, v";
        case 3: return fmt::format("SELECT sum(n) AS total FROM (SELECT v, count(*) AS n FROM t GROUP BY GROUPING SETS ((v), ())) AS g WHERE v IS NULL OR v >= {}", v);
        default: return "SELECT v, max(id) AS top FROM t GROUP BY GROUPING SETS ((v), ()) HAVING count(*) > 0 ORDER BY 1";
      }
    case 61:
      switch (*rc::gen::inRange(0, 5)) {
        case 0: return "DISCARD ALL";
        case 1: return "RESET ALL";
        case 2: return fmt::format("SET x.tag = 'client{}'", k);
        case 3: return "SELECT current_setting('x.tag', true) AS tag";
        default: return fmt::format("SELECT pg_try_advisory_lock({}) AS got", k + 700);
      }
    case 60:
      switch (*rc::gen::inRange(0, 12)) {
        case 10: return fmt::format("UPDATE t SET v = v + 1 WHERE v >= {} AND pg_try_advisory_lock(id + 500) RETURNING id, v", v);
        case 11: return fmt::format("SELECT pg_advisory_unlock({}) AS first, pg_advisory_unlock({}) AS second", k + 500, k + 500);
        case 9: return fmt::format("SELECT id FROM t WHERE v >= {} AND pg_try_advisory_lock(id + 400) LIMIT {} FOR UPDATE SKIP LOCKED", v, k % 2 + 1);
        case 7: return fmt::format("SELECT id FROM t WHERE pg_try_advisory_lock(id + 200) ORDER BY id LIMIT {} FOR UPDATE SKIP LOCKED", k % 3 + 1);
        case 8: return fmt::format("SELECT id, v FROM t WHERE v >= {} AND sqlock(id + 300) ORDER BY id DESC LIMIT 1 FOR UPDATE", v);
        case 5: return fmt::format("SELECT id, sqlock(id) AS got FROM t WHERE v >= {} ORDER BY id", v);
        case 6: return fmt::format("SELECT id FROM t WHERE v >= {} AND sqlock(id + 100) ORDER BY id LIMIT 1", v);
        case 0: return fmt::format("SELECT id, v FROM sqtake({}, {})", k + 1, v);
        case 1: return fmt::format("SELECT sqmove({}, {})", k, k % 3 + 1);
        case 2: return fmt::format("SELECT sqfirst({}) AS r", v);
        case 3: return fmt::format("SELECT sqlast({}) AS r", k);
        default: return fmt::format("SELECT sqbad({}) AS r", k);
      }
    case 59: {
      const std::string specs = fmt::format("ARRAY[({}, {})::tspec, ({}, {})::tspec, ({}, {})::tspec]", k, v + 4, k + 2, v + 5, *rc::gen::inRange(1, 5), v + 6);
      switch (*rc::gen::inRange(0, 6)) {
        case 5: return fmt::format("SELECT id, v FROM t WHERE (id, v)::tspec > ({}, {})::tspec ORDER BY (id, v)::tspec DESC", k, v);
        case 0: return fmt::format("SELECT id, v FROM xadd({})", specs);
        case 1: return fmt::format("SELECT id, v FROM xadd(keep => true, specs => {})", specs);
        case 2:
          return fmt::format("SELECT id, v FROM xadd(ARRAY(SELECT jsonb_populate_recordset(NULL::tspec, jsonb_build_array(jsonb_build_object('id', {}, 'v', {}), "
                             "jsonb_build_object('id', {}, 'v', {})))))",
                             k, v + 7, k + 1, v + 8);
        case 3: return fmt::format("SELECT id, v FROM xadd(ARRAY[(1, 1)::tspec, (2, 2)::tspec, (3, 3)::tspec, ({}, 4)::tspec])", k);
        default: return fmt::format("SELECT DISTINCT x FROM unnest(ARRAY[{}, 3, {}, {}]) x", k, k + 2, v);
      }
    }
    case 58:
      switch (*rc::gen::inRange(0, 4)) {
        case 3: return fmt::format("SELECT * FROM xpair({})", k);
        case 0: return fmt::format("SELECT xbump({}, {}) AS r", k, v + 1);
        case 1: return fmt::format("SELECT id, v FROM xtake({}, {})", *rc::gen::inRange(1, 4), v);
        default: return fmt::format("SELECT id, v FROM t WHERE id IN (SELECT id FROM t WHERE v >= {} ORDER BY v DESC LIMIT {})", v, *rc::gen::inRange(1, 4));
      }
    case 57:
      switch (*rc::gen::inRange(0, 3)) {
        case 0:
          return fmt::format("INSERT INTO t (id, v) SELECT id, v FROM jsonb_populate_recordset(NULL::t, jsonb_build_array("
                             "jsonb_build_object('id', {}, 'v', {}), jsonb_build_object('id', {}, 'v', {}))) "
                             "ON CONFLICT (id) DO UPDATE SET v = excluded.v RETURNING id, v",
                             k, v + 4, k + 2, v + 5);
        case 1: return fmt::format("SELECT row_to_json(s) AS r FROM (SELECT id, v FROM t WHERE v >= {} ORDER BY id) s", v);
        default:
          return fmt::format("UPDATE t SET v = (jsonb_populate_record(NULL::t, jsonb_build_object('v', v + {}))).v WHERE id = {} RETURNING id, v",
                             v + 1, k);
      }
    case 56:
      switch (*rc::gen::inRange(0, 3)) {
        case 0: return fmt::format("SELECT put({}, {}) AS p", *rc::gen::inRange(1, 4), v);
        case 1: return fmt::format("SELECT poke({}) AS p", k);
        default: return fmt::format("SELECT id, v FROM take({}, {})", *rc::gen::inRange(1, 3), v);
      }
    case 54: return fmt::format("SELECT bump({}, {}) AS r", k, v + 1);
    case 55: return fmt::format("SELECT claim({}, {}) AS c", v, *rc::gen::element(std::string("true"), std::string("false")));
    case 53:
      switch (*rc::gen::inRange(0, 5)) {
        case 0: return "SELECT id, (WITH c AS (SELECT count(*) AS n FROM t AS o WHERE o.v >= t.v) SELECT n FROM c) AS n FROM t ORDER BY id";
        case 1:
          return fmt::format("SELECT id, (SELECT count(*) FROM (SELECT 1 FROM t AS o WHERE o.v < t.v UNION ALL SELECT 2 WHERE t.id = {}) u) AS n "
                             "FROM t ORDER BY id",
                             k);
        case 2:
          return fmt::format("UPDATE t SET v = v + (WITH c AS (SELECT count(*) AS n FROM t AS o WHERE o.v > t.v) SELECT n FROM c) + 1 "
                             "WHERE id = {} RETURNING id, v",
                             k);
        case 3: return "SELECT id, generate_series(0, v % 3) AS g FROM t ORDER BY g DESC, id";
        default: return fmt::format("SELECT DISTINCT generate_series({}, v % 4) AS g FROM t ORDER BY g", v % 3);
      }
    case 52:
      if (*rc::gen::inRange(0, 2) == 0) return "TRUNCATE t";
      return fmt::format("SELECT id, COALESCE(NULLIF(v, {}), '7') AS v FROM t WHERE id = {}", v, k);
    case 51:
      if (*rc::gen::inRange(0, 3) == 0) {
        return fmt::format("DELETE FROM t USING t AS o JOIN t AS p ON p.id = o.id % 2 + 1 WHERE o.id = t.id AND p.v >= {} RETURNING t.id", v);
      }
      return fmt::format("UPDATE t SET v = t.v + COALESCE(p.v, 0) + 1 FROM t AS o LEFT JOIN t AS p ON p.id = o.id % 2 + 1 AND p.v >= {} "
                         "WHERE o.id = t.id AND o.id = {} RETURNING t.id, t.v, p.id",
                         v, k);
    case 50:
      if (*rc::gen::inRange(0, 3) == 0) {  // key-pinned: projected before its lock too
        return fmt::format("SELECT id, v, pg_try_advisory_lock(100 + v) AS l FROM t WHERE id = {} FOR {}{}", k,
                           *rc::gen::element(std::string("UPDATE"), std::string("SHARE")), *rc::gen::element(std::string(""), std::string(" NOWAIT")));
      }
      return fmt::format("SELECT id, pg_try_advisory_lock(id) AS l FROM t WHERE v >= {} {}FOR {} {}", v, k == 1 ? "ORDER BY id " : "",
                         *rc::gen::element(std::string("UPDATE"), std::string("SHARE"), std::string("NO KEY UPDATE")),
                         *rc::gen::element(std::string("SKIP LOCKED LIMIT 1"), std::string("NOWAIT"), std::string("LIMIT 1"), std::string("")));
    case 49:
      switch (*rc::gen::inRange(0, 7)) {
        case 4: return fmt::format("SELECT pg_try_advisory_xact_lock({}) AND {} IN ({}, {}) AS r", k, v, v + 1, v + 2);
        case 5: return fmt::format("SELECT pg_try_advisory_lock({}) OR {} BETWEEN {} AND {} AS r", k, v, v - 1, v + 1);
        case 6:
          return fmt::format("SELECT id FROM t WHERE {} IS NOT NULL OR v IN (SELECT o.v FROM t AS o WHERE o.id = {} FOR UPDATE) ORDER BY id",
                             v, k);
        case 0: return fmt::format("SELECT pg_try_advisory_lock({}) OR {} = {} AS r", k, v, v);
        case 1: return fmt::format("SELECT pg_try_advisory_xact_lock({}) AND {} > {} + 1 AS r", k, v, v);
        case 2: return fmt::format("SELECT pg_advisory_xact_lock({})::text AS l, {} / ({} - {}) AS z", k, v, v, v);
        default:
          return fmt::format("UPDATE t SET v = v + 1 WHERE id = {} AND (pg_try_advisory_xact_lock({}) OR {} < {} + 1) RETURNING v", k, k, v, v);
      }
    case 48:
      return fmt::format("SELECT id FROM t WHERE v IN (SELECT o.v FROM t AS o WHERE o.id <> t.id ORDER BY o.id FOR UPDATE{}) ORDER BY id",
                         v == 0 ? " SKIP LOCKED" : "");
    case 45:
      return fmt::format("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t AS o WHERE o.id = t.id % 3 + 1 FOR UPDATE SKIP LOCKED) "
                         "AND v >= {} ORDER BY id + 0 LIMIT 1 FOR UPDATE SKIP LOCKED",
                         v);
    case 46:
      return fmt::format("UPDATE t SET v = v + 1 WHERE id = {} AND EXISTS (SELECT 1 FROM t AS o WHERE o.id = t.id % 3 + 1 AND o.v >= {} FOR UPDATE) "
                         "RETURNING v",
                         k, v);
    case 47: return fmt::format("SELECT id FROM t WHERE EXISTS (SELECT 1 FROM t AS o WHERE o.v >= {} ORDER BY o.id FOR UPDATE) ORDER BY id", v);
    case 44:
      return fmt::format("INSERT INTO t VALUES ({}, {}), ({}, (SELECT count(*) FROM t AS o)) ON CONFLICT DO NOTHING RETURNING id, v", k, v,
                         k + 3);
    case 43:
      return fmt::format("INSERT INTO t VALUES ({}, {}) ON CONFLICT (id) DO UPDATE SET v = (SELECT max(o.v) FROM t AS o) + 1 RETURNING v", k, v);
    case 41: return fmt::format("SELECT pg_advisory_xact_lock({}) AS l, (SELECT sum(v) FROM t WHERE v >= {}) AS total", k, v);
    case 42:
      return fmt::format("UPDATE t SET v = (SELECT max(v) FROM t AS o) + 1 WHERE id = {} AND pg_advisory_xact_lock({})::text = '' RETURNING v",
                         k, 3 - k % 3);
    case 40:
      return fmt::format("WITH RECURSIVE job AS (SELECT id, pg_try_advisory_lock(id) AS locked FROM (SELECT id FROM t WHERE v >= {0} "
                         "ORDER BY id LIMIT 1) AS f UNION ALL (SELECT n.id, pg_try_advisory_lock(n.id) FROM (SELECT (SELECT o.id FROM t AS o "
                         "WHERE o.v >= {0} AND o.id > job.id ORDER BY o.id LIMIT 1) AS id FROM job WHERE NOT job.locked LIMIT 1) AS n)) "
                         "SELECT id FROM job WHERE locked LIMIT 1",
                         v);
    case 38:
      return fmt::format("SELECT t.id, o.v FROM t JOIN t AS o ON o.id = t.id % 3 + 1 WHERE t.v >= {} ORDER BY t.id FOR UPDATE OF t{}", v,
                         k == 2 ? " SKIP LOCKED" : "");
    case 39:
      return fmt::format("SELECT t.id, o.id FROM t LEFT JOIN t AS o ON o.id = t.id + 1 AND t.v >= {} ORDER BY t.id LIMIT 2 FOR NO KEY UPDATE OF t", v);
    case 35: return fmt::format("UPDATE t SET v = (SELECT count(*) FROM t AS o WHERE o.v >= t.v) WHERE v >= {} RETURNING id, v", v);
    case 36:
      return fmt::format("DELETE FROM t WHERE v >= {} AND id NOT IN (SELECT id FROM t AS o ORDER BY o.v DESC, o.id LIMIT 1) RETURNING id", v);
    case 37: return fmt::format("UPDATE t SET v = v + 1 WHERE id = ANY (ARRAY(SELECT id FROM t AS o WHERE o.v >= {})) RETURNING id, v", v);
    case 30: return fmt::format("SELECT pg_try_advisory_lock({})", k);
    case 31: return fmt::format("SELECT pg_advisory_xact_lock({})", k);
    case 32: return fmt::format("SELECT pg_advisory_unlock({})", k);
    case 33: return fmt::format("SELECT id FROM t WHERE v >= {} AND pg_try_advisory_lock(id) LIMIT 1", v);
    case 34: return fmt::format("SELECT id FROM t WHERE v >= {} AND pg_try_advisory_xact_lock(id) ORDER BY id LIMIT 1", v);
    case 0: return fmt::format("SELECT v FROM t WHERE id = {}", k);
    case 1: return fmt::format("SELECT v FROM t WHERE id = {} FOR UPDATE", k);
    case 2: return fmt::format("SELECT v FROM t WHERE id = {} FOR SHARE", k);
    case 3: return fmt::format("SELECT v FROM t WHERE id = {} FOR UPDATE NOWAIT", k);
    case 4: return "SELECT id FROM t ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1";
    case 5: return fmt::format("SELECT count(*) FROM t WHERE v >= {}", v);
    case 6: return fmt::format("SELECT v FROM t WHERE id = {} FOR KEY SHARE", k);
    case 7: return fmt::format("SELECT id FROM t WHERE v >= {} ORDER BY id FOR NO KEY UPDATE{}", v, k == 2 ? " NOWAIT" : "");
    case 8: return fmt::format("UPDATE t SET v = v + 1 WHERE id = {} RETURNING v", k);
    case 9: return fmt::format("UPDATE t SET v = v + 1 WHERE id = {} AND v = {}", k, v);
    case 10: return fmt::format("UPDATE t SET v = {} WHERE v < {}", v, v + 1);
    case 11: return fmt::format("INSERT INTO t VALUES ({}, {})", k, v);
    case 12: return fmt::format("INSERT INTO t VALUES ({}, {}) ON CONFLICT (id) DO UPDATE SET v = t.v + excluded.v", k, v);
    case 13: return fmt::format("DELETE FROM t WHERE id = {}", k);
    case 14:  // the upsert of a job keyed by a unique column (42P10 when v is not UNIQUE)
      return fmt::format("INSERT INTO t VALUES ({}, {}) ON CONFLICT (v) DO UPDATE SET v = t.v + 4 RETURNING id, v", k + 2, v);
    case 15: return fmt::format("UPDATE t SET v = (SELECT v FROM t WHERE id = {}) + 1 WHERE id = {} RETURNING v", 3 - k % 3, k);
    case 16:
      return fmt::format("UPDATE t SET v = v + 1 WHERE EXISTS (SELECT 1 FROM t AS o WHERE o.id = t.id + 1 AND o.v >= {})", v);
    case 17: return fmt::format("DELETE FROM t WHERE v >= {} AND NOT EXISTS (SELECT 1 FROM t AS o WHERE o.id = t.id - 1)", v);
    case 18:
      return fmt::format("WITH c AS (SELECT id FROM t WHERE v >= {} ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) "
                         "UPDATE t SET v = t.v + 1 FROM c WHERE t.id = c.id RETURNING t.id, t.v", v);
    case 19: return fmt::format("UPDATE t SET v = v + 1 WHERE id IN (SELECT id FROM t AS o WHERE o.v >= {} AND o.id = {}) RETURNING id, v", v, k);
    case 20: return fmt::format("INSERT INTO t SELECT id + 2, v + 5 FROM t WHERE id = {} ON CONFLICT DO NOTHING RETURNING id", k);
    case 21: return fmt::format("DELETE FROM t USING t AS o WHERE o.id = t.id + 1 AND o.v >= {}", v);
    case 22: return fmt::format("SELECT id, v FROM t WHERE v >= {}", v);
    case 23: return fmt::format("UPDATE t SET v = v + 1 WHERE v >= {} RETURNING id, v", v);
    case 27: return fmt::format("UPDATE t SET v = coalesce(v, 0) + 1 WHERE (v >= {}) IS NOT TRUE RETURNING id, v", v);
    case 26: return fmt::format("UPDATE t SET v = CASE WHEN v >= {} THEN NULL ELSE v + 1 END WHERE id = {} RETURNING v", v, k);
    case 28: return fmt::format("UPDATE t SET id = {} WHERE id = {} RETURNING id, v", k == 1 ? *rc::gen::element(2, 4) : k + 2, k);
    case 29: return fmt::format("UPDATE t SET id = id + 2 WHERE v = {} RETURNING id", v);
    case 25:
      if (!repeatable_read) {
        return fmt::format("WITH u AS (UPDATE t SET v = v + 1 WHERE id = {} RETURNING id, v) "
                           "SELECT t.id, t.v, u.v FROM t LEFT JOIN u ON u.id = t.id ORDER BY t.id", k);
      }
      [[fallthrough]];
    default:
      return "UPDATE t SET v = v + 10 WHERE id = (SELECT id FROM t WHERE v >= 0 ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1) "
             "RETURNING id";
  }
}

Session gen_session(bool always_a_block, bool parent, bool serializable) {
  Session s;
  const bool block = always_a_block || *rc::gen::arbitrary<bool>();
  // A third of the blocks are REPEATABLE READ or SERIALIZABLE: the snapshot step orders against
  // every commit; SERIALIZABLE ones beside each other meet serializable snapshot isolation.
  // One block in twelve is READ ONLY: its writes and row locks fail 25006, after their table locks.
  const std::string begin =
      block ? (serializable ? std::string("BEGIN ISOLATION LEVEL SERIALIZABLE")
                            : *rc::gen::element(std::string("BEGIN"), std::string("BEGIN"), std::string("BEGIN"), std::string("BEGIN"),
                                                std::string("BEGIN ISOLATION LEVEL REPEATABLE READ"),
                                                std::string("BEGIN ISOLATION LEVEL SERIALIZABLE"))) +
                  (*rc::gen::inRange(0, 12) == 0 ? " READ ONLY" : "")
            : "";
  if (block) s.push_back(begin);
  // One block in five starts with LOCK TABLE: the statements of the others then wait for
  // their table's weak lock, and read their rows only once it is granted.
  if (block && *rc::gen::inRange(0, 5) == 0) {
    s.push_back(fmt::format("LOCK TABLE t IN {} MODE{}",
                            *rc::gen::element(std::string("ROW EXCLUSIVE"), std::string("SHARE"), std::string("SHARE ROW EXCLUSIVE"),
                                              std::string("EXCLUSIVE"), std::string("ACCESS EXCLUSIVE")),
                            *rc::gen::inRange(0, 4) == 0 ? " NOWAIT" : ""));
  }
  const int statements = *rc::gen::inRange(1, 3);
  // In a third of the blocks of two statements the second runs after a SAVEPOINT, then is
  // rolled back to it or released.
  const bool savepoint = block && statements == 2 && *rc::gen::inRange(0, 3) == 0;
  for (int i = 0; i < statements; ++i) {
    if (savepoint && i == 1) s.push_back("SAVEPOINT a");
    s.push_back(gen_statement(begin.find("REPEATABLE READ") != std::string::npos || begin.find("SERIALIZABLE") != std::string::npos, parent));
  }
  if (savepoint) s.push_back(*rc::gen::element(std::string("ROLLBACK TO SAVEPOINT a"), std::string("RELEASE SAVEPOINT a")));
  if (block) s.push_back(*rc::gen::element(std::string("COMMIT"), std::string("COMMIT"), std::string("ROLLBACK")));
  // Outside a block, a third of the sessions of two statements send them as one string: the
  // server's implicit block (one transaction; an error rolls back the first).
  if (!block && s.size() == 2 && *rc::gen::inRange(0, 3) == 0) s = {s[0] + "; " + s[1]};
  // A session lock outlives its session's statements: the session lets its locks go at its
  // end (as isolationtester's connection closes), so a pooled connection keeps none. sqlock
  // takes one inside its body.
  if (std::any_of(s.begin(), s.end(), [](const std::string& st) {
        return st.find("pg_try_advisory_lock(") != std::string::npos || st.find("sqlock(") != std::string::npos;
      })) {
    s.push_back("SELECT pg_advisory_unlock_all()");
  }
  return s;
}

Tables gen_tables() {
  Tables t;
  t.parent = *rc::gen::element(false, false, true);
  t.v_unique = *rc::gen::element(false, false, true);
  t.log_trigger = *rc::gen::element(false, false, false, true);
  t.before_trigger = *rc::gen::element(false, false, false, true);
  return t;
}

std::vector<std::string> table_setup(const Tables& tables) {
  const std::string v = tables.v_unique ? "v int NOT NULL UNIQUE" : "v int NOT NULL";
  std::vector<std::string> out;
  if (!tables.parent) {
    out = {fmt::format("CREATE TABLE t (id int PRIMARY KEY, {})", v), "INSERT INTO t VALUES (1, 0), (2, 1)"};
  } else {
    out = {"CREATE TABLE parent (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)", "INSERT INTO parent VALUES (1), (2)",
           fmt::format("CREATE TABLE t (id int PRIMARY KEY, {}, parent_id int REFERENCES parent ON DELETE CASCADE)", v),
           "INSERT INTO t VALUES (1, 0, 1), (2, 1, 2)"};
  }
  out.push_back("CREATE VIEW tview AS SELECT id, v FROM t WHERE v >= 0");
  out.push_back("CREATE FUNCTION ov(k int) RETURNS int LANGUAGE sql AS $$ UPDATE t SET v = v + 1 WHERE id = k RETURNING v $$");
  out.push_back("CREATE FUNCTION ov(k text) RETURNS int LANGUAGE sql AS $$ SELECT count(*)::int FROM t WHERE v >= length(k) $$");
  out.push_back("CREATE FUNCTION bump(k int, d int) RETURNS int LANGUAGE plpgsql AS $$ DECLARE r int; BEGIN "
                "UPDATE t SET v = v + d WHERE id = k RETURNING v INTO r; IF NOT FOUND THEN RETURN -1; END IF; RETURN r; END $$");
  out.push_back("CREATE FUNCTION claim(least_v int, skip boolean) RETURNS int LANGUAGE plpgsql AS $$ DECLARE j int; BEGIN "
                "IF skip THEN SELECT id INTO j FROM t WHERE v >= least_v ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED; "
                "ELSE SELECT id INTO j FROM t WHERE v >= least_v ORDER BY id LIMIT 1 FOR UPDATE; END IF; "
                "UPDATE t SET v = v + 10 WHERE id = j; RETURN j; END $$");
  out.push_back("CREATE FUNCTION put(k int, d int) RETURNS text LANGUAGE plpgsql AS $$ DECLARE n int := 0; BEGIN LOOP n := n + 1; "
                "UPDATE t SET v = d WHERE id = k; IF FOUND THEN RETURN 'updated ' || n; END IF; "
                "BEGIN INSERT INTO t (id, v) VALUES (k, d); RETURN 'inserted ' || n; "
                "EXCEPTION WHEN unique_violation THEN IF n > 2 THEN RETURN 'gave up: ' || SQLERRM; END IF; END; END LOOP; END $$");
  out.push_back("CREATE FUNCTION poke(k int) RETURNS text LANGUAGE plpgsql AS $$ BEGIN UPDATE t SET v = v + 1 WHERE id = k; "
                "PERFORM 1 FROM t WHERE id = k + 1 FOR UPDATE NOWAIT; RETURN 'both'; "
                "EXCEPTION WHEN lock_not_available THEN RETURN 'busy'; END $$");
  out.push_back("CREATE FUNCTION take(n int, least_v int) RETURNS SETOF t LANGUAGE plpgsql AS $$ BEGIN RETURN QUERY UPDATE t SET v = v + 10 "
                "WHERE id IN (SELECT id FROM t WHERE v >= least_v ORDER BY id LIMIT n FOR UPDATE SKIP LOCKED) RETURNING *; END $$");
  out.push_back("CREATE FUNCTION xbump(k int, d int) RETURNS int LANGUAGE plpgsql AS $$ DECLARE r int; BEGIN "
                "EXECUTE 'UPDATE t SET v = v + $2 WHERE id = $1 RETURNING v' INTO r USING k, d; RETURN coalesce(r, -1); END $$");
  out.push_back("CREATE FUNCTION xtake(n int, least_v int) RETURNS SETOF t LANGUAGE plpgsql AS $$ BEGIN RETURN QUERY EXECUTE format("
                "'UPDATE %I SET v = v + 10 WHERE id IN (SELECT id FROM %I WHERE v >= $2 ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED) "
                "RETURNING *', 't', 't') USING n, least_v; END $$");
  out.push_back("CREATE FUNCTION xpair(k int, OUT id int, OUT v int) LANGUAGE plpgsql AS $$ BEGIN "
                "SELECT t.id, t.v INTO id, v FROM t WHERE t.id = k LIMIT 1 FOR SHARE; IF NOT FOUND THEN id := -k; END IF; END $$");
  out.push_back("CREATE TYPE tspec AS (id int, v int)");
  // (Its RAISE comes after its first statement on t: the server's parser waits for a table lock
  // as it first loads t's row type in a backend, which the simulation does not model.)
  out.push_back("CREATE FUNCTION xadd(specs tspec[], keep boolean DEFAULT false) RETURNS SETOF t LANGUAGE plpgsql AS $$ BEGIN "
                "IF keep THEN RETURN QUERY UPDATE t SET v = s.v FROM unnest(specs) s WHERE t.id = s.id RETURNING t.*; RETURN; END IF; "
                "RETURN QUERY INSERT INTO t (id, v) SELECT DISTINCT s.id, s.v FROM unnest(specs) s WHERE s.id IS NOT NULL "
                "ON CONFLICT (id) DO UPDATE SET v = excluded.v RETURNING *; "
                "IF array_length(specs, 1) > 3 THEN RAISE USING ERRCODE = 'check_violation', MESSAGE = 'too many: ' || array_length(specs, 1); END IF; END $$");
  out.push_back("CREATE FUNCTION sqtake(n int, least_v int) RETURNS SETOF t LANGUAGE sql AS $$ "
                "UPDATE t SET v = v + 1 WHERE v >= least_v AND id <= n RETURNING * $$");
  out.push_back("CREATE FUNCTION sqmove(a int, b int) RETURNS void LANGUAGE sql AS $$ "
                "UPDATE t SET v = v - 1 WHERE id = a; UPDATE t SET v = v + 1 WHERE id = b $$");
  out.push_back("CREATE FUNCTION sqfirst(v int) RETURNS int LANGUAGE sql AS $$ SELECT id FROM t WHERE v >= sqfirst.v ORDER BY id $$");
  out.push_back("CREATE FUNCTION sqlast(k int) RETURNS int LANGUAGE sql AS $$ DELETE FROM t WHERE id >= k RETURNING v $$");
  out.push_back("CREATE FUNCTION sqlock(k int) RETURNS boolean LANGUAGE sql STABLE AS $$ "
                "WITH x AS (SELECT pg_try_advisory_lock(k) AS got) SELECT (SELECT got FROM x) $$");
  out.push_back("CREATE FUNCTION sqbad(k int) RETURNS int LANGUAGE sql STABLE AS $$ UPDATE t SET v = 0 WHERE id = k RETURNING v $$");
  if (tables.before_trigger) {
    out.push_back("CREATE FUNCTION t_clamp() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                  "IF TG_OP = 'DELETE' THEN IF OLD.v = 3 THEN RETURN NULL; END IF; RETURN OLD; END IF; "
                  "IF NEW.v > 50 THEN NEW.v := 50; END IF; RETURN NEW; END $$");
    out.push_back("CREATE TRIGGER t_clamp BEFORE UPDATE OR DELETE ON t FOR EACH ROW EXECUTE FUNCTION t_clamp()");
  }
  if (tables.log_trigger) {
    out.push_back("CREATE TABLE log (id int, v int, op text NOT NULL)");
    out.push_back("CREATE FUNCTION t_log() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
                  "INSERT INTO log VALUES (coalesce(NEW.id, OLD.id), NEW.v, TG_OP); RETURN NULL; END $$");
    out.push_back("CREATE TRIGGER t_log AFTER INSERT OR UPDATE OR DELETE ON t FOR EACH ROW EXECUTE FUNCTION t_log()");
  }
  return out;
}

std::vector<std::string> setup_used_by(const std::vector<std::string>& setup, const std::vector<std::vector<std::string>>& sessions) {
  const std::string_view create = "CREATE FUNCTION ";
  std::vector<std::string> out;
  for (const std::string& st : setup) {
    if (st.starts_with("CREATE VIEW tview ") && !std::ranges::any_of(sessions, [&](const std::vector<std::string>& s) {
          return std::ranges::any_of(s, [&](const std::string& statement) { return statement.find("tview") != std::string::npos; });
        })) {
      continue;
    }
    if (st.starts_with(create) && st.find(" RETURNS trigger ") == std::string::npos) {
      const std::string call = st.substr(create.size(), st.find('(') - create.size() + 1);  // "name("
      const bool called = std::ranges::any_of(sessions, [&](const std::vector<std::string>& s) {
        return std::ranges::any_of(s, [&](const std::string& statement) { return statement.find(call) != std::string::npos; });
      });
      if (!called) continue;
    }
    out.push_back(st);
  }
  return out;
}

std::vector<std::string> table_teardown(const Tables& tables) {
  std::vector<std::string> out = {"DROP VIEW IF EXISTS tview", "DROP FUNCTION IF EXISTS ov(int)", "DROP FUNCTION IF EXISTS ov(text)", "DROP FUNCTION bump(int, int)", "DROP FUNCTION claim(int, boolean)", "DROP FUNCTION put(int, int)",
                                  "DROP FUNCTION poke(int)", "DROP FUNCTION take(int, int)", "DROP FUNCTION xbump(int, int)",
                                  "DROP FUNCTION xtake(int, int)", "DROP FUNCTION xpair(int)", "DROP FUNCTION xadd(tspec[], boolean)",
                                  "DROP FUNCTION sqtake(int, int)", "DROP FUNCTION sqmove(int, int)", "DROP FUNCTION sqfirst(int)",
                                  "DROP FUNCTION sqlast(int)", "DROP FUNCTION sqbad(int)", "DROP FUNCTION sqlock(int)",
                                  "DROP TABLE t", "DROP TYPE tspec"};
  if (tables.parent) out.emplace_back("DROP TABLE parent");
  if (tables.before_trigger) out.emplace_back("DROP FUNCTION t_clamp()");
  if (tables.log_trigger) {
    out.emplace_back("DROP TABLE log");
    out.emplace_back("DROP FUNCTION t_log()");
  }
  return out;
}

std::string final_query(const Tables& tables) {
  const std::string log = tables.log_trigger ? " UNION ALL SELECT 'log ' || op, id, v, NULL FROM log" : "";
  if (!tables.parent) {
    if (tables.log_trigger) return "SELECT 't' AS tab, id, v, NULL AS parent_id FROM t" + log + " ORDER BY 1 DESC, 2, 3";
    return "SELECT id, v FROM t ORDER BY id";
  }
  return "SELECT 't' AS tab, id, v, parent_id FROM t UNION ALL SELECT 'parent', id, n, NULL FROM parent" + log + " ORDER BY 1 DESC, 2, 3";
}

}  // namespace lockstep::sql_programs
