// `lockstep replay TRACE`: re-execute a trace from its decisions, check that its event log
// and verdict are the recorded ones, and print it (or walk it step by step).
#include <unistd.h>

#include <algorithm>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/command_support.h"
#include "lockstep/cli/commands.h"
#include "lockstep/cli/report.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/sim/explain/interleaving_table.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {
namespace {

struct ReplayArgs {
  std::string path;
  std::string rerecord;
  bool json = false, step = false, wide = false;
  std::size_t width = sim::kDefaultColumnWidth;
};

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

// The replay as one JSON object (--json).
nlohmann::json replay_json(const std::string& path, const sim::ReplayReport& r, const std::optional<sim::Cause>& cause) {
  nlohmann::json j;
  j["trace"] = path;
  if (cause) j["cause"] = cause_json(*cause);
  j["verdict"] = verdict_name(r.result.verdict);
  j["violation"] = r.result.invariant.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.result.invariant);
  j["message"] = r.result.message;
  j["steps"] = r.result.steps;
  j["events"] = r.events.size();
  j["identical"] = true;
  return j;
}

// `width`: the column limit of the table (0: no limit, each cell on one line).
int cmd_replay(const std::string& path, bool json, bool step, std::size_t width, std::istream& in, std::ostream& out) {
  const sim::Trace trace = sim::load_trace(path);
  const sim::ReplayReport r = verified_replay(trace, path);
  const std::optional<sim::Cause> cause = cause_of(trace, path);
  if (json) {
    out << replay_json(path, r, cause).dump() << '\n';
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

// `replay TRACE --rerecord OUT`.
int cmd_rerecord(const std::string& path, const std::string& out_path, std::ostream& out) {
  const sim::Trace trace = sim::load_trace(path);
  sim::Trace again;
  try {
    again = sim::rerecorded_trace(trace, path);
  } catch (const sim::Divergence& d) {
    throw InputError(fmt::format("{}: cannot re-record at step {}: {}", path, d.step(), d.what()));
  }
  sim::save_trace(again, out_path);
  std::size_t changed = trace.events.size() != again.events.size() ? 1 : 0;
  for (std::size_t i = 0; i < std::min(trace.events.size(), again.events.size()); ++i) changed += trace.events[i] == again.events[i] ? 0 : 1;
  out << fmt::format("re-recorded {} -> {}: {} events ({} differ from the trace's), verdict {}{}\n", path, out_path,
                     again.events.size(), changed, verdict_name(again.verdict),
                     again.invariant.empty() ? "" : " " + again.invariant);
  return kExitOk;
}

}  // namespace

void add_replay_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<ReplayArgs>();
  CLI::App* r = app.add_subcommand("replay", "re-execute a trace from its decisions; check log and verdict; print it");
  r->add_option("trace", args->path, "trace file (lockstep-trace/1)")->required();
  r->add_flag("--json", args->json, "print one JSON object instead of the table");
  r->add_flag("--step", args->step, "walk the interleaving one step at a time (Enter: next, q: quit)");
  r->add_option("--width", args->width, "wrap table cells longer than this many characters")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{8}, std::size_t{10'000}));
  r->add_flag("--wide", args->wide, "never wrap: every cell on one line");
  r->add_option("--rerecord", args->rerecord,
                "run the trace's decisions and write the trace to this file with the event log and message this "
                "lockstep records (after a change to what rows show); its verdict and invariant must stay the same");
  r->callback([&context, args] {
    context.command = [&context, args] {
      const ReplayArgs& a = *args;
      if (!a.rerecord.empty()) return cmd_rerecord(a.path, a.rerecord, context.out);
      return cmd_replay(a.path, a.json, a.step, a.wide ? 0 : a.width, context.in, context.out);
    };
  });
}

}  // namespace lockstep::cli
