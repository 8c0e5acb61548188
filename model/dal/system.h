// model/dal/system.h: the `dal` system (seed 002): DAL lease locks in a database table
// (model/dal/lock_manager.h) over the simulated PostgreSQL, with writers, readers, an
// upgrader, a stale-lock recovery sweeper and jobs over several resources, on the virtual
// clock. Modelled: the three lock types and their compatibility, atomic upgrade, leases,
// heartbeats, recovery with its three tests and its audit row, the global acquisition order
// (project, map, sketch, each lexicographic), bounded retries with exponential backoff and
// the job caps; section 5.1's ten-step write of files under the write lock, with crashes and
// recovery (model/dal/write_protocol.h; actors file_writer, file_reader, fault crash). Left
// out: SQLite's WAL semantics (the locks live in the simulated PostgreSQL table), metadata
// contents, multi-node routing. The protected resource of the lock actors is one data row per
// lock, written inside a transaction.
//
// Ordered observations: only "granted" and "wrote", scoped per lock row (single_writer
// compares a write's epoch with the latest grant of its lock). The others are facts whose
// verdict does not depend on any order (a violation as soon as seen, a count, or unread).
#pragma once

#include "lockstep/model/system.h"

namespace lockstep::dal {

const SystemInfo& system_info();

}  // namespace lockstep::dal
