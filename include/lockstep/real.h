// lockstep/real.h: the real backend (link lockstep::real: libpq and threads): a model's
// actors on OS threads against a real PostgreSQL through libpq. Including this header in
// one file of a program also lets Model::confirm and LOCKSTEP_PG (<lockstep/gtest.h>) run
// there (real/backend_hook.h).
//  - ThrowawayServer: a private server on a Unix socket for tests (`--pg auto`);
//  - confirm: a system's actors and invariants, many iterations with seeded jitter;
//  - conform: a simulated trace's statements against the real server, outcome by outcome;
//  - ThreadEnv, LibpqPool: the Env and pg::Pool of real runs, for code of your own;
//  - run_phantom_rounds: PostgreSQL Bug #17686, round after round, with your lock client.
#pragma once

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include "lockstep/real/backend_hook.h"
#include "lockstep/real/confirm.h"
#include "lockstep/real/conform.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/phantom_rounds.h"
#include "lockstep/real/thread_env.h"
#include "lockstep/real/throwaway_server.h"

namespace lockstep::real {

inline std::optional<std::string> conninfo_from_environment() {
  const char* pg = std::getenv("LOCKSTEP_PG");
  if (pg == nullptr || *pg == '\0') return std::nullopt;
  if (std::string(pg) != "auto") return std::string(pg);
  static const std::unique_ptr<ThrowawayServer> server = ThrowawayServer::start();
  return server->conninfo();
}

inline const Backend kLibpqBackend{
    .confirm = [](const System& system, const ConfirmOptions& options) { return confirm(system, options); },
    .describe = [](const ConfirmReport& report) { return report.describe(); },
    .server_from_environment = conninfo_from_environment,
};

namespace {
// Installs the backend when the program starts (each file that includes this header does
// the same, harmlessly).
[[maybe_unused]] const bool libpq_backend_installed = (installed_backend() = &kLibpqBackend, true);
}  // namespace

}  // namespace lockstep::real
