#include "lockstep/cli/commands.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "lockstep/cli/diff.h"
#include "lockstep/cli/html_report.h"
#include "lockstep/cli/interrupt.h"
#include "lockstep/cli/pg_commands.h"
#include "lockstep/cli/report.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/scenario.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/wall_clock.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/interleaving_table.h"
#include "lockstep/sim/trace.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

// Progress on stderr, only when it is a terminal, at most a few times a second.
class Progress {
 public:
  Progress(std::ostream& err, const real::Stopwatch& clock)
      : err_(err), clock_(clock), enabled_(isatty(STDERR_FILENO) == 1) {}

  std::function<void(const sim::ExploreStats&)> callback(std::string label) {
    if (!enabled_) return nullptr;
    return [this, label = std::move(label)](const sim::ExploreStats& s) {
      const double now = clock_.elapsed_seconds();
      if (now - last_ < 0.25) return;
      last_ = now;
      err_ << fmt::format("\r\033[K{}: {} executions, {} steps, {} failures, {:.1f} s", label, s.executions,
                          s.steps, s.failures, s.elapsed_s)
           << std::flush;
      shown_ = true;
    };
  }

  void clear() {
    if (shown_) err_ << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  std::ostream& err_;
  const real::Stopwatch& clock_;
  bool enabled_;
  bool shown_ = false;
  double last_ = -1;
};

// Parses "I/N" (1-based, as job runners number their jobs) into a 0-based shard.
sim::StrategyOptions::Shard parse_shard(const std::string& text) {
  int i = 0, n = 0;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> i >> slash >> n) || slash != '/' || n < 1 || i < 1 || i > n || !in.eof()) {
    throw InputError(fmt::format("--shard {}: expected I/N with 1 <= I <= N, such as 2/4", text));
  }
  return {i - 1, n};
}

// Interleavings longer than this are not printed by `check` (replay prints them all).
constexpr std::size_t kMaxPrintedEvents = 200;
// How long `replay` and `report` look for the cause of a trace that does not record one.
constexpr double kCauseSeconds = 10.0;

// A scenario name made safe for a file name: anything but [A-Za-z0-9._-] becomes '_'.
std::string file_safe(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-')) c = '_';
  }
  return out.empty() || out[0] == '.' ? "_" + out : out;
}

std::vector<std::string> strategy_names() {
  std::vector<std::string> names;
  for (const auto& s : sim::strategy_catalog()) names.emplace_back(s.name);
  return names;
}

struct CheckArgs {
  std::string scenario;
  std::optional<std::string> strategy;
  std::optional<std::uint64_t> seed, max_executions, max_steps;
  std::optional<double> max_seconds;
  std::optional<int> preemptions;
  std::optional<int> depth;
  std::string shard;
  bool iterative = false;
  bool no_shrink = false;
  bool unfair = false;
  std::optional<std::uint64_t> livelock_steps;
  std::optional<std::string> trace_out;
  bool json = false;
};

sim::CheckReport run_one(const Scenario& scenario, const sim::CheckOverrides& overrides, Progress& progress,
                         const std::string& label) {
  real::Stopwatch clock;
  sim::CheckOptions options;
  options.overrides = overrides;
  options.elapsed_seconds = [&clock] { return clock.elapsed_seconds(); };
  options.progress = progress.callback(label);
  options.stop_requested = [] { return interrupted(); };
  sim::CheckReport report = sim::check_scenario(scenario, options);
  progress.clear();
  return report;
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

int cmd_check(const CheckArgs& a, const ReportContext& context, std::ostream& out, std::ostream& err) {
  const real::Stopwatch clock;
  Progress progress(err, clock);
  const Scenario scenario = load_scenario(a.scenario);
  sim::CheckOverrides overrides{a.strategy, a.seed, a.max_executions, a.max_steps, a.max_seconds, a.preemptions, a.depth};
  overrides.iterative = a.iterative;
  overrides.shrink = !a.no_shrink;
  if (a.unfair) overrides.fair = false;
  overrides.livelock_steps = a.livelock_steps;
  if (!a.shard.empty()) overrides.shard = parse_shard(a.shard);
  const sim::CheckReport report = run_one(scenario, overrides, progress, scenario.name);
  CheckedScenario c{a.scenario, &scenario, "", &report, std::nullopt, std::nullopt, a.shard, a.shard.empty() ? "" : "inside", {}};
  const std::string path = a.trace_out.value_or(fmt::format("reports/traces/{}.json", file_safe(scenario.name)));
  if (report.trace) {
    sim::save_trace(*report.trace, path);
    c.trace_path = path;
  }
  c.witness_paths = save_witnesses(report, path);
  if (a.json) {
    out << to_json(c, context).dump() << '\n';
  } else {
    print_human(out, c, context, kMaxPrintedEvents);
  }
  if (interrupted()) err << interrupted_phases(report) << '\n';
  return report.as_expected ? kExitOk : kExitUnexpected;
}

std::vector<std::string> scenario_files(const std::string& dir) {
  std::error_code ec;
  const auto status = fs::status(dir, ec);
  if (ec || !fs::exists(status)) throw InputError(fmt::format("{}: no such file or directory", dir));
  if (fs::is_regular_file(status)) return {dir};
  if (!fs::is_directory(status)) throw InputError(fmt::format("{}: not a regular file or a directory", dir));
  std::vector<std::string> files;
  for (fs::recursive_directory_iterator it(dir, ec), end; it != end; it.increment(ec)) {
    if (ec) break;
    std::error_code kind;
    if (it->is_regular_file(kind) && it->path().extension() == ".json") files.push_back(it->path().string());
  }
  if (ec) throw InputError(fmt::format("{}: cannot list the directory: {}", dir, ec.message()));
  std::sort(files.begin(), files.end());
  return files;
}

// Writes the HTML view of a trace (lockstep report).
// A failing trace's cause: as recorded in it, or found now (within kCauseSeconds, or until
// Ctrl-C). Nothing for a passing trace.
std::optional<sim::Cause> cause_of(const sim::Trace& trace, const std::string& path) {
  if (!is_failure(trace.verdict)) return std::nullopt;
  if (trace.cause) return trace.cause;
  const real::Stopwatch clock;
  sim::CauseBudget budget;
  budget.stop = [&] { return interrupted() || clock.elapsed_seconds() >= kCauseSeconds; };
  return sim::trace_cause(trace, path, budget);
}

void write_html(const sim::Trace& trace, const std::string& trace_path, const std::string& html_path,
                const ReportContext& context) {
  const fs::path p(html_path);
  if (p.has_parent_path()) fs::create_directories(p.parent_path());
  std::ofstream f(html_path, std::ios::binary | std::ios::trunc);
  // A trace of a model in C++ replays in its own test program, with the command it recorded.
  const bool from_code = trace.scenario.value("system", "") == "api";
  const std::string recorded = from_code ? trace.scenario.value("replay", "") : "";
  // Every other trace is replayed for its holding spans, and its cause found if it records none.
  sim::Trace drawn = trace;
  std::optional<sim::ExecutionFacts> facts;
  if (!from_code) {
    try {
      facts = sim::trace_facts(trace, trace_path);
    } catch (const sim::Divergence& d) {
      throw InputError(fmt::format("{}: trace diverges at step {}: {}", trace_path, d.step(), d.what()));
    }
    if (!drawn.cause) drawn.cause = cause_of(trace, trace_path);
  }
  f << html_report(drawn, !recorded.empty() ? recorded
                          : from_code       ? "LOCKSTEP_REPLAY=" + trace_path + " <the model's test program>"
                                            : replay_command(context.program, trace_path),
                   facts ? &*facts : nullptr);
  if (!f) throw InputError(fmt::format("{}: cannot write the report", html_path));
}

struct SweepArgs {
  std::vector<std::string> dirs;
  std::string out = "reports";
  bool json = false;
  std::string shard;  // "I/N" or ""
  std::optional<std::string> junit;
};

void write_reports(const std::string& out_dir, const std::vector<nlohmann::json>& results, double elapsed,
                   const std::optional<std::string>& junit, const std::string& note = "") {
  fs::create_directories(out_dir);
  std::ofstream f(fs::path(out_dir) / "results.json");
  f << nlohmann::json(results).dump(2) << '\n';
  std::ofstream md(fs::path(out_dir) / "summary.md");
  md << summary_markdown(results, elapsed, out_dir, note);
  if (!f || !md) throw InputError(fmt::format("{}: cannot write the sweep's reports", out_dir));
  if (junit) {
    const fs::path p(*junit);
    if (p.has_parent_path()) fs::create_directories(p.parent_path());
    std::ofstream j(*junit);
    j << junit_xml(results, elapsed);
    if (!j) throw InputError(fmt::format("{}: cannot write the JUnit report", *junit));
  }
}

int sweep_exit_code(const std::vector<nlohmann::json>& results) {
  bool bad = false, unexpected = false;
  for (const auto& r : results) {
    bad = bad || r["verdict"] == "bad_input";
    unexpected = unexpected || !r["as_expected"].get<bool>();
  }
  if (bad) return kExitBadInput;
  return unexpected ? kExitUnexpected : kExitOk;
}

int cmd_sweep(const SweepArgs& a, const ReportContext& context, std::ostream& out, std::ostream& err) {
  const std::vector<std::string>& dirs = a.dirs;
  const std::string& out_dir = a.out;
  const bool json = a.json;
  const sim::StrategyOptions::Shard shard = a.shard.empty() ? sim::StrategyOptions::Shard{} : parse_shard(a.shard);
  const real::Stopwatch clock;
  Progress progress(err, clock);
  std::vector<std::pair<std::string, std::string>> files;  // (file, path relative to its DIR)
  for (const auto& dir : dirs) {
    for (const auto& f : scenario_files(dir)) {
      files.emplace_back(f, fs::is_regular_file(dir) ? fs::path(f).filename().string() : fs::relative(f, dir).string());
    }
  }
  fs::create_directories(out_dir);
  std::vector<nlohmann::json> results;
  std::size_t run = 0;
  for (std::size_t i = 0; i < files.size() && !interrupted(); ++i) {
    run = i + 1;
    const auto& [file, relative] = files[i];
    CheckedScenario c;
    c.file = file;
    std::optional<Scenario> scenario;
    std::optional<sim::CheckReport> report;
    try {
      scenario = load_scenario(file);
      // With shards: dfs splits the scenario's search tree; other strategies take whole
      // scenarios, one shard each, by their place in the sorted list of files.
      sim::CheckOverrides overrides;
      if (shard.count > 1) {
        if (scenario->explore.strategy == "dfs") {
          overrides.shard = shard;
          c.shard_mode = "inside";
        } else if (static_cast<int>(i % static_cast<std::size_t>(shard.count)) != shard.index) {
          continue;
        } else {
          c.shard_mode = "whole";
        }
        c.shard = a.shard;
      }
      report = run_one(*scenario, overrides, progress, fmt::format("[{}/{}] {}", i + 1, files.size(), scenario->name));
      c.scenario = &*scenario;
      c.report = &*report;
      const std::string path = (fs::path(out_dir) / "traces" / relative).string();
      if (report->trace) {
        sim::save_trace(*report->trace, path);
        c.trace_path = path;
        c.report_path = fs::path(path).replace_extension(".html").string();
        write_html(*report->trace, path, *c.report_path, context);
      }
      c.witness_paths = save_witnesses(*report, path);
    } catch (const InputError& e) {
      c.scenario = nullptr;
      c.input_error = e.what();
    }
    nlohmann::json j = to_json(c, context);
    if (json) {
      out << j.dump() << '\n';
    } else {
      print_human(out, c, context, 0);
    }
    out << std::flush;
    results.push_back(std::move(j));
  }
  const double elapsed = clock.elapsed_seconds();
  const std::string note =
      interrupted() ? fmt::format("Interrupted during scenario {} of {}: its search was cut short (verdict incomplete), "
                                  "the {} after it were not run.", run, files.size(), files.size() - run)
                    : "";
  write_reports(out_dir, results, elapsed, a.junit, note);
  if (!note.empty()) err << "sweep: " << note << '\n';
  std::size_t ok = 0;
  for (const auto& r : results) ok += r["as_expected"].get<bool>() ? 1 : 0;
  err << fmt::format("sweep: {} scenarios, {} as expected, {} not, in {:.2f} s; reports in {}\n", results.size(),
                     ok, results.size() - ok, elapsed, (fs::path(out_dir) / "summary.md").string());
  return sweep_exit_code(results);
}

// A results.json entry as `sweep` writes it: the keys merge reads, with their types.
void check_result_entry(const JsonCursor& e) {
  e.at("file").as_string();
  const JsonCursor verdict = e.at("verdict");
  if (verdict.as_string() != "bad_input" && !verdict_from_name(verdict.as_string())) {
    verdict.fail(fmt::format("unknown verdict \"{}\"", verdict.as_string()));
  }
  e.at("as_expected").as_bool();
  e.at("elapsed_s").as_number(0, 1e12);
  for (const char* key : {"scenario", "violation", "message", "trace", "report", "replay", "expected_violation", "error"}) {
    if (auto v = e.find(key); v && !v->value().is_null()) v->as_string();
  }
  if (verdict.as_string() == "bad_input") return;
  if (const JsonCursor expected = e.at("expected_verdict"); !verdict_from_name(expected.as_string())) {
    expected.fail(fmt::format("unknown verdict \"{}\"", expected.as_string()));
  }
  e.at("exhaustive").as_bool();
  for (const char* key : {"executions", "redundant", "skipped", "steps", "failures"}) {
    if (auto v = e.find(key)) v->as_uint();
  }
  if (auto marks = e.find("marks")) {
    for (const auto& k : marks->keys()) marks->at(k).as_uint();
  }
}

int cmd_merge(const std::vector<std::string>& inputs, const std::string& out_dir, const std::optional<std::string>& junit,
              bool json, std::ostream& out, std::ostream& err) {
  std::vector<nlohmann::json> entries;
  for (const auto& path : inputs) {
    const nlohmann::json doc = read_json_file(path);
    const JsonCursor root(doc, path);
    for (const auto& e : root.items()) {
      check_result_entry(e);
      entries.push_back(e.value());
    }
  }
  const std::vector<nlohmann::json> merged = merge_results(entries);
  double elapsed = 0;
  for (const auto& m : merged) elapsed = std::max(elapsed, m["elapsed_s"].get<double>());
  write_reports(out_dir, merged, elapsed, junit);
  for (const auto& m : merged) {
    if (json) {
      out << m.dump() << '\n';
    } else {
      out << fmt::format("{}: {} ({} executions){}\n", m["scenario"].is_null() ? m["file"].get<std::string>() : m["scenario"].get<std::string>(),
                         m["verdict"].get<std::string>(), m["executions"].dump(), m["as_expected"].get<bool>() ? "" : "  <-- NOT AS EXPECTED");
    }
  }
  err << fmt::format("merge: {} results from {} files into {} scenarios; reports in {}\n", entries.size(), inputs.size(),
                     merged.size(), (fs::path(out_dir) / "summary.md").string());
  return sweep_exit_code(merged);
}

// Walks the replayed interleaving one step at a time: Enter shows the next step, q quits.
void step_through(const sim::ReplayReport& r, std::size_t width, const sim::Cause* cause, std::istream& in,
                  std::ostream& out) {
  const bool interactive = isatty(STDIN_FILENO) == 1;
  sim::InterleavingTable table(r.events, r.actors, width);
  if (cause != nullptr) table.mark_causes(*cause);
  table.header(out);
  std::size_t i = 0;
  while (i < r.events.size()) {
    // One step, with the choices and observations made during it.
    const std::uint64_t n = r.events[i].step;
    while (i < r.events.size() && r.events[i].step == n) table.row(out, r.events[i++]);
    if (i < r.events.size()) {
      if (interactive) out << "  [Enter: next step, q: quit] " << std::flush;
      std::string line;
      if (!std::getline(in, line) || line == "q") {
        out << "\n(stopped at step " << n << " of " << r.result.steps << ")\n";
        return;
      }
    }
  }
  if (cause != nullptr) sim::print_cause(out, *cause);
}

// Replays a trace to check that it still fits the code: decisions, events and verdict.
// A trace that does not is bad input (InputError naming the step and the difference).
sim::ReplayReport verified_replay(const sim::Trace& trace, const std::string& path) {
  try {
    return sim::replay_trace(trace, path);
  } catch (const sim::Divergence& d) {
    throw InputError(fmt::format("{}: trace diverges at step {}: {}", path, d.step(), d.what()));
  }
}

// `width`: the column limit of the table (0: no limit, each cell on one line).
int cmd_replay(const std::string& path, bool json, bool step, std::size_t width, std::istream& in, std::ostream& out) {
  const sim::Trace trace = sim::load_trace(path);
  const sim::ReplayReport r = verified_replay(trace, path);
  const std::optional<sim::Cause> cause = cause_of(trace, path);
  if (json) {
    nlohmann::json j;
    j["trace"] = path;
    if (cause) j["cause"] = cause_json(*cause);
    j["verdict"] = verdict_name(r.result.verdict);
    j["violation"] = r.result.invariant.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.result.invariant);
    j["message"] = r.result.message;
    j["steps"] = r.result.steps;
    j["events"] = r.events.size();
    j["identical"] = true;
    out << j.dump() << '\n';
    return kExitOk;
  }
  if (step) {
    step_through(r, width, cause ? &*cause : nullptr, in, out);
  } else if (trace.lasso) {
    sim::print_lasso(out, r.events, r.actors, *trace.lasso, width, cause ? &*cause : nullptr);
  } else {
    sim::print_interleaving(out, r.events, r.actors, width, cause ? &*cause : nullptr);
  }
  std::string verdict(verdict_name(r.result.verdict));
  if (!r.result.invariant.empty()) verdict += " " + r.result.invariant;
  out << fmt::format("verdict: {}{}\n", verdict, r.result.message.empty() ? "" : ": " + r.result.message);
  out << fmt::format("replayed {} steps ({} events): event log and verdict identical to the trace\n",
                     r.result.steps, r.events.size());
  return kExitOk;
}

int cmd_shrink(const std::string& path, const std::optional<std::string>& out_path, std::optional<double> max_seconds,
               const ReportContext& context, std::ostream& out) {
  const real::Stopwatch clock;
  const sim::Trace trace = sim::load_trace(path);
  if (!is_failure(trace.verdict)) throw InputError(fmt::format("{}: verdict {} is no failure: nothing to shrink", path, verdict_name(trace.verdict)));
  (void)verified_replay(trace, path);  // its decisions must still give its verdict
  sim::ShrinkBudget budget;
  budget.stop = [&] { return interrupted() || (max_seconds && clock.elapsed_seconds() >= *max_seconds); };
  sim::Trace shrunk = sim::shrink_trace(trace, path, budget);
  std::string target = out_path.value_or(path);
  if (!out_path) {
    const std::string suffix = ".json";
    target = (target.size() > suffix.size() && target.ends_with(suffix) ? target.substr(0, target.size() - suffix.size()) : target) +
             ".shrunk.json";
  }
  sim::save_trace(shrunk, target);
  const auto& s = *shrunk.shrunk;
  out << fmt::format("{}: {} steps and {} preemptions, down from {} steps and {} preemptions ({} attempts)\n",
                     verdict_name(shrunk.verdict), s.steps, s.preemptions, s.original_steps, s.original_preemptions,
                     s.attempts);
  if (s.out_of_budget) out << "  (shrinking stopped by its budget: a simpler trace may exist)\n";
  out << fmt::format("  trace: {}\n  replay: {}\n", target, replay_command(context.program, target));
  return kExitOk;
}

int cmd_report(const std::string& path, const std::string& html, const ReportContext& context, std::ostream& out) {
  const sim::Trace trace = sim::load_trace(path);
  // A trace of a model written in C++ replays only in its own test binary: it is drawn as
  // recorded. Every other trace is drawn only once it replays as recorded.
  const bool from_code = trace.scenario.value("system", "") == "api";
  if (!from_code) (void)verified_replay(trace, path);
  write_html(trace, path, html, context);
  out << fmt::format("report: {}{}\n", html, from_code ? " (a trace of a model in C++: drawn as recorded, not replayed)" : "");
  return kExitOk;
}

int cmd_list(bool json, std::ostream& out) {
  if (json) {
    nlohmann::json j;
    auto docs = [](const std::vector<NamedDoc>& v) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& d : v) a.push_back({{"name", d.name}, {"description", d.description}});
      return a;
    };
    for (const auto& s : registered_systems()) {
      j["systems"].push_back({{"name", s.name}, {"description", s.description}, {"variants", docs(s.variants)},
                              {"invariants", docs(s.invariants)}, {"faults", docs(s.faults)}});
    }
    for (const auto& s : sim::strategy_catalog()) {
      j["strategies"].push_back({{"name", s.name}, {"description", s.help}, {"fairness", s.fairness}});
    }
    out << j.dump(2) << '\n';
    return kExitOk;
  }
  out << "systems:\n";
  for (const auto& s : registered_systems()) {
    out << fmt::format("  {}: {}\n", s.name, s.description);
    for (const auto& v : s.variants) out << fmt::format("    variant {}: {}\n", v.name, v.description);
    for (const auto& v : s.invariants) out << fmt::format("    invariant {}: {}\n", v.name, v.description);
    for (const auto& v : s.faults) out << fmt::format("    fault {}: {}\n", v.name, v.description);
  }
  out << "strategies:\n";
  for (const auto& s : sim::strategy_catalog()) {
    out << fmt::format("  {}: {}\n    fairness: {}\n", s.name, s.help, s.fairness);
  }
  return kExitOk;
}

}  // namespace

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  return run_cli(argc, argv, std::cin, out, err);
}

int run_cli(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err) {
  CLI::App app{"lockstep: deterministic concurrency simulation and model checking for lock services"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "lockstep 0.1.0");

  CheckArgs check;
  auto* c = app.add_subcommand("check", "explore one scenario and compare its verdict with its expect");
  c->add_option("scenario", check.scenario, "scenario file (JSON)")->required();
  c->add_option("--strategy", check.strategy,
                "dpor (exhaustive, the default), dfs (exhaustive, naive), random (seeded walk), pct (seeded, "
                "probabilistic guarantee: see lockstep list); default: the scenario's")
      ->check(CLI::IsMember(strategy_names()));
  c->add_option("--seed", check.seed, "seed for random choices; default: the scenario's");
  c->add_option("--max-executions,--executions", check.max_executions,
                "stop after N executions (verdict incomplete if not exhaustive); with random or pct, the number "
                "of walks (each run stops at the first failure)");
  c->add_option("--max-steps", check.max_steps,
                "bound on the steps of one execution; at it, a repeating fair cycle is a livelock, an obligation "
                "still hot a liveness failure, anything else step_bound");
  c->add_option("--max-seconds", check.max_seconds, "stop after this much wall time (verdict incomplete if not exhaustive)")
      ->check(CLI::NonNegativeNumber);
  c->add_option("--preemptions", check.preemptions,
                "preemption bound K (CHESS): at most K switches away from an actor that could go on; a search the "
                "bound cut is incomplete")
      ->check(CLI::NonNegativeNumber);
  c->add_flag("--iterative", check.iterative,
              "with --preemptions K: try bounds 0, 1, ..., K and stop at the first that finds a failure "
              "(the failure with the fewest preemptions first)");
  c->add_option("--depth", check.depth,
                "pct: the bug depth d; one execution finds a bug of depth d among n actors and k steps with "
                "probability at least 1/(n*k^(d-1))")
      ->check(CLI::Range(1, 100));
  c->add_flag("--no-shrink", check.no_shrink, "write the failing trace as found, without shrinking it");
  c->add_option("--livelock-steps", check.livelock_steps,
                "an execution whose steps repeat one fair cycle for this many steps is a livelock at once, before "
                "its step bound (default 10000; raise it for a retry loop of more identical attempts)")
      ->check(CLI::PositiveNumber);
  c->add_flag("--unfair", check.unfair,
              "explore unfair schedules too: an execution that repeats a cycle while another actor could run and "
              "never does is then followed to its step bound (verdict step_bound), not cut (the default is "
              "fair, as CHESS: see lockstep list)");
  c->add_option("--shard", check.shard, "I/N: with dfs, explore shard I of N (1-based) of the search tree");
  c->add_option("--trace-out", check.trace_out, "where to write the failing trace (default reports/traces/NAME.json)");
  c->add_flag("--json", check.json, "print one JSON object");

  SweepArgs sweep;
  auto* s = app.add_subcommand("sweep", "check every scenario under each DIR; write summary.md, results.json, traces");
  s->add_option("dirs", sweep.dirs, "directories (searched recursively for *.json) or files")->required();
  s->add_option("--out", sweep.out, "output directory")->capture_default_str();
  s->add_flag("--json", sweep.json, "print one JSON object per scenario");
  s->add_option("--shard", sweep.shard,
                "I/N: run shard I of N (1-based). dfs scenarios split their search tree, others go whole to one "
                "shard; lockstep merge combines the shards' results.json into one run's");
  s->add_option("--junit", sweep.junit, "also write JUnit XML (one test case per scenario) to this file");

  std::vector<std::string> merge_inputs;
  std::string merge_out = "reports";
  std::optional<std::string> merge_junit;
  bool merge_json = false;
  auto* mg = app.add_subcommand("merge", "combine the results.json of sweep shards into one summary");
  mg->add_option("results", merge_inputs, "results.json files of the shards")->required();
  mg->add_option("--out", merge_out, "output directory")->capture_default_str();
  mg->add_option("--junit", merge_junit, "also write JUnit XML to this file");
  mg->add_flag("--json", merge_json, "print one JSON object per scenario");

  std::string replay_path;
  bool replay_json = false, replay_step = false, replay_wide = false;
  std::size_t replay_width = sim::kDefaultColumnWidth;
  auto* r = app.add_subcommand("replay", "re-execute a trace from its decisions; check log and verdict; print it");
  r->add_option("trace", replay_path, "trace file (lockstep-trace/1)")->required();
  r->add_flag("--json", replay_json, "print one JSON object instead of the table");
  r->add_flag("--step", replay_step, "walk the interleaving one step at a time (Enter: next, q: quit)");
  r->add_option("--width", replay_width, "wrap table cells longer than this many characters")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{8}, std::size_t{10'000}));
  r->add_flag("--wide", replay_wide, "never wrap: every cell on one line");

  std::string shrink_path;
  std::optional<std::string> shrink_out;
  auto* sh = app.add_subcommand("shrink", "shrink a failing trace: fewer preemptions, then fewer steps and switches");
  sh->add_option("trace", shrink_path, "trace file (lockstep-trace/1)")->required();
  sh->add_option("--out", shrink_out, "where to write the shrunk trace (default: TRACE with .shrunk.json)");
  std::optional<double> shrink_seconds;
  sh->add_option("--max-seconds", shrink_seconds,
                 "stop shrinking after this much wall time and keep the simplest trace found so far (it is also "
                 "bounded by 4000 attempts and 20 million steps)")
      ->check(CLI::NonNegativeNumber);

  std::string report_path, report_out;
  std::string diff_a, diff_b;
  bool diff_json = false;
  auto* dif = app.add_subcommand("diff", "two traces of one scenario side by side: where their orders part (exit 0 same, 1 differ)");
  dif->add_option("a", diff_a, "trace file (lockstep-trace/1)")->required();
  std::size_t diff_cause = 0;
  std::string diff_cause_out;
  dif->add_option("b", diff_b, "trace file (lockstep-trace/1); or give --cause K");
  auto* dif_cause = dif->add_option("--cause", diff_cause,
                                    "instead of B: A with its cause pair K reordered (the nearest execution that does not fail so)")
                        ->check(CLI::PositiveNumber);
  dif->add_option("--cause-out", diff_cause_out, "with --cause: write that execution as a trace to this file")
      ->needs(dif_cause);
  dif->add_flag("--json", diff_json, "print one JSON object");

  auto* rep = app.add_subcommand("report", "write a trace as a self-contained HTML page (swimlanes, one per actor)");
  rep->add_option("trace", report_path, "trace file (lockstep-trace/1)")->required();
  rep->add_option("-o,--out", report_out, "the HTML file to write")->required();

  bool list_json = false;
  auto* l = app.add_subcommand("list", "list systems (variants, invariants, faults) and strategies");
  l->add_flag("--json", list_json, "print JSON");

  PgCommands pg_commands(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version are "errors" with exit code 0 in CLI11; app.exit prints them.
    const int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitBadInput;
  }

  ReportContext context;
  if (argc > 0 && argv[0] != nullptr && std::string_view(argv[0]).find('/') != std::string_view::npos) {
    context.program = argv[0];  // as invoked, so the printed replay command runs as it is
  }
  const InterruptScope interrupts;
  // A command stopped by Ctrl-C or SIGTERM has written what it knew; it exits 130 or 143.
  auto finished = [](int code) { return interrupted() ? interrupted_exit_code() : code; };
  try {
    if (c->parsed()) return finished(cmd_check(check, context, out, err));
    if (s->parsed()) return finished(cmd_sweep(sweep, context, out, err));
    if (mg->parsed()) return cmd_merge(merge_inputs, merge_out, merge_junit, merge_json, out, err);
    if (dif->parsed()) {
      if (diff_b.empty() == (diff_cause == 0)) {
        throw InputError("diff: give a second trace B, or --cause K (not both)");
      }
      return diff_cause > 0 ? cmd_diff_cause(diff_a, diff_cause, diff_cause_out, diff_json, out)
                            : cmd_diff(diff_a, diff_b, diff_json, out);
    }
    if (r->parsed()) return cmd_replay(replay_path, replay_json, replay_step, replay_wide ? 0 : replay_width, in, out);
    if (l->parsed()) return cmd_list(list_json, out);
    if (sh->parsed()) return finished(cmd_shrink(shrink_path, shrink_out, shrink_seconds, context, out));
    if (rep->parsed()) return cmd_report(report_path, report_out, context, out);
    if (auto code = pg_commands.run(out, err)) return finished(*code);
  } catch (const InputError& e) {
    err << "lockstep: " << e.what() << '\n';
    return finished(kExitBadInput);
  } catch (const real::ServerError& e) {
    err << "lockstep: the server failed: " << e.what() << '\n';
    return finished(kExitBadInput);
  } catch (const std::exception& e) {
    err << "lockstep: internal error: " << e.what() << '\n';
    return kExitInternal;
  }
  return kExitBadInput;
}

}  // namespace lockstep::cli
