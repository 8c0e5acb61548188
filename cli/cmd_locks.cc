// cli/cmd_locks.cc: `lockstep locks`: seed 000's monitoring view, every advisory lock held
// or awaited on a server, and the total.
#include "lockstep/cli/pg_commands.h"

#include <chrono>
#include <memory>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "lockstep/cli/commands.h"
#include "lockstep/cli/pg_server.h"
#include "lockstep/cli/subcommands.h"
#include "lockstep/model/advisory_lock.h"
#include "lockstep/model/scenario.h"
#include "lockstep/real/libpq_backend.h"

namespace lockstep::cli {
namespace {

struct LocksArgs {
  std::string pg;
  bool json = false;
};

// `locks`: every advisory lock held or awaited on the server, and the total.
int run_locks(const LocksArgs& a, std::ostream& out) {
  const Server server(a.pg);
  auto c = real::connect(server.conninfo());
  auto report = monitor_advisory_locks(*c.value());
  if (!report.ok()) throw InputError(fmt::format("the monitoring query failed: {} {}", report.error().sqlstate, report.error().message));
  const AdvisoryLockReport& r = report.value();
  if (a.json) {
    nlohmann::json j{{"locks", nlohmann::json::array()}, {"total", r.total}};
    for (const auto& l : r.locks) {
      j["locks"].push_back({{"pid", l.pid}, {"application_name", l.application_name}, {"state", l.state},
                            {"query_start_ms", std::chrono::duration_cast<std::chrono::milliseconds>(l.query_start).count()},
                            {"namespace", l.namespace_id}, {"entity_id", l.entity_id}, {"mode", l.mode},
                            {"granted", l.granted}, {"duration_ms", std::chrono::duration_cast<std::chrono::milliseconds>(l.duration).count()}});
    }
    out << j.dump(2) << '\n';
    return kExitOk;
  }
  out << fmt::format("{:>7}  {:<20} {:<20} {:>9} {:>11} {:<14} {:<7} {:>10}\n", "pid", "application_name", "state", "namespace",
                     "entity_id", "mode", "granted", "duration");
  for (const auto& l : r.locks) {
    out << fmt::format("{:>7}  {:<20} {:<20} {:>9} {:>11} {:<14} {:<7} {:>8.1f} s\n", l.pid, l.application_name, l.state,
                       l.namespace_id, l.entity_id, l.mode, l.granted ? "yes" : "waiting", duration_s(l.duration));
  }
  out << fmt::format("total: {}\n", r.total);
  return kExitOk;
}

}  // namespace

void add_locks_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<LocksArgs>();
  CLI::App* l = app.add_subcommand("locks", "seed 000's monitoring view: every advisory lock held or awaited, and the total");
  l->add_option("--pg", args->pg, "libpq conninfo (\"\": the PG* environment)")->required();
  l->add_flag("--json", args->json, "print JSON");
  l->callback([&context, args] { context.command = [&context, args] { return finished(run_locks(*args, context.out)); }; });
}

}  // namespace lockstep::cli
