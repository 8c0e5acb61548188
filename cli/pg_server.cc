#include "lockstep/cli/pg_server.h"

#include <fmt/format.h>

#include "lockstep/model/scenario.h"
#include "lockstep/real/libpq_backend.h"

namespace lockstep::cli {

Server::Server(const std::string& pg) {
  if (pg == "auto") {
    try {
      owned_ = real::ThrowawayServer::start();
    } catch (const real::ThrowawayError& e) {
      throw InputError(fmt::format("--pg auto: {}", e.what()));
    }
    conninfo_ = owned_->conninfo();
  } else {
    conninfo_ = pg;
  }
  auto c = real::connect(conninfo_);  // fail early and clearly when it cannot be reached
  if (!c.ok()) throw InputError(fmt::format("--pg: {}", c.error().message));
}

std::function<bool()> Server::restarter() const {
  if (!owned_) return {};
  real::ThrowawayServer* server = owned_.get();
  return [server] { return server->restart(); };
}

std::string Server::shown() const {
  return owned_ ? "a throwaway server (--pg auto)" : real::describe_conninfo(conninfo_);
}

}  // namespace lockstep::cli
