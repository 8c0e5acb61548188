// DPOR: exact counts on programs whose Mazurkiewicz traces are known, and soundness proven
// against naive dfs on random script programs (RapidCheck): the same final states, the
// same verdicts, and one complete dpor execution per Mazurkiewicz trace that dfs finds.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <iterator>
#include <map>
#include <set>

#include "lockstep/real/task_threads.h"
#include "lockstep/sim/explore/explorer.h"
#include "test_support.h"
#include "trace_forms.h"
#include "test_paths.h"

namespace lockstep {
namespace {

using testing::scenario_from_json;
using testing::script_scenario;
using testing::FoataRecorder;

using Actors = std::vector<std::pair<std::string, std::vector<std::string>>>;

struct Summary {
  std::set<std::string> final_states;
  std::set<std::string> verdicts;
  std::set<std::string> traces;  // distinct Foata forms of complete executions
  std::set<std::string> optimal_traces;  // the same under optimal DPOR's footprints
  std::uint64_t executions = 0;
  std::uint64_t redundant = 0;
  Verdict overall = Verdict::pass;
  bool restarted = false;  // dpor left its optimal mode (source-DPOR from then on)
};

Summary explore_all(const Scenario& s, const std::string& strategy) {
  FoataRecorder recorder(sim::make_strategy(strategy, 1));
  Summary out;
  sim::ExploreOptions options;
  options.stop_at_first = false;
  options.limits.max_steps = 1000;
  options.limits.time = s.explore.time;
  options.limits.timing = s.explore.timing;  // jitter, skew, stalls: choices both strategies explore
  options.limits.record_final_state = true;
  options.on_execution = [&](const sim::ExecutionResult& r) {
    recorder.keep_last();
    out.verdicts.insert(std::string(verdict_name(r.verdict)) + ":" + r.invariant + ":" + r.message);
    if (!r.final_state.empty()) out.final_states.insert(r.final_state);
  };
  const auto result = sim::explore_system(*s.configured, recorder, options);
  recorder.flush();
  out.traces.insert(recorder.forms().begin(), recorder.forms().end());
  out.optimal_traces.insert(recorder.optimal_forms().begin(), recorder.optimal_forms().end());
  out.executions = result.stats.executions;
  out.redundant = result.stats.redundant;
  out.restarted = recorder.restarted();
  out.overall = result.verdict;
  EXPECT_EQ(recorder.forms().size(), result.stats.executions);
  return out;
}

// The traces dpor runs one execution each: those under optimal DPOR's footprints (a
// conditional update keeps its declared access) while it stays optimal; the steps' own once it fell back.
std::size_t traces_run_once(const Summary& dfs, const Summary& dpor) {
  return (dpor.restarted ? dfs.traces : dfs.optimal_traces).size();
}

std::uint64_t dpor_executions(const nlohmann::json& doc) {
  const auto report = testing::check(scenario_from_json(doc), {.settings = {.strategy = "dpor"}});
  EXPECT_TRUE(report.result.exhaustive);
  return report.result.stats.executions;
}

TEST(Dpor, ADomainWriteDependsOnEveryStepInItsDomain) {
  constexpr sim::ObjectId kX = 1, kY = 2, kServer = 3;
  const sim::Footprint x_lock{kX, sim::Access::acquire, 0, kServer};
  const sim::Footprint y_lock{kY, sim::Access::acquire, 0, kServer};
  const sim::Footprint begin{sim::kNoObject, sim::Access::none, 0, kServer};
  const sim::Footprint view{sim::kNoObject, sim::Access::read, 0, kServer, true};
  const sim::Footprint elsewhere{kY, sim::Access::read, 0, kServer + 1, true};
  EXPECT_FALSE(sim::dependent(x_lock, y_lock));  // domain readers commute as their objects do
  EXPECT_TRUE(sim::dependent(x_lock, x_lock));
  EXPECT_TRUE(sim::dependent(view, x_lock));
  EXPECT_TRUE(sim::dependent(begin, view));
  EXPECT_TRUE(sim::dependent(view, view));
  EXPECT_FALSE(sim::dependent(view, elsewhere));  // another domain
  EXPECT_FALSE(sim::dependent(view, sim::Footprint{kX, sim::Access::write}));  // no domain
  EXPECT_TRUE(sim::dependent(elsewhere, y_lock));  // still its object: y, read against an acquire
}

TEST(Dpor, IndependentActorsNeedOneExecution) {
  EXPECT_EQ(dpor_executions(script_scenario({{"a", {"write x 1", "read x r"}}, {"b", {"write y 1", "read y r"}},
                                             {"c", {"write z 1", "read z r"}}})),
            1u);
}

TEST(Dpor, ObservationsInDifferentScopesCommute) {
  // a and b share nothing but their observations, which order them only in one scope.
  auto doc = [](const std::string& scope_a, const std::string& scope_b) {
    return script_scenario({{"a", {"write x 1", "observe " + scope_a + " 1"}}, {"b", {"write y 1", "observe " + scope_b + " 2"}}});
  };
  EXPECT_EQ(dpor_executions(doc("0", "1")), 1u);
  EXPECT_EQ(dpor_executions(doc("0", "0")), 2u);
  EXPECT_EQ(dpor_executions(doc("0", "*")), 2u);  // a global observation meets every scope
  EXPECT_EQ(dpor_executions(doc("*", "*")), 2u);
}

TEST(Dpor, IndependentAgentsNeedOneExecution) {
  // Hooks of different agents: their own keys and rows, their own pools, observations
  // scoped by agent (4 agents took 369,600 executions when every observation was
  // ordered against every other).
  nlohmann::json actors = nlohmann::json::array();
  for (int agent = 1; agent <= 4; ++agent) actors.push_back({{"kind", "hook"}, {"route", "pre_tool_use"}, {"agent", agent}});
  const nlohmann::json doc = {{"format", "lockstep-scenario/1"}, {"name", "independent-agents"}, {"system", "headspace"},
                              {"config", {{"agents", 4}}},        {"actors", actors},                {"explore", {{"time", "timed"}}}};
  EXPECT_EQ(dpor_executions(doc), 1u);
}

TEST(Dpor, HooksOfOneAgentStayOptimal) {
  // Four hooks of one agent wait for its advisory lock (a queued request, granted by the
  // release ahead of it) and try it: optimal mode covers both, so none of its executions is
  // sleep-set blocked, and it runs as many as source-DPOR completes (one per trace; the
  // failed tries here never commute, so keeping their declared access costs nothing).
  std::ifstream in(std::string(lockstep_source_dir()) + "/scenarios/bench/headspace-one-agent-4.json");
  const Scenario s = testing::scenario_from_text(std::string(std::istreambuf_iterator<char>(in), {}));
  const auto dpor = testing::check(s, {.settings = {.strategy = "dpor"}});
  const auto source = testing::check(s, {.settings = {.strategy = "source-dpor"}});
  ASSERT_TRUE(dpor.result.exhaustive && source.result.exhaustive);
  EXPECT_EQ(dpor.result.stats.redundant, 0u);
  EXPECT_GT(source.result.stats.redundant, 0u);  // what optimal mode saves
  EXPECT_EQ(dpor.result.stats.executions, source.result.stats.executions);
  EXPECT_EQ(dpor.result.verdict, source.result.verdict);
}

TEST(Dpor, AnObservationBeforeAnyOperationIsOrderedToo) {
  // Neither actor has a step before its observation: each becomes a step, both orders run.
  const Actors actors = {{"a", {"observe 0 1"}}, {"b", {"observe 0 2"}}};
  EXPECT_EQ(dpor_executions(script_scenario(actors)), 2u);
  const auto doc = script_scenario(actors, {{"check", nlohmann::json::array({"@0 != 21"})}});
  EXPECT_EQ(testing::check(scenario_from_json(doc), {.settings = {.strategy = "dpor"}}).result.verdict, Verdict::violation);
}

// dpor stays optimal on s (no fallback, none sleep-set blocked) and runs exactly dfs's
// traces, one execution each, with dfs's verdicts.
void expect_optimal_with_the_traces_of_dfs(const Scenario& s) {
  const Summary dfs = explore_all(s, "dfs");
  const Summary dpor = explore_all(s, "dpor");
  EXPECT_FALSE(dpor.restarted) << s.document.dump();
  EXPECT_EQ(dpor.redundant, 0u) << s.document.dump();
  EXPECT_EQ(dpor.executions, traces_run_once(dfs, dpor)) << s.document.dump();
  EXPECT_EQ(dpor.traces, dfs.traces) << s.document.dump();
  EXPECT_EQ(dpor.verdicts, dfs.verdicts) << s.document.dump();
}

TEST(Dpor, OptimalWakeupSequencesRunToTheEndOfTheExecution) {
  // A reversed race's sequence notdep(e).e' takes every later event that does not happen
  // after e, also those after e' (JACM 2017, Algorithm 2). Cut at e', the reversal of a's and
  // b's observations (d.x, b.x, b's observation) looked covered by a branch that writes y
  // before d does, and the trace with d's writes first and b observing before a never ran
  // (found by the optimal-mode property: one trace of dfs's missing).
  const Scenario s = scenario_from_json(script_scenario({{"a", {"observe 0 1"}},
                                                         {"b", {"write x 0", "observe 0 1"}},
                                                         {"c", {"write y 0", "read y r", "read x r"}},
                                                         {"d", {"write x 0", "write y 0"}}},
                                                        {{"vars", {{"x", 0}, {"y", 0}}}}, {{"time", "untimed"}}));
  expect_optimal_with_the_traces_of_dfs(s);
}

TEST(Dpor, RacesOfTheReplayedPrefixAreInsertedAgain) {
  // A race's sequence notdep(e).e' runs to the end of the execution, so a race whose two
  // steps were replayed has another sequence in each new continuation, and optimal mode
  // inserts it again (JACM 2017, Algorithm 2). Reversing only races whose later step is new,
  // as source-DPOR may, ran 24 of dfs's 26 traces here (session 9; tried again in session 14
  // for its speed: lastzero(15) 2.4 s -> 1.7 s, and this program still loses two traces).
  const Scenario s = scenario_from_json(script_scenario({{"a", {"read y r"}},
                                                         {"b", {"write x 0"}},
                                                         {"c", {"observe 0 r", "write y r+1", "read x r"}},
                                                         {"d", {"read x r", "write x r+1", "observe 0 r"}}},
                                                        {{"vars", {{"x", 0}, {"y", 0}}}}, {{"time", "untimed"}}));
  expect_optimal_with_the_traces_of_dfs(s);
}

TEST(Dpor, ParkedActorBehindTwoUnorderedFailedTryLocks) {
  // b's and c's failed try_locks are unordered reads of m; d is parked on m behind both. Its
  // race with b must see c's read as a step d depends on.
  const Scenario s = scenario_from_json(script_scenario({{"a", {"lock m", "write x 1", "unlock m"}},
                                                         {"b", {"trylock m r"}},
                                                         {"c", {"trylock m r"}},
                                                         {"d", {"lock m", "read x r", "unlock m"}}}));
  const Summary dfs = explore_all(s, "dfs");
  const Summary dpor = explore_all(s, "dpor");
  EXPECT_EQ(dpor.final_states, dfs.final_states);
  EXPECT_EQ(dpor.traces, dfs.traces);
  EXPECT_EQ(dpor.executions, traces_run_once(dfs, dpor));
}

TEST(Dpor, ReadersOfOneVariableCommute) {
  // readers(N): one writer, N readers: 2^N traces (each reader before or after the write).
  for (int n = 1; n <= 4; ++n) {
    std::vector<std::pair<std::string, std::vector<std::string>>> actors = {{"w", {"write x 42"}}};
    for (int r = 0; r < n; ++r) actors.push_back({fmt::format("r{}", r), {"read x v"}});
    EXPECT_EQ(dpor_executions(script_scenario(actors)), 1u << n) << n;
  }
}

TEST(Dpor, LockAcquisitionOrdersAreExplored) {
  const auto doc = script_scenario({{"a", {"lock m", "write x 1", "unlock m"}}, {"b", {"lock m", "write x 2", "unlock m"}},
                                    {"c", {"lock m", "read x r", "unlock m"}}});
  EXPECT_EQ(dpor_executions(doc), 6u);
}

TEST(Dpor, OptimalModeCoversWaitsForPlainLocks) {
  // A waiter for a mutex takes it in one step once it is free: its acquisition races with
  // the previous one (the release between is never co-enabled with it), and the search
  // stays optimal: dfs's traces, none twice, none sleep-set blocked. Also with a waiter
  // left parked at the end (the deadlock).
  const std::vector<nlohmann::json> docs = {
      script_scenario({{"a", {"lock m", "write x 1", "unlock m", "read y r"}},
                       {"b", {"write y 1", "lock m", "write x 2", "unlock m"}},
                       {"c", {"lock m", "read x r", "unlock m", "write y 2"}}}),
      script_scenario({{"a", {"lock m1", "lock m2", "write x 1", "unlock m2", "unlock m1"}},
                       {"b", {"lock m2", "lock m1", "unlock m1", "unlock m2"}},
                       {"c", {"read x r", "lock m1", "unlock m1"}}}),
  };
  for (const auto& doc : docs) expect_optimal_with_the_traces_of_dfs(scenario_from_json(doc));
  // Flanagan and Godefroid's file system (16 actors, inode and block locks): too many
  // interleavings for dfs; source-DPOR, the reference, counts its traces.
  const Scenario fs = load_scenario(std::string(lockstep_source_dir()) + "/scenarios/bench/filesystem-16.json");
  const Summary source = explore_all(fs, "source-dpor");
  const Summary dpor = explore_all(fs, "dpor");
  EXPECT_FALSE(dpor.restarted);
  EXPECT_EQ(dpor.redundant, 0u);
  EXPECT_GT(source.redundant, 0u);  // what optimal mode saves
  EXPECT_EQ(dpor.executions, source.executions);
  EXPECT_EQ(dpor.traces, source.traces);
}

// Fair mode's round-robin tail offers one actor a node by design (docs/progress.md): a race
// whose reversal would start there with another actor is an order no strategy explores. dpor
// stays optimal through such tails and runs the traces source-DPOR, the reference, runs
// (dfs is out of reach: the tail begins after 256 steps).
TEST(Dpor, FairModesRoundRobinTailKeepsOptimalMode) {
  for (const char* name : {"progress/retry-until-released.json", "progress/seed004-poll-outside-lock.json"}) {
    const Scenario s = load_scenario(std::string(lockstep_source_dir()) + "/scenarios/" + name);
    const Summary source = explore_all(s, "source-dpor");
    const Summary dpor = explore_all(s, "dpor");
    EXPECT_FALSE(dpor.restarted) << name;
    EXPECT_EQ(dpor.redundant, 0u) << name;
    EXPECT_EQ(dpor.verdicts, source.verdicts) << name;
    EXPECT_EQ(dpor.final_states, source.final_states) << name;
    EXPECT_EQ(dpor.traces, source.traces) << name;
  }
}

TEST(Dpor, AWaiterThatTimesOutAfterTheClockMovedOnKeepsEveryTrace) {
  // b waits for m (timer 5) while a unlocks and relocks it; b may take m in either gap, or
  // time out once nothing else can run. Its timeout comes after the clock advance, which
  // orders it after every earlier step, so only the race of the acquisition b never made
  // with a's last acquisition gives b the lock: without it dpor ran 6 of dfs's 9 traces
  // (found by the main property, session 11).
  const auto doc = script_scenario({{"a", {"lock m", "write x 0", "unlock m", "lock m", "write x 0", "unlock m", "lockfor m 5 got"}},
                                    {"b", {"lockfor m 5 got"}}},
                                   nullptr, {{"time", "timed"}});
  expect_optimal_with_the_traces_of_dfs(scenario_from_json(doc));
}

TEST(Dpor, ChoicesInsideAStepAreTransitionsOfTheirOwn) {
  // Each value of an explored choice is a transition of its own at the step that made it
  // (with the values of the choices before it), so the search stays optimal: dfs's traces,
  // the values chosen included, one execution each (before: it began again as source-DPOR).
  const Scenario s = scenario_from_json(script_scenario({{"a", {"write x 1", "choose r 2", "write y r"}},
                                                         {"b", {"read y r", "choose r 3", "write x r"}}},
                                                        {{"vars", {{"x", 0}, {"y", 0}}}}, {{"time", "untimed"}}));
  expect_optimal_with_the_traces_of_dfs(s);
}

TEST(Dpor, AStallNotOfferedIsAChoiceOfItsFirstValue) {
  // One stall per execution: once b stalls, a's clock read offers none. To dpor a's step is
  // then a choice of one value, as if it chose not to stall, so the step's later choice
  // (choose r 2) keeps its place in the step's path wherever the step runs (before: one
  // trace was named by two paths, dfs's form by neither; found at 30,000 programs).
  const auto doc = script_scenario({{"a", {"trylock m got", "clock c", "choose r 2", "lock n", "read x r", "unlock n"}},
                                    {"b", {"observe 0 r", "observe 0 r", "lock n", "clock c", "read x r", "unlock n"}}},
                                   {{"vars", {{"x", 0}, {"y", 0}}}, {"check", {"@0 != 0"}}},
                                   {{"time", "timed"}, {"timing", {{"stalls", {{"count", 1}, {"max_ms", 2}}}}}});
  expect_optimal_with_the_traces_of_dfs(scenario_from_json(doc));
}

TEST(Dpor, UnderJitterAStallChoiceBeforeASleepOrdersThePendingTimers) {
  // A clock read or a sleep declares no object; under jitter it touches the pending timers
  // (their durations depend on one another), which add_object gave no access: the touch
  // was lost and dpor missed a state dfs reaches (a.c = 4: docs/notes.md, "Timing model").
  const auto doc = script_scenario({{"a", {"lockfor m 5 g", "clock c"}}, {"b", {"clock c", "lockfor m 5 g"}}, {"c", {"sleep 0", "clock c"}}},
                                   {{"vars", {{"x", 0}, {"y", 0}}}},
                                   {{"time", "timed"}, {"timing", {{"jitter", 0.5}, {"stalls", {{"count", 1}, {"max_ms", 5}}}}}});
  const Scenario s = scenario_from_json(doc);
  const Summary dfs = explore_all(s, "dfs");
  const Summary dpor = explore_all(s, "dpor");
  EXPECT_EQ(dpor.final_states, dfs.final_states);
  EXPECT_EQ(dpor.verdicts, dfs.verdicts);
}

TEST(Dpor, AReleaseOfALockAlreadyFreeRacesWithTheNextAcquisition) {
  // Two config saves under flock: each unlocks, then closes the file, which releases the
  // flock again (already free). The other's flock may come between the two: a waiting
  // acquisition never races with the release it waited for, but it does with the second
  // (dpor ran 5 of dfs's 8 traces when every release of the lock was skipped).
  std::ifstream in(std::string(lockstep_source_dir()) + "/scenarios/headspace/config-editor.json");
  expect_optimal_with_the_traces_of_dfs(testing::scenario_from_text(std::string(std::istreambuf_iterator<char>(in), {})));
}

TEST(Dpor, OptimalModeCoversPlainLockTries) {
  // A try of a plain lock fails (a read) exactly when the lock is held, so a reversed race
  // knows what the try will do: optimal mode keeps it. A waiter's previous acquisition may be
  // a try's (the lock race partner of b's lock below is a's or c's successful try).
  const std::vector<nlohmann::json> docs = {
      script_scenario({{"a", {"trylock m t", "write x 1", "unlockif m t"}},
                       {"b", {"lock m", "write x 2", "unlock m"}},
                       {"c", {"trylock m u", "read x r", "unlockif m u"}}}),
      script_scenario({{"a", {"trylock m t", "unlockif m t", "trylock m t", "unlockif m t"}},
                       {"b", {"lock m", "unlock m"}},
                       {"c", {"write y 1", "trylock m u", "unlockif m u"}}}),
      script_scenario({{"a", {"lock m", "trylock n t", "unlockif n t", "unlock m"}},
                       {"b", {"trylock n t", "lock m", "unlock m", "unlockif n t"}}}),
  };
  for (const auto& doc : docs) expect_optimal_with_the_traces_of_dfs(scenario_from_json(doc));
}

TEST(Dpor, OptimalModeCoversCompareAndSwaps) {
  // A CAS that fails is a read; moved by a race, it succeeds where its variable holds what it
  // expects, worked out from the values each step on the variable found and left (the
  // claims of cas-once, one that reads the claim back, an ABA where x returns to 0 before the
  // last CAS, and expected values in registers).
  const std::vector<nlohmann::json> docs = {
      script_scenario({{"a", {"cas x 0 1 ok"}}, {"b", {"cas x 0 2 ok"}}, {"c", {"cas x 0 3 ok"}}}),
      script_scenario({{"a", {"cas x 0 1 ok", "read x r"}}, {"b", {"write x 0", "cas x 1 2 ok"}}, {"c", {"read x r", "cas x r 5 ok"}}}),
      script_scenario({{"a", {"cas x 0 1 ok", "cas x 1 0 ok"}}, {"b", {"cas x 0 2 ok"}}, {"c", {"read y r", "cas x 0 3 ok", "write y 1"}}}),
      script_scenario({{"a", {"read x r", "cas x r r+1 ok", "read x r", "cas x r r+1 ok"}}, {"b", {"read x r", "cas x r r+1 ok"}}}),
  };
  for (const auto& doc : docs) expect_optimal_with_the_traces_of_dfs(scenario_from_json(doc));
}

TEST(Dpor, AWriterBehindTwoReadersKeepsEveryTrace) {
  // A reader/writer mutex's writer waits with a plain lock's footprint, but the readers'
  // acquisitions are shared ones, never a lock race's partner: every trace must still run.
  const Scenario s = scenario_from_json(script_scenario({{"a", {"rlock w", "write x 1", "runlock w"}},
                                                         {"b", {"rlock w", "read x r", "runlock w"}},
                                                         {"c", {"write y 1", "lock w", "write x 2", "unlock w"}}},
                                                        {{"vars", {{"x", 0}, {"y", 0}}}}, {{"time", "untimed"}}));
  const Summary dfs = explore_all(s, "dfs");
  const Summary dpor = explore_all(s, "dpor");
  EXPECT_EQ(dpor.final_states, dfs.final_states);
  EXPECT_EQ(dpor.traces, dfs.traces);
  EXPECT_EQ(dpor.executions, traces_run_once(dfs, dpor));
}

TEST(Dpor, ReadersAndWritersWhoWaitStayOptimal) {
  // Readers wait while a writer holds the lock or waits for it (writer preference); a writer
  // waits for the readers. A reader's wait races where it begins, and neither kind of wait
  // races with the release of a holder that excluded it (Nidhugg's lock races): optimal mode
  // covers them, one execution per trace.
  const Scenario s = scenario_from_json(script_scenario({{"a", {"rlock w", "write x 1", "runlock w", "rlock w", "read y r", "runlock w"}},
                                                         {"b", {"lock w", "write x 2", "write y 2", "unlock w"}},
                                                         {"c", {"rlock w", "read x r", "runlock w"}}},
                                                        {{"vars", {{"x", 0}, {"y", 0}}}}, {{"time", "untimed"}}));
  const Summary dfs = explore_all(s, "dfs");
  const Summary dpor = explore_all(s, "dpor");
  EXPECT_FALSE(dpor.restarted);
  EXPECT_EQ(dpor.redundant, 0u);
  EXPECT_EQ(dpor.final_states, dfs.final_states);
  EXPECT_EQ(dpor.traces, dfs.traces);
  EXPECT_EQ(dpor.executions, traces_run_once(dfs, dpor));
}

TEST(Dpor, FindsTheDeadlockAndTheLostUpdate) {
  auto deadlock = script_scenario({{"a", {"lock m1", "lock m2", "unlock m2", "unlock m1"}},
                                   {"b", {"lock m2", "lock m1", "unlock m1", "unlock m2"}}});
  EXPECT_EQ(testing::check(scenario_from_json(deadlock), {.settings = {.strategy = "dpor"}}).result.verdict, Verdict::deadlock);
  auto lost = script_scenario({{"a", {"read x r", "write x r+1"}}, {"b", {"read x r", "write x r+1"}}}, {{"check", {"x == 2"}}});
  EXPECT_EQ(testing::check(scenario_from_json(lost), {.settings = {.strategy = "dpor"}}).result.verdict, Verdict::violation);
}

TEST(Dpor, AgreesWithDfsOnEveryScenarioOfTheRepository) {
  for (const char* name : {"script/cas-once.json", "script/lock-order-deadlock.json", "script/lost-update.json",
                           "script/rwmutex-recursive-read.json", "script/untimed-lock-timeout-fires.json",
                           "script/timed-same-instant.json", "bench/lockinc-4.json"}) {
    const Scenario s = load_scenario(std::string(lockstep_source_dir()) + "/scenarios/" + name);
    const Summary dfs = explore_all(s, "dfs");
    const Summary dpor = explore_all(s, "dpor");
    EXPECT_EQ(dpor.final_states, dfs.final_states) << name;
    EXPECT_EQ(dpor.verdicts, dfs.verdicts) << name;
    EXPECT_EQ(dpor.executions, traces_run_once(dfs, dpor)) << name;
    EXPECT_EQ(dpor.traces, dfs.traces) << name;
  }
}

// ---- Random programs ----------------------------------------------------------------------

const std::vector<std::string> kVars = {"x", "y"};
const std::vector<std::string> kMutexes = {"m", "n"};

std::string pick(const std::vector<std::string>& v) { return v[*rc::gen::inRange<std::size_t>(0, v.size())]; }

// An ordered observation in scope 0, 1 or the global one, of a literal or the register.
std::string gen_observe() {
  const std::string scope = pick({"0", "1", "*"});
  return "observe " + scope + " " + (*rc::gen::inRange(0, 3) == 0 ? std::string("r") : std::to_string(*rc::gen::inRange(1, 4)));
}

std::string gen_plain_op() {
  const std::string var = pick(kVars);
  switch (*rc::gen::inRange(0, 4)) {
    case 0: return "read " + var + " r";
    case 1: return "write " + var + " " + std::to_string(*rc::gen::inRange(0, 2));
    case 2: return "write " + var + " r+1";
    default: return "cas " + var + " " + pick({"0", "1", "r"}) + " " + pick({"1", "2", "r+1"}) + " ok";
  }
}

// 2-3 actors (up to max_actors), at most 9 (budget) visible operations in all: reads, writes, compare-and-swaps,
// critical sections (of a mutex, a try, a reader/writer mutex's either side), timed lock
// attempts, sleeps, explored choices (`choose r n`, read by the ops after it); and ordered observations in scopes (each carried by the step before it,
// or a step of its own when first).
Actors gen_program(int max_actors = 3, int budget = 9) {
  Actors actors;
  const int n = *rc::gen::inRange(2, max_actors + 1);
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> ops;
    const int k = *rc::gen::inRange(1, 4);
    for (int i = 0; i < k && budget > 0; ++i) {
      const int kind = *rc::gen::inRange(0, 10);
      if (kind < 2 && budget >= 3) {
        const std::string m = pick(kMutexes);
        ops.insert(ops.end(), {"lock " + m, gen_plain_op(), "unlock " + m});
        budget -= 3;
      } else if (kind == 2) {
        ops.push_back("lockfor " + pick(kMutexes) + " 5 got");
        --budget;
      } else if (kind == 3) {
        ops.push_back("sleep " + std::to_string(*rc::gen::inRange(0, 3)));
        --budget;
      } else if (kind == 4) {
        ops.push_back(gen_observe());
      } else if (kind == 5) {
        ops.push_back("trylock " + pick(kMutexes) + " got");
        --budget;
      } else if (kind == 6 && budget >= 3) {  // a try's critical section
        const std::string m = pick(kMutexes);
        ops.insert(ops.end(), {"trylock " + m + " t", gen_plain_op(), "unlockif " + m + " t"});
        budget -= 3;
      } else if (kind == 8 && *rc::gen::inRange(0, 3) == 0) {  // an explored choice (Env::choose) into r
        ops.push_back("choose r " + std::to_string(*rc::gen::inRange(2, 4)));
        --budget;
      } else if (kind == 7 && budget >= 3) {  // a reader's or a writer's section of rwmutex w
        const bool reader = *rc::gen::inRange(0, 2) == 0;
        ops.insert(ops.end(), {reader ? "rlock w" : "lock w", gen_plain_op(), reader ? "runlock w" : "unlock w"});
        budget -= 3;
      } else {
        ops.push_back(gen_plain_op());
        --budget;
      }
    }
    actors.emplace_back(std::string(1, static_cast<char>('a' + a)), ops);
  }
  return actors;
}

// Per-scope invariants: for each scope observed in, a check on the order of its events (the
// scope's log, sim's final state shows every log), so verdicts depend on orders in scopes.
nlohmann::json gen_scope_checks(const Actors& actors) {
  nlohmann::json checks = nlohmann::json::array();
  std::set<std::string> scopes;
  for (const auto& [name, ops] : actors) {
    for (const auto& op : ops) {
      if (op.starts_with("observe ")) scopes.insert(op.substr(8, op.find(' ', 8) - 8));
    }
  }
  for (const auto& scope : scopes) {
    checks.push_back(fmt::format("@{} {} {}", scope, pick({"!=", "<", ">="}), *rc::gen::inRange(0, 40)));
  }
  return checks;
}

// dfs's and dpor's summaries of the program, untimed, with per-scope checks (logged).
std::pair<Summary, Summary> dfs_and_dpor_untimed(const Actors& actors) {
  nlohmann::json config = {{"vars", {{"x", 0}, {"y", 0}}}};
  if (auto checks = gen_scope_checks(actors); !checks.empty()) config["check"] = checks;
  const nlohmann::json doc = script_scenario(actors, config, {{"time", "untimed"}});
  RC_LOG() << doc.dump() << "\n";
  const Scenario s = scenario_from_json(doc);
  Summary dfs = explore_all(s, "dfs");
  Summary dpor = explore_all(s, "dpor");
  RC_LOG() << "dfs: " << dfs.executions << " executions, " << dfs.traces.size() << " traces; dpor: " << dpor.executions
           << " executions, " << dpor.redundant << " redundant" << (dpor.restarted ? ", fell back" : "") << "\n";
  return {std::move(dfs), std::move(dpor)};
}

// dpor reached dfs's final states and verdicts, and ran exactly dfs's traces, one execution
// each (under optimal DPOR's footprints while it stayed optimal).
void assert_as_dfs(const Summary& dfs, const Summary& dpor) {
  RC_ASSERT(dpor.final_states == dfs.final_states);
  RC_ASSERT(dpor.verdicts == dfs.verdicts);
  RC_ASSERT(dpor.executions == traces_run_once(dfs, dpor));
  RC_ASSERT(dpor.traces == dfs.traces);
}

// The same where the timing model's choices (a duration, a stall) run: a form names the steps,
// not the values chosen, so one trace may hold several executions (each a value of its
// choices): dpor reaches the same final states (the clock values read among them) and
// verdicts, in no more executions than dfs. Its traces are not compared: under jitter,
// source-DPOR misses some forms dfs runs (docs/notes.md, "Timing model"; issue 62's choices
// as transitions), none so far with a state or verdict of its own.
void assert_as_dfs_with_choices(const Summary& dfs, const Summary& dpor) {
  RC_ASSERT(dpor.final_states == dfs.final_states);
  RC_ASSERT(dpor.verdicts == dfs.verdicts);
  RC_ASSERT(dpor.executions <= dfs.executions);
}

RC_GTEST_PROP(DporProperties, SameStatesVerdictsAndOneExecutionPerTraceAsDfs, ()) {
  const Actors actors = gen_program();
  const TimeMode time = *rc::gen::element(TimeMode::untimed, TimeMode::timed);
  nlohmann::json config = {{"vars", {{"x", 0}, {"y", 0}}}};
  if (auto checks = gen_scope_checks(actors); !checks.empty()) config["check"] = checks;
  nlohmann::json doc = script_scenario(actors, config, {{"time", time == TimeMode::timed ? "timed" : "untimed"}});
  RC_LOG() << doc.dump() << "\n";
  const Scenario s = scenario_from_json(doc);
  const Summary dfs = explore_all(s, "dfs");
  const Summary dpor = explore_all(s, "dpor");
  RC_LOG() << "dfs: " << dfs.executions << " executions, " << dfs.traces.size() << " traces, " << dfs.final_states.size()
           << " final states; dpor: " << dpor.executions << " executions, " << dpor.redundant << " redundant, "
           << dpor.final_states.size() << " final states\n";
  RC_TAG(dpor.restarted ? "dpor fell back to source-DPOR" : "dpor optimal throughout");
  RC_TAG(dpor.redundant == 0 ? "no sleep-set-blocked executions" : "some sleep-set-blocked executions");
  if (!dpor.restarted) RC_ASSERT(dpor.redundant == 0u);
  assert_as_dfs(dfs, dpor);
  if (!dpor.restarted) RC_ASSERT(dpor.optimal_traces == dfs.optimal_traces);
}

// A timed program under timing model `timing` (logged): dfs and dpor reach the same states and
// verdicts (assert_as_dfs_with_choices); 0 sleep-set-blocked executions while dpor stays optimal.
void assert_timed_as_dfs(const Actors& actors, const nlohmann::json& timing) {
  nlohmann::json config = {{"vars", {{"x", 0}, {"y", 0}}}};
  if (auto checks = gen_scope_checks(actors); !checks.empty()) config["check"] = checks;
  const nlohmann::json doc = script_scenario(actors, config, {{"time", "timed"}, {"timing", timing}});
  RC_LOG() << doc.dump() << "\n";
  const Scenario s = scenario_from_json(doc);
  const Summary dfs = explore_all(s, "dfs");
  const Summary dpor = explore_all(s, "dpor");
  RC_LOG() << "dfs: " << dfs.executions << " executions, " << dfs.traces.size() << " traces; dpor: " << dpor.executions
           << " executions, " << dpor.redundant << " redundant\n";
  RC_TAG(dpor.restarted ? "dpor fell back to source-DPOR" : "dpor optimal throughout");
  assert_as_dfs_with_choices(dfs, dpor);
  if (!dpor.restarted) {  // each choice's values are transitions: dfs's traces (with the values chosen), one execution each
    RC_ASSERT(dpor.redundant == 0u);
    RC_ASSERT(dpor.optimal_traces == dfs.optimal_traces);
    RC_ASSERT(dpor.executions == dfs.optimal_traces.size());
  }
}

// The timing model (model/timing.h) as the oracle sees it: timed programs whose timers last
// as written, at either end of their range or at a region point, explored as choices; dpor
// reaches every state and verdict dfs does (issue 48's oracle, in part: jitter on sleeps and
// timed locks; until this stop its search ran without the timing model: explore_all).
RC_GTEST_PROP(DporProperties, SameStatesAndVerdictsAsDfsWithTimingChoices, ()) {
  const Actors actors = gen_program();
  assert_timed_as_dfs(actors, {{"jitter", *rc::gen::element(0.25, 0.5, 0.9)}});
}

// The timing model's stalls (model/timing.h): timed programs whose actors read their clock
// (`clock c`: a stall may follow, before whatever step comes next, a statement or not) and
// sleep, with one or two stalls declared; dpor reaches every state (the clock values read
// included) and verdict dfs does. Not with jitter too: dpor then misses states dfs reaches
// (docs/notes.md, "Timing model").
RC_GTEST_PROP(DporProperties, SameStatesAndVerdictsAsDfsWithStallsAfterClockReads, ()) {
  Actors actors = gen_program();
  for (auto& [name, ops] : actors) {
    if (*rc::gen::inRange(0, 3) == 0) continue;
    const auto at = static_cast<std::ptrdiff_t>(*rc::gen::inRange<std::size_t>(0, ops.size() + 1));
    ops.insert(ops.begin() + at, "clock c");
  }
  assert_timed_as_dfs(actors, {{"stalls", {{"count", *rc::gen::inRange(1, 3)}, {"max_ms", *rc::gen::element(1, 2, 5)}}}});
}

// The whole timing model at once: jitter, clock skew and stalls after clock reads. Each
// choice's values are transitions of their own (dpor's optimal mode), so dpor runs dfs's
// traces with the values chosen, one execution each, while it stays optimal.
RC_GTEST_PROP(DporProperties, SameTracesAsDfsWithJitterSkewAndStalls, ()) {
  Actors actors = gen_program();
  for (auto& [name, ops] : actors) {
    if (*rc::gen::inRange(0, 2) == 0) continue;
    const auto at = static_cast<std::ptrdiff_t>(*rc::gen::inRange<std::size_t>(0, ops.size() + 1));
    ops.insert(ops.begin() + at, "clock c");
  }
  assert_timed_as_dfs(actors, {{"jitter", *rc::gen::element(0.25, 0.5)},
                               {"skew_ms", *rc::gen::element(0, 1)},
                               {"stalls", {{"count", 1}, {"max_ms", *rc::gen::element(1, 5)}}}});
}

// Checkpoints (sim/explore/checkpoint.h): the search cut after a random number of executions, again
// and again, each piece resumed from the last one's checkpoint in a new explorer, runs the
// same executions in the same order as one uninterrupted search (dpor, also where it falls
// back to source-DPOR, and source-dpor).
RC_GTEST_PROP(DporProperties, AResumedSearchRunsTheSameExecutionsInTheSameOrder, ()) {
  const Actors actors = gen_program();
  const TimeMode time = *rc::gen::element(TimeMode::untimed, TimeMode::timed);
  const std::string strategy = *rc::gen::element(std::string("dpor"), std::string("source-dpor"));
  const nlohmann::json doc =
      script_scenario(actors, {{"vars", {{"x", 0}, {"y", 0}}}}, {{"time", time == TimeMode::timed ? "timed" : "untimed"}});
  RC_LOG() << strategy << " " << doc.dump() << "\n";
  const Scenario s = scenario_from_json(doc);
  auto run = [&](std::uint64_t max_executions, const std::optional<nlohmann::json>& resume,
                 std::optional<nlohmann::json>* saved) {
    FoataRecorder recorder(sim::make_strategy(strategy, 1));
    sim::ExploreOptions options;
    options.stop_at_first = false;
    options.limits.max_steps = 1000;
    options.limits.time = s.explore.time;
    options.max_executions = max_executions;
    options.on_execution = [&](const sim::ExecutionResult&) { recorder.keep_last(); };
    if (resume) options.resume = std::make_shared<const nlohmann::json>(*resume);
    if (saved != nullptr) options.checkpoint = [saved](const nlohmann::json& j) { *saved = j; };
    const sim::ExploreResult r = sim::explore_system(*s.configured, recorder, options);
    recorder.flush();
    return std::tuple{r, recorder.forms(), recorder.restarted()};
  };
  const auto [whole, whole_forms, whole_restarted] = run(0, std::nullopt, nullptr);
  const std::uint64_t total = whole.stats.executions + whole.stats.redundant;
  const auto piece = static_cast<std::uint64_t>(*rc::gen::inRange<int>(1, static_cast<int>(std::max<std::uint64_t>(2, total / 4 + 1))));
  std::vector<std::string> forms;
  std::optional<nlohmann::json> checkpoint;
  sim::ExploreResult last;
  int pieces = 0;
  for (;;) {
    std::optional<nlohmann::json> saved;
    auto [r, piece_forms, restarted] = run(piece, checkpoint, &saved);
    ++pieces;
    if (restarted) forms.clear();  // the search began anew as source-DPOR: what came before does not count
    forms.insert(forms.end(), piece_forms.begin(), piece_forms.end());
    last = r;
    RC_ASSERT(saved.has_value());
    checkpoint = saved;
    if (!r.stop_reason.starts_with("bound of")) break;
    RC_ASSERT(pieces < 10000);
  }
  RC_TAG(pieces > 3 ? "resumed more than twice" : "resumed at most twice");
  RC_ASSERT(last.exhaustive);
  RC_ASSERT(last.stats.executions == whole.stats.executions);
  RC_ASSERT(last.stats.redundant == whole.stats.redundant);
  RC_ASSERT(last.stats.steps == whole.stats.steps);
  RC_ASSERT(forms == whole_forms);
}

// Several threads (ExploreOptions::jobs) and other processes (ExploreOptions::exchange, in
// memory): the same counts, steps, verdict and first failure (its execution and decisions)
// as one thread, stopping at the first failure or not, with an execution bound or not;
// subtrees explored by other threads and processes are taken (tagged).
void several_threads_explore_what_one_thread_does(const std::string& strategy, const Actors& actors) {
  const TimeMode time = *rc::gen::element(TimeMode::untimed, TimeMode::timed);
  nlohmann::json config = {{"vars", {{"x", 0}, {"y", 0}}}};
  if (auto checks = gen_scope_checks(actors); !checks.empty()) config["check"] = checks;
  const nlohmann::json doc = script_scenario(actors, config, {{"time", time == TimeMode::timed ? "timed" : "untimed"}});
  const bool stop_at_first = *rc::gen::arbitrary<bool>();
  const std::uint64_t bound = *rc::gen::element<std::uint64_t>(0, 0, 1, 5, 40);
  const int jobs = *rc::gen::inRange(1, 5);
  // Other processes too (check --queue): subtrees explored from their text alone.
  const bool processes = jobs == 1 || *rc::gen::arbitrary<bool>();
  RC_LOG() << strategy << " jobs " << jobs << " processes " << processes << " stop_at_first " << stop_at_first << " bound "
           << bound << " " << doc.dump() << "\n";
  const Scenario s = scenario_from_json(doc);
  auto options_for = [&](int threads) {
    sim::ExploreOptions options;
    options.stop_at_first = stop_at_first;
    options.max_executions = bound;
    options.limits.max_steps = 1000;
    options.limits.time = s.explore.time;
    options.jobs = threads;
    options.speculate_after = 0;
    return options;
  };
  auto run = [&](int threads, bool split) {
    sim::ExploreOptions options = options_for(threads);
    std::optional<real::TaskThreads> pool;
    if (threads > 1) options.spawn = pool.emplace(threads).spawner();
    if (split) {
      options.exchange = std::make_shared<testing::InMemoryExchange>([&](const std::string& task) {
        auto fresh = sim::make_strategy(strategy, 1);
        return sim::explore_subtree_task(*s.configured, *fresh, task, options_for(1)).result;
      });
    }
    auto search = sim::make_strategy(strategy, 1);
    return sim::explore_system(*s.configured, *search, options);
  };
  const sim::ExploreResult one = run(1, false);
  const sim::ExploreResult several = run(jobs, processes);
  RC_TAG(several.speculation.taken > 0 ? "subtrees taken from other threads" : "no subtree taken");
  if (processes) RC_TAG(several.speculation.remote_taken > 0 ? "subtrees taken from other processes" : "none from other processes");
  RC_ASSERT(several.verdict == one.verdict);
  RC_ASSERT(several.exhaustive == one.exhaustive);
  RC_ASSERT(several.stop_reason == one.stop_reason);
  RC_ASSERT(several.stats.executions == one.stats.executions);
  RC_ASSERT(several.stats.redundant == one.stats.redundant);
  RC_ASSERT(several.stats.steps == one.stats.steps);
  RC_ASSERT(several.stats.failures == one.stats.failures);
  RC_ASSERT(several.stats.by_verdict == one.stats.by_verdict);
  RC_ASSERT(several.first_failure.has_value() == one.first_failure.has_value());
  if (one.first_failure) {
    RC_ASSERT(several.first_failure->execution == one.first_failure->execution);
    RC_ASSERT(several.first_failure->decisions == one.first_failure->decisions);
    RC_ASSERT(several.first_failure->result.message == one.first_failure->result.message);
  }
}

RC_GTEST_PROP(DporProperties, SeveralThreadsExploreWhatOneThreadDoes, ()) {
  several_threads_explore_what_one_thread_does("dpor", gen_program(4, 12));  // larger: more branches to give away
}

// dfs gives its pending branches away too (sim/strategies/dfs_strategy.cc): a subtree is every
// execution below a prefix, so nothing is ever dropped.
RC_GTEST_PROP(DporProperties, DfsOnSeveralThreadsExploresWhatOneThreadDoes, ()) {
  several_threads_explore_what_one_thread_does("dfs", gen_program(3, 9));
}

// ---- Symmetry (sim/explore/symmetry.h) -------------------------------------------------------------

// A final state up to renaming the actors of the classes: its register entries
// ("a.r=1") renamed, then sorted, the least over the renamings.
std::string state_up_to(const std::string& state, const std::vector<std::string>& names,
                        const std::vector<std::vector<ActorId>>& renamings) {
  std::string best;
  for (const auto& rename : renamings) {
    std::vector<std::string> tokens;
    std::size_t at = 0;
    while (at < state.size()) {
      const std::size_t end = std::min(state.find(' ', at), state.size());
      std::string token = state.substr(at, end - at);
      if (const auto dot = token.find('.'); dot != std::string::npos) {
        for (std::size_t a = 0; a < names.size(); ++a) {
          if (token.compare(0, dot, names[a]) == 0 && dot == names[a].size()) {
            token = names[rename[a]] + token.substr(dot);
            break;
          }
        }
      }
      if (!token.empty()) tokens.push_back(std::move(token));
      at = end + 1;
    }
    std::sort(tokens.begin(), tokens.end());
    std::string text;
    for (const auto& t : tokens) text += t + " ";
    if (best.empty() || text < best) best = std::move(text);
  }
  return best;
}

struct SymmetricSummary {
  std::set<std::string> classes;  // traces up to permutations of the identical actors
  std::set<std::string> states;   // final states, likewise
  std::set<std::string> verdicts;  // verdict and invariant
  std::uint64_t executions = 0;
  std::uint64_t distinct_traces = 0;  // distinct traces among the executions (not up to permutations)
  std::uint64_t redundant = 0;
  bool restarted = false;
  int symmetric_actors = 0;
  bool exhaustive = false;
};

SymmetricSummary explore_symmetric(const Scenario& s, const std::string& strategy, bool symmetry,
                                   const std::vector<std::vector<ActorId>>& classes, const std::vector<std::string>& names,
                                   int jobs = 1, bool own_pools = false, std::uint64_t max_executions = 300'000) {
  FoataRecorder recorder(sim::make_strategy(strategy, 1));
  recorder.up_to_permutations_of(classes);
  if (own_pools) {
    recorder.rename_own_pools();
    recorder.classes_by_declared_footprints();
  }
  auto plain = sim::make_strategy(strategy, 1);  // several threads: the strategy itself speculates
  SymmetricSummary out;
  const auto renamings = testing::permutations_of(classes, static_cast<int>(names.size()));
  sim::ExploreOptions options;
  options.stop_at_first = false;
  options.limits.max_steps = 1000;
  options.limits.time = s.explore.time;
  options.limits.record_final_state = true;
  options.limits.symmetry = symmetry;
  options.max_executions = max_executions;  // a program dfs cannot finish under it is discarded
  options.jobs = jobs;
  options.speculate_after = 0;
  std::optional<real::TaskThreads> pool;
  if (jobs > 1) {
    options.spawn = pool.emplace(jobs).spawner();
  } else {
    options.on_execution = [&](const sim::ExecutionResult& r) {
      recorder.keep_last();
      out.verdicts.insert(std::string(verdict_name(r.verdict)) + ":" + r.invariant);
      if (!r.final_state.empty()) out.states.insert(state_up_to(r.final_state, names, renamings));
    };
  }
  const auto result = sim::explore_system(*s.configured, jobs > 1 ? *plain : static_cast<sim::Strategy&>(recorder), options);
  recorder.flush();
  out.exhaustive = result.exhaustive;
  out.executions = result.stats.executions;
  out.redundant = result.stats.redundant;
  out.restarted = recorder.restarted();
  out.symmetric_actors = result.symmetry.actors;
  out.distinct_traces = std::set<std::string>(recorder.forms().begin(), recorder.forms().end()).size();
  out.classes.insert(recorder.forms_up_to_permutations().begin(), recorder.forms_up_to_permutations().end());
  return out;
}

// k interchangeable actors a, b, ... with the same ops: the actors, their names, their ids.
struct Members {
  Actors actors;
  std::vector<std::string> names;
  std::vector<ActorId> ids;
};
Members members_of(int k, const std::vector<std::string>& ops) {
  Members m;
  for (int i = 0; i < k; ++i) {
    m.names.emplace_back(1, static_cast<char>('a' + i));
    m.ids.push_back(i);
    m.actors.emplace_back(m.names.back(), ops);
  }
  return m;
}

// dfs, dpor, symmetric dpor and symmetric dfs on one program of `k` interchangeable actors:
// symmetric dpor reaches every final state and verdict dfs does, never in more executions than
// dpor, one per trace while optimal; symmetric dfs covers what dfs does. The classes of traces
// up to renaming are compared too, but not with pools of the members' own: a backend's pid
// (and so its session's objects) is numbered in the order of first checkouts, which dpor
// does not order (docs/notes.md). Returns symmetric dpor's summary.
SymmetricSummary check_symmetric(const Scenario& s, const std::vector<std::vector<ActorId>>& classes,
                                 const std::vector<std::string>& names, int k, bool own_pools) {
  // Own pools (statements of several steps each): a program dfs cannot finish in 4,000
  // executions is discarded, so make test's 500 programs take seconds.
  const SymmetricSummary dfs = explore_symmetric(s, "dfs", false, classes, names, 1, own_pools, own_pools ? 4'000 : 300'000);
  RC_PRE(dfs.exhaustive);  // untimed timeouts can make millions of interleavings: too many for the oracle
  const SymmetricSummary dpor = explore_symmetric(s, "dpor", false, classes, names, 1, own_pools);
  const SymmetricSummary sym = explore_symmetric(s, "dpor", true, classes, names, 1, own_pools);
  const SymmetricSummary dfs_sym = explore_symmetric(s, "dfs", true, classes, names, 1, own_pools);
  RC_LOG() << "dfs: " << dfs.executions << " executions, " << dfs.classes.size() << " classes; dpor: " << dpor.executions
           << "; symmetric dpor: " << sym.executions << (sym.restarted ? " (fell back)" : "") << "; symmetric dfs: "
           << dfs_sym.executions << "\n";
  RC_TAG(sym.restarted ? "symmetric dpor fell back to source-DPOR" : "symmetric dpor optimal throughout");
  RC_TAG(sym.executions < dpor.executions ? "fewer executions" : "as many executions");
  RC_ASSERT(dpor.exhaustive && sym.exhaustive && dfs_sym.exhaustive);
  RC_ASSERT(sym.symmetric_actors == k);
  if (!own_pools) RC_ASSERT(sym.classes == dfs.classes);
  RC_ASSERT(sym.states == dfs.states);
  RC_ASSERT(sym.verdicts == dfs.verdicts);
  RC_ASSERT(sym.executions <= dpor.executions);
  // One execution per trace where dpor is exact (with statements, optimal mode keeps declared
  // footprints: an advisory unlock of a key not held is a read dpor orders as a write).
  if (!sym.restarted && (!own_pools || (!dpor.restarted && dpor.distinct_traces == dpor.executions))) {
    RC_ASSERT(sym.redundant == 0u);
    RC_ASSERT(sym.distinct_traces == sym.executions);
  }
  if (!own_pools) RC_ASSERT(dfs_sym.classes == dfs.classes);
  RC_ASSERT(dfs_sym.states == dfs.states);
  RC_ASSERT(dfs_sym.verdicts == dfs.verdicts);
  RC_ASSERT(dfs_sym.executions <= dfs.executions);
  return sym;
}

// 2-3 identical actors (the same ops, declared interchangeable) and perhaps one other, up
// to 10 operations in all, untimed or timed. Symmetric dpor explores every trace dfs finds
// up to a permutation of the identical actors (the same classes of traces, final states and
// verdicts), each execution a different trace, none sleep-set blocked while optimal, never
// more executions than without symmetry. dfs with symmetry (the scheduler's filter alone)
// covers the same classes, and symmetric dpor on two threads runs as many executions.
RC_GTEST_PROP(DporProperties, SymmetricDporExploresEveryClassDfsFinds, ()) {
  const int k = *rc::gen::inRange(2, 4);
  const Actors base = gen_program(2, k == 2 ? 7 : 5);
  auto [actors, names, members] = members_of(k, base[0].second);
  if (*rc::gen::arbitrary<bool>()) {
    names.emplace_back("z");
    actors.emplace_back("z", base[1].second);
  }
  std::size_t ops = 0;
  for (const auto& [name, list] : actors) ops += list.size();
  RC_PRE(ops <= 10u);
  const TimeMode time = *rc::gen::element(TimeMode::untimed, TimeMode::timed);
  nlohmann::json config = {{"vars", {{"x", 0}, {"y", 0}}}, {"symmetric", nlohmann::json::array({nlohmann::json(std::vector<std::string>(names.begin(), names.begin() + k))})}};
  if (auto checks = gen_scope_checks(actors); !checks.empty()) config["check"] = checks;
  const nlohmann::json doc = script_scenario(actors, config, {{"time", time == TimeMode::timed ? "timed" : "untimed"}});
  RC_LOG() << doc.dump() << "\n";
  const Scenario s = scenario_from_json(doc);
  const std::vector<std::vector<ActorId>> classes = {members};
  const SymmetricSummary sym = check_symmetric(s, classes, names, k, false);
  const SymmetricSummary two = explore_symmetric(s, "dpor", true, classes, names, 2);
  RC_ASSERT(two.exhaustive && two.executions == sym.executions);
}

// Symmetry with pools of the actors' own (config.own_pools): 2-3 identical actors whose ops
// are mostly statements (advisory locks tried and let go, a table's insert and count) and plain ops, and
// perhaps one other. A member's checkout is private (sim/explore/symmetric_starts.h), so
// members start at their first statement, in id order. As above: every trace dfs finds, up
// to a permutation of the members: the same final states and verdicts, each execution a
// different trace while optimal, never more executions.
// Statements that never wait (a wait's deadlock check reads every lock held, which dpor does
// not order: docs/notes.md), and plain ops.
std::string gen_statement_op() {
  switch (*rc::gen::inRange(0, 6)) {
    case 0: return "sql r SELECT pg_try_advisory_lock(1)";
    case 1: return "sql - SELECT pg_advisory_unlock(1)";
    case 2: return "sql r SELECT pg_try_advisory_lock(2)";
    case 3: return "sql - INSERT INTO log VALUES (1)";
    case 4: return "sql r SELECT count(*) FROM log";
    default: return gen_plain_op();
  }
}

RC_GTEST_PROP(DporProperties, SymmetricDporWithOwnPoolsReachesEveryStateDfsFinds, ()) {
  const int k = *rc::gen::inRange(2, 4);
  std::vector<std::string> member_ops = {gen_statement_op()};
  // A statement is three steps or more (checkout, statement, return): dfs runs every
  // interleaving, so at most 9 steps in all (1,680 executions).
  const int more = k == 2 ? *rc::gen::inRange(0, 2) : 0;
  for (int i = 0; i < more; ++i) member_ops.push_back(*rc::gen::inRange(0, 4) == 0 ? gen_observe() : gen_statement_op());
  auto [actors, names, members] = members_of(k, member_ops);
  if (k == 2 && more == 0 && *rc::gen::arbitrary<bool>()) {
    names.emplace_back("z");
    actors.emplace_back("z", std::vector<std::string>{gen_statement_op()});
  }
  const TimeMode time = *rc::gen::element(TimeMode::untimed, TimeMode::timed);
  nlohmann::json config = {{"vars", {{"x", 0}, {"y", 0}}},
                           {"own_pools", true},
                           {"sql_setup", {"CREATE TABLE log (v int NOT NULL)"}},
                           {"symmetric", nlohmann::json::array({nlohmann::json(std::vector<std::string>(names.begin(), names.begin() + k))})}};
  if (auto checks = gen_scope_checks(actors); !checks.empty()) config["check"] = checks;
  const nlohmann::json doc = script_scenario(actors, config, {{"time", time == TimeMode::timed ? "timed" : "untimed"}});
  RC_LOG() << doc.dump() << "\n";
  const Scenario s = scenario_from_json(doc);
  const std::vector<std::vector<ActorId>> classes = {members};
  (void)check_symmetric(s, classes, names, k, true);
}

// Reader/writer mutexes: 2-4 actors, each with one or two sections of rwmutex w (a reader's
// or a writer's), a mutex's, or single operations (no CAS: it ends optimal mode), up to 12
// operations. Readers wait while a writer holds w or waits for it, writers wait for readers:
// dpor must run exactly dfs's traces, one execution each while it stays optimal (most do;
// two writers behind a reader may still end optimal mode).
Actors gen_reader_writer_program() {
  Actors actors;
  const int n = *rc::gen::inRange(2, 5);
  int budget = 12;
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> ops;
    const int k = *rc::gen::inRange(1, 3);
    for (int i = 0; i < k && budget > 0; ++i) {
      const int kind = *rc::gen::inRange(0, 10);
      const std::string var = pick(kVars);
      const std::string plain = *rc::gen::inRange(0, 2) == 0 ? "read " + var + " r" : "write " + var + " r+1";
      if (kind < 6 && budget >= 3) {
        const bool reader = kind < 3;
        ops.insert(ops.end(), {reader ? "rlock w" : "lock w", plain, reader ? "runlock w" : "unlock w"});
        budget -= 3;
      } else if (kind < 8 && budget >= 3) {
        ops.insert(ops.end(), {"lock m", plain, "unlock m"});
        budget -= 3;
      } else if (kind == 8) {
        ops.push_back(gen_observe());
      } else {
        ops.push_back(plain);
        --budget;
      }
    }
    actors.emplace_back(std::string(1, static_cast<char>('a' + a)), ops);
  }
  return actors;
}

RC_GTEST_PROP(DporProperties, ReadersAndWritersRunEveryTraceOnce, ()) {
  const auto [dfs, dpor] = dfs_and_dpor_untimed(gen_reader_writer_program());
  RC_TAG(dpor.restarted ? "dpor fell back to source-DPOR" : "dpor optimal throughout");
  if (!dpor.restarted) RC_ASSERT(dpor.redundant == 0u);
  assert_as_dfs(dfs, dpor);
}

// Optimal mode's own ground: programs whose actors never wait and never have a timer
// (reads, writes, compare-and-swaps that may fail, ordered observations in scopes, a try's
// critical section); 2-4 actors, up to 10 operations. dpor must stay optimal on those
// without a failing CAS and be exactly dfs's traces, with no execution sleep-set blocked.
Actors gen_pure_program() {
  Actors actors;
  const int n = *rc::gen::inRange(2, 5);
  int budget = 10;
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> ops;
    const int k = *rc::gen::inRange(1, 5);
    for (int i = 0; i < k && budget > 0; ++i, --budget) {
      const int kind = *rc::gen::inRange(0, 10);
      if (kind == 0 && budget >= 3) {
        const std::string m = pick(kMutexes);
        ops.insert(ops.end(), {"trylock " + m + " t", gen_plain_op(), "unlockif " + m + " t"});
        budget -= 2;
      } else {
        ops.push_back(kind < 3 ? gen_observe() : gen_plain_op());
      }
    }
    actors.emplace_back(std::string(1, static_cast<char>('a' + a)), ops);
  }
  return actors;
}

RC_GTEST_PROP(DporProperties, OptimalOnProgramsThatNeverWait, ()) {
  const auto [dfs, dpor] = dfs_and_dpor_untimed(gen_pure_program());
  RC_TAG(dpor.restarted ? "fell back" : "optimal throughout");
  assert_as_dfs(dfs, dpor);
  if (!dpor.restarted) RC_ASSERT(dpor.optimal_traces == dfs.optimal_traces);
  if (!dpor.restarted) RC_ASSERT(dpor.redundant == 0u);
}

// Files and the crash fault (model/filesystem.h): one actor may crash its process or the
// machine at any step after its `crash`; the others write, fsync, rename and read two files
// and a variable. The crash step's footprint (the filesystem, every doomed actor's pending
// object, the releases folded into it) must keep dpor as complete as dfs.
std::string gen_file_op() {
  const std::string f = pick({"f", "g"});
  switch (*rc::gen::inRange(0, 7)) {
    case 0: return "fwrite " + f + " " + std::to_string(*rc::gen::inRange(1, 3));
    case 1: return "fwrite " + f + " r+1";
    case 2: return "fread " + f + " r";
    case 3: return "fsync " + f;
    case 4: return "fsync /";
    case 5: return f == "f" ? "frename f g" : "frename g f";
    default: return gen_plain_op();
  }
}

Actors gen_file_program() {
  Actors actors;
  const int n = *rc::gen::inRange(2, 4);
  const int crasher = *rc::gen::inRange(0, n);
  int budget = 8;
  for (int a = 0; a < n; ++a) {
    std::vector<std::string> ops;
    const int k = *rc::gen::inRange(1, 4);
    const int crash_at = a == crasher ? *rc::gen::inRange(0, k) : -1;
    for (int i = 0; i < k && budget > 0; ++i) {
      if (i == crash_at) ops.push_back(*rc::gen::element(std::string("crash machine"), std::string("crash process")));
      const int kind = *rc::gen::inRange(0, 10);
      if (kind == 0 && budget >= 3) {
        const std::string m = pick(kMutexes);
        ops.insert(ops.end(), {"lock " + m, gen_file_op(), "unlock " + m});
        budget -= 3;
      } else if (kind == 1) {
        ops.push_back("lockfor " + pick(kMutexes) + " 5 got");
        --budget;
      } else if (kind == 2) {
        ops.push_back("sleep " + std::to_string(*rc::gen::inRange(0, 3)));
        --budget;
      } else {
        ops.push_back(gen_file_op());
        --budget;
      }
    }
    actors.emplace_back(std::string(1, static_cast<char>('a' + a)), ops);
  }
  return actors;
}

RC_GTEST_PROP(DporProperties, FilesAndCrashesSameStatesAndVerdictsAsDfs, ()) {
  const Actors actors = gen_file_program();
  const TimeMode time = *rc::gen::element(TimeMode::untimed, TimeMode::timed);
  nlohmann::json config = {{"vars", {{"x", 0}, {"y", 0}}}};
  nlohmann::json doc = script_scenario(actors, config, {{"time", time == TimeMode::timed ? "timed" : "untimed"}});
  RC_LOG() << doc.dump() << "\n";
  const Scenario s = scenario_from_json(doc);
  const Summary dfs = explore_all(s, "dfs");
  const Summary dpor = explore_all(s, "dpor");
  RC_LOG() << "dfs: " << dfs.executions << " executions, " << dfs.final_states.size() << " final states; dpor: " << dpor.executions
           << " executions, " << dpor.final_states.size() << " final states\n";
  RC_TAG(dpor.restarted ? "fell back (a crash's choice)" : "optimal throughout");
  if (!dpor.restarted) RC_ASSERT(dpor.redundant == 0u);
  RC_ASSERT(dpor.final_states == dfs.final_states);
  RC_ASSERT(dpor.verdicts == dfs.verdicts);
  RC_ASSERT(dpor.executions <= dfs.executions);
}

}  // namespace
}  // namespace lockstep
