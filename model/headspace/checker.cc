#include "lockstep/model/headspace/checker.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "lockstep/model/advisory_lock.h"
#include "lockstep/model/headspace/events.h"

namespace lockstep::headspace {
namespace {

// The state machine's edges (state_machine.py of the seed application, as modelled).
bool valid_transition(CommandState from, CommandState to) {
  using S = CommandState;
  switch (from) {
    case S::idle: return to == S::commanded;
    case S::commanded: return to == S::processing || to == S::complete;
    case S::processing: return to == S::processing || to == S::awaiting_input || to == S::complete;
    case S::awaiting_input: return to == S::processing || to == S::commanded || to == S::complete;
    case S::complete: return false;
  }
  return false;
}

CommandState state_of_letter(char c) {
  for (int s = 0; s < kCommandStates; ++s) {
    if (command_state_letter(static_cast<CommandState>(s)) == c) return static_cast<CommandState>(s);
  }
  throw ModelError(fmt::format("unknown history letter '{}'", c));
}

}  // namespace

std::string Checker::actor(std::int64_t id) const {
  if (id >= 0 && id < static_cast<std::int64_t>(c_.actors.size())) return c_.actors[static_cast<std::size_t>(id)].name;
  return fmt::format("actor {}", id);
}

// agent_mutual_exclusion: the actor e.value enters agent e.subject's lock.
std::optional<Violation> Checker::on_enter(const Event& e) {
  auto& in = inside_[e.subject];
  in.push_back(e.value);
  if (in.size() > 1) {
    return Violation{"agent_mutual_exclusion", fmt::format("{} entered agent {}'s critical section while {} was inside it",
                                                           actor(e.value), e.subject, actor(in.front()))};
  }
  return std::nullopt;
}

// agent_mutual_exclusion: the actor e.value commits a change to agent e.subject.
std::optional<Violation> Checker::on_write(const Event& e) {
  for (std::int64_t other : inside_[e.subject]) {
    if (other != e.value) {
      return Violation{"agent_mutual_exclusion", fmt::format("{} committed a change to agent {} while {} held its lock",
                                                             actor(e.value), e.subject, actor(other))};
    }
  }
  return std::nullopt;
}

// valid_transitions: counts agent e.subject's committed transition and checks its edge.
std::optional<Violation> Checker::on_transition(const Event& e) {
  ++transitions_[e.subject];
  const auto from = static_cast<CommandState>(e.value / kCommandStates);
  const auto to = static_cast<CommandState>(e.value % kCommandStates);
  if (!valid_transition(from, to)) {
    return Violation{"valid_transitions", fmt::format("agent {}'s command went {} -> {}, not an edge of the state machine",
                                                      e.subject, command_state_name(from), command_state_name(to))};
  }
  return std::nullopt;
}

// A lock window on agent e.subject begins or ends; notes which hooks saw another actor's.
void Checker::on_lock_window(const Event& e) {
  const std::int64_t who = e.value > 0 ? e.value - 1 : -e.value - 1;
  auto& on_agent = windows_[e.subject];
  if (e.value < 0) {
    --on_agent[who];
    return;
  }
  bool others = false;
  for (auto& [other, depth] : on_agent) {
    if (other == who || depth == 0) continue;
    others = true;
    if (auto it = saw_other_window_.find(other); it != saw_other_window_.end()) it->second = true;
  }
  if (++on_agent[who] == 1 && c_.actors[static_cast<std::size_t>(who)].kind == ActorKind::hook) saw_other_window_[who] = others;
}

// hooks_never_time_out: the hook e.subject ends with outcome e.value; a timeout on a lock
// no other actor held or waited for is a leaked lock.
std::optional<Violation> Checker::on_hook_done(const Event& e) {
  hook_outcome_[e.subject] = e.value;
  if (e.value != events::kFailedVisibly) return std::nullopt;
  ++hooks_failed_;
  const auto it = saw_other_window_.find(e.subject);
  const auto reason = hook_lock_error_.find(e.subject);
  const bool timed_out = reason != hook_lock_error_.end() && reason->second == static_cast<std::int64_t>(AdvisoryLockError::Reason::timeout);
  if (timed_out && it != saw_other_window_.end() && !it->second) {
    const ActorSpec& a = c_.actors[static_cast<std::size_t>(e.subject)];
    return Violation{"hooks_never_time_out", fmt::format("{} failed on agent {}'s lock, which no other actor held or waited for "
                                                         "meanwhile: a session outside any lock scope kept it (a leaked lock)",
                                                         a.name, a.agent)};
  }
  return std::nullopt;
}

// reaper_connections_max_2: actor e.subject now holds e.value connections.
std::optional<Violation> Checker::on_connections(const Event& e) const {
  const ActorSpec& a = c_.actors[static_cast<std::size_t>(e.subject)];
  if (a.kind != ActorKind::reaper || e.value <= 2) return std::nullopt;
  return Violation{"reaper_connections_max_2", fmt::format("{} holds {} connections at once", a.name, e.value)};
}

// pool_bound: worker e.subject's pool has e.value connections checked out.
std::optional<Violation> Checker::on_pool_in_use(const Event& e) const {
  if (e.value <= c_.pool_size + c_.max_overflow) return std::nullopt;
  return Violation{"pool_bound", fmt::format("worker {}'s pool has {} connections out, more than {} + {}", e.subject, e.value,
                                             c_.pool_size, c_.max_overflow)};
}

std::optional<Violation> Checker::on_event(const Event& e) {
  using events::Kind;
  switch (static_cast<Kind>(e.kind)) {
    case Kind::enter: return on_enter(e);
    case Kind::exit: {
      auto& in = inside_[e.subject];
      if (auto it = std::find(in.begin(), in.end(), e.value); it != in.end()) in.erase(it);
      break;
    }
    case Kind::write: return on_write(e);
    case Kind::transition: return on_transition(e);
    case Kind::completed:
      if (++completions_[e.subject] > 1) {
        return Violation{"command_completed_once", fmt::format("agent {}'s command was completed a second time, by {}",
                                                               e.subject, actor(e.value))};
      }
      break;
    case Kind::lock_window: on_lock_window(e); break;
    case Kind::hook_lock_error: hook_lock_error_[e.subject] = e.value; break;
    case Kind::hook_done: return on_hook_done(e);
    case Kind::skill_injected:
      if (++skills_[e.subject] > 1) {
        return Violation{"skill_injected_once", fmt::format("persona skills were injected into agent {} twice (again by {})",
                                                            e.subject, actor(e.value))};
      }
      break;
    case Kind::llm_call:
      if (++llm_calls_[e.subject] > 1) {
        return Violation{"summary_llm_once", fmt::format("turn {} was sent to the LLM twice (again by {})", e.subject, actor(e.value))};
      }
      break;
    case Kind::handoff:
      if (++handoffs_[e.subject] > 1) {
        return Violation{"handoff_once", fmt::format("agent {} was handed off twice (again by {})", e.subject, actor(e.value))};
      }
      break;
    case Kind::reentrancy:
      if (e.value == 0) {
        return Violation{"reentrancy_raises", fmt::format("a nested advisory_lock(AGENT, {}) did not raise AdvisoryLockError at once: "
                                                          "it went to the server and waited for its own lock", e.subject)};
      }
      break;
    case Kind::connections: return on_connections(e);
    case Kind::pool_in_use: return on_pool_in_use(e);
    case Kind::stalled:
      longest_stall_ms_ = std::max(longest_stall_ms_, e.value);
      longest_hold_ms_ = std::max(longest_hold_ms_, e.value);
      break;
    case Kind::working: longest_hold_ms_ = std::max(longest_hold_ms_, e.value); break;
    case Kind::phantom_grant: ++phantom_grants_; break;
    case Kind::phantom_cleaned: ++phantoms_cleaned_; break;
    case Kind::sent:
    case Kind::skipped:
    case Kind::failed:
    case Kind::db_error:
    case Kind::monitor_rows:
      break;  // facts for the trace: no invariant reads them
  }
  return std::nullopt;
}

std::vector<Violation> Checker::at_end(const FinalState& f) const {
  std::vector<Violation> out;
  for (std::size_t i = 0; i < c_.actors.size(); ++i) {
    const ActorSpec& a = c_.actors[i];
    if (a.kind != ActorKind::hook) continue;
    const auto id = static_cast<std::int64_t>(i);
    const auto it = hook_outcome_.find(id);
    const std::int64_t outcome = it == hook_outcome_.end() ? 0 : it->second;
    const bool logged = a.route == Route::status || f.hook_event_rows.count(static_cast<int>(id) + 1) > 0;
    if (outcome == events::kProcessed && !logged) {
      out.push_back(Violation{"hook_not_lost", fmt::format("{} reported success but its event is not in hook_events", a.name)});
    }
    if (outcome != events::kProcessed && outcome != events::kFailedVisibly) {
      out.push_back(Violation{"hook_not_lost", fmt::format("{} was neither processed nor failed with AdvisoryLockError{}", a.name,
                                                    outcome == events::kFailedSilently ? " (a database error)" : "")});
    }
    if (outcome == events::kFailedVisibly && logged) {
      out.push_back(Violation{"hook_not_lost", fmt::format("{} failed but its event was written: processed and failed", a.name)});
    }
    const auto timeout_ms = std::chrono::duration_cast<std::chrono::milliseconds>(c_.hook_timeout).count();
    if (c_.timed && outcome == events::kFailedVisibly && longest_hold_ms_ < timeout_ms) {
      const auto reason = hook_lock_error_.find(id);
      const bool no_connection =
          reason != hook_lock_error_.end() && reason->second == static_cast<std::int64_t>(AdvisoryLockError::Reason::no_connection);
      out.push_back(Violation{"hooks_never_time_out",
                              fmt::format("{} failed with AdvisoryLockError ({}) although no holder kept the lock for the {} ms "
                                          "hook timeout",
                                          a.name, no_connection ? "no lock connection: the pool's checkout timed out" : "lock timeout",
                                          timeout_ms)});
    }
  }
  for (const auto& [agent, history] : f.command_history) {
    for (std::size_t k = 1; k < history.size(); ++k) {
      const CommandState from = state_of_letter(history[k - 1]), to = state_of_letter(history[k]);
      if (!valid_transition(from, to)) {
        out.push_back(Violation{"valid_transitions", fmt::format("agent {}'s command history \"{}\" has {} -> {}", agent, history,
                                                          command_state_name(from), command_state_name(to))});
      }
    }
    const auto it = transitions_.find(agent);
    const int committed = it == transitions_.end() ? 0 : it->second;
    if (static_cast<int>(history.size()) - 1 != committed) {
      out.push_back(Violation{"valid_transitions",
                       fmt::format("agent {}'s command made {} transitions but its history \"{}\" records {}: one was "
                                   "overwritten by a writer working from a stale read",
                                   agent, committed, history, history.size() - 1)});
    }
  }
  if (!f.advisory_locks.empty() || f.checked_out != 0) {
    std::string held;
    for (const auto& l : f.advisory_locks) held += (held.empty() ? "" : "; ") + l;
    out.push_back(Violation{"no_leaked_locks", fmt::format("at the end {} advisory lock(s) are still held ({}) and {} connection(s) "
                                                    "are not back in their pool",
                                                    f.advisory_locks.size(), held.empty() ? "none" : held, f.checked_out)});
  }
  std::int64_t keys = 0;
  for (const ActorSpec& a : c_.actors) {
    if (a.kind == ActorKind::config_editor) keys |= std::int64_t{1} << a.key;
  }
  if ((f.config_file & keys) != keys) {
    out.push_back(Violation{"config_no_lost_update", fmt::format("config.yaml holds keys {:#x}, the editors saved {:#x}: a save was lost",
                                                          f.config_file, keys)});
  }
  return out;
}

std::vector<std::string> Checker::marks() const {
  std::vector<std::string> m;
  if (phantom_grants_ > 0) m.push_back("phantom_grant");
  if (phantom_grants_ > 0 && phantoms_cleaned_ >= phantom_grants_) m.push_back("phantom_grant_cleaned_up");
  if (hooks_failed_ > 0) m.push_back("hook_failed_on_lock");
  if (longest_stall_ms_ > 0) m.push_back("stalled");
  return m;
}

}  // namespace lockstep::headspace
