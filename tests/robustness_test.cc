// Bad input and bounds: every malformed or hostile input ends in exit 2 with the
// file (and the JSON pointer where there is one), never a crash or an internal error; the
// shrinker and the random strategies stay within their bounds; no exception escapes a real
// actor thread; no password reaches a message. Interrupts and lost servers, which need
// signals and a server, are in tests/interrupts.sh.
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/commands.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/thread_env.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/shrink.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;
using cli::kExitBadInput;
using cli::kExitOk;

using testing::CliRun;
CliRun run(std::vector<std::string> args) { return testing::run_cli_in_process(std::move(args)); }

std::string source(const std::string& name) { return std::string(lockstep_source_dir()) + "/" + name; }

class Robustness : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("robust_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  std::string write(const std::string& name, const std::string& text) const {
    fs::create_directories(fs::path(path(name)).parent_path());
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }
  // A golden trace with `edit` applied to its JSON.
  std::string edited_trace(const std::string& name, const std::function<void(nlohmann::json&)>& edit) const {
    nlohmann::json t = read_json_file(source("traces/dal/jobs-out-of-order.json"));
    edit(t);
    return write(name, t.dump(2));
  }
  fs::path dir_;
};

void expect_bad_input(const CliRun& r, const std::string& file, const std::string& says) {
  EXPECT_EQ(r.code, kExitBadInput) << r.out << r.err;
  EXPECT_NE(r.err.find(file + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
}

TEST_F(Robustness, AHundredThousandLevelNestIsRefusedByCheckReplayAndSweep) {
  const std::string deep = write("sweep/deep.json", std::string(100'000, '[') + std::string(100'000, ']'));
  fs::copy_file(source("scenarios/bench/lockinc-2.json"), path("sweep/ok.json"));
  expect_bad_input(run({"check", deep}), deep, "line 1, column 129: nested more than 128 levels deep");
  expect_bad_input(run({"replay", deep}), deep, "nested more than 128 levels deep");
  // The sweep reports the nest as bad input, checks the other scenario, writes its reports.
  const CliRun s = run({"sweep", path("sweep"), "--out", path("out"), "--json"});
  EXPECT_EQ(s.code, kExitBadInput) << s.err;
  const auto results = read_json_file(path("out/results.json"));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["verdict"], "bad_input");
  EXPECT_NE(results[0]["error"].get<std::string>().find("nested more than"), std::string::npos);
  EXPECT_EQ(results[1]["verdict"], "pass");
  EXPECT_TRUE(fs::exists(path("out/summary.md")));
}

TEST_F(Robustness, NumbersOutOfRangeAndMalformedJsonNameTheFile) {
  const std::string huge = write("huge.json", R"({"format": "lockstep-scenario/1", "seed": 1e309})");
  expect_bad_input(run({"check", huge}), huge, "number overflow parsing '1e309'");
  const std::string big_int = write("bigint.json", R"({"format": "lockstep-scenario/1", "name": "x", "system": "bench",
      "config": {"program": "lockinc", "n": 2}, "explore": {"seed": 18446744073709551616}})");
  expect_bad_input(run({"check", big_int}), big_int, "");
  const std::string cut = write("cut.json", R"({"format": "lockstep-sce)");
  expect_bad_input(run({"check", cut}), cut, "invalid JSON: parse error at line 1");
}

TEST_F(Robustness, OnlyRegularFilesAreRead) {
  expect_bad_input(run({"check", dir_.string()}), dir_.string(), "is a directory, not a file");
  expect_bad_input(run({"replay", "/dev/zero"}), "/dev/zero", "not a regular file");
  const std::string fifo = path("fifo.json");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  expect_bad_input(run({"check", fifo}), fifo, "not a regular file");  // does not block on the FIFO
  expect_bad_input(run({"check", path("missing.json")}), path("missing.json"), "no such file");
}

TEST_F(Robustness, ATraceWhoseScenarioHasANumericSystemIsBadInputEverywhere) {
  const std::string t = edited_trace("numeric-system.json", [](nlohmann::json& j) { j["scenario"]["system"] = 7; });
  for (const auto& command : std::vector<std::vector<std::string>>{
           {"replay", t}, {"shrink", t}, {"report", t, "-o", path("r.html")}, {"conform", t}}) {
    SCOPED_TRACE(command[0]);
    expect_bad_input(run(command), t, "/scenario/system: expected a string, got number 7");
  }
  const std::string n = edited_trace("numeric-name.json", [](nlohmann::json& j) { j["scenario"]["name"] = 1; });
  expect_bad_input(run({"report", n, "-o", path("r.html")}), n, "/scenario/name: expected a string");
}

TEST_F(Robustness, TracesAreVerifiedBeforeShrinkAndReport) {
  // Cut short: the decisions end before the execution does.
  const std::string diverging = edited_trace("diverging.json", [](nlohmann::json& j) {
    j["decisions"] = nlohmann::json::array({j["decisions"][0]});
  });
  expect_bad_input(run({"shrink", diverging}), diverging, "trace diverges at step");
  expect_bad_input(run({"report", diverging, "-o", path("r.html")}), diverging, "trace diverges at step");
  EXPECT_FALSE(fs::exists(path("r.html")));
  expect_bad_input(run({"replay", diverging}), diverging, "trace diverges at step");
  // A violation whose recorded verdict does not come back: nothing to shrink toward.
  const std::string wrong = edited_trace("wrong-verdict.json", [](nlohmann::json& j) {
    j["verdict"]["invariant"] = "no_such_invariant";
  });
  expect_bad_input(run({"shrink", wrong}), wrong, "trace diverges at step");
  // The untouched trace shrinks (exit 0): the check above is not refusing everything.
  EXPECT_EQ(run({"shrink", source("traces/dal/jobs-out-of-order.json"), "--out", path("s.json")}).code, kExitOk);
}

TEST_F(Robustness, SystemConfigErrorsNameTheFileAndPointer) {
  const std::string script = write("script.json", R"({"format": "lockstep-scenario/1", "name": "x", "system": "script"})");
  expect_bad_input(run({"check", script}), script, "/: missing \"actors\"");
  const std::string dal = write("dal.json", R"({"format": "lockstep-scenario/1", "name": "x", "system": "dal",
      "actors": [{"kind": "job", "resources": ["project:p"], "work_ms": 10, "start_ms": 0}]})");
  expect_bad_input(run({"check", dal}), dal, "/explore: dal scenarios need \"explore\": {\"time\": \"timed\"}");
  const std::string bench = write("bench.json", R"({"format": "lockstep-scenario/1", "name": "x", "system": "bench",
      "variant": "no_lock", "config": {"program": "readers", "n": 2}})");
  expect_bad_input(run({"check", bench}), bench, "/variant: variant no_lock applies to lockinc only");
}

// A typo in the expected invariant is bad input (the system declares its invariants), not
// a verdict "NOT AS EXPECTED"; the right name still runs.
TEST_F(Robustness, AnExpectedInvariantTheSystemDoesNotDeclareIsBadInput) {
  const auto doc = [](const std::string& invariant) {
    return R"({"format": "lockstep-scenario/1", "name": "x", "system": "bench", "variant": "no_lock",
      "config": {"program": "lockinc", "n": 2}, "expect": {"verdict": "violation", "violation": ")" + invariant + "\"}}";
  };
  const std::string typo = write("typo.json", doc("final_cuont"));
  expect_bad_input(run({"check", typo}), typo,
                   "/expect/violation: system \"bench\" declares no invariant \"final_cuont\" (it declares: ");
  const std::string right = write("right.json", doc("final_count"));
  EXPECT_EQ(run({"check", right}).code, kExitOk);
}

TEST_F(Robustness, AnUnknownStrategyIsBlamedOnWhereItCameFrom) {
  const CliRun flag = run({"check", source("scenarios/bench/lockinc-2.json"), "--strategy", "sdpor"});
  EXPECT_EQ(flag.code, kExitBadInput);
  EXPECT_NE(flag.err.find("--strategy: sdpor not in {dpor,source-dpor,dfs,random,pct}"), std::string::npos) << flag.err;
  const std::string s = write("s.json", R"({"format": "lockstep-scenario/1", "name": "x", "system": "bench",
      "config": {"program": "lockinc", "n": 2}, "explore": {"strategy": "sdpor"}})");
  expect_bad_input(run({"check", s}), s, "/explore/strategy: unknown strategy \"sdpor\"");
}

TEST_F(Robustness, MergeChecksTheTypesOfEveryEntry) {
  const std::string r = write("results.json", R"([{"file": "a.json", "verdict": "pass", "as_expected": "yes", "elapsed_s": 1}])");
  expect_bad_input(run({"merge", r, "--out", path("m")}), r, "/0/as_expected: expected true or false");
  const std::string v = write("verdict.json", R"([{"file": "a.json", "verdict": "great", "as_expected": true, "elapsed_s": 1}])");
  expect_bad_input(run({"merge", v, "--out", path("m")}), v, "/0/verdict: unknown verdict \"great\"");
}

TEST_F(Robustness, RandomSearchesHaveADefaultBoundAndFindingNothingIsNoFailure) {
  const CliRun r = run({"check", source("scenarios/bench/lockinc-3.json"), "--strategy", "random", "--json"});
  EXPECT_EQ(r.code, kExitOk) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "incomplete");
  EXPECT_TRUE(j["as_expected"].get<bool>());
  EXPECT_EQ(j["executions"].get<std::uint64_t>() + j["redundant"].get<std::uint64_t>(), kDefaultRandomExecutions);
  // Expecting a violation, the same search that finds none is not as expected.
  const CliRun bug = run({"check", source("scenarios/bench/lockinc-no-lock-3.json"), "--strategy", "random",
                          "--max-executions", "1", "--seed", "3", "--json", "--trace-out", path("t.json")});
  const auto b = nlohmann::json::parse(bug.out);
  EXPECT_EQ(bug.code, b["verdict"] == "violation" ? kExitOk : cli::kExitUnexpected);
}

TEST_F(Robustness, TheShrinkerStopsAtItsBudgetWithTheBestTraceSoFar) {
  const Scenario s = testing::scenario_from_text(read_json_file(source("scenarios/bench/lockinc-no-lock-3.json")).dump());
  sim::CheckOverrides o;
  o.shrink = false;
  const sim::CheckReport found = testing::check(s, o);
  ASSERT_TRUE(found.trace);
  sim::ShrinkBudget tight;
  tight.max_steps = 1;  // the first attempt spends it
  const sim::Trace cut = sim::shrink_trace(*found.trace, "<t>", tight);
  ASSERT_TRUE(cut.shrunk);
  EXPECT_TRUE(cut.shrunk->out_of_budget);
  EXPECT_EQ(cut.shrunk->attempts, 1u);
  EXPECT_EQ(cut.verdict, found.trace->verdict);
  EXPECT_EQ(cut.invariant, found.trace->invariant);
  int stops = 0;
  sim::ShrinkBudget stopped;
  stopped.stop = [&] { return ++stops > 3; };  // an interrupt after three attempts
  const sim::Trace interrupted = sim::shrink_trace(*found.trace, "<t>", stopped);
  EXPECT_TRUE(interrupted.shrunk->out_of_budget);
  EXPECT_LE(interrupted.shrunk->attempts, 4u);
  EXPECT_EQ(interrupted.invariant, found.trace->invariant);
  const sim::Trace full = sim::shrink_trace(*found.trace, "<t>");
  EXPECT_FALSE(full.shrunk->out_of_budget);
  EXPECT_LE(full.shrunk->steps, interrupted.shrunk->steps);
}

TEST_F(Robustness, AnExecutionBoundBoundsTheShrinkingToo) {
  constexpr std::uint64_t kBound = 40;
  const CliRun r = run({"check", source("scenarios/bench/lockinc-no-lock-3.json"), "--strategy", "dfs", "--max-executions",
                        std::to_string(kBound), "--json", "--trace-out", path("t.json")});
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["verdict"], "violation") << r.out;
  const std::uint64_t used = j["executions"].get<std::uint64_t>() + j["redundant"].get<std::uint64_t>();
  ASSERT_LE(used, kBound);
  // The shrinker's first attempt re-runs the failure as found; it always happens.
  EXPECT_LE(j["trace_shrunk"]["attempts"].get<std::uint64_t>(), std::max<std::uint64_t>(1, kBound - used)) << r.out;
}

TEST(RealRobustness, AnExceptionInAnActorThreadIsRethrownAfterTheJoin) {
  real::ThreadEnv env({"", 1, Duration{0}}, nullptr);
  int finished = 0;
  EXPECT_THROW(env.run_actors(3,
                              [&](ActorId a) {
                                if (a == 1) throw std::runtime_error("server hiccup");
                                ++finished;  // the others run to their end
                              }),
               std::runtime_error);
  EXPECT_EQ(finished, 2);
}

TEST(RealRobustness, NoPasswordInAnyConnectMessage) {
  for (const std::string conninfo : {"postgresql://u:secret@[::1/x", "postgresql://u:secret@host:notaport/db",
                                     "password=secret host=/nonexistent port=1", "postgresql://u:secret@/db?host=/nonexistent"}) {
    auto c = real::connect(conninfo);
    ASSERT_FALSE(c.ok()) << conninfo;
    EXPECT_EQ(c.error().message.find("secret"), std::string::npos) << c.error().message;
  }
  // Messages name where a conninfo points, never the conninfo.
  EXPECT_EQ(real::describe_conninfo("postgresql://u:secret@h:5/db?sslmode=disable"), "host h, port 5, database db, user u");
  EXPECT_EQ(real::describe_conninfo("password=secret host=/run/pg"), "host /run/pg");
  EXPECT_EQ(real::describe_conninfo("postgresql://u:secret@[::1/x"), "a conninfo libpq cannot parse");
  EXPECT_EQ(real::describe_conninfo(""), "the PG* environment");
  const CliRun r = run({"confirm", source("scenarios/headspace/canonical.json"), "--pg", "postgresql://u:secret@[::1/x"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ((r.out + r.err).find("secret"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--pg: cannot connect"), std::string::npos) << r.err;
}

TEST(RealRobustness, ALostConnectionIsTellingFromAStatementsOwnFailure) {
  EXPECT_TRUE(real::connection_lost({"08006", "server closed the connection unexpectedly"}));
  EXPECT_TRUE(real::connection_lost({"57P01", "terminating connection due to administrator command"}));
  EXPECT_FALSE(real::connection_lost({"55P03", "could not obtain lock"}));
  EXPECT_FALSE(real::connection_lost({"23505", "duplicate key"}));
}

}  // namespace
}  // namespace lockstep
