// cli/cmd_confirm.cc: `lockstep confirm`: a scenario's actors on real threads against a
// real PostgreSQL, N times with seeded jitter, checking the same invariants; or, with
// --phantom, Bug #17686 rounds.
#include "lockstep/cli/pg_commands.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/commands.h"
#include "lockstep/cli/confirm_force.h"
#include "lockstep/cli/interrupt.h"
#include "lockstep/cli/pg_server.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/advisory_lock.h"
#include "lockstep/model/json_cursor.h"
#include "lockstep/model/scenario.h"
#include "lockstep/real/confirm.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/phantom_rounds.h"
#include "lockstep/real/throwaway_server.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {
namespace {

nlohmann::json stats_json(const real::LockWaitStats& s) {
  return {{"acquisitions", s.acquisitions}, {"waits", s.waits}, {"waited_ms", duration_ms(s.waited)}, {"longest_ms", duration_ms(s.longest)}};
}

std::string stats_text(const real::LockWaitStats& s) {
  return fmt::format("{} of {} waited (total {:.1f} ms, longest {:.1f} ms)", s.waits, s.acquisitions, duration_ms(s.waited), duration_ms(s.longest));
}

bool tty() { return isatty(STDERR_FILENO) == 1; }

struct ConfirmArgs {
  std::string pg = "auto";
  std::string scenario;
  int iterations = 20;
  bool until_violation = false;
  std::string aim;  // a trace of the scenario: its actors' order of steps is followed
  std::string force;  // a trace of a SQL scenario: forced on the server step by step
  int aim_blocked_ms = 0;  // 0: iterations try 10, 2 and 50 ms in turn
  std::uint64_t seed = 1;
  int jitter_us = 500;
  int limit_s = 0;  // 0: from the scenario's own durations (iteration_limit_of)
  bool no_crashes = false;
  bool no_session_faults = false;
  bool phantom = false;
  std::string system;                 // with --phantom: the system's own lock code
  std::vector<std::string> variants;  // with --system: these (default: all)
  int rounds = 1000;
  int timeout_ms = 20;
  bool json = false;
};

nlohmann::json phantom_counts_json(const real::PhantomCounts& c) {
  return nlohmann::json{{"rounds", c.rounds}, {"acquired", c.acquired}, {"timed_out", c.timed_out},
                        {"phantoms", c.phantoms}, {"leaked", c.leaked}};
}

void print_phantom_table(std::ostream& out, const std::vector<std::pair<std::string, real::PhantomCounts>>& rows) {
  out << fmt::format("{:<24} {:>7} {:>9} {:>10} {:>9} {:>7}\n", "client", "rounds", "acquired", "timed out", "phantoms", "leaked");
  for (const auto& [name, c] : rows) {
    out << fmt::format("{:<24} {:>7} {:>9} {:>10} {:>9} {:>7}\n", name, c.rounds, c.acquired, c.timed_out, c.phantoms, c.leaked);
  }
  out << "phantoms: timed out with the lock held anyway; leaked: still held once the client was done\n";
}

real::PhantomOptions phantom_options(const ConfirmArgs& a, const Server& server) {
  real::PhantomOptions o;
  o.conninfo = server.conninfo();
  o.rounds = a.rounds;
  o.lock_timeout = std::chrono::milliseconds(a.timeout_ms);
  o.seed = a.seed;
  return o;
}

// `confirm --phantom --system NAME`: the same rounds with the system's own lock code, one
// client per variant. Fails when the system's correct design (its first variant) leaks.
int run_system_phantom(const ConfirmArgs& a, std::ostream& out, std::ostream& err) {
  const SystemInfo* info = find_system(a.system);
  if (info == nullptr) throw InputError("confirm: --system: no system \"" + a.system + "\" (`lockstep list` names them)");
  if (!info->phantom_round) throw InputError("confirm: --system " + a.system + ": the system declares no phantom round (ModelSystem::phantom_round)");
  std::vector<std::string> variants = a.variants;
  if (variants.empty()) {
    for (const auto& v : info->variants) variants.push_back(v.name);
  }
  std::vector<real::PhantomClient> clients;
  for (const auto& v : variants) {
    try {
      clients.push_back(real::phantom_client(*info, v));
    } catch (const std::invalid_argument& e) {
      throw InputError(std::string("confirm: --variant: ") + e.what());
    }
  }
  const Server server(a.pg);
  const real::PhantomOptions o = phantom_options(a, server);
  std::vector<std::pair<std::string, real::PhantomCounts>> rows;
  nlohmann::json json = {{"system", a.system}, {"lock_timeout_ms", a.timeout_ms}, {"variants", nlohmann::json::object()}};
  for (const auto& client : clients) {
    rows.emplace_back(client.name, real::run_phantom_rounds(o, client, [&](const real::PhantomCounts& c) {
      if (tty()) err << fmt::format("\r\033[K{}: {} rounds, {} phantoms", client.name, c.rounds, c.phantoms) << std::flush;
    }));
    json["variants"][client.name] = phantom_counts_json(rows.back().second);
  }
  if (tty()) err << "\r\033[K" << std::flush;
  if (a.json) {
    out << json.dump(2) << '\n';
  } else {
    out << fmt::format("Bug #17686 on {} with {}'s own lock code: lock_timeout {} ms, the holder releases within +-1.5 ms of it, {} rounds per variant\n",
                       server.shown(), a.system, a.timeout_ms, a.rounds);
    print_phantom_table(out, rows);
  }
  const std::string& correct = info->variants.front().name;
  for (const auto& [name, c] : rows) {
    if (name == correct && c.leaked > 0) return kExitUnexpected;
  }
  return kExitOk;
}

// `confirm --phantom`: Bug #17686 rounds, a naive client's phantoms against the service's leaks.
int run_phantom(const ConfirmArgs& a, std::ostream& out, std::ostream& err) {
  if (!a.system.empty()) return run_system_phantom(a, out, err);
  if (!a.variants.empty()) throw InputError("confirm: --variant needs --system");
  const Server server(a.pg);
  const real::PhantomOptions o = phantom_options(a, server);
  const real::PhantomReport r = real::run_phantom_rounds(o, [&](std::string_view client, const real::PhantomCounts& c) {
    if (tty()) err << fmt::format("\r\033[K{}: {} rounds, {} phantoms", client, c.rounds, c.phantoms) << std::flush;
  });
  if (tty()) err << "\r\033[K" << std::flush;
  if (a.json) {
    out << nlohmann::json{{"lock_timeout_ms", a.timeout_ms}, {"naive", phantom_counts_json(r.naive)}, {"service", phantom_counts_json(r.service)}}.dump(2) << '\n';
  } else {
    out << fmt::format("Bug #17686 on {}: lock_timeout {} ms, the holder releases within +-1.5 ms of it, {} rounds per client\n",
                       server.shown(), a.timeout_ms, a.rounds);
    print_phantom_table(out, {{"naive", r.naive}, {"service", r.service}});
  }
  return r.service.leaked == 0 ? kExitOk : kExitUnexpected;
}

// Whether the scenario expects a run that makes no progress (liveness, livelock).
bool expects_no_progress(const Scenario& scenario) {
  return scenario.expect.verdict == Verdict::liveness || scenario.expect.verdict == Verdict::livelock;
}

// How long an iteration may run before it counts as hung, or for a scenario that expects no
// progress, as "no progress": --iteration-limit, or 5 s plus three times the durations the
// scenario writes (its leases, timeouts, sleeps and obligations' deadlines), at most an hour.
Duration iteration_limit_of(const ConfirmArgs& a, const Scenario& scenario) {
  if (a.limit_s > 0) return std::chrono::seconds(a.limit_s);
  const Duration derived = std::chrono::seconds(5) + 3 * scenario_horizon(scenario.document);
  return std::min<Duration>(derived, std::chrono::hours(1));
}

std::string seconds_text(Duration d) { return fmt::format("{:.1f} s", std::chrono::duration<double>(d).count()); }

// The options of confirm's iterations, from the command line.
real::ConfirmOptions confirm_options(const ConfirmArgs& a, const Server& server,
                                     std::vector<ActorId> aim, Duration limit) {
  real::ConfirmOptions o;
  o.conninfo = server.conninfo();
  o.aim = std::move(aim);
  o.blocked_after = std::chrono::milliseconds(a.aim_blocked_ms);
  o.iterations = a.iterations;
  o.until_violation = a.until_violation;
  o.seed = a.seed;
  o.max_jitter = std::chrono::microseconds(a.jitter_us);
  o.iteration_limit = limit;
  o.crashes = !a.no_crashes;
  o.session_faults = !a.no_session_faults;
  o.restart_server = server.restarter();
  o.stop_requested = [] { return interrupted(); };
  return o;
}

// Whether the server showed what the scenario expects: no violation for a pass, else a
// violation of the expected invariant (or of any, when it names none).
// A scenario that expects no progress is seen when an iteration makes none within the limit
// (it hangs), or when an obligation it names is still hot at the end or met too late.
bool confirmed_as_expected(const Scenario& scenario, const real::ConfirmReport& r) {
  if (scenario.expect.verdict == Verdict::pass) return r.violations.empty();
  if (expects_no_progress(scenario) && r.hung) return true;
  return std::any_of(r.violations.begin(), r.violations.end(), [&](const auto& v) {
    return !scenario.expect.violation || v.violation.invariant == *scenario.expect.violation;
  });
}

// Confirm's result as one JSON object (--json): every violation with its whole history.
nlohmann::json confirm_json(const ConfirmArgs& a, const Scenario& scenario, const real::ConfirmReport& r, bool as_expected) {
  nlohmann::json j{{"scenario", scenario.name}, {"file", a.scenario}, {"iterations", r.iterations}, {"hung", r.hung},
                   {"seed", a.seed}, {"jitter_us", a.jitter_us}, {"aim", a.aim.empty() ? nlohmann::json() : nlohmann::json(a.aim)},
                   {"aimed", a.aim.empty() ? nlohmann::json()
                                           : nlohmann::json{{"steps", r.aim_steps}, {"followed", r.aim_followed},
                                                            {"skipped", r.aim_skipped}}},
                   {"violations", nlohmann::json::array()},
                   {"by_invariant", r.by_invariant}, {"marks", r.marks},
                   {"crashes", {{"armed", r.crashes.armed}, {"injected", r.crashes.injected}, {"finished", r.crashes.finished},
                                {"points", r.crashes.points},
                                {"kind", "process"}}},
                   {"session_faults", {{"by_pg_terminate_backend", r.sessions_terminated}, {"by_closed_socket", r.sessions_closed},
                                       {"server_restarts", r.server_restarts}}},
                   {"lock_waits", {{"memory", stats_json(r.memory_locks)}, {"postgres", stats_json(r.pg_locks)}}},
                   {"seconds", duration_s(r.total)}, {"longest_iteration_s", duration_s(r.longest)},
                   {"as_expected", as_expected}, {"interrupted", r.interrupted}, {"server_lost", nullptr}};
  if (r.lost) {
    j["server_lost"] = {{"iteration", r.lost->iteration}, {"actor", r.lost->actor}, {"statement", r.lost->op},
                        {"sqlstate", r.lost->sqlstate}, {"message", r.lost->message}};
  }
  for (const auto& v : r.violations) {
    nlohmann::json h = nlohmann::json::array();
    for (const auto& e : v.history) {
      nlohmann::json entry{{"at_ms", duration_ms(e.at)}, {"actor", e.actor}, {"event", e.event}, {"subject", e.subject}, {"value", e.value}};
      if (!e.fields.empty()) entry["fields"] = e.fields;
      h.push_back(std::move(entry));
    }
    j["violations"].push_back({{"iteration", v.iteration}, {"invariant", v.violation.invariant},
                               {"message", v.violation.message}, {"history", h},
                               {"fault", v.fault.empty() ? nlohmann::json() : nlohmann::json(v.fault)}});
  }
  return j;
}

// The first few failing iterations, each with the end of its history.
void print_violations(std::ostream& out, const real::ConfirmReport& r) {
  constexpr std::size_t kShown = 3, kHistory = 40;
  for (std::size_t i = 0; i < r.violations.size() && i < kShown; ++i) {
    const auto& v = r.violations[i];
    out << fmt::format("\niteration {}: {}: {}\n", v.iteration, v.violation.invariant, v.violation.message);
    if (!v.fault.empty()) out << fmt::format("  a fault ended {}\n", v.fault);
    const std::size_t from = v.history.size() > kHistory ? v.history.size() - kHistory : 0;
    if (from > 0) out << fmt::format("  ... {} earlier events\n", from);
    for (std::size_t k = from; k < v.history.size(); ++k) {
      const auto& e = v.history[k];
      out << fmt::format("  {:>10.3f} ms  {:<22} {} {}\n", duration_ms(e.at), e.actor, e.event, e.values());
    }
  }
  if (r.violations.size() > kShown) out << fmt::format("\n... {} more failing iterations (--json lists them all)\n", r.violations.size() - kShown);
}

// Confirm's counts: iterations, violations by invariant, marks, crashes, lock waits, time.
void print_confirm_counts(std::ostream& out, const real::ConfirmReport& r) {
  out << fmt::format("\niterations: {}{}{}\n", r.iterations, r.hung ? " (then one hung: the run stopped)" : "",
                     r.interrupted ? " (then interrupted: the run stopped)" : "");
  out << fmt::format("violations: {} iterations", r.violations.size());
  for (const auto& [inv, n] : r.by_invariant) out << fmt::format(", {} {}", inv, n);
  out << '\n';
  if (r.aim_steps > 0) {
    out << fmt::format("aimed: a trace of {} steps; {} steps taken in its order over all iterations, {} skipped (their actor "
                       "took another path)\n",
                       r.aim_steps, r.aim_followed, r.aim_skipped);
  }
  if (!r.marks.empty()) {
    out << "marks:";
    for (const auto& [m, n] : r.marks) out << fmt::format(" {} {}", m, n);
    out << '\n';
  }
  if (r.crashes.armed > 0) {
    out << fmt::format("crashes: {} crashable runs; {} crashed at a crash point drawn from the {} the first iteration "
                       "passed (in the actor's thread, as in the simulation), {} finished uncrashed; a crash is its "
                       "actor's alone here (the page cache survives: a missing fsync is not tested here, the "
                       "simulation's machine crash does that)\n",
                       r.crashes.armed, r.crashes.injected, r.crashes.points, r.crashes.finished);
  }
  if (r.sessions_terminated + r.sessions_closed + r.server_restarts > 0) {
    out << fmt::format("session faults: {} sessions ended by pg_terminate_backend, {} by closing the client's socket, {} "
                       "server restarts (one per iteration after the first, before a statement drawn from the first's)\n",
                       r.sessions_terminated, r.sessions_closed, r.server_restarts);
  }
  out << fmt::format("lock waits: in-memory and flock {}; PostgreSQL lock statements {} (a wait: over 2 ms)\n",
                     stats_text(r.memory_locks), stats_text(r.pg_locks));
  const double per = r.iterations > 0 ? duration_s(r.total) / r.iterations : 0;
  out << fmt::format("time: {:.1f} s, {:.3f} s per iteration, longest {:.3f} s\n", duration_s(r.total), per, duration_s(r.longest));
}

// Confirm's result for a person: the run, its failures, its counts and the judgement.
void print_confirm(std::ostream& out, const ConfirmArgs& a, const Scenario& scenario, const Server& server,
                   const real::ConfirmReport& r, bool as_expected) {
  const bool expect_pass = scenario.expect.verdict == Verdict::pass;
  out << fmt::format("confirm {} ({}) on {}: {} iterations{}, seed {}, jitter up to {} us{}\n", scenario.name, scenario.system,
                     server.shown(), a.iterations, a.until_violation ? " at most, until a violation" : "", a.seed, a.jitter_us,
                     a.aim.empty() ? "" : fmt::format(", in the order of {}", a.aim));
  print_violations(out, r);
  print_confirm_counts(out, r);
  out << fmt::format("expected {}: {}\n",
                     expect_pass ? "pass"
                                 : std::string(verdict_name(scenario.expect.verdict)) + " " +
                                       scenario.expect.violation.value_or("(any)"),
                     r.lost          ? "not judged: the server was lost (below)"
                     : as_expected   ? "as expected"
                     : expect_pass   ? "NOT as expected"
                                     : "not seen on the server in these iterations");
}

// Says where the server was lost, on stderr.
void print_server_lost(std::ostream& err, const real::ConfirmReport& r) {
  std::string message = r.lost->message;  // libpq's, over several lines
  for (char& ch : message) ch = ch == '\n' || ch == '\t' ? ' ' : ch;
  err << fmt::format("lockstep: confirm: the server was lost in iteration {}{}, at {}: {} {}\n"
                     "  (the {} finished iterations above stand; iteration {} is not counted)\n",
                     r.lost->iteration, r.lost->actor.empty() ? "" : fmt::format(" (actor {})", r.lost->actor),
                     r.lost->op, r.lost->sqlstate, message, r.iterations, r.lost->iteration);
}

// --aim TRACE: the trace's acting actor per step, the order the threads follow.
std::vector<ActorId> aimed_order(const std::string& path, const Scenario& scenario) {
  const sim::Trace trace = sim::load_trace(path);
  const std::string recorded = trace.scenario.value("name", "");
  if (recorded != scenario.name) {
    throw InputError(fmt::format("--aim {}: a trace of scenario \"{}\", not of \"{}\"", path, recorded, scenario.name));
  }
  std::vector<ActorId> steps;
  for (const auto& d : trace.decisions) {
    if (d.kind == sim::Decision::Kind::run) steps.push_back(static_cast<ActorId>(d.value));
  }
  return steps;
}

// Whether the scenario's `faults` switch `name` on (true, or an object of parameters).
bool fault_enabled(const Scenario& scenario, const std::string& name) {
  const auto faults = scenario.document.find("faults");
  if (faults == scenario.document.end() || !faults->is_object() || !faults->contains(name)) return false;
  const nlohmann::json& v = faults->at(name);
  return v.is_object() || (v.is_boolean() && v.get<bool>());
}

// `confirm SCENARIO`: the scenario's actors on real threads against the server, N times.
int run_confirm(const ConfirmArgs& a, std::ostream& out, std::ostream& err) {
  const Scenario scenario = load_scenario(a.scenario);
  if (!a.force.empty()) {
    if (!a.aim.empty()) throw InputError("confirm: --force and --aim are two ways to follow a trace: give one");
    return run_forced_replay(a.force, scenario, a.pg, out);
  }
  auto order = a.aim.empty() ? std::vector<ActorId>{} : aimed_order(a.aim, scenario);
  std::optional<Server> owned_server;
  owned_server.emplace(a.pg);
  const Server& server = *owned_server;
  const Duration limit = iteration_limit_of(a, scenario);
  real::ConfirmOptions options = confirm_options(a, server, std::move(order), limit);
  options.timing = scenario.explore.timing;
  if (options.timing.any()) {
    out << fmt::format("timing on the server: {} (drawn per iteration: sleeps within the range, clocks behind, right or "
                       "ahead, stalls as pauses of the thread before a statement or after a clock read; statement latency as it comes)\n",
                       timing_coverage(options.timing));
  }
  if (fault_enabled(scenario, "server_restart") && !options.restart_server && !a.no_session_faults) {
    err << "lockstep: confirm: the server_restart fault is not injected: --pg names a server lockstep did not start "
           "(--pg auto restarts its throwaway server)\n";
  }
  const real::ConfirmReport r = real::confirm(*scenario.configured, options, [&](const real::ConfirmReport& p) {
    if (tty()) err << fmt::format("\r\033[K{}: {}/{} iterations, {} violations", scenario.name, p.iterations, a.iterations, p.violations.size()) << std::flush;
  });
  if (tty()) err << "\r\033[K" << std::flush;
  const bool as_expected = confirmed_as_expected(scenario, r);
  const bool no_progress_seen = expects_no_progress(scenario) && r.hung;
  if (a.json) {
    nlohmann::json j = confirm_json(a, scenario, r, as_expected);
    j["iteration_limit_s"] = std::chrono::duration<double>(limit).count();
    j["no_progress"] = no_progress_seen;
    out << j.dump(2) << '\n';
  } else {
    print_confirm(out, a, scenario, server, r, as_expected);
    out << fmt::format("iteration limit: {} ({})\n", seconds_text(limit),
                       a.limit_s > 0 ? "--iteration-limit" : "5 s plus three times the durations the scenario writes");
    if (no_progress_seen) {
      out << fmt::format("seen: no progress within {} (iteration {} did not finish: the real run's version of the {})\n",
                         seconds_text(limit), r.violations.empty() ? 0 : r.violations.back().iteration,
                         verdict_name(scenario.expect.verdict));
    }
  }
  if (r.lost) {
    print_server_lost(err, r);
    return kExitBadInput;
  }
  if (r.hung) {
    // Threads are stuck in the hung iteration, still running on the scenario's system: the
    // process ends here, destroying nothing they use (the throwaway server, if any, is
    // stopped first), and without joining them.
    owned_server.reset();
    out.flush();
    err.flush();
    std::fflush(nullptr);
    std::_Exit(no_progress_seen ? kExitOk : kExitUnexpected);
  }
  return as_expected ? kExitOk : kExitUnexpected;
}
// confirm's options of the run: the server, iterations, seed, jitter, crashes, hangs.
void add_confirm_run_options(CLI::App& c, ConfirmArgs& a) {
  c.add_option("--pg", a.pg, "libpq conninfo (\"\": the PG* environment), or auto: a throwaway server")
      ->capture_default_str();
  c.add_option("--iterations", a.iterations, "runs of the scenario (with --until-violation: at most)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c.add_option("--aim", a.aim,
               "a trace of this scenario (from check): the actors take their visible operations in the trace's order "
               "(a step still running after --aim-blocked-ms counts as waiting for a lock, and the next one goes), then "
               "run free; the report says how many steps were taken in order");
  c.add_option("--force", a.force,
               "a trace of this SQL scenario (.spec, from check): its steps forced on the server one at a time in the "
               "trace's order (a step that waits is waited for), then its checks; prints \"seen on the server\" or the "
               "first step whose outcome differs");
  c.add_option("--aim-blocked-ms", a.aim_blocked_ms,
               "with --aim: how long a step may run before the next one in the trace's order goes (0: iterations try "
               "10, 2 and 50 ms in turn)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  c.add_flag("--until-violation", a.until_violation,
             "stop at the first iteration with a violation: for a narrow race, give a large --iterations as the bound");
  c.add_option("--seed", a.seed, "seed of the jitter (iteration i uses seed + i - 1)")->capture_default_str();
  c.add_option("--jitter-us", a.jitter_us, "each visible operation first sleeps up to this long")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  c.add_flag("--no-crashes", a.no_crashes,
             "inject no crash at the actors' crash points (by default the first iteration counts them and each later "
             "one crashes its actor at one of them, drawn)");
  c.add_flag("--no-session-faults", a.no_session_faults,
             "a scenario with the backend_terminated or server_restart fault: do not end sessions on the server (by "
             "default each iteration after the first ends one, by pg_terminate_backend, by closing the client's socket, "
             "or, with --pg auto, by restarting the server)");
  c.add_option("--iteration-limit", a.limit_s,
               "seconds after which an iteration counts as hung and the run stops; for a scenario that expects "
               "liveness or livelock, that is the server's version of it (\"seen: no progress\"). Default: 5 s plus "
               "three times the durations the scenario writes (leases, timeouts, sleeps, deadlines), at most an hour")
      ->check(CLI::PositiveNumber);
}

// confirm's options of --phantom, and --json.
void add_phantom_options(CLI::App& c, ConfirmArgs& a) {
  c.add_flag("--phantom", a.phantom,
             "Bug #17686: a holder releases close to a waiter's lock_timeout, round after round; count "
             "phantoms with a naive client and leaks with the advisory lock service");
  c.add_option("--system", a.system,
               "with --phantom: run the rounds with this registered system's own lock code (ModelSystem::phantom_round), "
               "one client per variant; exit 1 when its first (correct) variant leaks");
  c.add_option("--variant", a.variants, "with --system: only these variants (repeatable)");
  c.add_option("--rounds", a.rounds, "with --phantom: rounds per client")->capture_default_str()->check(CLI::PositiveNumber);
  c.add_option("--timeout-ms", a.timeout_ms, "with --phantom: the waiter's lock_timeout")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  c.add_flag("--json", a.json, "print one JSON object");
}

}  // namespace

void add_confirm_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<ConfirmArgs>();
  CLI::App* c = app.add_subcommand("confirm",
                                   "run a scenario's actors on real threads against a real PostgreSQL, N times with seeded "
                                   "jitter, checking the same invariants; or, with --phantom, count Bug #17686 phantoms");
  c->add_option("scenario", args->scenario, "scenario file (JSON); not with --phantom");
  add_confirm_run_options(*c, *args);
  add_phantom_options(*c, *args);
  c->callback([&context, args] {
    context.command = [&context, args] {
      const ConfirmArgs& a = *args;
      if (a.phantom == !a.scenario.empty()) throw InputError("confirm: give a scenario file, or --phantom (not both)");
      return finished(a.phantom ? run_phantom(a, context.out, context.err) : run_confirm(a, context.out, context.err));
    };
  });
}

}  // namespace lockstep::cli
