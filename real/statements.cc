#include "lockstep/real/statements.h"

#include <cstdlib>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace lockstep::real::sql {
namespace {

// f($n::int8) or f($n::int4, $n+1::int4), by the key's form, its values appended to params.
std::string key_call(const std::string& function, pg::AdvisoryKey key, std::vector<std::string>& params) {
  const std::size_t n = params.size() + 1;
  if (key.objsubid() == 1) {
    params.push_back(std::to_string(static_cast<std::int64_t>((static_cast<std::uint64_t>(key.classid()) << 32) | key.objid())));
    return fmt::format("{}(${}::int8)", function, n);
  }
  params.push_back(std::to_string(static_cast<std::int32_t>(key.classid())));
  params.push_back(std::to_string(static_cast<std::int32_t>(key.objid())));
  return fmt::format("{}(${}::int4, ${}::int4)", function, n, n + 1);
}

// SELECT f($1::int8) or SELECT f($1::int4, $2::int4).
Statement call(const std::string& function, pg::AdvisoryKey key) {
  Statement st{"SELECT ", {}};
  st.text += key_call(function, key, st.params);
  return st;
}

}  // namespace

std::string to_json(const pg::Row& row) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : row) j[k] = v;
  return j.dump();
}

std::string qualified(std::string_view quoted_table) { return fmt::format("{}.{}", kSchema, quoted_table); }
Statement create_schema() { return {fmt::format("CREATE SCHEMA IF NOT EXISTS {}", kSchema), {}}; }
Statement create_table(std::string_view quoted_table) {
  return {fmt::format("CREATE TABLE IF NOT EXISTS {} (id int8 PRIMARY KEY, data jsonb NOT NULL)", qualified(quoted_table)), {}};
}
Statement drop_schema() { return {fmt::format("DROP SCHEMA IF EXISTS {} CASCADE", kSchema), {}}; }

Statement set(std::string_view setting, std::string value) {
  return {"SELECT set_config($1, $2, false)", {std::string(setting), std::move(value)}};
}

Statement statement(pg::Stmt s, const Args& a) {
  using pg::Stmt;
  const std::string id = std::to_string(a.id);
  auto timeout = [&](std::string_view setting) {
    return set(setting, fmt::format("{}ms", std::chrono::duration_cast<std::chrono::milliseconds>(a.timeout).count()));
  };
  switch (s) {
    case Stmt::advisory_lock:
    case Stmt::advisory_lock_shared:
    case Stmt::try_advisory_lock:
    case Stmt::try_advisory_lock_shared:
    case Stmt::advisory_unlock:
    case Stmt::advisory_unlock_shared:
    case Stmt::advisory_xact_lock:
    case Stmt::advisory_xact_lock_shared:
    case Stmt::try_advisory_xact_lock:
    case Stmt::try_advisory_xact_lock_shared:
      return call(std::string(pg::info(s).sql), a.key);
    case Stmt::advisory_lock_timed:
    case Stmt::advisory_lock_timed_shared: {  // the setting first: the lock waits under it
      Statement st{"SELECT set_config('lock_timeout', $1, false), ",
                   {fmt::format("{}ms", std::chrono::duration_cast<std::chrono::milliseconds>(a.timeout).count())}};
      st.text += key_call(std::string(pg::info(s).sql), a.key, st.params);
      return st;
    }
    case Stmt::advisory_unlock_all: return {"SELECT pg_advisory_unlock_all()", {}};
    case Stmt::set_lock_timeout: return timeout("lock_timeout");
    case Stmt::set_statement_timeout: return timeout("statement_timeout");
    case Stmt::read_row: return {fmt::format("SELECT data FROM {} WHERE id = $1", qualified(a.quoted_table)), {id}};
    case Stmt::insert_row: {
      pg::Row row = a.values;
      row["id"] = id;  // the Row carries its id, as the simulation's does
      return {fmt::format("INSERT INTO {} (id, data) VALUES ($1, $2::jsonb)", qualified(a.quoted_table)), {id, to_json(row)}};
    }
    case Stmt::insert_row_if_absent: {
      pg::Row row = a.values;
      row["id"] = id;
      return {fmt::format("WITH i AS (INSERT INTO {} (id, data) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO NOTHING RETURNING 1) "
                          "SELECT count(*) = 1 FROM i",
                          qualified(a.quoted_table)),
              {id, to_json(row)}};
    }
    case Stmt::update_row_if:
      return {fmt::format("UPDATE {} SET data = data || $2::jsonb WHERE id = $1 AND data->>$3 = $4", qualified(a.quoted_table)),
              {id, to_json(a.values), std::string(a.column), std::string(a.expected)}};
    case Stmt::select_for_update_skip_locked:
      return {fmt::format("SELECT data FROM {} WHERE id = $1 FOR UPDATE SKIP LOCKED", qualified(a.quoted_table)), {id}};
    case Stmt::select_for_share:
      return {fmt::format("SELECT data FROM {} WHERE id = $1 FOR SHARE", qualified(a.quoted_table)), {id}};
    case Stmt::update_row:
      return {fmt::format("UPDATE {} SET data = data || $2::jsonb WHERE id = $1", qualified(a.quoted_table)), {id, to_json(a.values)}};
    case Stmt::select_for_update:
      return {fmt::format("SELECT data FROM {} WHERE id = $1 FOR UPDATE", qualified(a.quoted_table)), {id}};
    case Stmt::select_for_update_nowait:
      return {fmt::format("SELECT data FROM {} WHERE id = $1 FOR UPDATE NOWAIT", qualified(a.quoted_table)), {id}};
    case Stmt::begin: return {"BEGIN", {}};
    case Stmt::commit: return {"COMMIT", {}};
    case Stmt::rollback: return {"ROLLBACK", {}};
    case Stmt::pg_locks: return advisory_locks();
    case Stmt::pg_terminate_backend: return {"SELECT pg_terminate_backend($1::int4)", {std::to_string(a.pid)}};
    case Stmt::sql:  // its own text (conform sends it as written)
    case Stmt::close: break;
  }
  throw std::logic_error(fmt::format("no SQL for statement {}", pg::name(s)));
}

Statement advisory_locks() {
  return {"SELECT l.pid, coalesce(a.application_name, ''), coalesce(a.state, ''),"
          " (extract(epoch FROM a.query_start) * 1000)::int8, l.classid, l.objid, l.objsubid, l.mode, l.granted,"
          " (extract(epoch FROM now() - a.query_start) * 1000)::int8"
          " FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
          " WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())"
          " ORDER BY l.pid, l.classid, l.objid, l.objsubid, l.mode",
          {}};
}

std::optional<pg::Error> error_of(PGconn* conn, const PGresult* r) {
  const ExecStatusType st = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
  if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) return std::nullopt;
  const char* code = r ? PQresultErrorField(r, PG_DIAG_SQLSTATE) : nullptr;
  const char* message = r ? PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY) : nullptr;
  if (code == nullptr) return pg::Error{std::string(pg::sqlstate::kConnectionFailure), PQerrorMessage(conn)};
  return pg::Error{code, message ? message : ""};
}

std::optional<pg::Error> warning_of(const PGresult* r) {
  const char* severity = PQresultErrorField(r, PG_DIAG_SEVERITY_NONLOCALIZED);
  if (severity == nullptr || std::string_view(severity) != "WARNING") return std::nullopt;
  const char* code = PQresultErrorField(r, PG_DIAG_SQLSTATE);
  const char* message = PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY);
  return pg::Error{code ? code : "01000", message ? message : ""};
}

bool read_bool(const PGresult* r) { return std::string_view(PQgetvalue(r, 0, 0)) == "t"; }
int read_count(const PGresult* r) { return std::atoi(PQcmdTuples(const_cast<PGresult*>(r))); }

pg::Rows read_rows(const PGresult* r) {
  pg::Rows out;
  const int columns = PQnfields(r);
  for (int c = 0; c < columns; ++c) out.columns.emplace_back(PQfname(r, c));
  for (int row = 0; row < PQntuples(r); ++row) {
    std::vector<std::optional<std::string>> values;
    for (int c = 0; c < columns; ++c) {
      if (PQgetisnull(r, row, c)) {
        values.emplace_back(std::nullopt);
      } else {
        values.emplace_back(std::string(PQgetvalue(r, row, c), static_cast<std::size_t>(PQgetlength(r, row, c))));
      }
    }
    out.rows.push_back(std::move(values));
  }
  out.tag = PQcmdStatus(const_cast<PGresult*>(r));
  return out;
}

std::optional<pg::Row> read_row_result(const PGresult* r) {
  if (PQntuples(r) == 0) return std::nullopt;
  pg::Row row;
  const nlohmann::json data = nlohmann::json::parse(PQgetvalue(r, 0, 0));
  for (auto it = data.begin(); it != data.end(); ++it) row[it.key()] = it.value().get<std::string>();
  return row;
}

std::vector<pg::AdvisoryLockRow> read_lock_rows(const PGresult* res) {
  std::vector<pg::AdvisoryLockRow> rows;
  for (int i = 0; i < PQntuples(res); ++i) {
    auto text = [&](int c) { return std::string(PQgetvalue(res, i, c)); };
    pg::AdvisoryLockRow row;
    row.pid = std::stoi(text(0));
    row.application_name = text(1);
    row.state = text(2);
    row.query_start = std::chrono::milliseconds(PQgetisnull(res, i, 3) ? 0 : std::stoll(text(3)));
    row.classid = static_cast<std::uint32_t>(std::stoul(text(4)));
    row.objid = static_cast<std::uint32_t>(std::stoul(text(5)));
    row.objsubid = static_cast<std::uint16_t>(std::stoi(text(6)));
    row.mode = text(7);
    row.granted = text(8) == "t";
    row.duration = std::chrono::milliseconds(PQgetisnull(res, i, 9) ? 0 : std::stoll(text(9)));
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace lockstep::real::sql
