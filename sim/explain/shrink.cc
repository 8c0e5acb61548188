#include "lockstep/sim/explain/shrink.h"

#include <algorithm>

#include "lockstep/sim/strategies/preemption_bound.h"
#include "lockstep/sim/invariant.h"
#include "lockstep/sim/sched/sim_env.h"

namespace lockstep::sim {
namespace {

// Follows a decision list where it fits; elsewhere, and after it, lets the previous actor
// go on, or else runs the lowest enabled actor. Measures the schedule it makes.
class Guided final : public Strategy {
 public:
  explicit Guided(const std::vector<Decision>& plan) : plan_(plan) {}

  std::string_view name() const override { return "guided"; }
  bool next_execution() override { return true; }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t) override {
    std::size_t chosen = fallback(enabled);
    if (next_ < plan_.size() && plan_[next_].kind != Decision::Kind::choice) {
      const Decision d = plan_[next_++];
      for (std::size_t i = 0; i < enabled.size(); ++i) {
        if (enabled[i].actor == static_cast<ActorId>(d.value) && enabled[i].timer == (d.kind == Decision::Kind::timer)) {
          chosen = i;
        }
      }
    }
    const bool preemption = counter_.is_preemption(enabled, enabled[chosen]);
    if (counter_.previous() >= 0 && enabled[chosen].actor != counter_.previous()) ++shape_.switches;
    counter_.taken(enabled, enabled[chosen]);
    preempted_.push_back(preemption ? 1 : 0);
    return chosen;
  }

  std::uint32_t choose(std::uint32_t n, std::string_view, std::uint64_t) override {
    if (next_ < plan_.size() && plan_[next_].kind == Decision::Kind::choice && plan_[next_].value < n) {
      return plan_[next_++].value;
    }
    return 0;
  }

  ScheduleShape shape(std::uint64_t steps) const {
    ScheduleShape s = shape_;
    s.preemptions = counter_.preemptions();
    s.steps = steps;
    return s;
  }
  const std::vector<std::uint8_t>& preempted() const { return preempted_; }

 private:
  std::size_t fallback(std::span<const Transition> enabled) const {
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      if (enabled[i].actor == counter_.previous() && !enabled[i].timer) return i;
    }
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      if (enabled[i].actor == counter_.previous()) return i;
    }
    return 0;
  }

  const std::vector<Decision>& plan_;
  std::size_t next_ = 0;
  PreemptionCounter counter_;
  ScheduleShape shape_;
  std::vector<std::uint8_t> preempted_;  // per scheduling decision
};

struct Attempt {
  ExecutionResult result;
  std::vector<Decision> decisions;
  ScheduleShape shape;
  std::vector<std::uint8_t> preempted;
};

// `scheduler` is reused across attempts: its actors' fibers and buffers are made once.
Attempt run_guided(Scheduler& scheduler, const System& system, const RunLimits& limits,
                   const std::vector<Decision>& plan) {
  SimEnv env;
  Guided guided(plan);
  Attempt a;
  try {
    a.result = scheduler.run(system, env, guided, limits);
  } catch (const Divergence& d) {
    a.result.verdict = Verdict::model_error;
    a.result.message = d.what();
  }
  a.decisions = scheduler.decisions();
  a.shape = guided.shape(a.result.steps);
  a.preempted = guided.preempted();
  return a;
}

// The same verdict and invariant; a failure judged by the cycle it repeats keeps a cycle
// (else its trace would say only that the bound was reached).
bool same_failure(const ExecutionResult& a, const ExecutionResult& target) {
  return a.verdict == target.verdict && a.invariant == target.invariant && !a.pruned && !a.unfair && !a.interrupted &&
         (!target.cycle || a.cycle);
}

// One way to change the best schedule: rotate [first, last) so that `middle` comes first,
// drop decision `first`, or keep only the decisions before `first`.
struct Edit {
  enum class Kind { rotate, drop, cut } kind;
  std::size_t first = 0, middle = 0, last = 0;
};

// Moves of whole runs (a run: one actor's consecutive scheduling decisions, with the
// choices after them) around each preemption, where actor A's run i is preempted by run
// i+1 and A runs again at run j: A goes on into its next run (pull), A's run i waits for
// its next one (push), or the preempting run waits until after A's next run (defer).
// Dropping one decision at a time cannot do this: the guided run takes the plan by
// position, so a dropped decision shifts the actor's later steps, and a preemption that
// begins a run of several steps survives every single drop.
void add_run_moves(const std::vector<Decision>& d, const std::vector<std::uint8_t>& preempted, std::vector<Edit>& out) {
  struct Run {
    std::size_t begin, end;
    std::uint32_t actor;
    bool preempting;
  };
  std::vector<Run> runs;
  std::size_t sched = 0;
  for (std::size_t i = 0; i < d.size(); ++i) {
    if (d[i].kind == Decision::Kind::choice) continue;
    const bool p = sched < preempted.size() && preempted[sched] != 0;
    ++sched;
    if (!runs.empty() && runs.back().actor == d[i].value) continue;
    if (!runs.empty()) runs.back().end = i;
    runs.push_back({runs.empty() ? 0 : i, d.size(), d[i].value, p});
  }
  for (std::size_t i = 0; i + 1 < runs.size(); ++i) {
    if (!runs[i + 1].preempting) continue;
    std::size_t j = i + 2;
    while (j < runs.size() && runs[j].actor != runs[i].actor) ++j;
    if (j == runs.size()) continue;
    const Run &a = runs[i], &b = runs[i + 1], &next = runs[j];
    out.push_back({Edit::Kind::rotate, a.end, next.begin, next.end});   // pull
    out.push_back({Edit::Kind::rotate, a.begin, a.end, next.begin});    // push
    out.push_back({Edit::Kind::rotate, b.begin, b.end, next.end});      // defer
  }
}

// The edits of one round, most promising first: move runs around each preemption, drop a
// preempting decision, cut the schedule short (the rest then runs without preemptions),
// drop any other decision.
std::vector<Edit> edits_of(const Attempt& best) {
  std::vector<Edit> edits, others;
  add_run_moves(best.decisions, best.preempted, edits);
  std::size_t sched = 0;
  for (std::size_t i = 0; i < best.decisions.size(); ++i) {
    if (best.decisions[i].kind == Decision::Kind::choice) continue;
    (sched < best.preempted.size() && best.preempted[sched] ? edits : others).push_back({Edit::Kind::drop, i});
    ++sched;
  }
  for (std::size_t cut = best.decisions.size() / 2; cut > 0; cut /= 2) edits.push_back({Edit::Kind::cut, cut});
  edits.insert(edits.end(), others.begin(), others.end());
  return edits;
}

void apply(const Edit& e, const std::vector<Decision>& best, std::vector<Decision>& candidate) {
  const auto at = [&](std::size_t i) { return candidate.begin() + static_cast<std::ptrdiff_t>(i); };
  switch (e.kind) {
    case Edit::Kind::rotate:
      candidate.assign(best.begin(), best.end());
      LOCKSTEP_INVARIANT(e.first <= e.middle && e.middle <= e.last && e.last <= candidate.size(), "shrink: a rotation inside the schedule");
      std::rotate(at(e.first), at(e.middle), at(e.last));
      return;
    case Edit::Kind::drop:
      candidate.assign(best.begin(), best.end());
      candidate.erase(at(e.first));
      return;
    case Edit::Kind::cut:
      candidate.assign(best.begin(), best.begin() + static_cast<std::ptrdiff_t>(e.first));
      return;
  }
}

}  // namespace

bool ScheduleShape::simpler_than(const ScheduleShape& o) const {
  if (preemptions != o.preemptions) return preemptions < o.preemptions;
  if (steps != o.steps) return steps < o.steps;
  return switches < o.switches;
}

ShrinkResult shrink_failure(const System& system, const RunLimits& limits, const std::vector<Decision>& failing,
                            const ExecutionResult& target, const ShrinkBudget& budget) {
  RunLimits quiet = limits;
  quiet.log_events = false;
  quiet.stop = budget.stop;  // a long attempt stops inside, as the search does
  Scheduler scheduler;
  Attempt best = run_guided(scheduler, system, quiet, failing);
  ShrinkResult out;
  out.original = best.shape;
  out.attempts = 1;
  std::uint64_t steps = best.result.steps;
  if (!same_failure(best.result, target)) {
    // The guided run is the original schedule; if it does not fail alike, keep the input.
    out.decisions = failing;
    out.result = target;
    out.shrunk = out.original;
    return out;
  }
  auto exhausted = [&] {
    return out.attempts >= budget.max_attempts || steps >= budget.max_steps || (budget.stop && budget.stop());
  };
  bool improved = true;
  while (improved && !(out.out_of_budget = exhausted())) {
    improved = false;
    // Each candidate is built only when its turn comes.
    const std::vector<Edit> edits = edits_of(best);
    std::vector<Decision> candidate;
    for (const Edit& edit : edits) {
      if ((out.out_of_budget = exhausted())) break;
      apply(edit, best.decisions, candidate);
      ++out.attempts;
      Attempt a = run_guided(scheduler, system, quiet, candidate);
      steps += a.result.steps;
      if (same_failure(a.result, target) && a.shape.simpler_than(best.shape)) {
        best = std::move(a);
        improved = true;
        break;
      }
    }
  }
  out.decisions = best.decisions;
  out.result = best.result;
  out.shrunk = best.shape;
  return out;
}

}  // namespace lockstep::sim
