// model/headspace/events.h: the facts the headspace model reports (Env::observe) for its
// invariants. Subject and value of each are given beside it.
#pragma once

#include <cstdint>
#include <string_view>

#include "lockstep/model/env.h"

namespace lockstep::headspace::events {

// Each event is a kind (Event::kind, so the checker switches on it) with its name (what
// traces show).
enum class Kind : EventKind {
  enter = 1, exit, write, transition, completed, hook_done, skill_injected, llm_call, handoff, sent, reentrancy,
  connections, pool_in_use, skipped, stalled, working, hook_lock_error, failed, db_error, monitor_rows,
  // Reported by others too (lockstep's own kinds, model/env.h): the lock service's lock
  // windows, the simulated server's phantom grant, the service's clean-up of one.
  lock_window = kLockWindowEvent,
  phantom_grant = kPhantomGrantEvent,
  phantom_cleaned = kPhantomCleanedEvent,
};

struct Name {
  const char* text;
  Kind kind;
};

inline constexpr Name kEnter{"enter", Kind::enter};                    // agent, actor: inside the AGENT lock
inline constexpr Name kExit{"exit", Kind::exit};                       // agent, actor
inline constexpr Name kWrite{"write", Kind::write};                    // agent, actor: committed a change of the agent's rows
inline constexpr Name kTransition{"transition", Kind::transition};     // agent, from * kCommandStates + to
inline constexpr Name kCompleted{"completed", Kind::completed};        // agent, actor: the command became COMPLETE
inline constexpr Name kHookDone{"hook_done", Kind::hook_done};         // actor, outcome below
inline constexpr Name kSkillInjected{"skill_injected", Kind::skill_injected};  // agent, actor
inline constexpr Name kLlmCall{"llm_call", Kind::llm_call};            // turn, actor
inline constexpr Name kHandoff{"handoff", Kind::handoff};              // agent, actor
inline constexpr Name kSent{"sent", Kind::sent};                       // agent, actor
inline constexpr Name kReentrancy{"reentrancy", Kind::reentrancy};     // agent, 1 raised at once / 0 did not
inline constexpr Name kConnections{"connections", Kind::connections};  // actor, connections it now holds
inline constexpr Name kPoolInUse{"pool_in_use", Kind::pool_in_use};    // worker, connections checked out
inline constexpr Name kSkipped{"skipped", Kind::skipped};              // agent, actor: skipped, retried next cycle
inline constexpr Name kStalled{"stalled", Kind::stalled};              // actor, milliseconds (the stall fault)
inline constexpr Name kWorking{"working", Kind::working};              // actor, milliseconds of work inside the lock
inline constexpr Name kHookLockError{"hook_lock_error", Kind::hook_lock_error};  // actor, AdvisoryLockError::Reason
inline constexpr Name kFailed{"failed", Kind::failed};                 // actor, AdvisoryLockError outside a hook
inline constexpr Name kDbError{"db_error", Kind::db_error};            // actor: a database error outside a hook
inline constexpr Name kMonitorRows{"monitor_rows", Kind::monitor_rows};  // actor, rows of the monitoring query
inline constexpr Name kLockWindow{"lock_window", Kind::lock_window};   // agent, actor + 1 (begin) / -(actor + 1) (end)

// Whether the checker judges an event by its order against other actors' events (see
// Event::ordered): entering, leaving and writing are; the rest are counts, maxima or facts
// about one actor. Lock windows are not either: a window that matters for another's wait
// contains the lock step the waiter queued behind, and steps on one lock are always
// ordered, so every order of the window events themselves gives the same verdict.
constexpr bool ordered(Kind kind) { return kind == Kind::enter || kind == Kind::exit || kind == Kind::write; }

// The observation scope of an event (Event::scope): the ordered ones are judged per agent
// (agent_mutual_exclusion reads the enter, exit and write events of one agent only), so
// each is ordered against the events of its own agent, its subject.
constexpr std::int64_t scope(Kind kind, std::int64_t subject) { return ordered(kind) ? subject : kGlobalScope; }

// The event as the model reports it.
constexpr Event event(Name n, std::int64_t subject, std::int64_t value) {
  return {n.text, subject, value, ordered(n.kind), scope(n.kind, subject), static_cast<EventKind>(n.kind)};
}

// Outcomes of a hook (kHookDone's value).
inline constexpr std::int64_t kProcessed = 1;
inline constexpr std::int64_t kFailedVisibly = 2;   // AdvisoryLockError: the caller sees it
inline constexpr std::int64_t kFailedSilently = 3;  // any other error: the event is lost

}  // namespace lockstep::headspace::events
