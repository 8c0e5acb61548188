// model/headspace/events.h: the facts the headspace model reports (Env::observe) for its
// invariants. Subject and value of each are given beside it.
#pragma once

#include <cstdint>
#include <string_view>

#include "lockstep/model/env.h"

namespace lockstep::headspace::events {

// Each event is a kind (Event::kind, so the checker switches on it) with its name (what
// traces show, name() below). Subject and value of each beside it.
enum class Kind : EventKind {
  enter = 1,        // agent, actor: inside the AGENT lock
  exit,             // agent, actor
  write,            // agent, actor: committed a change of the agent's rows
  transition,       // agent, from * kCommandStates + to
  completed,        // agent, actor: the command became COMPLETE
  hook_done,        // actor, outcome below
  skill_injected,   // agent, actor
  llm_call,         // turn, actor
  handoff,          // agent, actor
  sent,             // agent, actor
  reentrancy,       // agent, 1 raised at once / 0 did not
  connections,      // actor, connections it now holds
  pool_in_use,      // worker, connections checked out
  skipped,          // agent, actor: skipped, retried next cycle
  stalled,          // actor, milliseconds (the stall fault)
  working,          // actor, milliseconds of work inside the lock
  hook_lock_error,  // actor, AdvisoryLockError::Reason
  failed,           // actor, AdvisoryLockError outside a hook
  db_error,         // actor: a database error outside a hook
  monitor_rows,     // actor, rows of the monitoring query
  // Reported by others too (lockstep's own kinds, model/env.h): the lock service's lock
  // windows (agent, actor + 1 at the begin / -(actor + 1) at the end), the simulated
  // server's phantom grant, the service's clean-up of one.
  lock_window = kLockWindowEvent,
  phantom_grant = kPhantomGrantEvent,
  phantom_cleaned = kPhantomCleanedEvent,
};

// The name traces show. No default: a new kind without a name does not compile (-Wswitch).
constexpr const char* name(Kind kind) {
  switch (kind) {
    case Kind::enter: return "enter";
    case Kind::exit: return "exit";
    case Kind::write: return "write";
    case Kind::transition: return "transition";
    case Kind::completed: return "completed";
    case Kind::hook_done: return "hook_done";
    case Kind::skill_injected: return "skill_injected";
    case Kind::llm_call: return "llm_call";
    case Kind::handoff: return "handoff";
    case Kind::sent: return "sent";
    case Kind::reentrancy: return "reentrancy";
    case Kind::connections: return "connections";
    case Kind::pool_in_use: return "pool_in_use";
    case Kind::skipped: return "skipped";
    case Kind::stalled: return "stalled";
    case Kind::working: return "working";
    case Kind::hook_lock_error: return "hook_lock_error";
    case Kind::failed: return "failed";
    case Kind::db_error: return "db_error";
    case Kind::monitor_rows: return "monitor_rows";
    case Kind::lock_window: return "lock_window";
    case Kind::phantom_grant: return "phantom_grant";
    case Kind::phantom_cleaned: return "phantom_cleaned";
  }
  return "?";  // not reached: every kind has a case
}

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
constexpr Event event(Kind kind, std::int64_t subject, std::int64_t value) {
  return {name(kind), subject, value, ordered(kind), scope(kind, subject), static_cast<EventKind>(kind)};
}

// Outcomes of a hook (Kind::hook_done's value).
inline constexpr std::int64_t kProcessed = 1;
inline constexpr std::int64_t kFailedVisibly = 2;   // AdvisoryLockError: the caller sees it
inline constexpr std::int64_t kFailedSilently = 3;  // any other error: the event is lost

}  // namespace lockstep::headspace::events
