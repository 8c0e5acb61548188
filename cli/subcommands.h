// cli/subcommands.h: how each command of `lockstep` joins the command line, one file per
// command: check, sweep, merge, replay, shrink, report and list here (cli/cmd_*.cc); diff in
// cli/diff.h; confirm, conform and locks in cli/pg_commands.h.
//
// An add_*_command adds its subcommand with its options, and a callback that CLI11 calls
// once the whole command line has parsed. The callback only stores the command in
// CommandContext::command; run_cli (cli/commands.h) runs it after parsing, with Ctrl-C
// handled and errors turned into exit codes. So nothing runs for a command line that does
// not parse, and no command throws out of CLI11's parse.
#pragma once

#include <functional>
#include <istream>
#include <ostream>

#include "lockstep/cli/report.h"

namespace CLI {
class App;
}

namespace lockstep::cli {

// What a command works with.
struct CommandContext {
  std::istream& in;      // replay --step reads it
  std::ostream& out;     // the results
  std::ostream& err;     // diagnostics and progress
  ReportContext report;  // how lockstep was invoked: set after parsing, before the command runs
  std::function<int()> command;  // the parsed command; returns its exit code
};

// A command's exit code, or interrupted_exit_code() when Ctrl-C or SIGTERM stopped it:
// for the commands that stop early on a signal and write what they knew.
int finished(int code);

void add_check_command(CLI::App& app, CommandContext& context);   // cli/cmd_check.cc
void add_sweep_command(CLI::App& app, CommandContext& context);   // cli/cmd_sweep.cc
void add_merge_command(CLI::App& app, CommandContext& context);   // cli/cmd_merge.cc
void add_replay_command(CLI::App& app, CommandContext& context);  // cli/cmd_replay.cc
void add_shrink_command(CLI::App& app, CommandContext& context);  // cli/cmd_shrink.cc
void add_report_command(CLI::App& app, CommandContext& context);  // cli/cmd_report.cc
void add_list_command(CLI::App& app, CommandContext& context);    // cli/cmd_list.cc
void add_isolation_command(CLI::App& app, CommandContext& context);  // cli/cmd_isolation.cc

}  // namespace lockstep::cli
