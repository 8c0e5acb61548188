// cli/report.h: how a checked scenario is reported: one JSON object (--json, results.json),
// a few human lines, and a Markdown summary row for sweeps.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lockstep/model/scenario.h"
#include "lockstep/sim/check.h"

namespace lockstep::cli {

// How a run that was a shard ran (results.json's "shard_mode"): its part of a split search
// tree (inside), whole scenarios of a sweep's share (whole), or as a process of check --queue:
// the coordinator (its result is the search's) or a worker (it judges nothing).
enum class ShardMode : std::uint8_t { none, inside, whole, coordinator, worker };
std::string_view shard_mode_name(ShardMode mode);  // "" for none

// A check --queue process's role: shard 1 of the run coordinates, the others work.
enum class QueueRole : std::uint8_t { coordinator, worker };
inline QueueRole queue_role(int shard_index) { return shard_index == 0 ? QueueRole::coordinator : QueueRole::worker; }

struct CheckedScenario {
  std::string file;
  const Scenario* scenario = nullptr;  // null when the file could not be read
  std::string input_error;             // set when scenario is null
  const sim::CheckReport* report = nullptr;
  std::optional<std::string> trace_path;
  std::optional<std::string> report_path;  // the HTML view of the trace
  std::string shard = "";  // "I/N" when the run was a shard, else ""
  ShardMode shard_mode = ShardMode::none;
  std::vector<std::string> witness_paths;  // a lock-order cycle across executions: one trace per edge
};

// JUnit XML for CI dashboards: one test case per scenario (results as in results.json).
std::string junit_xml(const std::vector<nlohmann::json>& results, double elapsed_s);

// Combines the results.json entries of shards into those of one unsharded run.
std::vector<nlohmann::json> merge_results(const std::vector<nlohmann::json>& entries);

// Where the traces of a cross-execution lock-order cycle's edges go, beside `trace_path`
// (NAME.json -> NAME.edge-1.json, ...); writes them and returns their paths.
std::vector<std::string> save_witnesses(const sim::CheckReport& report, const std::string& trace_path);

// The replay command for a trace path, with the lockstep binary as it was invoked
// (`program`), each word quoted for a POSIX shell when needed.
std::string replay_command(const std::string& program, const std::string& trace_path);

// What the report needs besides the results: how lockstep was invoked.
struct ReportContext {
  std::string program = "lockstep";
};

nlohmann::json to_json(const CheckedScenario& c, const ReportContext& context);
// A trace's cause as JSON: {"computed", "reason" | "tried", "found", "pairs": [...]}.
nlohmann::json cause_json(const sim::Cause& cause);
// show_interleaving: print the failing interleaving when it has at most that many events.
void print_human(std::ostream& out, const CheckedScenario& c, const ReportContext& context,
                 std::size_t show_interleaving_events);
// The sweep's summary: a table of scenarios, with links relative to `out_dir`.
// `note` (such as an interruption) is printed above the table when not empty.
std::string summary_markdown(const std::vector<nlohmann::json>& results, double elapsed_s, const std::string& out_dir,
                             const std::string& note = "");

}  // namespace lockstep::cli
