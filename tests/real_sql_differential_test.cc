// The simulated server against a real one on random SQL programs (issue 47's differential
// property): each program, drawn by tests/sql_programs.h as the dpor-vs-dfs property draws
// them, becomes an isolation spec of 2-3 sessions, one statement per step, and one random
// permutation of their steps; `lockstep isolation` runs it on the simulation and on the
// server and the two outputs must be byte for byte the same: every statement's rows, its
// error (SQLSTATE's message), and whether it waited for a lock. A permutation that cannot
// run (a step after its own session's blocked one) is discarded, as isolationtester refuses
// it. RapidCheck shrinks a difference to a minimal program. Skipped (saying why) without a
// throwaway server (LOCKSTEP_PG_CONNINFO).
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include "lockstep/model/json_cursor.h"
#include "lockstep/model/sql/spec.h"
#include "lockstep/real/isolation_runner.h"
#include "lockstep/sim/isolation.h"
#include "sql_programs.h"

namespace lockstep {
namespace {

// A step the server runs longer than this is canceled: a permutation the simulation found
// valid that blocks on the server shows as a difference in seconds, not minutes.
constexpr std::chrono::seconds kStepWait{5};

struct Program {
  std::vector<sql_programs::Session> sessions;
  sql_programs::Tables tables;
  std::vector<int> order;  // the permutation: a session index per step
};

// The program as a spec: sessions a, b, c with steps a1, a2, ...; then a last session that
// reads the table, so that the final rows are compared too.
std::string spec_text(const Program& p) {
  std::string text = "setup {";
  for (const std::string& s : sql_programs::table_setup(p.tables)) text += " " + s + ";";
  text += " }\nteardown {";
  for (const std::string& s : sql_programs::table_teardown(p.tables)) text += " " + s + ";";
  text += " }\n";
  for (std::size_t a = 0; a < p.sessions.size(); ++a) {
    text += fmt::format("session {}\n", static_cast<char>('a' + a));
    for (std::size_t i = 0; i < p.sessions[a].size(); ++i) {
      text += fmt::format("step {}{} {{ {}; }}\n", static_cast<char>('a' + a), i + 1, p.sessions[a][i]);
    }
  }
  text += p.tables.parent ? "session z\nstep z1 { SELECT id, v, parent_id FROM t; SELECT id, n FROM parent; }\npermutation"
                          : "session z\nstep z1 { SELECT id, v FROM t; }\npermutation";
  std::vector<std::size_t> next(p.sessions.size(), 0);
  for (const int a : p.order) text += fmt::format(" {}{}", static_cast<char>('a' + a), ++next[static_cast<std::size_t>(a)]);
  return text + " z1\n";
}

rc::Gen<Program> gen_program() {
  return rc::gen::exec([] {
    Program p;
    const int n = *rc::gen::element(2, 2, 3);
    p.tables = sql_programs::gen_tables();
    // Most sessions in a transaction block, so that row locks are held across steps and
    // other sessions wait for them.
    // A program in four runs every block SERIALIZABLE: serializable snapshot isolation's checks.
    const bool serializable = *rc::gen::inRange(0, 4) == 0;
    for (int a = 0; a < n; ++a) p.sessions.push_back(sql_programs::gen_session(*rc::gen::inRange(0, 4) != 0, p.tables.parent, serializable));
    // The permutation: in half of the programs every session first opens its transaction and
    // runs its first statement (so that locks are held while the others run), then the rest
    // in a random order.
    std::vector<std::size_t> left;
    std::size_t total = 0;
    for (const auto& s : p.sessions) {
      left.push_back(s.size());
      total += s.size();
    }
    const auto take = [&](int a) {
      --left[static_cast<std::size_t>(a)];
      p.order.push_back(a);
    };
    if (*rc::gen::arbitrary<bool>()) {
      for (int a = 0; a < n; ++a) {
        for (std::size_t k = 0; k < 2 && left[static_cast<std::size_t>(a)] > 1; ++k) take(a);
      }
    }
    while (p.order.size() < total) {
      std::vector<int> can;
      for (std::size_t a = 0; a < left.size(); ++a) {
        if (left[a] > 0) can.push_back(static_cast<int>(a));
      }
      take(can[static_cast<std::size_t>(*rc::gen::inRange<int>(0, static_cast<int>(can.size())))]);
    }
    return p;
  });
}

// The first line where the two outputs differ, with the step it belongs to.
std::string first_difference(const std::string& sim, const std::string& server) {
  std::istringstream s(sim), r(server);
  std::string sl, rl, step;
  for (int line = 1;; ++line) {
    const bool hs = static_cast<bool>(std::getline(s, sl)), hr = static_cast<bool>(std::getline(r, rl));
    if (!hs && !hr) return "";
    if (hs && sl.rfind("step ", 0) == 0) step = sl;
    if (!hs || !hr || sl != rl) {
      return fmt::format("line {} (after \"{}\"):\n  simulation: {}\n  server:     {}", line, step, hs ? sl : "(end)", hr ? rl : "(end)");
    }
  }
}

// Whether one step's output is followed by two "<... completed>" lines before the next step,
// or two steps wait at once (one release may wake both: which backend runs first is the
// server's scheduling, SqlConformance seed 98101 at 1,942 programs).
bool wakes_several(const std::string& output) {
  std::istringstream in(output);
  int completed = 0;
  std::vector<std::string> waiting;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("step ", 0) != 0) continue;
    const std::string name = line.substr(5, line.find(':') - 5);
    if (line.ends_with("<waiting ...>")) waiting.push_back(name);
    if (line.ends_with("<... completed>")) std::erase(waiting, name);
    completed = line.ends_with("<... completed>") ? completed + 1 : 0;
    if (completed >= 2 || waiting.size() >= 2) return true;
  }
  return false;
}

std::vector<std::string> sorted_lines(const std::string& output) {
  std::vector<std::string> lines;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

TEST(SqlConformance, TheSimulationPrintsWhatTheServerPrintsForRandomSqlPrograms) {
  const char* conninfo = std::getenv("LOCKSTEP_PG_CONNINFO");
  if (conninfo == nullptr) GTEST_SKIP() << "LOCKSTEP_PG_CONNINFO is not set: no throwaway PostgreSQL on this machine";
  // The same 200 programs on every run unless RC_PARAMS says otherwise (RapidCheck reads it
  // once, at its first check): set RC_PARAMS="max_success=5000" (and a seed, or none) by hand.
  const bool ours = std::getenv("RC_PARAMS") == nullptr;
  if (ours) setenv("RC_PARAMS", "seed=20261127 max_success=200", 1);
  int programs = 0, invalid = 0, refused = 0, with_waits = 0, with_errors = 0, racy = 0, other_winner = 0;
  const bool ok = rc::check("the simulation and the server print the same", [&] {
    // At full size from the first program: RapidCheck's small sizes draw the first session
    // and the first statement kinds only.
    const Program p = *rc::gen::resize(100, gen_program());
    const std::string text = spec_text(p);
    RC_LOG() << text;
    const sql::Spec spec = sql::parse_spec(text, "generated.spec");
    const auto& steps = spec.permutations.front();
    std::string simulated;
    try {
      simulated = sim::run_isolation_permutation(spec, steps, false, kStepWait);
    } catch (const InputError& e) {
      // What the simulation refuses when run (outside its subset) gives no answer to compare.
      if (std::string_view(e.what()).find("lockstep's SQL subset") == std::string_view::npos) throw;
      ++refused;
      // LOCKSTEP_REFUSALS=FILE appends each refusal's message (by hand: which constructs to build next).
      if (const char* log = std::getenv("LOCKSTEP_REFUSALS")) std::ofstream(log, std::ios::app) << e.what() << '\n';
      RC_DISCARD("the simulation refuses it when run");
    }
    if (simulated.find("isolationtester: canceling step") != std::string::npos) {
      // Both servers cancel the step after kStepWait (sql_spec_step-canceled-after-wait checks
      // that they print the same); here it would only cost kStepWait of real time a program.
      ++invalid;
      RC_DISCARD("a step comes after its own session's blocked step: isolationtester's invalid permutation");
    }
    std::string served = real::run_permutation_on_server(spec, steps, conninfo, kStepWait);
    ++programs;
    with_waits += simulated.find("<waiting ...>") != std::string::npos ? 1 : 0;
    with_errors += simulated.find("ERROR:") != std::string::npos ? 1 : 0;
    RC_TAG(simulated.find("<waiting ...>") != std::string::npos ? "a step waited" : "no step waited");
    // One step that wakes two waiting ones lets the server's backends race for the row (the
    // simulation explores both orders where an upsert's unique check races a queued locker:
    // docs/sql.md), and isolationtester prints the completions it finds in its own order.
    // There the outputs must hold the same lines (rows, errors, waits) in an
    // order the server prints in up to 8 runs, or in another order, or the server's output must
    // be the simulation's on another schedule.
    if (simulated != served && (wakes_several(simulated) || wakes_several(served))) {
      for (int again = 0; again < 7 && simulated != served; ++again) served = real::run_permutation_on_server(spec, steps, conninfo, kStepWait);
      if (simulated != served && sorted_lines(simulated) == sorted_lines(served)) {
        ++racy;
        RC_TAG("the same lines, in another order after racing wakeups");
        return;
      }
      // Another backend may win the race: the server's output must be one the simulation
      // prints on some schedule of the same permutation (backends woken together in either order).
      if (simulated != served) {
        const auto outputs = sim::isolation_permutation_outputs(spec, steps, kStepWait, 20'000);
        if (std::find(outputs.begin(), outputs.end(), served) != outputs.end()) {
          ++other_winner;
          RC_TAG("another winner of racing wakeups, on another schedule of the simulation");
          return;
        }
      }
    }
    if (simulated != served) RC_FAIL(fmt::format("{}\nsimulation and server differ at {}", text, first_difference(simulated, served)));
  });
  EXPECT_TRUE(ok);
  std::cout << fmt::format(
      "{} programs the same on both ({} with a lock wait, {} with an error; {} of them the same lines in another order after racing "
      "wakeups, {} another schedule's output); {} invalid permutations discarded; {} refused by the simulation when run\n",
      programs, with_waits, with_errors, racy, other_winner, invalid, refused);
  if (ours) {
    EXPECT_GE(programs, 200);
  }
}

}  // namespace
}  // namespace lockstep
