// `lockstep shrink TRACE`: shrink a failing trace: fewer preemptions, then fewer steps and
// switches; the shrunk trace still replays to the same failure.
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "lockstep/cli/command_support.h"
#include "lockstep/cli/commands.h"
#include "lockstep/cli/interrupt.h"
#include "lockstep/cli/report.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/real/wall_clock.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {
namespace {

struct ShrinkArgs {
  std::string path;
  std::optional<std::string> out;
  std::optional<double> time_limit_s;
};

// Where the shrunk trace goes: --out, or TRACE with .shrunk.json for .json.
std::string shrunk_path(const std::string& path, const std::optional<std::string>& out_path) {
  if (out_path) return *out_path;
  const std::string suffix = ".json";
  return (path.size() > suffix.size() && path.ends_with(suffix) ? path.substr(0, path.size() - suffix.size()) : path) +
         ".shrunk.json";
}

int cmd_shrink(const std::string& path, const std::optional<std::string>& out_path, std::optional<double> time_limit_s,
               const ReportContext& context, std::ostream& out) {
  const real::Stopwatch clock;
  const sim::Trace trace = sim::load_trace(path);
  if (!is_failure(trace.verdict)) throw InputError(fmt::format("{}: verdict {} is no failure: nothing to shrink", path, verdict_name(trace.verdict)));
  (void)verified_replay(trace, path);  // its decisions must still give its verdict
  sim::ShrinkBudget budget;
  budget.stop = [&] { return interrupted() || (time_limit_s && clock.elapsed_seconds() >= *time_limit_s); };
  sim::Trace shrunk = sim::shrink_trace(trace, path, budget);
  const std::string target = shrunk_path(path, out_path);
  sim::save_trace(shrunk, target);
  const auto& s = *shrunk.shrunk;
  out << fmt::format("{}: {} preemptions and {} steps, from {} preemptions and {} steps ({} attempts{})\n",
                     verdict_name(shrunk.verdict), s.preemptions, s.steps, s.original_preemptions, s.original_steps,
                     s.attempts, s.steps > s.original_steps ? "; fewer preemptions come before fewer steps" : "");
  if (s.out_of_budget) out << "  (shrinking stopped by its budget: a simpler trace may exist)\n";
  out << fmt::format("  trace: {}\n  replay: {}\n", target, replay_command(context.program, target));
  return kExitOk;
}

}  // namespace

void add_shrink_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<ShrinkArgs>();
  CLI::App* sh = app.add_subcommand("shrink", "shrink a failing trace: fewer preemptions, then fewer steps and switches");
  sh->add_option("trace", args->path, "trace file (lockstep-trace/1)")->required();
  sh->add_option("--out", args->out, "where to write the shrunk trace (default: TRACE with .shrunk.json)");
  sh->add_option("--max-seconds", args->time_limit_s,
                 "stop shrinking after this much wall time and keep the simplest trace found so far (it is also "
                 "bounded by 4000 attempts and 20 million steps)")
      ->check(CLI::NonNegativeNumber);
  sh->callback([&context, args] {
    context.command = [&context, args] {
      return finished(cmd_shrink(args->path, args->out, args->time_limit_s, context.report, context.out));
    };
  });
}

}  // namespace lockstep::cli
