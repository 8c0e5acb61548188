#include "lockstep/sim/progress/progress.h"

#include <algorithm>

#include <fmt/format.h>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim {

std::optional<Cycle> find_cycle(const StepRing& ring, std::uint64_t end, std::uint64_t window,
                                std::uint32_t max_period, std::uint32_t min_repeats) {
  LOCKSTEP_INVARIANT(window <= kTailSteps && window <= end, "a cycle is looked for in the ring's steps only");
  if (window < kMinCycleSteps || min_repeats == 0) return std::nullopt;
  const std::uint64_t first = end - window;
  const StepSig& last = ring.at(end - 1);
  std::optional<Cycle> best;
  std::uint64_t best_length = 0;
  const std::uint64_t top = std::min<std::uint64_t>(max_period, window / min_repeats);
  for (std::uint64_t p = 1; p <= top; ++p) {
    if (!ring.at(end - 1 - p).same_as(last)) continue;
    std::uint64_t i = end - 1;  // steps i with sig[i] == sig[i - p], from the end back
    while (i >= first + p && ring.at(i).same_as(ring.at(i - p))) --i;
    const std::uint64_t length = (end - 1 - i) + p;  // the periodic suffix, its first period included
    if (length < std::uint64_t{min_repeats} * p || length < kMinCycleSteps || length <= best_length) continue;
    best_length = length;
    best = Cycle{end - length, static_cast<std::uint32_t>(p), end, 0, 0};
    if (length >= window) break;  // the whole window repeats: no longer suffix exists
  }
  if (!best) return std::nullopt;
  std::uint64_t ever_enabled = 0;
  for (std::uint64_t s = best->start; s < end; ++s) {
    ever_enabled |= ring.at(s).enabled;
    best->looping |= std::uint64_t{1} << ring.at(s).actor;
  }
  best->starved = ever_enabled & ~best->looping;
  return best;
}

void CycleWatch::start(const Cycle& cycle, const StepRing& ring) {
  period_ = cycle.period;
  start_ = cycle.start;
  ever_enabled_ = 0;
  looping_ = 0;
  for (std::uint64_t s = cycle.start; s < cycle.end; ++s) {
    ever_enabled_ |= ring.at(s).enabled;
    looping_ |= std::uint64_t{1} << ring.at(s).actor;
  }
}

void CycleWatch::step(const StepRing& ring, std::uint64_t step) {
  if (!active()) return;
  const StepSig& sig = ring.at(step);
  if (step < start_ + period_ || !sig.same_as(ring.at(step - period_))) {
    stop();
    return;
  }
  ever_enabled_ |= sig.enabled;
  looping_ |= std::uint64_t{1} << sig.actor;
}

Cycle CycleWatch::cycle(std::uint64_t end) const {
  LOCKSTEP_INVARIANT(active(), "a cycle is asked of a watch that follows one");
  return Cycle{start_, period_, end, ever_enabled_ & ~looping_, looping_};
}

std::string actor_list(std::uint64_t actors, const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t a = 0; a < names.size() && a < 64; ++a) {
    if (actors >> a & 1) out += fmt::format("{}{}", out.empty() ? "" : ", ", names[a]);
  }
  return out;
}

std::string describe_cycle(const Cycle& cycle, const StepRing& ring, const std::vector<std::string>& actors,
                           const std::vector<std::string>& objects) {
  // Each looping actor's steps in one period, in order: "t1: try_lock m -> failed".
  constexpr std::size_t kMaxShown = 6;
  std::string out;
  for (std::size_t a = 0; a < actors.size() && a < 64; ++a) {
    if (!(cycle.looping >> a & 1)) continue;
    std::string ops;
    std::size_t shown = 0, total = 0;
    for (std::uint64_t s = cycle.end - cycle.period; s < cycle.end; ++s) {
      const StepSig& sig = ring.at(s);
      if (sig.actor != static_cast<ActorId>(a)) continue;
      ++total;
      if (shown++ >= kMaxShown) continue;
      std::string op = sig.timer ? fmt::format("{} (timer)", sig.verb) : std::string(sig.verb);
      if (sig.object != kNoObject && sig.object < objects.size()) op += " " + objects[sig.object];
      ops += fmt::format("{}{}", ops.empty() ? "" : ", ", op);
    }
    if (total > kMaxShown) ops += fmt::format(", ... ({} steps)", total);
    out += fmt::format("{}{} repeats [{}]", out.empty() ? "" : "; ", actors[a], ops);
  }
  return out;
}

void ObligationSet::make_hot(std::string_view name, Time now, Duration within, ActorId actor) {
  for (const Hot& h : hot_) {
    if (h.name == name) return;  // hot already: it stays hot since it first went hot
  }
  hot_.push_back({std::string(name), now, within, actor});
}

std::optional<ObligationSet::Hot> ObligationSet::make_cold(std::string_view name) {
  for (auto it = hot_.begin(); it != hot_.end(); ++it) {
    if (it->name != name) continue;
    Hot h = std::move(*it);
    hot_.erase(it);
    return h;
  }
  return std::nullopt;
}

const ObligationSet::Hot* ObligationSet::overdue(Time now) const {
  for (const Hot& h : hot_) {
    if (h.within != Duration::max() && now - h.since > h.within) return &h;
  }
  return nullptr;
}

}  // namespace lockstep::sim
