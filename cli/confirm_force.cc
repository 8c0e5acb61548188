#include "lockstep/cli/confirm_force.h"

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "lockstep/cli/permutation_diff.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/sql/spec.h"
#include "lockstep/model/systems/sql_spec.h"
#include "lockstep/real/isolation_runner.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/trace.h"
#include "lockstep/sim/isolation.h"

namespace lockstep::cli {
namespace {

// The trace's steps in the order they began: a session's step_started fact, placed where
// its session next takes a step of the schedule (the statement's first).
std::vector<std::int64_t> started_steps(const sim::ReplayReport& replay, const std::string& path) {
  const std::string observed = fmt::format("observe {}", sql_spec::kStepStarted);
  std::vector<std::int64_t> started;
  std::map<ActorId, std::int64_t> pending;
  for (const sim::LogEvent& e : replay.events) {
    if (e.op == "choose backend_terminated" && e.result == "1") {
      throw InputError(fmt::format("--force {}: the trace ends a session (the backend_terminated fault), which is not forced "
                                   "step by step; confirm without --force injects the fault on the server",
                                   path));
    }
    if (e.op == observed) {
      // A step before it that took no step of the schedule (SELECT pg_backend_pid(), say)
      // touched nothing another session sees: it began here.
      if (auto p = pending.find(e.actor); p != pending.end()) started.push_back(p->second);
      pending[e.actor] = std::stoll(e.result.substr(0, e.result.find(' ')));
      continue;
    }
    if (auto p = pending.find(e.actor); p != pending.end()) {
      started.push_back(p->second);
      pending.erase(p);
    }
  }
  for (const auto& [actor, index] : pending) started.push_back(index);  // the execution ended first
  return started;
}

// The checks whose lines say other than "t".
std::vector<std::string> failed_checks(const std::string& output) {
  std::vector<std::string> failed;
  std::size_t at = 0;
  while ((at = output.find("\ncheck \"", at)) != std::string::npos) {
    const std::size_t end = output.find('\n', at + 1);
    const std::string line = output.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    if (!line.ends_with(": t")) failed.push_back(line);
    at = end == std::string::npos ? output.size() : end;
  }
  return failed;
}

std::string trace_verdict(const sim::Trace& trace) {
  return trace.verdict == Verdict::violation ? fmt::format("violation {}", trace.invariant) : std::string(verdict_name(trace.verdict));
}

}  // namespace

int run_forced_replay(const std::string& trace_path, const Scenario& scenario, const std::string& pg, std::ostream& out) {
  const sim::Trace trace = sim::load_trace(trace_path);
  const std::string recorded = trace.scenario.value("name", "");
  if (recorded != scenario.name) {
    throw InputError(fmt::format("--force {}: a trace of scenario \"{}\", not of \"{}\"", trace_path, recorded, scenario.name));
  }
  if (scenario.system != "sql") {
    throw InputError(fmt::format("--force {}: forced replay runs SQL scenarios (.spec files) statement by statement; scenario "
                                 "\"{}\" is of system \"{}\": use --aim",
                                 trace_path, scenario.name, scenario.system));
  }
  const std::string text = scenario.document.at("config").at("spec").get<std::string>();
  const sql::Spec spec = sql::parse_spec(text, scenario.file);
  const sql::Spec as_written = sql::parse_spec(text, scenario.file, sql::SqlText::as_written);
  const std::vector<std::string> names = sql_spec::steps_in_order(spec, started_steps(sim::replay_trace(trace, trace_path), trace_path));
  const Server server(pg);
  std::vector<sql::PermutationStep> steps;
  std::string order;
  for (const std::string& name : names) {
    steps.push_back({name, {}, {}});
    order += " " + name;
  }
  out << fmt::format("confirm --force {} on {}: the trace's verdict is {}; its {} steps, in the order they began:{}\n", trace_path,
                     server.shown(), trace_verdict(trace), steps.size(), order);
  const std::string simulated = sim::run_isolation_permutation(spec, steps, true);
  const std::string served = real::run_permutation_on_server(as_written, steps, server.conninfo(), std::chrono::seconds(300), true, {}, server.owned());
  out << "\nthe server, forced step by step:" << served;
  if (const auto d = first_permutation_difference(simulated, served)) {
    out << fmt::format("\nNOT as in the simulation: the first outcome that differs is at {} (line {} of the server's output):\n"
                       "  simulation: {}\n  server:     {}\n",
                       d->step, d->line, d->simulation, d->server);
    return 1;
  }
  const std::vector<std::string> failed = failed_checks(served);
  const bool trace_fails = trace.verdict == Verdict::violation;
  const bool shown = trace_fails ? std::any_of(failed.begin(), failed.end(), [&](const std::string& line) {
    return line.starts_with(fmt::format("check \"{}\":", trace.invariant));
  }) : failed.empty();
  if (shown) {
    out << (trace_fails ? fmt::format("\nseen on the server: every step's outcome as in the simulation, and {}\n", failed.front())
                        : std::string("\nas in the simulation on the server: every step's outcome, and every check holds\n"));
    return 0;
  }
  out << fmt::format("\nthe server printed what the simulation printed when forced step by step, but not the trace's {}: the "
                     "trace's outcome hangs on an order inside a statement, which forcing statement by statement cannot "
                     "reproduce (confirm --aim steers toward it)\n",
                     trace_verdict(trace));
  return 1;
}

}  // namespace lockstep::cli
