#include "lockstep/real/table_lock_view.h"

namespace lockstep::real {

pg::Result<std::vector<TableLockRow>> table_locks(pg::Connection& conn) {
  const auto r = conn.exec(
      "SELECT l.pid, coalesce(a.application_name, ''), coalesce(a.state, ''), "
      "       coalesce(CASE WHEN n.nspname = 'public' THEN c.relname ELSE n.nspname || '.' || c.relname END, ''), "
      "       l.locktype, l.mode, l.granted, "
      "       CASE WHEN l.granted THEN '' ELSE array_to_string(pg_blocking_pids(l.pid), ',') END "
      "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
      "LEFT JOIN pg_class c ON c.oid = l.relation LEFT JOIN pg_namespace n ON n.oid = c.relnamespace "
      "WHERE l.pid <> pg_backend_pid() AND ("
      "  (l.locktype = 'relation' AND c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')) "
      "  OR l.locktype = 'tuple' OR (l.locktype = 'transactionid' AND NOT l.granted)) "
      "ORDER BY l.pid, 4, l.locktype, l.mode");
  if (!r.ok()) return r.error();
  std::vector<TableLockRow> out;
  for (const auto& row : r.value().rows) {
    auto text = [&](std::size_t i) { return row[i].value_or(""); };
    out.push_back({std::stoi(text(0)), text(1), text(2), text(3), text(4), text(5), text(6) == "t", text(7)});
  }
  return out;
}

}  // namespace lockstep::real
