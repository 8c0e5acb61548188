// model/stack_room.h: how much of the current stack is left, for code that recurses on input
// (SQL functions calling functions, subqueries in subqueries) and must stop with an error, as
// PostgreSQL's check_stack_depth does, before it overflows a fiber's fixed stack.
//
// Whoever runs code on a stack of its own (sim/sched/fiber.cc) names that stack's lowest usable
// address for the time it runs (StackLimit, per thread, restored when the scope ends). Where
// no limit is named (the thread's own stack, which grows to its rlimit) the room is unknown.
#pragma once

#include <cstddef>
#include <limits>

namespace lockstep {

// Bytes between the caller's frame and the lowest usable address of the current stack;
// std::numeric_limits<std::size_t>::max() when no limit is named.
std::size_t stack_room();

// Names `low` as the current stack's lowest usable address until it is destroyed (then the
// previous one is current again). Not thread-safe across threads: one per running stack.
class StackLimit {
 public:
  explicit StackLimit(const void* low);
  ~StackLimit();
  StackLimit(const StackLimit&) = delete;
  StackLimit& operator=(const StackLimit&) = delete;

 private:
  const void* previous_;
};

// The room a recursion step of the SQL evaluator may need before it checks again, with a
// margin: a sanitizer's frames are several times larger.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr std::size_t kStackRoomNeeded = 768 << 10;
#else
inline constexpr std::size_t kStackRoomNeeded = 160 << 10;
#endif

}  // namespace lockstep
