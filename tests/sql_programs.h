// tests/sql_programs.h: random SQL programs over one small table `t (id, v)`, for the
// properties that compare dpor with dfs (sql_sim_test) and the simulation with a real
// server (real_sql_differential_test): one generator, so both draw the same programs.
#pragma once

#include <string>
#include <vector>

namespace lockstep::sql_programs {

using Session = std::vector<std::string>;  // statements, in order

// A statement on rows 1 and 2 (3 does not exist), mostly row 1, so that sessions meet;
// writes seven times in ten.
// (`repeatable_read`: inside a REPEATABLE READ block, where a data-modifying WITH is refused.)
std::string gen_statement(bool repeatable_read = false);

// A session: one or two statements, alone (each its own transaction) or inside BEGIN (READ
// COMMITTED or REPEATABLE READ) and a COMMIT or ROLLBACK, the second statement sometimes
// after a SAVEPOINT rolled back to or released, a block sometimes opened by LOCK TABLE; with
// `always_a_block`, inside one.
Session gen_session(bool always_a_block = false);

// The table's setup: `t (id int PRIMARY KEY, v int NOT NULL [UNIQUE])` with rows (1, 0), (2, 1).
std::vector<std::string> table_setup(bool v_unique);

}  // namespace lockstep::sql_programs
