// sim/progress/progress.h: judging progress: repeating cycles, fairness, and progress obligations.
//
// A livelock is an execution that reaches its step bound while its last steps repeat one
// cycle: the same actors take the same operations on the same objects and get the same
// results, period after period, and the cycle is fair: every actor that could run at every
// step of it takes a step in it. Repetition is what the scheduler can see; an actor's own
// position is a function of the results it received (model code is deterministic given
// them), so a cycle whose results repeat forever is one no step inside it can leave.
//
// Fairness, as in CHESS's fair stateless model checking (Musuvathi and Qadeer, PLDI 2008):
// an infinite schedule is (strongly) fair when every actor enabled infinitely often runs
// infinitely often. A repeating cycle in which some actor is enabled at some step and never
// runs is unfair: a fair scheduler would run it. In fair mode (RunLimits::fair, the default)
// the scheduler looks at its tail every kFairCheckSteps steps; once an unfair cycle has
// repeated kFairRepeats times, the rest of the execution is scheduled fairly: round robin,
// the actor that has waited longest since it last ran is the only one offered to the
// strategy. The strategy still sees every step (partial-order reduction reverses the races
// of the prefix as usual), and the run is deterministic from its decisions (replay needs no
// fairness: a trace's decisions say who ran). A loop that this fair continuation does not
// leave is a livelock (or a liveness failure when an obligation is hot); one it leaves was
// only unfair. Continuations in which the starved actors run after more repetitions of the
// cycle, or in another order than round robin, are not explored. Without fair mode an
// unfair cycle runs to the step bound and gets the verdict step_bound, naming who starved.

// Progress obligations (Env::hot / Env::cold, as Coyote's hot and cold monitor states) are
// kept by the scheduler; ObligationSet is their bookkeeping.
//
// Cost: find_cycle is O(window x candidate periods) in the worst case, and only periods p
// with sig[n-1] == sig[n-1-p] are tried; the scheduler calls it once at a step bound and,
// in fair mode, every kFairCheckSteps steps on a window of kFairWindow steps. Memory: a ring
// of kTailSteps signatures per scheduler, whatever the step bound.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/sim/sched/op.h"

namespace lockstep::sim {

// What the scheduler remembers of one step, to compare steps across periods.
struct StepSig {
  std::string_view verb;  // OpDesc::verb: a string literal
  ObjectId object = kNoObject;
  std::int64_t arg = 0;
  StepResult result;
  ActorId actor = 0;
  bool timer = false;
  std::uint64_t enabled = 0;  // bit per actor with an enabled transition when it was picked

  // Same actor, operation, object, argument and result (not the enabled set).
  bool same_as(const StepSig& o) const {
    return actor == o.actor && timer == o.timer && object == o.object && arg == o.arg &&
           result.kind == o.result.kind && result.value == o.result.value && verb == o.verb;
  }
};

// How many steps of the tail the scheduler keeps (a ring), the longest cycle it looks for,
// and the fewest repetitions and steps that make a cycle.
inline constexpr std::size_t kTailSteps = 4096;
inline constexpr std::uint32_t kMaxCyclePeriod = 1024;
inline constexpr std::uint32_t kCycleRepeats = 3;
inline constexpr std::uint64_t kMinCycleSteps = 12;
// Fair mode: how often the tail is checked, how much of it, and how many repetitions of an
// unfair cycle are allowed before the execution is cut.
inline constexpr std::uint64_t kFairCheckSteps = 32;
inline constexpr std::size_t kFairWindow = 1024;
inline constexpr std::uint32_t kFairRepeats = 4;
// Fair mode watches an execution's tail from this step on: most executions of most models
// end sooner, and keep the step loop as it was (a step bound below it is judged at the bound).
inline constexpr std::uint64_t kFairFirstStep = 256;
// How often the whole ring is searched for cycles up to kMaxCyclePeriod (a livelock's).
inline constexpr std::uint64_t kLongCycleCheckSteps = 1024;

// A ring of the last kTailSteps step signatures; index by absolute step number.
class StepRing {
 public:
  StepRing() : sigs_(kTailSteps) {}
  StepSig& at(std::uint64_t step) { return sigs_[step % kTailSteps]; }
  const StepSig& at(std::uint64_t step) const { return sigs_[step % kTailSteps]; }

 private:
  std::vector<StepSig> sigs_;
};

// A cycle at the end of the first `end` steps: steps [start, end) repeat with `period`.
struct Cycle {
  std::uint64_t start = 0;  // the first step of the periodic suffix within the window looked at
  std::uint32_t period = 0;
  std::uint64_t end = 0;
  std::uint64_t repeats() const { return (end - start) / period; }
  std::uint64_t starved = 0;  // actors enabled at some step of the suffix that never ran in it
  std::uint64_t looping = 0;  // actors that took steps in the cycle
};

// The cycle the last `window` of the first `end` steps end with: the period whose periodic
// suffix is longest (the shortest such period on a tie), when that suffix holds at least
// `min_repeats` periods and kMinCycleSteps steps. REQUIRES: window <= kTailSteps, end.
std::optional<Cycle> find_cycle(const StepRing& ring, std::uint64_t end, std::uint64_t window,
                                std::uint32_t max_period, std::uint32_t min_repeats);

// Follows one cycle step by step once find_cycle has seen it: how long the steps have gone on
// repeating with its period, and whether it stayed fair. O(1) per step.
class CycleWatch {
 public:
  bool active() const { return period_ != 0; }
  void start(const Cycle& cycle, const StepRing& ring);
  // After step `step` was recorded: the watch ends when it differs from the step a period before.
  void step(const StepRing& ring, std::uint64_t step);
  void stop() { period_ = 0; }
  // The cycle from where the repetition began to `end`. REQUIRES: active().
  Cycle cycle(std::uint64_t end) const;

 private:
  std::uint32_t period_ = 0;
  std::uint64_t start_ = 0;
  std::uint64_t ever_enabled_ = 0;
  std::uint64_t looping_ = 0;
};

// "t26 repeats lock lockb[3] -> ok, read busy[3] -> 1, ... (78 steps)": who loops on what.
std::string describe_cycle(const Cycle& cycle, const StepRing& ring, const std::vector<std::string>& actors,
                           const std::vector<std::string>& objects);

// Actors in a bit set, by name: "t1, t2".
std::string actor_list(std::uint64_t actors, const std::vector<std::string>& names);

// The progress obligations of one execution (Env::hot and Env::cold).
class ObligationSet {
 public:
  struct Hot {
    std::string name;
    Time since{0};
    Duration within = Duration::max();
    ActorId actor = -1;
  };
  void clear() { hot_.clear(); }
  void make_hot(std::string_view name, Time now, Duration within, ActorId actor);
  // Removes it; returns how long it was hot (nullopt when it was not).
  std::optional<Hot> make_cold(std::string_view name);
  const std::vector<Hot>& hot() const { return hot_; }
  // The first hot obligation whose `within` has passed at `now`.
  const Hot* overdue(Time now) const;

 private:
  std::vector<Hot> hot_;  // few at a time: a vector, in the order they went hot
};

}  // namespace lockstep::sim
