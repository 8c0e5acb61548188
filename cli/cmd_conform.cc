// cli/cmd_conform.cc: `lockstep conform`: the statements of simulated traces replayed on a
// real server in the trace's order, every outcome compared with the simulation's.
#include "lockstep/cli/pg_commands.h"

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/commands.h"
#include "lockstep/cli/pg_server.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/scenario.h"
#include "lockstep/real/conform.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {
namespace {

struct ConformArgs {
  std::vector<std::string> traces;
  std::string pg = "auto";
  bool json = false;
  bool all = false;
};


// The statements of every trace, replayed in the simulation: bad input stops here, before
// the server is started.
std::vector<sim::pg::StatementLog> statement_logs(const std::vector<std::string>& traces) {
  std::vector<sim::pg::StatementLog> logs;
  for (const auto& path : traces) {
    const sim::Trace trace = sim::load_trace(path);
    sim::pg::StatementLog log;
    try {
      (void)sim::replay_trace(trace, path, &log);
    } catch (const sim::Divergence& d) {
      throw InputError(fmt::format("{}: trace diverges at step {}: {}", path, d.step(), d.what()));
    }
    if (log.empty()) {
      throw InputError(fmt::format("{}: its execution sent no statement to PostgreSQL: conform has nothing to compare", path));
    }
    logs.push_back(std::move(log));
  }
  return logs;
}

// One trace's conformance as one JSON object (--json).
nlohmann::json conform_json(const std::string& trace, const real::ConformReport& r) {
  nlohmann::json d = nlohmann::json::array();
  for (const auto& x : r.disagreements) {
    d.push_back({{"step", x.step}, {"statement", x.statement}, {"sim", x.sim}, {"server", x.server}});
  }
  return nlohmann::json{{"trace", trace}, {"statements", r.statements}, {"sessions", r.sessions}, {"waits", r.waits},
                        {"cancelled", r.cancelled}, {"phantoms", r.phantoms}, {"lock_views", r.lock_views}, {"overlapped", r.overlapped}, {"diverged_at", r.diverged_at ? nlohmann::json(*r.diverged_at) : nlohmann::json()},
                        {"agree", r.disagreements.empty()}, {"disagreements", d}};
}

// One trace's conformance for a person: its counts, where it stopped, every disagreement.
void print_conform(std::ostream& out, const std::string& trace, const real::ConformReport& r) {
  out << fmt::format("{}: {} statements on {} sessions; {} lock waits, {} ended by a timer (cancelled), {} phantom grants, "
                     "{} pg_locks views compared, {} outcomes overlapped (not compared): {}\n",
                     trace, r.statements, r.sessions, r.waits, r.cancelled, r.phantoms, r.lock_views, r.overlapped,
                     r.disagreements.empty() ? "sim and server agree" : "DISAGREE");
  if (r.diverged_at) {
    out << fmt::format("  stopped at step {}: statements that overlap in the simulation went another way on the server "
                       "(not a disagreement; the rest is not compared)\n", *r.diverged_at);
  }
  for (const auto& x : r.disagreements) {
    out << fmt::format("  sim and server disagree at step {}: {}\n    sim:    {}\n    server: {}\n", x.step, x.statement, x.sim, x.server);
  }
}

// `conform TRACE...`: each trace's statements on the server, outcome by outcome.
int run_conform(const ConformArgs& a, std::ostream& out) {
  const std::vector<sim::pg::StatementLog> logs = statement_logs(a.traces);
  const Server server(a.pg);
  real::ConformOptions o;
  o.conninfo = server.conninfo();
  o.stop_at_first = !a.all;
  bool all_agree = true;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const real::ConformReport r = real::conform(logs[i], o);
    all_agree = all_agree && r.disagreements.empty();
    if (a.json) {
      out << conform_json(a.traces[i], r).dump() << '\n';
    } else {
      print_conform(out, a.traces[i], r);
    }
  }
  return all_agree ? kExitOk : kExitUnexpected;
}

}  // namespace

void add_conform_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<ConformArgs>();
  CLI::App* c = app.add_subcommand("conform",
                                   "replay the PostgreSQL statements of simulated traces on a real server, in the trace's "
                                   "order, and compare every outcome and the pg_locks rows with the simulation's");
  c->add_option("traces", args->traces, "trace files (lockstep-trace/1)")->required();
  c->add_option("--pg", args->pg, "libpq conninfo (\"\": the PG* environment), or auto: a throwaway server")
      ->capture_default_str();
  c->add_flag("--all", args->all, "go on past the first disagreement of a trace");
  c->add_flag("--json", args->json, "print one JSON object per trace");
  c->callback([&context, args] {
    context.command = [&context, args] { return finished(run_conform(*args, context.out)); };
  });
}

}  // namespace lockstep::cli
