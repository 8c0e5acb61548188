// bench/pg_lock_scope.cc: an uncontended advisory lock scope on a local PostgreSQL, through
// the advisory lock service (model/advisory_lock.h) over the libpq backend: round trips
// per scope (statements sent, counted by the backend's hooks; the floor is 2: the lock
// with its timeout setting in one round trip, the unlock in another) and scopes per
// second. Figures, not pass/fail. Usage: pg_lock_scope [CONNINFO] [SECONDS]; without a
// conninfo it starts a throwaway server (real/throwaway_server.h).
// bench/pgbench_lock_scope.sh runs the bare statements through pgbench for comparison.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "lockstep/model/advisory_lock.h"
#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/thread_env.h"
#include "lockstep/real/throwaway_server.h"

int main(int argc, char** argv) {
  using namespace lockstep;
  std::unique_ptr<real::ThrowawayServer> server;
  std::string conninfo = argc > 1 ? argv[1] : "";
  if (conninfo.empty()) {
    server = real::ThrowawayServer::start();
    conninfo = server->conninfo();
  }
  const double seconds = argc > 2 ? std::atof(argv[2]) : 5.0;
  std::uint64_t statements = 0;
  real::StatementHooks hooks;
  hooks.after = [&](std::optional<pg::Stmt>, Duration) { ++statements; };
  real::ThreadEnv env({.conninfo = conninfo, .seed = 1, .max_jitter = Duration{0}}, nullptr);
  auto pool = real::make_libpq_pool(conninfo, {.application_name = "lockstep-bench", .pool_size = 1, .max_overflow = 0}, hooks);
  AdvisoryLockService service(env, *pool);
  std::uint64_t scopes = 0;
  double elapsed = 0;
  env.run_actors(1, [&](ActorId) {
    service.advisory_lock(LockNamespace::agent, 42, [] {});  // warm-up: connect
    statements = 0;
    const auto start = std::chrono::steady_clock::now();
    while (elapsed < seconds) {
      service.advisory_lock(LockNamespace::agent, 42, [] {});
      ++scopes;
      elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  });
  std::printf("advisory lock service, uncontended, one connection: %llu scopes in %.1f s = %.0f scopes/s, "
              "%.2f round trips per scope (floor 2)\n",
              static_cast<unsigned long long>(scopes), elapsed, static_cast<double>(scopes) / elapsed,
              static_cast<double>(statements) / static_cast<double>(scopes));
  return 0;
}
