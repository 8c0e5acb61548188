// The script language: operations, operands, checks, and their error messages.
#include "lockstep/model/systems/script_program.h"

#include <gtest/gtest.h>

#include "test_support.h"

namespace lockstep {
namespace {

using testing::check;
using testing::scenario_from_json;
using testing::script_scenario;

std::string error_of(const nlohmann::json& doc) {
  try {
    scenario_from_json(doc);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ScriptParser, OperationErrorsPointAtTheOperation) {
  EXPECT_EQ(error_of(script_scenario({{"a", {"read x r", "frob y"}}})),
            "<test>: /actors/0/ops/1: unknown operation \"frob\" (expected read, write, cas, lock, unlock, rlock, "
            "runlock, lockfor, trylock, unlockif, sleep, clock, choose, observe, fwrite, fread, fsync, frename, crash, goto, jz, jnz, "
            "hot, cold or sql)");
  EXPECT_EQ(error_of(script_scenario({{"a", {"read x"}}})), "<test>: /actors/0/ops/0: \"read x\": expected \"read VAR REG\"");
  EXPECT_EQ(error_of(script_scenario({{"a", {"choose r 0"}}})),
            "<test>: /actors/0/ops/0: \"choose r 0\": expected a number of values from 1 to 16");
  EXPECT_EQ(error_of(script_scenario({{"a", {"write x r*2"}}})),
            "<test>: /actors/0/ops/0: bad operand \"r*2\": expected an integer, a register, or register+N / register-N");
  EXPECT_EQ(error_of(script_scenario({{"a", {"sleep -3"}}})),
            "<test>: /actors/0/ops/0: bad duration \"-3\": expected milliseconds, a non-negative integer");
  EXPECT_EQ(error_of(script_scenario({{"a", {"lock x", "read x r"}}})), "<test>: /actors/0/ops/1: \"x\" is a mutex, not a variable");
}

TEST(ScriptParser, ActorsAndChecksAreValidated) {
  EXPECT_EQ(error_of(script_scenario({{"a", {}}, {"a", {}}})), "<test>: /actors/1/name: duplicate actor name \"a\"");
  EXPECT_EQ(error_of(script_scenario({{"a", {"read x r"}}}, {{"check", {"y == 1"}}})),
            "<test>: /config/check/0: \"y == 1\": unknown variable \"y\"");
  EXPECT_EQ(error_of(script_scenario({{"a", {"read x r"}}}, {{"check", {"a.q == 1"}}})),
            "<test>: /config/check/0: \"a.q == 1\": actor \"a\" has no register \"q\"");
  EXPECT_EQ(error_of(script_scenario({{"a", {"read x r"}}}, {{"check", {"x ~ 1"}}})),
            "<test>: /config/check/0: \"x ~ 1\": unknown comparison \"~\"");
  EXPECT_EQ(error_of(script_scenario({{"a", {"read x r"}}}, {{"vars", {{"x", "zero"}}}})),
            "<test>: /config/vars/x: expected an integer, got string \"zero\"");
}

TEST(ScriptParser, SqlOutsideTheSubsetIsRefusedWhenLoaded) {
  EXPECT_EQ(error_of(script_scenario({{"a", {"sql r EXPLAIN SELECT 1"}}})),
            "<test>: /actors/0/ops/0: \"sql r EXPLAIN SELECT 1\": EXPLAIN is not in "
            "lockstep's SQL subset (docs/sql.md), at position 1 (SQLSTATE 0A000)");
  EXPECT_EQ(error_of(script_scenario({{"a", {"sql r SELECT 1; SELECT 2"}}})),
            "<test>: /actors/0/ops/0: \"sql r SELECT 1; SELECT 2\": expected one SQL statement");
  EXPECT_EQ(error_of(script_scenario({{"a", {"sql r SELECT $q"}}})), "(no error)");  // $q: a register, made on first use
  EXPECT_EQ(error_of(script_scenario({{"a", {"sql - SELECT 1"}}}, {{"sql_setup", {"CREATE TABLE t (id serial PRIMARY KEY) x"}}})),
            "<test>: /config/sql_setup/0: \"CREATE TABLE t (id serial PRIMARY KEY) x\": syntax error at or near \"x\", at "
            "position 40 (SQLSTATE 42601)");
}

// The sql op: registers as parameters, the first value or the row count into a register,
// -1 for an error; sql_check queries judge the final database.
TEST(ScriptSemantics, SqlOpsRunOnTheSimulatedServer) {
  auto doc = script_scenario({{"a", {"write x 5", "read x k", "sql got INSERT INTO t VALUES ($k, $k + 1) RETURNING v",
                                     "sql n UPDATE t SET v = v + 1 WHERE id >= 0", "sql dup INSERT INTO t VALUES (5, 0)",
                                     "sql ok SELECT v = 7 FROM t WHERE id = $k"}}},
                             {{"sql_setup", {"CREATE TABLE t (id int PRIMARY KEY, v int NOT NULL)", "INSERT INTO t VALUES (1, 0)"}},
                              {"check", {"a.got == 6", "a.n == 2", "a.dup == -1", "a.ok == 1"}},
                              {"sql_check", {"SELECT sum(v) = 8 FROM t"}}});
  const auto report = check(scenario_from_json(doc));
  EXPECT_EQ(report.result.verdict, Verdict::pass) << (report.result.first_failure ? report.result.first_failure->result.message : "");
  doc["config"]["sql_check"] = {"SELECT sum(v) = 9 FROM t"};
  const auto failed = check(scenario_from_json(doc));
  ASSERT_EQ(failed.result.verdict, Verdict::violation);
  EXPECT_EQ(failed.result.first_failure->result.message, "sql_check \"SELECT sum(v) = 9 FROM t\" is not true: f");
}

TEST(ScriptSemantics, RegistersOperandsAndInitialValues) {
  auto doc = script_scenario({{"a", {"read x r", "write y r+5", "write z r-1", "cas x 3 7 ok", "read x after"}}},
                             {{"vars", {{"x", 3}}}, {"check", {"y == 8", "z == 2", "a.ok == 1", "a.after == 7", "x >= 7"}}});
  EXPECT_EQ(check(scenario_from_json(doc)).result.verdict, Verdict::pass);
}

TEST(ScriptSemantics, UnlockIfEndsOnlyATakenTry) {
  // b's try fails whenever a holds m: its unlockif must then leave m alone (unlocking a
  // mutex one does not hold is a model error), and a taken try's unlockif must free m for a.
  auto doc = script_scenario({{"a", {"lock m", "write x 1", "unlock m", "lock m", "unlock m"}},
                              {"b", {"trylock m t", "write y 1", "unlockif m t"}}},
                             {{"check", {"y == 1"}}});
  const auto report = check(scenario_from_json(doc), {.settings = {.strategy = "dfs"}});
  EXPECT_EQ(report.result.verdict, Verdict::pass);
  EXPECT_TRUE(report.result.exhaustive);
  EXPECT_GT(report.result.stats.executions, 1u);
}

TEST(ScriptSemantics, AFailingCheckNamesTheValue) {
  auto doc = script_scenario({{"a", {"write x 4"}}}, {{"check", {"x < 4"}}});
  const auto report = check(scenario_from_json(doc));
  ASSERT_EQ(report.result.verdict, Verdict::violation);
  EXPECT_EQ(report.result.first_failure->result.message, "check \"x < 4\" failed: x is 4");
}

TEST(ScriptSemantics, EventLogShowsOperationsAndResults) {
  auto doc = script_scenario({{"a", {"lock m", "cas x 1 2 ok", "unlock m", "sleep 3"}}}, {{"check", {"x == 9"}}});
  const auto report = check(scenario_from_json(doc));
  ASSERT_TRUE(report.trace.has_value());
  std::vector<std::string> lines;
  for (const auto& e : report.trace->events) lines.push_back(e.op + " -> " + e.result);
  EXPECT_EQ(lines, (std::vector<std::string>{"lock m -> ok", "cas x 2 -> failed (x is 0, not 1)", "unlock m -> ", "sleep 3 -> woke"}));
}

}  // namespace
}  // namespace lockstep
