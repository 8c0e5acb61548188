// The list of systems, explicit rather than by static registration, so that linking a
// static library can never silently drop one.
#include "model/system.h"
#include "model/dal/system.h"
#include "model/headspace/system.h"
#include "model/phase_lock/system.h"
#include "model/supervisor/system.h"
#include "model/systems/bench.h"
#include "model/systems/script.h"

namespace lockstep {

const std::vector<SystemInfo>& registered_systems() {
  static const std::vector<SystemInfo> systems = {script::system_info(), bench::system_info(), headspace::system_info(), phase_lock::system_info(),
                                                    supervisor::system_info(), dal::system_info()};
  return systems;
}

}  // namespace lockstep
