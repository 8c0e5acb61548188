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
  // The workers are interchangeable (the same code and configuration; ran_by is indexed
  // by id only as a name): executions equal up to renaming them are explored once.
  m.symmetric_actors(c.workers, [o](Jobs& s, Env& env, ActorId self) {
     const int ran = claim_jobs(*s.pool, s.config.jobs, o, [&s, &env](std::int64_t id) {
       env.sleep_for(std::chrono::milliseconds(s.config.job_ms));
       s.runs[id - 1]->fetch_add(1);
     });
     s.ran_by[self]->store(ran);
   })
      .invariant("each_job_once", "every job runs exactly once",
                 [](Jobs& s) -> std::optional<std::string> {
                   for (std::size_t i = 0; i < s.runs.size(); ++i) {
                     if (const auto n = s.runs[i]->load(); n != 1) return "job " + std::to_string(i + 1) + " ran " + std::to_string(n) + " times";
                   }
                   return std::nullopt;
                 })
      // Only jobclaim's keys ((7, id) in the two-int4 form): a shared server may hold other
      // clients' advisory locks.
      .invariant("no_lock_left", "no advisory lock is held once the workers are done",
                 lockstep::no_advisory_lock_left<Jobs>(pool_of, [](const lockstep::pg::AdvisoryLockRow& r) {
                   return r.classid == 7 && r.objsubid == 2;
                 }))
      .invariant("no_checkout_left", "every worker returned its connection", lockstep::no_connection_checked_out<Jobs>(pool_of))
      .fault("phantom_grant", "Bug #17686: a lock timeout fires after the grant (needs timed exploration)")
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
      .variants = lockstep::named_docs(kVariants),  // invariants and faults: the model's own
      .timed_faults = {"phantom_grant"},
      .ranges = {{"workers", 1, 8}, {"jobs", 1, 8}, {"lock_timeout_ms", 1, 60'000}, {"job_ms", 0, 60'000}},
      .model = model,
      // `confirm --phantom --system jobclaim`: our own lock and unlock code in Bug #17686 rounds.
      .phantom_round =
          [](lockstep::pg::Connection& conn, lockstep::Duration timeout, const Config& c) {
            const ClaimOptions o = claim_options(c.variant, timeout);
            const bool granted = lock_job(conn, 1, o);
            unlock_job(conn, 1, granted, o);
            return granted;
          },
      .phantom_key = job_key(1),
  };
}

}  // namespace jobclaim
