// cli/permutation_diff.h: where two runs of one isolation permutation part ways, for
// `isolation --diff` and `confirm --force`: the first line of output that differs and the
// step it belongs to (the last "step NAME:" line before it; "(setup)" before the first step;
// a check's line names its check).
#pragma once

#include <optional>
#include <string>

namespace lockstep::cli {

struct PermutationDifference {
  std::size_t line = 0;  // 1-based
  std::string step;      // the step (or check) that printed it
  std::string simulation, server;  // the two lines ("(end of output)" past the end)
};

// nullopt when the two outputs are equal.
std::optional<PermutationDifference> first_permutation_difference(const std::string& simulation, const std::string& server);

}  // namespace lockstep::cli
