// real/throwaway_server.h: a private, throwaway PostgreSQL cluster for `--pg auto` and tests
// (the C++ form of scripts/pg-throwaway).
//
// start() makes a fresh temp dir (under $TMPDIR, else /tmp), runs initdb and starts a server that listens only on a Unix
// socket in that dir (no TCP), with fsync, synchronous_commit and full_page_writes off: fast,
// reachable only from this machine, and nothing survives. As root the server runs as the
// postgres user (initdb refuses root). The destructor stops that server (only that one) and
// removes the dir; it never throws. Child processes get argument vectors, never a shell.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>

namespace lockstep::real {

// Thrown when the server cannot be started; what() is one line that names the log to read.
class ThrowawayError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class ThrowawayServer {
 public:
  // Server binaries: $PGBIN, else the highest version under /usr/lib/postgresql/*/bin.
  // Throws ThrowawayError when there are none, or when initdb or the start fails (the dir
  // and its logs are then kept for reading).
  static std::unique_ptr<ThrowawayServer> start();
  ~ThrowawayServer();  // pg_ctl -m fast -w stop, then removes the dir
  ThrowawayServer(const ThrowawayServer&) = delete;
  ThrowawayServer& operator=(const ThrowawayServer&) = delete;

  // "host=DIR port=N user=postgres dbname=postgres", for libpq.
  const std::string& conninfo() const { return conninfo_; }
  const std::string& directory() const { return dir_; }
  // pg_ctl restart -m fast -w: every session ends, committed rows stay (a clean shutdown),
  // and it returns once the server accepts connections again; false when that failed (see
  // pg_ctl.log and server.log in the directory). Safe to call from any one thread at a time.
  bool restart();

 private:
  ThrowawayServer(std::string bin, std::string dir, int port);

  std::string bin_, dir_, conninfo_;
};

}  // namespace lockstep::real
