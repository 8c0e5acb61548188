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
// With LOCKSTEP_PG set, the model also runs on a real PostgreSQL (Model::confirm):
// LOCKSTEP_EXPECT_PASS expects no violation there either; the other expectations run it
// along the failing trace's order of steps (real/schedule_gate.h) until the server shows the
// same failure (a violation of that invariant, that obligation still hot, or for no
// progress an iteration still running after LOCKSTEP_PG_HANG_SECONDS, default 10; its
// looping actors are unwound, blocked ones left). Not seen, the test fails, or with
// LOCKSTEP_PG_UNSEEN=report the miss is printed and the test passes.
//   LOCKSTEP_PG=auto        a throwaway server, started once for the test program and
//                           stopped when it exits (real/throwaway_server.h)
//   LOCKSTEP_PG=<conninfo>  that server (it must let the tests create and drop the schema
//                           `lockstep`)
//   LOCKSTEP_PG_ITERATIONS  iterations per test (default 20)
// A server that cannot be started or reached fails the test, with the reason. LOCKSTEP_PG
// needs the real backend: link lockstep::real and include <lockstep/real.h> in one file.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
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

// What to do with an expected failure the server did not show: LOCKSTEP_PG_UNSEEN "fail"
// (the default) fails the test, "report" prints it and lets the test pass. Another value
// throws std::invalid_argument naming the variable.
inline bool unseen_fails() {
  const char* v = std::getenv("LOCKSTEP_PG_UNSEEN");
  if (v == nullptr || *v == '\0' || std::string_view(v) == "fail") return true;
  if (std::string_view(v) == "report") return false;
  throw std::invalid_argument(std::string("LOCKSTEP_PG_UNSEEN must be fail or report, not \"") + v + "\"");
}

// How long an iteration on the server may run before it counts as making no progress (the
// server's form of a liveness, livelock or deadlock verdict): LOCKSTEP_PG_HANG_SECONDS,
// default 10.
inline Duration hang_limit_from_environment() {
  const char* n = std::getenv("LOCKSTEP_PG_HANG_SECONDS");
  const int v = n == nullptr || *n == '\0' ? 10 : std::atoi(n);
  return std::chrono::seconds(v > 0 ? v : 10);
}

// Under LOCKSTEP_PG, the failure the simulation found (`report`, verdict `kind` named
// `name`) on the server: the model runs there along the failing trace's order (its actors
// take their steps at their turn), at most LOCKSTEP_PG_ITERATIONS times, until it shows. Not seen,
// it fails the test at file:line, or is printed as not seen under LOCKSTEP_PG_UNSEEN=report;
// never passed in silence. Nothing without LOCKSTEP_PG.
template <typename M>
void expect_on_server(const M& model, const ModelReport& report, Verdict kind, std::string_view name, const char* file,
                      int line) {
  try {
    const auto conninfo = server_from_environment();
    if (!conninfo) return;
    const bool fail = unseen_fails();
    const std::string expected = ModelReport::expectation(kind, name);
    const auto unseen = [&](const std::string& why) {
      const std::string text = "lockstep: LOCKSTEP_PG: " + expected + " not seen on the server: " + why;
      if (fail) {
        ADD_FAILURE_AT(file, line) << text << "\n(LOCKSTEP_PG_UNSEEN=report reports it without failing)";
      } else {
        std::cout << text << " (reported, not failed: LOCKSTEP_PG_UNSEEN=report)\n";
      }
    };
    if (report.phantom_grant) {
      unseen("its failing trace takes the simulated server's phantom grant (PostgreSQL Bug #17686), which confirm's "
             "iterations cannot aim at (real::run_phantom_rounds repeats the race that gives one)");
      return;
    }
    ConfirmOptions o;
    o.conninfo = *conninfo;
    o.iterations = iterations_from_environment();
    o.until_violation = true;
    // Another violation (a timing a loaded machine shows first) does not end the hunt.
    if (kind == Verdict::violation || kind == Verdict::liveness) o.until_invariant = std::string(name);
    o.aim = report.order;
    if (kind != Verdict::violation) o.iteration_limit = hang_limit_from_environment();
    const ConfirmReport r = model.confirm(o);
    const std::string described = real::require_backend("LOCKSTEP_PG").describe(r);
    if (r.lost) {
      ADD_FAILURE_AT(file, line) << "lockstep: LOCKSTEP_PG: the server was lost:\n" << described;
    } else if (real::shows(r, kind, name)) {
      std::cout << "lockstep: LOCKSTEP_PG: " << expected << " seen on the server (aimed at the failing trace)\n" << described;
    } else {
      unseen("in " + std::to_string(r.iterations) + " iterations aimed at the failing trace (LOCKSTEP_PG_ITERATIONS)\n" +
             described);
    }
  } catch (const std::exception& e) {
    ADD_FAILURE_AT(file, line) << "lockstep: LOCKSTEP_PG: " << e.what();
  }
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
// Under LOCKSTEP_PG, a verdict found is then sought on the server (expect_on_server).
#define LOCKSTEP_EXPECT_VERDICT(model, kind, name)                                                        \
  do {                                                                                                    \
    const auto lockstep_model_ = (model); /* a copy: `model` may be a builder chain on a temporary */    \
    const ::lockstep::ModelReport lockstep_report_ = ::lockstep::gtest::run(lockstep_model_);             \
    const bool lockstep_found_ = lockstep_report_.is((kind), (name));                                     \
    EXPECT_TRUE(lockstep_found_) << "expected " << ::lockstep::ModelReport::expectation((kind), (name))   \
                                 << ", got:\n"                                                            \
                                 << lockstep_report_.describe();                                          \
    std::cout << lockstep_report_.describe();                                                             \
    if (lockstep_found_ && !lockstep_report_.replayed && (kind) != ::lockstep::Verdict::pass) {            \
      ::lockstep::gtest::expect_on_server(lockstep_model_, lockstep_report_, (kind), (name), __FILE__, __LINE__); \
    }                                                                                                     \
  } while (0)

#define LOCKSTEP_EXPECT_VIOLATION(model, invariant_name) \
  LOCKSTEP_EXPECT_VERDICT(model, ::lockstep::Verdict::violation, invariant_name)
#define LOCKSTEP_EXPECT_LIVENESS(model, obligation) LOCKSTEP_EXPECT_VERDICT(model, ::lockstep::Verdict::liveness, obligation)
#define LOCKSTEP_EXPECT_LIVELOCK(model, looping_actor) \
  LOCKSTEP_EXPECT_VERDICT(model, ::lockstep::Verdict::livelock, looping_actor)
#define LOCKSTEP_EXPECT_DEADLOCK(model) LOCKSTEP_EXPECT_VERDICT(model, ::lockstep::Verdict::deadlock, "")
