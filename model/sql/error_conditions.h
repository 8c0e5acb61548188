// model/sql/error_conditions.h: PL/pgSQL's exception condition names (EXCEPTION WHEN
// unique_violation, WHEN SQLSTATE '55P03', WHEN others) and how a handler's condition matches
// an error, as PostgreSQL's plerrcodes.h and pl_exec.c's exception_matches_conditions have it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace lockstep::sql {

// The SQLSTATE of a condition name (lower case), "others" for OTHERS; nullopt for a name
// PostgreSQL's list has that this one lacks (the caller refuses it).
std::optional<std::string> condition_sqlstate(std::string_view name);

// Whether a handler's condition (a SQLSTATE, a class's ending in 000, or "others") catches an
// error of `sqlstate`. OTHERS catches neither query_canceled nor assert_failure.
bool condition_matches(std::string_view condition, std::string_view sqlstate);

}  // namespace lockstep::sql
