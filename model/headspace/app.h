// model/headspace/app.h: the application of seeds 000 and 001 (claude_headspace), one
// execution's worth: its database rows, its worker processes, and what each actor does.
//
// Modelled from the seeds:
//  - tables `agents` (status, prompt_injected_at, handoff, last_event, and a column per
//    background thread), `commands` (one per agent: state and a history column holding one
//    letter per state it went through), `turns` (summary) and `hook_events` (one row per
//    processed hook);
//  - `workers` processes sharing the database; in variant in_memory_locks each has its own
//    per-agent threading.Lock. With config shared_pool each worker has one pool (the seed's
//    QueuePool, 15 + 10) for its db.session and lock connections alike, as the seed has;
//    otherwise every actor has a pool of its own, so that exploration does not order the
//    checkouts of actors that never compete for a connection (which connection an actor
//    gets matters only when a returned connection still holds a lock, or the pool runs
//    dry: the scenarios about leaks and exhaustion share the pool);
//  - the 8 mutating hook routes: correlate the session (load the agent into db.session),
//    take advisory_lock(AGENT, agent.id), process with fresh state over `commits`
//    intermediate commits; the read-only status route takes no lock;
//  - the deferred stop thread, the reaper, transcript reconciler, context poller, tmux
//    watchdog, summarisation, the config editor, the handoff executor, remote agent send and
//    the monitoring endpoint, as model/headspace/config.h lists them.
// Left out on purpose: the HTTP layer, the LLM itself (a call is an observation), the
// transcript file (the deferred stop's retry loop only sleeps), SSE broadcasting, and
// command rows beyond one per agent.
//
// Every fact the invariants need is reported through Env::observe (model/headspace/checker.h
// lists the events).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lockstep/model/advisory_lock.h"
#include "lockstep/model/env.h"
#include "lockstep/model/headspace/config.h"
#include "lockstep/model/headspace/db_session.h"
#include "lockstep/model/headspace/events.h"
#include "lockstep/model/pg.h"

namespace lockstep::headspace {

// A pool that tells the invariants how many connections each actor holds, and how many the
// pool has handed out.
class CountingPool final : public pg::Pool {
 public:
  // held: connections per actor, shared by the pools that count into it.
  CountingPool(Env& env, std::unique_ptr<pg::Pool> inner, int index, ActorLocal<int>& held)
      : env_(env), inner_(std::move(inner)), index_(index), held_(held) {}
  pg::Result<pg::PooledConnection> checkout() override;
  pg::PoolConfig config() const override { return inner_->config(); }
  int checked_out() const override { return inner_->checked_out(); }

 private:
  Env& env_;
  std::unique_ptr<pg::Pool> inner_;
  int index_;
  ActorLocal<int>& held_;
};

class App {
 public:
  App(Env& env, const Config& config);
  App(const App&) = delete;
  App& operator=(const App&) = delete;

  // Runs actor `actor` (an index into config.actors) to its end. Never throws.
  void run(ActorId actor);

  // The database as it is now, through a connection of its own (for the final checks).
  pg::Pool& audit_pool() { return *audit_pool_; }
  int checked_out() const;
  std::int64_t config_file() const { return config_content_final_; }
  void read_config_file() { config_content_final_ = config_content_->load(); }

 private:
  // A pool and the lock service over it: one per worker, or one per actor.
  struct Connections {
    std::unique_ptr<CountingPool> pool;
    std::unique_ptr<AdvisoryLockService> locks;
    // db.session's pool when it is not `pool` (per-actor pools: the backend_terminated
    // fault is about sessions holding advisory locks, so it strikes lock connections only).
    std::unique_ptr<CountingPool> session_pool;
  };
  Connections& connections(const ActorSpec& a);

  void hook(const ActorSpec& a);
  void deferred_stop(const ActorSpec& a);
  void reaper(const ActorSpec& a);
  void background(const ActorSpec& a, const char* column);
  void summarise(const ActorSpec& a);
  void edit_config(const ActorSpec& a);
  void handoff(const ActorSpec& a, DbSession& s);
  void remote_send(const ActorSpec& a);
  void monitor(const ActorSpec& a);

  // Runs body inside the AGENT lock of `agent` (blocking: advisory_lock, which throws
  // AdvisoryLockError; else advisory_lock_or_skip, and false when skipped), bracketed by
  // "enter" / "exit" observations and with the stall fault applied inside.
  bool with_agent_lock(const ActorSpec& a, int agent, bool blocking, const std::function<void()>& body);
  // The body of a hook under its lock.
  void process_hook(const ActorSpec& a, DbSession& s);
  void inject_skills(const ActorSpec& a, DbSession& s);
  // Moves the agent's command to `to` from what `cmd` says it is, and commits.
  void transition(const ActorSpec& a, DbSession& s, const pg::Row& cmd, CommandState to);
  std::unique_ptr<DbSession> session(const ActorSpec& a);
  void observe(events::Kind kind, std::int64_t subject, std::int64_t value) { env_.observe(events::event(kind, subject, value)); }

  Env& env_;
  const Config& c_;
  ActorLocal<int> held_;  // connections each actor holds, over all pools
  std::vector<Connections> connections_;
  std::vector<std::vector<std::unique_ptr<Mutex>>> memory_locks_;  // worker -> agent - 1 (in_memory_locks)
  std::unique_ptr<pg::Pool> audit_pool_;
  std::unique_ptr<SharedVar> config_content_;  // config.yaml: one bit per key
  std::int64_t config_content_final_ = 0;
};

CommandState parse_command_state(const std::string& text);

}  // namespace lockstep::headspace
