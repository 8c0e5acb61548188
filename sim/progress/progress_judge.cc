#include "lockstep/sim/progress/progress_judge.h"

#include <algorithm>

#include <fmt/format.h>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim {

namespace {

ProgressOutcome liveness(std::string name, std::string message) {
  ProgressOutcome out;
  out.verdict = Verdict::liveness;
  out.invariant = std::move(name);
  out.message = std::move(message);
  return out;
}

// Whole milliseconds (Time and Duration are both nanoseconds).
std::int64_t ms(Duration d) { return d.count() / 1'000'000; }

}  // namespace

void ProgressJudge::begin(const RunLimits& limits) {
  limits_ = &limits;
  watch_tail_ = limits.fair || limits.livelock_steps < limits.max_steps;
  lasso_ = limits.lasso_period > 0;
  max_steps_ = limits.max_steps;
  last_mismatch_ = 0;
  mismatch_seen_ = false;
  obligations_.clear();
  watch_.stop();
  round_robin_ = false;
  last_ran_.fill(0);
}

std::size_t ProgressJudge::filter_fairly(std::span<Transition> enabled) const {
  LOCKSTEP_INVARIANT(round_robin_, "the schedule turns round robin only after an unfair cycle");
  // Round robin: the actor that has waited longest since it last ran (the lowest on a tie)
  // is the only one offered; its run and its timer, when both can go.
  ActorId chosen = -1;
  for (const Transition& t : enabled) {
    if (chosen < 0 || last_ran_[t.actor] < last_ran_[chosen]) chosen = t.actor;
  }
  std::size_t kept = 0;
  for (const Transition& t : enabled) {
    if (t.actor == chosen) enabled[kept++] = t;
  }
  LOCKSTEP_INVARIANT(enabled.empty() || kept > 0, "round robin keeps the chosen actor's transitions");
  return kept;
}

void ProgressJudge::record(std::uint64_t step, const Transition& t, const StepResult& result, std::uint64_t enabled) {
  StepSig& sig = ring_.at(step);
  sig.verb = t.op->verb;
  sig.object = t.op->footprint.object;
  sig.arg = t.op->arg;
  sig.result = result;
  sig.actor = t.actor;
  sig.timer = t.timer;
  sig.enabled = enabled;
  watch_.step(ring_, step);
  const std::uint32_t p = limits_->lasso_period;
  if (p > 0 && step >= p) {
    LOCKSTEP_INVARIANT(p < kTailSteps, "a lasso's period fits in the ring");
    if (!sig.same_as(ring_.at(step - p))) {
      last_mismatch_ = step;
      mismatch_seen_ = true;
    }
  }
}

std::optional<ProgressOutcome> ProgressJudge::check_tail(std::uint64_t steps, const ProgressNames& names) {
  if (watch_.active()) {
    const Cycle c = watch_.cycle(steps);
    if (c.starved == 0 && steps - c.start >= limits_->livelock_steps) {
      return judge_cycle(c, JudgedAt::livelock_bound, steps, names);
    }
    return std::nullopt;
  }
  if (steps < kFairFirstStep + kMinCycleSteps) return std::nullopt;
  const std::uint64_t seen = steps - kFairFirstStep;  // the steps recorded since watching began
  auto cycle = find_cycle(ring_, steps, std::min<std::uint64_t>(seen, kFairWindow),
                          static_cast<std::uint32_t>(kFairWindow / kFairRepeats), kFairRepeats);
  if (!cycle && steps % kLongCycleCheckSteps == 0) {  // now and then, the longer cycles too
    cycle = find_cycle(ring_, steps, std::min<std::uint64_t>(seen, kTailSteps), kMaxCyclePeriod, kCycleRepeats);
  }
  if (!cycle) return std::nullopt;
  LOCKSTEP_INVARIANT(cycle->end == steps && cycle->period > 0, "a cycle ends at the step it was looked for");
  if (cycle->starved != 0 && limits_->fair) {
    round_robin_ = true;  // a fair scheduler from here on (filter_fairly)
    return std::nullopt;
  }
  watch_.start(*cycle, ring_);
  return std::nullopt;
}

ProgressOutcome ProgressJudge::at_bound(std::uint64_t steps, const ProgressNames& names) {
  const std::uint64_t window = std::min<std::uint64_t>(steps, kTailSteps);
  std::optional<Cycle> cycle = find_cycle(ring_, steps, window, kMaxCyclePeriod, kCycleRepeats);
  if (cycle) return judge_cycle(*cycle, JudgedAt::step_bound, steps, names);
  ProgressOutcome out;
  out.verdict = Verdict::step_bound;
  if (!obligations_.hot().empty()) {
    // A bare step bound is no evidence that an obligation is never met: the run may be long.
    const auto& h = obligations_.hot().front();
    out.invariant = h.name;
    std::string names_hot;
    for (const auto& o : obligations_.hot()) names_hot += fmt::format("{}\"{}\"", names_hot.empty() ? "" : ", ", o.name);
    out.message = fmt::format(
        "the execution ran past its bound of {} steps with {} still hot (the first since {} ms), but with no evidence "
        "that it is never met: its last {} steps repeat no fair cycle, no deadline passed in virtual time and not "
        "every actor finished (a larger --max-steps, or a `within` on the obligation in timed mode, decides)",
        limits_->max_steps, names_hot, ms(h.since), window);
    return out;
  }
  out.message = fmt::format(
      "the execution ran past its bound of {} steps, and its last {} steps repeat no cycle of at most {} steps (a "
      "long run, or a loop that changes something each time round)",
      limits_->max_steps, window, kMaxCyclePeriod);
  return out;
}

ProgressOutcome ProgressJudge::judge_cycle(Cycle cycle, JudgedAt at, std::uint64_t steps,
                                           const ProgressNames& names) const {
  if (limits_->lasso_period == cycle.period) {
    // Every step was compared with the one a period before it: the suffix may begin before the ring.
    cycle.start = mismatch_seen_ ? last_mismatch_ + 1 - cycle.period : 0;
  }
  LOCKSTEP_INVARIANT(cycle.start <= cycle.end && cycle.period > 0, "a lasso's cycle lies within the execution");
  ProgressOutcome out;
  out.cycle = cycle;
  const bool unfair = cycle.starved != 0;
  if (unfair && limits_->fair) {
    out.unfair = true;
    return out;
  }
  const std::string cycle_text = describe_cycle(cycle, ring_, names.actors, names.objects);
  const std::string where = at == JudgedAt::step_bound ? std::string("up to the step bound")
                                     : fmt::format("in a row ({} steps: the livelock bound)", steps - cycle.start);
  std::string others = names.parked(cycle.looping);
  if (limits_->time == TimeMode::timed) {
    // A cycle whose steps wait for no timer: virtual time stands still while it spins.
    bool waits = false;
    for (std::uint64_t s = cycle.end - cycle.period; s < cycle.end && !waits; ++s) {
      const StepSig& sig = ring_.at(s);
      waits = sig.timer || sig.verb == "sleep" || sig.verb == "round_trip" || sig.verb == "stall" || sig.verb == "pg_sleep";
    }
    if (!waits) {
      others += "; the cycle sleeps nowhere: in timed mode time stands still while it spins, so no lease expires and no "
                "timeout fires during it (on a server each round trip takes time: the timing model's statement_ms "
                "gives the simulation that too)";
    }
  }
  if (!unfair && !obligations_.hot().empty()) {
    const auto& h = obligations_.hot().front();
    ProgressOutcome live =
        liveness(h.name, fmt::format("\"{}\" is still hot (since {} ms) while {}: a fair {}-step cycle, repeated {} "
                                     "times {} (evidence: a fair cycle, which the actors in it never leave){}",
                                     h.name, ms(h.since), cycle_text, cycle.period, cycle.repeats(), where, others));
    live.cycle = cycle;
    return live;
  }
  if (unfair) {
    out.verdict = Verdict::step_bound;
    out.message = fmt::format(
        "the execution ran past its bound of {} steps: {}, while {} could run at every step and never did (an "
        "unfair schedule: fair mode cuts it){}",
        limits_->max_steps, cycle_text, actor_list(cycle.starved, names.actors), others);
    return out;
  }
  out.verdict = Verdict::livelock;
  out.message =
      fmt::format("{}: a fair {}-step cycle, repeated {} times {}{}", cycle_text, cycle.period, cycle.repeats(), where,
                  others);
  return out;
}

std::optional<ProgressOutcome> ProgressJudge::cold(std::string_view name, Time now, bool timed) {
  const auto h = obligations_.make_cold(name);
  if (!h || !timed || h->within == Duration::max() || now - h->since <= h->within) return std::nullopt;
  return liveness(h->name, fmt::format("\"{}\" was met at {} ms, {} ms after it went hot: more than its {} ms (evidence: a deadline passed in "
                                       "virtual time)",
                                       h->name, ms(now), ms(now - h->since), ms(h->within)));
}

std::optional<ProgressOutcome> ProgressJudge::overdue(Time now) const {
  const ObligationSet::Hot* late = obligations_.overdue(now);
  if (late == nullptr) return std::nullopt;
  return liveness(late->name,
                  fmt::format("\"{}\" is still hot at {} ms: it went hot at {} ms and had to be met within {} ms (evidence: a "
                              "deadline passed in virtual time)",
                              late->name, ms(now), ms(late->since), ms(late->within)));
}

std::optional<ProgressOutcome> ProgressJudge::at_end(const std::vector<std::string>& actor_names) const {
  if (obligations_.hot().empty()) return std::nullopt;
  const auto& h = obligations_.hot().front();
  return liveness(h.name, fmt::format("every actor finished with \"{}\" still hot (since {} ms, made hot by {}; evidence: no one is left "
                                      "to meet it)",
                                      h.name, ms(h.since), h.actor >= 0 ? actor_names[h.actor] : std::string("-")));
}

}  // namespace lockstep::sim
