// model/systems/bench.h: the `bench` system: the classic model-checking benchmark programs,
// as the literature states them, to measure the explorer itself. config: {"program", "n"}.
// Shared variables are sequentially consistent and start at 0.
//   lockinc(N):  N actors each lock m; r = x; x = r + 1; unlock m.
//   readers(N):  one actor writes x = 42; N actors each read x once.
//   lastzero(N): array[0..N]; actor 0 reads array[N], array[N-1], ... down to the first 0;
//                actor j (1..N) reads array[j-1] into a and writes array[j] = a + 1.
//   indexer(N):  table[0..127]; actor t, for i in 0..3: w = i*11 + t, h = (w*7) mod 128,
//                compare-and-swap table[h] from 0 to w, probing h = (h+1) mod 128 until one
//                succeeds (GenMC's version).
//   filesystem(N): Flanagan and Godefroid, POPL 2005: actor t locks inode t mod 32; if the
//                inode has no block, it probes blocks from (2i) mod 26 under their locks for
//                one that is not busy, marks it busy and records it in the inode.
#pragma once

#include "lockstep/model/system.h"

namespace lockstep::bench {

SystemInfo system_info();

}  // namespace lockstep::bench
