// bench/scaling_table.cc: how the default explorer scales, as one table anyone can rerun.
//
//   build/bench/scaling_table [--max-seconds S] [--strategy NAME] [--only SUBSTRING]
//
// Rows: N headspace agents with one pre_tool_use hook each (N = 1..8, nothing shared), 2 and
// 3 agents with 2 hooks each plus a reaper over all of them, 3..6 hooks of one agent, the
// canonical scenario, and the classic DPOR benchmarks (lastzero, filesystem, indexer).
// Headspace rows are timed, as a team's first scenarios are. Each row is explored
// exhaustively (or until --max-seconds, default 120, then marked "bounded"); the figures are
// what the explorer reports: executions, sleep-set-blocked executions, steps, steps per
// second and seconds. Where GenMC v0.11.0 was measured on this machine, the
// ratio of the times is printed. Each row also gets `check --estimate`'s figure, sampled for
// --estimate-seconds (default 3) before the full run, and its ratio to the true count.
// With --jobs N (default 2; 1: none), each row is explored again on N threads (check
// --jobs), and the wall time and speed-up printed, with a check that the count is the same.
// A row whose system declares interchangeable actors (sim/explore/symmetry.h; on by default) is
// explored again with --symmetry off: its executions and time, and the ratio to symmetry on.
// Figures, not pass/fail: the machine is shared and noisy.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/model/scenario.h"
#include "lockstep/real/task_threads.h"
#include "lockstep/sim/check.h"

namespace {

using nlohmann::json;

struct Row {
  std::string name;
  json scenario;
  std::optional<double> genmc_s;  // GenMC v0.11.0 on this machine, where measured
};

json hook(int agent) { return {{"kind", "hook"}, {"route", "pre_tool_use"}, {"agent", agent}}; }

json headspace(const std::string& name, int agents, json actors, bool shared_pool = false) {
  return {{"format", "lockstep-scenario/1"},
          {"name", name},
          {"system", "headspace"},
          {"config", {{"agents", agents}, {"shared_pool", shared_pool}}},
          {"actors", std::move(actors)},
          {"explore", {{"strategy", "dpor"}, {"time", "timed"}}},
          {"expect", {{"verdict", "pass"}}}};
}

json bench(const std::string& program, int n) {
  return {{"format", "lockstep-scenario/1"},
          {"name", fmt::format("{}-{}", program, n)},
          {"system", "bench"},
          {"config", {{"program", program}, {"n", n}}},
          {"explore", {{"strategy", "dpor"}}},
          {"expect", {{"verdict", "pass"}}}};
}

std::vector<Row> rows() {
  std::vector<Row> out;
  for (int n = 1; n <= 8; ++n) {
    json actors = json::array();
    for (int a = 1; a <= n; ++a) actors.push_back(hook(a));
    out.push_back({fmt::format("{} independent agents, 1 hook each", n), headspace(fmt::format("independent-{}", n), n, actors), {}});
  }
  for (int n = 2; n <= 3; ++n) {
    json actors = json::array();
    json reaped = json::array();
    for (int a = 1; a <= n; ++a) {
      actors.push_back(hook(a));
      actors.push_back(hook(a));
      reaped.push_back(a);
    }
    actors.push_back({{"kind", "reaper"}, {"agents", reaped}, {"cycles", 1}});
    out.push_back({fmt::format("{} agents x 2 hooks + a reaper", n), headspace(fmt::format("hooks-reaper-{}", n), n, actors), {}});
  }
  {  // the issue-32 row: 835,396 executions, 83 s on its main
    json actors = json::array();
    for (int a = 1; a <= 2; ++a) {
      for (int h = 0; h < 3; ++h) actors.push_back(hook(a));
    }
    actors.push_back({{"kind", "reaper"}, {"agents", {1, 2}}, {"cycles", 1}});
    out.push_back({"2 agents x 3 hooks + a reaper", headspace("hooks3-reaper-2", 2, actors), {}});
  }
  for (int k = 3; k <= 7; ++k) {
    json actors = json::array();
    for (int h = 0; h < k; ++h) actors.push_back(hook(1));
    out.push_back({fmt::format("{} hooks of one agent", k), headspace(fmt::format("one-agent-{}", k), 1, actors), {}});
  }
  // One pool shared by the worker's hooks (the seed's deployment): each hook's first step
  // checks out of it, so identical hooks start in an order symmetry reduction can fix.
  for (int k = 2; k <= 3; ++k) {
    json actors = json::array();
    for (int h = 0; h < k; ++h) actors.push_back(hook(1));
    out.push_back({fmt::format("{} hooks of one agent, one shared pool", k), headspace(fmt::format("one-agent-{}-shared", k), 1, actors, true), {}});
  }
  {
    json actors = json::array();
    for (int a = 1; a <= 2; ++a) {
      actors.push_back(hook(a));
      actors.push_back(hook(a));
    }
    actors.push_back({{"kind", "reaper"}, {"agents", {1, 2}}, {"cycles", 1}});
    out.push_back({"2 agents x 2 hooks + a reaper, one shared pool", headspace("hooks-reaper-2-shared", 2, actors, true), {}});
  }
  json canonical = lockstep::load_scenario(std::string(LOCKSTEP_SOURCE_DIR) + "/scenarios/headspace/canonical.json").document;
  out.push_back({"headspace canonical", canonical, {}});
  out.push_back({"lastzero(10)", bench("lastzero", 10), {}});
  out.push_back({"lastzero(12)", bench("lastzero", 12), 0.96});
  out.push_back({"lastzero(15)", bench("lastzero", 15), 7.3});
  out.push_back({"lastzero(17)", bench("lastzero", 17), {}});
  out.push_back({"filesystem(18)", bench("filesystem", 18), {}});
  out.push_back({"filesystem(20)", bench("filesystem", 20), {}});
  out.push_back({"filesystem(22)", bench("filesystem", 22), 0.78});
  out.push_back({"indexer(15)", bench("indexer", 15), {}});
  out.push_back({"indexer(16)", bench("indexer", 16), {}});
  return out;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("How lockstep's explorer scales: one row per scenario shape, explored exhaustively.");
  double time_limit_s = 120;
  std::string strategy;
  std::string only;
  app.add_option("--max-seconds", time_limit_s, "bound on each row's exploration (then marked bounded)")->capture_default_str();
  app.add_option("--strategy", strategy, "explore with this strategy instead of each scenario's own (dpor)");
  app.add_option("--only", only, "run only the rows whose name contains this text");
  double estimate_seconds = 3;
  app.add_option("--estimate-seconds", estimate_seconds, "how long each row's estimate samples (0: no estimate)")
      ->capture_default_str();
  int jobs = 2;
  app.add_option("--jobs", jobs, "explore each row again on this many threads (1: not again)")->capture_default_str();
  std::string write_dir;
  app.add_option("--write-scenarios", write_dir,
                 "write each row's scenario file into this directory and explore nothing (to time another build's "
                 "`lockstep check FILE --json` on them)");
  CLI11_PARSE(app, argc, argv);

  if (!write_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(write_dir, ec);
    if (ec) {
      std::fprintf(stderr, "scaling_table: %s: cannot create the directory: %s\n", write_dir.c_str(), ec.message().c_str());
      return 2;
    }
  } else {
    std::printf("| scenario | executions | blocked | steps | steps/s | seconds | GenMC s (ratio) | estimate (ratio) | "
                "--jobs %d s (speed-up) | --symmetry off: executions, s (ratio) |\n", jobs);
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  }
  for (const Row& row : rows()) {
    if (!only.empty() && row.name.find(only) == std::string::npos) continue;
    if (!write_dir.empty()) {
      const std::string path = fmt::format("{}/{}.json", write_dir, row.scenario.at("name").get<std::string>());
      std::ofstream out(path);
      out << row.scenario.dump(2) << "\n";
      if (!out.flush()) {
        std::fprintf(stderr, "scaling_table: %s: cannot write the file\n", path.c_str());
        return 2;
      }
      std::printf("%s\n", path.c_str());
      continue;
    }
    const lockstep::Scenario scenario = lockstep::parse_scenario(row.scenario, row.name);
    std::optional<lockstep::sim::Estimate> estimate;
    if (estimate_seconds > 0) {
      lockstep::sim::CheckOptions o;
      const auto begun = std::chrono::steady_clock::now();
      o.elapsed_seconds = [begun] { return seconds_since(begun); };
      if (!strategy.empty()) o.overrides.settings.strategy = strategy;
      estimate = lockstep::sim::estimate_scenario(scenario, o, estimate_seconds);
    }
    lockstep::sim::CheckOptions options;
    const auto start = std::chrono::steady_clock::now();
    options.elapsed_seconds = [start] { return seconds_since(start); };
    options.overrides.settings.time_limit_s = time_limit_s;
    options.overrides.shrink = false;
    if (!strategy.empty()) options.overrides.settings.strategy = strategy;
    const auto report = lockstep::sim::check_scenario(scenario, options);
    const auto& stats = report.result.stats;
    const double s = stats.elapsed_s;
    const std::string genmc = row.genmc_s ? fmt::format("{:.2f} ({:.2f}x)", *row.genmc_s, s / *row.genmc_s) : "";
    const double truth = static_cast<double>(stats.executions + stats.redundant);
    const std::string estimated =
        !estimate ? ""
        : estimate->exact ? "exact"
                          : fmt::format("{:.0f} ({:.2f}x{})", estimate->executions, estimate->executions / truth,
                                        report.result.exhaustive ? "" : " of the bounded count");
    std::string threaded;
    if (jobs > 1) {
      lockstep::real::TaskThreads threads(jobs);
      lockstep::sim::CheckOptions o = options;
      const auto begun = std::chrono::steady_clock::now();
      o.elapsed_seconds = [begun] { return seconds_since(begun); };
      o.overrides.settings.jobs = jobs;
      o.spawn = threads.spawner();
      const auto again = lockstep::sim::check_scenario(scenario, o);
      const auto& t = again.result.stats;
      const bool same = !report.result.exhaustive || (again.result.exhaustive && t.executions == stats.executions &&
                                                      t.redundant == stats.redundant && t.steps == stats.steps);
      if (report.result.exhaustive) {
        threaded = fmt::format("{:.2f} ({:.2f}x){}", t.elapsed_s, t.elapsed_s > 0 ? s / t.elapsed_s : 0.0,
                               same ? "" : " COUNT DIFFERS");
      } else {  // both bounded by time: how many executions each ran in it
        threaded = fmt::format("bounded: {} executions ({:.2f}x)", t.executions,
                               stats.executions > 0 ? static_cast<double>(t.executions) / static_cast<double>(stats.executions) : 0.0);
      }
    }
    std::string unreduced = "none declared";
    if (report.result.symmetry.actors > 0) {
      lockstep::sim::CheckOptions o = options;
      const auto begun = std::chrono::steady_clock::now();
      o.elapsed_seconds = [begun] { return seconds_since(begun); };
      o.overrides.settings.symmetry = false;
      const auto off = lockstep::sim::check_scenario(scenario, o);
      const auto& f = off.result.stats;
      const double ratio = stats.executions > 0 ? static_cast<double>(f.executions) / static_cast<double>(stats.executions) : 0;
      unreduced = report.result.exhaustive && off.result.exhaustive
                      ? fmt::format("{} {} actors: {}, {:.2f} s ({:.2f}x executions, {:.2f}x time)",
                                    report.result.symmetry.actors, "symmetric", f.executions, f.elapsed_s, ratio,
                                    s > 0 ? f.elapsed_s / s : 0.0)
                      : fmt::format("{} symmetric actors; {}: {} executions{}", report.result.symmetry.actors,
                                    off.result.exhaustive ? "exhaustive" : "bounded", f.executions,
                                    report.result.exhaustive ? "" : " in the same time");
    }
    std::printf("| %s | %s%llu | %llu | %llu | %.2f M | %.2f | %s | %s | %s | %s |\n", row.name.c_str(),
                report.result.exhaustive ? "" : "bounded: ", static_cast<unsigned long long>(stats.executions),
                static_cast<unsigned long long>(stats.redundant), static_cast<unsigned long long>(stats.steps),
                s > 0 ? static_cast<double>(stats.steps) / s / 1e6 : 0.0, s, genmc.c_str(), estimated.c_str(),
                threaded.c_str(), unreduced.c_str());
    std::fflush(stdout);
  }
  return 0;
}
