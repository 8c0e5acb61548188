// How long cause analysis (sim/explain/cause.h) takes on each golden trace: a figure for the
// closing note and docs/cause.md, not a test. Usage: cause_timing [TRACE...] (default: every
// trace under the source tree's traces/). Prints one Markdown row per trace.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <vector>

#include <fmt/format.h>

#include "lockstep/sim/check.h"

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  std::vector<std::string> traces;
  for (int i = 1; i < argc; ++i) traces.emplace_back(argv[i]);
  if (traces.empty()) {
    for (const auto& e : fs::recursive_directory_iterator(std::string(LOCKSTEP_SOURCE_DIR) + "/traces")) {
      if (e.is_regular_file() && e.path().extension() == ".json") traces.push_back(e.path().string());
    }
    std::sort(traces.begin(), traces.end());
  }
  std::cout << "| trace | steps | reorderings tried | pairs found | ms (best of 3) |\n|---|---:|---:|---:|---:|\n";
  for (const auto& path : traces) {
    try {
      const lockstep::sim::Trace t = lockstep::sim::load_trace(path);
      if (!is_failure(t.verdict)) continue;
      double best = 1e18;
      lockstep::sim::Cause c;
      for (int k = 0; k < 3; ++k) {
        const auto start = std::chrono::steady_clock::now();
        c = lockstep::sim::trace_cause(t, path);
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
      }
      const std::uint64_t steps = t.events.empty() ? 0 : t.events.back().step + 1;
      std::cout << fmt::format("| {} | {} | {} | {} | {:.1f} |\n", fs::relative(path, LOCKSTEP_SOURCE_DIR).string(), steps,
                               c.tried, c.computed ? std::to_string(c.found) : "not computed", best);
    } catch (const std::exception& e) {
      std::cout << fmt::format("| {} | error: {} | | | |\n", path, e.what());
    }
  }
}
