// The supervisor system (seed 004): the FSMv2 supervisor's five kinds of lock and the
// operations that take them, each actor running a list of operations, under lockdep.
#include "lockstep/model/supervisor/system.h"

#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "lockstep/model/supervisor/lockdep.h"

namespace lockstep::supervisor {
namespace {

constexpr std::size_t kMaxSupervisorActors = 8;

enum class Op {
  tick_worker,               // s.mu.RLock lookup, RUnlock; w.mu.Lock transition (Pattern 1)
  add_worker,                // s.mu.Lock
  remove_worker,             // s.mu.Lock; w.mu.Lock mark stopped (Rule 1 order)
  get_worker_state,          // w.mu.RLock
  list_workers,              // s.mu.RLock
  get_started_context,       // s.ctxMu.RLock (Pattern 3)
  start,                     // s.ctxMu.Lock
  shutdown,                  // s.ctxMu.Lock cancel; s.mu.Lock stop workers; children shut down
  reconcile_children,        // s.mu.Lock, then child.Shutdown (Pattern 2)
  collector_loop,            // Collector.mu: RLock IsRunning, Lock cleanup
  executor_loop,             // ActionExecutor.mu: Lock EnqueueAction, RLock HasActionInProgress
  lookup_under_worker_lock,  // Risk 2: w.mu.Lock; s.mu.RLock (the WRONG example)
};
constexpr std::pair<const char*, Op> kOps[] = {
    {"tick_worker", Op::tick_worker},
    {"add_worker", Op::add_worker},
    {"remove_worker", Op::remove_worker},
    {"get_worker_state", Op::get_worker_state},
    {"list_workers", Op::list_workers},
    {"get_started_context", Op::get_started_context},
    {"start", Op::start},
    {"shutdown", Op::shutdown},
    {"reconcile_children", Op::reconcile_children},
    {"collector_loop", Op::collector_loop},
    {"executor_loop", Op::executor_loop},
    {"lookup_under_worker_lock", Op::lookup_under_worker_lock},
};

struct Step {
  Op op;
  std::string worker;  // for the per-worker operations
  std::string text;    // as written, for lockdep paths
  // "a|b": one of several operations, as the program's input decides (an explored choice).
  std::vector<Step> one_of;
};

struct ActorPlan {
  std::string name;
  std::vector<Step> steps;
};

struct Config {
  bool shutdown_under_lock = false;  // Risk 1: child.Shutdown while holding the parent's mu
  bool rule3 = false;                // "rules": ["child_call_under_lock"]: Rule 3 checked at each child call
  std::vector<std::string> workers = {"w1", "w2"};
  std::map<std::string, int> ranks;
  std::vector<ActorPlan> actors;
};

class Supervisor {
 public:
  Supervisor(Env& env, LockDep& dep, int level, Supervisor* parent)
      : mu(env, dep, fmt::format("Supervisor[{}].mu", level)),
        ctx_mu(env, dep, fmt::format("Supervisor[{}].ctxMu", level)),
        parent(parent) {}
  TrackedRWMutex mu;      // workers, children, mapped parent state
  TrackedRWMutex ctx_mu;  // ctx, ctxCancel
  Supervisor* parent;
  std::vector<std::unique_ptr<Supervisor>> children;
  bool started = true;
};

class SupervisorInstance final : public Instance {
 public:
  SupervisorInstance(Env& env, const Config& c)
      : env_(env),
        c_(c),
        dep_(env, c.ranks),
        root_(env, dep_, 0, nullptr),
        collector_(env, dep_, "Collector.mu"),
        executor_(env, dep_, "ActionExecutor.mu") {
    root_.children.push_back(std::make_unique<Supervisor>(env, dep_, 1, &root_));
    for (const auto& w : c_.workers) workers_.emplace(w, std::make_unique<TrackedRWMutex>(env, dep_, "WorkerContext.mu"));
  }

  int actor_count() const override { return static_cast<int>(c_.actors.size()); }
  std::string_view actor_name(ActorId a) const override { return c_.actors[static_cast<std::size_t>(a)].name; }

  void run_actor(ActorId a) override {
    const ActorPlan& plan = c_.actors[static_cast<std::size_t>(a)];
    for (const Step& s : plan.steps) {
      const Step& chosen = s.one_of.empty() ? s : s.one_of[static_cast<std::size_t>(env_.choose(static_cast<int>(s.one_of.size()), s.text))];
      run(chosen, fmt::format("{} on {}", chosen.text, plan.name));
    }
  }

  std::optional<Violation> on_event(const Event& e) override {
    if (e.kind == kLockdepEvent.kind) return dep_.take();
    return std::nullopt;
  }

  std::vector<LockOrderEdge> lock_order_edges() override { return dep_.edges(); }

 private:
  TrackedRWMutex& worker(const std::string& w) { return *workers_.at(w); }

  void run(const Step& s, const std::string& where) {
    switch (s.op) {
      case Op::tick_worker:
        root_.mu.rlock(where);  // lookup
        root_.mu.runlock();
        worker(s.worker).lock(where);  // the state transition
        worker(s.worker).unlock();
        break;
      case Op::add_worker:
        root_.mu.lock(where);
        root_.mu.unlock();
        break;
      case Op::remove_worker:
        root_.mu.lock(where);
        worker(s.worker).lock(where);  // Rule 1: Supervisor.mu -> WorkerContext.mu
        worker(s.worker).unlock();
        root_.mu.unlock();
        break;
      case Op::get_worker_state:
        worker(s.worker).rlock(where);
        worker(s.worker).runlock();
        break;
      case Op::list_workers:
        root_.mu.rlock(where);
        root_.mu.runlock();
        break;
      case Op::get_started_context:
        root_.ctx_mu.rlock(where);
        root_.ctx_mu.runlock();
        break;
      case Op::start:
        root_.ctx_mu.lock(where);
        root_.ctx_mu.unlock();
        break;
      case Op::shutdown: shutdown(root_, where); break;
      case Op::reconcile_children: reconcile_children(where); break;
      case Op::collector_loop:
        collector_.rlock(where);  // IsRunning
        collector_.runlock();
        collector_.lock(where);  // deferred cleanup
        collector_.unlock();
        break;
      case Op::executor_loop:
        executor_.lock(where);  // EnqueueAction
        executor_.unlock();
        executor_.rlock(where);  // HasActionInProgress
        executor_.runlock();
        break;
      case Op::lookup_under_worker_lock:
        worker(s.worker).lock(where);
        root_.mu.rlock(where);  // Risk 2: WorkerContext.mu -> Supervisor.mu
        root_.mu.runlock();
        worker(s.worker).unlock();
        break;
    }
  }

  // Shutdown: cancel the context (ctxMu), stop the workers (mu), then the children, outside
  // the lock (Rule 3). A child reads its parent's children while it shuts down (Risk 1).
  void shutdown(Supervisor& s, const std::string& where) {
    s.ctx_mu.lock(where);
    s.started = false;
    s.ctx_mu.unlock();
    if (s.parent != nullptr) {
      s.parent->mu.rlock(where);  // parent.GetChildren()
      s.parent->mu.runlock();
    }
    s.mu.lock(where);
    s.mu.unlock();
    for (auto& child : s.children) call_child(*child, where);
  }

  // A method call on a child supervisor: Shutdown.
  void call_child(Supervisor& child, const std::string& where) {
    if (c_.rule3) dep_.calling(fmt::format("Shutdown of the child whose mu is {}", child.mu.name()), where);
    shutdown(child, where);
  }

  // reconcileChildren: decides under mu which children go; shuts them down after releasing
  // it (the mitigation), or while holding it (variant shutdown_under_lock).
  void reconcile_children(const std::string& where) {
    root_.mu.lock(where);
    if (c_.shutdown_under_lock) {
      for (auto& child : root_.children) call_child(*child, where);
      root_.mu.unlock();
      return;
    }
    std::vector<Supervisor*> to_stop;
    for (auto& child : root_.children) to_stop.push_back(child.get());
    root_.mu.unlock();
    for (Supervisor* child : to_stop) call_child(*child, where);
  }

  Env& env_;
  const Config& c_;
  LockDep dep_;
  Supervisor root_;
  TrackedRWMutex collector_;
  TrackedRWMutex executor_;
  std::map<std::string, std::unique_ptr<TrackedRWMutex>> workers_;
};

Step parse_one(const JsonCursor& j, const Config& c, const std::string& text);

Step parse_step(const JsonCursor& j, const Config& c) {
  const std::string text = j.as_string();
  if (text.find('|') == std::string::npos) return parse_one(j, c, text);
  Step s{Op::add_worker, "", text, {}};
  for (std::size_t from = 0;;) {
    const std::size_t bar = text.find('|', from);
    s.one_of.push_back(parse_one(j, c, text.substr(from, bar == std::string::npos ? std::string::npos : bar - from)));
    if (bar == std::string::npos) break;
    from = bar + 1;
  }
  return s;
}

Step parse_one(const JsonCursor& j, const Config& c, const std::string& text) {
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  for (const auto& [n, op] : kOps) {
    if (name != n) continue;
    Step s{op, colon == std::string::npos ? "" : text.substr(colon + 1), text, {}};
    const bool per_worker = op == Op::tick_worker || op == Op::remove_worker || op == Op::get_worker_state ||
                            op == Op::lookup_under_worker_lock;
    if (per_worker && std::find(c.workers.begin(), c.workers.end(), s.worker) == c.workers.end()) {
      j.fail(fmt::format("\"{}\" needs a worker of the config: \"{}:w1\"", name, name));
    }
    if (!per_worker && colon != std::string::npos) j.fail(fmt::format("\"{}\" takes no worker", name));
    return s;
  }
  std::string known;
  for (const auto& [n, op] : kOps) known += fmt::format("{}{}", known.empty() ? "" : ", ", n);
  j.fail(fmt::format("unknown operation \"{}\" (known: {})", name, known));
}

Config parse(const SystemInput& input) {
  Config c;
  c.shutdown_under_lock = input.variant == "shutdown_under_lock";
  enabled_faults(system_info(), input.faults);  // none
  if (input.config) {
    input.config->expect_keys({"workers", "ranks", "rules"});
    if (auto rules = input.config->find("rules")) {
      for (const auto& r : rules->items()) {
        if (r.as_string() != "child_call_under_lock") {
          r.fail(fmt::format("unknown rule \"{}\" (known: child_call_under_lock, the seed's Rule 3)", r.as_string()));
        }
        c.rule3 = true;
      }
    }
    if (auto w = input.config->find("workers")) {
      c.workers.clear();
      for (const auto& item : w->items()) c.workers.push_back(item.as_string());
    }
    if (auto r = input.config->find("ranks")) {
      for (const std::string& k : r->keys()) c.ranks[k] = static_cast<int>(r->at(k).as_int(0, 1000));
    }
  }
  if (!input.actors || !input.actors->is_object()) {
    input.fail("/actors", "\"actors\" must map each actor's name to its operations: {\"a\": [\"tick_worker:w1\"]}");
  }
  const auto names = input.actors->keys();
  if (names.empty() || names.size() > kMaxSupervisorActors) input.actors->fail(fmt::format("expected 1 to {} actors", kMaxSupervisorActors));
  for (const std::string& name : names) {
    ActorPlan plan{name, {}};
    for (const auto& item : input.actors->at(name).items()) plan.steps.push_back(parse_step(item, c));
    c.actors.push_back(std::move(plan));
  }
  return c;
}

}  // namespace

const SystemInfo& system_info() {
  static const SystemInfo info = [] {
    SystemInfo i;
    i.name = "supervisor";
    i.description =
        "seed 004: the FSMv2 supervisor's locks under lockdep; actors map names to operations (tick_worker:w1, add_worker, "
        "remove_worker:w1, get_worker_state:w1, list_workers, get_started_context, start, shutdown, reconcile_children, "
        "collector_loop, executor_loop, lookup_under_worker_lock:w1; \"a|b\": one of them, an explored choice); config "
        "{workers, ranks, rules: [child_call_under_lock]}";
    i.variants = {{"correct", "the documented patterns: children shut down after the parent's mu is released"},
                  {"shutdown_under_lock", "Risk 1: reconcileChildren calls child.Shutdown while holding the parent's mu"}};
    i.invariants = {{"lock_order", "lockdep: the lock classes taken while holding others form no cycle"},
                    {"lock_rank", "with declared ranks: a lock is only taken above every rank held"},
                    {"child_call_under_lock",
                     "with \"rules\": [\"child_call_under_lock\"]: no child supervisor's method is called while a "
                     "Supervisor.mu is held (the seed's Rule 3)"}};
    i.configure = [](const SystemInput& input) -> std::unique_ptr<System> {
      return std::make_unique<SystemOf<SupervisorInstance, Config>>(parse(input));
    };
    return i;
  }();
  return info;
}

}  // namespace lockstep::supervisor
