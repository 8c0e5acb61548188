// model/phase_lock/system.h: the `phase_lock` system (seed 003): rapid /resume requests
// against the in-memory PhaseExecutionLockManager (model/phase_lock/lock_manager.h), on the
// virtual clock. Modelled: try_acquire_lock, release_lock (safe without acquire), the
// forced release after the timeout, per-(flow, phase) keys, background tasks that run for
// a chosen duration or crash. Left out: the singleton (one manager per execution), the
// database and the agents the phase runs, and multi-process deployment (the seed's own
// stated limitation).
//
// Observation scopes (Event::scope): per phase lock key. Every invariant (duplicate
// execution, release by owner) reads the events of one key only.
#pragma once

#include "lockstep/model/system.h"

namespace lockstep::phase_lock {

const SystemInfo& system_info();

}  // namespace lockstep::phase_lock
