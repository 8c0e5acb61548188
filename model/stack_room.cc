#include "lockstep/model/stack_room.h"

#include <cstdint>

namespace lockstep {

namespace {
thread_local const void* g_stack_low = nullptr;
}  // namespace

std::size_t stack_room() {
  if (g_stack_low == nullptr) return std::numeric_limits<std::size_t>::max();
  const char here = 0;
  const auto at = reinterpret_cast<std::uintptr_t>(&here);
  const auto low = reinterpret_cast<std::uintptr_t>(g_stack_low);
  return at > low ? at - low : 0;
}

StackLimit::StackLimit(const void* low) : previous_(g_stack_low) { g_stack_low = low; }

StackLimit::~StackLimit() { g_stack_low = previous_; }

}  // namespace lockstep
