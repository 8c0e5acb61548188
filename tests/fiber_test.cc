// Fibers: switching, finishing, exceptions inside a fiber (each fiber's own caught exceptions), stack reuse.
#include "lockstep/sim/sched/fiber.h"

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace lockstep::sim {
namespace {

struct PingPong {
  Fiber* fiber;
  std::vector<int>* log;
};

TEST(Fiber, ResumeAndSuspendAlternate) {
  Fiber f;
  std::vector<int> log;
  PingPong p{&f, &log};
  f.start([](void* arg) {
    auto* p = static_cast<PingPong*>(arg);
    p->log->push_back(1);
    p->fiber->suspend();
    p->log->push_back(3);
  }, &p);
  EXPECT_FALSE(f.finished());
  f.resume();
  log.push_back(2);
  EXPECT_FALSE(f.finished());
  f.resume();
  EXPECT_TRUE(f.finished());
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3}));
}

TEST(Fiber, ExceptionsUnwindInsideTheFiber) {
  Fiber f;
  std::string caught;
  f.start([](void* arg) {
    auto* caught = static_cast<std::string*>(arg);
    try {
      std::string on_stack = "destroyed during unwinding";
      throw std::runtime_error(on_stack);
    } catch (const std::exception& e) {
      *caught = e.what();
    }
  }, &caught);
  f.resume();
  EXPECT_TRUE(f.finished());
  EXPECT_EQ(caught, "destroyed during unwinding");
}

// Two fibers each suspend inside a catch handler, one after the other; each then rethrows
// (`throw;`) and must get its own exception: the runtime's caught-exception stack is
// per thread, so a fiber switch keeps each fiber's (SqlSimProperties found a session's refusal
// rethrown as another session's error).
struct Rethrow {
  Fiber* fiber;
  std::string message;
  std::string rethrown;
};

TEST(Fiber, AFiberSwitchedInsideACatchHandlerRethrowsItsOwnException) {
  Fiber a, b;
  Rethrow ra{&a, "a's error", ""}, rb{&b, "b's error", ""};
  const auto body = [](void* arg) {
    auto* r = static_cast<Rethrow*>(arg);
    try {
      try {
        throw std::runtime_error(r->message);
      } catch (const std::exception&) {
        r->fiber->suspend();  // another fiber runs, and catches its own, meanwhile
        throw;
      }
    } catch (const std::exception& e) {
      r->rethrown = e.what();
    }
  };
  a.start(body, &ra);
  b.start(body, &rb);
  a.resume();  // a in its handler
  b.resume();  // b in its handler
  a.resume();  // a rethrows
  b.resume();
  EXPECT_TRUE(a.finished() && b.finished());
  EXPECT_EQ(ra.rethrown, "a's error");
  EXPECT_EQ(rb.rethrown, "b's error");
  EXPECT_EQ(std::uncaught_exceptions(), 0);
}

TEST(Fiber, StackIsReusedAcrossStarts) {
  Fiber f;
  int runs = 0;
  for (int i = 0; i < 1000; ++i) {
    f.start([](void* arg) { ++*static_cast<int*>(arg); }, &runs);
    f.resume();
    ASSERT_TRUE(f.finished());
  }
  EXPECT_EQ(runs, 1000);
}

TEST(Fiber, DeepRecursionFitsTheDefaultStack) {
  Fiber f;
  struct Ctx {
    static int depth(int n) {
      volatile char pad[256];
      pad[0] = static_cast<char>(n);
      return n == 0 ? pad[0] : 1 + depth(n - 1);
    }
    int result = 0;
  } ctx;
  f.start([](void* arg) { static_cast<Ctx*>(arg)->result = Ctx::depth(500); }, &ctx);
  f.resume();
  EXPECT_EQ(ctx.result, 500);
}

}  // namespace
}  // namespace lockstep::sim
