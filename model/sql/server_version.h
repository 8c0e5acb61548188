// model/sql/server_version.h: the PostgreSQL release the simulated server reports, as
// version(), SHOW server_version and current_setting('server_version_num') give it.
// lockstep models PostgreSQL 15: the release is the one whose libpq headers lockstep was
// built with when those are 15's (Debian 12 builds libpq and the server from one source
// package, so they name the server installed beside them), else Debian 12's 15.18.
#pragma once

#include <string_view>

namespace lockstep::sql {

std::string_view server_version();      // "15.18 (Debian 15.18-0+deb12u1)"
std::string_view server_version_num();  // "150018"
std::string_view server_version_text(); // version(): "PostgreSQL 15.18 (...) on x86_64-pc-linux-gnu, compiled by ..., 64-bit"

}  // namespace lockstep::sql
