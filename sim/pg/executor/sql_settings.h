// sim/pg/executor/sql_settings.h: the settings a session's SET changes, as SET reads them and
// SHOW and current_setting print them (sim/pg/executor/sql_settings.cc). Guarantees: a name
// no modelled setting has is refused by the parser before these run.
#pragma once

#include <string>
#include <string_view>

#include "lockstep/sim/pg/server/connection.h"

namespace lockstep::sim::pg {

// The session's default_transaction_isolation as SHOW prints it ("read committed" unless SET,
// or SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL, changed it).
std::string default_isolation_name(const SimConnection& c);
// A value of default_transaction_isolation in lower case ("" stays: the default); throws the
// server's 22023 for another level, 0A000 for read uncommitted.
std::string isolation_level_value(const std::string& value);
// The timeout a setting names (model/sql/functions.h's kSettings); another is refused.
SimConnection::Timeout timeout_named(std::string_view name);
// The planner switch a setting names (its bit), or -1.
int planner_switch_named(std::string_view name);
// A Boolean setting's value as the server's parse_bool reads it.
bool setting_bool(const std::string& name, const std::string& text);

}  // namespace lockstep::sim::pg
