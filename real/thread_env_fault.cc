// real/thread_env_fault.cc: the session faults on a real server (ThreadEnvOptions::fault_at):
// the chosen statement finds its session ended, by pg_terminate_backend, by the client
// closing its socket, or by a restart of the whole server; what follows is the code's and
// the checks' to judge. A server that does not come back is a lost server, as ever.
#include <cctype>

#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/thread_env.h"

namespace lockstep::real {

bool ThreadEnv::may_end_session_at(std::string_view statement) {
  std::size_t from = 0;
  while (from < statement.size() && std::isspace(static_cast<unsigned char>(statement[from])) != 0) ++from;
  std::string first;
  for (std::size_t i = from; i < statement.size() && std::isalpha(static_cast<unsigned char>(statement[i])) != 0; ++i) {
    first += static_cast<char>(std::tolower(static_cast<unsigned char>(statement[i])));
  }
  if (first.empty()) return false;  // the harness's own, or prepare
  if (first == "commit" || first == "end" || first == "abort") return false;
  if (first == "rollback") {  // ROLLBACK TO SAVEPOINT is struck as any other statement
    std::string_view rest = statement.substr(from + first.size());
    while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front())) != 0) rest.remove_prefix(1);
    return rest.size() >= 2 && std::tolower(static_cast<unsigned char>(rest[0])) == 't' &&
           std::tolower(static_cast<unsigned char>(rest[1])) == 'o';
  }
  return true;
}

void ThreadEnv::maybe_end_session(pg::Connection& c, const std::vector<ThreadEnvOptions::SessionFault>& ways) {
  const ActorId actor = current_actor();
  const ThreadEnvOptions::SessionFault way = ways[options_.fault_variant % ways.size()];
  {
    std::lock_guard l(m_);
    if (++fault_.statements != options_.fault_at) return;
    faulted_.insert(actor);  // from here on its lost connections are the fault's
    restarted_ = way == ThreadEnvOptions::SessionFault::restart;
    ++fault_.struck;
    fault_.kind = way;
  }
  const int pid = c.backend_pid();
  std::string how;
  if (way == ThreadEnvOptions::SessionFault::close) {
    close_socket(c);
    how = "its client closed the connection";
  } else if (way == ThreadEnvOptions::SessionFault::restart) {
    if (!options_.restart_server()) {
      std::lock_guard l(m_);
      if (!lost_) lost_ = LostConnection{actor, "pg_ctl restart (the server_restart fault)", {"08006", "the server did not come back"}};
      return;
    }
    how = "the server restarted (pg_ctl restart -m fast)";
  } else {
    // On a connection of its own, waiting (up to 5 s) until the backend has exited, so
    // that the statement meets a session that is gone, as in the simulation.
    auto control = connect(options_.conninfo);
    if (!control.ok()) {
      std::lock_guard l(m_);
      if (!lost_) lost_ = LostConnection{actor, "connect (to terminate a backend)", control.error()};
      return;
    }
    const auto r = control.value()->exec("SELECT pg_terminate_backend($1, 5000)", {std::to_string(pid)});
    how = r.ok() ? "pg_terminate_backend ended its backend" : "pg_terminate_backend failed: " + r.error().message;
  }
  std::lock_guard l(m_);
  fault_.actor = actor;
  fault_.pid = pid;
  fault_.how = std::move(how);
}

SessionFaultStats ThreadEnv::session_fault_stats() const {
  std::lock_guard l(m_);
  return fault_;
}

}  // namespace lockstep::real
