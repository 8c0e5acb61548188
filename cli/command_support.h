// cli/command_support.h: what several commands of `lockstep` share: the progress line,
// running one scenario's check, reading --shard, a trace verified by replaying it and its
// cause, the HTML view of a trace, and a sweep's report files and exit code.
//
// Every function here reports bad input (a malformed --shard, a trace that no longer fits
// the code, a file it cannot write) as InputError, which run_cli turns into exit code 2.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/cli/report.h"
#include "lockstep/model/scenario.h"
#include "lockstep/real/wall_clock.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {

// How progress is shown (--progress): auto, one line rewritten in place on a terminal and a
// line every 10 s otherwise (a CI log); always, a line every 10 s wherever stderr goes;
// never, none.
enum class ProgressMode { automatic, always, never };
ProgressMode parse_progress_mode(const std::string& text);  // InputError for another word
inline constexpr double kLogProgressSeconds = 10;
inline constexpr const char* kProgressHelp =
    "auto (default): one line rewritten on a terminal, a line every 10 s otherwise (CI logs); always: a line "
    "every 10 s; never. Each line: executions, rate, and for dpor, source-dpor and dfs an estimate of the total "
    "and, once that estimate has held for a while, of the time left";

// The projected totals of a search's progress, and whether they have settled: an early
// projection of a search tree runs low and rises as deeper branches appear (a team saw "33%,
// about 20 s left" for two minutes). Settled: three or more projections over the last
// max(10 s, a quarter of the run) within 25% of each other; until then no time is promised.
class TotalEstimate {
 public:
  void add(double at_s, double total);
  bool settled() const { return settled_; }

 private:
  std::deque<std::pair<double, double>> samples_;  // (seconds, projected total), oldest first
  bool settled_ = false;
};

// Progress on stderr: executions, the rate, and for an exhaustive search an estimate of the
// total and of the time left (from StrategyStatus::explored_fraction).
class Progress {
 public:
  Progress(std::ostream& err, const real::Stopwatch& clock, ProgressMode mode = ProgressMode::automatic);

  // A progress callback for a search labelled `label`; null when progress is not shown.
  std::function<void(const sim::ExploreStats&)> callback(std::string label);
  // Erases the progress line, if one is shown.
  void clear();

 private:
  std::ostream& err_;
  const real::Stopwatch& clock_;
  bool in_place_;  // a terminal: one line, rewritten
  bool enabled_;
  bool shown_ = false;
  double last_;
  TotalEstimate estimate_;
};

// A count for people: 950, 12.3k, 4.19M, 1.07G.
std::string approx_count(double n);

// "lastzero-16: 1,234,567 executions, 52,000/s, about 3,100,000 in all (40%), about 36 s left";
// with an estimate not settled, the projection so far and no time.
std::string progress_line(const std::string& label, const sim::ExploreStats& s, bool settled = true);

// Where a search's checkpoints go and which one it goes on from (check --checkpoint,
// --resume, --checkpoint-every).
struct CheckpointFiles {
  std::optional<std::string> checkpoint, resume;
  double every = 60;
};

// Checks one scenario with its progress shown under `label`; stops at Ctrl-C.
// `exchange`: the coordinator's side of check --queue (sim/explore/subtree_exchange.h), released
// when the search ends (which ends the run for its workers).
sim::CheckReport run_one(const Scenario& scenario, const sim::CheckOverrides& overrides, Progress& progress,
                         const std::string& label, const CheckpointFiles& files = {},
                         std::shared_ptr<sim::SubtreeExchange> exchange = nullptr);

// Parses "I/N" (1-based, as job runners number their jobs) into a 0-based shard.
sim::StrategyOptions::Shard parse_shard(const std::string& text);

// Replays a trace to check that it still fits the code: decisions, events and verdict.
// A trace that does not is bad input (InputError naming the step and the difference).
sim::ReplayReport verified_replay(const sim::Trace& trace, const std::string& path);

// A failing trace's cause: as recorded in it, or found now (within a few seconds, or until
// Ctrl-C). Nothing for a passing trace.
std::optional<sim::Cause> cause_of(const sim::Trace& trace, const std::string& path);

// Writes the HTML view of a trace (lockstep report) to `html_path`.
void write_html(const sim::Trace& trace, const std::string& trace_path, const std::string& html_path,
                const ReportContext& context);

// Writes a sweep's results.json and summary.md under `out_dir`, and the JUnit XML when asked.
void write_reports(const std::string& out_dir, const std::vector<nlohmann::json>& results, double elapsed,
                   const std::optional<std::string>& junit, const std::string& note = "");

// A sweep's exit code: bad input first, then any verdict not as expected.
int sweep_exit_code(const std::vector<nlohmann::json>& results);

}  // namespace lockstep::cli
