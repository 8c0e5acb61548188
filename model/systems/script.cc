#include "lockstep/model/systems/script.h"

#include <charconv>

#include <fmt/format.h>

#include "lockstep/model/systems/script_program.h"

namespace lockstep::script {
namespace {

// One execution of a script: its variables, locks and registers.
class ScriptInstance final : public Instance {
 public:
  ScriptInstance(const Program& program, Env& env) : p_(program), env_(env) {
    for (std::size_t v = 0; v < p_.vars.size(); ++v) {
      vars_.push_back(env.new_shared_var(p_.vars[v], p_.initial[v]));
    }
    for (const auto& lock : p_.locks) {
      if (lock.reader_writer) {
        rwmutexes_.push_back(env.new_rwmutex(lock.name));
        mutexes_.push_back(nullptr);
      } else {
        mutexes_.push_back(env.new_mutex(lock.name));
        rwmutexes_.push_back(nullptr);
      }
    }
    for (const auto& actor : p_.actors) registers_.emplace_back(actor.registers.size(), 0);
    logs_.assign(p_.scopes.size(), 0);
    if (p_.uses_sql) {
      const int actors = static_cast<int>(p_.actors.size());
      pool_ = env.new_pg_pool(pg::PoolConfig{.pool_size = p_.own_pools ? 1 : actors + 1});
      for (int a = 0; p_.own_pools && a < actors; ++a) own_pools_.push_back(env.new_pg_pool(pg::PoolConfig{.pool_size = 1, .owner = a}));
      connections_.resize(p_.actors.size());
      auto setup = pool_->checkout().value();
      for (const std::string& sql : p_.sql_setup) {
        const auto r = setup->exec(sql);
        if (!r.ok()) throw ModelError(fmt::format("config.sql_setup: \"{}\" failed: {} {}", sql, r.error().sqlstate, r.error().message));
      }
    }
  }

  int actor_count() const override { return static_cast<int>(p_.actors.size()); }
  std::vector<std::vector<ActorId>> symmetric_actors() const override { return p_.symmetric; }
  std::string_view actor_name(ActorId actor) const override { return p_.actors[actor].name; }

  void run_actor(ActorId actor) override {
    auto& regs = registers_[actor];
    auto value = [&](const Operand& o) { return o.is_register ? regs[o.reg] + o.value : o.value; };
    try {
      run_ops(actor, regs, value);
    } catch (const Crashed&) {
      // The actor's process crashed: it stops here.
    }
    if (p_.uses_sql) connections_[static_cast<std::size_t>(actor)].release();  // back to the pool (what is open rolls back)
  }

  template <typename Value>
  void run_ops(ActorId actor, std::vector<std::int64_t>& regs, const Value& value) {
    const auto& ops = p_.actors[actor].ops;
    for (std::size_t pc = 0; pc < ops.size(); ++pc) {
      const Op& op = ops[pc];
      switch (op.kind) {
        case OpKind::read: regs[op.reg] = vars_[op.object]->load(); break;
        case OpKind::write: vars_[op.object]->store(value(op.a)); break;
        case OpKind::cas: {
          const bool ok = vars_[op.object]->compare_exchange(value(op.a), value(op.b));
          if (op.reg >= 0) regs[op.reg] = ok ? 1 : 0;
          break;
        }
        case OpKind::lock: mutex(op).lock(); break;
        case OpKind::unlock: mutex(op).unlock(); break;
        case OpKind::rlock: rwmutexes_[op.object]->rlock(); break;
        case OpKind::runlock: rwmutexes_[op.object]->runlock(); break;
        case OpKind::lockfor:
          regs[op.reg] = mutex(op).try_lock_for(std::chrono::milliseconds(op.ms)) ? 1 : 0;
          break;
        case OpKind::trylock: regs[op.reg] = mutex(op).try_lock() ? 1 : 0; break;
        case OpKind::unlockif:
          if (regs[op.reg] != 0) mutex(op).unlock();
          break;
        case OpKind::sleep: env_.sleep_for(std::chrono::milliseconds(op.ms)); break;
        case OpKind::clock: regs[op.reg] = std::chrono::duration_cast<std::chrono::milliseconds>(env_.now()).count(); break;
        case OpKind::choose: regs[op.reg] = env_.choose(static_cast<int>(op.ms), "choose"); break;
        case OpKind::observe: observe(op.scope, value(op.a)); break;
        case OpKind::fwrite: (void)env_.filesystem().write_file(op.path, std::to_string(value(op.a))); break;
        case OpKind::fread: {
          const auto data = env_.filesystem().read_file(op.path);
          regs[op.reg] = data && !data->empty() ? std::stoll(*data) : -1;
          break;
        }
        case OpKind::fsync: (void)env_.filesystem().fsync(op.path); break;
        case OpKind::frename: (void)env_.filesystem().rename(op.path, op.path2); break;
        case OpKind::crash: env_.crash_points(op.crash); break;
        case OpKind::goto_: pc = op.target - 1; break;  // the loop's ++pc lands on the target
        case OpKind::jz:
          if (regs[op.reg] == 0) pc = op.target - 1;
          break;
        case OpKind::jnz:
          if (regs[op.reg] != 0) pc = op.target - 1;
          break;
        case OpKind::hot:
          env_.hot(op.obligation, op.ms < 0 ? Duration::max() : Duration(std::chrono::milliseconds(op.ms)));
          break;
        case OpKind::cold: env_.cold(op.obligation); break;
        case OpKind::sql: {
          const std::int64_t got = run_sql(actor, op, regs);
          if (op.reg >= 0) regs[op.reg] = got;
          break;
        }
      }
    }
  }

  std::string final_state() override {
    std::string out;
    for (std::size_t v = 0; v < vars_.size(); ++v) out += fmt::format("{}={} ", p_.vars[v], final_value(static_cast<int>(v)));
    for (std::size_t s = 0; s < p_.scopes.size(); ++s) out += fmt::format("@{}={} ", scope_text(p_.scopes[s]), logs_[s]);
    if (p_.uses_files) {  // outside any actor: these calls are not steps
      Filesystem& fs = env_.filesystem();
      for (const auto& name : fs.list("/").value_or(std::vector<std::string>{})) {
        out += fmt::format("/{}={} ", name, fs.read_file("/" + name).value_or("?"));
      }
    }
    for (std::size_t a = 0; a < p_.actors.size(); ++a) {
      for (std::size_t r = 0; r < registers_[a].size(); ++r) {
        out += fmt::format("{}.{}={} ", p_.actors[a].name, p_.actors[a].registers[r], registers_[a][r]);
      }
    }
    return out;
  }

  std::optional<Violation> at_end() override {
    for (const Check& c : p_.checks) {
      const std::int64_t actual = c.scope >= 0 ? logs_[c.scope] : c.var >= 0 ? final_value(c.var) : registers_[c.actor][c.reg];
      if (!compare(c.compare, actual, c.expected)) {
        const std::string lhs = c.scope >= 0 ? "@" + scope_text(p_.scopes[c.scope])
                                : c.var >= 0 ? p_.vars[c.var]
                                             : p_.actors[c.actor].name + "." + p_.actors[c.actor].registers[c.reg];
        return Violation{"final_state", fmt::format("check \"{}\" failed: {} is {}", c.text, lhs, actual)};
      }
    }
    if (p_.sql_checks.empty()) return std::nullopt;
    auto conn = pool_->checkout().value();
    for (const std::string& check : p_.sql_checks) {
      const auto r = conn->exec(check);
      const bool holds = r.ok() && r.value().size() == 1 && r.value().rows[0][0] == std::optional<std::string>("t");
      if (!holds) {
        const std::string got = !r.ok()        ? r.error().sqlstate + " " + r.error().message
                                : r.value().empty() ? "no row"
                                                    : r.value().rows[0][0].value_or("NULL");
        return Violation{"final_state", fmt::format("sql_check \"{}\" is not true: {}", check, got)};
      }
    }
    return std::nullopt;
  }

 private:
  static std::string scope_text(std::int64_t scope) { return scope == kGlobalScope ? "*" : std::to_string(scope); }

  // An ordered event in `scope`, and its digit appended to the logs it belongs to: its own
  // scope's, and every scope's when it is global. Only orders within a scope reach a log.
  void observe(std::int64_t scope, std::int64_t value) {
    env_.observe({"observe", scope == kGlobalScope ? -1 : scope, value, true, scope});  // may start a step
    const std::int64_t digit = ((value % 10) + 10) % 10;
    for (std::size_t s = 0; s < p_.scopes.size(); ++s) {
      if (p_.scopes[s] == scope || (scope == kGlobalScope && p_.scopes[s] != kGlobalScope)) logs_[s] = logs_[s] * 10 + digit;
    }
  }

  // Runs after every actor has finished, outside any actor: the load is not a step.
  std::int64_t final_value(int var) { return vars_[var]->load(); }

  // Writer side of a reader/writer mutex, or a plain mutex.
  struct AnyMutex {
    Mutex* m;
    RWMutex* rw;
    void lock() { m ? m->lock() : rw->lock(); }
    void unlock() { m ? m->unlock() : rw->unlock(); }
    bool try_lock_for(Duration d) {
      if (m) return m->try_lock_for(d);
      throw ModelError("lockfor needs a plain mutex, not a reader/writer one");
    }
    bool try_lock() { return m ? m->try_lock() : rw->try_lock(); }
  };
  AnyMutex mutex(const Op& op) { return {mutexes_[op.object].get(), rwmutexes_[op.object].get()}; }

  // A sql op on the actor's own connection (checked out at its first): the first value
  // when an integer (t/f: 1/0), else the rows returned or changed; -1 on an error.
  std::int64_t run_sql(ActorId actor, const Op& op, const std::vector<std::int64_t>& regs) {
    auto& conn = connections_[static_cast<std::size_t>(actor)];
    if (!conn) {
      auto checked_out = (p_.own_pools ? *own_pools_[static_cast<std::size_t>(actor)] : *pool_).checkout();
      if (!checked_out.ok()) return -1;
      conn = std::move(checked_out).value();
    }
    std::vector<pg::Param> params;
    for (int reg : op.sql_registers) params.emplace_back(std::to_string(regs[static_cast<std::size_t>(reg)]));
    const auto r = conn->exec(op.sql, params);
    if (!r.ok()) return -1;
    const pg::Rows& rows = r.value();
    if (!rows.empty() && !rows.rows[0].empty() && rows.rows[0][0]) {
      const std::string& first = *rows.rows[0][0];
      if (first == "t" || first == "f") return first == "t" ? 1 : 0;
      std::int64_t v = 0;
      const auto [end, ec] = std::from_chars(first.data(), first.data() + first.size(), v);
      if (ec == std::errc() && end == first.data() + first.size()) return v;
    }
    return rows.empty() ? rows.affected() : static_cast<std::int64_t>(rows.size());
  }

  const Program& p_;
  Env& env_;
  std::vector<std::unique_ptr<SharedVar>> vars_;
  std::vector<std::unique_ptr<Mutex>> mutexes_;
  std::vector<std::unique_ptr<RWMutex>> rwmutexes_;
  std::vector<std::vector<std::int64_t>> registers_;
  std::vector<std::int64_t> logs_;  // per Program::scopes entry
  std::unique_ptr<pg::Pool> pool_;                         // with sql ops: the simulated server's
  std::vector<std::unique_ptr<pg::Pool>> own_pools_;       // config.own_pools: actor i's is own_pools_[i]
  std::vector<pg::PooledConnection> connections_;  // per actor, from its first sql op
};

class ScriptSystem final : public System {
 public:
  explicit ScriptSystem(Program p) : p_(std::move(p)) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override {
    return std::make_unique<ScriptInstance>(p_, env);
  }

 private:
  Program p_;
};

}  // namespace

SystemInfo system_info() {
  SystemInfo info;
  info.name = "script";
  info.description = "straight-line actors over named shared variables, mutexes and files, given as data";
  info.variants = {{"default", "the program exactly as written"}};
  info.invariants = {{"final_state", "every config.check holds once all actors have finished"}};
  info.configure = [](const SystemInput& input) -> std::unique_ptr<System> {
    enabled_faults(system_info(), input.faults);  // rejects any fault: scripts have none
    return std::make_unique<ScriptSystem>(parse_program(input));
  };
  return info;
}

}  // namespace lockstep::script
