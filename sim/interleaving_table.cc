#include "sim/interleaving_table.h"

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

void print_interleaving(std::ostream& out, const std::vector<LogEvent>& events,
                        const std::vector<std::string>& actors) {
  std::vector<std::size_t> width(actors.size());
  for (std::size_t a = 0; a < actors.size(); ++a) width[a] = actors[a].size();
  std::size_t time_width = 4;
  for (const auto& e : events) {
    if (e.actor >= 0 && static_cast<std::size_t>(e.actor) < actors.size()) {
      width[e.actor] = std::max(width[e.actor], cell(e).size());
    }
    time_width = std::max(time_width, time_text(e.time_ns).size());
  }
  std::string line = fmt::format("{:>6}  {:<{}}", "step", "time", time_width);
  for (std::size_t a = 0; a < actors.size(); ++a) line += fmt::format("  {:<{}}", actors[a], width[a]);
  while (!line.empty() && line.back() == ' ') line.pop_back();
  out << line << '\n';
  for (const auto& e : events) {
    line = fmt::format("{:>6}  {:<{}}", e.step, time_text(e.time_ns), time_width);
    const bool in_column = e.actor >= 0 && static_cast<std::size_t>(e.actor) < actors.size();
    for (std::size_t a = 0; a < actors.size(); ++a) {
      line += fmt::format("  {:<{}}", in_column && static_cast<std::size_t>(e.actor) == a ? cell(e) : std::string(), width[a]);
    }
    if (!in_column) line += "  (outside any actor) " + cell(e);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

}  // namespace lockstep::sim
