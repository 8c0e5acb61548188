#include "lockstep/sim/explore/symmetry.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

namespace lockstep::sim {

std::string symmetry_declaration_error(const std::vector<std::vector<ActorId>>& classes, int actor_count) {
  std::vector<bool> seen(static_cast<std::size_t>(std::max(actor_count, 0)), false);
  for (std::size_t k = 0; k < classes.size(); ++k) {
    if (classes[k].size() < 2) return fmt::format("symmetric class {} has {} actor(s); a class needs two or more", k, classes[k].size());
    for (const ActorId a : classes[k]) {
      if (a < 0 || a >= actor_count) return fmt::format("symmetric class {} names actor {}, not one of the {} actors", k, a, actor_count);
      if (seen[a]) return fmt::format("actor {} is in two symmetric classes, or twice in one", a);
      seen[a] = true;
    }
  }
  return {};
}

bool add_symmetry_object(Footprint& fp, ObjectId object) {
  if (fp.symmetry_extra) return fp.extra[fp.extra_count - 1] == object;
  if (fp.extra_count == kMaxExtraObjects) return false;
  fp.extra[fp.extra_count++] = object;
  fp.symmetry_extra = true;
  return true;
}

}  // namespace lockstep::sim
