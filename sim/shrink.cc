#include "lockstep/sim/shrink.h"

#include "lockstep/sim/bounded_strategies.h"
#include "lockstep/sim/sim_env.h"

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

bool same_failure(const ExecutionResult& a, const ExecutionResult& target) {
  return a.verdict == target.verdict && a.invariant == target.invariant && !a.pruned && !a.unfair && !a.interrupted;
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
    // Candidates, most promising first: drop a preempting decision, cut the schedule short
    // (the rest then runs without preemptions), drop any other decision. Each is built
    // only when its turn comes.
    std::vector<std::size_t> preempting, others, cuts;
    std::size_t sched = 0;
    for (std::size_t i = 0; i < best.decisions.size(); ++i) {
      if (best.decisions[i].kind == Decision::Kind::choice) continue;
      (sched < best.preempted.size() && best.preempted[sched] ? preempting : others).push_back(i);
      ++sched;
    }
    for (std::size_t cut = best.decisions.size() / 2; cut > 0; cut /= 2) cuts.push_back(cut);
    const std::size_t total = preempting.size() + cuts.size() + others.size();
    std::vector<Decision> candidate;
    for (std::size_t k = 0; k < total; ++k) {
      if ((out.out_of_budget = exhausted())) break;
      if (k < preempting.size() || k >= preempting.size() + cuts.size()) {
        const std::size_t drop = k < preempting.size() ? preempting[k] : others[k - preempting.size() - cuts.size()];
        candidate.assign(best.decisions.begin(), best.decisions.end());
        candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(drop));
      } else {
        candidate.assign(best.decisions.begin(), best.decisions.begin() + static_cast<std::ptrdiff_t>(cuts[k - preempting.size()]));
      }
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
