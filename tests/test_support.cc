#include "test_support.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "lockstep/cli/commands.h"
#include "lockstep/real/task_threads.h"
#include "test_paths.h"

namespace lockstep::testing {

Scenario scenario_from_text(const std::string& json_text) {
  return parse_scenario(nlohmann::json::parse(json_text), "<test>");
}

Scenario scenario_from_json(const nlohmann::json& document) { return parse_scenario(document, "<test>"); }

CliRun run_cli_in_process(std::vector<std::string> args) {
  args.insert(args.begin(), "lockstep");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  std::ostringstream out, err;
  const int code = cli::run_cli(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

int expect_every_scenario_as_expected(const std::string& dir) {
  int scenarios = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".json") continue;
    const Scenario s = load_scenario(entry.path().string());
    const auto report = check(s);
    EXPECT_TRUE(report.as_expected) << entry.path() << ": " << verdict_name(report.result.verdict) << " "
                                    << (report.result.first_failure ? report.result.first_failure->result.message : "");
    if (s.expect.verdict == Verdict::pass) {
      EXPECT_TRUE(report.result.exhaustive) << entry.path();
    }
    ++scenarios;
  }
  return scenarios;
}

nlohmann::json script_scenario(const std::vector<std::pair<std::string, std::vector<std::string>>>& actors,
                               const nlohmann::json& config, const nlohmann::json& explore) {
  nlohmann::json doc = {{"format", "lockstep-scenario/1"}, {"name", "test"}, {"system", "script"}};
  for (const auto& [name, ops] : actors) doc["actors"].push_back({{"name", name}, {"ops", ops}});
  if (!config.is_null()) doc["config"] = config;
  if (!explore.is_null()) doc["explore"] = explore;
  return doc;
}

sim::CheckReport check(const Scenario& scenario, const sim::CheckOverrides& overrides) {
  sim::CheckOptions options;
  options.overrides = overrides;
  std::optional<real::TaskThreads> threads;
  const int jobs = overrides.settings.jobs.value_or(1);
  if (jobs > 1) options.spawn = threads.emplace(jobs).spawner();
  return sim::check_scenario(scenario, options);
}

std::string shown(const pg::Result<pg::Rows>& r) {
  if (!r.ok()) return fmt::format("ERROR {}: {}", r.error().sqlstate, r.error().message);
  std::string rows;
  for (const auto& row : r.value().rows) {
    std::string cells;
    for (const auto& v : row) cells += (cells.empty() ? "" : ",") + v.value_or("NULL");
    rows += (rows.empty() ? "" : ";") + cells;
  }
  return rows.empty() ? r.value().tag : fmt::format("{} [{}]", r.value().tag, rows);
}

namespace {
const std::vector<const char*> kSettingStatements = {
    "SET lock_timeout = 50",
    "BEGIN",
    "SET LOCAL lock_timeout = '1s'",
    "SELECT current_setting('lock_timeout')",
    "COMMIT",
    "SELECT current_setting('lock_timeout')",
    "BEGIN",
    "SET lock_timeout = '2min'",
    "SELECT set_config('statement_timeout', '1500', true)",
    "SELECT current_setting('lock_timeout'), current_setting('statement_timeout')",
    "ROLLBACK",
    "SELECT current_setting('lock_timeout'), current_setting('statement_timeout')",
    "SET LOCAL lock_timeout = 10",
    "SELECT current_setting('lock_timeout')",
    "SET statement_timeout = 20",
    "SELECT pg_sleep(1)",
    "SET statement_timeout = 0",
    "SELECT pg_sleep('0.01')",
};

}  // namespace

std::string run_setting_statements(pg::Connection& c) {
  std::vector<std::string> got;
  auto status = [&](const pg::Status& st) { got.push_back(st.ok() ? "OK" : "ERROR " + st.error().sqlstate + ": " + st.error().message); };
  for (const char* sql : kSettingStatements) got.push_back(shown(c.exec(sql)));
  got.push_back(fmt::format("{} warning(s)", c.take_warnings().size()));
  status(c.prepare("p", "SELECT $1::int + 1 AS next"));
  got.push_back(shown(c.exec_prepared("p", {"41"})));
  status(c.prepare("p", "SELECT 2"));
  got.push_back(shown(c.exec_prepared("q")));
  got.push_back(shown(c.exec_prepared("p", {})));
  status(c.prepare("m", "SELECT 1; SELECT 2"));
  return fmt::format("{}", fmt::join(got, " | "));
}

namespace {
// Each statement on session a or b in turn: "a: RESULT | b: RESULT | ...".
std::string run_turns(pg::Connection& a, pg::Connection& b, const std::vector<std::pair<char, const char*>>& turns) {
  std::vector<std::string> got;
  for (const auto& [who, sql] : turns) got.push_back(fmt::format("{}: {}", who, shown((who == 'a' ? a : b).exec(sql))));
  return fmt::format("{}", fmt::join(got, " | "));
}
}  // namespace

const std::vector<std::string> kRepeatableReadSetup = {"CREATE TABLE rr_t (id int PRIMARY KEY, v int NOT NULL)",
                                                       "INSERT INTO rr_t VALUES (1, 0), (3, 0)"};

std::string run_repeatable_read_turns(pg::Connection& a, pg::Connection& b) {
  const std::vector<std::pair<char, const char*>> turns = {
      // A snapshot at the first statement, not at BEGIN.
      {'a', "BEGIN ISOLATION LEVEL REPEATABLE READ"},
      {'b', "UPDATE rr_t SET v = v + 1 WHERE id = 1"},
      {'a', "SELECT v FROM rr_t WHERE id = 1"},
      {'b', "UPDATE rr_t SET v = v + 1 WHERE id = 1"},
      {'b', "INSERT INTO rr_t VALUES (2, 0)"},
      {'a', "SELECT id, v FROM rr_t ORDER BY id"},
      {'a', "UPDATE rr_t SET v = 10 WHERE id = 3 RETURNING v"},
      {'a', "UPDATE rr_t SET v = 10 WHERE id = 1"},
      {'a', "SELECT 1"},
      {'a', "ROLLBACK"},
      // ON CONFLICT on a row the snapshot does not see; a plain INSERT's unique check.
      {'a', "START TRANSACTION ISOLATION LEVEL REPEATABLE READ"},
      {'a', "SELECT count(*) FROM rr_t"},
      {'b', "INSERT INTO rr_t VALUES (4, 0)"},
      {'a', "INSERT INTO rr_t VALUES (4, 1) ON CONFLICT DO NOTHING"},
      {'a', "ROLLBACK"},
      {'a', "BEGIN ISOLATION LEVEL REPEATABLE READ"},
      {'a', "SELECT count(*) FROM rr_t"},
      {'b', "INSERT INTO rr_t VALUES (5, 0)"},
      {'a', "INSERT INTO rr_t VALUES (5, 1)"},
      {'a', "ROLLBACK"},
      // A row deleted since the snapshot; one the transaction locked first.
      {'a', "BEGIN ISOLATION LEVEL REPEATABLE READ"},
      {'a', "SELECT v FROM rr_t WHERE id = 2 FOR UPDATE"},
      {'b', "DELETE FROM rr_t WHERE id = 3"},
      {'a', "DELETE FROM rr_t WHERE id = 3"},
      {'a', "COMMIT"},
      {'a', "BEGIN ISOLATION LEVEL REPEATABLE READ"},
      {'a', "SELECT count(*) FROM rr_t"},
      {'a', "UPDATE rr_t SET v = 7 WHERE id = 2 RETURNING v"},
      {'a', "COMMIT"},
      {'b', "SELECT id, v FROM rr_t ORDER BY id"},
  };
  return run_turns(a, b, turns);
}

const std::vector<std::string> kUniqueSetup = {
    "CREATE TABLE u (id int PRIMARY KEY, email text UNIQUE, team int, slot int, UNIQUE (team, slot))",
    "INSERT INTO u VALUES (1, 'x', 1, 1)", "CREATE TABLE v (id int PRIMARY KEY, k int)", "CREATE UNIQUE INDEX v_k ON v (k)"};

std::string run_unique_turns(pg::Connection& a, pg::Connection& b) {
  const std::vector<std::pair<char, const char*>> turns = {
      {'b', "INSERT INTO u VALUES (2, 'x', 1, 2)"},
      {'b', "INSERT INTO u VALUES (2, 'y', 1, 1)"},
      {'b', "INSERT INTO u VALUES (2, NULL, NULL, 1), (3, NULL, NULL, 1)"},
      {'b', "INSERT INTO u VALUES (4, 'x', 2, 2) ON CONFLICT DO NOTHING"},
      {'b', "INSERT INTO u VALUES (4, 'x', 2, 2) ON CONFLICT (email) DO NOTHING"},
      {'b', "INSERT INTO u VALUES (4, 'x', 2, 2) ON CONFLICT (id) DO NOTHING"},
      {'b', "INSERT INTO u VALUES (4, 'x', 2, 2) ON CONFLICT (slot) DO NOTHING"},
      {'a', "BEGIN"},
      {'a', "UPDATE u SET email = 'w' WHERE id = 1"},
      {'a', "INSERT INTO u VALUES (5, 'w', 3, 3)"},
      {'a', "ROLLBACK"},
      {'a', "UPDATE u SET email = 'x' WHERE id = 2"},
      {'a', "UPDATE u SET team = 1, slot = 1 WHERE id = 1 RETURNING email"},
      {'a', "UPDATE u SET email = 'x', team = 5 WHERE id = 1 RETURNING team"},
      {'b', "INSERT INTO v VALUES (1, 1), (2, 1)"},
      {'b', "INSERT INTO v VALUES (1, 1), (2, NULL), (3, NULL)"},
      {'b', "SELECT id, email, team, slot FROM u ORDER BY id"},
  };
  return run_turns(a, b, turns);
}

const char* const kUniqueOutcomes =
    "b: ERROR 23505: duplicate key value violates unique constraint \"u_email_key\" | "
    "b: ERROR 23505: duplicate key value violates unique constraint \"u_team_slot_key\" | "
    "b: INSERT 0 2 | b: INSERT 0 0 | b: INSERT 0 0 | "
    "b: ERROR 23505: duplicate key value violates unique constraint \"u_email_key\" | "
    "b: ERROR 42P10: there is no unique or exclusion constraint matching the ON CONFLICT specification | "
    "a: BEGIN | a: UPDATE 1 | "
    "a: ERROR 23505: duplicate key value violates unique constraint \"u_email_key\" | a: ROLLBACK | "
    "a: ERROR 23505: duplicate key value violates unique constraint \"u_email_key\" | a: UPDATE 1 [x] | "
    "a: UPDATE 1 [5] | b: ERROR 23505: duplicate key value violates unique constraint \"v_k\" | "
    "b: INSERT 0 3 | b: SELECT 3 [1,x,5,1;2,NULL,NULL,1;3,NULL,NULL,1]";

const char* const kRepeatableReadOutcomes =
    "a: BEGIN | b: UPDATE 1 | a: SELECT 1 [1] | b: UPDATE 1 | b: INSERT 0 1 | a: SELECT 2 [1,1;3,0] | "
    "a: UPDATE 1 [10] | a: ERROR 40001: could not serialize access due to concurrent update | "
    "a: ERROR 25P02: current transaction is aborted, commands ignored until end of transaction block | "
    "a: ROLLBACK | a: START TRANSACTION | a: SELECT 1 [3] | b: INSERT 0 1 | "
    "a: ERROR 40001: could not serialize access due to concurrent update | a: ROLLBACK | a: BEGIN | "
    "a: SELECT 1 [4] | b: INSERT 0 1 | "
    "a: ERROR 23505: duplicate key value violates unique constraint \"rr_t_pkey\" | a: ROLLBACK | "
    "a: BEGIN | a: SELECT 1 [0] | b: DELETE 1 | "
    "a: ERROR 40001: could not serialize access due to concurrent delete | a: ROLLBACK | a: BEGIN | "
    "a: SELECT 1 [4] | a: UPDATE 1 [7] | a: COMMIT | b: SELECT 4 [1,2;2,7;4,0;5,0]";

const char* const kSettingOutcomes =
    "SET | BEGIN | SET | SELECT 1 [1s] | COMMIT | SELECT 1 [50ms] | BEGIN | SET | SELECT 1 [1500ms] | SELECT 1 [2min,1500ms] | "
    "ROLLBACK | SELECT 1 [50ms,0] | SET | SELECT 1 [50ms] | SET | ERROR 57014: canceling statement due to statement timeout | SET | "
    "SELECT 1 | 1 warning(s) | OK | SELECT 1 [42] | ERROR 42P05: prepared statement \"p\" already exists | "
    "ERROR 26000: prepared statement \"q\" does not exist | "
    "ERROR 08P01: bind message supplies 0 parameters, but prepared statement \"p\" requires 1 | "
    "ERROR 42601: cannot insert multiple commands into a prepared statement";

CommandResult run_lockstep(const std::string& args) {
  const std::string command = std::string(lockstep_binary()) + " " + args + " 2>&1";
  CommandResult r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) r.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

}  // namespace lockstep::testing

namespace lockstep::testing {

sim::ExploreResult explore(const System& system, const std::string& strategy, sim::ExploreOptions options,
                           std::uint64_t seed) {
  auto s = sim::make_strategy(strategy, seed);
  return sim::explore_system(system, *s, options);
}

std::uint64_t InMemoryExchange::publish(const std::string& task) {
  tasks_[++last_] = task;
  return last_;
}

bool InMemoryExchange::take_back(std::uint64_t id) {
  if (id % 3 != 0 || results_.count(id) != 0) return false;
  ++taken_back;
  return tasks_.erase(id) == 1;
}

std::optional<std::string> InMemoryExchange::result(std::uint64_t id) {
  if (results_.count(id) == 0) {
    results_[id] = explore_(tasks_.at(id));
    ++explored_tasks;
  }
  return results_.at(id);
}

void InMemoryExchange::withdraw(std::uint64_t id) {
  ++withdrawn;
  tasks_.erase(id);
}

}  // namespace lockstep::testing
