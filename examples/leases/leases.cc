#include "leases.h"

#include <chrono>
#include <stdexcept>
#include <vector>

namespace leases {

using lockstep::pg::Connection;
using lockstep::pg::Param;
using lockstep::pg::Rows;

namespace {

// Runs one statement; a server error is not part of the design: ModelError with the statement.
Rows run(Connection& conn, std::string_view sql, const std::vector<Param>& params = {}) {
  auto result = conn.exec(sql, params);
  if (!result.ok()) {
    throw lockstep::ModelError(std::string(sql) + ": " + result.error().sqlstate + " " + result.error().message);
  }
  return std::move(result).value();
}

// A duration as an interval's text: "100 milliseconds", or microseconds when finer.
std::string interval(lockstep::Duration d) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(d).count();
  if (us % 1000 == 0) return std::to_string(us / 1000) + " milliseconds";
  return std::to_string(us) + " microseconds";
}

std::string str(std::string_view s) { return std::string(s); }

// The correct acquire: one statement, the server decides on its own clock.
std::optional<std::int64_t> acquire_in_one_statement(Connection& conn, std::string_view name, std::string_view holder,
                                                     const LeaseOptions& o) {
  const Rows r = run(conn,
                     "UPDATE leases SET holder = $1, token = token + 1, expires_at = now() + $2::interval "
                     "WHERE name = $3 AND (holder IS NULL OR expires_at < now()) RETURNING token",
                     {str(holder), interval(o.ttl), str(name)});
  if (r.empty()) return std::nullopt;
  return r.int64(0, "token");
}

// Planted bug: the expiry test on the client's clock.
std::optional<std::int64_t> acquire_on_client_clock(Connection& conn, std::string_view name, std::string_view holder,
                                                    const LeaseOptions& o) {
  if (!o.client_clock) throw std::invalid_argument("leases: the client_clock variant needs LeaseOptions::client_clock");
  const Rows r = run(conn,
                     "UPDATE leases SET holder = $1, token = token + 1, expires_at = now() + $2::interval "
                     "WHERE name = $3 AND (holder IS NULL OR expires_at < $4::timestamptz) RETURNING token",
                     {str(holder), interval(o.ttl), str(name), lockstep::pg::timestamptz_text(o.client_clock())});
  if (r.empty()) return std::nullopt;
  return r.int64(0, "token");
}

// Planted bug: read, decide on the client, write by name without checking again.
std::optional<std::int64_t> acquire_after_reading(Connection& conn, std::string_view name, std::string_view holder,
                                                  const LeaseOptions& o) {
  const Rows seen = run(conn, "SELECT holder, token, expires_at < now() AS expired FROM leases WHERE name = $1", {str(name)});
  if (seen.empty()) return std::nullopt;
  const bool free = seen.is_null(0, "holder") || (!seen.is_null(0, "expired") && seen.boolean(0, "expired"));
  if (!free) return std::nullopt;
  const std::int64_t token = seen.int64(0, "token") + 1;
  const Rows r = run(conn, "UPDATE leases SET holder = $1, token = $2, expires_at = now() + $3::interval WHERE name = $4",
                     {str(holder), std::to_string(token), interval(o.ttl), str(name)});
  if (r.affected() != 1) return std::nullopt;
  return token;
}

}  // namespace

LeaseVariant lease_variant(std::string_view name) {
  if (name == "correct") return LeaseVariant::correct;
  if (name == "stale_read") return LeaseVariant::stale_read;
  if (name == "client_clock") return LeaseVariant::client_clock;
  if (name == "unfenced_write") return LeaseVariant::unfenced_write;
  throw std::invalid_argument("leases: unknown lease variant " + str(name));
}

void create_lease_schema(Connection& conn, const std::vector<std::string>& names) {
  run(conn, "DROP TABLE IF EXISTS leases");
  run(conn, "DROP TABLE IF EXISTS resource");
  run(conn, "CREATE TABLE leases (name text PRIMARY KEY, holder text, token bigint NOT NULL DEFAULT 0, expires_at timestamptz)");
  run(conn, "CREATE TABLE resource (id int PRIMARY KEY, value text, last_token bigint NOT NULL DEFAULT 0)");
  for (const std::string& name : names) run(conn, "INSERT INTO leases (name) VALUES ($1)", {name});
  run(conn, "INSERT INTO resource (id) VALUES (1)");
}

std::optional<std::int64_t> acquire(Connection& conn, std::string_view name, std::string_view holder, const LeaseOptions& options) {
  switch (options.variant) {
    case LeaseVariant::stale_read: return acquire_after_reading(conn, name, holder, options);
    case LeaseVariant::client_clock: return acquire_on_client_clock(conn, name, holder, options);
    case LeaseVariant::correct:
    case LeaseVariant::unfenced_write: break;
  }
  return acquire_in_one_statement(conn, name, holder, options);
}

bool renew(Connection& conn, std::string_view name, std::string_view holder, std::int64_t token, const LeaseOptions& options) {
  const Rows r = run(conn,
                     "UPDATE leases SET expires_at = now() + $1::interval "
                     "WHERE name = $2 AND holder = $3 AND token = $4 AND expires_at >= now()",
                     {interval(options.ttl), str(name), str(holder), std::to_string(token)});
  return r.affected() == 1;
}

bool release(Connection& conn, std::string_view name, std::string_view holder, std::int64_t token) {
  const Rows r = run(conn, "UPDATE leases SET holder = NULL, expires_at = NULL WHERE name = $1 AND holder = $2 AND token = $3",
                     {str(name), str(holder), std::to_string(token)});
  return r.affected() == 1;
}

bool fenced_write(Connection& conn, std::int64_t token, std::string_view value, const LeaseOptions& options) {
  const char* sql = options.variant == LeaseVariant::unfenced_write
                        ? "UPDATE resource SET value = $1, last_token = $2 WHERE id = 1"
                        : "UPDATE resource SET value = $1, last_token = $2 WHERE id = 1 AND last_token <= $2";
  return run(conn, sql, {str(value), std::to_string(token)}).affected() == 1;
}

QueueVariant queue_variant(std::string_view name) {
  if (name == "skip_locked") return QueueVariant::skip_locked;
  if (name == "no_row_lock") return QueueVariant::no_row_lock;
  throw std::invalid_argument("leases: unknown queue variant " + str(name));
}

void create_queue_schema(Connection& conn, int jobs) {
  run(conn, "DROP TABLE IF EXISTS jobs");
  run(conn, "CREATE TABLE jobs (id int PRIMARY KEY, status text NOT NULL, worker text)");
  for (int id = 1; id <= jobs; ++id) run(conn, "INSERT INTO jobs (id, status) VALUES ($1, 'queued')", {std::to_string(id)});
}

std::optional<std::int64_t> claim_job(Connection& conn, std::string_view worker, QueueVariant variant) {
  const char* pick = variant == QueueVariant::skip_locked
                         ? "SELECT id FROM jobs WHERE status = 'queued' ORDER BY id FOR UPDATE SKIP LOCKED LIMIT 1"
                         : "SELECT id FROM jobs WHERE status = 'queued' ORDER BY id LIMIT 1";
  run(conn, "BEGIN");
  const Rows picked = run(conn, pick);
  if (picked.empty()) {
    run(conn, "COMMIT");
    return std::nullopt;
  }
  const std::int64_t id = picked.int64(0, "id");
  run(conn, "UPDATE jobs SET status = 'running', worker = $1 WHERE id = $2", {str(worker), std::to_string(id)});
  run(conn, "COMMIT");
  return id;
}

}  // namespace leases
