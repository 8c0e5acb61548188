// The libpq backend against a real PostgreSQL (a throwaway cluster that CTest starts with
// scripts/pg-throwaway): the facts of docs/postgres.md that need no timing, through
// the same model/pg.h the simulation implements. Skipped, saying why, when
// LOCKSTEP_PG_CONNINFO is unset (no server binaries on this machine).
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "lockstep/real/libpq_backend.h"

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

  std::string conninfo_;
  std::unique_ptr<pg::Pool> pool_;
};

const AdvisoryKey kKey = AdvisoryKey::pair(1, 4242);

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
