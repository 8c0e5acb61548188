// The command line, in process: exit codes, messages, --json fields, sweep reports, replay.
#include "lockstep/cli/commands.h"
#include "lockstep/sim/explain/interleaving_table.h"
#include "test_paths.h"
#include "test_support.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

using testing::CliRun;
CliRun run(std::vector<std::string> args) { return testing::run_cli_in_process(std::move(args)); }

std::string scenario(const std::string& name) { return fmt::format("{}/scenarios/{}", lockstep_source_dir(), name); }

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    // One directory per test and process: concurrent runs of the suite do not collide.
    dir_ = fs::path(::testing::TempDir()) / ("cli_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) +
                                             "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!HasFailure() && std::getenv("LOCKSTEP_KEEP_TEST_FILES") == nullptr) fs::remove_all(dir_);  // kept to look at after a failure
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
    return path(name);
  }
  fs::path dir_;
};

TEST_F(Cli, CheckPassPrintsJsonWithTheRequiredFields) {
  const CliRun r = run({"check", scenario("bench/lockinc-3.json"), "--json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"scenario", "verdict", "violation", "expected_verdict", "executions", "steps", "elapsed_s", "trace"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["scenario"], "lockinc-3");
  EXPECT_EQ(j["verdict"], "pass");
  EXPECT_TRUE(j["violation"].is_null());
  EXPECT_EQ(j["executions"], 6);
  EXPECT_TRUE(j["trace"].is_null());
}

TEST_F(Cli, ExpectedViolationExitsZeroWritesATraceAndEndsWithTheReplayCommand) {
  const std::string trace = path("lost.json");
  const CliRun r = run({"check", scenario("script/lost-update.json"), "--trace-out", trace});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("lost-update: violation final_state (expected violation final_state)"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(trace));
  const std::string last_line = "  replay: lockstep replay " + trace + "\n";
  ASSERT_GE(r.out.size(), last_line.size());
  EXPECT_EQ(r.out.substr(r.out.size() - last_line.size()), last_line);

  const CliRun replay = run({"replay", trace});
  EXPECT_EQ(replay.code, kExitOk) << replay.err;
  EXPECT_NE(replay.out.find("verdict: violation final_state"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("step  time  a            b"), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("event log and verdict identical to the trace"), std::string::npos);
}

TEST_F(Cli, UnexpectedVerdictExitsOne) {
  const std::string s = write("s.json", R"({"format": "lockstep-scenario/1", "name": "racy", "system": "script",
      "actors": [{"name": "a", "ops": ["read x r", "write x r+1"]}, {"name": "b", "ops": ["read x r", "write x r+1"]}],
      "config": {"check": ["x == 2"]}})");
  const CliRun r = run({"check", s, "--trace-out", path("t.json")});
  EXPECT_EQ(r.code, kExitUnexpected);
  EXPECT_NE(r.out.find("NOT AS EXPECTED"), std::string::npos);
}

TEST_F(Cli, BadInputExitsTwoWithFileAndPointer) {
  const std::string s = write("bad.json", R"({"format": "lockstep-scenario/1", "name": "x", "system": "script",
      "actors": [{"name": "a", "ops": ["read x r", "frob"]}]})");
  CliRun r = run({"check", s});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find(s + ": /actors/0/ops/1: unknown operation \"frob\""), std::string::npos) << r.err;

  r = run({"check", scenario("bench/lockinc-3.json"), "--strategy", "bogus"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("--strategy: bogus not in {dpor,source-dpor,dfs,random,pct}"), std::string::npos) << r.err;

  r = run({"check", path("missing.json")});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("no such file"), std::string::npos);

  r = run({"replay", write("notatrace.json", "{\"format\": \"lockstep-trace/1\"}")});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("notatrace.json: /: missing required key"), std::string::npos) << r.err;

  r = run({"check"});
  EXPECT_EQ(r.code, kExitBadInput);
  r = run({"frobnicate"});
  EXPECT_EQ(r.code, kExitBadInput);
}

// A SQL scenario (.spec): a construct outside the subset is bad input, named with the line
// and column of the file; a spec checks as its expect line says; isolation compares output.
TEST_F(Cli, SqlSpecsCheckAndRefuseWhatTheSubsetLacks) {
  const std::string bad = write("recursive.spec", "setup { CREATE TABLE t (id int PRIMARY KEY); }\nsession a\nstep s1 {\n"
                                                  "  EXPLAIN SELECT 1;\n}\n");
  CliRun r = run({"check", bad});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find(bad + ":4:3: EXPLAIN is not in lockstep's SQL subset (docs/sql.md) (SQLSTATE 0A000)"),
            std::string::npos)
      << r.err;
  r = run({"check", scenario("sql/queue-without-lock.spec"), "--trace-out", path("queue.json")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("violation each_job_once"), std::string::npos) << r.out;
  r = run({"check", scenario("sql/skip-locked-queue.spec")});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("skip-locked-queue: pass (expected pass)"), std::string::npos) << r.out;
  const std::string wrong = write("wrong.out", "Parsed test spec with 2 sessions\n\nstarting permutation: nothing\n");
  r = run({"isolation", std::string(lockstep_source_dir()) + "/tests/pg-isolation/nowait.spec", "--expected", wrong});
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("line 3:\n  expected: starting permutation: nothing\n  got:      starting permutation: s1a s1b s2a s2b"),
            std::string::npos)
      << r.err;
}

TEST_F(Cli, OverridesApply) {
  const CliRun r = run({"check", scenario("bench/lockinc-4.json"), "--max-executions", "5", "--json"});
  EXPECT_EQ(r.code, kExitUnexpected);  // expects pass; a bounded search is incomplete
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "incomplete");
  EXPECT_EQ(j["executions"], 5);

  const CliRun steps = run({"check", scenario("bench/lockinc-4.json"), "--max-steps", "3", "--json", "--trace-out", path("t.json")});
  EXPECT_EQ(nlohmann::json::parse(steps.out)["verdict"], "step_bound");
}

TEST_F(Cli, DivergingTraceExitsTwoNamingTheStep) {
  const std::string trace = path("lost.json");
  ASSERT_EQ(run({"check", scenario("script/lost-update.json"), "--no-shrink", "--trace-out", trace}).code, kExitOk);
  auto j = nlohmann::json::parse(std::ifstream(trace));
  j["decisions"][1] = "a0";
  std::ofstream(trace) << j.dump();
  const CliRun r = run({"replay", trace});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("trace diverges at step 2: trace takes a0 but it is not enabled (enabled: a1)"), std::string::npos) << r.err;
}

TEST_F(Cli, SweepWritesSummaryResultsAndTracesAndComparesExpectations) {
  const std::string out = path("reports");
  const CliRun r = run({"sweep", scenario("script"), "--out", out});
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err;
  EXPECT_TRUE(fs::exists(out + "/summary.md"));
  const auto results = nlohmann::json::parse(std::ifstream(out + "/results.json"));
  ASSERT_TRUE(results.is_array());
  EXPECT_GE(results.size(), 6u);
  for (const auto& res : results) {
    EXPECT_TRUE(res["as_expected"].get<bool>()) << res.dump();
    if (res["verdict"] != "pass" && res["verdict"] != "incomplete") {
      EXPECT_TRUE(fs::exists(res["trace"].get<std::string>())) << res.dump();
    }
  }
  EXPECT_TRUE(fs::exists(out + "/traces/lost-update.json"));

  // How each search ran: optimal DPOR, or source-DPOR after a fallback with its reason (a
  // fault that may change what its step does: the backend terminated before a COMMIT), in
  // results.json and the summary's search column.
  const std::string bench = path("bench");
  ASSERT_EQ(run({"sweep", scenario("sql-faults/transfer-autocommit.spec"), scenario("bench/filesystem-14.json"), "--out", bench}).code,
            kExitOk);
  bool fell_back = false, stayed = false;
  for (const auto& res : nlohmann::json::parse(std::ifstream(bench + "/results.json"))) {
    if (res["scenario"] == "transfer-autocommit") {
      fell_back = true;
      EXPECT_EQ(res["strategy_ran"], "source-dpor") << res.dump();
      EXPECT_NE(res["fallback"]["reason"].get<std::string>().find("a fault, a crash"), std::string::npos) << res.dump();
    } else if (res["scenario"] == "filesystem-14") {
      stayed = true;
      EXPECT_EQ(res["strategy_ran"], "dpor") << res.dump();
      EXPECT_TRUE(res["fallback"].is_null()) << res.dump();
    }
  }
  EXPECT_TRUE(fell_back && stayed);
  std::stringstream bench_md;
  bench_md << std::ifstream(bench + "/summary.md").rdbuf();
  EXPECT_NE(bench_md.str().find("| source-dpor (fell back at execution 1: a step makes a choice that may change what it does"), std::string::npos) << bench_md.str();

  // A malformed scenario among good ones: reported, the rest still run, exit 2.
  const std::string mixed = path("mixed");
  fs::create_directories(mixed);
  fs::copy_file(scenario("script/lost-update.json"), mixed + "/good.json");
  std::ofstream(mixed + "/bad.json") << "{";
  const CliRun m = run({"sweep", mixed, "--out", path("mixed-out"), "--json"});
  EXPECT_EQ(m.code, kExitBadInput);
  EXPECT_NE(m.out.find("\"verdict\":\"bad_input\""), std::string::npos) << m.out;
  EXPECT_NE(m.out.find("\"scenario\":\"lost-update\""), std::string::npos) << m.out;

  // A .spec scenario's trace is JSON too: traces/NAME.json, beside its HTML view.
  const std::string specs = path("specs");
  fs::create_directories(specs);
  fs::copy_file(scenario("sql/queue-without-lock.spec"), specs + "/queue.spec");
  const CliRun q = run({"sweep", specs, "--out", path("specs-out")});
  EXPECT_EQ(q.code, kExitOk) << q.out << q.err;
  EXPECT_TRUE(fs::exists(path("specs-out") + "/traces/queue.json")) << q.out;
  EXPECT_TRUE(fs::exists(path("specs-out") + "/traces/queue.html")) << q.out;
  EXPECT_FALSE(fs::exists(path("specs-out") + "/traces/queue.spec"));
}

// `sweep .` after a `check` in the same directory reads scenarios only: not the check's
// traces, nor its own earlier output.
TEST_F(Cli, SweepSkipsWhatLockstepWrote) {
  const std::string dir = path("own-output");
  fs::create_directories(dir);
  fs::copy_file(scenario("script/lost-update.json"), dir + "/lost-update.json");
  ASSERT_EQ(run({"check", dir + "/lost-update.json", "--trace-out", dir + "/reports/traces/lost-update.json"}).code, kExitOk);
  ASSERT_FALSE(fs::is_empty(dir + "/reports/traces"));
  for (int round = 0; round < 2; ++round) {  // the second round also meets its own first output
    const CliRun s = run({"sweep", dir, "--out", dir + "/sweep-out", "--json"});
    EXPECT_EQ(s.code, kExitOk) << s.err;
    EXPECT_EQ(std::count(s.out.begin(), s.out.end(), '\n'), 1) << s.out;
    EXPECT_NE(s.err.find("sweep: skipped "), std::string::npos) << s.err;
  }
}

// check names its trace after the scenario's file, as sweep does (a scenario's name may be
// anything, 300 characters say); a trace it cannot write does not lose the result.
TEST_F(Cli, CheckNamesTheTraceAfterTheFileAndKeepsTheResultWhenItCannotWrite) {
  const std::string dir = path("long-name");
  fs::create_directories(dir);
  auto doc = nlohmann::json::parse(std::ifstream(scenario("script/lost-update.json")));
  doc["name"] = std::string(300, 'n');
  std::ofstream(dir + "/long.json") << doc.dump();
  const fs::path before = fs::current_path();
  fs::current_path(dir);
  const CliRun r = run({"check", "long.json"});
  fs::current_path(before);
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(fs::exists(dir + "/reports/traces/long.json"));

  std::ofstream(dir + "/a-file") << "x";
  const CliRun w = run({"check", dir + "/long.json", "--trace-out", dir + "/a-file/t.json"});
  EXPECT_EQ(w.code, kExitBadInput);
  EXPECT_NE(w.out.find("violation"), std::string::npos) << w.out;  // the result, printed first
  EXPECT_NE(w.err.find(dir + "/long.json: the trace was not written: "), std::string::npos) << w.err;
}

// Shrinking puts preemptions before steps; the report says so in that order (a trace may
// grow by a step to lose a preemption).
TEST_F(Cli, TheShrinkLineLeadsWithPreemptions) {
  const CliRun r = run({"check", scenario("script/lost-update.json"), "--trace-out", path("lu.json")});
  EXPECT_NE(r.out.find("trace shrunk to 1 preemptions, 4 steps (found with 2 preemptions, 4 steps)"), std::string::npos)
      << r.out;
  const CliRun s = run({"shrink", path("lu.json"), "--out", path("lu2.json")});
  EXPECT_NE(s.out.find("violation: 1 preemptions and 4 steps, from 2 preemptions and 4 steps"), std::string::npos)
      << s.out;
}

TEST_F(Cli, ReplayStepWalksOneStepPerLineAndStopsOnQ) {
  const std::string trace = std::string(lockstep_source_dir()) + "/traces/lost-update.json";
  std::vector<const char*> argv = {"lockstep", "replay", trace.c_str(), "--step"};
  std::istringstream two_then_quit("\n\nq\n");
  std::ostringstream out, err;
  ASSERT_EQ(run_cli(static_cast<int>(argv.size()), argv.data(), two_then_quit, out, err), kExitOk) << err.str();
  EXPECT_NE(out.str().find("read x -> 0"), std::string::npos) << out.str();
  EXPECT_NE(out.str().find("(stopped at step 2 of 4)"), std::string::npos) << out.str();
  std::istringstream all("\n\n\n\n");
  std::ostringstream out2;
  ASSERT_EQ(run_cli(static_cast<int>(argv.size()), argv.data(), all, out2, err), kExitOk);
  EXPECT_NE(out2.str().find("verdict: violation final_state"), std::string::npos) << out2.str();
  EXPECT_EQ(out2.str().find("stopped"), std::string::npos);
}

TEST_F(Cli, ReportWritesOneSelfContainedPageAndSweepWritesOnePerFailure) {
  const std::string html = path("r.html");
  const CliRun r = run({"report", std::string(lockstep_source_dir()) + "/traces/lockinc-no-lock-3.json", "-o", html});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::stringstream page;
  page << std::ifstream(html).rdbuf();
  const std::string text = page.str();
  std::size_t lanes = 0;
  for (std::size_t at = text.find("class=\"lane-name\""); at != std::string::npos; at = text.find("class=\"lane-name\"", at + 1)) ++lanes;
  EXPECT_EQ(lanes, 3u);
  EXPECT_NE(text.find("id=\"violation\""), std::string::npos);
  EXPECT_NE(text.find("lockstep replay"), std::string::npos);
  EXPECT_EQ(text.find("<script"), std::string::npos);  // self-contained, nothing to run
  EXPECT_EQ(text.find("http"), std::string::npos);     // nothing fetched

  const std::string out = path("sweep");
  ASSERT_EQ(run({"sweep", scenario("script"), "--out", out}).code, kExitOk);
  EXPECT_TRUE(fs::exists(out + "/traces/lost-update.html"));
  std::stringstream md;
  md << std::ifstream(out + "/summary.md").rdbuf();
  EXPECT_NE(md.str().find("[report](traces/lost-update.html)"), std::string::npos) << md.str();
}

// Every view carries the full facts: what a read_row returned, whom a wait was behind and
// how it ended; and the cause, in the trace, the terminal and the report.
TEST_F(Cli, EveryViewShowsTheValuesReadTheWaitsAndTheCause) {
  const std::string trace = std::string(lockstep_source_dir()) + "/traces/headspace/bug-conditional-unlock-blocks-hook.json";
  const std::string read_value = "read_row agents#1 1";
  const std::string row = "{handoff=0, id=1, prompt_injected_at=, status=active}";
  // The trace's events.
  std::stringstream file;
  file << std::ifstream(trace).rdbuf();
  const auto j = nlohmann::json::parse(file.str());
  bool read_logged = false, queued = false, timed_out = false;
  for (const auto& e : j["events"]) {
    const std::string op = e["op"], result = e["result"];
    read_logged = read_logged || (op == read_value && result == row);
    queued = queued || result == "queued behind 1003";
    timed_out = timed_out || result.starts_with("timeout 55P03 lock_timeout");
  }
  EXPECT_TRUE(read_logged && queued && timed_out) << file.str();
  ASSERT_TRUE(j.contains("cause"));
  EXPECT_TRUE(j["cause"]["computed"].get<bool>());
  const std::size_t pairs = j["cause"]["pairs"].size();
  EXPECT_GE(pairs, 1u);

  // The terminal table (wrapped at 36 columns: the row's value continues on the next lines).
  const CliRun replay = run({"replay", trace, "--wide"});
  ASSERT_EQ(replay.code, kExitOk) << replay.err;
  EXPECT_NE(replay.out.find(read_value + " -> " + row), std::string::npos) << replay.out;
  EXPECT_NE(replay.out.find("queued behind 1003"), std::string::npos);
  EXPECT_NE(replay.out.find("woke deadlock check (deadlock_timeout): no cycle, still waiting"), std::string::npos);
  EXPECT_NE(replay.out.find("yet granted: the session holds the lock (phantom grant)"), std::string::npos);
  EXPECT_NE(replay.out.find("1>"), std::string::npos);
  EXPECT_NE(replay.out.find("cause: the failure depends on"), std::string::npos);
  const CliRun as_json = run({"replay", trace, "--json"});
  ASSERT_EQ(as_json.code, kExitOk);
  EXPECT_EQ(nlohmann::json::parse(as_json.out)["cause"]["pairs"].size(), pairs);

  // The report: the value, the wait and its holder, the holding bars, one arrow per pair.
  const std::string html = path("r.html");
  ASSERT_EQ(run({"report", trace, "-o", html}).code, kExitOk);
  std::stringstream page;
  page << std::ifstream(html).rdbuf();
  const std::string text = page.str();
  auto count = [&](const std::string& needle) {
    std::size_t n = 0;
    for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
    return n;
  };
  EXPECT_NE(text.find(read_value + " &rarr; " + row), std::string::npos);  // the raw table: one cell
  EXPECT_NE(text.find("status=active}</text>"), std::string::npos);          // the lanes: wrapped
  EXPECT_NE(text.find("queued behind 1003"), std::string::npos);
  EXPECT_GE(count("class=\"hold\""), 3u);
  EXPECT_GE(count("class=\"wait\""), 1u);
  EXPECT_GE(count("class=\"wait-arrow\""), 1u);
  EXPECT_NE(text.find("waits for advisory(1,1,2) behind pre_tool_use#1"), std::string::npos);
  EXPECT_EQ(count("class=\"cause-arrow\""), pairs);
  EXPECT_EQ(count("class=\"lane-name\""), 3u);
}

TEST_F(Cli, DiffAgainstACauseShowsTheNearestPassingExecutionAndWritesIt) {
  const std::string failing = std::string(lockstep_source_dir()) + "/traces/headspace/bug-skill-no-refresh.json";
  const std::string passing = path("passing.json");
  const CliRun r = run({"diff", failing, "--cause", "1", "--cause-out", passing});
  EXPECT_EQ(r.code, 1) << r.err;  // they differ
  EXPECT_NE(r.out.find("with cause 1 reordered): pass"), std::string::npos) << r.out;
  // Where they part: the second hook's read of the agent, before or after the first's update.
  EXPECT_NE(r.out.find("A  step 6  user_prompt_submit#2: read_row agents#1 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("B  step 6  user_prompt_submit#1: update_row agents#1 1"), std::string::npos) << r.out;
  // The execution written is a trace that replays, and passes.
  const CliRun replay = run({"replay", passing, "--json"});
  ASSERT_EQ(replay.code, kExitOk) << replay.err;
  EXPECT_EQ(nlohmann::json::parse(replay.out)["verdict"], "pass");
  // The race that separates them comes first, by the explorer's dependence relation, though
  // the two executions drew other connections from the pool (pids in the statements).
  const std::string stop = std::string(lockstep_source_dir()) + "/traces/headspace/bug-deferred-stop-no-recheck.json";
  const CliRun d = run({"diff", stop, "--cause", "1", "--json"});
  ASSERT_EQ(d.code, 1) << d.err;
  const auto first = nlohmann::json::parse(d.out)["reversed_pairs"][0];
  EXPECT_EQ(first["first_in_a"]["event"], "read_row commands#1 1 -> {history=P, id=1, state=processing}") << d.out;
  EXPECT_EQ(first["first_in_b"]["event"], "update_row commands#1 1 -> set {history=PX, state=complete}") << d.out;
  EXPECT_TRUE(first["same_object"].get<bool>());
  // Bad input: no such pair, or both B and --cause, or neither.
  EXPECT_EQ(run({"diff", failing, "--cause", "9"}).code, kExitBadInput);
  EXPECT_EQ(run({"diff", failing, failing, "--cause", "1"}).code, kExitBadInput);
  EXPECT_EQ(run({"diff", failing}).code, kExitBadInput);
}

TEST_F(Cli, ListNamesSystemsVariantsInvariantsAndStrategies) {
  const CliRun r = run({"list"});
  EXPECT_EQ(r.code, kExitOk);
  for (const char* s : {"script", "bench", "headspace", "sql", "variant no_lock", "variant xact_lock", "invariant final_count",
                        "invariant final_state", "invariant agent_mutual_exclusion", "fault phantom_grant", "dfs", "random"}) {
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
  }
  EXPECT_EQ(nlohmann::json::parse(run({"list", "--json"}).out)["systems"].size(), 7u);  // the six built-in systems and sql (.spec files)
}

// A passing execution of lost-update (a runs first, then b), written by hand and checked by
// replay; lost-update's own trace is the failing one.
std::string passing_lost_update(const std::string& failing) {
  nlohmann::json t = nlohmann::json::parse(std::ifstream(failing));
  t.erase("shrunk");
  t["verdict"] = {{"kind", "pass"}, {"invariant", ""}, {"message", ""}};
  t["decisions"] = {"a0", "a0", "a1", "a1"};
  t["events"] = nlohmann::json::array({{{"step", 0}, {"time_ns", 0}, {"actor", 0}, {"op", "read x"}, {"result", "0"}},
                                       {{"step", 1}, {"time_ns", 0}, {"actor", 0}, {"op", "write x 1"}, {"result", ""}},
                                       {{"step", 2}, {"time_ns", 0}, {"actor", 1}, {"op", "read x"}, {"result", "1"}},
                                       {{"step", 3}, {"time_ns", 0}, {"actor", 1}, {"op", "write x 2"}, {"result", ""}}});
  return t.dump();
}

TEST_F(Cli, DiffShowsWhereTwoTracesPartAndTheRaceBetweenThem) {
  const std::string failing = std::string(lockstep_source_dir()) + "/traces/lost-update.json";
  const std::string passing = write("pass.json", passing_lost_update(failing));
  ASSERT_EQ(run({"replay", passing}).code, 0) << "the hand-written passing trace must replay";

  const CliRun same = run({"diff", failing, failing});
  EXPECT_EQ(same.code, 0) << same.err;
  EXPECT_NE(same.out.find("the event logs are identical"), std::string::npos) << same.out;

  const CliRun d = run({"diff", failing, passing});
  EXPECT_EQ(d.code, 1) << d.err;
  EXPECT_NE(d.out.find("the first 1 events are the same; they part at event 1"), std::string::npos) << d.out;
  // The race: b's read before a's write in the failure, after it in the passing run.
  EXPECT_NE(d.out.find("  A: b read x -> 0 (step 1) before a write x 1 (step 3)\n"
                       "  B: a write x 1 (step 1) before b read x -> 1 (step 2)\n"),
            std::string::npos)
      << d.out;
  EXPECT_NE(d.out.find("b: from its event 0: A read x -> 0; B read x -> 1"), std::string::npos) << d.out;
  EXPECT_NE(d.out.find("a: the same 2 events"), std::string::npos) << d.out;

  const CliRun j = run({"diff", failing, passing, "--json"});
  EXPECT_EQ(j.code, 1);
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["common_events"], 1);
  ASSERT_EQ(doc["reversed_pairs"].size(), 1u) << j.out;
  EXPECT_EQ(doc["reversed_pairs"][0]["first_in_a"]["event"], "read x -> 0");
  EXPECT_EQ(doc["reversed_pairs"][0]["first_in_b"]["event"], "write x 1");
  EXPECT_TRUE(doc["reversed_pairs"][0]["same_object"].get<bool>());

  const CliRun other = run({"diff", failing, std::string(lockstep_source_dir()) + "/traces/lockinc-no-lock-3.json"});
  EXPECT_EQ(other.code, 2);
  EXPECT_NE(other.err.find("different actors"), std::string::npos) << other.err;
  EXPECT_EQ(run({"diff", failing, path("missing.json")}).code, 2);
}

TEST_F(Cli, ReplayWrapsLongCellsAndNeverCutsThem) {
  const std::string trace = std::string(lockstep_source_dir()) + "/traces/headspace/bug-conditional-unlock-leak.json";
  const CliRun narrow = run({"replay", trace, "--width", "20"});
  ASSERT_EQ(narrow.code, 0) << narrow.err;
  EXPECT_EQ(narrow.out.find("..."), std::string::npos) << "a cell was cut";
  const CliRun wide = run({"replay", trace, "--wide"});
  ASSERT_EQ(wide.code, 0) << wide.err;
  auto lines = [](const std::string& s) { return std::count(s.begin(), s.end(), '\n'); };
  EXPECT_GT(lines(narrow.out), lines(wide.out));
  // Every word of the wide table is in the wrapped one.
  std::istringstream words(wide.out);
  std::string no_space;
  for (char c : narrow.out) {
    if (c != ' ' && c != '\n') no_space += c;
  }
  for (std::string w; words >> w;) EXPECT_NE(no_space.find(w), std::string::npos) << w;
}

TEST_F(Cli, WhatAReadRowReturnedIsInTheEventsAndTheTable) {
  const std::string trace = std::string(lockstep_source_dir()) + "/traces/headspace/bug-skill-no-refresh.json";
  const auto doc = nlohmann::json::parse(std::ifstream(trace));
  bool seen = false;
  for (const auto& e : doc["events"]) {
    if (e["op"].get<std::string>().rfind("read_row agents#1", 0) == 0) {
      EXPECT_EQ(e["result"].get<std::string>().front(), '{') << e.dump();
      seen = true;
    }
  }
  EXPECT_TRUE(seen);
  const CliRun wide = run({"replay", trace, "--wide"});
  ASSERT_EQ(wide.code, 0) << wide.err;
  EXPECT_NE(wide.out.find("read_row agents#1 1 -> {handoff=0, id=1,"), std::string::npos) << wide.out;
}

TEST_F(Cli, AWaitShowsWhomItWaitsBehindAndHowItEnded) {
  const CliRun r = run({"replay", std::string(lockstep_source_dir()) + "/traces/headspace/bug-conditional-unlock-blocks-hook.json", "--wide"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("advisory_lock_timed advisory(1,1,2) 1005 -> queued behind 1003"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-> woke deadlock check (deadlock_timeout): no cycle, still waiting"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("-> timeout 55P03 lock_timeout, yet granted: the session holds the lock (phantom grant)"), std::string::npos)
      << r.out;
}

TEST_F(Cli, AnUnlockOfALockNotHeldShowsTheServersWarning) {
  const CliRun r = run({"replay", std::string(lockstep_source_dir()) + "/traces/headspace/bug-no-reentrancy-check.json", "--wide"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("-> 0 WARNING 01000: you don't own a lock of type ExclusiveLock"), std::string::npos) << r.out;
}

TEST(WrapCell, LinesAreBoundedAndGiveTheTextBack) {
  const std::string text = "advisory_lock_timed advisory(7,1,2) exclusive 50 ms -> 55P03 canceling statement due to lock timeout";
  for (std::size_t width : {8u, 13u, 20u, 36u, 200u}) {
    const auto lines = sim::wrap_cell(text, width);
    std::string back;
    for (const auto& l : lines) {
      EXPECT_LE(l.size(), width);
      back += l;
    }
    EXPECT_EQ(back, text);
  }
  EXPECT_EQ(sim::wrap_cell(text, 0).size(), 1u);
}

TEST_F(Cli, HelpExitsZero) {
  EXPECT_EQ(run({"--help"}).code, kExitOk);
  const CliRun r = run({"check", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("--max-executions"), std::string::npos);
}

}  // namespace
}  // namespace lockstep::cli
