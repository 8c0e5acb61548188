// The release strings, from the build (model/CMakeLists.txt reads them from libpq's pg_config.h).
#include "lockstep/model/sql/server_version.h"

namespace lockstep::sql {

std::string_view server_version() { return LOCKSTEP_PG_VERSION; }
std::string_view server_version_num() { return LOCKSTEP_PG_VERSION_NUM; }
std::string_view server_version_text() { return LOCKSTEP_PG_VERSION_STR; }

}  // namespace lockstep::sql
