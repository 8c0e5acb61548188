// tests/sql_programs.h: random SQL programs over one small table `t (id, v)`, for the
// properties that compare dpor with dfs (sql_sim_test) and the simulation with a real
// server (real_sql_differential_test): one generator, so both draw the same programs.
#pragma once

#include <string>
#include <vector>

namespace lockstep::sql_programs {

using Session = std::vector<std::string>;  // statements, in order

// The tables a program runs on: `t`, and with `parent`, the table `parent` that t's rows
// reference (ON DELETE CASCADE).
struct Tables {
  bool v_unique = false;
  bool parent = false;
  bool log_trigger = false;  // an AFTER ROW trigger on t writes each change to `log`
  bool before_trigger = false;  // BEFORE ROW triggers on t: an UPDATE's v kept at most 50, a row of v = 3 never deleted
};

// A statement on rows 1 and 2 (3 does not exist), mostly row 1, so that sessions meet;
// writes seven times in ten; with `parent`, a statement in four on the parent table or t's
// reference to it (the foreign key's checks and cascade).
// (`repeatable_read`: inside a REPEATABLE READ block, where a data-modifying WITH is refused.)
std::string gen_statement(bool repeatable_read = false, bool parent = false);

// A session: one or two statements, alone (each its own transaction) or inside BEGIN (READ
// COMMITTED, REPEATABLE READ or SERIALIZABLE) and a COMMIT or ROLLBACK, the second statement
// sometimes after a SAVEPOINT rolled back to or released, a block sometimes opened by LOCK
// TABLE; with `always_a_block`, inside one; with `serializable`, every block SERIALIZABLE
// (programs whose transactions meet serializable snapshot isolation's checks).
Session gen_session(bool always_a_block = false, bool parent = false, bool serializable = false);

// Which tables: v UNIQUE in a third of the programs, the parent table in a third, t's log
// trigger in a quarter.
Tables gen_tables();

// The tables' setup: `t (id int PRIMARY KEY, v int NOT NULL [UNIQUE])` with rows (1, 0),
// (2, 1); with the parent table, `parent (id int PRIMARY KEY, n int NOT NULL DEFAULT 0)` with
// rows 1 and 2, and t's column `parent_id` referencing it (row 1 references 1, row 2 2); the
// plpgsql functions bump(k, d) and claim(least_v, skip); with the log trigger, `log (id, v,
// op)` and t's AFTER INSERT OR UPDATE OR DELETE trigger t_log.
std::vector<std::string> table_setup(const Tables& tables);
// `setup` without the CREATE FUNCTION of a function no statement of `sessions` calls (a
// function that is never called cannot change an outcome; creating it is a third of an
// execution's cost in the dfs-oracle properties, which run the setup every execution). A
// name found anywhere in a statement's text counts as a call (`take(` also keeps sqtake).
std::vector<std::string> setup_used_by(const std::vector<std::string>& setup, const std::vector<std::vector<std::string>>& sessions);
// Their teardown, and one query of every row of them, in order.
std::vector<std::string> table_teardown(const Tables& tables);
std::string final_query(const Tables& tables);

}  // namespace lockstep::sql_programs
