#include "lockstep/sim/explain/cause.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>

#include "lockstep/sim/sched/sim_env.h"

namespace lockstep::sim {
namespace {

// One scheduling decision with the choices its step made.
struct Group {
  Decision pick;
  std::vector<Decision> choices;
};

struct Plan {
  std::vector<Decision> preamble;  // choices made before the first step
  std::vector<Group> groups;       // one per step
};

Plan plan_of(const std::vector<Decision>& decisions) {
  Plan p;
  for (const Decision& d : decisions) {
    if (d.kind == Decision::Kind::choice) {
      (p.groups.empty() ? p.preamble : p.groups.back().choices).push_back(d);
    } else {
      p.groups.push_back({d, {}});
    }
  }
  return p;
}

bool matches(const Transition& t, const Decision& d) {
  return t.actor == static_cast<ActorId>(d.value) && t.timer == (d.kind == Decision::Kind::timer);
}

// The reordering could not run step j before step i's actor (j never became enabled).
struct Infeasible {};

// Runs the forced steps first, in order (an actor whose forced step is not enabled sits out
// the rest of them, and the `must` step has to run), then the remaining steps in their
// recorded order where they fit. Records every step's facts.
class Reorder final : public Strategy {
 public:
  Reorder(const Plan& plan, std::vector<std::size_t> forced, std::size_t must)
      : plan_(plan), forced_(std::move(forced)), must_(must), used_(plan.groups.size(), false),
        next_of_actor_(kMaxActors, 0), pending_(plan.preamble) {}

  void attach(const Scheduler& scheduler) { scheduler_ = &scheduler; }
  std::string_view name() const override { return "cause"; }
  bool next_execution() override { return true; }

  std::size_t pick(std::span<const Transition> enabled, std::uint64_t) override {
    while (fpos_ < forced_.size()) {
      const std::size_t g = forced_[fpos_++];
      const Decision& d = plan_.groups[g].pick;
      static_assert(kMaxActors <= 64, "sitting_out_ is a 64-bit mask");
      if (d.value >= static_cast<std::uint32_t>(kMaxActors)) throw Infeasible{};
      const std::uint64_t bit = std::uint64_t{1} << d.value;
      if ((sitting_out_ & bit) == 0) {
        for (std::size_t i = 0; i < enabled.size(); ++i) {
          if (matches(enabled[i], d)) return take(g, i);
        }
        sitting_out_ |= bit;
      }
      if (g == must_) throw Infeasible{};
    }
    // The rest, each actor's next recorded step in recorded order, where it is enabled.
    std::optional<std::size_t> best_group, best_index;
    for (std::size_t i = 0; i < enabled.size(); ++i) {
      const ActorId a = enabled[i].actor;
      const std::size_t g = next_group_of(a);
      if (g < plan_.groups.size() && matches(enabled[i], plan_.groups[g].pick) && (!best_group || g < *best_group)) {
        best_group = g;
        best_index = i;
      }
    }
    if (best_group) return take(*best_group, *best_index);
    // Nothing recorded fits: the previous actor goes on, else the first that is not a timer.
    std::size_t chosen = 0;
    bool found = false;
    for (std::size_t i = 0; i < enabled.size() && !found; ++i) {
      if (enabled[i].actor == previous_ && !enabled[i].timer) chosen = i, found = true;
    }
    for (std::size_t i = 0; i < enabled.size() && !found; ++i) {
      if (!enabled[i].timer) chosen = i, found = true;
    }
    const std::size_t g = next_group_of(enabled[chosen].actor);
    if (g < plan_.groups.size()) used_[g] = true;  // keep the actor's later steps in line
    pending_.clear();
    previous_ = enabled[chosen].actor;
    return chosen;
  }

  std::uint32_t choose(std::uint32_t n, std::string_view, std::uint64_t) override {
    if (pchoice_ < pending_.size() && pending_[pchoice_].value < n) return pending_[pchoice_++].value;
    pchoice_ = pending_.size();
    return 0;
  }

  void executed(const Transition& t, const Footprint& effective) override {
    facts_.push_back({t.actor, t.timer, effective, scheduler_ != nullptr ? scheduler_->last_result() : StepResult{},
                      scheduler_ != nullptr ? scheduler_->last_released() : std::vector<ObjectId>{}});
  }

  std::vector<StepFact>& facts() { return facts_; }

 private:
  std::size_t take(std::size_t g, std::size_t index) {
    used_[g] = true;
    pending_ = plan_.groups[g].choices;
    pchoice_ = 0;
    previous_ = static_cast<ActorId>(plan_.groups[g].pick.value);
    return index;
  }

  // The first unused recorded step of actor a (groups.size() when none is left).
  std::size_t next_group_of(ActorId a) {
    std::size_t& g = next_of_actor_[a];
    while (g < plan_.groups.size() && (used_[g] || static_cast<ActorId>(plan_.groups[g].pick.value) != a)) ++g;
    return g;
  }

  const Plan& plan_;
  std::vector<std::size_t> forced_;
  std::size_t must_;
  std::size_t fpos_ = 0;
  std::uint64_t sitting_out_ = 0;
  std::vector<bool> used_;
  std::vector<std::size_t> next_of_actor_;
  std::vector<Decision> pending_;
  std::size_t pchoice_ = 0;
  ActorId previous_ = -1;
  const Scheduler* scheduler_ = nullptr;
  std::vector<StepFact> facts_;
};

constexpr std::size_t kNoStep = static_cast<std::size_t>(-1);

struct Run {
  ExecutionResult result;
  std::vector<StepFact> facts;
  std::vector<LogEvent> events;
  std::vector<std::string> object_names;
  std::vector<std::string> actors;
  std::vector<Decision> decisions;
  bool feasible = true;
};

// `scheduler` is reused across attempts: its actors' fibers and buffers are made once.
Run run_plan(Scheduler& scheduler, const System& system, RunLimits limits, const Plan& plan,
             std::vector<std::size_t> forced, std::size_t must, bool log) {
  SimEnv env;
  Reorder strategy(plan, std::move(forced), must);
  strategy.attach(scheduler);
  limits.log_events = log;
  Run r;
  try {
    r.result = scheduler.run(system, env, strategy, limits);
  } catch (const Infeasible&) {
    r.feasible = false;
  } catch (const Divergence&) {
    r.feasible = false;
  }
  r.facts = std::move(strategy.facts());
  if (log) {
    r.events = scheduler.events();
    r.object_names = scheduler.object_names();
    r.actors = scheduler.actor_names();
    r.decisions = scheduler.decisions();
  }
  return r;
}

bool same_verdict(const ExecutionResult& a, const ExecutionResult& target) {
  return a.verdict == target.verdict && a.invariant == target.invariant;
}

std::string outcome_text(const ExecutionResult& r) {
  switch (r.verdict) {
    case Verdict::pass: return "passes";
    case Verdict::violation: return fmt::format("violates {} instead", r.invariant);
    case Verdict::deadlock: return "ends in a deadlock instead";
    case Verdict::step_bound: return "runs into the step bound instead";
    case Verdict::model_error: return "ends with a model error instead";
    case Verdict::livelock: return "repeats a cycle to the step bound instead";
    case Verdict::liveness: return fmt::format("leaves {} unmet instead", r.invariant);
    case Verdict::incomplete: break;
  }
  return std::string(verdict_name(r.verdict));
}

// The operation event of step `step` (choices made before the first step are logged under
// step 0 ahead of it; observations and choices of a step follow its operation).
const LogEvent* event_of(const std::vector<LogEvent>& events, std::uint64_t step) {
  for (const LogEvent& e : events) {
    if (e.step > step) break;
    if (e.step == step && !e.op.starts_with("choose ") && !e.op.starts_with("observe ")) return &e;
  }
  return nullptr;
}

// The step number of actor a's k-th step (0-based) in `facts`, or kNoStep.
std::size_t kth_step_of(const std::vector<StepFact>& facts, ActorId a, std::size_t k) {
  for (std::size_t s = 0; s < facts.size(); ++s) {
    if (facts[s].actor == a && k-- == 0) return s;
  }
  return kNoStep;
}

std::size_t index_among_own(const std::vector<StepFact>& facts, std::size_t step) {
  std::size_t k = 0;
  for (std::size_t s = 0; s < step; ++s) k += facts[s].actor == facts[step].actor ? 1 : 0;
  return k;
}

std::string op_with_result(const LogEvent& e) {
  return e.result.empty() ? e.op : fmt::format("{} -> {}", e.op, e.result);
}

// A step as a reader names it: its operation and result, or for an observation step what
// it observed ("observation granted 1 2").
std::string step_text(const std::vector<LogEvent>& events, std::uint64_t step) {
  const LogEvent* e = event_of(events, step);
  if (e->op != "observe") return op_with_result(*e);
  std::string text;
  for (const LogEvent& o : events) {
    if (o.step == step && o.op.starts_with("observe ")) {
      text += fmt::format("{}{} {}", text.empty() ? "observation " : ", ", o.op.substr(8), o.result);
    }
  }
  return text.empty() ? "observation" : text;
}

std::string sentence(const ExecutionFacts& original, std::size_t i, std::size_t j, const Run& reversed) {
  const LogEvent* ei = event_of(original.events, i);
  const LogEvent* ej = event_of(original.events, j);
  if (ei == nullptr || ej == nullptr) return {};
  const std::string& a = original.actors[ei->actor];
  const std::string& b = original.actors[ej->actor];
  std::string text = fmt::format("{}'s {} ran before {}'s {}; had {} waited until after it", a, step_text(original.events, i),
                                 b, step_text(original.events, j), a);
  // What the delayed step and the step it waited for returned then, where that changed.
  std::vector<std::string> changed;
  for (const std::size_t s : {j, i}) {
    const std::size_t again = kth_step_of(reversed.facts, original.steps[s].actor, index_among_own(original.steps, s));
    if (again == kNoStep) continue;
    const LogEvent* before = event_of(original.events, s);
    const LogEvent* after = event_of(reversed.events, again);
    if (after != nullptr && after->op == before->op && after->result != before->result) {
      changed.push_back(fmt::format("{}'s {} would have returned {}", original.actors[before->actor], after->op,
                                    after->result.empty() ? "nothing" : after->result));
    }
  }
  for (std::size_t k = 0; k < changed.size(); ++k) text += (k == 0 ? ", " : " and ") + changed[k];
  text += fmt::format("{} the execution {}", changed.empty() ? "," : ", and", outcome_text(reversed.result));
  return text;
}

// Steps before i as recorded; in (i, j] the other actors' steps; then (not forced) the rest.
void delayed_plan(const std::vector<StepFact>& steps, std::size_t i, std::size_t j, std::vector<std::size_t>& forced) {
  forced.clear();
  for (std::size_t k = 0; k < i; ++k) forced.push_back(k);
  for (std::size_t k = i + 1; k <= j; ++k) {
    if (steps[k].actor != steps[i].actor) forced.push_back(k);
  }
}

// Why a failure cannot be explained by the order of two steps, or null when it may be.
const char* unexplained(const ExecutionResult& r) {
  if (!is_failure(r.verdict)) return "the decisions do not replay to a failure";
  if (r.verdict == Verdict::step_bound) {  // every reordering runs to the bound too
    return "an execution that runs to its step bound is not explained by the order of two steps";
  }
  return nullptr;
}

// The first few dependent steps of each other actor after step i, in order, within
// kCauseWindow steps: a delay longer than that explains less, and the scan stays linear.
void dependent_followers(const std::vector<StepFact>& steps, std::size_t i, std::vector<int>& per_actor,
                         std::vector<std::size_t>& out) {
  out.clear();
  std::fill(per_actor.begin(), per_actor.end(), 0);
  const ActorId a = steps[i].actor;
  for (std::size_t j = i + 1; j < steps.size() && j <= i + kCauseWindow; ++j) {
    const ActorId b = steps[j].actor;
    if (b == a || per_actor[b] >= kMaxDelaysPerActor) continue;
    if (!dependent(steps[i].footprint, steps[j].footprint)) continue;
    ++per_actor[b];
    out.push_back(j);
  }
}

// Ends the scan early. A cause with no pair yet is emptied and says where it stopped
// (`none`): true, return it as it is. One with pairs keeps them, marked incomplete
// (`partial`): false.
bool stop_scan(Cause& cause, std::string none, std::string partial) {
  if (cause.pairs.empty()) {
    cause = Cause{};
    cause.reason = std::move(none);
    return true;
  }
  cause.complete = false;
  cause.reason = std::move(partial);
  return false;
}

// The labels of the timing model's choices (model/timing.h); with a timing model, a system's
// own stall fault (headspace, dal: "stall") is tried as well.
bool timing_choice(std::string_view label) {
  return label == "duration" || label == "stall" || label == "latency" || label == "clock_skew";
}

// What a choice's event says of the value drawn: "lasts 99.999 ms, written 120 ms" from
// "3 (lasts 99.999 ms, written 120 ms)", or the bare value.
std::string drawn_text(const LogEvent& e) {
  const std::size_t open = e.result.find(" (");
  if (open == std::string::npos || e.result.back() != ')') return "value " + e.result;
  return e.result.substr(open + 2, e.result.size() - open - 3);
}

// The choose events of an execution, in order (the k-th is its k-th choice).
std::vector<const LogEvent*> choice_events(const std::vector<LogEvent>& events) {
  std::vector<const LogEvent*> out;
  for (const LogEvent& e : events) {
    if (e.op.starts_with("choose ")) out.push_back(&e);
  }
  return out;
}

// The operation the actor of choice event `c` ran next: the timer it armed, the statement
// it stalled or waited before ("sleep 120", "update_row ...").
std::string next_op_of(const std::vector<LogEvent>& events, const LogEvent& c) {
  bool after = false;
  for (const LogEvent& e : events) {
    if (&e == &c) {
      after = true;
      continue;
    }
    if (after && e.actor == c.actor && !e.op.starts_with("choose ") && !e.op.starts_with("observe ") &&
        !e.op.starts_with("stall ") && !e.op.starts_with("round_trip ")) {
      return e.op;
    }
  }
  return "its next step";  // the execution ended first
}

// The value a timing choice's event names, without its frame: "99.999 ms" from "lasts
// 99.999 ms, written 120 ms", "200 ms" from "stalls 200 ms", "50 ms ahead" from "clock 50 ms
// ahead", "0.1 ms" from "round trip 0.1 ms".
std::string drawn_value(const std::string& text) {
  for (const std::string_view head : {"lasts ", "stalls ", "clock ", "round trip "}) {
    if (!text.starts_with(head)) continue;
    std::string rest = text.substr(head.size());
    return rest.substr(0, rest.find(','));
  }
  return text;
}

std::string timing_sentence(const ExecutionFacts& original, const LogEvent& c, const std::string& label, const LogEvent& alt,
                            const ExecutionResult& result) {
  const std::string& actor = original.actors[c.actor];
  const std::string op = next_op_of(original.events, c);
  const std::string was = drawn_text(c), other = drawn_text(alt);
  const std::string outcome = outcome_text(result);
  if (label == "duration") {  // "sleep 120: lasts 99.999 ms, written 120 ms"
    const std::size_t colon = was.find(": lasts ");
    const std::string timer = colon == std::string::npos ? op : was.substr(0, colon);
    const std::string drawn = colon == std::string::npos ? was : was.substr(colon + 2);
    const std::size_t w = drawn.find(", written ");
    const std::size_t alt = other.find(": lasts ");
    return fmt::format("{}'s timer ({}) lasted {}{}; lasting {}, the execution {}", actor, timer, drawn_value(drawn),
                       w == std::string::npos ? "" : fmt::format(" ({})", drawn.substr(w + 2)),
                       drawn_value(alt == std::string::npos ? other : other.substr(alt + 2)), outcome);
  }
  if (label == "clock_skew") {
    return fmt::format("{}'s clock was {}; with it {}, the execution {}", actor, drawn_value(was), drawn_value(other), outcome);
  }
  if (label == "latency") {
    return fmt::format("{}'s round trip before {} took {}; taking {}, the execution {}", actor, op, drawn_value(was),
                       drawn_value(other), outcome);
  }
  if (label == "stall" && other == "no stall") {
    return fmt::format("{} stalled {} before {}; without that stall, the execution {}", actor, drawn_value(was), op, outcome);
  }
  return fmt::format("{}'s choice \"{}\" before {} was {}; with {}, the execution {}", actor, label, op, was, other, outcome);
}

void find_timing_causes(Scheduler& scheduler, const System& system, const RunLimits& limits, const std::vector<Decision>& failing,
                        const ExecutionFacts& original, const CauseBudget& budget, std::uint64_t& steps_run, Cause& cause) {
  const std::vector<const LogEvent*> events = choice_events(original.events);
  if (events.size() != original.choices.size()) return;  // not one event per choice: nothing to name them by
  std::vector<std::size_t> decision_of;  // the k-th choice's index in `failing`
  for (std::size_t d = 0; d < failing.size(); ++d) {
    if (failing[d].kind == Decision::Kind::choice) decision_of.push_back(d);
  }
  if (decision_of.size() != original.choices.size()) return;
  RunLimits quiet = limits;
  quiet.log_events = false;
  std::uint64_t attempts = 0;
  for (std::size_t k = 0; k < original.choices.size(); ++k) {
    const ChoiceFact& made = original.choices[k];
    // A stall not taken is no cause: taking it elsewhere may avoid the failure, but only by
    // spending the budget of stalls there.
    if (!timing_choice(made.label) || (made.label == "stall" && made.value == 0)) continue;
    for (std::uint32_t v = 0; v < made.options; ++v) {
      if (v == made.value) continue;
      if (attempts >= kMaxTimingAttempts || cause.tried >= budget.max_attempts || steps_run >= budget.max_steps ||
          (budget.stop && budget.stop())) {
        return;
      }
      std::vector<Decision> changed = failing;
      changed[decision_of[k]].value = v;
      const Plan plan = plan_of(changed);
      ++attempts;
      ++cause.tried;
      const Run r = run_plan(scheduler, system, quiet, plan, {}, kNoStep, false);
      steps_run += r.facts.size() + 1;
      if (!r.feasible || same_verdict(r.result, original.result)) continue;
      const Run logged = run_plan(scheduler, system, limits, plan, {}, kNoStep, true);
      const std::vector<const LogEvent*> alt = choice_events(logged.events);
      if (k < alt.size()) cause.timing.push_back(timing_sentence(original, *events[k], made.label, *alt[k], logged.result));
      break;  // the first other value that avoids the failure says where it flips
    }
  }
}

}  // namespace

ExecutionFacts replay_facts(const System& system, const RunLimits& limits, const std::vector<Decision>& decisions) {
  Scheduler scheduler;
  SimEnv env;
  auto strategy = make_replay_strategy(decisions);
  // The replay strategy checks every decision; a thin wrapper records the facts.
  struct Recording final : Strategy {
    Strategy& inner;
    const Scheduler& scheduler;
    std::vector<StepFact> facts;
    std::vector<ChoiceFact> choices;
    Recording(Strategy& s, const Scheduler& sch) : inner(s), scheduler(sch) {}
    std::string_view name() const override { return inner.name(); }
    bool next_execution() override { return inner.next_execution(); }
    std::size_t pick(std::span<const Transition> enabled, std::uint64_t step) override { return inner.pick(enabled, step); }
    std::uint32_t choose(std::uint32_t n, std::string_view label, std::uint64_t step) override {
      const std::uint32_t v = inner.choose(n, label, step);
      choices.push_back({std::string(label), n, v});
      return v;
    }
    void executed(const Transition& t, const Footprint& effective) override {
      facts.push_back({t.actor, t.timer, effective, scheduler.last_result(), scheduler.last_released()});
    }
  } recording(*strategy, scheduler);
  recording.next_execution();
  RunLimits logged = limits;
  logged.log_events = true;
  ExecutionFacts out;
  out.result = scheduler.run(system, env, recording, logged);
  out.steps = std::move(recording.facts);
  out.object_names = scheduler.object_names();
  out.events = scheduler.events();
  out.actors = scheduler.actor_names();
  out.decisions = scheduler.decisions();
  out.choices = std::move(recording.choices);
  return out;
}

Cause find_cause(const System& system, const RunLimits& limits, const std::vector<Decision>& failing,
                 const CauseBudget& budget) {
  Cause cause;
  const ExecutionFacts original = replay_facts(system, limits, failing);
  if (const char* why = unexplained(original.result)) {
    cause.reason = why;
    return cause;
  }
  const Plan plan = plan_of(failing);
  const std::size_t n = original.steps.size();
  if (plan.groups.size() != n) {
    throw std::logic_error(fmt::format("cause analysis: {} scheduling decisions but {} steps", plan.groups.size(), n));
  }
  RunLimits quiet = limits;
  quiet.log_events = false;
  Scheduler scheduler;
  std::uint64_t steps_run = 0;
  std::vector<std::size_t> forced;
  forced.reserve(n);
  // Latest steps first: a failure mostly depends on orderings close to it, and a budget
  // that runs out then leaves the earliest steps unexamined, not the latest.
  std::vector<std::size_t> candidates;
  std::vector<int> per_actor(kMaxActors, 0);
  for (std::size_t i = n; i-- > 0;) {
    if (budget.stop && budget.stop()) {  // asked at every step: the scan below is not free
      if (stop_scan(cause, fmt::format("stopped after {} reorderings, at step {} of {} (latest first)", cause.tried, i + 1, n),
                    fmt::format("stopped after {} reorderings: steps before {} not examined", cause.tried, i + 1))) {
        return cause;
      }
      break;
    }
    dependent_followers(original.steps, i, per_actor, candidates);
    for (const std::size_t j : candidates) {
      if (cause.tried >= budget.max_attempts || steps_run >= budget.max_steps || (budget.stop && budget.stop())) {
        if (stop_scan(cause, fmt::format("out of budget after {} reorderings, at step {} of {} (latest first)", cause.tried, i, n),
                      fmt::format("stopped by its budget after {} reorderings: steps before {} not examined", cause.tried, i))) {
          return cause;
        }
        i = 0;
        break;
      }
      delayed_plan(original.steps, i, j, forced);
      ++cause.tried;
      const Run r = run_plan(scheduler, system, quiet, plan, forced, j, false);
      steps_run += r.facts.size() + 1;
      if (!r.feasible || same_verdict(r.result, original.result)) continue;
      ++cause.found;
      if (cause.pairs.size() < kMaxCausePairs) {
        const Run logged = run_plan(scheduler, system, limits, plan, forced, j, true);
        if (!logged.feasible || logged.result.verdict != r.result.verdict || logged.result.invariant != r.result.invariant) {
          throw std::logic_error(fmt::format("cause analysis: the reordering of steps {} and {} ran differently with the "
                                             "event log on: the model is not deterministic", i, j));
        }
        cause.pairs.push_back({i, j, outcome_text(logged.result), sentence(original, i, j, logged)});
      }
      break;  // the first j that i must follow; delaying i further also delays it past j
    }
  }
  std::sort(cause.pairs.begin(), cause.pairs.end(),
            [](const CausePair& x, const CausePair& y) { return std::pair(x.first, x.second) < std::pair(y.first, y.second); });
  if (limits.timing.any()) find_timing_causes(scheduler, system, limits, failing, original, budget, steps_run, cause);
  cause.computed = true;
  return cause;
}

ExecutionFacts delayed_execution(const System& system, const RunLimits& limits, const std::vector<Decision>& failing,
                                 const CausePair& pair) {
  const ExecutionFacts original = replay_facts(system, limits, failing);
  if (pair.first >= pair.second || pair.second >= original.steps.size() ||
      original.steps[pair.first].actor == original.steps[pair.second].actor) {
    throw std::invalid_argument(fmt::format("steps {} and {} are no pair of this execution's steps of two actors",
                                            pair.first, pair.second));
  }
  const Plan plan = plan_of(failing);
  std::vector<std::size_t> forced;
  delayed_plan(original.steps, pair.first, pair.second, forced);
  Scheduler scheduler;
  Run r = run_plan(scheduler, system, limits, plan, forced, pair.second, true);
  if (!r.feasible) {
    throw std::invalid_argument(fmt::format("step {} cannot run before step {}'s actor goes on", pair.second, pair.first));
  }
  ExecutionFacts out;
  out.result = std::move(r.result);
  out.steps = std::move(r.facts);
  out.object_names = std::move(r.object_names);
  out.events = std::move(r.events);
  out.actors = std::move(r.actors);
  out.decisions = std::move(r.decisions);
  return out;
}

}  // namespace lockstep::sim
