// Checkpoints (check --checkpoint / --resume, sim/explore/checkpoint.h): a search cut into pieces
// by its execution bound and resumed from its checkpoint each time explores exactly what one
// uninterrupted run does; a checkpoint that does not fit the search is refused as bad input.
// And what a long search shows while it runs: progress lines and check --estimate.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/command_support.h"
#include "lockstep/cli/commands.h"
#include "lockstep/model/json_cursor.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

std::string scenario(const std::string& name) { return fmt::format("{}/scenarios/{}", lockstep_source_dir(), name); }

nlohmann::json last_json(const testing::CliRun& r) {
  const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << "exit " << r.code << ": " << r.out << r.err;
  return j.is_discarded() ? nlohmann::json::object() : j;
}

class Checkpoint : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("checkpoint_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
            std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  testing::CliRun check(const std::string& file, std::vector<std::string> more) const {
    std::vector<std::string> args{"check", file.starts_with("/") ? file : scenario(file), "--json", "--no-shrink", "--trace-out", path("trace.json")};
    args.insert(args.end(), more.begin(), more.end());
    return testing::run_cli_in_process(args);
  }

  fs::path dir_;
};

// Each scenario in pieces of a quarter of its executions: optimal dpor, dpor that begins
// again as source-dpor, a failure found late, a search that goes on past failures, dfs.
TEST_F(Checkpoint, ASearchResumedThreeTimesExploresWhatOneRunDoes) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"bench/lastzero-5.json", {}},
      {"headspace/canonical.json", {}},
      {"bench/indexer-13.json", {}},
      {"dal/write-protocol.json", {}},
      {"headspace/bug-skill-no-refresh.json", {}},
      {"headspace/t05-pool-exhaustion.json", {}},
      {"bench/lockinc-3.json", {"--strategy", "dfs"}},
      {"bench/lockinc-3.json", {"--strategy", "source-dpor"}},
  };
  for (const auto& [file, flags] : cases) {
    SCOPED_TRACE(file);
    const testing::CliRun whole = check(file, flags);
    const nlohmann::json serial = last_json(whole);
    const std::uint64_t n = serial["executions"].get<std::uint64_t>() + serial["redundant"].get<std::uint64_t>();
    ASSERT_GE(n, 4u) << whole.out;
    const std::string cp = path("search.checkpoint.json");
    fs::remove(cp);
    std::vector<std::string> piece = flags;
    for (const std::string& s : {std::string("--max-executions"), std::to_string(n / 4), std::string("--checkpoint"), cp}) {
      piece.push_back(s);
    }
    nlohmann::json last;
    int runs = 0;
    for (;;) {
      std::vector<std::string> args = piece;
      if (runs > 0) args.insert(args.end(), {"--resume", cp});
      const testing::CliRun r = check(file, args);
      ++runs;
      last = last_json(r);
      if (last["stop_reason"].get<std::string>().rfind("bound of", 0) != 0 || runs > 10) break;
      ASSERT_TRUE(fs::exists(cp)) << r.err;
    }
    EXPECT_GE(runs, 4) << "three resumes at least";
    for (const char* key : {"verdict", "executions", "redundant", "failures", "steps", "violation", "message"}) {
      EXPECT_EQ(last[key], serial[key]) << key;
    }
    EXPECT_TRUE(last["resumed"].get<bool>());
    // The finished search's checkpoint gives its result again, without exploring.
    std::vector<std::string> resume = flags;
    resume.insert(resume.end(), {"--resume", cp});
    const nlohmann::json again = last_json(check(file, resume));
    EXPECT_EQ(again["executions"], serial["executions"]);
    EXPECT_EQ(again["verdict"], serial["verdict"]);
  }
}

TEST_F(Checkpoint, ACheckpointThatDoesNotFitIsRefused) {
  const std::string cp = path("lastzero.checkpoint.json");
  const testing::CliRun first = check("bench/lastzero-5.json", {"--max-executions", "10", "--checkpoint", cp});
  ASSERT_TRUE(fs::exists(cp)) << first.err;
  auto refused = [&](const std::string& file, std::vector<std::string> flags, const std::string& where) {
    SCOPED_TRACE(where);
    flags.insert(flags.end(), {"--resume", cp});
    const testing::CliRun r = check(file, flags);
    EXPECT_EQ(r.code, kExitBadInput) << r.out << r.err;
    EXPECT_NE(r.err.find(cp + ": " + where), std::string::npos) << r.err;
  };
  refused("bench/lockinc-3.json", {}, "/scenario/name");
  refused("bench/lastzero-5.json", {"--max-steps", "77"}, "/settings/max_steps");
  refused("bench/lastzero-5.json", {"--strategy", "dfs"}, "/settings/strategy");
  refused("bench/lastzero-5.json", {"--unfair"}, "/settings/fair");
  nlohmann::json doc = nlohmann::json::parse(std::ifstream(cp));
  const nlohmann::json good = doc;
  doc["lockstep"] = "0.0.1";
  std::ofstream(cp) << doc.dump();
  refused("bench/lastzero-5.json", {}, "/lockstep");
  doc = good;
  doc["search"]["strategy"]["path"][0] = {false, 1};
  std::ofstream(cp) << doc.dump();
  refused("bench/lastzero-5.json", {}, "/search");
  std::ofstream(cp) << "{\"format\": \"something else\"}";
  refused("bench/lastzero-5.json", {}, "/format");
  // A strategy without checkpoints says so.
  const testing::CliRun random = check("bench/lastzero-5.json", {"--strategy", "random", "--checkpoint", cp});
  EXPECT_EQ(random.code, kExitBadInput);
  EXPECT_NE(random.err.find("strategy random has no checkpoints"), std::string::npos) << random.err;
}

// The progress line: executions, rate, and the estimate of the total and the time left.
TEST(Progress, TheLineEstimatesTheTotalAndTheTimeLeft) {
  sim::ExploreStats s;
  s.executions = 250000;
  s.elapsed_s = 5;
  s.explored_fraction = 0.25;
  EXPECT_EQ(progress_line("x", s),
            "x: 250000 executions, 50000/s, 0 failures, about 1.00M in all (25%), about 15 s left, 5.0 s");
  s.explored_fraction = 0;  // a strategy that cannot tell: no estimate
  EXPECT_EQ(progress_line("x", s), "x: 250000 executions, 50000/s, 0 failures, 5.0 s");
  s.explored_fraction = 0.25;  // a projection still moving: no time is promised
  EXPECT_EQ(progress_line("x", s, /*settled=*/false),
            "x: 250000 executions, 50000/s, 0 failures, the total not settled yet (so far about 1.00M in all), 5.0 s");
  EXPECT_THROW(parse_progress_mode("sometimes"), InputError);
  EXPECT_EQ(parse_progress_mode("never"), ProgressMode::never);
}

// The projected total settles once three or more projections over the last max(10 s, a
// quarter of the run) agree within 25%: a projection that keeps rising (a search tree's early
// guesses run low) never does, one that holds does.
TEST(Progress, AnEstimateSettlesOnlyOnceItStopsMoving) {
  TotalEstimate rising;
  for (int t = 0; t <= 120; ++t) rising.add(t, 1000.0 * (1 + t / 10.0));  // doubles every 10 s
  EXPECT_FALSE(rising.settled());
  TotalEstimate holding;
  for (int t = 0; t <= 9; ++t) holding.add(t, 5000);
  EXPECT_FALSE(holding.settled()) << "10 s of projections are needed";
  holding.add(10, 5100);
  holding.add(11, 4900);
  EXPECT_TRUE(holding.settled());
  holding.add(12, 9000);  // it moved again
  EXPECT_FALSE(holding.settled());
}

// The explored share is in (0, 1], below 1 while branches are known to be left (it may
// drop when races add some), and 1 when the search ends: dpor, source-dpor and dfs.
TEST(Progress, TheExploredShareEndsAtOne) {
  for (const auto& [strategy, file] : {std::pair{"dpor", "bench/lastzero-5.json"},
                                      std::pair{"source-dpor", "bench/lastzero-5.json"},
                                      std::pair{"dfs", "bench/lockinc-3.json"}}) {
    SCOPED_TRACE(strategy);
    const Scenario lastzero = load_scenario(scenario(file));
    auto s = sim::make_strategy(strategy, 1);
    sim::ExploreOptions options;
    options.progress_interval_executions = 1;
    double last = 0;
    std::uint64_t calls = 0, below_one = 0;
    options.progress = [&](const sim::ExploreStats& stats) {
      EXPECT_GT(stats.explored_fraction, 0.0);
      EXPECT_LE(stats.explored_fraction, 1.0);
      below_one += stats.explored_fraction < 1 ? 1 : 0;
      last = stats.explored_fraction;
      ++calls;
    };
    const sim::ExploreResult r = sim::explore_system(*lastzero.configured, *s, options);
    EXPECT_TRUE(r.exhaustive);
    EXPECT_GT(calls, r.stats.executions);  // each execution's and the end's
    EXPECT_GT(below_one, r.stats.executions / 2);
    EXPECT_EQ(last, 1.0);
  }
}

// check --estimate: exact when the search finishes while it samples; otherwise at least
// what it sampled, with an interval around the estimate.
TEST_F(Checkpoint, EstimateSamplesTheSearch) {
  const nlohmann::json small = last_json(check("bench/lastzero-10.json", {"--estimate", "--estimate-seconds", "30"}));
  EXPECT_TRUE(small["estimate"]["exact"].get<bool>());
  EXPECT_EQ(small["estimate"]["executions"].get<double>(), 3328);
  nlohmann::json sixteen = nlohmann::json::parse(std::ifstream(scenario("bench/lastzero-10.json")));
  sixteen["name"] = "lastzero-16";
  sixteen["config"]["n"] = 16;  // 311,296 executions, some seconds
  std::ofstream(path("lastzero-16.json")) << sixteen.dump();
  const nlohmann::json big = last_json(check(path("lastzero-16.json"), {"--estimate", "--estimate-seconds", "0.3"}));
  const nlohmann::json& e = big["estimate"];
  if (!e["exact"].get<bool>()) {  // a slow machine may still finish; a fast one never does
    EXPECT_GE(e["executions"].get<double>(), e["sampled_executions"].get<double>());
    EXPECT_LE(e["low"].get<double>(), e["executions"].get<double>());
    EXPECT_GE(e["high"].get<double>(), e["executions"].get<double>());
  }
  const testing::CliRun random = check("bench/lastzero-10.json", {"--estimate", "--strategy", "random"});
  EXPECT_EQ(random.code, kExitBadInput);
  EXPECT_NE(random.err.find("samples: there is no total to estimate"), std::string::npos) << random.err;
}

}  // namespace
}  // namespace lockstep::cli
