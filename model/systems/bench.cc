#include "model/systems/bench.h"

#include <fmt/format.h>

namespace lockstep::bench {
namespace {

constexpr std::int64_t kMaxActors = 64;

struct LockIncConfig {
  int n = 2;
  bool use_lock = true;  // variant no_lock drops it: the lost update
};

class LockIncInstance final : public Instance {
 public:
  LockIncInstance(const LockIncConfig& config, Env& env)
      : config_(config), m_(env.new_mutex("m")), x_(env.new_shared_var("x", 0)) {
    for (int i = 0; i < config.n; ++i) names_.push_back(fmt::format("t{}", i));
  }

  int actor_count() const override { return config_.n; }
  std::string_view actor_name(ActorId actor) const override { return names_[actor]; }

  void run_actor(ActorId /*actor*/) override {
    if (config_.use_lock) m_->lock();
    const std::int64_t r = x_->load();
    x_->store(r + 1);
    if (config_.use_lock) m_->unlock();
  }

  std::optional<Violation> at_end() override {
    const std::int64_t x = x_->load();  // outside any actor: not a step
    if (x != config_.n) {
      return Violation{"final_count", fmt::format("x is {} after {} increments", x, config_.n)};
    }
    return std::nullopt;
  }

 private:
  LockIncConfig config_;
  std::unique_ptr<Mutex> m_;
  std::unique_ptr<SharedVar> x_;
  std::vector<std::string> names_;
};

class LockIncSystem final : public System {
 public:
  explicit LockIncSystem(LockIncConfig c) : c_(c) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override {
    return std::make_unique<LockIncInstance>(c_, env);
  }

 private:
  LockIncConfig c_;
};

}  // namespace

SystemInfo system_info() {
  SystemInfo info;
  info.name = "bench";
  info.description = "classic model-checking benchmark programs (config.program, config.n)";
  info.variants = {{"correct", "the program as the literature states it"},
                   {"no_lock", "lockinc without its mutex: increments can be lost"}};
  info.invariants = {{"final_count", "lockinc: x equals the number of actors at the end"}};
  info.configure = [](const SystemInput& input) -> std::unique_ptr<System> {
    enabled_faults(system_info(), input.faults);  // rejects any fault: benchmarks have none
    if (input.actors) input.actors->fail("bench programs build their own actors; remove \"actors\"");
    if (!input.config) throw InputError("bench: missing \"config\": {\"program\": \"lockinc\", \"n\": N}");
    const JsonCursor& config = *input.config;
    config.expect_keys({"program", "n"});
    const JsonCursor program = config.at("program");
    const std::string name = program.as_string();
    if (name != "lockinc") program.fail(fmt::format("unknown program \"{}\" (known: lockinc)", name));
    LockIncConfig c;
    c.n = static_cast<int>(config.at("n").as_int(1, kMaxActors));
    c.use_lock = input.variant != "no_lock";
    return std::make_unique<LockIncSystem>(c);
  };
  return info;
}

}  // namespace lockstep::bench
