// sim/interleaving_table.h: a trace's event log as a table with one column per actor.
//
//   step  time      a                 b
//      0  0 ms      read x -> 0
//      1  0 ms                        read x -> 0
// Linear in the number of events; cells wider than the column limit are cut with "...".
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "sim/scheduler.h"

namespace lockstep::sim {

void print_interleaving(std::ostream& out, const std::vector<LogEvent>& events,
                        const std::vector<std::string>& actors);

}  // namespace lockstep::sim
