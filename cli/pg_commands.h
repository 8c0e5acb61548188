// cli/pg_commands.h: the commands that talk to a real PostgreSQL: confirm (a scenario on
// real threads, or Bug #17686 rounds), conform (a simulated trace's statements replayed on
// the server, outcome by outcome) and locks (the monitoring view).
//
// --pg takes a libpq conninfo (empty: the PG* environment variables) or "auto": a
// throwaway cluster (real/throwaway_server.h) started for the command and removed after.
// An unreachable server is bad input (exit 2), its message without any password.
#pragma once

#include <memory>
#include <optional>
#include <ostream>

namespace CLI {
class App;
}

namespace lockstep::cli {

class PgCommands {
 public:
  explicit PgCommands(CLI::App& app);
  ~PgCommands();
  // The exit code when one of these commands was parsed; nullopt otherwise.
  std::optional<int> run(std::ostream& out, std::ostream& err);

  struct Args;  // the parsed options (pg_commands.cc)

 private:
  std::unique_ptr<Args> a_;
};

}  // namespace lockstep::cli
