// sim/sched/sim_objects.h: factories for the simulated Env objects (see sim_env.h for semantics).
#pragma once

#include <memory>
#include <string>

#include "lockstep/model/env.h"
#include "lockstep/sim/sched/scheduler.h"

namespace lockstep::sim {

std::unique_ptr<Mutex> make_sim_mutex(Scheduler& s, std::string name);
std::unique_ptr<RWMutex> make_sim_rwmutex(Scheduler& s, std::string name);
std::unique_ptr<Lock> make_sim_lock(Scheduler& s, std::string name);
std::unique_ptr<SharedVar> make_sim_shared_var(Scheduler& s, std::string name, std::int64_t initial);

}  // namespace lockstep::sim
