// real/wall_clock.h: the real monotonic clock, for bounds and statistics of a run.
// Lives in real/ because sim/ and model/ must never read a clock.
#pragma once

#include <chrono>

namespace lockstep::real {

// Seconds elapsed since construction, from std::chrono::steady_clock.
class Stopwatch {
 public:
  Stopwatch();
  double elapsed_seconds() const;

 private:
  std::chrono::steady_clock::time_point start_;
};

}  // namespace lockstep::real
