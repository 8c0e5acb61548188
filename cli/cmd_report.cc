// `lockstep report TRACE -o FILE`: write a trace as a self-contained HTML page
// (cli/html_report.h), once it replays as recorded.
#include <memory>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "lockstep/cli/command_support.h"
#include "lockstep/cli/commands.h"
#include "lockstep/cli/report.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {
namespace {

struct ReportArgs {
  std::string path, out;
};

int cmd_report(const std::string& path, const std::string& html, const ReportContext& context, std::ostream& out) {
  const sim::Trace trace = sim::load_trace(path);
  // A trace of a model written in C++ that this program does not register replays only in
  // its own test binary: it is drawn as recorded. Every other trace is drawn only once it
  // replays as recorded.
  const bool elsewhere = !sim::replays_here(trace);
  if (!elsewhere) (void)verified_replay(trace, path);
  write_html(trace, path, html, context);
  out << fmt::format("report: {}{}\n", html, elsewhere ? " (a trace of a model in C++: drawn as recorded, not replayed)" : "");
  return kExitOk;
}

}  // namespace

void add_report_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* rep = app.add_subcommand("report", "write a trace as a self-contained HTML page (swimlanes, one per actor)");
  rep->add_option("trace", args->path, "trace file (lockstep-trace/1)")->required();
  rep->add_option("-o,--out", args->out, "the HTML file to write")->required();
  rep->callback([&context, args] {
    context.command = [&context, args] { return cmd_report(args->path, args->out, context.report, context.out); };
  });
}

}  // namespace lockstep::cli
