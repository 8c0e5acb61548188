// The list of systems. The built-in ones are listed here explicitly rather than by static
// registration, so that linking a static library can never silently drop one; they go
// through the same checks as a system a program registers itself (register_system).
#include <cctype>

#include <fmt/format.h>

#include "lockstep/model/dal/system.h"
#include "lockstep/model/headspace/system.h"
#include "lockstep/model/phase_lock/system.h"
#include "lockstep/model/supervisor/system.h"
#include "lockstep/model/system.h"
#include "lockstep/model/systems/bench.h"
#include "lockstep/model/systems/script.h"
#include "lockstep/model/systems/sql_spec.h"

namespace lockstep {
namespace {

bool plain_word(const std::string& s) {
  if (s.empty()) return false;
  for (const char c : s) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-')) return false;
  }
  return true;
}

void add_checked(std::vector<SystemInfo>& systems, SystemInfo info) {
  if (!plain_word(info.name)) {
    throw ModelError(fmt::format("register_system: \"{}\" is not a system name (letters, digits, _ and - only)", info.name));
  }
  if (info.name == "api") {
    throw ModelError("register_system: \"api\" is reserved: it marks traces of models in C++ code (include/lockstep/lockstep.h)");
  }
  for (const auto& s : systems) {
    if (s.name == info.name) throw ModelError(fmt::format("register_system: a system named \"{}\" is already registered", info.name));
  }
  if (info.variants.empty()) throw ModelError(fmt::format("register_system: system \"{}\" has no variant", info.name));
  for (std::size_t i = 0; i < info.variants.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (info.variants[i].name == info.variants[j].name) {
        throw ModelError(fmt::format("register_system: system \"{}\" names variant \"{}\" twice", info.name, info.variants[i].name));
      }
    }
  }
  if (!info.configure) throw ModelError(fmt::format("register_system: system \"{}\" has no configure function", info.name));
  systems.push_back(std::move(info));
}

std::vector<SystemInfo>& systems() {
  static std::vector<SystemInfo> all = [] {
    std::vector<SystemInfo> v;
    add_checked(v, script::system_info());
    add_checked(v, bench::system_info());
    add_checked(v, headspace::system_info());
    add_checked(v, phase_lock::system_info());
    add_checked(v, supervisor::system_info());
    add_checked(v, dal::system_info());
    add_checked(v, sql_spec::system_info());
    for (SystemInfo& s : v) s.built_in = true;
    return v;
  }();
  return all;
}

}  // namespace

const std::vector<SystemInfo>& registered_systems() { return systems(); }

void register_system(SystemInfo info) { add_checked(systems(), std::move(info)); }

}  // namespace lockstep
