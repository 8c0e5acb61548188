// model/systems/script.h: the `script` system: small concurrent programs given as data.
// See script_program.h for the operation language.
#pragma once

#include "lockstep/model/system.h"

namespace lockstep::script {

SystemInfo system_info();

}  // namespace lockstep::script
