// Fibers: switching, finishing, exceptions inside a fiber, stack reuse.
#include "lockstep/sim/sched/fiber.h"

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
