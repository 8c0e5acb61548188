// model/headspace/config.h: what a headspace scenario says: the deployment (workers, pool,
// timeouts), the actors that run, the variant (the correct design or a bug of the zoo) and
// the faults. Read from the scenario by parse_config (model/headspace/system.cc); plain
// data, immutable once read.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/model/system_input.h"

namespace lockstep::headspace {

// The command state machine (state_machine.py of the seed application, reduced to the
// states the hooks move through).
enum class CommandState : std::uint8_t { idle, commanded, processing, awaiting_input, complete };
inline constexpr int kCommandStates = 5;
const char* command_state_name(CommandState s);
char command_state_letter(CommandState s);  // one letter per state, for the history column

// The 8 mutating hook routes and the read-only status route.
enum class Route : std::uint8_t {
  session_start,
  user_prompt_submit,
  pre_tool_use,
  post_tool_use,
  notification,
  stop,
  subagent_stop,
  session_end,
  status,
};
const char* route_name(Route r);

enum class ActorKind : std::uint8_t {
  hook,           // one hook request on a worker's request thread
  deferred_stop,  // hook_deferred_stop.py's thread
  reaper,         // AgentReaper, one or more cycles over a list of agents
  reconciler,     // TranscriptReconciler
  context_poller,
  tmux_watchdog,
  summariser,     // summarise_turn(turn)
  config_editor,  // one save of config.yaml (one key)
  handoff,        // HandoffExecutor
  remote_send,    // RemoteAgentService: send when the agent is ready
  monitor,        // GET /api/advisory-locks
};
const char* actor_kind_name(ActorKind k);

struct ActorSpec {
  ActorKind kind = ActorKind::hook;
  std::string name;  // unique, for traces: "stop#1", "reaper", ...
  int worker = 0;
  Route route = Route::status;  // hooks
  int agent = 1;                // hooks and the per-agent threads; turn for the summariser
  std::vector<int> agents;      // the reaper's agents
  int cycles = 1;               // background threads: cycles (skip and retry next cycle)
  Duration interval = std::chrono::seconds(60);  // between cycles
  int retries = 1;              // deferred stop: sleep/retry rounds before the lock
  Duration retry_sleep = std::chrono::seconds(1);
  // A hook that, inside its lock, calls the handoff executor (advisory_lock of the same
  // key: must raise at once) or the reconciler's step (advisory_lock_or_skip: must skip).
  enum class Nested : std::uint8_t { none, handoff, reconciler } nested = Nested::none;
  bool raise = false;           // the handoff executor raises after its commit (seed test 8)
  int key = 0;                  // the config editor's key (a bit of the config file)
  Duration start{0};            // arrives this long after the run starts (timed scenarios)
  Duration work{0};             // time spent inside the lock (transcript parsing, an LLM call)
};

// The variants: the correct design, then the bug zoo (each a design the seeds rejected).
struct Variant {
  bool xact_lock = false;                  // pg_advisory_xact_lock on db.session
  bool conditional_unlock = false;         // unlock only after a successful acquire
  bool no_reentrancy_check = false;
  bool reaper_batch_commit = false;        // commit after the loop, outside the lock
  bool deferred_stop_no_recheck = false;   // no refresh after taking the lock
  bool deferred_stop_lock_first = false;   // lock before the sleep/retry loop
  bool summarise_without_nowait = false;   // a plain SELECT, no row lock
  bool config_no_flock = false;
  bool skill_no_refresh = false;           // reads the ORM identity map's stale agent
  bool in_memory_locks = false;            // per-process threading.Lock per agent
};


struct Config {
  int workers = 1;
  int agents = 1;
  int pool_size = 15;     // the seed's sizing: 15 + 10
  int max_overflow = 10;
  Duration pool_timeout = std::chrono::seconds(30);
  Duration hook_timeout = std::chrono::seconds(15);  // advisory_lock's timeout
  int commits = 2;        // intermediate db.session.commit() calls per hook (2-8)
  // One pool per worker shared by all its threads (the seed's deployment). When false every
  // actor has a pool of its own (see model/headspace/app.h for what that leaves out).
  bool shared_pool = false;
  CommandState initial_command = CommandState::processing;
  std::string initial_agent_status = "active";
  std::string initial_summary;  // the turn's summary at the start ("" = none)
  std::vector<ActorSpec> actors;
  Variant variant;
  bool phantom_grant = false;
  bool backend_terminated = false;
  std::vector<StallFault> stalls;  // the chosen pause, inside the actor's critical section
  bool timed = false;  // hooks_never_time_out applies
  // Invariants this scenario does not judge: to look past one failure at its consequence
  // (a leaked lock, then the hook it blocks).
  std::vector<std::string> skip_invariants;
};

}  // namespace lockstep::headspace
