#include "jobqueue.h"

#include <stdexcept>
#include <string>

namespace jobqueue {

using lockstep::pg::Connection;
using lockstep::pg::Rows;

namespace {

constexpr std::int64_t kRescuerLock = 4242;

lockstep::pg::Param p(std::int64_t v) { return std::to_string(v); }

Rows run(Connection& conn, std::string_view sql, const std::vector<lockstep::pg::Param>& params = {}) {
  auto r = conn.exec(sql, params);
  if (!r.ok()) throw lockstep::ModelError("jobqueue: " + std::string(sql.substr(0, 40)) + "...: " + r.error().message);
  return std::move(r).value();
}

}  // namespace

Variant variant(std::string_view name) {
  if (name == "correct") return Variant::correct;
  if (name == "no_skip_locked") return Variant::no_skip_locked;
  if (name == "complete_by_id") return Variant::complete_by_id;
  if (name == "xact_leader") return Variant::xact_leader;
  throw std::invalid_argument("unknown jobqueue variant: " + std::string(name));
}

void create_schema(Connection& conn, int jobs) {
  run(conn, "DROP TABLE IF EXISTS jobs");
  run(conn,
      "CREATE TABLE jobs (id bigint PRIMARY KEY, state text NOT NULL DEFAULT 'available' CHECK (state IN ('available', "
      "'running', 'completed')), worker text, attempt bigint NOT NULL DEFAULT 0, heartbeat_at timestamptz)");
  run(conn, "INSERT INTO jobs (id) SELECT generate_series(1, $1::int)", {p(jobs)});
}

std::optional<Claim> claim(Connection& conn, std::string_view worker, Variant v) {
  Rows r;
  if (v == Variant::no_skip_locked) {
    const Rows free = run(conn, "SELECT id FROM jobs WHERE state = 'available' ORDER BY id LIMIT 1");
    if (free.empty()) return std::nullopt;
    r = run(conn,
            "UPDATE jobs SET state = 'running', worker = $1, attempt = attempt + 1, heartbeat_at = now() WHERE id = $2 "
            "RETURNING id, attempt",
            {std::string(worker), p(free.int64(0, "id"))});
  } else {
    r = run(conn,
            "UPDATE jobs SET state = 'running', worker = $1, attempt = attempt + 1, heartbeat_at = now() WHERE id = (SELECT id "
            "FROM jobs WHERE state = 'available' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING id, attempt",
            {std::string(worker)});
  }
  if (r.empty()) return std::nullopt;
  return Claim{r.int64(0, "id"), r.int64(0, "attempt")};
}

bool heartbeat(Connection& conn, const Claim& c) {
  return run(conn, "UPDATE jobs SET heartbeat_at = now() WHERE id = $1 AND attempt = $2 AND state = 'running'", {p(c.job), p(c.attempt)})
             .affected() == 1;
}

bool complete(Connection& conn, const Claim& c, Variant v) {
  if (v == Variant::complete_by_id) return run(conn, "UPDATE jobs SET state = 'completed' WHERE id = $1", {p(c.job)}).affected() == 1;
  return run(conn, "UPDATE jobs SET state = 'completed' WHERE id = $1 AND attempt = $2 AND state = 'running'", {p(c.job), p(c.attempt)})
             .affected() == 1;
}

bool try_lead(Connection& conn, Variant v) {
  const char* sql = v == Variant::xact_leader ? "SELECT pg_try_advisory_xact_lock($1) AS led" : "SELECT pg_try_advisory_lock($1) AS led";
  return run(conn, sql, {p(kRescuerLock)}).boolean(0, "led");
}

void resign(Connection& conn, Variant v) {
  if (v != Variant::xact_leader) run(conn, "SELECT pg_advisory_unlock($1)", {p(kRescuerLock)});
}

std::int64_t rescue(Connection& conn, std::int64_t stale_ms) {
  return run(conn,
             "UPDATE jobs SET state = 'available', worker = NULL WHERE state = 'running' AND heartbeat_at < now() - "
             "make_interval(secs => $1::bigint / 1000.0)",
             {p(stale_ms)})
      .affected();
}

}  // namespace jobqueue
