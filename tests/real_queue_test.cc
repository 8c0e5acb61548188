// One dpor search split among processes through the PostgreSQL work queue (check --queue,
// real/pg_work_queue.h), against the throwaway server (LOCKSTEP_PG_CONNINFO): four local
// processes (a coordinator and three workers) plus `merge` give the one process's count
// and verdict; a worker whose settings differ from the run's is refused (exit 2), as is an
// unreachable server. The in-memory form of the exchange, on every scenario, is in
// parallel_test.cc.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

namespace fs = std::filesystem;

// 3 + 2 headspace hooks and a reaper: 14,016 executions, about a second; past the 1,000
// the walk explores alone, it publishes subtrees.
nlohmann::json hooks_scenario() {
  nlohmann::json hook = {{"agent", 1}, {"kind", "hook"}, {"route", "pre_tool_use"}};
  nlohmann::json other = {{"agent", 2}, {"kind", "hook"}, {"route", "pre_tool_use"}};
  return {{"format", "lockstep-scenario/1"},
          {"name", "queue-hooks-3-2"},
          {"system", "headspace"},
          {"actors", {hook, hook, hook, other, other, {{"agents", {1, 2}}, {"cycles", 1}, {"kind", "reaper"}}}},
          {"config", {{"agents", 2}}},
          {"expect", {{"verdict", "pass"}}},
          {"explore", {{"strategy", "dpor"}, {"time", "timed"}}}};
}

class Queue : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* conninfo = std::getenv("LOCKSTEP_PG_CONNINFO");
    if (conninfo == nullptr) GTEST_SKIP() << "LOCKSTEP_PG_CONNINFO is not set: no throwaway PostgreSQL on this machine";
    queue_ = conninfo;
    dir_ = fs::temp_directory_path() / fmt::format("lockstep-queue-test-{}", getpid());
    fs::create_directories(dir_);
    scenario_ = (dir_ / "hooks.json").string();
    std::ofstream(scenario_) << hooks_scenario().dump(1);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // `check` as shard `i` of `n` of run `run`, its JSON written to dir_/wI.json.
  testing::CommandResult shard(int i, int n, const std::string& run, const std::string& extra = "") {
    const std::string out = (dir_ / fmt::format("w{}.json", i)).string();
    testing::CommandResult r = testing::run_lockstep(
        fmt::format("check {} --queue '{}' --shard {}/{} --run-id {} --json --progress never {} > {}", scenario_, queue_,
                    i, n, run, extra, out));
    std::ifstream f(out);
    r.out = std::string(std::istreambuf_iterator<char>(f), {}) + r.out;
    return r;
  }

  std::string queue_, scenario_;
  fs::path dir_;
};

TEST_F(Queue, FourProcessesAndMergeGiveTheOneProcessCount) {
  const testing::CommandResult one = testing::run_lockstep(fmt::format("check {} --json --progress never", scenario_));
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const nlohmann::json serial = nlohmann::json::parse(one.out);
  const std::string run = fmt::format("queue-test-{}", getpid());
  std::vector<std::future<testing::CommandResult>> workers;
  for (int i = 2; i <= 4; ++i) workers.push_back(std::async(std::launch::async, [this, i, run] { return shard(i, 4, run); }));
  const testing::CommandResult coordinator = shard(1, 4, run);
  ASSERT_EQ(coordinator.exit_code, 0) << coordinator.out;
  for (auto& w : workers) {
    const testing::CommandResult r = w.get();
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(nlohmann::json::parse(r.out)["shard_mode"], "worker") << r.out;
  }
  const nlohmann::json c = nlohmann::json::parse(coordinator.out);
  EXPECT_EQ(c["executions"], serial["executions"]);
  EXPECT_EQ(c["verdict"], serial["verdict"]);
  EXPECT_EQ(c["steps"], serial["steps"]);
  EXPECT_GT(c["queue"]["published"].get<std::uint64_t>(), 0u) << coordinator.out;

  const testing::CommandResult merged = testing::run_lockstep(fmt::format(
      "merge {0}/w1.json {0}/w2.json {0}/w3.json {0}/w4.json --out {0}/merged --json", dir_.string()));
  ASSERT_EQ(merged.exit_code, 0) << merged.out;
  const nlohmann::json m = nlohmann::json::parse(merged.out.substr(0, merged.out.find('\n')));  // then its summary line
  EXPECT_EQ(m["executions"], serial["executions"]) << merged.out;
  EXPECT_EQ(m["verdict"], "pass");
  EXPECT_EQ(m["queue"]["workers"], 3) << merged.out;
  // What the workers explored is what the walk took from them plus the redundant rest.
  EXPECT_EQ(m["queue"]["worker_executions"].get<std::uint64_t>(),
            m["queue"]["remote_taken_executions"].get<std::uint64_t>() + m["queue"]["redundant_executions"].get<std::uint64_t>());
}

// A job runner's time limit cuts the run: the coordinator's checkpoint (the walk's state;
// what workers held and the walk had not reached is explored again) goes on in the next
// run, with a new run id and new workers. Cut three times, the search gives the serial count.
TEST_F(Queue, ARunCutThreeTimesAndResumedGivesTheSerialCount) {
  const testing::CommandResult one = testing::run_lockstep(fmt::format("check {} --json --progress never", scenario_));
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const nlohmann::json serial = nlohmann::json::parse(one.out);
  const std::string checkpoint = (dir_ / "run.ckpt").string();
  nlohmann::json last;
  for (int round = 1; round <= 4; ++round) {
    const std::string run = fmt::format("queue-resume-{}-{}", getpid(), round);
    std::string flags = fmt::format("--checkpoint {}", checkpoint);
    if (round > 1) flags += fmt::format(" --resume {}", checkpoint);
    if (round < 4) flags += fmt::format(" --max-executions 4000");
    auto worker = std::async(std::launch::async, [this, run, flags] { return shard(2, 2, run, flags); });
    const testing::CommandResult coordinator = shard(1, 2, run, flags);
    const testing::CommandResult w = worker.get();
    EXPECT_EQ(w.exit_code, 0) << w.out;
    ASSERT_EQ(coordinator.exit_code, round < 4 ? 1 : 0) << coordinator.out;  // cut: incomplete
    // Its JSON line, among what it printed on stderr (the checkpoint written).
    const std::size_t at = coordinator.out.find("\n{") + 1;
    const std::string line = coordinator.out.substr(coordinator.out[0] == '{' ? 0 : at);
    last = nlohmann::json::parse(line.substr(0, line.find('\n')));
    EXPECT_EQ(last["resumed"], round > 1) << coordinator.out;
    if (round < 4) {
      EXPECT_EQ(last["executions"], 4000 * round) << coordinator.out;
    }
  }
  EXPECT_EQ(last["executions"], serial["executions"]);
  EXPECT_EQ(last["steps"], serial["steps"]);
  EXPECT_EQ(last["verdict"], "pass");
  EXPECT_EQ(last["exhaustive"], true);
}

TEST_F(Queue, AWorkerWithOtherSettingsIsRefused) {
  const std::string run = fmt::format("queue-settings-{}", getpid());
  // Leaves the run's row, over (the bound makes it incomplete: exit 1).
  ASSERT_EQ(shard(1, 2, run, "--max-executions 10").exit_code, 1);
  const testing::CommandResult w = shard(2, 2, run, "--max-steps 77");
  EXPECT_EQ(w.exit_code, 2) << w.out;
  EXPECT_NE(w.out.find("other settings"), std::string::npos) << w.out;
}

TEST(QueueInput, AnUnreachableServerOrAMissingRunIdIsBadInput) {
  const std::string s = std::string(lockstep_source_dir()) + "/scenarios/bench/readers-8.json";
  testing::CommandResult r =
      testing::run_lockstep("check " + s + " --queue 'host=/nonexistent/socket port=1' --shard 1/2 --run-id x");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("cannot connect"), std::string::npos) << r.out;
  r = testing::run_lockstep("check " + s + " --queue 'host=/nonexistent/socket port=1' --shard 1/2");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("--run-id"), std::string::npos) << r.out;
  r = testing::run_lockstep("check " + s + " --strategy dfs --queue 'host=/nonexistent/socket port=1' --shard 1/2 --run-id x");
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

}  // namespace
}  // namespace lockstep
