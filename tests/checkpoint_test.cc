// Checkpoints (check --checkpoint / --resume, sim/checkpoint.h): a search cut into pieces
// by its execution bound and resumed from its checkpoint each time explores exactly what one
// uninterrupted run does; a checkpoint that does not fit the search is refused as bad input.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/commands.h"
#include "test_support.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

std::string scenario(const std::string& name) { return std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/" + name; }

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
    std::vector<std::string> args{"check", scenario(file), "--json", "--no-shrink", "--trace-out", path("trace.json")};
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

}  // namespace
}  // namespace lockstep::cli
