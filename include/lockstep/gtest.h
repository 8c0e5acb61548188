// lockstep/gtest.h: GoogleTest glue for model tests.
//
//   TEST(MyLock, NoLostUpdate) { LOCKSTEP_EXPECT_PASS(my_model()); }
//   TEST(MyLock, FindsThePlantedBug) { LOCKSTEP_EXPECT_VIOLATION(buggy_model(), "no_lost_update"); }
//
// A failure message carries the verdict, the interleaving as a table, the written trace and
// the command that replays it: LOCKSTEP_REPLAY=TRACE ./test --gtest_filter=Suite.Name.
#pragma once

#include <gtest/gtest.h>

#include <iostream>
#include <string>

#include "lockstep/lockstep.h"

namespace lockstep::gtest {

// Runs the model with a replay command that names the current test.
template <typename M>
ModelReport run(M model) {
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    model.replay_hint(std::string("--gtest_filter=") + info->test_suite_name() + "." + info->name());
  }
  return model.run();
}

}  // namespace lockstep::gtest

#define LOCKSTEP_EXPECT_PASS(model)                                                    \
  do {                                                                                 \
    const ::lockstep::ModelReport lockstep_report_ = ::lockstep::gtest::run(model);    \
    EXPECT_TRUE(lockstep_report_.passed()) << lockstep_report_.describe();             \
  } while (0)

#define LOCKSTEP_EXPECT_VIOLATION(model, invariant_name)                                            \
  do {                                                                                              \
    const ::lockstep::ModelReport lockstep_report_ = ::lockstep::gtest::run(model);                 \
    EXPECT_TRUE(lockstep_report_.verdict == ::lockstep::Verdict::violation &&                       \
                lockstep_report_.invariant == (invariant_name))                                     \
        << "expected violation of " << (invariant_name) << ", got:\n" << lockstep_report_.describe(); \
    std::cout << lockstep_report_.describe();                                                       \
  } while (0)
