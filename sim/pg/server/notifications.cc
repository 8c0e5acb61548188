// sim/pg/server/notifications.cc: LISTEN, UNLISTEN and NOTIFY on the simulated server, as PostgreSQL's
// async.c does them: each is queued in the transaction and done at its commit (a LISTEN takes
// effect then; the messages go to every session listening then, the sender too, each distinct
// (channel, payload) once, in the order queued); a rollback drops them. A session in a
// transaction gets a message when its transaction ends; an idle one at once, and its client
// reads it after its next statement (take_notifications), as isolationtester prints it.
#include <algorithm>

#include "lockstep/model/sql/value.h"
#include "lockstep/sim/pg/server/connection.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {
namespace {

void check_channel(const std::string& channel) {
  if (channel.empty()) throw sql::SqlError("22023", "channel name cannot be empty");
  if (channel.size() >= 64) throw sql::SqlError("22023", "channel name too long");
}

}  // namespace

void SimConnection::queue_listen(bool listen, const std::string& channel) {
  if (listen || !channel.empty()) check_channel(channel);
  pending_listens_.emplace_back(listen, channel);
}

void SimConnection::queue_notify(const std::string& channel, const std::string& payload) {
  check_channel(channel);
  if (payload.size() >= 8000) throw sql::SqlError("22023", "payload string too long");
  const bool repeated = std::any_of(pending_notifies_.begin(), pending_notifies_.end(), [&](const lockstep::pg::Notification& n) {
    return n.channel == channel && n.payload == payload;
  });
  if (!repeated) pending_notifies_.push_back({channel, payload, pid_});
}

void SimConnection::end_notifications(bool commit) {
  if (commit) {
    for (const auto& [listen, channel] : pending_listens_) {
      if (listen) {
        session_.listening.insert(channel);
      } else if (channel.empty()) {
        session_.listening.clear();
      } else {
        session_.listening.erase(channel);
      }
    }
    for (const lockstep::pg::Notification& n : pending_notifies_) {
      server_.each_live_session([&](Session& receiver) {
        if (!receiver.listening.contains(n.channel)) return;
        (receiver.in_transaction ? receiver.notifications_held : receiver.notifications_sent).push_back(n);
      });
    }
  }
  pending_listens_.clear();
  pending_notifies_.clear();
  // This session's transaction ended: what came for it meanwhile goes to its client.
  auto& held = session_.notifications_held;
  session_.notifications_sent.insert(session_.notifications_sent.end(), held.begin(), held.end());
  held.clear();
}

Result<Rows> SqlRun::statement(const sql::Notify& n) {
  SimConnection::Statement guard(c_);
  // LISTEN and NOTIFY take no snapshot (PlannedStmtRequiresSnapshot).
  if (auto refused = begin("sql", server_.on(server_.notify_object(), Access::write), 0, false)) return *refused;
  if (n.kind == sql::Notify::Kind::notify) {
    c_.queue_notify(n.channel, n.payload);
  } else {
    c_.queue_listen(n.kind == sql::Notify::Kind::listen, n.channel);
  }
  Rows out;
  out.tag = n.kind == sql::Notify::Kind::listen ? "LISTEN" : n.kind == sql::Notify::Kind::unlisten ? "UNLISTEN" : "NOTIFY";
  return done(std::move(out));
}

}  // namespace lockstep::sim::pg
