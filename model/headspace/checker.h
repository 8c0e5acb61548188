// model/headspace/checker.h: the invariants of the headspace model, judged from the events
// of model/headspace/events.h as they happen and from the database at the end.
//
// During the run: agent_mutual_exclusion (never two actors inside one agent's lock, and no
// protected write committed while another actor is inside), command_completed_once,
// valid_transitions (each committed transition is in the state machine), summary_llm_once,
// skill_injected_once, handoff_once, reentrancy_raises, reaper_connections_max_2,
// pool_bound. At the end: hook_not_lost, valid_transitions (the command's history column
// holds every committed transition: none lost to a stale overwrite), no_leaked_locks,
// config_no_lost_update, and hooks_never_time_out: a hook that fails on its lock although
// no other actor was inside a lock window on its agent during its own (the lock was held
// by a leaked session), and in timed scenarios any hook failing on its lock unless a stall
// fault reached the hook timeout.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/model/headspace/config.h"
#include "lockstep/model/system.h"

namespace lockstep::headspace {

// What the end-of-run checks read from the database and the pools.
struct FinalState {
  std::map<int, std::string> command_history;  // agent -> history column
  std::set<int> hook_event_rows;               // ids present in hook_events (actor + 1)
  std::vector<std::string> advisory_locks;     // pg_locks rows still there, described
  int checked_out = 0;                         // connections not back in their pool
  std::int64_t config_file = 0;
};

class Checker {
 public:
  explicit Checker(const Config& config) : c_(config) {}

  std::optional<Violation> on_event(const Event& e);
  // Every violation found at the end, in the order listed above.
  std::vector<Violation> at_end(const FinalState& f) const;
  std::vector<std::string> marks() const;

 private:
  std::string actor(std::int64_t id) const;
  // on_event's cases that take more than a line (checker.cc).
  std::optional<Violation> on_enter(const Event& e);
  std::optional<Violation> on_write(const Event& e);
  std::optional<Violation> on_transition(const Event& e);
  void on_lock_window(const Event& e);
  std::optional<Violation> on_hook_done(const Event& e);
  std::optional<Violation> on_connections(const Event& e) const;
  std::optional<Violation> on_pool_in_use(const Event& e) const;

  const Config& c_;
  std::map<std::int64_t, std::vector<std::int64_t>> inside_;  // agent -> actors inside its lock
  std::map<std::int64_t, std::int64_t> hook_outcome_;         // actor -> events::kProcessed ...
  std::map<std::int64_t, int> completions_, skills_, handoffs_, llm_calls_, transitions_;
  // agent -> actor -> nesting depth of the actor's lock windows on it (advisory_lock.h)
  std::map<std::int64_t, std::map<std::int64_t, int>> windows_;
  // hook actor -> whether another actor had a lock window on its agent while it had one
  std::map<std::int64_t, bool> saw_other_window_;
  std::map<std::int64_t, std::int64_t> hook_lock_error_;  // hook actor -> AdvisoryLockError::Reason
  int hooks_failed_ = 0;
  std::int64_t longest_stall_ms_ = 0;  // stall faults
  std::int64_t longest_hold_ms_ = 0;   // stall faults and declared work inside a lock
  int phantom_grants_ = 0;
  int phantoms_cleaned_ = 0;
};

}  // namespace lockstep::headspace
