// Model tests of the lease service and the job queue: the correct designs pass, explored
// exhaustively, and each planted bug is found (with LOCKSTEP_PG set, on a real server too).
#include <lockstep/gtest.h>

#include <lockstep/real.h>

#include "model.h"

namespace {

using leases::LeaseConfig;
using leases::QueueConfig;

// LOCKSTEP_EXPECT_PASS, and every execution explored: returns the report for further checks.
template <typename M>
lockstep::ModelReport expect_exhaustive_pass(const M& model) {
  const lockstep::ModelReport report = lockstep::gtest::run(model);
  EXPECT_TRUE(report.passed()) << report.describe();
  EXPECT_TRUE(report.exhaustive) << report.describe();
  std::cout << report.describe();
  if (report.passed() && !report.replayed) {
    if (const auto real = lockstep::gtest::confirm_if_asked(model)) {
      EXPECT_TRUE(real->passed) << real->described;
      std::cout << real->described;
    }
  }
  return report;
}

// Client b's clock runs 150 ms ahead here too: the correct design reads the server's.
TEST(Leases, CorrectServicePasses) {
  const auto report = expect_exhaustive_pass(leases::lease_model(LeaseConfig{}));
  // Some execution had a stalled holder's write refused by the fence.
  EXPECT_GT(report.marks.count("stale_write_refused") ? report.marks.at("stale_write_refused") : 0, 0u) << report.describe();
}

TEST(Leases, ThreeClientsPass) { expect_exhaustive_pass(leases::lease_model(LeaseConfig{.clients = 3, .stall = false})); }

// Both clients read the lease free, both take it with the token they computed: token 1 twice.
TEST(Leases, StaleReadAcquireHandsOutATokenTwice) {
  LOCKSTEP_EXPECT_VIOLATION(leases::lease_model(LeaseConfig{.variant = "stale_read"}), "tokens_increase");
}

// Client b's clock is ahead: it sees a's live lease as expired and takes it over; a's
// renewal, half a TTL in, fails.
TEST(Leases, ClientClockTakesOverALiveLease) {
  LOCKSTEP_EXPECT_VIOLATION(leases::lease_model(LeaseConfig{.variant = "client_clock"}), "renewal_in_time_keeps_lease");
}

// A holder stalls past its lease; the next holder writes; the stalled one's write, without
// the fence, lands on top with the older token.
TEST(Leases, UnfencedWriteGoesBack) {
  LOCKSTEP_EXPECT_VIOLATION(leases::lease_model(LeaseConfig{.variant = "unfenced_write"}), "writes_never_go_back");
}

TEST(Queue, SkipLockedClaimsEachJobOnce) { expect_exhaustive_pass(leases::queue_model(QueueConfig{})); }

TEST(Queue, ThreeWorkersTwoJobs) { expect_exhaustive_pass(leases::queue_model(QueueConfig{.workers = 3, .jobs = 2})); }

// Both workers read job 1 queued; the second UPDATE waits for the first's commit and claims it again.
TEST(Queue, WithoutARowLockTwoWorkersClaimOneJob) {
  LOCKSTEP_EXPECT_VIOLATION(leases::queue_model(QueueConfig{.variant = "no_row_lock"}), "each_job_claimed_once");
}

}  // namespace
