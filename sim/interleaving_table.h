// sim/interleaving_table.h: a trace's event log as a table with one column per actor.
//
//   step  time      a                 b
//      0  0 ms      read x -> 0
//      1  0 ms                        read x -> 0
// Column widths come from all the events, so rows can also be printed one at a time
// (replay --step). Linear in the number of events; long cells are cut with "...".
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "lockstep/sim/scheduler.h"

namespace lockstep::sim {

class InterleavingTable {
 public:
  InterleavingTable(const std::vector<LogEvent>& events, const std::vector<std::string>& actors);
  void header(std::ostream& out) const;
  void row(std::ostream& out, const LogEvent& event) const;

 private:
  const std::vector<std::string>& actors_;
  std::vector<std::size_t> width_;
  std::size_t time_width_ = 4;
};

void print_interleaving(std::ostream& out, const std::vector<LogEvent>& events, const std::vector<std::string>& actors);

}  // namespace lockstep::sim
