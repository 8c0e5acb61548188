#include "lockstep/model/sql/isolation_driver.h"

#include <algorithm>

#include <fmt/format.h>

#include "lockstep/model/json_cursor.h"

namespace lockstep::sql {
namespace {

constexpr unsigned kNonblock = 1, kRetry = 2;  // isolationtester's STEP_NONBLOCK, STEP_RETRY
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

class Driver {
 public:
  Driver(const Spec& spec, const std::vector<PermutationStep>& steps, IsolationSessions& io, std::string& out)
      : spec_(spec), steps_(steps), io_(io), out_(out), active_(spec.sessions.size(), kNone), targets_(steps.size()) {
    for (const PermutationStep& p : steps) {
      int s = -1;
      sql_.push_back(spec.find_step(p.step, &s));
      session_.push_back(static_cast<std::size_t>(s));
    }
  }

  void run() {
    std::vector<std::size_t> waiting;  // permutation positions, in the order they began waiting
    for (std::size_t i = 0; i < steps_.size(); ++i) {
      const std::size_t s = session_[i];
      // The session is still busy with an earlier step: finish it, polling the others meanwhile.
      std::chrono::nanoseconds held{0};
      while (active_[s] != kNone) {
        const std::size_t old = active_[s];
        if (!try_complete(old, kRetry)) {
          std::erase(waiting, old);
        } else {  // finished, but its blockers hold it back
          held += io_.pause();
          if (held > 2 * io_.max_step_wait()) {
            throw InputError(fmt::format("{}: permutation step {} (position {}): step {} timed out after {} seconds: its blockers never "
                                         "let it complete (isolationtester gives up after twice max_step_wait)",
                                         spec_.file, steps_[i].step, i + 1, steps_[old].step,
                                         std::chrono::duration_cast<std::chrono::seconds>(held).count()));
          }
        }
        try_complete_all(waiting, kNonblock | kRetry);
      }
      io_.send(s, sql_[i]->sql);
      active_[s] = i;
      targets_[i].clear();
      for (const Blocker& b : steps_[i].blockers) {
        int bs = -1;
        (void)spec_.find_step(b.step, &bs);
        targets_[i].push_back(b.kind == Blocker::Kind::notices ? b.notices + io_.notices(static_cast<std::size_t>(bs)) : 0);
      }
      const bool must_wait = try_complete(i, kNonblock);
      try_complete_all(waiting, kNonblock | kRetry);
      if (must_wait) waiting.push_back(i);
    }
    try_complete_all(waiting, kRetry);
    if (!waiting.empty()) {
      throw InputError(fmt::format("{}: failed to complete permutation due to mutually-blocking steps (step {} never finished)", spec_.file,
                                   steps_[waiting.front()].step));
    }
  }

 private:
  // Whether a blocker annotation still holds finished step i back.
  bool held_back(std::size_t i) const {
    const auto& blockers = steps_[i].blockers;
    for (std::size_t k = 0; k < blockers.size(); ++k) {
      const Blocker& b = blockers[k];
      if (b.kind == Blocker::Kind::once) continue;
      int bs = -1;
      const SpecStep* blocker = spec_.find_step(b.step, &bs);
      const std::size_t busy = active_[static_cast<std::size_t>(bs)];
      if (b.kind == Blocker::Kind::other_step && busy != kNone && sql_[busy] == blocker) return true;
      if (b.kind == Blocker::Kind::notices && io_.notices(static_cast<std::size_t>(bs)) < targets_[i][k]) return true;
    }
    return false;
  }

  void print_waiting(std::size_t i) { out_ += fmt::format("step {}: {} <waiting ...>\n", steps_[i].step, sql_[i]->sql.text); }

  // isolationtester's try_complete_step: true while step i is shown waiting, false once it
  // finished and its results are printed.
  bool try_complete(std::size_t i, unsigned flags) {
    const bool retry = (flags & kRetry) != 0;
    if (!retry && std::any_of(steps_[i].blockers.begin(), steps_[i].blockers.end(), [](const Blocker& b) { return b.kind == Blocker::Kind::once; })) {
      print_waiting(i);
      return true;
    }
    const std::size_t s = session_[i];
    const bool finished = io_.wait(s, (flags & kNonblock) != 0);
    if (const std::optional<int> seconds = io_.canceled_after(s)) {
      out_ += fmt::format("isolationtester: canceling step {} after {} seconds\n", steps_[i].step, *seconds);
    }
    if (!finished || held_back(i)) {
      if (!retry) print_waiting(i);
      return true;
    }
    out_ += retry ? fmt::format("step {}: <... completed>\n", steps_[i].step) : fmt::format("step {}: {}\n", steps_[i].step, sql_[i]->sql.text);
    io_.print_results(s, out_);
    active_[s] = kNone;
    return false;
  }

  int total_notices() const {
    int n = 0;
    for (std::size_t s = 0; s < spec_.sessions.size(); ++s) n += io_.notices(s);
    return n;
  }

  // isolationtester's try_complete_steps: tries every waiting step; while one with blockers
  // stays waiting and the pass completed a step or brought a notice, passes again.
  void try_complete_all(std::vector<std::size_t>& waiting, unsigned flags) {
    bool again = false;
    do {
      const std::size_t before = waiting.size();
      const int notices = total_notices();
      bool has_blockers = false;
      for (auto it = waiting.begin(); it != waiting.end();) {
        if (try_complete(*it, flags)) {
          has_blockers = has_blockers || !steps_[*it].blockers.empty();
          ++it;
        } else {
          it = waiting.erase(it);
        }
      }
      again = has_blockers && (waiting.size() < before || total_notices() != notices);
    } while (again);
  }

  const Spec& spec_;
  const std::vector<PermutationStep>& steps_;
  IsolationSessions& io_;
  std::string& out_;
  std::vector<const SpecStep*> sql_;   // per position
  std::vector<std::size_t> session_;   // per position
  std::vector<std::size_t> active_;    // per session: the position it runs, or kNone
  std::vector<std::vector<int>> targets_;  // per position, per blocker: the notice count it waits for
};

}  // namespace

void drive_permutation(const Spec& spec, const std::vector<PermutationStep>& steps, IsolationSessions& sessions, std::string& out) {
  Driver(spec, steps, sessions, out).run();
}

}  // namespace lockstep::sql
