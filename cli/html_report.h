// cli/html_report.h: a trace as one self-contained HTML page (no network, no scripts).
//
// The page a person reads to see why a trace failed:
//  - the verdict, the replay command, and the cause (sim/explain/cause.h) in numbered sentences;
//  - lanes, one per actor, with time running down: every step's operation and result;
//    lock-holding spans as bars beside the lane (advisory keys, row locks, mutexes, flocks,
//    pooled connections; sim/explain/holding.h), waits as hatched bars with an arrow to the holder,
//    choices and faults marked, the two steps of each cause pair highlighted and joined by a
//    numbered arrow, the violation at the end (element id "violation");
//  - past kCollapseAbove steps, runs of steps far from the cause, from choices, timeouts
//    and waits are collapsed into one row each, so a 1,000-step trace stays readable;
//  - every event in a raw table, collapsed (<details>).
// Elements tests and scripts may look for: svg#lanes, .lane-name (one per actor), .hold,
// .wait, .wait-arrow, .cause-arrow (one per cause pair), #violation.
#pragma once

#include <cstddef>
#include <string>

#include "lockstep/sim/explain/cause.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::cli {

inline constexpr std::size_t kCollapseAbove = 150;

// `facts`: the trace's execution replayed (sim::trace_facts), for the holding spans; null
// for a trace that cannot be replayed here (a model in C++): drawn from its events alone.
std::string html_report(const sim::Trace& trace, const std::string& replay_command,
                        const sim::ExecutionFacts* facts = nullptr);

}  // namespace lockstep::cli
