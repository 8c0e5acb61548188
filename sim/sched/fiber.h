// sim/sched/fiber.h: a stackful coroutine on Boost.Context's fcontext, for one actor.
//
// A Fiber owns one guarded stack, allocated once and reused for every execution (start()
// does not allocate). resume() runs the fiber until it calls suspend() or its entry
// function returns; suspend() goes back to whoever resumed it. Switching allocates nothing.
//
// Under AddressSanitizer every switch is announced with __sanitizer_start_switch_fiber /
// __sanitizer_finish_switch_fiber, so ASan follows the stacks and reports no false errors.
//
// Contract: the entry function must not let an exception escape (the Fiber terminates the
// process if one does); a fiber is resumed only from the thread that created it.
// Not thread-safe.
#pragma once

#include <cstddef>

namespace lockstep::sim {

class Fiber {
 public:
  using Entry = void (*)(void* arg);

#if defined(__SANITIZE_ADDRESS__)
  static constexpr std::size_t kDefaultStackBytes = 2 << 20;
#else
  static constexpr std::size_t kDefaultStackBytes = 512 << 10;
#endif

  explicit Fiber(std::size_t stack_bytes = kDefaultStackBytes);
  ~Fiber();
  Fiber(const Fiber&) = delete;
  Fiber& operator=(const Fiber&) = delete;

  // Prepares the fiber to run entry(arg) at the next resume().
  // REQUIRES: not started, or finished.
  void start(Entry entry, void* arg);

  // Runs the fiber until it suspends or finishes. REQUIRES: started and not finished;
  // called from outside this fiber.
  void resume();

  // Returns control to the resumer. REQUIRES: called from inside this fiber.
  void suspend();

  bool finished() const { return finished_; }

 private:
  struct Transfer;
  static void trampoline(Transfer t);

  void* stack_ = nullptr;         // lowest address of the mapping (the guard page)
  std::size_t mapping_bytes_ = 0;
  std::size_t stack_bytes_ = 0;   // usable bytes above the guard page
  void* context_ = nullptr;       // the fiber's saved context while it is not running
  void* caller_ = nullptr;        // the resumer's saved context while the fiber runs
  Entry entry_ = nullptr;
  void* arg_ = nullptr;
  bool finished_ = true;

  // The C++ runtime's per-thread exception state (the Itanium C++ ABI's __cxa_eh_globals: the
  // caught exceptions' stack and the count of uncaught ones) is this fiber's while it runs and
  // kept here while it does not: a fiber that switches inside a catch handler finds its own
  // exception again (`throw;`, std::current_exception), not another fiber's.
  void* eh_caught_ = nullptr;
  unsigned int eh_uncaught_ = 0;

  // Sanitizer bookkeeping (unused without ASan).
  void* fake_stack_ = nullptr;
  const void* caller_stack_bottom_ = nullptr;
  std::size_t caller_stack_bytes_ = 0;
};

}  // namespace lockstep::sim
