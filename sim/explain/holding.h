// sim/explain/holding.h: who held what, and who waited for whom, in one replayed execution.
//
// Derived from the steps' effective footprints and results (sim/explain/cause.h ExecutionFacts),
// the same facts the explorer reasons about, so it covers every lock-like object alike:
// advisory keys, row locks taken by SELECT ... FOR UPDATE, mutexes, flocks, semaphores and
// pooled connections. A hold begins at a step that acquires an object and gets it (result
// ok, or a non-zero value such as true or a connection's pid); it ends at the actor's step
// that releases it (as often as it was taken) or lets it go with others at once (a COMMIT,
// ROLLBACK or unlock_all names them all), or at the end of the execution. A wait begins at
// an acquire that queues (or fails and is followed by the actor's wait on the same object)
// and ends at the actor's next step that is not a wake-up without a grant: granted, timed
// out, failed. A lock a step lets go at once (a COMMIT's row locks) that no grant began is
// drawn from the actor's first write of that object: the row lock an UPDATE took at once.
// For reports only: nothing here feeds exploration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/sim/explain/cause.h"

namespace lockstep::sim {

struct Span {
  enum class Kind : std::uint8_t { hold, wait };
  Kind kind = Kind::hold;
  ActorId actor = 0;
  ObjectId object = kNoObject;
  std::uint64_t from = 0;  // the step that began it
  std::uint64_t to = 0;    // the step that ended it (the last step when still open)
  bool open_at_end = false;
  std::string ended;  // a wait: "granted", "timed out", "timed out, yet granted (phantom grant)", "failed", "ended"
  std::vector<ActorId> holders;   // a wait: who held the object when it began
};

// REQUIRES: facts.steps is the execution's steps in order. Spans come sorted by `from`.
std::vector<Span> holding_spans(const ExecutionFacts& facts);

}  // namespace lockstep::sim
