#include "lockstep/model/env.h"

#include "lockstep/model/pg.h"

namespace lockstep {

std::unique_ptr<pg::Pool> Env::new_pg_pool(const pg::PoolConfig& /*config*/) {
  throw ModelError("this Env has no PostgreSQL backend");
}

}  // namespace lockstep
