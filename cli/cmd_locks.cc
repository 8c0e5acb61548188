// cli/cmd_locks.cc: `lockstep locks`: seed 000's monitoring view, every advisory lock held
// or awaited on a server, and the total; then the locks of the server's own tables
// (real/table_lock_view.h).
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
#include "lockstep/real/table_lock_view.h"

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
  const auto tables = real::table_locks(*c.value());
  if (!tables.ok()) throw InputError(fmt::format("the table lock query failed: {} {}", tables.error().sqlstate, tables.error().message));
  if (a.json) {
    nlohmann::json j{{"locks", nlohmann::json::array()}, {"total", r.total}, {"table_locks", nlohmann::json::array()}};
    for (const auto& t : tables.value()) {
      j["table_locks"].push_back({{"pid", t.pid}, {"application_name", t.application_name}, {"state", t.state}, {"table", t.table},
                                  {"locktype", t.locktype}, {"mode", t.mode}, {"granted", t.granted}, {"blocked_by", t.blocked_by}});
    }
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
  out << fmt::format("\ntable and row locks (pg_locks: tables in use, row-lock waits; a row lock nobody waits for is in the row)\n");
  out << fmt::format("{:>7}  {:<20} {:<20} {:<24} {:<14} {:<24} {:<8} {}\n", "pid", "application_name", "state", "table", "locktype",
                     "mode", "granted", "blocked by");
  for (const auto& t : tables.value()) {
    out << fmt::format("{:>7}  {:<20} {:<20} {:<24} {:<14} {:<24} {:<8} {}\n", t.pid, t.application_name, t.state,
                       t.table.empty() ? "-" : t.table, t.locktype, t.mode, t.granted ? "yes" : "waiting", t.blocked_by);
  }
  return kExitOk;
}

}  // namespace

void add_locks_command(CLI::App& app, CommandContext& context) {
  auto args = std::make_shared<LocksArgs>();
  CLI::App* l = app.add_subcommand("locks", "seed 000's monitoring view: every advisory lock held or awaited, and the total; "
                                             "then the locks of the server's tables (pg_locks with the table's name)");
  l->add_option("--pg", args->pg, "libpq conninfo (\"\": the PG* environment)")->required();
  l->add_flag("--json", args->json, "print JSON");
  l->callback([&context, args] { context.command = [&context, args] { return finished(run_locks(*args, context.out)); }; });
}

}  // namespace lockstep::cli
