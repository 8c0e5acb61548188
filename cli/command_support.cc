#include "lockstep/cli/command_support.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "lockstep/cli/commands.h"
#include "lockstep/cli/html_report.h"
#include "lockstep/cli/interrupt.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/real/task_threads.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

// How long `replay` and `report` look for the cause of a trace that does not record one.
constexpr double kCauseSeconds = 10.0;

}  // namespace

ProgressMode parse_progress_mode(const std::string& text) {
  if (text == "auto") return ProgressMode::automatic;
  if (text == "always") return ProgressMode::always;
  if (text == "never") return ProgressMode::never;
  throw InputError(fmt::format("--progress {}: expected auto, always or never", text));
}

Progress::Progress(std::ostream& err, const real::Stopwatch& clock, ProgressMode mode)
    : err_(err),
      clock_(clock),
      in_place_(mode == ProgressMode::automatic && isatty(STDERR_FILENO) == 1),
      enabled_(mode != ProgressMode::never),
      last_(in_place_ ? -1 : 0) {}  // a log: the first line after 10 s, not at once

std::string approx_count(double n) {
  if (n < 10000) return fmt::format("{:.0f}", n);
  if (n < 1e6) return fmt::format("{:.1f}k", n / 1e3);
  if (n < 1e9) return fmt::format("{:.2f}M", n / 1e6);
  return fmt::format("{:.2f}G", n / 1e9);
}

void TotalEstimate::add(double at_s, double total) {
  samples_.emplace_back(at_s, total);
  const double window = std::max(10.0, at_s / 4);
  while (samples_.size() > 3 && samples_[1].first <= at_s - window) samples_.pop_front();
  double low = total, high = total;
  for (const auto& [t, n] : samples_) {
    low = std::min(low, n);
    high = std::max(high, n);
  }
  settled_ = samples_.size() >= 3 && samples_.front().first <= at_s - window && high <= 1.25 * low;
}

std::string progress_line(const std::string& label, const sim::ExploreStats& s, bool settled) {
  const std::uint64_t runs = s.executions + s.redundant;
  const double rate = s.elapsed_s > 0 ? static_cast<double>(runs) / s.elapsed_s : 0;
  std::string line = fmt::format("{}: {} executions", label, runs);
  if (s.redundant > 0) line += fmt::format(" ({} redundant)", s.redundant);
  line += fmt::format(", {:.0f}/s, {} failures", rate, s.failures);
  if (s.explored_fraction > 0 && s.explored_fraction < 1) {
    const double total = static_cast<double>(runs) / s.explored_fraction;
    if (!settled) {
      line += fmt::format(", the total not settled yet (so far about {} in all)", approx_count(total));
    } else {
      line += fmt::format(", about {} in all ({:.0f}%)", approx_count(total), 100 * s.explored_fraction);
      if (rate > 0) line += fmt::format(", about {:.0f} s left", (total - static_cast<double>(runs)) / rate);
    }
  }
  return line + fmt::format(", {:.1f} s", s.elapsed_s);
}

std::function<void(const sim::ExploreStats&)> Progress::callback(std::string label) {
  if (!enabled_) return nullptr;
  return [this, label = std::move(label)](const sim::ExploreStats& s) {
    const double now = clock_.elapsed_seconds();
    if (s.explored_fraction > 0 && s.explored_fraction < 1) {
      estimate_.add(now, static_cast<double>(s.executions + s.redundant) / s.explored_fraction);
    }
    if (now - last_ < (in_place_ ? 0.25 : kLogProgressSeconds)) return;
    last_ = now;
    if (in_place_) {
      err_ << "\r\033[K" << progress_line(label, s, estimate_.settled()) << std::flush;
      shown_ = true;
    } else {
      err_ << progress_line(label, s, estimate_.settled()) << '\n' << std::flush;
    }
  };
}

void Progress::clear() {
  if (shown_) err_ << "\r\033[K" << std::flush;
  shown_ = false;
}

sim::CheckReport run_one(const Scenario& scenario, const sim::CheckOverrides& overrides, Progress& progress,
                         const std::string& label, const CheckpointFiles& files,
                         std::shared_ptr<sim::SubtreeExchange> exchange) {
  real::Stopwatch clock;
  sim::CheckOptions options;
  options.overrides = overrides;
  options.elapsed_seconds = [&clock] { return clock.elapsed_seconds(); };
  options.progress = progress.callback(label);
  options.stop_requested = [] { return interrupted(); };
  options.checkpoint_path = files.checkpoint;
  options.resume_path = files.resume;
  options.checkpoint_interval_s = files.every;
  std::optional<real::TaskThreads> threads;  // --jobs: the search's other threads
  const int jobs = overrides.settings.jobs.value_or(1);
  if (jobs > 1) options.spawn = threads.emplace(jobs).spawner();
  options.exchange = std::move(exchange);
  exchange = nullptr;
  sim::CheckReport report = sim::check_scenario(scenario, options);
  options.exchange = nullptr;  // the run is over for the workers before the report is printed
  progress.clear();
  return report;
}

sim::StrategyOptions::Shard parse_shard(const std::string& text) {
  int i = 0, n = 0;
  char slash = 0;
  std::istringstream in(text);
  if (!(in >> i >> slash >> n) || slash != '/' || n < 1 || i < 1 || i > n || !in.eof()) {
    throw InputError(fmt::format("--shard {}: expected I/N with 1 <= I <= N, such as 2/4", text));
  }
  return {i - 1, n};
}

sim::ReplayReport verified_replay(const sim::Trace& trace, const std::string& path) {
  try {
    return sim::replay_trace(trace, path);
  } catch (const sim::Divergence& d) {
    throw InputError(fmt::format("{}: trace diverges at step {}: {}", path, d.step(), d.what()));
  }
}

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
  // A trace of a model in C++ that this program does not register replays in its own test
  // program, with the command it recorded.
  const bool from_code = !sim::replays_here(trace);
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

void write_reports(const std::string& out_dir, const std::vector<nlohmann::json>& results, double elapsed,
                   const std::optional<std::string>& junit, const std::string& note) {
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

}  // namespace lockstep::cli
