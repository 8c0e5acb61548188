// lockstep/pg.h: PostgreSQL for your lock service: pools (SQLAlchemy QueuePool),
// connections, advisory locks, row statements and transactions, with the SQLSTATEs a real
// server gives. The simulated server (exploration) and libpq (a real server) both implement
// it; the interface and its guarantees are in lockstep/model/pg.h.
#pragma once

#include "lockstep/model/env.h"
#include "lockstep/model/pg.h"
