// PostgreSQL's isolation spec format (model/sql/spec.h): PostgreSQL's own specs read as
// written, lockstep's check and expect lines, and every malformed form named with its line
// and column.
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "lockstep/model/json_cursor.h"
#include "lockstep/model/sql/spec.h"
#include "test_paths.h"

namespace lockstep::sql {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_spec(text, "t.spec");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(SqlSpec, PostgresSpecsReadAsWritten) {
  const Spec s = load_spec(std::string(lockstep_source_dir()) + "/tests/pg-isolation/skip-locked.spec");
  ASSERT_EQ(s.setup.size(), 1u);
  EXPECT_EQ(s.setup[0].statements.size(), 2u);  // CREATE TABLE, INSERT
  EXPECT_EQ(s.setup[0].line, 5);
  ASSERT_EQ(s.teardown.size(), 1u);
  EXPECT_EQ(s.teardown[0].text, "DROP TABLE queue;");
  ASSERT_EQ(s.sessions.size(), 2u);
  EXPECT_EQ(s.sessions[0].name, "s1");
  ASSERT_EQ(s.sessions[0].setup.size(), 1u);
  EXPECT_EQ(s.sessions[0].setup[0].text, "BEGIN;");
  ASSERT_EQ(s.sessions[0].steps.size(), 3u);
  EXPECT_EQ(s.sessions[0].steps[0].name, "s1a");
  EXPECT_EQ(s.sessions[0].steps[0].sql.text, "SELECT * FROM queue ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1;");
  EXPECT_TRUE(s.permutations.empty());  // every interleaving
  int session = -1;
  ASSERT_NE(s.find_step("s2c", &session), nullptr);
  EXPECT_EQ(session, 1);
  EXPECT_FALSE(s.expect.has_value());

  const Spec conflict = load_spec(std::string(lockstep_source_dir()) + "/tests/pg-isolation/insert-conflict-do-nothing.spec");
  ASSERT_EQ(conflict.permutations.size(), 2u);
  ASSERT_EQ(conflict.permutations[1].size(), 5u);
  EXPECT_EQ(conflict.permutations[1][2].step, "a1");
  for (const char* name : {"nowait", "nowait-2", "skip-locked-2"}) {
    EXPECT_NO_THROW(load_spec(fmt::format("{}/tests/pg-isolation/{}.spec", lockstep_source_dir(), name))) << name;
  }
}

TEST(SqlSpec, ChecksExpectationsQuotedNamesAndMarkers) {
  const Spec s = parse_spec(R"(
setup { CREATE TABLE bookings (room int, who text); }
session "first one"
step "book a" { INSERT INTO bookings VALUES (1, 'a'); }
session s2
step b { INSERT INTO bookings VALUES (1, 'b'); }
permutation "book a" b(*)
check "no_double_booking" { SELECT count(*) <= 1 FROM bookings WHERE room = 1 }
expect violation "no_double_booking"
)",
                            "t.spec");
  EXPECT_EQ(s.sessions[0].name, "first one");
  ASSERT_EQ(s.permutations.size(), 1u);
  EXPECT_EQ(s.permutations[0][1].markers, std::vector<std::string>{"(*)"});
  ASSERT_EQ(s.checks.size(), 1u);
  EXPECT_EQ(s.checks[0].name, "no_double_booking");
  ASSERT_TRUE(s.expect.has_value());
  EXPECT_EQ(s.expect->verdict, Verdict::violation);
  EXPECT_EQ(s.expect->violation, "no_double_booking");
  const Spec pass = parse_spec("session a\nstep x { SELECT 1; }\nexpect pass\n", "t.spec");
  EXPECT_EQ(pass.expect->verdict, Verdict::pass);
}

// A step the server answers with an error of its own is no bad input: it runs, and prints the
// error as isolationtester does; a syntax error or a refusal stops the file.
TEST(SqlSpec, AStepTheServerWouldFailLoadsAndFailsWhenRun) {
  EXPECT_EQ(error_of("session a\nstep x { SELECT count(*) FROM t FOR UPDATE; }\n"), "");
  EXPECT_EQ(error_of("session a\nstep x { SELECT v FROM t GROUP BY v FOR UPDATE; }\n"), "");
  EXPECT_EQ(error_of("setup { SELECT count(*) FROM t FOR UPDATE; }\nsession a\nstep x { SELECT 1; }\n"),
            "t.spec:1:9: FOR UPDATE is not allowed with aggregate functions (SQLSTATE 0A000)");
}

TEST(SqlSpec, MalformedSpecsNameTheLineAndColumn) {
  // SQL outside the subset: the construct, where it is in the file, and the SQLSTATE.
  EXPECT_EQ(error_of("session a\nstep x {\n  SELECT 1;\n  SELECT 1 GROUP BY ROLLUP (1 + 1); }\n"),
            "t.spec:4:31: an expression other than a column in GROUPING SETS, ROLLUP or CUBE is not in lockstep's SQL subset (docs/sql.md) (SQLSTATE 0A000)");
  EXPECT_EQ(error_of("session a\nstep x { SELEC 1; }\n"), "t.spec:2:10: syntax error at or near \"SELEC\" (SQLSTATE 42601)");
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\npermutation y\n"), "t.spec:3:13: no step is named \"y\"");
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\nsession b\nstep x { SELECT 2; }\n"), "t.spec:4:6: a second step named \"x\"");
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1;\n"), "t.spec:2:10: a SQL block is not closed with '}'");
  EXPECT_EQ(error_of("setup { SELECT 1; }\n"), "t.spec:2:1: a spec needs at least one session");
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\nexpect violation \"nope\"\n"),
            "t.spec:3:1: expect violation \"nope\": no check has that name");
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\ncheck c { SELECT 1, 2 }\n"),
            "t.spec:3:1: check \"c\" must be one SELECT of one boolean column");
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\nexpect sometimes\n"),
            "t.spec:3:8: unknown verdict \"sometimes\" (expected one of: pass, violation, deadlock, step_bound, model_error, "
            "incomplete, livelock, liveness)");
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\n@\n"), "t.spec:3:1: unexpected character '@'");
  // A '}' inside a string literal ends the block, as isolationtester reads it: the message says so.
  const std::string brace = error_of("session a\nstep x { SELECT '{}'::jsonb; }\n");
  EXPECT_TRUE(brace.starts_with("t.spec:2:20: unexpected character ''' (the SQL block before it ended at a '}' inside a string literal"))
      << brace;
}

TEST(SqlSpec, BlockerMarkersAreRead) {
  const Spec s = parse_spec("session a\nstep x { SELECT 1; }\nstep y { SELECT 2; }\nsession b\nstep z { SELECT 3; }\n"
                            "permutation x(*) z(x, y notices 2) y\n",
                            "t.spec");
  ASSERT_EQ(s.permutations.size(), 1u);
  const auto& p = s.permutations[0];
  ASSERT_EQ(p[0].blockers.size(), 1u);
  EXPECT_EQ(p[0].blockers[0].kind, Blocker::Kind::once);
  ASSERT_EQ(p[1].blockers.size(), 2u);
  EXPECT_EQ(p[1].blockers[0].kind, Blocker::Kind::other_step);
  EXPECT_EQ(p[1].blockers[0].step, "x");
  EXPECT_EQ(p[1].blockers[1].kind, Blocker::Kind::notices);
  EXPECT_EQ(p[1].blockers[1].step, "y");
  EXPECT_EQ(p[1].blockers[1].notices, 2);
  EXPECT_TRUE(p[2].blockers.empty());
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\npermutation x(w)\n"), "t.spec:3:15: no step is named \"w\"");
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\npermutation x(x notices)\n"),
            "t.spec:3:15: a blocker is *, a step's name or \"STEP notices N\", got \"x notices\"");
}

// Inputs a fuzzer found crashing, hanging or failing inside (issue 60): each is bad input,
// named with its place.
TEST(SqlSpec, HardInputsAreBadInputWithTheirPlace) {
  // Nesting past the reader's bound: 224 scalar subqueries, a sum of 532 terms, NOT 569 deep.
  std::string nested = "1";
  for (int i = 0; i < 224; ++i) nested = "(SELECT " + nested + ")";
  EXPECT_NE(error_of("session a\nstep x { SELECT " + nested + "; }\n").find("nesting deeper than 128 levels"), std::string::npos);
  std::string sum = "1";
  for (int i = 0; i < 531; ++i) sum += " + 1";
  EXPECT_NE(error_of("session a\nstep x { SELECT " + sum + "; }\n").find("nesting deeper than 128 levels"), std::string::npos);
  std::string nots = "true";
  for (int i = 0; i < 569; ++i) nots = "NOT " + nots;
  EXPECT_NE(error_of("session a\nstep x { SELECT " + nots + "; }\n").find("nesting deeper than 128 levels"), std::string::npos);
  // ... inside a WITH RECURSIVE query, whose self-references are counted before it is read
  // (a stack overflow under ASan: fuzz_specs_short, 2026-12-02).
  std::string terms = "1";
  for (int i = 0; i < 3000; ++i) terms += " + 1";
  EXPECT_NE(error_of("session a\nstep x { WITH RECURSIVE r AS (SELECT 1 AS n FROM (SELECT 1 LIMIT " + terms +
                     ") AS f UNION ALL SELECT n FROM r WHERE n < 3) SELECT n FROM r; }\n")
                .find("nesting deeper than 128 levels"),
            std::string::npos);
  // A byte that is not UTF-8, anywhere: its line and column.
  EXPECT_EQ(error_of("session a\nstep x { SELECT '\xff'; }\n"), "t.spec:2:18: invalid UTF-8 (byte 0xFF): a spec is UTF-8 text");
  EXPECT_EQ(error_of("# caf\xc3\n"), "t.spec:1:6: invalid UTF-8 (byte 0xC3): a spec is UTF-8 text");
  // A blocker is a step of the same permutation, of another session.
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\nstep y { SELECT 2; }\npermutation x(y notices 1) y\n"),
            "t.spec:4:15: permutation step \"x\" cannot block on its own session's step \"y\"");
  EXPECT_EQ(error_of("session a\nstep x { SELECT 1; }\nsession b\nstep z { SELECT 2; }\npermutation x(z)\n"),
            "t.spec:5:15: undefined blocking step \"z\" referenced in permutation step \"x\" (not in this permutation)");
  // More sessions than actors.
  std::string many;
  for (int i = 0; i < 70; ++i) many += fmt::format("session s{}\nstep x{} {{ SELECT 1; }}\n", i, i);
  EXPECT_EQ(error_of(many), "t.spec:127:1: 70 sessions; at most 63 are supported (one actor each, and isolationtester's)");
}

TEST(SqlSpec, ForARealServerTheSqlIsKeptAsWritten) {
  // The subset does not judge what a real server runs: the text is kept, nothing parsed.
  const std::string text = "session a\nstep x { EXPLAIN SELECT 1; }\n";
  EXPECT_NE(error_of(text), "");
  const Spec s = parse_spec(text, "t.spec", SqlText::as_written);
  EXPECT_EQ(s.sessions[0].steps[0].sql.text, "EXPLAIN SELECT 1;");
  EXPECT_TRUE(s.sessions[0].steps[0].sql.statements.empty());
}

}  // namespace
}  // namespace lockstep::sql
