#include "lockstep/model/invariants_off.h"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace lockstep {

namespace {

using Names = std::shared_ptr<const std::vector<std::string>>;

// Forwards every question to the system's own instance; drops the violations switched off.
// It shares the list: a hung confirm iteration keeps its instance after the System is gone.
class JudgedOnlyInstance final : public Instance {
 public:
  JudgedOnlyInstance(std::unique_ptr<Instance> inner, Names off) : inner_(std::move(inner)), off_(std::move(off)) {}
  int actor_count() const override { return inner_->actor_count(); }
  std::string_view actor_name(ActorId actor) const override { return inner_->actor_name(actor); }
  void run_actor(ActorId actor) override { inner_->run_actor(actor); }
  std::optional<Violation> on_event(const Event& event) override { return judged(inner_->on_event(event)); }
  std::optional<Violation> at_end() override { return judged(inner_->at_end()); }
  std::string final_state() override { return inner_->final_state(); }
  std::vector<std::string> marks() override { return inner_->marks(); }
  // Lockdep across executions is the lock_order invariant: switched off, it gets no edges.
  std::vector<LockOrderEdge> lock_order_edges() override {
    if (std::find(off_->begin(), off_->end(), "lock_order") != off_->end()) return {};
    return inner_->lock_order_edges();
  }
  std::vector<std::vector<ActorId>> symmetric_actors() const override { return inner_->symmetric_actors(); }

 private:
  std::optional<Violation> judged(std::optional<Violation> v) const {
    if (v && std::find(off_->begin(), off_->end(), v->invariant) != off_->end()) return std::nullopt;
    return v;
  }
  std::unique_ptr<Instance> inner_;
  Names off_;
};

class JudgedOnlySystem final : public System {
 public:
  JudgedOnlySystem(std::unique_ptr<System> inner, std::vector<std::string> off)
      : inner_(std::move(inner)), off_(std::make_shared<const std::vector<std::string>>(std::move(off))) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override {
    return std::make_unique<JudgedOnlyInstance>(inner_->instantiate(env), off_);
  }

 private:
  std::unique_ptr<System> inner_;
  Names off_;
};

}  // namespace

std::vector<std::string> parse_invariants_off(const JsonCursor& at, const SystemInfo& info) {
  if (!at.is_object()) at.fail("expected an object such as {\"NAME\": false}: the invariants this scenario does not judge");
  std::vector<std::string> off;
  for (const std::string& name : at.keys()) {
    const JsonCursor value = at.at(name);
    if (!value.value().is_boolean()) value.fail("expected true (judged, the default) or false (switched off)");
    if (!info.invariants.empty() &&
        std::none_of(info.invariants.begin(), info.invariants.end(), [&](const NamedDoc& d) { return d.name == name; })) {
      std::string list;
      for (const auto& i : info.invariants) list += fmt::format("{}{}", list.empty() ? "" : ", ", i.name);
      value.fail(fmt::format("system \"{}\" declares no invariant \"{}\" (it declares: {})", info.name, name, list));
    }
    if (!value.as_bool()) off.push_back(name);
  }
  return off;
}

std::unique_ptr<System> judged_only(std::unique_ptr<System> system, std::vector<std::string> off) {
  if (off.empty()) return system;
  return std::make_unique<JudgedOnlySystem>(std::move(system), std::move(off));
}

}  // namespace lockstep
