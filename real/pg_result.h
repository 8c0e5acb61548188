// real/pg_result.h: a libpq result that clears itself (PQclear), for the files of real/
// that talk to libpq directly. PgResult owns one result; PgResultDeleter also serves a
// std::shared_ptr<PGresult> where a result is shared.
#pragma once

#include <memory>

#include <libpq-fe.h>

namespace lockstep::real {

struct PgResultDeleter {
  void operator()(PGresult* r) const { PQclear(r); }
};
using PgResult = std::unique_ptr<PGresult, PgResultDeleter>;

}  // namespace lockstep::real
