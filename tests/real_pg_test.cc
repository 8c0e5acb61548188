// The libpq backend against a real PostgreSQL (a throwaway cluster that CTest starts with
// scripts/pg-throwaway): the facts of docs/postgres.md that need no timing, through
// the same model/pg.h the simulation implements. Skipped, saying why, when
// LOCKSTEP_PG_CONNINFO is unset (no server binaries on this machine).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include "lockstep/real/libpq_backend.h"
#include "lockstep/real/table_lock_view.h"
#include "test_support.h"

namespace lockstep {
namespace {

using pg::AdvisoryKey;
using pg::LockMode;

class RealPg : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* conninfo = std::getenv("LOCKSTEP_PG_CONNINFO");
    if (conninfo == nullptr) GTEST_SKIP() << "LOCKSTEP_PG_CONNINFO is not set: no throwaway PostgreSQL on this machine";
    conninfo_ = conninfo;
    pool_ = real::make_libpq_pool(conninfo_, pg::PoolConfig{.application_name = "lockstep-test", .pool_size = 4, .max_overflow = 2});
  }
  pg::PooledConnection conn() {
    auto c = pool_->checkout();
    EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
    return std::move(c).value();
  }

  // Two sessions taking turns on the server, on tables made by `setup` and dropped after.
  std::string taken_turns(const std::vector<std::string>& setup, const char* tables,
                          std::string (*turns)(pg::Connection&, pg::Connection&)) {
    auto a = conn();
    auto b = conn();
    (void)b->exec(fmt::format("DROP TABLE IF EXISTS {}", tables));
    for (const std::string& sql : setup) {
      if (!b->exec(sql).ok()) return "setup failed: " + sql;
    }
    std::string got = turns(*a, *b);
    (void)b->exec(fmt::format("DROP TABLE {}", tables));
    return got;
  }

  std::string conninfo_;
  std::unique_ptr<pg::Pool> pool_;
};

const AdvisoryKey kKey = AdvisoryKey::pair(1, 4242);

// `locks --pg`'s table view: a session's lock on the team's table by its name, and a row-lock
// waiter with its tuple lock and the session it waits for.
TEST_F(RealPg, TheTableLockViewNamesTablesAndRowLockWaits) {
  auto a = conn();
  auto b = conn();
  auto view = conn();
  (void)b->exec("DROP TABLE IF EXISTS lock_view_t");
  ASSERT_TRUE(b->exec("CREATE TABLE lock_view_t (id int PRIMARY KEY, v int)").ok());
  ASSERT_TRUE(b->exec("INSERT INTO lock_view_t VALUES (1, 0)").ok());
  ASSERT_TRUE(a->begin().ok());
  ASSERT_TRUE(a->exec("SELECT v FROM lock_view_t WHERE id = 1 FOR UPDATE").ok());
  const int a_pid = std::stoi(a->exec("SELECT pg_backend_pid()").value().rows[0][0].value());
  auto has = [&](const std::vector<real::TableLockRow>& rows, int pid, const std::string& table, const std::string& mode, bool granted) {
    return std::any_of(rows.begin(), rows.end(), [&](const real::TableLockRow& r) {
      return r.pid == pid && r.table == table && r.mode == mode && r.granted == granted;
    });
  };
  const auto held = real::table_locks(*view);
  ASSERT_TRUE(held.ok()) << held.error().message;
  EXPECT_TRUE(has(held.value(), a_pid, "lock_view_t", "RowShareLock", true));
  // b's UPDATE waits for a's row lock: its tuple lock, granted, and its wait for a's transaction.
  auto waiter = real::connect(conninfo_);
  ASSERT_TRUE(waiter.ok());
  auto* raw = waiter.value().get();
  const int w_pid = std::stoi(raw->exec("SELECT pg_backend_pid()").value().rows[0][0].value());
  std::thread t([raw] { (void)raw->exec("UPDATE lock_view_t SET v = 1 WHERE id = 1"); });
  std::vector<real::TableLockRow> rows;
  for (int i = 0; i < 500 && !has(rows, w_pid, "", "ShareLock", false); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    rows = real::table_locks(*view).value();
  }
  EXPECT_TRUE(has(rows, w_pid, "lock_view_t", "ExclusiveLock", true));  // the tuple lock
  const auto wait = std::find_if(rows.begin(), rows.end(), [&](const real::TableLockRow& r) { return r.pid == w_pid && !r.granted; });
  ASSERT_NE(wait, rows.end());
  EXPECT_EQ(wait->locktype, "transactionid");
  EXPECT_EQ(wait->blocked_by, std::to_string(a_pid));
  ASSERT_TRUE(a->rollback().ok());
  t.join();
  (void)b->exec("DROP TABLE lock_view_t");
}

TEST_F(RealPg, SessionLocksAreReentrantAndAnUnlockNotHeldWarns) {
  auto a = conn();
  ASSERT_TRUE(a->advisory_lock(kKey, LockMode::exclusive).ok());
  EXPECT_TRUE(a->try_advisory_lock(kKey, LockMode::exclusive).value());
  EXPECT_TRUE(a->advisory_unlock(kKey, LockMode::exclusive).value());
  EXPECT_TRUE(a->advisory_unlock(kKey, LockMode::exclusive).value());
  EXPECT_FALSE(a->advisory_unlock(kKey, LockMode::exclusive).value());
  const auto warnings = a->take_warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0].sqlstate, "01000");
  EXPECT_EQ(warnings[0].message, "you don't own a lock of type ExclusiveLock");
}

TEST_F(RealPg, AnotherSessionIsRefusedAndTheLockSurvivesRollback) {
  auto a = conn();
  auto b = conn();
  ASSERT_TRUE(a->begin().ok());
  ASSERT_TRUE(a->advisory_lock(kKey, LockMode::exclusive).ok());
  ASSERT_TRUE(a->rollback().ok());
  EXPECT_FALSE(b->try_advisory_lock(kKey, LockMode::exclusive).value());
  EXPECT_FALSE(b->try_advisory_lock(kKey, LockMode::shared).value());
  ASSERT_TRUE(a->advisory_unlock_all().ok());
  EXPECT_TRUE(b->try_advisory_lock(kKey, LockMode::shared).value());
  ASSERT_TRUE(b->advisory_unlock_all().ok());
}

TEST_F(RealPg, PgLocksShowsBothKeyFormsAsTheSimulationDoes) {
  auto a = conn();
  ASSERT_TRUE(a->advisory_lock(AdvisoryKey::single(-2), LockMode::exclusive).ok());
  ASSERT_TRUE(a->advisory_lock(AdvisoryKey::pair(-7, 42), LockMode::shared).ok());
  auto rows = a->advisory_locks().value();
  ASSERT_EQ(rows.size(), 2u);
  // Ordered by classid: the pair's -7 (4294967289) before the bigint's high half (4294967295).
  EXPECT_EQ(rows[0].classid, 4294967289u);
  EXPECT_EQ(rows[0].objid, 42u);
  EXPECT_EQ(rows[0].objsubid, 2);
  EXPECT_EQ(rows[0].mode, "ShareLock");
  EXPECT_EQ(rows[1].classid, 4294967295u);
  EXPECT_EQ(rows[1].objid, 4294967294u);
  EXPECT_EQ(rows[1].objsubid, 1);
  EXPECT_EQ(rows[1].mode, "ExclusiveLock");
  EXPECT_TRUE(rows[1].granted);
  EXPECT_EQ(rows[1].pid, a->backend_pid());
  EXPECT_EQ(rows[1].application_name, "lockstep-test");
  EXPECT_EQ(rows[1].state, "active");  // the querying session is running the query
  ASSERT_TRUE(a->advisory_unlock_all().ok());
}

TEST_F(RealPg, TheSameKeyOfTheSimulationIsTheServersKey) {
  // AdvisoryKey::single(k) and pg_advisory_lock(k) name the same lock.
  auto a = conn();
  auto b = conn();
  const auto k = AdvisoryKey::single((std::int64_t{5} << 32) | 9);
  ASSERT_TRUE(a->advisory_lock(k, LockMode::exclusive).ok());
  auto rows = b->advisory_locks().value();
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].classid, 5u);
  EXPECT_EQ(rows[0].objid, 9u);
  EXPECT_EQ(rows[0].state, "idle");
  ASSERT_TRUE(a->advisory_unlock_all().ok());
}

TEST_F(RealPg, TerminateBackendReleasesTheVictimsLocks) {
  auto a = conn();
  auto b = conn();
  ASSERT_TRUE(a->advisory_lock(kKey, LockMode::exclusive).ok());
  EXPECT_TRUE(b->terminate_backend(a->backend_pid()).value());
  // The victim's backend exits on its own time: wait for its lock to go (bounded).
  bool free = false;
  for (int i = 0; i < 2000 && !free; ++i) free = b->try_advisory_lock(kKey, LockMode::exclusive).value();
  EXPECT_TRUE(free);
  const auto next = a->try_advisory_lock(kKey, LockMode::exclusive);
  ASSERT_FALSE(next.ok());
  EXPECT_TRUE(next.error().sqlstate == "57P01" || next.error().sqlstate == "08006") << next.error().sqlstate;
  ASSERT_TRUE(b->advisory_unlock_all().ok());
  EXPECT_FALSE(b->terminate_backend(999999).value());
  EXPECT_EQ(b->take_warnings().size(), 1u);  // "PID 999999 is not a PostgreSQL backend process"
}

// Connection::exec on the server: the same statements and the same results, errors and
// messages as SqlSim.ErrorsAreTheServers and the row statements of tests/sql_sim_test.cc give
// on the simulated server.
TEST_F(RealPg, ExecRunsSqlAsWrittenWithTheServersErrors) {
  auto c = conn();
  auto shown = [&](const std::string& sql, const std::vector<pg::Param>& params = {}) {
    return lockstep::testing::shown(c->exec(sql, params));
  };
  (void)c->exec("DROP TABLE IF EXISTS lockstep_exec_t");
  EXPECT_EQ(shown("CREATE TABLE lockstep_exec_t (id int PRIMARY KEY, v varchar(3) NOT NULL, n int NOT NULL DEFAULT 0)"),
            "CREATE TABLE");
  EXPECT_EQ(shown("INSERT INTO lockstep_exec_t VALUES (1, NULL)"),
            "ERROR 23502: null value in column \"v\" of relation \"lockstep_exec_t\" violates not-null constraint");
  EXPECT_EQ(shown("INSERT INTO lockstep_exec_t VALUES (1, 'long')"), "ERROR 22001: value too long for type character varying(3)");
  EXPECT_EQ(shown("INSERT INTO lockstep_exec_t VALUES ('x', 'a')"), "ERROR 22P02: invalid input syntax for type integer: \"x\"");
  EXPECT_EQ(shown("SELECT nope FROM lockstep_exec_t"), "ERROR 42703: column \"nope\" does not exist");
  EXPECT_EQ(shown("SELECT * FROM lockstep_exec_missing"), "ERROR 42P01: relation \"lockstep_exec_missing\" does not exist");
  EXPECT_EQ(shown("INSERT INTO lockstep_exec_t (id, v) VALUES (1, 'a'), (2, 'b') RETURNING id, n"), "INSERT 0 2 [1,0;2,0]");
  EXPECT_EQ(shown("INSERT INTO lockstep_exec_t (id, v) VALUES (1, 'c')"),
            "ERROR 23505: duplicate key value violates unique constraint \"lockstep_exec_t_pkey\"");
  EXPECT_EQ(shown("INSERT INTO lockstep_exec_t (id, v) VALUES (1, 'c') ON CONFLICT DO NOTHING"), "INSERT 0 0");
  EXPECT_EQ(shown("INSERT INTO lockstep_exec_t (id, v) VALUES (1, 'c') ON CONFLICT (id) DO UPDATE SET n = lockstep_exec_t.n + 5 "
                  "RETURNING v, n"),
            "INSERT 0 1 [a,5]");
  EXPECT_EQ(shown("UPDATE lockstep_exec_t SET n = n + 1 WHERE id = $1 AND v = $2 RETURNING n", {"2", "b"}), "UPDATE 1 [1]");
  EXPECT_EQ(shown("SELECT count(*), max(n), min(v), sum(n) FROM lockstep_exec_t"), "SELECT 1 [2,5,a,6]");
  EXPECT_EQ(shown("SELECT id, n > 1 AS big, n * interval '1 ms' AS d FROM lockstep_exec_t ORDER BY id DESC"),
            "SELECT 2 [2,f,00:00:00.001;1,t,00:00:00.005]");
  EXPECT_EQ(shown("BEGIN"), "BEGIN");
  EXPECT_EQ(shown("SELECT 1 / 0"), "ERROR 22012: division by zero");
  EXPECT_EQ(shown("SELECT 1"), "ERROR 25P02: current transaction is aborted, commands ignored until end of transaction block");
  EXPECT_EQ(shown("COMMIT"), "ROLLBACK");
  EXPECT_EQ(shown("DELETE FROM lockstep_exec_t WHERE id = 1 RETURNING id"), "DELETE 1 [1]");
  EXPECT_EQ(shown("DROP TABLE lockstep_exec_t"), "DROP TABLE");
}

// Settings and prepared statements on the server: what SqlSim.SettingsAndPreparedStatementsAreTheServers
// (tests/sql_sim_test.cc) gives on the simulated server.
TEST_F(RealPg, SettingsAndPreparedStatementsAreTheServers) {
  auto c = conn();
  EXPECT_EQ(testing::run_setting_statements(*c), testing::kSettingOutcomes);
}

TEST_F(RealPg, RepeatableReadIsTheServers) {
  EXPECT_EQ(taken_turns(testing::kRepeatableReadSetup, "rr_t", testing::run_repeatable_read_turns), testing::kRepeatableReadOutcomes);
}

TEST_F(RealPg, UniqueKeysAreTheServers) {
  EXPECT_EQ(taken_turns(testing::kUniqueSetup, "u, v", testing::run_unique_turns), testing::kUniqueOutcomes);
}

TEST(RealPgConninfo, APasswordIsNeverShown) {
  EXPECT_EQ(real::redact_conninfo("host=x password=s3cret user=u"), "host=x password=*** user=u");
  EXPECT_EQ(real::redact_conninfo("host=x password='a b' user=u"), "host=x password=*** user=u");
  EXPECT_EQ(real::redact_conninfo("postgresql://u:s3cret@host/db"), "postgresql://u:***@host/db");
  const auto r = real::connect("host=/nonexistent-dir port=1 password=s3cret connect_timeout=1");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().sqlstate, "08006");
  EXPECT_EQ(r.error().message.find("s3cret"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace lockstep
