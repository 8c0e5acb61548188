// cli/diff.h: `lockstep diff A B`: two traces of one scenario side by side, and where their
// orders part (a failing trace and a passing execution, or two failures); `diff A --cause K`
// puts a failing trace beside the nearest execution that does not fail so (the one its
// cause analysis ran for pair K: it passes, or fails another way).
//
// Prints (or, with --json, gives as one object): both verdicts; how many events the two
// share from the start and the first event where they part; the pairs of events that both
// traces contain but in opposite orders (dependent steps of two actors first, by the
// explorer's own relation on A replayed; for a trace that does not replay here, events
// naming the same object: those are the races that separate the two executions); and, per actor, whether its own
// events are the same in both or from which one they differ (a read that returned another
// value). Events are matched per actor, in order, while their operations agree (but for a
// statement's connection pid, which may differ between executions).
// Exit codes as diff(1): 0 the event logs are identical, 1 they differ, 2 bad input
// (unreadable trace, or traces with different actors).
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace lockstep::cli {

struct CommandContext;

// Adds `diff A [B] [--cause K [--cause-out FILE]] [--json]` (cli/subcommands.h); given
// both B and --cause, or neither, it is bad input.
void add_diff_command(CLI::App& app, CommandContext& context);

int cmd_diff(const std::string& a_path, const std::string& b_path, bool json, std::ostream& out);

// `lockstep diff A --cause K [--cause-out FILE]`: A against the execution with A's cause
// pair K reordered (the nearest execution that does not fail so), written to FILE
// as a trace when asked.
int cmd_diff_cause(const std::string& a_path, std::size_t k, const std::string& cause_out, bool json, std::ostream& out);

}  // namespace lockstep::cli
