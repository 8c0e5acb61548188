// `lockstep list`: the registered systems (variants, invariants, faults) and the strategies.
#include <memory>
#include <ostream>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/commands.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/system.h"
#include "lockstep/sim/check.h"

namespace lockstep::cli {
namespace {

// The systems and strategies as one JSON document (--json).
nlohmann::json list_json() {
  nlohmann::json j;
  auto docs = [](const std::vector<NamedDoc>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const auto& d : v) a.push_back({{"name", d.name}, {"description", d.description}});
    return a;
  };
  for (const bool built_in : {false, true}) {  // the program's own systems first
    for (const auto& s : registered_systems()) {
      if (s.built_in != built_in) continue;
      j["systems"].push_back({{"name", s.name}, {"description", s.description}, {"built_in", s.built_in},
                              {"variants", docs(s.variants)}, {"invariants", docs(s.invariants)},
                              {"faults", docs(s.faults)}});
    }
  }
  for (const auto& s : sim::strategy_catalog()) {
    j["strategies"].push_back({{"name", s.name}, {"description", s.help}, {"fairness", s.fairness}});
  }
  return j;
}

void print_system(std::ostream& out, const SystemInfo& s) {
  out << fmt::format("  {}: {}\n", s.name, s.description);
  for (const auto& v : s.variants) out << fmt::format("    variant {}: {}\n", v.name, v.description);
  for (const auto& v : s.invariants) out << fmt::format("    invariant {}: {}\n", v.name, v.description);
  for (const auto& v : s.faults) out << fmt::format("    fault {}: {}\n", v.name, v.description);
}

int cmd_list(bool json, std::ostream& out) {
  if (json) {
    out << list_json().dump(2) << '\n';
    return kExitOk;
  }
  // The program's own systems first (a team's executable lists its service on top), then
  // lockstep's.
  for (const bool built_in : {false, true}) {
    bool heading = false;
    for (const auto& s : registered_systems()) {
      if (s.built_in != built_in) continue;
      if (!heading) out << (built_in ? "built-in systems:\n" : "systems:\n");
      heading = true;
      print_system(out, s);
    }
  }
  out << "strategies:\n";
  for (const auto& s : sim::strategy_catalog()) {
    out << fmt::format("  {}: {}\n    fairness: {}\n", s.name, s.help, s.fairness);
  }
  return kExitOk;
}

}  // namespace

void add_list_command(CLI::App& app, CommandContext& context) {
  auto json = std::make_shared<bool>(false);
  CLI::App* l = app.add_subcommand("list", "list systems (variants, invariants, faults) and strategies");
  l->add_flag("--json", *json, "print JSON");
  l->callback([&context, json] { context.command = [&context, json] { return cmd_list(*json, context.out); }; });
}

}  // namespace lockstep::cli
