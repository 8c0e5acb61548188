// The timing model through the C++ API (model/timing.h; issue 48): durations as ranges and
// the points inside them where two deadlines compare differently, clocks skewed, stalls
// before statements and statement latency, each shown on a lease.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lockstep/lockstep.h"
#include "lockstep/model/timing.h"
#include "lockstep/sim/explain/trace.h"
#include "scratch_dir.h"

namespace {

using lockstep::ActorId;
using lockstep::Env;

// Runs a model and prints its figures for the notes (the tests assert behaviour, not time).
template <class M>
lockstep::ModelReport run_and_print(const std::string& what, const M& model) {
  const auto start = std::chrono::steady_clock::now();
  auto r = model.run();
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::cout << what << ": " << lockstep::verdict_name(r.verdict) << (r.invariant.empty() ? "" : " " + r.invariant) << ", "
            << r.executions << " executions (" << r.redundant << " sleep-set blocked), " << ms << " ms\n";
  return r;
}

std::string temp_dir(const char* name) { return lockstep::testing::scratch_dir(name); }

// The timing model (model/timing.h; issue 48, in part): durations as ranges, clocks skewed.
struct LeaseUnits {
  explicit LeaseUnits(Env& env) : expiry_us(env.new_shared_var("expiry_us", 0)) {}
  std::unique_ptr<lockstep::SharedVar> expiry_us;  // 0: free
};

std::int64_t now_ms(Env& env) { return std::chrono::duration_cast<std::chrono::milliseconds>(env.now()).count(); }

// a holds a 100 ms lease for 40 ms; b polls every 50 ms and takes the lease once it is free
// or expired. The bug: a writes the expiry in milliseconds where b compares microseconds.
lockstep::Model<LeaseUnits> lease_units(bool units_bug, lockstep::Timing timing) {
  return lockstep::Model<LeaseUnits>(units_bug ? "lease-units-bug" : "lease-units")
      .actors(2,
              [units_bug](LeaseUnits& s, Env& env, ActorId self) {
                if (self == 0) {
                  const std::int64_t expiry_ms = now_ms(env) + 100;
                  s.expiry_us->store(units_bug ? expiry_ms : expiry_ms * 1000);
                  env.observe(lockstep::Event::scoped("enter", 1, 0));
                  env.sleep_for(std::chrono::milliseconds(40));
                  env.observe(lockstep::Event::scoped("leave", 1, 0));
                  s.expiry_us->store(0);
                  return;
                }
                for (int poll = 0; poll < 3; ++poll) {
                  env.sleep_for(std::chrono::milliseconds(50));
                  const std::int64_t expiry = s.expiry_us->load();
                  if (expiry == 0 || now_ms(env) * 1000 > expiry) {
                    env.observe(lockstep::Event::scoped("enter", 1, 1));
                    env.observe(lockstep::Event::scoped("leave", 1, 1));
                    return;
                  }
                }
              })
      .at_most_one_holder("one_holder")
      .timed()
      .timing(timing)
      .trace_dir(temp_dir("timing-lease"));
}

TEST(Timing, AUnitsBugPassesAsWrittenAndFailsWithJitter) {
  const auto as_written = run_and_print("units bug, as written", lease_units(true, {}));
  EXPECT_TRUE(as_written.passed() && as_written.exhaustive) << as_written.describe();
  const auto jittered = run_and_print("units bug, jitter 0.5", lease_units(true, {.jitter = 0.5}));
  ASSERT_TRUE(jittered.is(lockstep::Verdict::violation, "one_holder")) << jittered.describe();
  const auto trace = lockstep::sim::load_trace(*jittered.trace_path);
  EXPECT_EQ(trace.run.timing.jitter, 0.5);  // recorded, so that a replay draws the same timings
  EXPECT_TRUE(lockstep::replay(lease_units(true, {.jitter = 0.5}), *jittered.trace_path).is(lockstep::Verdict::violation,
                                                                                             "one_holder"));
  // The correct units pass under every timing explored.
  (void)run_and_print("correct units, as written", lease_units(false, {}));
  const auto correct = run_and_print("correct units, jitter 0.5, skew 20 ms", lease_units(false, {.jitter = 0.5, .skew_ms = 20}));
  EXPECT_TRUE(correct.passed() && correct.exhaustive) << correct.describe();
  EXPECT_GT(correct.executions, as_written.executions);
}

TEST(Timing, EachActorsClockIsBehindAsWrittenOrAhead) {
  struct Clock {
    explicit Clock(Env&) {}
    std::int64_t seen_ms = 0;
  };
  const auto r = lockstep::Model<Clock>("skewed-clock")
                     .actor("a", [](Clock& s, Env& env, ActorId) { s.seen_ms = now_ms(env); })
                     .mark("behind", [](Clock& s) { return s.seen_ms == -30; })
                     .mark("ahead", [](Clock& s) { return s.seen_ms == 30; })
                     .mark("as_written", [](Clock& s) { return s.seen_ms == 0; })
                     .timed()
                     .timing({.skew_ms = 30})
                     .trace_dir(temp_dir("timing-clock"))
                     .run();
  ASSERT_TRUE(r.passed()) << r.describe();
  EXPECT_EQ(r.executions, 3u);
  EXPECT_EQ(r.marks.at("behind"), 1u);
  EXPECT_EQ(r.marks.at("ahead"), 1u);
  EXPECT_EQ(r.marks.at("as_written"), 1u);
  EXPECT_THROW((void)lockstep::Model<Clock>("untimed").actor("a", [](Clock&, Env&, ActorId) {}).timing({.jitter = 0.1}).run(),
               lockstep::InputError);
}

// A lease with fencing tokens on the simulated PostgreSQL: a takes the 100 ms lease at 0 and
// writes the resource; b takes the lease over at 150 ms, once it has expired, and writes.
// Unfenced, a write that arrives after b's lands on top: a stall before it is all it takes.
struct FencedLease {
  explicit FencedLease(Env& env)
      : a(env.new_pg_pool(lockstep::pg::PoolConfig{.application_name = "a", .pool_size = 1})),
        b(env.new_pg_pool(lockstep::pg::PoolConfig{.application_name = "b", .pool_size = 1})) {
    auto c = a->checkout().value();
    for (const char* sql : {"CREATE TABLE lease (id int PRIMARY KEY, holder text, expires bigint, token bigint)",
                            "INSERT INTO lease VALUES (1, '', 0, 0)",
                            "CREATE TABLE resource (id int PRIMARY KEY, value text, token bigint)",
                            "INSERT INTO resource VALUES (1, '', 0)"}) {
      (void)c->exec(sql).value();
    }
  }
  std::unique_ptr<lockstep::pg::Pool> a, b;
  std::int64_t newest_written = 0;
};

lockstep::Model<FencedLease> fenced_lease(bool fenced, lockstep::Timing timing) {
  return lockstep::Model<FencedLease>(fenced ? "fenced-lease" : "unfenced-lease")
      .actors(2,
              [fenced](FencedLease& s, Env& env, ActorId self) {
                if (self == 1) env.sleep_for(std::chrono::milliseconds(150));
                auto c = (self == 0 ? s.a : s.b)->checkout().value();
                const std::string me = self == 0 ? "a" : "b";
                const std::string now = std::to_string(now_ms(env));
                const auto got = c->exec("UPDATE lease SET holder = $1, expires = $2 + 100, token = token + 1 WHERE id = 1 "
                                         "AND (holder = '' OR expires < $2) RETURNING token",
                                         {me, now})
                                     .value();
                if (got.empty()) return;
                const std::string token = got.text(0, "token");
                const auto wrote = c->exec(fenced ? "UPDATE resource SET value = $1, token = $2 WHERE id = 1 AND token < $2"
                                                  : "UPDATE resource SET value = $1, token = $2 WHERE id = 1",
                                           {me, token})
                                       .value();
                if (wrote.affected() == 1) s.newest_written = std::max<std::int64_t>(s.newest_written, std::stoll(token));
              })
      .invariant("writes_never_go_back",
                 [](FencedLease& s) -> std::optional<std::string> {
                   auto c = s.a->checkout().value();
                   const std::int64_t last = c->exec("SELECT token FROM resource WHERE id = 1").value().int64(0, "token");
                   if (last == s.newest_written) return std::nullopt;
                   return "the resource holds token " + std::to_string(last) + " after token " +
                          std::to_string(s.newest_written) + " wrote";
                 })
      .timed()
      .timing(timing)
      .trace_dir(temp_dir("timing-fenced"));
}

TEST(Timing, AnUnfencedLeaseFailsWithOneDeclaredStallAndAFencedOnePasses) {
  EXPECT_TRUE(run_and_print("unfenced lease, as written", fenced_lease(false, {})).passed());  // a writes at once
  const auto stalled = run_and_print("unfenced lease, 1 stall of 200 ms", fenced_lease(false, {.stalls = 1, .stall_ms = 200}));
  ASSERT_TRUE(stalled.is(lockstep::Verdict::violation, "writes_never_go_back")) << stalled.describe();
  EXPECT_NE(stalled.interleaving.find("stall"), std::string::npos) << stalled.interleaving;
  // Its cause is the stall: without it, the execution passes.
  const auto cause = nlohmann::json::parse(std::ifstream(*stalled.trace_path)).at("cause");
  const std::string why = cause.value("timing", nlohmann::json::array()).dump();
  EXPECT_NE(why.find("without that stall, the execution passes"), std::string::npos) << cause.dump();
  for (const lockstep::Timing t :
       {lockstep::Timing{}, lockstep::Timing{.stalls = 1, .stall_ms = 200}, lockstep::Timing{.jitter = 0.5, .skew_ms = 60},
        lockstep::Timing{.stalls = 2, .stall_ms = 200, .statement_low = std::chrono::microseconds(100),
                         .statement_high = std::chrono::milliseconds(1)}}) {
    const auto r = run_and_print("fenced lease, " + lockstep::timing_coverage(t), fenced_lease(true, t));
    EXPECT_TRUE(r.passed() && r.exhaustive) << lockstep::timing_coverage(t) << "\n" << r.describe();
  }
}

// The whole timing model at once on the fenced lease: jittered durations, skewed clocks, a
// stall and statement latency together. Every one of them is a choice of the search.
TEST(Timing, AFencedLeaseUnderEveryTimingChoiceAtOnceIsExhaustive) {
  const lockstep::Timing all{.jitter = 0.5, .skew_ms = 50, .stalls = 1, .stall_ms = 200,
                             .statement_low = std::chrono::microseconds(100), .statement_high = std::chrono::milliseconds(1)};
  const auto r = run_and_print("fenced lease, " + lockstep::timing_coverage(all), fenced_lease(true, all));
  EXPECT_TRUE(r.passed() && r.exhaustive) << r.describe();
  EXPECT_EQ(r.redundant, 0u) << r.note;
  EXPECT_EQ(r.note, "") << r.describe();
}

// The lease in the simulated PostgreSQL, the resource a storage service of the model's own
// (no SQL): a holder checks its lease on its clock, then writes. A GC pause between that
// check and the write is a stall after a clock read, before a step that is not a statement:
// unfenced, b's write (it took the lease over at 150 ms) is overwritten by a's older token.
struct LeaseAndStorage {
  explicit LeaseAndStorage(Env& env)
      : a(env.new_pg_pool(lockstep::pg::PoolConfig{.application_name = "a", .pool_size = 1})),
        b(env.new_pg_pool(lockstep::pg::PoolConfig{.application_name = "b", .pool_size = 1})),
        stored_token(env.new_shared_var("storage", 0)) {
    auto c = a->checkout().value();
    (void)c->exec("CREATE TABLE lease (id int PRIMARY KEY, expires bigint, token bigint)").value();
    (void)c->exec("INSERT INTO lease VALUES (1, 0, 0)").value();
  }
  std::unique_ptr<lockstep::pg::Pool> a, b;
  std::unique_ptr<lockstep::SharedVar> stored_token;  // the storage service: the token of its last write
  std::int64_t newest_written = 0;
};

lockstep::Model<LeaseAndStorage> lease_and_storage(bool fenced, lockstep::Timing timing) {
  return lockstep::Model<LeaseAndStorage>(fenced ? "fenced-storage" : "unfenced-storage")
      .actors(2,
              [fenced](LeaseAndStorage& s, Env& env, ActorId self) {
                if (self == 1) env.sleep_for(std::chrono::milliseconds(150));
                auto c = (self == 0 ? s.a : s.b)->checkout().value();
                const std::string now = std::to_string(now_ms(env));
                const auto got = c->exec("UPDATE lease SET expires = $1 + 100, token = token + 1 WHERE id = 1 AND expires <= $1 "
                                         "RETURNING token, expires",
                                         {now})
                                     .value();
                if (got.empty()) return;
                const std::int64_t token = got.int64(0, "token");
                if (now_ms(env) >= got.int64(0, "expires")) return;  // the lease ran out: do not write
                if (!fenced) {
                  s.stored_token->store(token);
                } else {  // the storage keeps the newest token's write
                  for (std::int64_t seen = s.stored_token->load(); seen < token; seen = s.stored_token->load()) {
                    if (s.stored_token->compare_exchange(seen, token)) break;
                  }
                }
                s.newest_written = std::max(s.newest_written, token);
              })
      .invariant("writes_never_go_back",
                 [](LeaseAndStorage& s) -> std::optional<std::string> {
                   const std::int64_t last = s.stored_token->load();
                   if (last == s.newest_written) return std::nullopt;
                   return "the storage holds token " + std::to_string(last) + " after token " + std::to_string(s.newest_written) + " wrote";
                 })
      .timed()
      .timing(timing)
      .trace_dir(temp_dir("timing-storage"));
}

TEST(Timing, AStallBetweenAClockCheckAndANonSqlWriteIsExplored) {
  EXPECT_TRUE(run_and_print("unfenced storage, as written", lease_and_storage(false, {})).passed());
  const auto stalled = run_and_print("unfenced storage, 1 stall of 200 ms", lease_and_storage(false, {.stalls = 1, .stall_ms = 200}));
  ASSERT_TRUE(stalled.is(lockstep::Verdict::violation, "writes_never_go_back")) << stalled.describe();
  EXPECT_NE(stalled.interleaving.find("after reading its clock"), std::string::npos) << stalled.interleaving;
  const auto fenced = run_and_print("fenced storage, 1 stall of 200 ms", lease_and_storage(true, {.stalls = 1, .stall_ms = 200}));
  EXPECT_TRUE(fenced.passed() && fenced.exhaustive) << fenced.describe();
}

// A poll loop without a sleep: in timed mode time stands still while it spins, and the
// verdict says so; with statement latency each poll moves time and the lease expires.
TEST(Timing, ALoopWithoutASleepIsNamedAndStatementLatencyMovesTime) {
  struct Poll {
    explicit Poll(Env& env) : pool(env.new_pg_pool(lockstep::pg::PoolConfig{.pool_size = 1})) {
      (void)pool->checkout().value()->exec("CREATE TABLE t (id int PRIMARY KEY, v int)").value();
    }
    std::unique_ptr<lockstep::pg::Pool> pool;
  };
  const auto model = [](lockstep::Timing t) {
    return lockstep::Model<Poll>("poll-until-expired")
        .actor("poller",
               [](Poll& s, Env& env, ActorId) {
                 auto c = s.pool->checkout().value();
                 while (now_ms(env) < 5) (void)c->exec("SELECT v FROM t WHERE id = 1").value();  // no sleep
               })
        .timed()
        .timing(t)
        .trace_dir(temp_dir("timing-poll"));
  };
  const auto spinning = model({}).run();
  ASSERT_EQ(spinning.verdict, lockstep::Verdict::livelock) << spinning.describe();
  EXPECT_NE(spinning.message.find("the cycle sleeps nowhere"), std::string::npos) << spinning.message;
  const auto moving = model({.statement_low = std::chrono::milliseconds(1), .statement_high = std::chrono::milliseconds(1)}).run();
  EXPECT_TRUE(moving.passed() && moving.exhaustive) << moving.describe();
}


// A timer-order flip that only a point strictly inside two ranges reaches. b sleeps 120 ms,
// raises a flag, sleeps 10 ms and lowers it; a sleeps 100 ms and must not see it raised.
// With jitter 0.5 the ends alone (a at 50, 100 or 150 ms; b's flag up over [60, 75],
// [120, 135] or [180, 195] at most) never put a inside b's window: a's wake must land just
// after b's, at a region point around b's pending deadline.
TEST(Timing, ATimerOrderFlipFoundOnlyBetweenTheEndsOfTwoRanges) {
  struct Flag {
    explicit Flag(Env& env) : up(env.new_shared_var("up", 0)) {}
    std::unique_ptr<lockstep::SharedVar> up;
    std::int64_t seen_at_us = -1;  // when a saw the flag up
  };
  const auto model = [](lockstep::Timing timing) {
    return lockstep::Model<Flag>("flag-window")
                         .actor("a",
                                [](Flag& s, Env& env, ActorId) {
                                  env.sleep_for(std::chrono::milliseconds(100));
                                  if (s.up->load() == 1) {
                                    s.seen_at_us = std::chrono::duration_cast<std::chrono::microseconds>(env.now()).count();
                                  }
                                })
                         .actor("b",
                                [](Flag& s, Env& env, ActorId) {
                                  env.sleep_for(std::chrono::milliseconds(120));
                                  s.up->store(1);
                                  env.sleep_for(std::chrono::milliseconds(10));
                                  s.up->store(0);
                                })
                         .invariant("never_sees_the_flag",
                                    [](Flag& s) -> std::optional<std::string> {
                                      if (s.seen_at_us < 0) return std::nullopt;
                                      return "a saw the flag up at " + std::to_string(s.seen_at_us) + " us";
                                    })
                         .timed()
                         .timing(timing)
                         .trace_dir(temp_dir("timing-flip"));
  };
  const auto as_written = model({}).run();
  EXPECT_TRUE(as_written.passed() && as_written.exhaustive) << as_written.describe();
  const auto r = model({.jitter = 0.5}).run();
  ASSERT_TRUE(r.is(lockstep::Verdict::violation, "never_sees_the_flag")) << r.describe();
  // One of the timers lasted a value strictly inside its range, not an end: a region point
  // (the trace's row of each duration choice says "lasts X ms, written Y ms").
  ASSERT_TRUE(r.trace_path.has_value());
  const auto trace = nlohmann::json::parse(std::ifstream(*r.trace_path));
  const std::regex drawn(R"(lasts ([0-9.]+) ms, written ([0-9.]+) ms)");  // all under 10 s: in ms
  bool inside = false;
  for (const auto& e : trace.at("events")) {
    const std::string result = e.value("result", "");
    std::smatch m;
    if (!std::regex_search(result, m, drawn)) continue;
    const double lasts = std::stod(m[1]), written = std::stod(m[2]);
    if (lasts != written && lasts != written * 0.5 && lasts != written * 1.5) inside = true;
  }
  EXPECT_TRUE(inside) << r.interleaving;
  // The cause names the timer and where the failure flips: as written, it passes.
  const auto& timing = trace.at("cause").value("timing", nlohmann::json::array());
  ASSERT_FALSE(timing.empty()) << trace.at("cause").dump();
  const std::string why = timing.dump();
  EXPECT_NE(why.find("'s timer (sleep "), std::string::npos) << why;
  EXPECT_NE(why.find("the execution passes"), std::string::npos) << why;
  for (const auto& line : timing) std::cout << "its timing cause: " << line.get<std::string>() << "\n";
  std::cout << "flag window, jitter 0.5: violation at execution " << r.executions << ", " << r.message << "\n";
}

}  // namespace
