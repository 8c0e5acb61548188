// Replaces the global operator new / delete to count allocations. GCC cannot see that the
// replaced pair matches malloc / free and warns; the pairing here is correct by construction.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"

#include "bench/alloc_counter.h"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<std::uint64_t> g_allocations{0};
}

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace lockstep::bench {
std::uint64_t allocation_count() { return g_allocations.load(std::memory_order_relaxed); }
}  // namespace lockstep::bench
