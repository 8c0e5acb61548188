// Model tests of the job queue: the correct design passes, every execution explored (and, with
// LOCKSTEP_PG set, on a real server too); each planted bug is found, and under LOCKSTEP_PG
// seen on the server along its failing trace.
#include <lockstep/gtest.h>

#include <lockstep/real.h>

#include "model.h"

namespace {

using jobqueue::Config;

TEST(JobQueue, CorrectDesignPasses) {
  const auto report = lockstep::gtest::run(jobqueue::model(Config{}));
  EXPECT_TRUE(report.passed() && report.exhaustive) << report.describe();
  EXPECT_GT(report.marks.count("stale_worker_fenced") ? report.marks.at("stale_worker_fenced") : 0, 0u) << report.describe();
  std::cout << report.describe();
  if (const auto real = report.passed() ? lockstep::gtest::confirm_if_asked(jobqueue::model(Config{})) : std::nullopt) {
    EXPECT_TRUE(real->passed) << real->described;
    std::cout << real->described;
  }
}

// Both workers read job 1 available; the second UPDATE by id waits for the first and takes it again.
TEST(JobQueue, ClaimWithoutSkipLockedTakesAJobTwice) {
  LOCKSTEP_EXPECT_VIOLATION(jobqueue::model(Config{.variant = "no_skip_locked", .stall = false}), "claimed_once_per_attempt");
}

// Worker a stalls; its job is put back and completed by b; a wakes and completes it again.
TEST(JobQueue, CompleteByIdLetsAStaleWorkerCompleteTwice) {
  LOCKSTEP_EXPECT_VIOLATION(jobqueue::model(Config{.variant = "complete_by_id"}), "completed_once");
}

// A transaction-scoped lock taken in autocommit ends with its statement: both rescuers lead.
TEST(JobQueue, ATransactionLockElectsTwoRescuers) {
  LOCKSTEP_EXPECT_VIOLATION(jobqueue::model(Config{.variant = "xact_leader", .stall = false}), "one_rescuer");
}

}  // namespace
