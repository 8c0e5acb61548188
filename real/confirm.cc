#include "lockstep/real/confirm.h"


#include <algorithm>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "lockstep/real/libpq_backend.h"

namespace lockstep::real {
namespace {

using Clock = std::chrono::steady_clock;

void add(LockWaitStats& into, const LockWaitStats& s) {
  into.acquisitions += s.acquisitions;
  into.waits += s.waits;
  into.waited += s.waited;
  into.longest = std::max(into.longest, s.longest);
}

// One iteration's shared state: written by the actors' threads (under ThreadEnv's mutex,
// which serialises observe) and read by the caller once they are joined.
struct Iteration {
  std::unique_ptr<ThreadEnv> env;
  std::unique_ptr<Instance> instance;
  std::vector<HistoryEntry> history;
  std::optional<Violation> violation;
  std::mutex errors_m;
  std::vector<Violation> errors;  // actors that threw
};

ServerLost lost_at(int iteration, const std::string& actor, std::string op, const pg::Error& e) {
  return ServerLost{iteration, actor, std::move(op), e.sqlstate, e.message};
}

// Iteration i's shared state, with its ThreadEnv, whose sink records the history and
// hands each event to the instance's checker.
std::shared_ptr<Iteration> new_iteration(const ConfirmOptions& options, int i, std::uint64_t crash_at, std::uint64_t fault_at) {
  auto it = std::make_shared<Iteration>();
  Iteration* raw = it.get();
  ThreadEnvOptions env_options;
  env_options.conninfo = options.conninfo;
  env_options.seed = options.seed + static_cast<std::uint64_t>(i) - 1;
  env_options.max_jitter = options.max_jitter;
  if (!options.aim.empty()) {
    static constexpr std::chrono::milliseconds kBlockedAfter[] = {std::chrono::milliseconds(10), std::chrono::milliseconds(2),
                                                                  std::chrono::milliseconds(50)};
    env_options.order = options.aim;
    env_options.blocked_after = options.blocked_after > Duration{0} ? options.blocked_after : kBlockedAfter[(i - 1) % 3];
  }
  env_options.timing = options.timing;
  env_options.crashes = options.crashes;
  env_options.crash_at = crash_at;
  env_options.fault_at = fault_at;
  env_options.fault_variant = static_cast<std::uint64_t>(i);
  env_options.restart_server = options.restart_server;
  it->env = std::make_unique<ThreadEnv>(env_options, [raw](ActorId actor, Time at, const Event& e) {
    const std::string actor_name = actor >= 0 && raw->instance ? std::string(raw->instance->actor_name(actor)) : "";
    raw->history.push_back({at, actor_name, std::string(e.name), e.subject, e.value, e.fields.empty() ? "" : event_values_text(e)});
    if (raw->instance && !raw->violation) raw->violation = raw->instance->on_event(e);
  });
  return it;
}

// Builds iteration i's instance; false (the loss in the report) if the server went away meanwhile.
bool instantiate(const System& system, Iteration& it, int i, ConfirmReport& report) {
  try {
    it.instance = system.instantiate(*it.env);
  } catch (const std::exception& e) {
    if (auto lost = it.env->lost_connection()) {
      report.lost = lost_at(i, "", lost->op, lost->error);
      return false;
    }
    throw;  // a model that cannot even be built: the caller's internal error
  }
  return true;
}

// Runs the actors on a thread of their own, so that a hang can be given up on.
std::future<void> run_actors(const std::shared_ptr<Iteration>& it) {
  return std::async(std::launch::async, [it] {
    it->env->run_actors(it->instance->actor_count(), [&](ActorId a) {
      try {
        it->instance->run_actor(a);
      } catch (const std::exception& e) {
        const std::string message = fmt::format("actor {} threw: {}", it->instance->actor_name(a), e.what());
        std::lock_guard l(it->errors_m);
        it->errors.push_back({"model_error", message});
      }
    });
  });
}

// Hung iterations, kept for good: their stuck threads still use them, and a std::async
// future's destructor would wait for those threads. Reachable from this never-destroyed
// list, so a leak checker does not report them.
struct Abandoned {
  std::future<void> done;
  std::shared_ptr<Iteration> it;
};

void keep_abandoned(Abandoned a) {
  static auto* m = new std::mutex;                    // NOLINT: never destroyed, see above
  static auto* kept = new std::vector<Abandoned>;     // NOLINT
  std::lock_guard l(*m);
  kept->push_back(std::move(a));
}

// Reports iteration i as hung and leaves its threads, stuck inside `it`, running.
void give_up_hung(ConfirmReport& report, int i, Duration limit, std::future<void> done, const std::shared_ptr<Iteration>& it) {
  report.hung = true;
  it->env->abandon();  // an actor still looping through visible operations unwinds at its next one
  report.aim_followed += it->env->followed_steps();
  report.aim_skipped += it->env->skipped_steps();
  ConfirmedViolation hang{i, {"hang", fmt::format("iteration {} did not finish within {} s: a deadlock, or a wait "
                                                  "the design never ends", i,
                                                  std::chrono::duration_cast<std::chrono::seconds>(limit).count())},
                          {}};
  // (No history: the stuck threads may still be writing it.)
  report.violations.push_back(std::move(hang));
  ++report.by_invariant["hang"];
  // The threads are stuck inside the iteration's objects: leave them (and `it`) alive.
  keep_abandoned({std::move(done), it});
}

// The iteration's first violation: seen during the run, an actor's throw, or at the end.
std::optional<Violation> verdict(Iteration& it) {
  std::optional<Violation> found = it.violation;
  if (!found && !it.errors.empty()) found = it.errors.front();
  if (!found && !it.env->lost_connection()) {
    try {
      found = it.instance->at_end();
    } catch (const std::exception& e) {
      if (!it.env->lost_connection()) found = Violation{"model_error", fmt::format("the end-of-iteration check threw: {}", e.what())};
    }
  }
  if (!found && !it.env->lost_connection()) found = it.env->obligation_at_end();
  return found;
}

// Adds iteration i's marks, violation, lock statistics and crashes to the report.
void record(ConfirmReport& report, int i, const std::optional<Violation>& found, const Iteration& it) {
  for (const std::string& m : it.instance->marks()) ++report.marks[m];
  const SessionFaultStats fault = it.env->session_fault_stats();
  if (fault.struck > 0) {
    switch (fault.kind) {
      case ThreadEnvOptions::SessionFault::terminate: ++report.sessions_terminated; break;
      case ThreadEnvOptions::SessionFault::close: ++report.sessions_closed; break;
      case ThreadEnvOptions::SessionFault::restart: ++report.server_restarts; break;
    }
  }
  if (found) {
    ++report.by_invariant[found->invariant];
    const std::string victim = fault.struck == 0 ? ""
                               : fmt::format("the session of {} (backend {}), before the run's statement {}: {}",
                                             it.instance->actor_name(fault.actor), fault.pid, it.env->fault_at(), fault.how);
    report.violations.push_back({i, *found, it.history, victim});
  }
  report.aim_followed += it.env->followed_steps();
  report.aim_skipped += it.env->skipped_steps();
  add(report.memory_locks, it.env->memory_lock_stats());
  add(report.pg_locks, it.env->pg_lock_stats());
  const CrashStats crashes = it.env->crash_stats();
  report.crashes.armed += crashes.armed;
  report.crashes.injected += crashes.injected;
  report.crashes.finished += crashes.finished;
  report.crashes.points = std::max(report.crashes.points, crashes.points);
}

}  // namespace

std::string ConfirmReport::describe() const {
  std::string out = fmt::format("lockstep confirm: {} iterations{}{}, {} with a violation", iterations,
                                hung ? " (then one hung)" : "", interrupted ? " (then interrupted)" : "", violations.size());
  for (const auto& [inv, n] : by_invariant) out += fmt::format(", {} {}", inv, n);
  out += '\n';
  if (!violations.empty()) {
    const auto& v = violations.front();
    out += fmt::format("  iteration {}: {}: {}\n", v.iteration, v.violation.invariant, v.violation.message);
    if (!v.fault.empty()) out += fmt::format("    a fault ended {}\n", v.fault);
    constexpr std::size_t kShown = 20;
    const std::size_t from = v.history.size() > kShown ? v.history.size() - kShown : 0;
    for (std::size_t k = from; k < v.history.size(); ++k) {
      const auto& e = v.history[k];
      out += fmt::format("    {:>10.3f} ms  {:<16} {} {}\n", std::chrono::duration<double, std::milli>(e.at).count(),
                         e.actor, e.event, e.values());
    }
  }
  if (aim_steps > 0) {
    out += fmt::format("  aimed at a trace of {} steps: {} taken in its order, {} skipped (their actor took another path), "
                       "over all iterations\n",
                       aim_steps, aim_followed, aim_skipped);
  }
  if (sessions_terminated + sessions_closed + server_restarts > 0) {
    out += fmt::format("  session faults: {} sessions ended by pg_terminate_backend, {} by closing the client's socket, {} "
                       "server restarts\n",
                       sessions_terminated, sessions_closed, server_restarts);
  }
  if (!marks.empty()) {
    out += "  marks:";
    for (const auto& [m, n] : marks) out += fmt::format(" {} {}", m, n);
    out += '\n';
  }
  if (lost) {
    out += fmt::format("  the server was lost in iteration {} ({}), at {}: {} {}\n", lost->iteration,
                       lost->actor.empty() ? "outside any actor" : "actor " + lost->actor, lost->op, lost->sqlstate,
                       lost->message);
  }
  return out;
}

ConfirmReport confirm(const System& system, const ConfirmOptions& options,
                      const std::function<void(const ConfirmReport&)>& progress) {
  ConfirmReport report;
  report.aim_steps = options.aim.size();
  std::uint64_t fault_statements = 0;  // the most any iteration sent on faulty pools
  std::mt19937_64 fault_rng(options.seed);
  std::mt19937_64 crash_rng(options.seed ^ 0x9e3779b97f4a7c15ULL);
  for (int i = 1; i <= options.iterations; ++i) {
    if (options.stop_requested && options.stop_requested()) {
      report.interrupted = true;
      return report;
    }
    if (pg::Status dropped = drop_row_tables(options.conninfo); !dropped.ok()) {
      report.lost = lost_at(i, "", "DROP SCHEMA lockstep (the harness's reset)", dropped.error());
      return report;
    }
    const std::uint64_t fault_at = options.session_faults && fault_statements > 0
                                       ? 1 + std::uniform_int_distribution<std::uint64_t>(0, fault_statements - 1)(fault_rng)
                                       : 0;
    const std::uint64_t crash_points = report.crashes.points;  // the most an iteration passed
    const std::uint64_t crash_at =
        options.crashes && crash_points > 0 ? 1 + std::uniform_int_distribution<std::uint64_t>(0, crash_points - 1)(crash_rng) : 0;
    auto it = new_iteration(options, i, crash_at, fault_at);
    const auto start = Clock::now();
    if (!instantiate(system, *it, i, report)) return report;
    auto done = run_actors(it);
    if (done.wait_for(options.iteration_limit) == std::future_status::timeout) {
      give_up_hung(report, i, options.iteration_limit, std::move(done), it);
      return report;
    }
    done.get();
    const Duration took = Clock::now() - start;
    const std::optional<Violation> found = verdict(*it);
    if (auto lost = it->env->lost_connection()) {  // what the iteration saw is not the design's doing
      report.lost = lost_at(i, lost->actor >= 0 ? std::string(it->instance->actor_name(lost->actor)) : "", lost->op, lost->error);
      it->instance.reset();
      return report;
    }
    record(report, i, found, *it);
    fault_statements = std::max(fault_statements, it->env->session_fault_stats().statements);
    it->instance.reset();  // its pools close their connections: every session lock goes
    report.total += took;
    report.longest = std::max(report.longest, took);
    report.iterations = i;
    if (progress) progress(report);
    if (options.until_violation && found && (options.until_invariant.empty() || found->invariant == options.until_invariant)) {
      break;
    }
  }
  return report;
}

}  // namespace lockstep::real
