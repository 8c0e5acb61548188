// cli/pg_server.h: the PostgreSQL server a command that talks to one works against (--pg):
// a libpq conninfo (empty: the PG* environment variables), or "auto": a throwaway cluster
// (real/throwaway_server.h) started for the command and removed after. An unreachable
// server is bad input (InputError, exit 2), its message without any password.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "lockstep/model/env.h"
#include "lockstep/real/throwaway_server.h"

namespace lockstep::cli {

// The server a command works against: a conninfo, or a throwaway cluster it owns.
class Server {
 public:
  explicit Server(const std::string& pg);
  const std::string& conninfo() const { return conninfo_; }
  std::string shown() const;
  // Whether lockstep started it for this command (--pg auto): no other client uses it.
  bool owned() const { return owned_ != nullptr; }
  // A way to restart the server (the server_restart fault): the throwaway server's with
  // --pg auto; empty for a server lockstep did not start.
  std::function<bool()> restarter() const;

 private:
  std::unique_ptr<real::ThrowawayServer> owned_;
  std::string conninfo_;
};

// A duration in milliseconds and in seconds, for the commands' tables.
inline double duration_ms(Duration d) { return std::chrono::duration<double, std::milli>(d).count(); }
inline double duration_s(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace lockstep::cli
