// tests/test_support.h: helpers shared by the test programs: scenarios from inline JSON,
// checking them, replaying their traces.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockstep/model/pg.h"
#include "lockstep/model/scenario.h"
#include "lockstep/sim/check.h"

namespace lockstep::testing {

// Parses a scenario given as JSON text (file name "<test>" in messages).
Scenario scenario_from_text(const std::string& json_text);
Scenario scenario_from_json(const nlohmann::json& document);

// A script scenario: actors as {name: [ops]}, optional config and explore settings.
nlohmann::json script_scenario(const std::vector<std::pair<std::string, std::vector<std::string>>>& actors,
                               const nlohmann::json& config = nullptr, const nlohmann::json& explore = nullptr);

sim::CheckReport check(const Scenario& scenario, const sim::CheckOverrides& overrides = {});

// Checks every scenario file in `dir` (GoogleTest expectations): each reaches its expected
// verdict, and each expected pass is exhaustive. Returns how many it checked.
int expect_every_scenario_as_expected(const std::string& dir);

// The whole stdout, stderr and exit code of `lockstep ARGS...` run in a shell.
struct CommandResult {
  int exit_code = -1;
  std::string out;
};
CommandResult run_lockstep(const std::string& args);

// A SQL statement's result, compactly: "TAG [v,v;v,v]" (NULL as NULL), or "ERROR sqlstate: message".
std::string shown(const pg::Result<pg::Rows>& r);

// SET, SET LOCAL, a SET rolled back, set_config, pg_sleep and prepared statements, run on one
// session by RealPg.SettingsAndPreparedStatementsAreTheServers and
// SqlSim.SettingsAndPreparedStatementsAreTheServers; kSettingOutcomes is what PostgreSQL 15
// gave for them.
extern const char* const kSettingOutcomes;
// Runs them, then the prepared statements, on c: the results, " | " between them.
std::string run_setting_statements(pg::Connection& c);

// REPEATABLE READ, two sessions taking turns (no statement waits): the snapshot at the first
// statement, reads of it, 40001 on a row changed or deleted since and on ON CONFLICT with a
// row it does not see. Run by RealPg.RepeatableReadIsTheServers and
// SqlSim.RepeatableReadIsTheServers; kRepeatableReadOutcomes is what PostgreSQL 15 gave.
// The table they use is made by kRepeatableReadSetup first (outside the sessions).
extern const std::vector<std::string> kRepeatableReadSetup;
// UNIQUE constraints and a unique index besides the primary key, two sessions taking turns:
// RealPg.UniqueKeysAreTheServers and SqlSim.UniqueKeysAreTheServers (kUniqueOutcomes: PostgreSQL 15's).
extern const std::vector<std::string> kUniqueSetup;
std::string run_unique_turns(pg::Connection& a, pg::Connection& b);
extern const char* const kUniqueOutcomes;
std::string run_repeatable_read_turns(pg::Connection& a, pg::Connection& b);
extern const char* const kRepeatableReadOutcomes;

// The command line run in process (cli::run_cli): `lockstep ARGS...`'s exit code, stdout
// and stderr.
struct CliRun {
  int code;
  std::string out, err;
};
CliRun run_cli_in_process(std::vector<std::string> args);

}  // namespace lockstep::testing

#include <functional>
#include <map>
#include <optional>

#include "lockstep/sim/explore/explorer.h"
#include "lockstep/sim/explore/subtree_exchange.h"

namespace lockstep::testing {

// A System built from lambdas, for tests: State is constructed from the Env once per
// execution; every actor runs body(state, env, actor).
template <typename State>
class LambdaSystem final : public System {
 public:
  using Body = std::function<void(State&, Env&, ActorId)>;
  using AtEnd = std::function<std::optional<Violation>(State&)>;
  using OnEvent = std::function<std::optional<Violation>(State&, const Event&)>;

  LambdaSystem(int actors, Body body, AtEnd at_end = nullptr, OnEvent on_event = nullptr)
      : actors_(actors), body_(std::move(body)), at_end_(std::move(at_end)), on_event_(std::move(on_event)) {}

  std::unique_ptr<Instance> instantiate(Env& env) const override { return std::make_unique<Inst>(*this, env); }

 private:
  struct Inst final : Instance {
    Inst(const LambdaSystem& s, Env& env) : s(s), env(env), state(env) {
      for (int i = 0; i < s.actors_; ++i) names.push_back(std::string(1, static_cast<char>('a' + i)));
    }
    int actor_count() const override { return s.actors_; }
    std::string_view actor_name(ActorId a) const override { return names[a]; }
    void run_actor(ActorId a) override { s.body_(state, env, a); }
    std::optional<Violation> at_end() override { return s.at_end_ ? s.at_end_(state) : std::nullopt; }
    std::optional<Violation> on_event(const Event& e) override {
      return s.on_event_ ? s.on_event_(state, e) : std::nullopt;
    }
    const LambdaSystem& s;
    Env& env;
    State state;
    std::vector<std::string> names;
  };

  int actors_;
  Body body_;
  AtEnd at_end_;
  OnEvent on_event_;
};

struct NoState {
  explicit NoState(Env&) {}
};

// Explores `system` with a named strategy; the options' defaults suit small tests.
sim::ExploreResult explore(const System& system, const std::string& strategy = "dfs",
                           sim::ExploreOptions options = {}, std::uint64_t seed = 1);

// Other processes (sim/explore/subtree_exchange.h) in memory: a "worker" (`explore`: the task's text
// in, the result's text out, as another process sees them) explores a published task when
// the walk first asks for its result. Every third task is taken back before that, as one
// no worker began.
class InMemoryExchange final : public sim::SubtreeExchange {
 public:
  using Worker = std::function<std::string(const std::string& task)>;
  explicit InMemoryExchange(Worker explore) : explore_(std::move(explore)) {}
  int capacity() const override { return 16; }
  std::uint64_t publish(const std::string& task) override;
  bool take_back(std::uint64_t id) override;
  std::optional<std::string> result(std::uint64_t id) override;
  void withdraw(std::uint64_t id) override;
  // Tasks are explored when their result is asked for: none is withdrawn after it began.
  // A test sets `reported` to see the walk stop publishing at its bound.
  std::uint64_t redundant() override { return reported; }
  std::uint64_t taken_back = 0, withdrawn = 0, explored_tasks = 0, reported = 0;

 private:
  Worker explore_;
  std::map<std::uint64_t, std::string> tasks_, results_;
  std::uint64_t last_ = 0;
};

}  // namespace lockstep::testing
