#include "model.h"

#include <lockstep/invariants.h>

#include "jobclaim.h"

namespace jobclaim {

using lockstep::ActorId;
using lockstep::Env;

Jobs::Jobs(Env& env, const Config& c) : config(c) {
  lockstep::pg::PoolConfig pc;
  pc.application_name = "jobclaim";
  pc.pool_size = c.workers;
  pc.phantom_grant = c.phantom_grant;
  pool = env.new_pg_pool(pc);
  auto conn = pool->checkout().value();  // outside any actor: takes effect at once
  for (int id = 1; id <= c.jobs; ++id) {
    if (auto inserted = conn->insert_row("jobs", id, {{"status", "queued"}}); !inserted.ok()) {
      throw lockstep::ModelError("insert job " + std::to_string(id) + ": " + inserted.error().message);
    }
    runs.push_back(env.new_shared_var("runs" + std::to_string(id), 0));
  }
  for (int w = 0; w < c.workers; ++w) ran_by.push_back(env.new_shared_var("ran_by" + std::to_string(w), 0));
}

lockstep::pg::Pool& pool_of(Jobs& s) { return *s.pool; }

lockstep::Model<Jobs, Config> model(const Config& c) {
  const ClaimOptions o = claim_options(c.variant, std::chrono::milliseconds(c.lock_timeout_ms));
  lockstep::Model<Jobs, Config> m("jobclaim", c);
  m.actors(c.workers, [o](Jobs& s, Env& env, ActorId self) {
     const int ran = claim_jobs(*s.pool, s.config.jobs, o, [&s, &env](std::int64_t id) {
       env.sleep_for(std::chrono::milliseconds(s.config.job_ms));
       s.runs[id - 1]->fetch_add(1);
     });
     s.ran_by[self]->store(ran);
   })
      .invariant("each_job_once",
                 [](Jobs& s) -> std::optional<std::string> {
                   for (std::size_t i = 0; i < s.runs.size(); ++i) {
                     if (const auto n = s.runs[i]->load(); n != 1) return "job " + std::to_string(i + 1) + " ran " + std::to_string(n) + " times";
                   }
                   return std::nullopt;
                 })
      // Only jobclaim's keys ((7, id) in the two-int4 form): a shared server may hold other
      // clients' advisory locks.
      .invariant("no_lock_left", lockstep::no_advisory_lock_left<Jobs>(pool_of, [](const lockstep::pg::AdvisoryLockRow& r) {
                   return r.classid == 7 && r.objsubid == 2;
                 }))
      .invariant("no_checkout_left", lockstep::no_connection_checked_out<Jobs>(pool_of))
      .mark("one_worker_ran_every_job", [](Jobs& s) {
        for (const auto& n : s.ran_by) {
          if (n->load() == s.config.jobs) return true;
        }
        return false;
      });
  if (c.phantom_grant) m.timed();
  return m;
}

lockstep::ModelSystem<Jobs, Config> system() {
  return {
      .name = "jobclaim",
      .description = "workers claim queued jobs under advisory locks (examples/jobclaim)",
      .variants = {{"correct", "re-checks the row under the lock; always unlocks"},
                   {"check_before_lock", "checks the row before taking the lock and trusts it"},
                   {"unlock_only_if_granted", "unlocks only after a granted lock: a phantom grant stays held"}},
      .invariants = {{"each_job_once", "every job runs exactly once"},
                     {"no_lock_left", "no advisory lock is held once the workers are done"},
                     {"no_checkout_left", "every worker returned its connection"}},
      .faults = {{"phantom_grant", "Bug #17686: a lock timeout fires after the grant (needs timed exploration)"}},
      .read_config =
          [](const lockstep::SystemInput& in) {
            Config c;
            c.variant = in.variant;
            if (in.config) {
              in.config->expect_keys({"workers", "jobs", "lock_timeout_ms", "job_ms"});
              if (auto d = in.config->find("job_ms")) c.job_ms = d->as_int(0, 60'000);
              if (auto w = in.config->find("workers")) c.workers = static_cast<int>(w->as_int(1, 8));
              if (auto j = in.config->find("jobs")) c.jobs = static_cast<int>(j->as_int(1, 8));
              if (auto t = in.config->find("lock_timeout_ms")) c.lock_timeout_ms = t->as_int(1, 60'000);
            }
            if (in.actors) in.fail("/actors", "jobclaim takes no actors: its workers are config.workers");
            if (in.faults) {
              in.faults->expect_keys({"phantom_grant"});
              if (auto p = in.faults->find("phantom_grant")) c.phantom_grant = p->as_bool();
              if (c.phantom_grant && !in.timed) in.fail("/faults/phantom_grant", "needs \"explore\": {\"time\": \"timed\"}");
            }
            return c;
          },
      .model = model,
  };
}

}  // namespace jobclaim
