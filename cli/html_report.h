// cli/html_report.h: a trace as one self-contained HTML page (no network, no scripts).
//
// Swimlanes, one column per actor, one row per step in order, virtual time on the side;
// lock acquisitions, releases, waits, timeouts, choices (faults) and observations are
// coloured; the verdict and its message are marked at the end (element id "violation" for
// a failure); the scenario and the replay command are at the top.
#pragma once

#include <string>

#include "lockstep/sim/trace.h"

namespace lockstep::cli {

std::string html_report(const sim::Trace& trace, const std::string& replay_command);

}  // namespace lockstep::cli
