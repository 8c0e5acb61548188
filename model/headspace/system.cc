// The headspace system: reads a scenario's config, actors and faults into a Config, and runs
// one App and one Checker per execution.
#include "lockstep/model/headspace/system.h"

#include <algorithm>
#include <array>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "lockstep/model/headspace/app.h"
#include "lockstep/model/headspace/checker.h"

namespace lockstep::headspace {

namespace {

constexpr std::array<const char*, kCommandStates> kStateNames = {"idle", "commanded", "processing", "awaiting_input", "complete"};
constexpr std::array<char, kCommandStates> kStateLetters = {'I', 'C', 'P', 'A', 'X'};
constexpr std::array<const char*, 9> kRouteNames = {"session_start", "user_prompt_submit", "pre_tool_use", "post_tool_use",
                                                    "notification",  "stop",               "subagent_stop", "session_end",
                                                    "status"};
constexpr std::array<const char*, 11> kKindNames = {"hook",         "deferred_stop", "reaper",   "reconciler",
                                                    "context_poller", "tmux_watchdog", "summariser", "config_editor",
                                                    "handoff",      "remote_send",   "monitor"};
// One name per enumerator, in its order: a new Route or ActorKind fails here until named.
static_assert(kRouteNames.size() == static_cast<std::size_t>(Route::status) + 1, "a name for every Route");
static_assert(kKindNames.size() == static_cast<std::size_t>(ActorKind::monitor) + 1, "a name for every ActorKind");
constexpr int kMaxHeadspaceActors = 12;

template <typename E, std::size_t N>
E parse_enum(const JsonCursor& at, const std::array<const char*, N>& names, const char* what) {
  const std::string text = at.as_string();
  std::string list;
  for (std::size_t i = 0; i < N; ++i) {
    if (text == names[i]) return static_cast<E>(i);
    list += fmt::format("{}{}", i ? ", " : "", names[i]);
  }
  at.fail(fmt::format("unknown {} \"{}\" (known: {})", what, text, list));
}

Duration millis(const JsonCursor& at) { return as_millis(at, 3'600'000); }  // at most an hour

ActorSpec parse_actor(const JsonCursor& j, const Config& c, std::map<std::string, int>& names) {
  j.expect_keys({"kind", "name", "worker", "route", "agent", "agents", "cycles", "interval_ms", "retries", "retry_sleep_ms",
                 "nested", "raise", "key", "work_ms", "start_ms"});
  ActorSpec a;
  a.kind = parse_enum<ActorKind>(j.at("kind"), kKindNames, "actor kind");
  if (auto w = j.find("worker")) a.worker = static_cast<int>(w->as_int(0, c.workers - 1));
  if (auto ag = j.find("agent")) a.agent = static_cast<int>(ag->as_int(1, c.agents));
  if (a.kind == ActorKind::hook) {
    a.route = parse_enum<Route>(j.at("route"), kRouteNames, "hook route");
  } else if (auto r = j.find("route")) {
    r->fail("only hooks have a route");
  }
  if (a.kind == ActorKind::reaper) {
    const JsonCursor list = j.at("agents");
    for (const auto& item : list.items()) a.agents.push_back(static_cast<int>(item.as_int(1, c.agents)));
    if (a.agents.empty()) list.fail("expected at least one agent");
  } else if (auto l = j.find("agents")) {
    l->fail("only the reaper takes a list of agents");
  }
  if (auto v = j.find("cycles")) a.cycles = static_cast<int>(v->as_int(1, 4));
  if (auto v = j.find("interval_ms")) a.interval = millis(*v);
  if (auto v = j.find("retries")) a.retries = static_cast<int>(v->as_int(0, 8));
  if (auto v = j.find("retry_sleep_ms")) a.retry_sleep = millis(*v);
  if (auto v = j.find("nested")) {
    const std::string n = v->as_string();
    if (a.kind != ActorKind::hook) v->fail("only a hook calls another lock user inside its lock");
    if (n == "handoff") {
      a.nested = ActorSpec::Nested::handoff;
    } else if (n == "reconciler") {
      a.nested = ActorSpec::Nested::reconciler;
    } else {
      v->fail(fmt::format("unknown nested call \"{}\" (known: handoff, reconciler)", n));
    }
  }
  if (auto v = j.find("raise")) {
    a.raise = v->as_bool();
    if (a.kind != ActorKind::handoff) v->fail("only the handoff executor can be told to raise");
  }
  if (auto v = j.find("work_ms")) a.work = millis(*v);
  if (auto v = j.find("start_ms")) a.start = millis(*v);
  if (auto v = j.find("key")) a.key = static_cast<int>(v->as_int(0, 30));
  const std::string base = a.kind == ActorKind::hook ? route_name(a.route) : actor_kind_name(a.kind);
  if (auto n = j.find("name")) {
    a.name = n->as_string();
    if (a.name.empty()) n->fail("expected a non-empty name");
  } else {
    a.name = fmt::format("{}#{}", base, ++names[base]);
  }
  return a;
}

Config parse_config(const SystemInput& input) {
  Config c;
  c.timed = input.timed;
  const std::string& v = input.variant;
  c.variant.xact_lock = v == "xact_lock";
  c.variant.conditional_unlock = v == "conditional_unlock";
  c.variant.no_reentrancy_check = v == "no_reentrancy_check";
  c.variant.reaper_batch_commit = v == "reaper_batch_commit";
  c.variant.deferred_stop_no_recheck = v == "deferred_stop_no_recheck";
  c.variant.deferred_stop_lock_first = v == "deferred_stop_lock_first";
  c.variant.summarise_without_nowait = v == "summarise_without_nowait";
  c.variant.config_no_flock = v == "config_no_flock";
  c.variant.skill_no_refresh = v == "skill_no_refresh";
  c.variant.in_memory_locks = v == "in_memory_locks";
  if (input.config) {
    const JsonCursor& j = *input.config;
    j.expect_keys({"workers", "agents", "pool_size", "max_overflow", "pool_timeout_ms", "hook_timeout_ms", "commits",
                   "shared_pool", "initial_command", "initial_agent_status", "initial_summary",
                   "skip_invariants"});
    if (auto x = j.find("workers")) c.workers = static_cast<int>(x->as_int(1, 4));
    if (auto x = j.find("agents")) c.agents = static_cast<int>(x->as_int(1, 8));
    if (auto x = j.find("pool_size")) c.pool_size = static_cast<int>(x->as_int(0, 100));
    if (auto x = j.find("max_overflow")) c.max_overflow = static_cast<int>(x->as_int(0, 100));
    if (c.pool_size + c.max_overflow == 0) j.fail("the pool needs at least one connection (pool_size + max_overflow > 0)");
    if (auto x = j.find("pool_timeout_ms")) c.pool_timeout = millis(*x);
    if (auto x = j.find("hook_timeout_ms")) c.hook_timeout = millis(*x);
    if (auto x = j.find("commits")) c.commits = static_cast<int>(x->as_int(2, 8));
    if (auto x = j.find("shared_pool")) c.shared_pool = x->as_bool();
    if (auto x = j.find("initial_command")) c.initial_command = parse_enum<CommandState>(*x, kStateNames, "command state");
    if (auto x = j.find("initial_agent_status")) {
      c.initial_agent_status = x->as_string();
      if (c.initial_agent_status != "active" && c.initial_agent_status != "ended") x->fail("expected \"active\" or \"ended\"");
    }
    if (auto x = j.find("initial_summary")) c.initial_summary = x->as_string();
    if (auto x = j.find("skip_invariants")) c.skip_invariants = parse_skip_invariants(*x, system_info());
  }
  c.skip_invariants.insert(c.skip_invariants.end(), input.invariants_off.begin(), input.invariants_off.end());
  if (!input.actors) input.fail("", "missing \"actors\": a list of {\"kind\": ..., ...}");
  const auto items = input.actors->items();
  if (items.empty() || items.size() > kMaxHeadspaceActors) input.actors->fail(fmt::format("expected 1 to {} actors", kMaxHeadspaceActors));
  std::map<std::string, int> names;
  for (const auto& item : items) {
    c.actors.push_back(parse_actor(item, c, names));
    for (std::size_t k = 0; k + 1 < c.actors.size(); ++k) {
      if (c.actors[k].name == c.actors.back().name) item.fail(fmt::format("two actors are named \"{}\"", c.actors.back().name));
    }
  }
  if (c.variant.in_memory_locks && c.workers < 2) {
    input.fail("/variant", "variant in_memory_locks needs \"workers\": 2 or more (one process cannot show it)");
  }
  for (const std::string& fault : enabled_faults(system_info(), input.faults)) {
    if (fault == "phantom_grant") c.phantom_grant = true;
    if (fault == "backend_terminated") c.backend_terminated = true;
    if (fault == "stall") {
      std::vector<std::string> actors;
      for (const auto& a : c.actors) actors.push_back(a.name);
      c.stalls.push_back(parse_stall_fault(input.faults->at("stall"), actors, input.timed));
    }
  }
  return c;
}

class HeadspaceInstance final : public Instance {
 public:
  HeadspaceInstance(Env& env, const Config& c) : c_(c), app_(env, c), checker_(c) {}

  int actor_count() const override { return static_cast<int>(c_.actors.size()); }
  std::string_view actor_name(ActorId actor) const override { return c_.actors[static_cast<std::size_t>(actor)].name; }
  void run_actor(ActorId actor) override { app_.run(actor); }
  // Hooks with the same route, agent, worker and settings (but the name) are interchangeable,
  // unless a stall fault names one of them.
  std::vector<std::vector<ActorId>> symmetric_actors() const override {
    auto stalled = [&](const ActorSpec& a) {
      return std::any_of(c_.stalls.begin(), c_.stalls.end(), [&](const StallFault& s) { return s.actor == a.name; });
    };
    return interchangeable_actors(actor_count(), [&](ActorId x, ActorId y) {
      const ActorSpec& a = c_.actors[static_cast<std::size_t>(x)];
      const ActorSpec& b = c_.actors[static_cast<std::size_t>(y)];
      return a.kind == ActorKind::hook && b.kind == ActorKind::hook && !stalled(a) && !stalled(b) &&
             a.worker == b.worker && a.route == b.route && a.agent == b.agent && a.nested == b.nested &&
             a.raise == b.raise && a.start == b.start && a.work == b.work && a.cycles == b.cycles &&
             a.interval == b.interval && a.retries == b.retries && a.retry_sleep == b.retry_sleep && a.agents == b.agents &&
             a.key == b.key;
    });
  }
  std::optional<Violation> on_event(const Event& e) override {
    auto v = checker_.on_event(e);
    return v && judged(c_.skip_invariants, *v) ? v : std::nullopt;
  }

  std::optional<Violation> at_end() override {
    FinalState f;
    auto conn = app_.audit_pool().checkout().value();
    for (int agent = 1; agent <= c_.agents; ++agent) {
      f.command_history[agent] = conn->read_row("commands", agent).value().value_or(pg::Row{})["history"];
    }
    for (std::size_t i = 0; i < c_.actors.size(); ++i) {
      if (conn->read_row("hook_events", static_cast<std::int64_t>(i) + 1).value()) f.hook_event_rows.insert(static_cast<int>(i) + 1);
    }
    const auto locks = conn->advisory_locks();
    for (const auto& l : locks.value()) {
      f.advisory_locks.push_back(fmt::format("pid {} ({}) {} on ({}, {}){}", l.pid, l.application_name, l.mode, l.classid, l.objid,
                                             l.granted ? "" : " waiting"));
    }
    f.checked_out = app_.checked_out();
    app_.read_config_file();
    f.config_file = app_.config_file();
    for (Violation& v : checker_.at_end(f)) {
      if (judged(c_.skip_invariants, v)) return std::move(v);
    }
    return std::nullopt;
  }

  std::vector<std::string> marks() override { return checker_.marks(); }

 private:
  const Config& c_;
  App app_;
  Checker checker_;
};

}  // namespace

const char* command_state_name(CommandState s) { return kStateNames[static_cast<std::size_t>(s)]; }
char command_state_letter(CommandState s) { return kStateLetters[static_cast<std::size_t>(s)]; }
const char* route_name(Route r) { return kRouteNames[static_cast<std::size_t>(r)]; }
const char* actor_kind_name(ActorKind k) { return kKindNames[static_cast<std::size_t>(k)]; }

const SystemInfo& system_info() {
  static const SystemInfo info = [] {
    SystemInfo i;
    i.name = "headspace";
    i.description =
        "seeds 000/001: hook routes, deferred stop, reaper and background threads of claude_headspace over the advisory "
        "lock service and a simulated PostgreSQL";
    i.variants = {
        {"correct", "the design of seed 000: session advisory locks on dedicated connections, unconditional unlock"},
        {"xact_lock", "pg_advisory_xact_lock on db.session: released at the first intermediate commit"},
        {"conditional_unlock", "unlock only after a successful acquire: a phantom grant leaks with the connection"},
        {"no_reentrancy_check", "a nested advisory_lock goes to the server and waits for itself"},
        {"reaper_batch_commit", "the reaper commits after its loop, outside every agent's lock"},
        {"deferred_stop_no_recheck", "the deferred stop does not refresh the command after taking the lock"},
        {"deferred_stop_lock_first", "the deferred stop takes the lock before its sleep/retry loop (timed)"},
        {"summarise_without_nowait", "summarisation reads the turn without SELECT ... FOR UPDATE NOWAIT"},
        {"config_no_flock", "the config editor's read-modify-write without flock"},
        {"skill_no_refresh", "the skill injector trusts the ORM identity map (no db.session.refresh)"},
        {"in_memory_locks", "the design before the change: a threading.Lock per agent in each worker process"},
    };
    i.invariants = {
        {"agent_mutual_exclusion", "never two actors inside one agent's lock; no change committed to an agent while another holds it"},
        {"hook_not_lost", "each hook is processed exactly once (its hook_events row) or fails visibly with AdvisoryLockError"},
        {"command_completed_once", "a command becomes COMPLETE once"},
        {"valid_transitions", "every committed transition is an edge of the state machine, and none is overwritten"},
        {"no_leaked_locks", "at the end no advisory lock is held and every connection is back in its pool"},
        {"pool_bound", "a pool never hands out more than pool_size + max_overflow connections"},
        {"reaper_connections_max_2", "the reaper holds at most 2 connections at any moment"},
        {"summary_llm_once", "a turn is sent to the LLM at most once"},
        {"config_no_lost_update", "every config save survives"},
        {"skill_injected_once", "persona skills are injected into an agent once"},
        {"handoff_once", "an agent is handed off once"},
        {"reentrancy_raises", "a nested advisory_lock of a held key raises AdvisoryLockError at once"},
        {"hooks_never_time_out", "timed scenarios: no hook fails on its lock unless a holder stalled past the hook timeout"},
    };
    i.faults = {
        {"phantom_grant", "Bug #17686: a lock_timeout that fires after the grant returns 55P03 with the lock held"},
        {"backend_terminated", "one lock-connection statement finds its backend terminated (a recorded choice)"},
        {"stall", "{\"actor\": NAME, \"durations_ms\": [...]}: the actor pauses inside its critical section (timed)"},
    };
    i.configure = [](const SystemInput& input) -> std::unique_ptr<System> {
      return std::make_unique<SystemOf<HeadspaceInstance, Config>>(parse_config(input));
    };
    return i;
  }();
  return info;
}

}  // namespace lockstep::headspace
