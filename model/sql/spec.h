// model/sql/spec.h: PostgreSQL's isolation test format (src/test/isolation's .spec files)
// as a scenario of SQL sessions, read strictly.
//
// A spec has `setup { SQL }` and `teardown { SQL }` blocks, then `session NAME` blocks, each
// with an optional `setup`, its `step NAME { SQL }` lines and an optional `teardown`, then
// `permutation STEP ...` lines (a step may carry blocker markers in parentheses, kept as
// written). `#` starts a comment. Names are identifiers or "quoted". SQL is the text between
// `{` and the next `}`, without its leading and trailing blanks, as isolationtester reads
// it. lockstep adds two top-level forms:
//   check "NAME" { SELECT <one boolean> }   an invariant, run after every execution
//   expect pass | expect violation "NAME"   the expected verdict (any verdict name works)
//   fault NAME                               a fault of the sql system switched on
//                                            (backend_terminated: model/systems/sql_spec.h)
// Every SQL text is parsed (model/sql/parse.h) when the spec is read for the simulation: an
// error or a construct outside the subset is an InputError naming the file, its line and
// column. Read for a real server (SqlText::as_written), blocks are kept as text: the server
// is the judge of its SQL. Blocker markers are checked either way.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/sql/plan.h"
#include "lockstep/model/verdict.h"

namespace lockstep::sql {

// One block of SQL as written, with its parsed statements.
struct SqlBlock {
  std::string text;
  std::vector<Statement> statements;
  int line = 0;  // of its first character, in the spec file
};

struct SpecStep {
  std::string name;
  SqlBlock sql;
};

struct SpecSession {
  std::string name;
  std::vector<SqlBlock> setup;
  std::vector<SpecStep> steps;
  std::vector<SqlBlock> teardown;
};

// A blocker annotation of a permutation step (isolationtester's, PostgreSQL 14 on): `(*)`
// shows the step waiting once; `(s1a)` keeps it shown waiting while step s1a runs;
// `(s1a notices N)` until s1a's session has sent N more notices.
struct Blocker {
  enum class Kind { once, other_step, notices } kind = Kind::once;
  std::string step;  // other_step, notices
  int notices = 0;   // notices
};

struct PermutationStep {
  std::string step;
  std::vector<std::string> markers;  // "(s1a)", "(*)": blocker annotations, as written
  std::vector<Blocker> blockers;     // the same, read
};

struct SpecCheck {
  std::string name;
  SqlBlock sql;  // one SELECT of one boolean column
};

struct Spec {
  std::string file;
  std::vector<SqlBlock> setup;
  std::vector<SqlBlock> teardown;
  std::vector<SpecSession> sessions;
  std::vector<std::vector<PermutationStep>> permutations;
  std::vector<SpecCheck> checks;
  std::optional<Expectation> expect;
  std::vector<std::string> faults;  // `fault NAME` lines, as written
  std::vector<int> fault_lines;     // the line of each

  // The session and index of a step, by name; nullptr when none has it.
  const SpecStep* find_step(std::string_view name, int* session = nullptr) const;
};

// How a spec's SQL blocks are read: parsed into lockstep's subset (the simulation runs
// them), or kept as written for a real server (SqlBlock::statements stays empty).
enum class SqlText { parsed, as_written };

// Throws InputError "<file>:<line>:<column>: <message>".
Spec parse_spec(std::string_view text, const std::string& file, SqlText sql = SqlText::parsed);
Spec load_spec(const std::string& path, SqlText sql = SqlText::parsed);

}  // namespace lockstep::sql
