#include "lockstep/model/system.h"

#include <algorithm>

#include <fmt/format.h>

namespace lockstep {

const SystemInfo* find_system(std::string_view name) {
  for (const auto& info : registered_systems()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::unique_ptr<System> system_for_model_identity(const nlohmann::json& identity) {
  for (const auto& info : registered_systems()) {
    if (!info.from_model_identity) continue;
    if (auto system = info.from_model_identity(identity)) return system;
  }
  return nullptr;
}

std::vector<std::string> enabled_faults(const SystemInfo& info,
                                        const std::optional<JsonCursor>& faults) {
  std::vector<std::string> enabled;
  if (!faults) return enabled;
  if (!faults->is_object()) faults->fail("expected an object mapping fault names to true/false");
  for (const auto& key : faults->keys()) {
    const JsonCursor value = faults->at(key);
    bool known = false;
    for (const auto& f : info.faults) known = known || f.name == key;
    if (!known) {
      std::string list;
      for (const auto& f : info.faults) list += fmt::format("{}{}", list.empty() ? "" : ", ", f.name);
      value.fail(fmt::format("system \"{}\" has no fault \"{}\" (it has: {})", info.name, key,
                             list.empty() ? "none" : list));
    }
    if (value.is_object() || value.as_bool()) enabled.push_back(key);
  }
  return enabled;
}

std::optional<ModelDifference> registered_model_difference(const nlohmann::json& identity) {
  for (const auto& info : registered_systems()) {
    if (!info.model_identity_difference) continue;
    if (std::string d = info.model_identity_difference(identity); !d.empty()) return ModelDifference{info.name, std::move(d)};
  }
  return std::nullopt;
}

bool SystemInput::judges(std::string_view invariant) const {
  return std::find(invariants_off.begin(), invariants_off.end(), invariant) == invariants_off.end();
}

void SystemInput::fail(std::string_view pointer, std::string_view message) const {
  if (!scenario) throw InputError(std::string(message));
  const std::string at = scenario->pointer() + std::string(pointer);
  throw InputError(fmt::format("{}: {}: {}", scenario->file(), at.empty() ? "/" : at, message));
}

std::vector<std::vector<ActorId>> interchangeable_actors(int n, const std::function<bool(ActorId, ActorId)>& same) {
  std::vector<std::vector<ActorId>> classes;
  std::vector<bool> placed(static_cast<std::size_t>(std::max(n, 0)), false);
  for (ActorId a = 0; a < n; ++a) {
    if (placed[a]) continue;
    std::vector<ActorId> members = {a};
    for (ActorId b = a + 1; b < n; ++b) {
      if (!placed[b] && same(a, b)) {
        placed[b] = true;
        members.push_back(b);
      }
    }
    if (members.size() >= 2) classes.push_back(std::move(members));
  }
  return classes;
}

}  // namespace lockstep
