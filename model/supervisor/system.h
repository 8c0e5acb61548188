// model/supervisor/system.h: the `supervisor` system (seed 004): the FSMv2 supervisor's
// locks (Supervisor.mu and ctxMu per supervisor level, WorkerContext.mu per worker,
// Collector.mu, ActionExecutor.mu, all RWMutexes with Go's semantics on the sim Env) and
// the operations that take them, checked by lockdep (model/supervisor/lockdep.h) and,
// when the scenario declares ranks, by lock ranks (the seed's Option 2). Modelled: the lock
// acquisitions of tickWorker, AddWorker / RemoveWorker, reconcileChildren (Risk 1 as the
// variant shutdown_under_lock), Shutdown with one child supervisor that reads its parent,
// getStartedContext, Start, the collector and executor loops, and Risk 2's inverted
// lookup as an operation. Left out: what the locks protect (maps, contexts, channels) and
// the FSM logic; goroutines are actors running lists of operations.
//
// Observation scope: global. lockdep's graph spans every lock class at once, so the order
// of any two acquisitions may matter.
#pragma once

#include "lockstep/model/system.h"

namespace lockstep::supervisor {

const SystemInfo& system_info();

}  // namespace lockstep::supervisor
