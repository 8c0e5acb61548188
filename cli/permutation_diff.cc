#include "lockstep/cli/permutation_diff.h"

#include <sstream>

namespace lockstep::cli {
namespace {

// The step a line of a permutation's output belongs to.
std::string step_of_line(const std::string& output, std::size_t line) {
  std::istringstream in(output);
  std::string l, step = "(before the first step)";
  for (std::size_t n = 1; n <= line && std::getline(in, l); ++n) {
    if (l.rfind("step ", 0) == 0) step = l.substr(5, l.find(':') == std::string::npos ? std::string::npos : l.find(':') - 5);
    if (l.rfind("check ", 0) == 0) step = l.substr(0, l.rfind(':'));
    if (l.rfind("starting permutation:", 0) == 0) step = "(setup)";
  }
  return step;
}

}  // namespace

std::optional<PermutationDifference> first_permutation_difference(const std::string& simulation, const std::string& server) {
  if (simulation == server) return std::nullopt;
  std::istringstream s(simulation), r(server);
  std::string sl, rl;
  for (std::size_t line = 1;; ++line) {
    const bool hs = static_cast<bool>(std::getline(s, sl)), hr = static_cast<bool>(std::getline(r, rl));
    if (!hs || !hr || sl != rl) {
      return PermutationDifference{line, step_of_line(hs ? simulation : server, line), hs ? sl : "(end of output)",
                                   hr ? rl : "(end of output)"};
    }
  }
}

}  // namespace lockstep::cli
