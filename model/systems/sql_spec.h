// model/systems/sql_spec.h: the `sql` system: a PostgreSQL isolation spec (model/sql/spec.h)
// run as a scenario. Each session is an actor with a connection of its own, running its
// setup, its steps in order and its teardown; a step that fails (a deadlock, a lock
// timeout, a unique violation) is not a verdict, the session goes on, as isolationtester
// does. The spec's setup runs before the sessions, on a connection of its own; its checks
// run after them, each a violation named by the check when it is not true (false, NULL or
// an error). A .spec file is read as a scenario of this system (load_scenario).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "lockstep/model/sql/spec.h"
#include "lockstep/model/system.h"

namespace lockstep::sql_spec {

SystemInfo system_info();

// The scenario document of a spec file: system "sql", the spec's text in config.spec, its
// expect as the scenario's. Throws InputError as load_spec does.
nlohmann::json scenario_document(const std::string& path);

}  // namespace lockstep::sql_spec
