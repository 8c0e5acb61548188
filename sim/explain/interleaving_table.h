// sim/explain/interleaving_table.h: a trace's event log as a table with one column per actor.
//
//   step  time      a                 b
//      0  0 ms      read x -> 0
//      1  0 ms                        read x -> 0
// Column widths come from all the events, so rows can also be printed one at a time
// (replay --step). Linear in the number of events. A cell longer than the column limit is
// wrapped onto continuation lines (broken after a space or comma where one is near), never
// cut: every fact of the event stays readable. A limit of 0 puts every cell on one line.
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "lockstep/sim/sched/scheduler.h"
#include "lockstep/sim/explain/trace.h"

namespace lockstep::sim {

inline constexpr std::size_t kDefaultColumnWidth = 36;

class InterleavingTable {
 public:
  InterleavingTable(const std::vector<LogEvent>& events, const std::vector<std::string>& actors,
                    std::size_t max_column = kDefaultColumnWidth);
  // Marks the steps of each cause pair in a column of their own: "1>" on the step that ran
  // first, ">1" on the step it ran before.
  void mark_causes(const Cause& cause);
  void header(std::ostream& out) const;
  void row(std::ostream& out, const LogEvent& event) const;

 private:
  const std::vector<std::string>& actors_;
  std::vector<std::size_t> width_;
  std::size_t time_width_ = 4;
  std::size_t max_column_;
  std::map<std::uint64_t, std::string> marks_;  // by step
  std::size_t mark_width_ = 0;
};

void print_interleaving(std::ostream& out, const std::vector<LogEvent>& events, const std::vector<std::string>& actors,
                        std::size_t max_column = kDefaultColumnWidth, const Cause* cause = nullptr);

// A lasso (a livelock's trace, sim/explain/trace.h LassoInfo): the prefix and the cycle once, then a
// line saying how often the cycle repeats, then the cause as print_interleaving does.
void print_lasso(std::ostream& out, const std::vector<LogEvent>& events, const std::vector<std::string>& actors,
                 const LassoInfo& lasso, std::size_t max_column = kDefaultColumnWidth, const Cause* cause = nullptr);

// The cause below a table: one line per pair ("  1. steps 6 and 8: <sentence>"), or why
// it was not computed. Nothing for a trace without one.
void print_cause(std::ostream& out, const Cause& cause);

// `text` in lines of at most `width` characters (0: one line), broken after a space or a
// comma in the last third of a line when there is one. Concatenated, the lines give
// `text` back.
std::vector<std::string> wrap_cell(const std::string& text, std::size_t width);

}  // namespace lockstep::sim
