// model.h: the job queue (jobqueue.h) as a lockstep model: workers on pools of their own
// claim, run and complete jobs, worker a stalling four timeouts on its first job
// (a GC pause); rescuers race for the election, and the leader puts back stale jobs.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <lockstep/lockstep.h>

#include "jobqueue.h"

namespace jobqueue {

struct Config {
  std::string variant = "correct";  // a Variant's name (jobqueue.h)
  int workers = 2, jobs = 2, rescuers = 2;
  std::int64_t stale_ms = 100;  // a running job without a heartbeat this long is put back
  bool stall = true;            // worker a stalls four timeouts long on its first job
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Config, variant, workers, jobs, rescuers, stale_ms, stall)

struct Run {
  Run(lockstep::Env& env, const Config& config);
  Config config;
  std::vector<std::unique_ptr<lockstep::pg::Pool>> pools;       // one per actor
  std::vector<std::unique_ptr<lockstep::SharedVar>> completed;  // per job: completions that took
  std::unique_ptr<lockstep::SharedVar> claims, rescued;         // claims made, jobs put back
};

// Timed: heartbeats, stalls and the rescuer's timeout are durations.
lockstep::Model<Run, Config> model(const Config& config);

}  // namespace jobqueue
