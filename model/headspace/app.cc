#include "lockstep/model/headspace/app.h"

#include <fmt/format.h>

#include "lockstep/model/headspace/events.h"

namespace lockstep::headspace {
namespace {

const std::string kAgents = "agents";
const std::string kCommands = "commands";
const std::string kTurns = "turns";
const std::string kHookEvents = "hook_events";

// Runs `f` when the scope ends, on every path.
template <typename F>
struct ScopeExit {
  F f;
  ~ScopeExit() { f(); }
};
template <typename F>
ScopeExit(F) -> ScopeExit<F>;

// Where a hook route moves the command from `from`; `from` itself when it does not.
CommandState route_target(Route r, CommandState from) {
  using S = CommandState;
  switch (r) {
    case Route::user_prompt_submit: return from == S::idle || from == S::awaiting_input ? S::commanded : from;
    case Route::pre_tool_use:
      return from == S::commanded || from == S::processing || from == S::awaiting_input ? S::processing : from;
    case Route::post_tool_use: return from == S::commanded || from == S::processing ? S::processing : from;
    case Route::notification: return from == S::processing ? S::awaiting_input : from;
    case Route::session_end: return S::complete;
    default: return from;  // session_start, stop (the deferred stop completes), subagent_stop, status
  }
}

}  // namespace

CommandState parse_command_state(const std::string& text) {
  for (int s = 0; s < kCommandStates; ++s) {
    if (text == command_state_name(static_cast<CommandState>(s))) return static_cast<CommandState>(s);
  }
  throw ModelError(fmt::format("unknown command state \"{}\"", text));
}

pg::Result<pg::PooledConnection> CountingPool::checkout() {
  auto r = inner_->checkout();
  if (!r.ok()) return r;
  pg::PooledConnection conn = std::move(r).value();
  const int mine = ++held_.get();
  env_.observe(events::event(events::Kind::connections, env_.current_actor(), mine));
  env_.observe(events::event(events::Kind::pool_in_use, index_, inner_->checked_out()));
  conn.on_return([this] { --held_.get(); });  // returned by the actor that borrowed it
  return conn;
}

App::App(Env& env, const Config& config) : env_(env), c_(config), held_(env) {
  pg::PoolConfig pool;
  pool.pool_size = c_.pool_size;
  pool.max_overflow = c_.max_overflow;
  pool.timeout = c_.pool_timeout;
  pool.phantom_grant = c_.phantom_grant;
  pool.backend_terminated = c_.backend_terminated;
  AdvisoryLockOptions options;
  options.conditional_unlock = c_.variant.conditional_unlock;
  options.reentrancy_check = !c_.variant.no_reentrancy_check;
  // One pool (and lock service) per worker process when the scenario shares it, else one
  // per actor: pool_size + max_overflow connections each.
  const std::size_t pools = c_.shared_pool ? static_cast<std::size_t>(c_.workers) : c_.actors.size();
  for (std::size_t i = 0; i < pools; ++i) {
    pool.application_name = c_.shared_pool ? fmt::format("headspace-worker-{}", i) : c_.actors[i].name;
    pool.owner = c_.shared_pool ? -1 : static_cast<ActorId>(i);  // a pool per actor: its own (symmetry)
    auto counted = std::make_unique<CountingPool>(env, env.new_pg_pool(pool), static_cast<int>(i), held_);
    auto locks = std::make_unique<AdvisoryLockService>(env, *counted, options);
    std::unique_ptr<CountingPool> sessions;
    if (!c_.shared_pool && c_.backend_terminated) {
      pg::PoolConfig plain = pool;
      plain.backend_terminated = false;
      sessions = std::make_unique<CountingPool>(env, env.new_pg_pool(plain), static_cast<int>(i), held_);
    }
    connections_.push_back({std::move(counted), std::move(locks), std::move(sessions)});
  }
  if (c_.variant.in_memory_locks) {
    memory_locks_.resize(static_cast<std::size_t>(c_.workers));
    for (int w = 0; w < c_.workers; ++w) {
      for (int agent = 1; agent <= c_.agents; ++agent) {
        memory_locks_[static_cast<std::size_t>(w)].push_back(env.new_mutex(fmt::format("worker{}.agent_lock[{}]", w, agent)));
      }
    }
  }
  audit_pool_ = env.new_pg_pool(pg::PoolConfig{});
  config_content_ = env.new_shared_var("config.yaml", 0);

  // The database at the start, written outside any actor (no scheduling).
  auto conn = audit_pool_->checkout().value();
  for (int agent = 1; agent <= c_.agents; ++agent) {
    (void)conn->insert_row(kAgents, agent, {{"status", c_.initial_agent_status}, {"prompt_injected_at", ""}, {"handoff", "0"}});
    const char* state = command_state_name(c_.initial_command);
    (void)conn->insert_row(kCommands, agent, {{"state", state}, {"history", std::string(1, command_state_letter(c_.initial_command))}});
    (void)conn->insert_row(kTurns, agent, {{"summary", c_.initial_summary}});
  }
}

int App::checked_out() const {
  int n = 0;
  for (const auto& c : connections_) n += c.pool->checked_out() + (c.session_pool ? c.session_pool->checked_out() : 0);
  return n;
}

App::Connections& App::connections(const ActorSpec& a) {
  return connections_[c_.shared_pool ? static_cast<std::size_t>(a.worker) : static_cast<std::size_t>(env_.current_actor())];
}

std::unique_ptr<DbSession> App::session(const ActorSpec& a) {
  Connections& c = connections(a);
  return std::make_unique<DbSession>(c.session_pool ? *c.session_pool : *c.pool);
}

void App::run(ActorId actor) {
  const ActorSpec& a = c_.actors[static_cast<std::size_t>(actor)];
  if (a.start.count() > 0) env_.sleep_for(a.start);
  try {
    switch (a.kind) {
      case ActorKind::hook: hook(a); break;
      case ActorKind::deferred_stop: deferred_stop(a); break;
      case ActorKind::reaper: reaper(a); break;
      case ActorKind::reconciler: background(a, "reconciled"); break;
      case ActorKind::context_poller: background(a, "context"); break;
      case ActorKind::tmux_watchdog: background(a, "tmux_seen"); break;
      case ActorKind::summariser: summarise(a); break;
      case ActorKind::config_editor: edit_config(a); break;
      case ActorKind::handoff: {
        auto s = session(a);
        handoff(a, *s);
        break;
      }
      case ActorKind::remote_send: remote_send(a); break;
      case ActorKind::monitor: monitor(a); break;
    }
  } catch (const AdvisoryLockError& e) {
    // A background thread's failure is logged and retried next cycle; a hook's is visible
    // to its caller (reported by hook()).
    observe(events::Kind::failed, actor, e.reason() == AdvisoryLockError::Reason::reentrant ? 1 : 0);
  } catch (const DbError& e) {
    observe(events::Kind::db_error, actor, 0);
  } catch (const AppError& e) {
    observe(events::Kind::failed, actor, 0);  // an application error: logged by the thread
  }
}

bool App::with_agent_lock(const ActorSpec& a, int agent, bool blocking, const std::function<void()>& body) {
  const ActorId me = env_.current_actor();
  auto inside = [&] {
    observe(events::Kind::enter, agent, me);
    ScopeExit leave{[&] { observe(events::Kind::exit, agent, me); }};
    for (const StallFault& stall : c_.stalls) {
      if (stall.actor != a.name) continue;
      const Duration d = stall.durations[static_cast<std::size_t>(env_.choose(static_cast<int>(stall.durations.size()), "stall"))];
      if (d.count() > 0) {
        observe(events::Kind::stalled, me, std::chrono::duration_cast<std::chrono::milliseconds>(d).count());
        env_.sleep_for(d);
      }
    }
    if (a.work.count() > 0) {
      observe(events::Kind::working, me, std::chrono::duration_cast<std::chrono::milliseconds>(a.work).count());
      env_.sleep_for(a.work);
    }
    body();
  };
  Connections& w = connections(a);
  if (c_.variant.in_memory_locks) {
    Mutex& m = *memory_locks_[static_cast<std::size_t>(a.worker)][static_cast<std::size_t>(agent - 1)];
    if (blocking) {
      m.lock();
    } else if (!m.try_lock()) {
      return false;
    }
    ScopeExit unlock{[&] { m.unlock(); }};
    inside();
    return true;
  }
  if (blocking) {
    w.locks->advisory_lock(LockNamespace::agent, agent, inside, c_.hook_timeout);
    return true;
  }
  bool ran = false;
  w.locks->advisory_lock_or_skip(LockNamespace::agent, agent, [&](bool held) {
    if (!held) return;
    ran = true;
    inside();
  });
  return ran;
}

void App::hook(const ActorSpec& a) {
  const ActorId me = env_.current_actor();
  auto s = session(a);
  try {
    s->get(kAgents, a.agent);  // session correlation: the agent is now in the identity map
    if (a.route == Route::status) {
      s->refresh(kCommands, a.agent);
      observe(events::Kind::hook_done, me, events::kProcessed);
      return;
    }
    if (c_.variant.xact_lock) {
      // The rejected design: pg_advisory_xact_lock on db.session itself. Its first
      // intermediate commit ends the transaction and so releases the lock.
      observe(events::Kind::lock_window, a.agent, me + 1);
      ScopeExit window_end{[&] { observe(events::Kind::lock_window, a.agent, -(me + 1)); }};
      (void)s->conn().set_lock_timeout(c_.hook_timeout);
      s->begin();
      const pg::Status st = s->conn().advisory_xact_lock(pg::AdvisoryKey::pair(1, a.agent), pg::LockMode::exclusive);
      if (!st.ok()) {
        throw AdvisoryLockError(fmt::format("advisory_xact_lock failed: {} {}", st.error().sqlstate, st.error().message),
                                st.is(pg::sqlstate::kLockNotAvailable) ? AdvisoryLockError::Reason::timeout
                                                                      : AdvisoryLockError::Reason::failed);
      }
      observe(events::Kind::enter, a.agent, me);
      ScopeExit leave{[&] { observe(events::Kind::exit, a.agent, me); }};
      process_hook(a, *s);
    } else {
      with_agent_lock(a, a.agent, true, [&] { process_hook(a, *s); });
    }
    observe(events::Kind::hook_done, me, events::kProcessed);
  } catch (const AdvisoryLockError& e) {
    observe(events::Kind::hook_lock_error, me, static_cast<std::int64_t>(e.reason()));
    observe(events::Kind::hook_done, me, events::kFailedVisibly);
  } catch (const DbError& e) {
    observe(events::Kind::hook_done, me, events::kFailedSilently);
  }
}

void App::process_hook(const ActorSpec& a, DbSession& s) {
  const ActorId me = env_.current_actor();
  if (a.route == Route::session_start || a.route == Route::user_prompt_submit) inject_skills(a, s);
  if (a.nested == ActorSpec::Nested::handoff) handoff(a, s);  // the handoff executor, inside the hook's lock
  if (a.nested == ActorSpec::Nested::reconciler) {
    // The reconciler's step, inside the hook's lock: advisory_lock_or_skip must skip.
    const bool ran = with_agent_lock(a, a.agent, false, [] {});
    observe(events::Kind::reentrancy, a.agent, ran ? 0 : 1);
  }
  const pg::Row cmd = s.refresh(kCommands, a.agent);  // "process with fresh state"
  const CommandState from = parse_command_state(cmd.at("state"));
  const CommandState to = route_target(a.route, from);
  // Intermediate commit 1: the command (and, for session_end, the agent).
  if (a.route == Route::session_end) s.update(kAgents, a.agent, {{"status", "ended"}});
  if (a.route == Route::session_start) s.update(kAgents, a.agent, {{"status", "active"}});
  if (to != from) {
    transition(a, s, cmd, to);
  } else {
    s.commit();
    observe(events::Kind::write, a.agent, me);
  }
  // Intermediate commit 2: the event log; then any further ones the scenario asks for.
  s.insert(kHookEvents, me + 1, {{"route", route_name(a.route)}, {"agent", std::to_string(a.agent)}});
  s.commit();
  for (int i = 2; i < c_.commits; ++i) {
    s.update(kAgents, a.agent, {{"last_event", route_name(a.route)}});
    s.commit();
    observe(events::Kind::write, a.agent, me);
  }
}

void App::transition(const ActorSpec& a, DbSession& s, const pg::Row& cmd, CommandState to) {
  const ActorId me = env_.current_actor();
  const CommandState from = parse_command_state(cmd.at("state"));
  s.update(kCommands, a.agent, {{"state", command_state_name(to)}, {"history", cmd.at("history") + command_state_letter(to)}});
  s.commit();
  observe(events::Kind::write, a.agent, me);
  observe(events::Kind::transition, a.agent, static_cast<int>(from) * kCommandStates + static_cast<int>(to));
  if (to == CommandState::complete) observe(events::Kind::completed, a.agent, me);
}

void App::inject_skills(const ActorSpec& a, DbSession& s) {
  // The seed's defence in depth: refresh before the check (skill_no_refresh trusts the
  // identity map, loaded at session correlation before the lock).
  const pg::Row agent = c_.variant.skill_no_refresh ? s.get(kAgents, a.agent) : s.refresh(kAgents, a.agent);
  if (!agent.at("prompt_injected_at").empty()) return;
  observe(events::Kind::skill_injected, a.agent, env_.current_actor());
  s.update(kAgents, a.agent, {{"prompt_injected_at", fmt::format("{}", env_.now().count())}});
  s.commit();
  observe(events::Kind::write, a.agent, env_.current_actor());
}

void App::deferred_stop(const ActorSpec& a) {
  auto s = session(a);
  s->get(kCommands, a.agent);  // the command as the stop hook handed it over
  auto finish = [&] {
    // The seed's re-check: refresh, and skip when session_end already completed it.
    const pg::Row cmd = c_.variant.deferred_stop_no_recheck ? s->get(kCommands, a.agent) : s->refresh(kCommands, a.agent);
    if (parse_command_state(cmd.at("state")) == CommandState::complete) return;
    transition(a, *s, cmd, CommandState::complete);
  };
  auto wait_for_transcript = [&] {
    for (int i = 0; i < a.retries; ++i) env_.sleep_for(a.retry_sleep);
  };
  if (c_.variant.deferred_stop_lock_first) {
    with_agent_lock(a, a.agent, true, [&] {
      wait_for_transcript();
      finish();
    });
  } else {
    wait_for_transcript();
    with_agent_lock(a, a.agent, true, finish);
  }
}

void App::reaper(const ActorSpec& a) {
  const ActorId me = env_.current_actor();
  for (int cycle = 0; cycle < a.cycles; ++cycle) {
    auto s = session(a);
    std::vector<int> reaped;
    if (c_.variant.reaper_batch_commit) s->begin();
    for (int agent : a.agents) {
      const bool ran = with_agent_lock(a, agent, false, [&] {
        const pg::Row row = s->refresh(kAgents, agent);
        if (row.at("status") != "ended") return;
        s->update(kAgents, agent, {{"status", "reaped"}});
        if (c_.variant.reaper_batch_commit) {
          reaped.push_back(agent);
          return;
        }
        s->commit();  // the seed: commit inside the lock
        observe(events::Kind::write, agent, me);
      });
      if (!ran) observe(events::Kind::skipped, agent, me);
    }
    if (c_.variant.reaper_batch_commit) {
      s->commit();  // after the loop: outside every agent's lock
      for (int agent : reaped) observe(events::Kind::write, agent, me);
    }
    s->close();
    if (cycle + 1 < a.cycles) env_.sleep_for(a.interval);
  }
}

void App::background(const ActorSpec& a, const char* column) {
  const ActorId me = env_.current_actor();
  for (int cycle = 0; cycle < a.cycles; ++cycle) {
    auto s = session(a);
    const bool ran = with_agent_lock(a, a.agent, false, [&] {
      s->refresh(kCommands, a.agent);
      s->update(kAgents, a.agent, {{column, std::to_string(cycle + 1)}});
      s->commit();
      observe(events::Kind::write, a.agent, me);
    });
    if (!ran) observe(events::Kind::skipped, a.agent, me);  // retried next cycle
    s->close();
    if (cycle + 1 < a.cycles) env_.sleep_for(a.interval);
  }
}

void App::summarise(const ActorSpec& a) {
  auto s = session(a);
  s->begin();
  pg::Row turn;
  try {
    turn = c_.variant.summarise_without_nowait ? s->refresh(kTurns, a.agent) : s->lock_row(kTurns, a.agent, true);
  } catch (const DbError& e) {
    if (e.sqlstate != pg::sqlstate::kLockNotAvailable) throw;
    s->rollback();  // another thread is summarising this turn: return None, no LLM call
    observe(events::Kind::skipped, a.agent, env_.current_actor());
    return;
  }
  if (!turn.at("summary").empty()) {
    s->commit();  // already summarised: return it, no LLM call
    return;
  }
  observe(events::Kind::llm_call, a.agent, env_.current_actor());
  s->update(kTurns, a.agent, {{"summary", a.name}});
  s->commit();
}

void App::edit_config(const ActorSpec& a) {
  auto file = env_.open_file("config.yaml");
  const bool lock = !c_.variant.config_no_flock;
  if (lock) file->flock(FlockMode::exclusive);
  const std::int64_t current = config_content_->load();  // read
  config_content_->store(current | (std::int64_t{1} << a.key));  // merge and write
  if (lock) file->unlock();
  file->close();
}

void App::handoff(const ActorSpec& a, DbSession& s) {
  const ActorId me = env_.current_actor();
  auto work = [&] {
    const pg::Row agent = s.refresh(kAgents, a.agent);
    if (agent.at("handoff") == "1") return;
    observe(events::Kind::handoff, a.agent, me);
    s.update(kAgents, a.agent, {{"handoff", "1"}});
    s.commit();
    observe(events::Kind::write, a.agent, me);
  };
  if (a.nested != ActorSpec::Nested::handoff) {
    with_agent_lock(a, a.agent, true, [&] {
      work();
      if (a.raise) throw AppError("handoff failed after its commit");  // propagates; the lock must go
    });
    return;
  }
  // Called from inside a hook that holds the lock: the service must refuse at once.
  try {
    with_agent_lock(a, a.agent, true, work);
    observe(events::Kind::reentrancy, a.agent, 0);
  } catch (const AdvisoryLockError& e) {
    observe(events::Kind::reentrancy, a.agent, e.reason() == AdvisoryLockError::Reason::reentrant ? 1 : 0);
  }
}

void App::remote_send(const ActorSpec& a) {
  auto s = session(a);
  with_agent_lock(a, a.agent, true, [&] {
    const pg::Row cmd = s->refresh(kCommands, a.agent);
    const CommandState state = parse_command_state(cmd.at("state"));
    if (state != CommandState::idle && state != CommandState::awaiting_input) return;  // not ready
    observe(events::Kind::sent, a.agent, env_.current_actor());
    transition(a, *s, cmd, CommandState::commanded);
  });
}

void App::monitor(const ActorSpec& a) {
  auto c = connections(a).pool->checkout();
  if (!c.ok()) throw DbError(c.error());
  pg::PooledConnection conn = std::move(c).value();
  auto report = monitor_advisory_locks(*conn);
  if (!report.ok()) throw DbError(report.error());
  observe(events::Kind::monitor_rows, env_.current_actor(), static_cast<std::int64_t>(report.value().total));
}

}  // namespace lockstep::headspace
