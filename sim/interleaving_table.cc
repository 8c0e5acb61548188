#include "lockstep/sim/interleaving_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace lockstep::sim {
namespace {

constexpr std::size_t kMaxColumn = 36;

std::string cell(const LogEvent& e) {
  std::string text = e.result.empty() ? e.op : fmt::format("{} -> {}", e.op, e.result);
  if (text.size() > kMaxColumn) text = text.substr(0, kMaxColumn - 3) + "...";
  return text;
}

std::string time_text(std::int64_t ns) {
  if (ns % 1'000'000 == 0) return fmt::format("{} ms", ns / 1'000'000);
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

}  // namespace

InterleavingTable::InterleavingTable(const std::vector<LogEvent>& events, const std::vector<std::string>& actors)
    : actors_(actors), width_(actors.size()) {
  for (std::size_t a = 0; a < actors.size(); ++a) width_[a] = actors[a].size();
  for (const auto& e : events) {
    if (e.actor >= 0 && static_cast<std::size_t>(e.actor) < actors.size()) {
      width_[e.actor] = std::max(width_[e.actor], cell(e).size());
    }
    time_width_ = std::max(time_width_, time_text(e.time_ns).size());
  }
}

void InterleavingTable::header(std::ostream& out) const {
  std::string line = fmt::format("{:>6}  {:<{}}", "step", "time", time_width_);
  for (std::size_t a = 0; a < actors_.size(); ++a) line += fmt::format("  {:<{}}", actors_[a], width_[a]);
  while (!line.empty() && line.back() == ' ') line.pop_back();
  out << line << '\n';
}

void InterleavingTable::row(std::ostream& out, const LogEvent& e) const {
  std::string line = fmt::format("{:>6}  {:<{}}", e.step, time_text(e.time_ns), time_width_);
  const bool in_column = e.actor >= 0 && static_cast<std::size_t>(e.actor) < actors_.size();
  for (std::size_t a = 0; a < actors_.size(); ++a) {
    line += fmt::format("  {:<{}}", in_column && static_cast<std::size_t>(e.actor) == a ? cell(e) : std::string(), width_[a]);
  }
  if (!in_column) line += "  (outside any actor) " + cell(e);
  while (!line.empty() && line.back() == ' ') line.pop_back();
  out << line << '\n';
}

void print_interleaving(std::ostream& out, const std::vector<LogEvent>& events, const std::vector<std::string>& actors) {
  const InterleavingTable table(events, actors);
  table.header(out);
  for (const auto& e : events) table.row(out, e);
}

}  // namespace lockstep::sim
