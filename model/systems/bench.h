// model/systems/bench.h: the `bench` system: the classic model-checking benchmark programs,
// used to measure the explorer itself. config: {"program": NAME, "n": N}.
//   lockinc(N): N actors each lock m; r = x; x = r + 1; unlock m. Invariant: x == N at the end.
#pragma once

#include "model/system.h"

namespace lockstep::bench {

SystemInfo system_info();

}  // namespace lockstep::bench
