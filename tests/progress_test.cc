// Progress: cycles, fairness, livelock and liveness verdicts, lasso traces, and bounds that
// stop every phase (sim/progress/progress.h, sim/sched/scheduler.h, sim/check.h).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "lockstep/lockstep.h"
#include "lockstep/model/scenario.h"
#include "lockstep/sim/check.h"
#include "lockstep/sim/progress/progress.h"
#include "lockstep/sim/sched/sim_env.h"
#include "test_support.h"
#include "test_paths.h"

namespace lockstep {
namespace {

std::string progress_scenario(const std::string& name) {
  return std::string(lockstep_source_dir()) + "/scenarios/progress/" + name + ".json";
}

sim::CheckReport check(const Scenario& s, sim::CheckOverrides o = {}) {
  sim::CheckOptions options;
  options.overrides = std::move(o);
  return sim::check_scenario(s, options);
}

sim::StepSig sig(ActorId actor, std::string_view verb, sim::ObjectId object, std::uint64_t enabled) {
  sim::StepSig s;
  s.actor = actor;
  s.verb = verb;
  s.object = object;
  s.enabled = enabled;
  return s;
}

TEST(FindCycle, FindsTheLongestPeriodicSuffixAndWhoItStarves) {
  sim::StepRing ring;
  std::uint64_t n = 0;
  for (int i = 0; i < 5; ++i) ring.at(n++) = sig(0, "write", 1, 0b11);  // a prefix that does not repeat
  ring.at(n - 1).object = 7;
  for (int i = 0; i < 40; ++i) {  // actor 1 alternates two steps; actor 0 could run throughout
    ring.at(n++) = sig(1, "try_lock", 2, 0b11);
    ring.at(n++) = sig(1, "read", 3, 0b11);
  }
  const auto c = sim::find_cycle(ring, n, n, sim::kMaxCyclePeriod, sim::kCycleRepeats);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->period, 2u);
  EXPECT_EQ(c->start, 5u);
  EXPECT_EQ(c->repeats(), 40u);
  EXPECT_EQ(c->looping, 0b10u);
  EXPECT_EQ(c->starved, 0b01u);
}

TEST(FindCycle, NoCycleInStepsThatChangeEveryTime) {
  sim::StepRing ring;
  for (std::uint64_t i = 0; i < 100; ++i) ring.at(i) = sig(0, "write", static_cast<sim::ObjectId>(i + 1), 1);
  EXPECT_FALSE(sim::find_cycle(ring, 100, 100, sim::kMaxCyclePeriod, sim::kCycleRepeats).has_value());
}

TEST(Progress, ASpinThatCannotProgressIsALivelockWithAShortLassoThatReplays) {
  const Scenario s = load_scenario(progress_scenario("spin-on-abandoned-lock"));
  const sim::CheckReport r = check(s);
  ASSERT_EQ(r.result.verdict, Verdict::livelock);
  ASSERT_TRUE(r.trace.has_value());
  EXPECT_LE(r.trace->decisions.size(), 40u);
  ASSERT_TRUE(r.trace->lasso.has_value());
  EXPECT_EQ(r.trace->lasso->period, 1u);
  EXPECT_GT(r.trace->lasso->observed, 1000u);  // the search saw it repeat to its livelock bound
  EXPECT_NE(r.trace->message.find("b repeats [try_lock m]"), std::string::npos) << r.trace->message;
  const sim::ReplayReport replay = sim::replay_trace(*r.trace, "<lasso>");
  EXPECT_EQ(replay.result.verdict, Verdict::livelock);
  EXPECT_EQ(replay.result.message, r.trace->message);
  EXPECT_EQ(replay.events, r.trace->events);
}

TEST(Progress, ARetryLoopThatProgressesUnderFairnessPasses) {
  const Scenario s = load_scenario(progress_scenario("retry-until-released"));
  const sim::CheckReport fair = check(s);
  EXPECT_EQ(fair.result.verdict, Verdict::pass);
  EXPECT_TRUE(fair.result.exhaustive);
  // Without fairness every schedule in which b retries while a waits is explored, the
  // longest to the step bound.
  sim::CheckOverrides unfair;
  unfair.settings.fair = false;
  unfair.settings.max_steps = 300;
  const sim::CheckReport r = check(s, unfair);
  EXPECT_EQ(r.result.verdict, Verdict::step_bound);
  EXPECT_GT(r.result.stats.executions, fair.result.stats.executions);
}

TEST(Progress, EveryProgressScenarioGetsItsVerdictTheSameWayUnderDporAndDfs) {
  int checked = 0;
  for (const auto& e : std::filesystem::directory_iterator(std::string(lockstep_source_dir()) + "/scenarios/progress")) {
    const Scenario s = load_scenario(e.path().string());
    for (const char* strategy : {"dpor", "dfs"}) {
      sim::CheckOverrides o;
      o.settings.strategy = strategy;
      const sim::CheckReport r = check(s, o);
      EXPECT_TRUE(r.as_expected) << s.name << " under " << strategy << ": " << verdict_name(r.result.verdict);
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);
}

TEST(Progress, AnObligationStillHotAtTheEndNamesIt) {
  const Scenario s = load_scenario(progress_scenario("seed001-background-starvation"));
  const sim::CheckReport r = check(s);
  ASSERT_EQ(r.result.verdict, Verdict::liveness);
  EXPECT_EQ(r.result.first_failure->result.invariant, "agent_processed");
}

TEST(Progress, AnObligationMetTooLateInVirtualTimeIsALivenessFailure) {
  const Scenario s = load_scenario(progress_scenario("seed003-forced-release-too-late"));
  const sim::CheckReport r = check(s);
  ASSERT_EQ(r.result.verdict, Verdict::liveness);
  EXPECT_NE(r.result.first_failure->result.message.find("within 400 ms"), std::string::npos);
}

TEST(Progress, ASpinningProgramWithAStepBoundInTheMillionsEndsWithItsVerdict) {
  const std::string file = (std::filesystem::temp_directory_path() / "lockstep-progress-fs28.json").string();
  std::ofstream(file) << R"({"format": "lockstep-scenario/1", "name": "filesystem-28", "system": "bench",
    "config": {"program": "filesystem", "n": 28}, "expect": {"verdict": "livelock"}})";
  const testing::CliRun r = testing::run_cli_in_process(
      {"check", file, "--max-steps", "3000000", "--max-seconds", "5", "--json", "--trace-out",
       (std::filesystem::temp_directory_path() / "lockstep-progress-fs28-trace.json").string()});
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["verdict"], "livelock") << r.out;
  EXPECT_EQ(r.code, 0);
  EXPECT_TRUE(j["lasso"].is_object());
}

TEST(Progress, TheStopCallbackEndsAnExecutionInsideIt) {
  const Scenario s = load_scenario(progress_scenario("spin-on-abandoned-lock"));
  sim::RunLimits limits;
  limits.max_steps = 100'000'000;
  limits.livelock_steps = 100'000'000;
  int asked = 0;
  limits.stop = [&asked] { return ++asked >= 3; };
  sim::Scheduler scheduler;
  sim::SimEnv env;
  auto strategy = sim::make_strategy("dfs", 1);
  ASSERT_TRUE(strategy->next_execution());
  const sim::ExecutionResult r = scheduler.run(*s.configured, env, *strategy, limits);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(r.steps, 3 * sim::kStopCheckSteps);
}

}  // namespace
}  // namespace lockstep

namespace lockstep {
namespace {

struct Flag {
  explicit Flag(Env& env) : held(env.new_shared_var("held", 0)) {}
  std::unique_ptr<SharedVar> held;
};

// Actor 0 takes the flag and never gives it back; actor 1 spins on it, its obligation hot.
Model<Flag> abandoned_flag(const std::string& dir) {
  return Model<Flag>("abandoned-flag")
      .actors(2,
              [](Flag& s, Env& env, ActorId self) {
                if (self == 0) {
                  s.held->store(1);
                  return;
                }
                env.hot("flag taken");
                while (!s.held->compare_exchange(0, 1)) {
                }
                env.cold("flag taken");
              })
      .trace_dir(dir);
}

std::string api_dir(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("lockstep-progress-") + name)).string();
}

TEST(ProgressApi, AnObligationStillHotInAFairLoopIsALivenessVerdictWithAShortTrace) {
  const ModelReport r = abandoned_flag(api_dir("liveness")).run();
  ASSERT_EQ(r.verdict, Verdict::liveness) << r.describe();
  EXPECT_EQ(r.invariant, "flag taken");
  EXPECT_NE(r.message.find("b repeats [cas held]"), std::string::npos) << r.message;
  EXPECT_LT(r.describe().size(), 8'000u);  // the lasso, not the 10,000 steps to the bound
}

TEST(ProgressApi, ALivenessVerdictNamesTheEvidenceItRestsOn) {
  const ModelReport r = abandoned_flag(api_dir("evidence")).run();
  ASSERT_EQ(r.verdict, Verdict::liveness) << r.describe();
  EXPECT_NE(r.message.find("evidence: a fair cycle"), std::string::npos) << r.message;
}

// One actor that stores 1..1000 with an obligation hot: no step repeats an earlier one.
ModelReport long_count(std::uint64_t max_steps) {
  return Model<Flag>("long-count")
      .actors(1,
              [](Flag& s, Env& env, ActorId) {
                env.hot("counted");
                for (int i = 1; i <= 1000; ++i) s.held->store(i);
                env.cold("counted");
              })
      .max_steps(max_steps)
      .trace_dir(api_dir("bare-bound"))
      .run();
}

// Team note 2: a hot obligation at a bare step bound (no fair cycle, no deadline passed in
// virtual time, actors still running) is step_bound, naming the obligation; never liveness.
TEST(ProgressApi, AnObligationStillHotAtABareStepBoundIsStepBoundNotLiveness) {
  const ModelReport r = long_count(30);
  ASSERT_EQ(r.verdict, Verdict::step_bound) << r.describe();
  EXPECT_EQ(r.invariant, "counted");
  EXPECT_NE(r.message.find("\"counted\" still hot"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("no evidence"), std::string::npos) << r.message;
  EXPECT_EQ(long_count(5000).verdict, Verdict::pass);  // with room to finish, it passes
}

TEST(ProgressApi, RandomGetsTheSameDefaultExecutionBoundAsTheCommandLine) {
  const ModelReport r = Model<Flag>("two-writers")
                            .actors(2, [](Flag& s, Env&, ActorId self) { s.held->store(self + 1); })
                            .strategy("random")
                            .trace_dir(api_dir("random"))
                            .run();
  EXPECT_EQ(r.verdict, Verdict::incomplete);
  EXPECT_EQ(r.executions + r.redundant, kDefaultRandomExecutions);
}

TEST(ProgressApi, MaxSecondsBoundsTheSearch) {
  const ModelReport r = abandoned_flag(api_dir("seconds")).max_steps(100'000'000).livelock_steps(100'000'000).fair(false)
                            .max_seconds(0.2)
                            .run();
  EXPECT_EQ(r.verdict, Verdict::incomplete) << r.describe();
  EXPECT_NE(r.stop_reason.find("wall time"), std::string::npos) << r.stop_reason;
}

// Issue 61: an obligation made hot in the State's constructor counts from time 0 (it was
// silently dropped: a job declared due there was never judged).
struct DueJob {
  DueJob(Env& env, const bool& declare) : done(env.new_shared_var("done", 0)) {
    if (declare) env.hot("job 1 done");
  }
  std::unique_ptr<SharedVar> done;
};

ModelReport due_job(bool declare, bool completes) {
  return Model<DueJob, bool>("due-job", declare)
      .actors(1,
              [completes](DueJob& s, Env& env, ActorId) {
                s.done->store(1);
                if (completes) env.cold("job 1 done");
              })
      .trace_dir(api_dir(completes ? "constructor-met" : "constructor-unmet"))
      .run();
}

// ... and an observation there, which no invariant could judge, is refused by name (it was
// dropped): the verdict is a model error, not a pass.
struct ObservedInConstructor {
  explicit ObservedInConstructor(Env& env, const bool&) { env.observe(Event{"job queued", 1, 1}); }
};

TEST(ProgressApi, AnObservationInTheConstructorIsRefusedNotDropped) {
  const ModelReport r = Model<ObservedInConstructor, bool>("observed-in-constructor", true)
                            .actors(1, [](ObservedInConstructor&, Env&, ActorId) {})
                            .trace_dir(api_dir("observed-in-constructor"))
                            .run();
  ASSERT_EQ(r.verdict, Verdict::model_error) << r.describe();
  EXPECT_NE(r.message.find("observe(\"job queued\") in the State's constructor"), std::string::npos) << r.message;
}

TEST(ProgressApi, AnObligationMadeHotInTheConstructorIsJudged) {
  const ModelReport unmet = due_job(true, false);
  ASSERT_EQ(unmet.verdict, Verdict::liveness) << unmet.describe();
  EXPECT_EQ(unmet.invariant, "job 1 done");
  EXPECT_EQ(due_job(true, true).verdict, Verdict::pass);
  EXPECT_EQ(due_job(false, false).verdict, Verdict::pass);  // nothing declared, nothing owed
}

// A deadline (`within`) that untimed mode does not judge passes no longer in silence: the
// report says how often one was set; timed mode judges it (and says nothing).
struct Deadline {
  explicit Deadline(Env&) {}
};

ModelReport met_after_a_sleep(bool timed) {
  return Model<Deadline>("deadline-untimed")
      .actors(1,
              [](Deadline&, Env& env, ActorId) {
                env.hot("reply", std::chrono::milliseconds(10));
                env.sleep_for(std::chrono::milliseconds(50));
                env.cold("reply");
              })
      .timed(timed)
      .trace_dir(api_dir("deadline"))
      .run();
}

TEST(ProgressApi, ADeadlineUntimedModeCannotJudgeIsSaidInTheReport) {
  const ModelReport untimed = met_after_a_sleep(false);
  EXPECT_EQ(untimed.verdict, Verdict::pass) << untimed.describe();
  EXPECT_NE(untimed.note.find("untimed mode: obligations were made hot with a deadline (`within`) 1 times, and no deadline "
                              "was judged"),
            std::string::npos)
      << untimed.describe();
  const ModelReport timed = met_after_a_sleep(true);
  EXPECT_EQ(timed.verdict, Verdict::liveness) << timed.describe();  // met 40 ms late
  EXPECT_EQ(timed.note.find("deadline (`within`)"), std::string::npos) << timed.describe();
}

}  // namespace
}  // namespace lockstep
