#include "model.h"

namespace jobqueue {

using std::chrono::milliseconds;

Run::Run(lockstep::Env& env, const Config& c) : config(c) {
  for (int i = 0; i < c.workers + c.rescuers; ++i) pools.push_back(env.new_pg_pool(lockstep::pg::PoolConfig{.pool_size = 1, .owner = i}));
  create_schema(*pools[0]->checkout().value(), c.jobs);  // outside any actor: at once
  for (int j = 0; j < c.jobs; ++j) completed.push_back(env.new_shared_var("completed_" + std::to_string(j + 1), 0));
  claims = env.new_shared_var("claims", 0);
  rescued = env.new_shared_var("rescued", 0);
}

lockstep::Model<Run, Config> model(const Config& c) {
  const Variant v = variant(c.variant);
  lockstep::Model<Run, Config> m("jobqueue-" + c.variant, c);
  // A worker polls for jobs eight times, half a timeout apart, once the queue looks empty.
  m.actors(c.workers, [v](Run& s, lockstep::Env& env, lockstep::ActorId self) {
    auto conn = s.pools[self]->checkout().value();
    for (int polls = 0, jobs = 0; polls < 8;) {
      const auto job = claim(*conn, std::string(1, static_cast<char>('a' + self)), v);
      if (!job) {
        ++polls;
        env.sleep_for(milliseconds(s.config.stale_ms / 2));
        continue;
      }
      s.claims->fetch_add(1);
      const bool stall = s.config.stall && self == 0 && jobs++ == 0;
      env.sleep_for(milliseconds(stall ? 4 * s.config.stale_ms : s.config.stale_ms / 10));
      if (complete(*conn, *job, v)) s.completed[job->job - 1]->fetch_add(1);
    }
  });
  m.actors(c.rescuers, [v](Run& s, lockstep::Env& env, lockstep::ActorId self) {
    auto conn = s.pools[self]->checkout().value();
    if (!try_lead(*conn, v)) return;
    env.observe(lockstep::Event::scoped("lead", 1, self));
    env.sleep_for(milliseconds(2 * s.config.stale_ms));
    s.rescued->fetch_add(rescue(*conn, s.config.stale_ms));
    env.observe(lockstep::Event::scoped("resign", 1, self));
    resign(*conn, v);
  });
  m.at_most_one_holder("one_rescuer", "lead", "resign", "at most one elected rescuer at a time")
      .invariant("claimed_once_per_attempt", "every claim took an available job: claims = jobs + jobs put back",
                 [](Run& s) -> std::optional<std::string> {
                   const auto want = static_cast<std::int64_t>(s.completed.size()) + s.rescued->load();
                   if (s.claims->load() <= want) return std::nullopt;
                   return std::to_string(s.claims->load()) + " claims of " + std::to_string(want) + " available jobs";
                 })
      .invariant("completed_once", "at the end, each job completed exactly once", [](Run& s) -> std::optional<std::string> {
        for (std::size_t j = 0; j < s.completed.size(); ++j) {
          if (const auto n = s.completed[j]->load(); n > 1) return "job " + std::to_string(j + 1) + " completed " + std::to_string(n) + " times";
        }
        return std::nullopt;
      })
      // A job was put back, and no job was completed twice: the attempt fenced the stale worker.
      .mark("stale_worker_fenced", [](Run& s) { return s.rescued->load() > 0; })
      .timed();
  return m;
}

}  // namespace jobqueue
