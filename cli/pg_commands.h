// cli/pg_commands.h: the commands that talk to a real PostgreSQL, each in its own file:
// confirm (cli/cmd_confirm.cc: a scenario on real threads, or Bug #17686 rounds), conform
// (cli/cmd_conform.cc: a simulated trace's statements replayed on the server, outcome by
// outcome) and locks (cli/cmd_locks.cc: the monitoring view); the server in cli/pg_server.h.
//
// --pg takes a libpq conninfo (empty: the PG* environment variables) or "auto": a
// throwaway cluster (real/throwaway_server.h) started for the command and removed after.
// An unreachable server is bad input (exit 2), its message without any password.
#pragma once

namespace CLI {
class App;
}

namespace lockstep::cli {

struct CommandContext;

// Each adds its subcommand (cli/subcommands.h).
void add_confirm_command(CLI::App& app, CommandContext& context);
void add_conform_command(CLI::App& app, CommandContext& context);
void add_locks_command(CLI::App& app, CommandContext& context);

}  // namespace lockstep::cli
