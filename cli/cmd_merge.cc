// `lockstep merge RESULTS...`: combine the results.json of sweep shards (or the `check --json`
// output of shards and of a --queue run's coordinator and workers) into one summary.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/command_support.h"
#include "lockstep/cli/report.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/verdict.h"

namespace lockstep::cli {
namespace {

namespace fs = std::filesystem;

struct MergeArgs {
  std::vector<std::string> inputs;
  std::string out = "reports";
  std::optional<std::string> junit;
  bool json = false;
};

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

// Every entry of the results.json files, each checked as `sweep` writes it.
std::vector<nlohmann::json> read_entries(const std::vector<std::string>& inputs) {
  std::vector<nlohmann::json> entries;
  for (const auto& path : inputs) {
    nlohmann::json doc = read_json_file(path);
    if (doc.is_object()) doc = nlohmann::json::array({std::move(doc)});  // one `check --json` result
    const JsonCursor root(doc, path);
    for (const auto& e : root.items()) {
      check_result_entry(e);
      entries.push_back(e.value());
    }
  }
  return entries;
}

int cmd_merge(const MergeArgs& a, std::ostream& out, std::ostream& err) {
  const std::vector<nlohmann::json> entries = read_entries(a.inputs);
  const std::vector<nlohmann::json> merged = merge_results(entries);
  double elapsed = 0;
  for (const auto& m : merged) elapsed = std::max(elapsed, m["elapsed_s"].get<double>());
  write_reports(a.out, merged, elapsed, a.junit);
  for (const auto& m : merged) {
    if (a.json) {
      out << m.dump() << '\n';
    } else {
      out << fmt::format("{}: {} ({} executions){}\n", m["scenario"].is_null() ? m["file"].get<std::string>() : m["scenario"].get<std::string>(),
                         m["verdict"].get<std::string>(), m["executions"].dump(), m["as_expected"].get<bool>() ? "" : "  <-- NOT AS EXPECTED");
      if (const auto q = m.value("queue", nlohmann::json()); q.is_object() && q.contains("workers")) {
        out << fmt::format("  queue: {} workers explored {} executions in {} subtrees; {} taken, {} redundant ({:.1f}% "
                           "of the search)\n",
                           q["workers"].get<int>(), q["worker_executions"].get<std::uint64_t>(),
                           q["worker_tasks"].get<std::uint64_t>(), q.value("remote_taken_executions", std::uint64_t{0}),
                           q["redundant_executions"].get<std::uint64_t>(), 100.0 * q["redundant_fraction"].get<double>());
      }
    }
  }
  err << fmt::format("merge: {} results from {} files into {} scenarios; reports in {}\n", entries.size(), a.inputs.size(),
                     merged.size(), (fs::path(a.out) / "summary.md").string());
  return sweep_exit_code(merged);
}

}  // namespace

void add_merge_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<MergeArgs>();
  CLI::App* mg = app.add_subcommand("merge", "combine the results.json of sweep shards into one summary");
  mg->add_option("results", args->inputs, "results.json files of the shards")->required();
  mg->add_option("--out", args->out, "output directory")->capture_default_str();
  mg->add_option("--junit", args->junit, "also write JUnit XML to this file");
  mg->add_flag("--json", args->json, "print one JSON object per scenario");
  mg->callback([&context, args] { context.command = [&context, args] { return cmd_merge(*args, context.out, context.err); }; });
}

}  // namespace lockstep::cli
