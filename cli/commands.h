// cli/commands.h: the `lockstep` command line. run_cli (cli/commands.cc) only parses and
// dispatches: each command is in a file of its own (cli/subcommands.h lists them; confirm,
// conform and locks against a real PostgreSQL are in cli/pg_commands.h).
//
// Exit codes: 0 every verdict as expected (a scenario with no `expect` expects pass);
// 1 some verdict not as expected; 2 bad input (malformed scenario or trace, unknown name,
// missing file, a trace that no longer fits the code); 3 an internal error of lockstep.
#pragma once

#include <istream>
#include <ostream>

namespace lockstep::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitUnexpected = 1;
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;

// Runs the command line; writes results to `out` and diagnostics to `err`; reads `in` (for
// replay --step; std::cin in the first form).
int run_cli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);
int run_cli(int argc, const char* const* argv, std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace lockstep::cli
