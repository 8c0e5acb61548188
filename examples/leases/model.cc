#include "model.h"

#include <algorithm>
#include <map>
#include <optional>

namespace leases {

using lockstep::ActorId;
using lockstep::Env;

namespace {

std::string actor_name(int i) { return std::string(1, static_cast<char>('a' + i)); }

std::vector<std::unique_ptr<lockstep::pg::Pool>> pools(Env& env, int n) {
  std::vector<std::unique_ptr<lockstep::pg::Pool>> out;
  for (int i = 0; i < n; ++i) {
    lockstep::pg::PoolConfig pc;
    pc.application_name = "leases-" + actor_name(i);
    pc.pool_size = 1;
    out.push_back(env.new_pg_pool(pc));
  }
  return out;
}

void lease_client(LeaseRun& s, Env& env, ActorId self) {
  const LeaseConfig& c = s.config;
  const auto ttl = std::chrono::milliseconds(c.ttl_ms);
  const auto skew = std::chrono::milliseconds(self == 1 ? c.clock_skew_ms : 0);
  const LeaseOptions o{.variant = lease_variant(c.variant), .ttl = ttl, .client_clock = [&env, skew] { return env.now() + skew; }};
  const std::string me = actor_name(self);
  auto conn = s.pools[self]->checkout().value();
  for (int attempt = 0; attempt < c.attempts; ++attempt) {
    if (attempt > 0) env.sleep_for(ttl);
    const auto token = acquire(*conn, "job", me, o);
    if (!token) continue;
    s.token_of[self]->store(*token);
    env.sleep_for(ttl / 2);
    if (!renew(*conn, "job", me, *token, o)) {  // lost it while we thought we held it
      s.lost_lease[self]->store(1);
      return;
    }
    if (c.stall && env.choose(2, "stall") == 1) env.sleep_for(2 * ttl);
    if (fenced_write(*conn, *token, me, o)) s.wrote_with[self]->store(*token);
    (void)release(*conn, "job", me, *token);
    return;
  }
}

// Every token handed out is unique, and the lease's token is the greatest of them: each
// acquisition got a token greater than every earlier one.
std::optional<std::string> tokens_increase(LeaseRun& s) {
  std::map<std::int64_t, std::string> holder_of;
  std::int64_t greatest = 0;
  for (std::size_t i = 0; i < s.token_of.size(); ++i) {
    const std::int64_t t = s.token_of[i]->load();
    if (t == 0) continue;
    if (auto [it, fresh] = holder_of.emplace(t, actor_name(static_cast<int>(i))); !fresh) {
      return "clients " + it->second + " and " + actor_name(static_cast<int>(i)) + " both acquired token " + std::to_string(t);
    }
    greatest = std::max(greatest, t);
  }
  auto conn = s.pools[0]->checkout().value();
  const auto now = conn->exec("SELECT token FROM leases WHERE name = 'job'").value().int64(0, "token");
  if (now != greatest) return "the lease's token is " + std::to_string(now) + ", the greatest handed out " + std::to_string(greatest);
  return std::nullopt;
}

// The resource holds the write of the greatest token that wrote it: no accepted write went
// back to an older token after a newer one (with one write per client, a write that went
// back is the last one).
std::optional<std::string> writes_never_go_back(LeaseRun& s) {
  std::int64_t newest = 0;
  std::vector<std::string> writers;
  for (std::size_t i = 0; i < s.wrote_with.size(); ++i) {
    const std::int64_t t = s.wrote_with[i]->load();
    if (t > newest) writers.clear();
    if (t > 0 && t >= newest) writers.push_back(actor_name(static_cast<int>(i)));
    newest = std::max(newest, t);
  }
  auto conn = s.pools[0]->checkout().value();
  const auto r = conn->exec("SELECT value, last_token FROM resource WHERE id = 1").value();
  const std::int64_t last = r.int64(0, "last_token");
  const std::string value = r.is_null(0, "value") ? "NULL" : r.text(0, "value");
  if (last != newest || (newest > 0 && std::find(writers.begin(), writers.end(), value) == writers.end())) {
    return "the resource holds " + value + "'s write with token " + std::to_string(last) + " after a write with token " +
           std::to_string(newest) + " was accepted";
  }
  return std::nullopt;
}

}  // namespace

LeaseRun::LeaseRun(Env& env, const LeaseConfig& c) : config(c), pools(leases::pools(env, c.clients)) {
  auto conn = pools[0]->checkout().value();  // outside any actor: takes effect at once
  create_lease_schema(*conn, {"job"});
  for (int i = 0; i < c.clients; ++i) {
    token_of.push_back(env.new_shared_var("token_of_" + actor_name(i), 0));
    wrote_with.push_back(env.new_shared_var("wrote_with_" + actor_name(i), 0));
    lost_lease.push_back(env.new_shared_var("lost_lease_" + actor_name(i), 0));
  }
}

lockstep::Model<LeaseRun, LeaseConfig> lease_model(const LeaseConfig& c) {
  (void)lease_variant(c.variant);  // an unknown name fails here, not in every execution
  lockstep::Model<LeaseRun, LeaseConfig> m("leases-" + c.variant, c);
  m.actors(c.clients, lease_client)
      .invariant("tokens_increase", tokens_increase)
      .invariant("renewal_in_time_keeps_lease",
                 [](LeaseRun& s) -> std::optional<std::string> {
                   for (std::size_t i = 0; i < s.lost_lease.size(); ++i) {
                     if (s.lost_lease[i]->load() != 0) {
                       return "client " + actor_name(static_cast<int>(i)) + " lost the lease half a TTL after acquiring it";
                     }
                   }
                   return std::nullopt;
                 })
      .invariant("writes_never_go_back", writes_never_go_back)
      // A holder that renewed in time and then had its write refused: the fence stopped a stall.
      .mark("stale_write_refused", [](LeaseRun& s) {
        for (std::size_t i = 0; i < s.token_of.size(); ++i) {
          if (s.token_of[i]->load() != 0 && s.lost_lease[i]->load() == 0 && s.wrote_with[i]->load() == 0) return true;
        }
        return false;
      })
      .timed();
  return m;
}

QueueRun::QueueRun(Env& env, const QueueConfig& c) : config(c), pools(leases::pools(env, c.workers)) {
  auto conn = pools[0]->checkout().value();
  create_queue_schema(*conn, c.jobs);
  for (int id = 1; id <= c.jobs; ++id) claims.push_back(env.new_shared_var("claims_" + std::to_string(id), 0));
}

lockstep::Model<QueueRun, QueueConfig> queue_model(const QueueConfig& c) {
  const QueueVariant variant = queue_variant(c.variant);
  lockstep::Model<QueueRun, QueueConfig> m("queue-" + c.variant, c);
  m.actors(c.workers,
           [variant](QueueRun& s, Env&, ActorId self) {
             auto conn = s.pools[self]->checkout().value();
             while (const auto id = claim_job(*conn, actor_name(self), variant)) s.claims[*id - 1]->fetch_add(1);
           })
      .invariant("each_job_claimed_once", [](QueueRun& s) -> std::optional<std::string> {
        for (std::size_t i = 0; i < s.claims.size(); ++i) {
          if (const auto n = s.claims[i]->load(); n != 1) {
            return "job " + std::to_string(i + 1) + " was claimed " + std::to_string(n) + " times";
          }
        }
        return std::nullopt;
      });
  return m;
}

}  // namespace leases
