// real/table_lock_view.h: the locks of a server's own tables as pg_locks shows them, for
// `lockstep locks --pg`: each session's relation locks on ordinary tables (by name), the
// tuple locks of row-lock waiters, and waits for another transaction (with the sessions
// blocking them, pg_blocking_pids). Row locks that nobody waits for live in the rows
// themselves, not in pg_locks: a session holding FOR UPDATE shows its table's RowShareLock.
#pragma once

#include <string>
#include <vector>

#include "lockstep/model/pg.h"

namespace lockstep::real {

struct TableLockRow {
  int pid = 0;
  std::string application_name;
  std::string state;
  std::string table;     // schema-qualified unless in public; "" for a transaction wait
  std::string locktype;  // relation, tuple, transactionid
  std::string mode;      // AccessShareLock ... AccessExclusiveLock, ShareLock, ExclusiveLock
  bool granted = false;
  std::string blocked_by;  // pids, comma-separated, for a lock not granted
};

// The rows, by pid, then table, then lock type; the caller's own session left out.
pg::Result<std::vector<TableLockRow>> table_locks(pg::Connection& conn);

}  // namespace lockstep::real
