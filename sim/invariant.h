// sim/invariant.h: assertions of the engine's own invariants, on in every build.
//
// LOCKSTEP_INVARIANT(condition, "what must hold") stops the process with the file, the line
// and the message when the condition is false: a broken internal invariant is a bug in
// lockstep, never a verdict about the model under test (those are data: sim/sched/scheduler.h).
// Keep the conditions cheap; they run in release builds too.
#pragma once

#include <cstdio>
#include <cstdlib>

#define LOCKSTEP_INVARIANT(condition, message)                                                          \
  do {                                                                                                  \
    if (!(condition)) [[unlikely]] {                                                                    \
      std::fprintf(stderr, "lockstep: internal invariant broken at %s:%d: %s (%s)\n", __FILE__, __LINE__, \
                   message, #condition);                                                                \
      std::abort();                                                                                     \
    }                                                                                                   \
  } while (false)
