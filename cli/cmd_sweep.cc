// `lockstep sweep DIR...`: check every scenario under each DIR; write summary.md,
// results.json, the failing traces and their HTML views.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/command_support.h"
#include "lockstep/cli/commands.h"
#include "lockstep/cli/interrupt.h"
#include "lockstep/cli/report.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/scenario.h"
#include "lockstep/real/wall_clock.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::vector<std::string> dirs;
  std::string out = "reports";
  bool json = false;
  std::string shard;  // "I/N" or ""
  std::optional<std::string> junit;
  std::string progress = "auto";
  int jobs = 1;
  std::optional<std::string> symmetry;
};

// What one sweep checks, and how: the files (each with its path relative to its DIR,
// which names its trace) and the shard.
struct SweepPlan {
  const SweepArgs& args;
  sim::StrategyOptions::Shard shard;
  std::vector<std::pair<std::string, std::string>> files;  // (file, path relative to its DIR)
};

// Whether a JSON file found in a directory is lockstep's own output, not a scenario: a
// trace (its format is written first) or a sweep's results.json beside its summary.md.
bool own_output(const fs::path& file) {
  std::error_code ec;
  if (file.filename() == "results.json" && fs::exists(file.parent_path() / "summary.md", ec)) return true;
  std::ifstream in(file, std::ios::binary);
  std::string head(256, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  return head.find("\"lockstep-trace/") != std::string::npos;
}

// The scenario files under `dir` (searched recursively for *.json), sorted; or `dir` itself.
// In a directory, the sweep's own output directory and lockstep's output files are skipped
// (counted in `skipped`): `sweep .` after a `check` there does not read its traces.
std::vector<std::string> scenario_files(const std::string& dir, const fs::path& out, std::size_t& skipped) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (ec || !fs::exists(status)) throw InputError(fmt::format("{}: no such file or directory", dir));
  if (fs::is_regular_file(status)) return {dir};
  if (!fs::is_directory(status)) throw InputError(fmt::format("{}: not a regular file or a directory", dir));
  std::vector<std::string> files;
  const fs::path own = fs::weakly_canonical(out, ec);
  for (fs::recursive_directory_iterator it(dir, ec), end; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code kind;
    if (it->is_directory(kind) && fs::weakly_canonical(it->path(), kind) == own) {
      it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file(kind) || (it->path().extension() != ".json" && it->path().extension() != ".spec")) continue;
    if (own_output(it->path())) {
      ++skipped;
    } else {
      files.push_back(it->path().string());
    }
  }
  if (ec) throw InputError(fmt::format("{}: cannot list the directory: {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

// Every file of the sweep, DIR by DIR, with its path relative to its DIR.
std::vector<std::pair<std::string, std::string>> sweep_files(const std::vector<std::string>& dirs, const std::string& out,
                                                             std::ostream& err) {
  std::vector<std::pair<std::string, std::string>> files;
  std::size_t skipped = 0;
  for (const auto& dir : dirs) {
    for (const auto& f : scenario_files(dir, out, skipped)) {
      files.emplace_back(f, fs::is_regular_file(dir) ? fs::path(f).filename().string() : fs::relative(f, dir).string());
    }
  }
  if (skipped > 0) err << fmt::format("sweep: skipped {} JSON files that lockstep wrote (traces, results)\n", skipped);
  return files;
}

// With shards: a shardable strategy (dfs) splits the scenario's search tree; others take whole
// scenarios, one shard each, by their place (i) in the sorted list of files. False when
// scenario i belongs to another shard.
bool take_shard(const SweepPlan& p, const Scenario& scenario, std::size_t i, sim::CheckOverrides& overrides,
                CheckedScenario& c) {
  if (p.shard.count <= 1) return true;
  const sim::StrategyInfo* strategy = sim::find_strategy(scenario.explore.strategy);
  if (strategy != nullptr && sim::strategy_is_shardable(*strategy)) {
    overrides.shard = p.shard;
    c.shard_mode = ShardMode::inside;
  } else if (static_cast<int>(i % static_cast<std::size_t>(p.shard.count)) != p.shard.index) {
    return false;
  } else {
    c.shard_mode = ShardMode::whole;
  }
  c.shard = p.args.shard;
  return true;
}

// Writes a checked scenario's trace under OUT/traces (its witnesses beside it), with the
// HTML view of a failing one.
void save_traces(const SweepPlan& p, const std::string& relative, const sim::CheckReport& report, CheckedScenario& c,
                 const ReportContext& context) {
  // A trace is JSON whatever its scenario's format: x/y.spec's is traces/x/y.json.
  const std::string path = (fs::path(p.args.out) / "traces" / fs::path(relative).replace_extension(".json")).string();
  if (report.trace) {
    sim::save_trace(*report.trace, path);
    c.trace_path = path;
    c.report_path = fs::path(path).replace_extension(".html").string();
    write_html(*report.trace, path, *c.report_path, context);
  }
  c.witness_paths = save_witnesses(report, path);
}

// Checks file i of the sweep and prints its result; gives its results.json entry, or
// nothing when it belongs to another shard. Bad input is its entry, not an exception.
std::optional<nlohmann::json> sweep_one(const SweepPlan& p, std::size_t i, Progress& progress, CommandContext& ctx) {
  const auto& [file, relative] = p.files[i];
  CheckedScenario c;
  c.file = file;
  std::optional<Scenario> scenario;
  std::optional<sim::CheckReport> report;
  try {
    scenario = load_scenario(file);
    sim::CheckOverrides overrides;
    overrides.settings.jobs = p.args.jobs;
    if (p.args.symmetry) overrides.settings.symmetry = *p.args.symmetry == "on";
    if (!take_shard(p, *scenario, i, overrides, c)) return std::nullopt;
    report = run_one(*scenario, overrides, progress, fmt::format("[{}/{}] {}", i + 1, p.files.size(), scenario->name));
    c.scenario = &*scenario;
    c.report = &*report;
    save_traces(p, relative, *report, c, ctx.report);
  } catch (const InputError& e) {
    c.scenario = nullptr;
    c.input_error = e.what();
  }
  nlohmann::json j = to_json(c, ctx.report);
  if (p.args.json) {
    ctx.out << j.dump() << '\n';
  } else {
    print_human(ctx.out, c, ctx.report, 0);
  }
  ctx.out << std::flush;
  return j;
}

// Writes the sweep's reports and its summary line; `run`: the files begun.
int finish_sweep(const SweepPlan& p, const std::vector<nlohmann::json>& results, std::size_t run, double elapsed,
                 std::ostream& err) {
  const std::size_t total = p.files.size();
  const std::string note =
      interrupted() ? fmt::format("Interrupted during scenario {} of {}: its search was cut short (verdict incomplete), "
                                  "the {} after it were not run.", run, total, total - run)
                    : "";
  write_reports(p.args.out, results, elapsed, p.args.junit, note);
  if (!note.empty()) err << "sweep: " << note << '\n';
  std::size_t ok = 0;
  for (const auto& r : results) ok += r["as_expected"].get<bool>() ? 1 : 0;
  err << fmt::format("sweep: {} scenarios, {} as expected, {} not, in {:.2f} s; reports in {}\n", results.size(),
                     ok, results.size() - ok, elapsed, (fs::path(p.args.out) / "summary.md").string());
  return sweep_exit_code(results);
}

int cmd_sweep(const SweepArgs& a, CommandContext& ctx) {
  const sim::StrategyOptions::Shard shard = a.shard.empty() ? sim::StrategyOptions::Shard{} : parse_shard(a.shard);
  const real::Stopwatch clock;
  Progress progress(ctx.err, clock, parse_progress_mode(a.progress));
  const SweepPlan plan{a, shard, sweep_files(a.dirs, a.out, ctx.err)};
  fs::create_directories(a.out);
  std::vector<nlohmann::json> results;
  std::size_t run = 0;
  for (std::size_t i = 0; i < plan.files.size() && !interrupted(); ++i) {
    run = i + 1;
    if (auto j = sweep_one(plan, i, progress, ctx)) results.push_back(std::move(*j));
  }
  return finish_sweep(plan, results, run, clock.elapsed_seconds(), ctx.err);
}

}  // namespace

void add_sweep_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* s = app.add_subcommand("sweep", "check every scenario under each DIR; write summary.md, results.json, traces");
  s->add_option("dirs", args->dirs, "directories (searched recursively for *.json) or files")->required();
  s->add_option("--out", args->out, "output directory")->capture_default_str();
  s->add_flag("--json", args->json, "print one JSON object per scenario");
  s->add_option("--progress", args->progress, kProgressHelp)->check(CLI::IsMember({"auto", "always", "never"}));
  s->add_option("--shard", args->shard,
                "I/N: run shard I of N (1-based). dfs scenarios split their search tree, others go whole to one "
                "shard; lockstep merge combines the shards' results.json into one run's");
  s->add_option("--jobs,-j", args->jobs, "threads for each scenario's search (dpor, dfs, random), as check --jobs (default 1)")
      ->check(CLI::Range(1, kMaxJobs))
      ->capture_default_str();
  s->add_option("--symmetry", args->symmetry, "on|off: symmetry reduction, as check --symmetry (default: each scenario's)")
      ->check(CLI::IsMember({"on", "off"}));
  s->add_option("--junit", args->junit, "also write JUnit XML (one test case per scenario) to this file");
  s->callback([&context, args] { context.command = [&context, args] { return finished(cmd_sweep(*args, context)); }; });
}

}  // namespace lockstep::cli
