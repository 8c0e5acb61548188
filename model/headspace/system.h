// model/headspace/system.h: the `headspace` system: the application of seeds 000 and 001 over
// the advisory lock service (model/advisory_lock.h) and the PostgreSQL backend (model/pg.h),
// its invariants and its bug zoo. Scenario keys: config (workers, agents, pool_size,
// max_overflow, pool_timeout_ms, hook_timeout_ms, commits, shared_pool,
// initial_command, initial_agent_status, initial_summary), actors (see
// model/headspace/config.h), faults (phantom_grant, backend_terminated, stall).
#pragma once

#include "lockstep/model/system.h"

namespace lockstep::headspace {

const SystemInfo& system_info();

}  // namespace lockstep::headspace
