// sim/pg/lock/deadlock.h: PostgreSQL's deadlock detector (src/backend/storage/lmgr/deadlock.c)
// over the simulated server's lock tables (advisory, row and table locks: one waits-for
// graph). A session waits for the holders its request conflicts with (hard edges) and for
// the conflicting requests queued ahead of it (soft edges). A cycle through the checking
// session made of hard edges only is a deadlock; one with soft edges may be undone by
// reordering wait queues: as DeadLockCheck, the detector searches for constraints ("this
// waiter before that one") whose topological orders of the queues leave no cycle through
// the sessions concerned, applies the first it finds and grants what the new orders let go
// (ProcLockWakeup). Deterministic: edges are followed in holder (session) and queue order.
#pragma once

#include <initializer_list>
#include <memory>
#include <vector>

#include "lockstep/sim/pg/lock/lock_table.h"

namespace lockstep::sim::pg {

enum class DeadlockVerdict {
  none,  // no cycle through the session
  soft,  // wait queues were reordered (and their waiters woken where they can go)
  hard,  // a deadlock no reordering undoes: the checking session's request fails (40P01)
};

// The check the session of `start` runs after deadlock_timeout. REQUIRES: `start` waits in
// one of `tables`.
DeadlockVerdict check_deadlock(const Waiter& start, std::initializer_list<LockTable*> tables);

}  // namespace lockstep::sim::pg
