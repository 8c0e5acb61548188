#include "lockstep/model/model_spec.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace lockstep {
namespace {

// One event against an "at most one holder" rule: an enter of a resource another holds is a
// violation; a leave by its holder frees it (a leave by anyone else changes nothing: a
// holder whose lease was taken over may still say it leaves).
std::optional<Violation> holder_event(const ModelSpec::HolderRule& rule, std::map<std::int64_t, std::int64_t>& holders,
                                      const Event& e) {
  if (e.name == rule.enter) {
    const auto [it, entered] = holders.emplace(e.subject, e.value);
    if (!entered && it->second != e.value) {
      return Violation{rule.invariant, fmt::format("{} {} by {} while {} holds it: two holders", rule.enter, e.subject, e.value,
                                                   it->second)};
    }
  } else if (e.name == rule.leave) {
    if (const auto it = holders.find(e.subject); it != holders.end() && it->second == e.value) holders.erase(it);
  }
  return std::nullopt;
}

class SpecInstance final : public Instance {
 public:
  // The instance shares the spec: a confirmation run that hangs leaves its threads running
  // on it after the System that made them is gone.
  SpecInstance(std::shared_ptr<const ModelSpec> spec, std::shared_ptr<const std::vector<std::vector<ActorId>>> symmetric,
               Env& env)
      : spec_holder_(std::move(spec)), spec_(*spec_holder_), symmetric_(std::move(symmetric)), env_(env),
        state_(spec_.make_state(env)) {}
  int actor_count() const override { return static_cast<int>(spec_.actors.size()); }
  std::vector<std::vector<ActorId>> symmetric_actors() const override { return *symmetric_; }
  std::string_view actor_name(ActorId a) const override { return spec_.actors[a].name; }
  void run_actor(ActorId a) override { spec_.actors[a].body(state_.get(), env_, a); }

  std::optional<Violation> on_event(const Event& e) override {
    if (e.kind == kPhantomGrantEvent) phantom_grant_ = true;
    if (e.kind == kPhantomCleanedEvent) phantom_cleaned_ = true;
    for (const auto& c : spec_.event_checks) {
      if (auto m = c.check(state_.get(), e)) return Violation{c.invariant, *m};
    }
    for (std::size_t i = 0; i < spec_.holder_rules.size(); ++i) {
      if (auto v = holder_event(spec_.holder_rules[i], holders_[i], e)) return v;
    }
    return std::nullopt;
  }

  std::optional<Violation> at_end() override {
    for (const auto& c : spec_.final_checks) {
      if (auto m = c.check(state_.get())) return Violation{c.invariant, *m};
    }
    return std::nullopt;
  }

  std::vector<std::string> marks() override {
    std::vector<std::string> out;
    if (phantom_grant_) out.emplace_back("phantom_grant");
    if (phantom_cleaned_) out.emplace_back("phantom_cleaned");
    for (const auto& m : spec_.marks) {
      if (m.holds(state_.get())) out.push_back(m.name);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

 private:
  std::shared_ptr<const ModelSpec> spec_holder_;
  const ModelSpec& spec_;
  std::shared_ptr<const std::vector<std::vector<ActorId>>> symmetric_;
  Env& env_;
  std::shared_ptr<void> state_;
  bool phantom_grant_ = false;
  bool phantom_cleaned_ = false;
  // By holder rule: each resource's holder.
  std::vector<std::map<std::int64_t, std::int64_t>> holders_ = std::vector<std::map<std::int64_t, std::int64_t>>(spec_.holder_rules.size());
};

class SpecSystem final : public System {
 public:
  SpecSystem(ModelSpec spec, std::vector<std::vector<ActorId>> symmetric)
      : spec_(std::make_shared<const ModelSpec>(std::move(spec))),
        symmetric_(std::make_shared<const std::vector<std::vector<ActorId>>>(std::move(symmetric))) {}
  std::unique_ptr<Instance> instantiate(Env& env) const override {
    return std::make_unique<SpecInstance>(spec_, symmetric_, env);
  }
  bool prefers_timed() const override { return spec_->prefers_timed; }

 private:
  std::shared_ptr<const ModelSpec> spec_;
  std::shared_ptr<const std::vector<std::vector<ActorId>>> symmetric_;
};

// Drops the checks of the invariants the spec switches off; InputError for a name no check has.
void switch_off_invariants(ModelSpec& spec) {
  for (const std::string& name : spec.switched_off) {
    const auto named = [&](const auto& c) { return c.invariant == name; };
    const std::size_t before = spec.final_checks.size() + spec.event_checks.size();
    const auto rule_named = [&](const ModelSpec::HolderRule& r) { return r.invariant == name; };
    const std::size_t rules = spec.holder_rules.size();
    std::erase_if(spec.final_checks, named);
    std::erase_if(spec.event_checks, named);
    std::erase_if(spec.holder_rules, rule_named);
    if (spec.final_checks.size() + spec.event_checks.size() == before && spec.holder_rules.size() == rules) {
      throw InputError("model " + spec.name + ": without_invariant(\"" + name + "\"): no invariant of that name is declared");
    }
  }
}

}  // namespace

std::unique_ptr<System> system_of(ModelSpec spec) {
  if (spec.actors.empty()) throw InputError("model " + spec.name + ": no actors");
  if (!spec.make_state) throw InputError("model " + spec.name + ": no state factory");
  switch_off_invariants(spec);
  std::vector<std::vector<ActorId>> symmetric;
  std::vector<bool> taken(spec.actors.size(), false);
  for (const auto& names : spec.symmetric) {
    std::vector<ActorId> ids;
    for (const auto& name : names) {
      const auto it = std::find_if(spec.actors.begin(), spec.actors.end(), [&](const auto& a) { return a.name == name; });
      if (it == spec.actors.end()) throw InputError("model " + spec.name + ": symmetric names no actor \"" + name + "\"");
      const auto id = static_cast<ActorId>(it - spec.actors.begin());
      if (taken[id]) throw InputError("model " + spec.name + ": actor \"" + name + "\" is in two symmetric classes");
      taken[id] = true;
      ids.push_back(id);
    }
    if (ids.size() < 2) throw InputError("model " + spec.name + ": a symmetric class needs two or more actors");
    symmetric.push_back(std::move(ids));
  }
  return std::make_unique<SpecSystem>(std::move(spec), std::move(symmetric));
}

std::string identity_difference(const nlohmann::json& recorded, const nlohmann::json& current) {
  const auto text = [](const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) ? j.at(key).dump() : std::string("(none)");
  };
  std::vector<std::string> out;
  if (text(recorded, "actors") != text(current, "actors")) {
    out.push_back("actors: the trace's " + text(recorded, "actors") + ", the current " + text(current, "actors"));
  }
  const nlohmann::json none = nlohmann::json::object();
  const nlohmann::json& was = recorded.is_object() ? recorded.value("configuration", none) : none;
  const nlohmann::json& now = current.is_object() ? current.value("configuration", none) : none;
  if (was.is_object() && now.is_object()) {
    std::set<std::string> keys;
    for (const auto& [k, v] : was.items()) keys.insert(k);
    for (const auto& [k, v] : now.items()) keys.insert(k);
    for (const std::string& k : keys) {
      if (text(was, k.c_str()) == text(now, k.c_str())) continue;
      out.push_back("configuration field \"" + k + "\": the trace's value " + text(was, k.c_str()) +
                    ", the current value " + text(now, k.c_str()));
    }
  } else if (was != now) {
    out.push_back("configuration: the trace's " + was.dump() + ", the current " + now.dump());
  }
  std::string joined;
  for (const std::string& d : out) joined += (joined.empty() ? "" : "; ") + d;
  return joined;
}

std::vector<NamedDoc> declared_invariants(const ModelSpec& spec) {
  std::vector<NamedDoc> out;
  const auto add = [&](const std::string& name) {
    if (std::any_of(out.begin(), out.end(), [&](const NamedDoc& d) { return d.name == name; })) return;
    const auto doc = spec.invariant_docs.find(name);
    out.push_back({name, doc == spec.invariant_docs.end() ? std::string() : doc->second});
  };
  for (const auto& c : spec.final_checks) add(c.invariant);
  for (const auto& c : spec.event_checks) add(c.invariant);
  for (const auto& r : spec.holder_rules) add(r.invariant);
  return out;
}

std::string default_actor_name(int i) { return i < 26 ? std::string(1, static_cast<char>('a' + i)) : "actor" + std::to_string(i); }

nlohmann::json model_identity(const ModelSpec& spec) {
  nlohmann::json actors = nlohmann::json::array();
  for (const auto& a : spec.actors) actors.push_back(a.name);
  return {{"name", spec.name}, {"actors", actors}, {"configuration", spec.configuration}};
}

}  // namespace lockstep
