#include "lockstep/sim/sched/fiber.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <new>

#include <cxxabi.h>

#include <boost/context/detail/fcontext.hpp>

#include "lockstep/model/stack_room.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define LOCKSTEP_ASAN 1
#endif

namespace lockstep::sim {

namespace ctx = boost::context::detail;

namespace {

void start_switch([[maybe_unused]] void** fake_stack_save, [[maybe_unused]] const void* bottom,
                  [[maybe_unused]] std::size_t bytes) {
#ifdef LOCKSTEP_ASAN
  __sanitizer_start_switch_fiber(fake_stack_save, bottom, bytes);
#endif
}

void finish_switch([[maybe_unused]] void* fake_stack_save,
                   [[maybe_unused]] const void** bottom_old,
                   [[maybe_unused]] std::size_t* bytes_old) {
#ifdef LOCKSTEP_ASAN
  __sanitizer_finish_switch_fiber(fake_stack_save, bottom_old, bytes_old);
#endif
}

// The Itanium C++ ABI's per-thread exception globals (2.4.1 "Caught Exception Stack"), which
// libstdc++'s __cxa_get_globals returns.
struct EhGlobals {
  void* caught_exceptions;
  unsigned int uncaught_exceptions;
};

EhGlobals& eh_globals() { return *reinterpret_cast<EhGlobals*>(abi::__cxa_get_globals()); }

}  // namespace

struct Fiber::Transfer {
  ctx::transfer_t t;
};

Fiber::Fiber(std::size_t stack_bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  stack_bytes_ = (stack_bytes + page - 1) / page * page;
  mapping_bytes_ = stack_bytes_ + page;
  // MAP_NORESERVE: pages are committed only when touched, so a roomy stack costs nothing.
  void* mem = mmap(nullptr, mapping_bytes_, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mem == MAP_FAILED) throw std::bad_alloc();
  if (mprotect(mem, page, PROT_NONE) != 0) {  // guard page: overflow faults, never corrupts
    munmap(mem, mapping_bytes_);
    throw std::bad_alloc();
  }
  stack_ = mem;
}

Fiber::~Fiber() { munmap(stack_, mapping_bytes_); }

void Fiber::start(Entry entry, void* arg) {
  entry_ = entry;
  arg_ = arg;
  finished_ = false;
  fake_stack_ = nullptr;
  char* top = static_cast<char*>(stack_) + mapping_bytes_;
#ifdef LOCKSTEP_ASAN
  // A fiber unwound by an exception may leave poisoned frames behind; start clean.
  ASAN_UNPOISON_MEMORY_REGION(top - stack_bytes_, stack_bytes_);
#endif
  context_ = ctx::make_fcontext(top, stack_bytes_, [](ctx::transfer_t t) { trampoline(Transfer{t}); });
  eh_caught_ = nullptr;  // a fiber starts outside any catch handler
  eh_uncaught_ = 0;
}

void Fiber::trampoline(Transfer tr) {
  auto* self = static_cast<Fiber*>(tr.t.data);
  self->caller_ = tr.t.fctx;
  finish_switch(nullptr, &self->caller_stack_bottom_, &self->caller_stack_bytes_);
  self->entry_(self->arg_);  // must not throw (see header)
  self->finished_ = true;
  // A dying fiber passes no fake-stack slot, so ASan frees its fake stack.
  start_switch(nullptr, self->caller_stack_bottom_, self->caller_stack_bytes_);
  ctx::jump_fcontext(self->caller_, nullptr);
  std::fputs("lockstep: a finished fiber was resumed\n", stderr);
  std::abort();
}

void Fiber::resume() {
  // The resumer's exception state out, the fiber's in; swapped back when it suspends.
  EhGlobals& eh = eh_globals();
  const EhGlobals resumer = eh;
  eh = EhGlobals{eh_caught_, eh_uncaught_};
  void* fake_stack = nullptr;
  // While it runs, code that recurses on input measures its room on this stack (54001).
  const StackLimit limit(static_cast<char*>(stack_) + (mapping_bytes_ - stack_bytes_));
  start_switch(&fake_stack, static_cast<char*>(stack_) + (mapping_bytes_ - stack_bytes_),
               stack_bytes_);
  const ctx::transfer_t t = ctx::jump_fcontext(context_, this);
  finish_switch(fake_stack, nullptr, nullptr);
  context_ = t.fctx;  // where the fiber suspended (meaningless once finished)
  EhGlobals& back = eh_globals();
  eh_caught_ = back.caught_exceptions;
  eh_uncaught_ = back.uncaught_exceptions;
  back = resumer;
}

void Fiber::suspend() {
  start_switch(&fake_stack_, caller_stack_bottom_, caller_stack_bytes_);
  const ctx::transfer_t t = ctx::jump_fcontext(caller_, nullptr);
  finish_switch(fake_stack_, &caller_stack_bottom_, &caller_stack_bytes_);
  caller_ = t.fctx;
}

}  // namespace lockstep::sim
