#include "lockstep/cli/commands.h"

#include <iostream>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "lockstep/cli/diff.h"
#include "lockstep/cli/interrupt.h"
#include "lockstep/cli/pg_commands.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/env.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/sim/explore/checkpoint.h"
#include "lockstep/real/libpq_backend.h"

namespace lockstep::cli {
namespace {

// Every command, in the order --help lists them.
void add_commands(CLI::App& app, CommandContext& context) {
  add_check_command(app, context);
  add_sweep_command(app, context);
  add_merge_command(app, context);
  add_replay_command(app, context);
  add_shrink_command(app, context);
  add_diff_command(app, context);
  add_report_command(app, context);
  add_list_command(app, context);
  add_isolation_command(app, context);
  add_confirm_command(app, context);
  add_conform_command(app, context);
  add_locks_command(app, context);
}

// How lockstep was invoked: argv[0] when it names a path, so the printed replay command
// runs as it is.
ReportContext report_context(int argc, const char* const* argv) {
  ReportContext context;
  if (argc > 0 && argv[0] != nullptr && std::string_view(argv[0]).find('/') != std::string_view::npos) {
    context.program = argv[0];
  }
  return context;
}

// Runs the parsed command with Ctrl-C and SIGTERM caught; its errors become exit codes.
int run_command(const CommandContext& context) {
  const InterruptScope interrupts;
  try {
    if (context.command) return context.command();
  } catch (const InputError& e) {
    context.err << "lockstep: " << e.what() << '\n';
    return finished(kExitBadInput);
  } catch (const real::ServerError& e) {
    context.err << "lockstep: the server failed: " << e.what() << '\n';
    return finished(kExitBadInput);
  } catch (const ModelError& e) {  // the model (a spec's setup, say) fails outside a search: its input
    context.err << "lockstep: " << e.what() << '\n';
    return finished(kExitBadInput);
  } catch (const std::exception& e) {
    context.err << "lockstep: internal error: " << e.what() << '\n';
    return kExitInternal;
  }
  return kExitBadInput;
}

}  // namespace

// A command stopped by Ctrl-C or SIGTERM has written what it knew; it exits 130 or 143.
int finished(int code) { return interrupted() ? interrupted_exit_code() : code; }

int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  return run_cli(argc, argv, std::cin, out, err);
}

int run_cli(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err) {
  CLI::App app{"lockstep: deterministic concurrency simulation and model checking for lock services"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "lockstep " + std::string(sim::lockstep_version()));
  CommandContext context{in, out, err, {}, {}};
  add_commands(app, context);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // Help and version are "errors" with exit code 0 in CLI11; app.exit prints them.
    const int code = app.exit(e, out, err);
    return code == 0 ? kExitOk : kExitBadInput;
  }
  context.report = report_context(argc, argv);
  return run_command(context);
}

}  // namespace lockstep::cli
