// model.h: the job-claim service as a lockstep model: its configuration, the state of one
// execution, the model (actors and invariants), and the system that scenario files name.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <lockstep/lockstep.h>
#include <lockstep/system.h>

namespace jobclaim {

// Read from scenario files through its JSON conversion (the registration declares the
// ranges): "variant", "config" and "faults" go into the keys of those names.
struct Config {
  std::string variant = "correct";  // one of kVariants (jobclaim.h)
  int workers = 2;
  int jobs = 2;
  bool phantom_grant = false;       // the simulated server's Bug #17686 (explored in timed mode)
  std::int64_t lock_timeout_ms = 50;
  std::int64_t job_ms = 50;          // how long running a job takes (virtual time in the model)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Config, variant, workers, jobs, phantom_grant, lock_timeout_ms, job_ms)

// One execution: the table of jobs, a pool, and how often each job ran.
struct Jobs {
  Jobs(lockstep::Env& env, const Config& config);
  Config config;
  std::unique_ptr<lockstep::pg::Pool> pool;
  std::vector<std::unique_ptr<lockstep::SharedVar>> runs;    // runs[id - 1]: times job id ran
  std::vector<std::unique_ptr<lockstep::SharedVar>> ran_by;  // ran_by[worker]: jobs it ran
};

lockstep::Model<Jobs, Config> model(const Config& config);

// For lockstep::register_model_system: "system": "jobclaim" in a scenario file.
lockstep::ModelSystem<Jobs, Config> system();

}  // namespace jobclaim
