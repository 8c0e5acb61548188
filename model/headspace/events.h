// model/headspace/events.h: the facts the headspace model reports (Env::observe) for its
// invariants. Subject and value of each are given beside it.
#pragma once

#include <cstdint>
#include <string_view>

#include "model/env.h"

namespace lockstep::headspace::events {

inline constexpr const char* kEnter = "enter";              // agent, actor: inside the AGENT lock
inline constexpr const char* kExit = "exit";                // agent, actor
inline constexpr const char* kWrite = "write";              // agent, actor: committed a change of the agent's rows
inline constexpr const char* kTransition = "transition";    // agent, from * kCommandStates + to
inline constexpr const char* kCompleted = "completed";      // agent, actor: the command became COMPLETE
inline constexpr const char* kHookDone = "hook_done";       // actor, outcome below
inline constexpr const char* kSkillInjected = "skill_injected";  // agent, actor
inline constexpr const char* kLlmCall = "llm_call";         // turn, actor
inline constexpr const char* kHandoff = "handoff";          // agent, actor
inline constexpr const char* kSent = "sent";                // agent, actor
inline constexpr const char* kReentrancy = "reentrancy";    // agent, 1 raised at once / 0 did not
inline constexpr const char* kConnections = "connections";  // actor, connections it now holds
inline constexpr const char* kPoolInUse = "pool_in_use";    // worker, connections checked out
inline constexpr const char* kSkipped = "skipped";          // agent, actor: skipped, retried next cycle
inline constexpr const char* kStalled = "stalled";          // actor, milliseconds (the stall fault)
inline constexpr const char* kWorking = "working";          // actor, milliseconds of work inside the lock
inline constexpr const char* kHookLockError = "hook_lock_error";  // actor, AdvisoryLockError::Reason
inline constexpr const char* kFailed = "failed";            // actor, AdvisoryLockError outside a hook
inline constexpr const char* kDbError = "db_error";         // actor: a database error outside a hook
inline constexpr const char* kMonitorRows = "monitor_rows"; // actor, rows of the monitoring query
inline constexpr const char* kLockWindow = "lock_window";  // agent, actor + 1 (begin) / -(actor + 1) (end)
// Reported by others (the lock service also reports kLockWindow): the simulated server when a phantom grant happens, the lock service
// when its unconditional unlock cleans one up.
inline constexpr const char* kPhantomGrant = "phantom_grant";
inline constexpr const char* kPhantomCleaned = "phantom_cleaned";

// Whether the checker judges an event by its order against other actors' events (see
// Event::ordered): entering, leaving and writing are; the rest are counts, maxima or facts
// about one actor. Lock windows are not either: a window that matters for another's wait
// contains the lock step the waiter queued behind, and steps on one lock are always
// ordered, so every order of the window events themselves gives the same verdict.
inline bool ordered(std::string_view name) { return name == kEnter || name == kExit || name == kWrite; }

// The observation scope of an event (Event::scope): the ordered ones are judged per agent
// (agent_mutual_exclusion reads the enter, exit and write events of one agent only), so
// each is ordered against the events of its own agent, its subject.
inline std::int64_t scope(std::string_view name, std::int64_t subject) { return ordered(name) ? subject : kGlobalScope; }

// Outcomes of a hook (kHookDone's value).
inline constexpr std::int64_t kProcessed = 1;
inline constexpr std::int64_t kFailedVisibly = 2;   // AdvisoryLockError: the caller sees it
inline constexpr std::int64_t kFailedSilently = 3;  // any other error: the event is lost

}  // namespace lockstep::headspace::events
