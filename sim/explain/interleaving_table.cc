#include "lockstep/sim/explain/interleaving_table.h"

#include <algorithm>

#include <fmt/format.h>

namespace lockstep::sim {
namespace {

std::string cell(const LogEvent& e) { return e.result.empty() ? e.op : fmt::format("{} -> {}", e.op, e.result); }

std::string time_text(std::int64_t ns) {
  if (ns % 1'000'000 == 0) return fmt::format("{} ms", ns / 1'000'000);
  return fmt::format("{:.3f} ms", static_cast<double>(ns) / 1e6);
}

}  // namespace

std::vector<std::string> wrap_cell(const std::string& text, std::size_t width) {
  if (width == 0 || text.size() <= width) return {text};
  std::vector<std::string> lines;
  std::size_t from = 0;
  while (text.size() - from > width) {
    std::size_t cut = from + width;
    for (std::size_t i = from + width; i > from + width * 2 / 3; --i) {
      if (text[i - 1] == ' ' || text[i - 1] == ',') {
        cut = i;
        break;
      }
    }
    lines.push_back(text.substr(from, cut - from));
    from = cut;
  }
  lines.push_back(text.substr(from));
  return lines;
}

InterleavingTable::InterleavingTable(const std::vector<LogEvent>& events, const std::vector<std::string>& actors,
                                     std::size_t max_column)
    : actors_(actors), width_(actors.size()), max_column_(max_column) {
  for (std::size_t a = 0; a < actors.size(); ++a) width_[a] = actors[a].size();
  for (const auto& e : events) {
    if (e.actor >= 0 && static_cast<std::size_t>(e.actor) < actors.size()) {
      for (const auto& line : wrap_cell(cell(e), max_column_)) width_[e.actor] = std::max(width_[e.actor], line.size());
    }
    time_width_ = std::max(time_width_, time_text(e.time_ns).size());
  }
}

void InterleavingTable::mark_causes(const Cause& cause) {
  for (std::size_t k = 0; k < cause.pairs.size(); ++k) {
    auto add = [&](std::uint64_t step, std::string label) {
      std::string& m = marks_[step];
      m += (m.empty() ? "" : ",") + label;
      mark_width_ = std::max(mark_width_, m.size());
    };
    add(cause.pairs[k].first, fmt::format("{}>", k + 1));
    add(cause.pairs[k].second, fmt::format(">{}", k + 1));
  }
}

void InterleavingTable::header(std::ostream& out) const {
  std::string line = mark_width_ > 0 ? fmt::format("{:<{}} ", "", mark_width_) : std::string();
  line += fmt::format("{:>6}  {:<{}}", "step", "time", time_width_);
  for (std::size_t a = 0; a < actors_.size(); ++a) line += fmt::format("  {:<{}}", actors_[a], width_[a]);
  while (!line.empty() && line.back() == ' ') line.pop_back();
  out << line << '\n';
}

void InterleavingTable::row(std::ostream& out, const LogEvent& e) const {
  const bool in_column = e.actor >= 0 && static_cast<std::size_t>(e.actor) < actors_.size();
  if (!in_column) {
    std::string line = fmt::format("{:>6}  {:<{}}  (outside any actor) {}", e.step, time_text(e.time_ns), time_width_, cell(e));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
    return;
  }
  const std::vector<std::string> lines = wrap_cell(cell(e), max_column_);
  // A step's operation is its first event; its observations and choices follow it.
  const bool operation = !e.op.starts_with("observe ") && !e.op.starts_with("choose ");
  const auto mark = marks_.find(e.step);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    std::string line;
    if (mark_width_ > 0) {
      line = fmt::format("{:<{}} ", k == 0 && operation && mark != marks_.end() ? mark->second : "", mark_width_);
    }
    // Continuation lines leave the step and the time blank.
    line += k == 0 ? fmt::format("{:>6}  {:<{}}", e.step, time_text(e.time_ns), time_width_)
                   : fmt::format("{:>6}  {:<{}}", "", "", time_width_);
    for (std::size_t a = 0; a < actors_.size(); ++a) {
      line += fmt::format("  {:<{}}", static_cast<std::size_t>(e.actor) == a ? lines[k] : std::string(), width_[a]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
}

void print_interleaving(std::ostream& out, const std::vector<LogEvent>& events, const std::vector<std::string>& actors,
                        std::size_t max_column, const Cause* cause) {
  InterleavingTable table(events, actors, max_column);
  if (cause != nullptr) table.mark_causes(*cause);
  table.header(out);
  for (const auto& e : events) table.row(out, e);
  if (cause != nullptr) print_cause(out, *cause);
}

void print_cause(std::ostream& out, const Cause& cause) {
  if (!cause.computed) {
    out << fmt::format("cause: not computed ({})\n", cause.reason);
    return;
  }
  const auto print_timing = [&] {
    for (const std::string& t : cause.timing) out << fmt::format("  timing: {}\n", t);
  };
  if (cause.pairs.empty()) {
    if (!cause.timing.empty()) {
      out << fmt::format("cause: no reordering of two steps avoids the failure; it depends on timing ({} tried in all):\n",
                         cause.tried);
      print_timing();
      return;
    }
    out << fmt::format("cause: none of the {} reorderings of two steps tried avoids the failure\n", cause.tried);
    return;
  }
  out << fmt::format("cause: the failure depends on {} ordering{} ({} reorderings tried{}):\n", cause.found,
                     cause.found == 1 ? "" : "s", cause.tried,
                     cause.found > cause.pairs.size() ? fmt::format(", the {} latest shown", cause.pairs.size()) : "");
  for (std::size_t k = 0; k < cause.pairs.size(); ++k) {
    const CausePair& p = cause.pairs[k];
    out << fmt::format("  {}. steps {} and {}: {}\n", k + 1, p.first, p.second, p.sentence);
  }
  print_timing();
  if (!cause.complete) out << fmt::format("  (incomplete: {})\n", cause.reason);
}

void print_lasso(std::ostream& out, const std::vector<LogEvent>& events, const std::vector<std::string>& actors,
                 const LassoInfo& lasso, std::size_t max_column, const Cause* cause) {
  std::vector<LogEvent> once;
  for (const LogEvent& e : events) {
    if (e.step < lasso.start + lasso.period) once.push_back(e);
  }
  print_interleaving(out, once, actors, max_column, nullptr);
  out << fmt::format("  ... steps {} to {} repeat: {} times in this trace", lasso.start, lasso.start + lasso.period - 1,
                     lasso.repeats);
  if (lasso.observed > 0) out << fmt::format(", {} times in the execution the search found", lasso.observed);
  out << '\n';
  if (cause) print_cause(out, *cause);
}

}  // namespace lockstep::sim
