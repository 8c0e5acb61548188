// sim/pg/server/sql_log.cc: how an SQL statement and its outcome read in the event log (sim/pg/server/sql_log.h).
#include "lockstep/sim/pg/server/sql_log.h"
#include "lockstep/sim/pg/executor/sql_run.h"

namespace lockstep::sim::pg {

// A statement as the event log shows it on its first step: [UPDATE t SET v = 1 WHERE id = 1].
std::string sql_log_text(std::string_view sql) {
  constexpr std::size_t kMaxSql = 100;
  std::string text;
  for (const char c : sql) {  // one line, single spaces
    const bool space = c == ' ' || c == '\n' || c == '\t' || c == '\r';
    if (space && (text.empty() || text.back() == ' ')) continue;
    text += space ? ' ' : c;
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == ';')) text.pop_back();
  if (text.size() > kMaxSql) text = text.substr(0, kMaxSql - 3) + "...";
  return "[" + text + "]";
}

// Its outcome, on its last step: UPDATE 1, SELECT 2: (1, 90), (2, 110), ERROR 40P01.
std::string sql_outcome_text(const Result<Rows>& r) {
  constexpr std::size_t kMaxRows = 4;
  if (!r.ok()) return "ERROR " + r.error().sqlstate;
  const Rows& rows = r.value();
  std::string out = rows.tag;
  if (rows.columns.empty()) return out;
  if (rows.tag.empty()) out += rows.size() == 1 ? "1 row" : fmt::format("{} rows", rows.size());
  for (std::size_t i = 0; i < rows.size() && i < kMaxRows; ++i) {
    std::string cells;
    for (const auto& cell : rows.rows[i]) cells += fmt::format("{}{}", cells.empty() ? "" : ", ", cell.value_or("NULL"));
    out += fmt::format("{}({})", i == 0 ? ": " : ", ", cells);
  }
  if (rows.size() > kMaxRows) out += ", ...";
  return out;
}

}  // namespace lockstep::sim::pg
