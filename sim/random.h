// sim/random.h: a small seeded generator (SplitMix64) for the simulation.
// The same seed gives the same sequence on every platform; nothing else feeds it.
#pragma once

#include <cstdint>

namespace lockstep::sim {

class Random {
 public:
  explicit Random(std::uint64_t seed = 0) : state_(seed) {}

  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }

  // Uniform in [0, bound), without modulo bias. REQUIRES: bound > 0.
  std::uint64_t uniform(std::uint64_t bound) {
    const std::uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
    std::uint64_t v;
    do {
      v = next();
    } while (v >= limit);
    return v % bound;
  }

 private:
  std::uint64_t state_;
};

}  // namespace lockstep::sim
