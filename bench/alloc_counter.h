// bench/alloc_counter.h: counts every heap allocation made through operator new in the
// benchmark program (the replacement operators live in alloc_counter.cc).
#pragma once

#include <cstdint>

namespace lockstep::bench {

std::uint64_t allocation_count();

}  // namespace lockstep::bench
