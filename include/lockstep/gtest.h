// lockstep/gtest.h: GoogleTest glue for model tests.
//
//   TEST(MyLock, NoLostUpdate) { LOCKSTEP_EXPECT_PASS(my_model()); }
//   TEST(MyLock, FindsThePlantedBug) { LOCKSTEP_EXPECT_VIOLATION(buggy_model(), "no_lost_update"); }
//
// Every verdict has its expectation: LOCKSTEP_EXPECT_LIVENESS(model, "acquire_b") (the
// obligation still hot), LOCKSTEP_EXPECT_LIVELOCK(model, "b") (one of the looping actors),
// LOCKSTEP_EXPECT_DEADLOCK(model), and LOCKSTEP_EXPECT_VERDICT(model, Verdict::KIND, NAME)
// for any (ModelReport::is; NAME "" matches any name).
//
// A failure message carries the verdict, the interleaving as a table, the written trace and
// the command that replays it: LOCKSTEP_REPLAY=TRACE ./test --gtest_filter=Suite.Name.
//
// With LOCKSTEP_PG set, LOCKSTEP_EXPECT_PASS also runs the model on a real PostgreSQL
// (Model::confirm) and expects no violation there either:
//   LOCKSTEP_PG=auto        a throwaway server, started once for the test program and
//                           stopped when it exits (real/throwaway_server.h)
//   LOCKSTEP_PG=<conninfo>  that server (it must let the tests create and drop the schema
//                           `lockstep`)
//   LOCKSTEP_PG_ITERATIONS  iterations per test (default 20)
// A server that cannot be started or reached fails the test, with the reason. LOCKSTEP_PG
// needs the real backend: link lockstep::real and include <lockstep/real.h> in one file.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "lockstep/lockstep.h"
#include "lockstep/real/backend_hook.h"

namespace lockstep::gtest {

// Runs the model with a replay command that names the current test, and a trace file of
// that test's own.
template <typename M>
ModelReport run(M model) {
  if (const auto* info = ::testing::UnitTest::GetInstance()->current_test_info()) {
    const std::string test = std::string(info->test_suite_name()) + "." + info->name();
    std::string hint = "--gtest_filter=" + test;
    if (std::string_view(info->name()).starts_with("DISABLED_") || std::string_view(info->test_suite_name()).starts_with("DISABLED_")) {
      hint += " --gtest_also_run_disabled_tests";
    }
    model.replay_hint(std::move(hint));
    if (model.options().trace_key.empty()) model.trace_key(test);  // one trace per test
  }
  return model.run();
}

// The conninfo LOCKSTEP_PG asks for, or nothing when it is unset or empty. "auto" starts
// one throwaway server for the whole program (ThrowawayError when it cannot).
inline std::optional<std::string> server_from_environment() {
  const char* pg = std::getenv("LOCKSTEP_PG");
  if (pg == nullptr || *pg == '\0') return std::nullopt;
  return real::require_backend("LOCKSTEP_PG").server_from_environment();
}

inline int iterations_from_environment() {
  const char* n = std::getenv("LOCKSTEP_PG_ITERATIONS");
  if (n == nullptr || *n == '\0') return 20;
  const int v = std::atoi(n);
  return v > 0 ? v : 20;
}

// A confirmation run's outcome, described by the real backend.
struct Confirmed {
  bool passed = false;
  std::string described;
};

// The model on the server LOCKSTEP_PG names; nothing when it names none.
template <typename M>
std::optional<Confirmed> confirm_if_asked(const M& model) {
  const auto conninfo = server_from_environment();
  if (!conninfo) return std::nullopt;
  const ConfirmReport report = model.confirm(*conninfo, iterations_from_environment());
  return Confirmed{report.passed(), real::require_backend("LOCKSTEP_PG").describe(report)};
}

}  // namespace lockstep::gtest

#define LOCKSTEP_EXPECT_PASS(model)                                                                  \
  do {                                                                                               \
    const auto lockstep_model_ = (model); /* a copy: `model` may be a builder chain on a temporary */ \
    const ::lockstep::ModelReport lockstep_report_ = ::lockstep::gtest::run(lockstep_model_);        \
    EXPECT_TRUE(lockstep_report_.passed()) << lockstep_report_.describe();                           \
    if (lockstep_report_.passed() && !lockstep_report_.replayed) {                                   \
      try {                                                                                          \
        if (const auto lockstep_real_ = ::lockstep::gtest::confirm_if_asked(lockstep_model_)) {      \
          EXPECT_TRUE(lockstep_real_->passed) << lockstep_real_->described;                          \
          std::cout << lockstep_real_->described;                                                    \
        }                                                                                            \
      } catch (const std::exception& lockstep_error_) {                                              \
        ADD_FAILURE() << "lockstep: LOCKSTEP_PG: " << lockstep_error_.what();                        \
      }                                                                                              \
    }                                                                                                \
  } while (0)

// The model's verdict is `kind` named `name` (ModelReport::is: the invariant, the
// obligation, or one of a livelock's looping actors; "" any). A failure shows the verdict,
// the interleaving, the trace and the command that replays it.
#define LOCKSTEP_EXPECT_VERDICT(model, kind, name)                                                        \
  do {                                                                                                    \
    const ::lockstep::ModelReport lockstep_report_ = ::lockstep::gtest::run(model);                       \
    EXPECT_TRUE(lockstep_report_.is((kind), (name)))                                                      \
        << "expected " << ::lockstep::ModelReport::expectation((kind), (name)) << ", got:\n"              \
        << lockstep_report_.describe();                                                                   \
    std::cout << lockstep_report_.describe();                                                             \
  } while (0)

#define LOCKSTEP_EXPECT_VIOLATION(model, invariant_name) \
  LOCKSTEP_EXPECT_VERDICT(model, ::lockstep::Verdict::violation, invariant_name)
#define LOCKSTEP_EXPECT_LIVENESS(model, obligation) LOCKSTEP_EXPECT_VERDICT(model, ::lockstep::Verdict::liveness, obligation)
#define LOCKSTEP_EXPECT_LIVELOCK(model, looping_actor) \
  LOCKSTEP_EXPECT_VERDICT(model, ::lockstep::Verdict::livelock, looping_actor)
#define LOCKSTEP_EXPECT_DEADLOCK(model) LOCKSTEP_EXPECT_VERDICT(model, ::lockstep::Verdict::deadlock, "")
