#include "lockstep/real/wall_clock.h"

namespace lockstep::real {

Stopwatch::Stopwatch() : start_(std::chrono::steady_clock::now()) {}

double Stopwatch::elapsed_seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace lockstep::real
