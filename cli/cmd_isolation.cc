// `lockstep isolation SPEC... [--expected FILE.out] [--pg CONNINFO|auto]`: PostgreSQL
// isolation specs run as isolationtester runs them, on the simulated server, or with --pg on
// a real one (real/isolation_runner.h): each permutation (the spec's, or every interleaving
// of its sessions' steps) one at a time, printed byte for byte as isolationtester prints it
// (model/systems/sql_spec.h). With --expected, the output is compared with PostgreSQL's
// expected file: exit 0 when equal, else 1 and the first line that differs. With --diff, each
// permutation runs on both, and the first step where they differ is printed.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "lockstep/cli/interrupt.h"
#include "lockstep/cli/permutation_diff.h"
#include "lockstep/cli/pg_server.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/sql/spec.h"
#include "lockstep/model/systems/sql_spec.h"
#include "lockstep/real/isolation_runner.h"
#include "lockstep/sim/isolation.h"

namespace lockstep::cli {
namespace {

struct IsolationArgs {
  std::vector<std::string> specs;
  std::optional<std::string> expected;
  std::optional<std::string> pg;  // a real server instead of the simulation
  bool diff = false;              // the simulation and the server side by side
  int max_step_wait = static_cast<int>(sql::kMaxStepWait.count());  // seconds
};

std::string permutation_names(const std::vector<sql::PermutationStep>& steps) {
  std::string names;
  for (const auto& step : steps) names += " " + step.step;
  return names;
}

// A spec's whole output, appended to `all`, or (with `live`) written there as each permutation
// ends: on the server `conninfo` names, or (nullptr) in simulation. For a server the SQL is
// sent as written; the simulation needs it within lockstep's subset. Ctrl-C or SIGTERM stops
// it between permutations (or, on a server, during a step): what finished is kept.
void spec_output(const std::string& path, const Server* server, std::chrono::seconds max_step_wait, std::string& all,
                 std::ostream* live) {
  const sql::Spec spec = sql::load_spec(path, server != nullptr ? sql::SqlText::as_written : sql::SqlText::parsed);
  auto emit = [&](const std::string& text) {
    if (live != nullptr) {
      *live << text << std::flush;
    } else {
      all += text;
    }
  };
  emit(fmt::format("Parsed test spec with {} session{}\n", spec.sessions.size(), spec.sessions.size() == 1 ? "" : "s"));
  for (const auto& steps : sql_spec::permutations(spec)) {
    if (interrupted()) break;
    emit(server != nullptr ? real::run_permutation_on_server(spec, steps, server->conninfo(), max_step_wait, false, interrupted, server->owned())
                           : sim::run_isolation_permutation(spec, steps, false, max_step_wait));
  }
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot read the file", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The first line where `got` and `want` differ, as "line N: expected ... got ...".
std::string first_difference(const std::string& got, const std::string& want) {
  std::istringstream g(got), w(want);
  std::string gl, wl;
  for (int line = 1;; ++line) {
    const bool has_g = static_cast<bool>(std::getline(g, gl));
    const bool has_w = static_cast<bool>(std::getline(w, wl));
    if (!has_g && !has_w) return "";
    if (!has_g || !has_w || gl != wl) {
      return fmt::format("line {}:\n  expected: {}\n  got:      {}", line, has_w ? wl : "(end of file)", has_g ? gl : "(end of output)");
    }
  }
}

// --diff: each permutation on the simulation and on the server; the first step whose output
// (rows, error, or waiting) differs.
int diff_specs(const IsolationArgs& a, const Server& server, std::ostream& out, std::ostream& err) {
  int differing = 0;
  for (const std::string& path : a.specs) {
    const sql::Spec spec = sql::load_spec(path);
    for (const auto& steps : sql_spec::permutations(spec)) {
      if (interrupted()) return finished(differing == 0 ? 0 : 1);
      const std::chrono::seconds wait(a.max_step_wait);
      const std::string simulated = sim::run_isolation_permutation(spec, steps, false, wait);
      const std::string served = real::run_permutation_on_server(spec, steps, server.conninfo(), wait, false, interrupted, server.owned());
      if (simulated == served) {
        out << fmt::format("{}: permutation{}: the same\n", path, permutation_names(steps));
        continue;
      }
      ++differing;
      const PermutationDifference d = *first_permutation_difference(simulated, served);
      err << fmt::format("{}: permutation{}: differs at step {} (line {}):\n  simulation: {}\n  server:     {}\n", path,
                         permutation_names(steps), d.step, d.line, d.simulation, d.server);
    }
  }
  if (differing == 0) out << "isolation --diff: the simulation and the server print the same\n";
  return differing == 0 ? 0 : 1;
}

int cmd_isolation(const IsolationArgs& a, std::ostream& out, std::ostream& err) {
  if (a.diff && !a.pg) throw InputError("isolation --diff needs --pg CONNINFO|auto: the server to compare with");
  const std::unique_ptr<Server> server = a.pg ? std::make_unique<Server>(*a.pg) : nullptr;
  if (a.diff) {
    try {
      return diff_specs(a, *server, out, err);
    } catch (const real::PermutationInterrupted&) {
      err << "isolation: interrupted; the permutations before this one are reported above\n";
      return finished(1);
    }
  }
  std::string all;
  std::ostream* live = a.expected ? nullptr : &out;  // without a file to compare with, each permutation as it ends
  try {
    for (const std::string& spec : a.specs) spec_output(spec, server.get(), std::chrono::seconds(a.max_step_wait), all, live);
  } catch (const real::PermutationInterrupted&) {
  }
  if (interrupted()) {
    err << "isolation: interrupted; what is printed is the output of the permutations that finished\n";
    return finished(1);
  }
  if (!a.expected) return 0;
  const std::string want = read_text(*a.expected);
  if (all == want) {
    out << fmt::format("isolation: output equals {}\n", *a.expected);
    return 0;
  }
  const std::string diff = first_difference(all, want);
  err << fmt::format("isolation: output differs from {} at {}\n", *a.expected, diff.empty() ? "the end (a trailing difference)" : diff);
  return 1;
}

}  // namespace

void add_isolation_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<IsolationArgs>();
  CLI::App* c = app.add_subcommand("isolation", "run PostgreSQL isolation specs as isolationtester prints them, on the simulated server or a real one");
  c->add_option("specs", args->specs, ".spec files (PostgreSQL's src/test/isolation format)")->required();
  c->add_option("--expected", args->expected, "compare with this expected output (.out); exit 1 at the first difference");
  c->add_option("--pg", args->pg,
                "run on this PostgreSQL instead (libpq conninfo; \"\": the PG* environment; auto: a throwaway server), "
                "one connection per session, lock waits seen from the server; the SQL is sent as written");
  c->add_option("--max-step-wait", args->max_step_wait,
                "seconds a step may keep its session busy when the session's next step is due, before it is canceled "
                "(isolationtester's max_step_wait; virtual time on the simulated server)")
      ->check(CLI::Range(1, 86400));
  c->add_flag("--diff", args->diff,
              "run each permutation on the simulation and on the --pg server and print the first step where they differ "
              "(rows, error or waiting); exit 1 when one does");
  c->callback([&context, args] { context.command = [&context, args] { return cmd_isolation(*args, context.out, context.err); }; });
}

}  // namespace lockstep::cli
