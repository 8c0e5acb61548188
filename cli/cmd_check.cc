// `lockstep check SCENARIO`: explore one scenario and compare its verdict with its expect.
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "lockstep/cli/command_support.h"
#include "lockstep/cli/commands.h"
#include "lockstep/cli/interrupt.h"
#include "lockstep/cli/report.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/scenario.h"
#include "lockstep/model/verdict.h"
#include "lockstep/real/pg_work_queue.h"
#include "lockstep/real/task_threads.h"
#include "lockstep/real/wall_clock.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {
namespace {

// Interleavings longer than this are not printed by `check` (replay prints them all).
constexpr std::size_t kMaxPrintedEvents = 200;
// check --queue: subtrees published and not yet reached by the walk, per worker. With 2 per
// worker the walk reached most of them before a worker began (6 hooks of one agent, 3
// processes: the workers idled); 32 keeps them busy, at 5-8% redundant executions.
constexpr int kQueuedPerWorker = 32;

struct CheckArgs {
  std::string scenario;
  std::optional<std::string> strategy;
  std::optional<std::uint64_t> seed, max_executions, max_steps;
  std::optional<double> time_limit_s;
  std::optional<int> preemptions;
  std::optional<int> depth;
  std::string shard;
  bool iterative = false;
  bool no_shrink = false;
  bool unfair = false;
  std::optional<std::string> symmetry;
  std::optional<std::uint64_t> livelock_steps;
  std::optional<std::string> trace_out;
  bool json = false;
  CheckpointFiles checkpoints;
  std::string progress = "auto";
  bool estimate = false;
  double estimate_seconds = 3;
  int jobs = 1;
  std::optional<std::string> queue;  // check --queue CONNINFO: the search split among processes
  std::string run_id;
};

// The trace's file name for a scenario file: its own name, with .json.
std::string trace_file_of(const std::string& scenario_file) {
  return std::filesystem::path(scenario_file).stem().string() + ".json";
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& s : sim::strategy_catalog()) names.emplace_back(s.name);
  return names;
}

// After Ctrl-C: which phases of a check finished and which were cut.
std::string interrupted_phases(const sim::CheckReport& report) {
  auto state = [](bool cut) { return cut ? "cut short" : "finished"; };
  std::string text = fmt::format("interrupted: the search {}", state(report.result.interrupted));
  if (report.trace) {
    const bool shrink_cut = report.trace->shrunk && report.trace->shrunk->out_of_budget;
    const bool cause_cut = report.trace->cause && (!report.trace->cause->computed || !report.trace->cause->complete);
    text += fmt::format(", shrinking {}, the cause analysis {}", report.trace->shrunk ? state(shrink_cut) : "not run",
                        state(cause_cut));
  }
  return text + "; everything printed above was finished";
}

// The command line's options over the scenario's own.
sim::CheckOverrides overrides_of(const CheckArgs& a) {
  sim::CheckOverrides overrides{.settings = {.strategy = a.strategy,
                                             .seed = a.seed,
                                             .max_executions = a.max_executions,
                                             .max_steps = a.max_steps,
                                             .time_limit_s = a.time_limit_s,
                                             .max_preemptions = a.preemptions,
                                             .pct_depth = a.depth,
                                             .livelock_steps = a.livelock_steps,
                                             .jobs = a.jobs}};
  overrides.iterative = a.iterative;
  overrides.shrink = !a.no_shrink;
  if (a.unfair) overrides.settings.fair = false;
  if (a.symmetry) overrides.settings.symmetry = *a.symmetry == "on";
  if (!a.shard.empty() && !a.queue) overrides.shard = parse_shard(a.shard);
  return overrides;
}

// check --estimate: the search's size, from a few seconds of it.
int cmd_estimate(const CheckArgs& a, const Scenario& scenario, Progress& progress, const real::Stopwatch& clock,
                 std::ostream& out) {
  sim::CheckOptions options;
  options.overrides = overrides_of(a);
  options.elapsed_seconds = [&clock] { return clock.elapsed_seconds(); };
  options.progress = progress.callback(scenario.name);
  options.stop_requested = [] { return interrupted(); };
  const sim::Estimate e = sim::estimate_scenario(scenario, options, a.estimate_seconds);
  progress.clear();
  if (a.json) {
    out << nlohmann::json{{"scenario", scenario.name},
                          {"file", a.scenario},
                          {"estimate", {{"executions", e.executions}, {"low", e.low}, {"high", e.high},
                                        {"seconds", e.seconds}, {"exact", e.exact}, {"sampled_executions", e.sampled},
                                        {"sampled_seconds", e.sampled_seconds}}}}
               .dump()
        << '\n';
    return kExitOk;
  }
  if (e.exact) {
    out << fmt::format("{}: exactly {} executions (the search finished in {:.1f} s)\n", scenario.name, e.sampled,
                       e.sampled_seconds);
    return kExitOk;
  }
  out << fmt::format("{}: about {} executions (between {} and {}), about {:.0f} s at the sampled rate; sampled {} "
                     "executions in {:.1f} s\n",
                     scenario.name, approx_count(e.executions), approx_count(e.low), approx_count(e.high), e.seconds,
                     e.sampled, e.sampled_seconds);
  return kExitOk;
}

// check --queue with --shard I/N, I > 1: a worker of the run (sim/explore/subtree_exchange.h). It
// explores the subtrees the coordinator (shard 1) publishes until the run is over, and
// reports what it explored; the search's result is the coordinator's.
int cmd_worker(const CheckArgs& a, const Scenario& scenario, const sim::StrategyOptions::Shard& shard,
               const std::string& settings, const real::Stopwatch& clock, std::ostream& out, std::ostream& err) {
  sim::CheckOptions options;
  options.overrides = overrides_of(a);
  options.elapsed_seconds = [&clock] { return clock.elapsed_seconds(); };
  options.stop_requested = [] { return interrupted(); };
  std::optional<real::TaskThreads> threads;  // --jobs: each subtree's own threads
  if (a.jobs > 1) options.spawn = threads.emplace(a.jobs).spawner();
  const auto source = real::serve_run(*a.queue, a.run_id, settings, options.stop_requested);
  const sim::WorkerReport w = sim::serve_scenario(scenario, options, *source);
  const double elapsed = clock.elapsed_seconds();
  if (a.json) {
    out << nlohmann::json{{"scenario", scenario.name},
                          {"file", a.scenario},
                          {"shard", a.shard},
                          {"shard_mode", shard_mode_name(ShardMode::worker)},
                          {"run_id", a.run_id},
                          {"verdict", "incomplete"},  // a worker judges nothing: the coordinator does
                          {"expected_verdict", verdict_name(scenario.expect.verdict)},
                          {"as_expected", true},
                          {"exhaustive", false},
                          {"elapsed_s", elapsed},
                          {"worker", {{"tasks", w.tasks}, {"explored", w.explored}, {"cut", w.cut}}}}
               .dump()
        << '\n';
  } else {
    out << fmt::format("{}: worker {}/{} of run {}: {} subtrees, {} executions explored ({} cut short) in {:.1f} s; "
                       "the result is the coordinator's (shard 1)\n",
                       scenario.name, shard.index + 1, shard.count, a.run_id, w.tasks, w.explored, w.cut, elapsed);
  }
  if (w.interrupted) err << "interrupted: this worker stopped; the coordinator explores what it did not finish\n";
  return kExitOk;
}

int cmd_check(const CheckArgs& a, const ReportContext& context, std::ostream& out, std::ostream& err) {
  const real::Stopwatch clock;
  Progress progress(err, clock, parse_progress_mode(a.progress));
  const Scenario scenario = load_scenario(a.scenario);
  if (a.estimate) return cmd_estimate(a, scenario, progress, clock, out);
  std::shared_ptr<sim::SubtreeExchange> exchange;
  if (a.queue) {
    if (a.shard.empty() || a.run_id.empty()) {
      throw InputError("--queue needs --shard I/N (shard 1 coordinates, the others work) and --run-id ID (the same "
                       "for every shard of one run, new for each run)");
    }
    // --checkpoint and --resume are the coordinator's (its walk is the search); a worker,
    // given the same command line by its job runner, keeps none.
    const auto shard = parse_shard(a.shard);
    sim::CheckOptions options;
    options.overrides = overrides_of(a);
    const std::string settings = sim::queue_settings(scenario, options);
    if (queue_role(shard.index) == QueueRole::worker) return cmd_worker(a, scenario, shard, settings, clock, out, err);
    const std::string strategy = a.strategy.value_or(scenario.explore.strategy);
    if (strategy != "dpor" || a.preemptions || a.iterative) {
      throw InputError(fmt::format("--queue splits a dpor search without a preemption bound (strategy {})", strategy));
    }
    exchange = real::coordinate_run(*a.queue, a.run_id, settings, kQueuedPerWorker * std::max(1, shard.count - 1));
  }
  const sim::CheckReport report =
      run_one(scenario, overrides_of(a), progress, scenario.name, a.checkpoints, std::move(exchange));
  if (a.checkpoints.checkpoint && !report.result.exhaustive && !report.result.first_failure) {
    err << fmt::format("lockstep: checkpoint {} ({} executions so far): go on with --resume {}\n",
                       *a.checkpoints.checkpoint, report.result.stats.executions, *a.checkpoints.checkpoint);
  }
  CheckedScenario c{.file = a.scenario,
                    .scenario = &scenario,
                    .report = &report,
                    .shard = a.shard,
                    .shard_mode = a.shard.empty() ? ShardMode::none : (a.queue ? ShardMode::coordinator : ShardMode::inside)};
  // Named after the scenario's file, as sweep names it: the two share reports/traces.
  const std::string path = a.trace_out.value_or(fmt::format("reports/traces/{}", trace_file_of(a.scenario)));
  // A trace that cannot be written does not lose the result: it is printed, then the error.
  std::string not_written;
  try {
    if (report.trace) {
      sim::save_trace(*report.trace, path);
      c.trace_path = path;
    }
    c.witness_paths = save_witnesses(report, path);
  } catch (const std::exception& e) {
    not_written = fmt::format("{}: the trace was not written: {}", a.scenario, e.what());
  }
  if (a.json) {
    out << to_json(c, context).dump() << '\n';
  } else {
    print_human(out, c, context, kMaxPrintedEvents);
  }
  if (interrupted()) err << interrupted_phases(report) << '\n';
  if (!not_written.empty()) {
    err << "lockstep: " << not_written << '\n';
    return kExitBadInput;
  }
  return report.as_expected ? kExitOk : kExitUnexpected;
}

// The options of the search: strategy, seed and bounds.
void add_search_options(CLI::App& c, CheckArgs& check) {
  c.add_option("--strategy", check.strategy,
               "dpor (exhaustive, the default), dfs (exhaustive, naive), random (seeded walk), pct (seeded, "
               "probabilistic guarantee: see lockstep list); default: the scenario's")
      ->check(CLI::IsMember(strategy_names()));
  c.add_option("--seed", check.seed, "seed for random choices; default: the scenario's");
  c.add_option("--max-executions,--executions", check.max_executions,
               "stop after N executions (verdict incomplete if not exhaustive); with random or pct, the number "
               "of walks (each run stops at the first failure)");
  c.add_option("--max-steps", check.max_steps,
               "bound on the steps of one execution; at it, a repeating fair cycle is a livelock, an obligation "
               "still hot a liveness failure, anything else step_bound");
  c.add_option("--max-seconds", check.time_limit_s, "stop after this much wall time (verdict incomplete if not exhaustive)")
      ->check(CLI::NonNegativeNumber);
  c.add_option("--jobs,-j", check.jobs,
               "threads for this one search (dpor, dfs, random): with dpor and dfs others explore pending branches "
               "ahead of the search, which takes each one it reaches unchanged; random walks run on all of them, "
               "judged in order; "
               "counts, verdict and failure are those of one thread (default 1: see docs/cli.md for what it gains)")
      ->check(CLI::Range(1, kMaxJobs))
      ->capture_default_str();
  c.add_option("--preemptions", check.preemptions,
               "preemption bound K (CHESS): at most K switches away from an actor that could go on; a search the "
               "bound cut is incomplete")
      ->check(CLI::NonNegativeNumber);
  c.add_flag("--iterative", check.iterative,
             "with --preemptions K: try bounds 0, 1, ..., K and stop at the first that finds a failure "
             "(the failure with the fewest preemptions first)");
  c.add_option("--depth", check.depth,
               "pct: the bug depth d; one execution finds a bug of depth d among n actors and k steps with "
               "probability at least 1/(n*k^(d-1))")
      ->check(CLI::Range(1, 100));
  c.add_option("--checkpoint", check.checkpoints.checkpoint,
               "FILE: write the search's state there every --checkpoint-every seconds and where it stops (a bound, "
               "Ctrl-C, SIGTERM); dpor, source-dpor and dfs");
  c.add_option("--checkpoint-every", check.checkpoints.every, "seconds between checkpoints (default 60)")
      ->check(CLI::PositiveNumber);
  c.add_flag("--estimate", check.estimate,
             "explore for --estimate-seconds and print the estimated number of executions of the whole search, "
             "with an interval (JSON key estimate), instead of running it");
  c.add_option("--estimate-seconds", check.estimate_seconds, "how long --estimate samples (default 3)")
      ->check(CLI::PositiveNumber);
  c.add_option("--resume", check.checkpoints.resume,
               "FILE: go on from this checkpoint (same scenario, settings and lockstep version); bounds count this "
               "run, results are the totals (give --checkpoint FILE too to go on again)");
}

// The options of what is judged and written: shrinking, fairness, shard, trace, JSON.
void add_result_options(CLI::App& c, CheckArgs& check) {
  c.add_flag("--no-shrink", check.no_shrink, "write the failing trace as found, without shrinking it");
  c.add_option("--livelock-steps", check.livelock_steps,
               "an execution whose steps repeat one fair cycle for this many steps is a livelock at once, before "
               "its step bound (default 10000; raise it for a retry loop of more identical attempts)")
      ->check(CLI::PositiveNumber);
  c.add_flag("--unfair", check.unfair,
             "explore unfair schedules too: an execution that repeats a cycle while another actor could run and "
             "never does is then followed to its step bound (verdict step_bound), not cut (the default is "
             "fair, as CHESS: see lockstep list)");
  c.add_option("--symmetry", check.symmetry,
               "on|off: explore executions equal up to a permutation of actors the system declares interchangeable "
               "once (default: the scenario's explore.symmetry, on)")
      ->check(CLI::IsMember({"on", "off"}));
  c.add_option("--shard", check.shard,
               "I/N: with dfs, explore shard I of N (1-based) of the search tree; with --queue, this process's place "
               "in the run: 1 coordinates (its result is the search's), the others are workers");
  c.add_option("--queue", check.queue,
               "CONNINFO: split this dpor search among the processes of one run (--shard I/N, --run-id) through a "
               "work queue in this PostgreSQL database (FOR UPDATE SKIP LOCKED); count, verdict and failure are one "
               "process's (docs/cli.md)");
  c.add_option("--run-id", check.run_id,
               "ID: names the run of --queue: the same for its N processes, a new one for each run (a job runner's "
               "run id)");
  c.add_option("--trace-out", check.trace_out, "where to write the failing trace (default reports/traces/NAME.json)");
  c.add_flag("--json", check.json, "print one JSON object");
  c.add_option("--progress", check.progress, kProgressHelp)->check(CLI::IsMember({"auto", "always", "never"}));
}

}  // namespace

void add_check_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* c = app.add_subcommand("check", "explore one scenario and compare its verdict with its expect");
  c->add_option("scenario", args->scenario, "scenario file (JSON)")->required();
  add_search_options(*c, *args);
  add_result_options(*c, *args);
  c->callback([&context, args] {
    context.command = [&context, args] { return finished(cmd_check(*args, context.report, context.out, context.err)); };
  });
}

}  // namespace lockstep::cli
