// sim/dpor/execution.h: what DPOR records of one execution to find its races: each step
// (who, which footprint, at which node), where actors were parked, and per object the
// accesses that happen-before analysis needs.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "lockstep/sim/sched/op.h"
#include "lockstep/model/env.h"

namespace lockstep::sim::dpor {

// One executed step: who, what it touched, at which scheduling node, and the number of
// decisions taken when it ended (to tell new steps from replayed ones).
struct Event {
  ActorId actor;
  bool timer;
  bool waits;    // the step's operation parks until its condition holds (Transition::waits)
  bool compares;     // a CAS (OpDesc::compares): moved by a race, it may fail
  bool grant_wait;   // a step of a wait for a grant, its run or its timer (OpDesc::handed_over)
  bool timer_reads_every_object;  // with grant_wait: its timer is a deadlock check (OpDesc)
  bool timer_writes_domain;       // with grant_wait: its timer is an idle timeout (OpDesc)
  bool plain_try;  // a plain lock's acquisition that does not wait: it fails (a read) when held
  Access declared_access;  // the access its operation declared (a timeout narrows it to a read)
  Footprint fp;
  std::uint32_t node;
  std::uint32_t decisions;

  // The step narrowed its declared access to a read (a failed try or CAS, a timeout).
  bool refined() const { return fp.access != declared_access; }
};

// An actor parked in the state before event `state`, with its pending operation.
struct Parked {
  std::uint32_t state;
  ActorId actor;
  Footprint fp;
  std::uint32_t decisions;
  bool handed_over;  // OpDesc::handed_over: its request races, not the wait
};

// Happens-before bookkeeping for one object or domain (or the observations) while
// analysing a run.
struct ObjectHistory {
  int last_write = -1;
  std::vector<int> reads_since;
  // Optimal mode, objects only: every access of the run, in order (the event, whether a read).
  std::vector<std::pair<int, bool>> accesses;

  void reset() {
    last_write = -1;
    reads_since.clear();
    accesses.clear();
  }
};

}  // namespace lockstep::sim::dpor
