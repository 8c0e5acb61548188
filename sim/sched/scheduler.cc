#include "lockstep/sim/sched/scheduler.h"

#include <algorithm>
#include <bit>
#include <climits>
#include <cstdint>

#include <fmt/format.h>

#include "lockstep/sim/invariant.h"
#include "lockstep/sim/sched/sim_env.h"

namespace lockstep::sim {

static_assert(kGlobalObservations == kGlobalScope, "sim/sched/op.h and model/env.h name the same global scope");

struct Scheduler::Actor {
  Scheduler* scheduler = nullptr;
  ActorId id = 0;
  Fiber fiber;
  bool finished = true;
  OpDesc op;  // the pending operation
  const WaitCondition* guard = nullptr;
  Time deadline{0};
  bool has_deadline = false;
  Wake wake = Wake::run;
};

namespace {

std::string result_text(const StepResult& r, bool timer) {
  switch (r.kind) {
    case StepResult::Kind::none: return timer ? "timeout" : "";
    case StepResult::Kind::value: return std::to_string(r.value);
    case StepResult::Kind::ok: return "ok";
    case StepResult::Kind::failed: return "failed";
    case StepResult::Kind::timeout: return "timeout";
    case StepResult::Kind::woke: return "woke";
    case StepResult::Kind::queued: return "queued";
  }
  return "";
}

}  // namespace

Scheduler::Scheduler() {
  decisions_.reserve(1 << 12);
}

Scheduler::~Scheduler() = default;

ActorId Scheduler::current() const {
  if (current_ < 0) throw ModelError("no current actor: called outside any actor");
  return current_;
}

Time Scheduler::now() const {
  if (limits_.time == TimeMode::timed) return now_;
  if (current_ >= 0) return actor_now_[current_];
  Time latest{0};
  for (ActorId i = 0; i < actor_count_; ++i) latest = std::max(latest, actor_now_[i]);
  return latest;
}

ObjectId Scheduler::new_object(std::string name) {
  // Most executions make the same objects in the same order: the id made at this position
  // last time, when it is the first object of this name and not made yet, is the one.
  const std::size_t position = made_count_++;
  if (position < made_order_.size()) {
    const ObjectId id = made_order_[position];
    if (object_first_of_name_[id] && object_made_in_[id] != execution_ && object_names_[id] == name) {
      object_made_in_[id] = execution_;
      written_at_[id] = Time{0};
      return id;
    }
  } else {
    made_order_.push_back(kNoObject);
  }
  std::string key = name;
  for (int occurrence = 2;; ++occurrence) {
    const auto [it, added] = object_ids_.try_emplace(key, static_cast<ObjectId>(object_names_.size()));
    if (added) {
      object_names_.push_back(name);
      object_made_in_.push_back(0);
      object_first_of_name_.push_back(occurrence == 2);
      written_at_.resize(object_names_.size());
    }
    const ObjectId id = it->second;
    if (object_made_in_[id] != execution_) {
      object_made_in_[id] = execution_;
      written_at_[id] = Time{0};
      made_order_[position] = id;
      return id;
    }
    key = fmt::format("{}\x1f{}", name, occurrence);  // another object of the same name
  }
}

std::vector<std::string> Scheduler::object_keys() const {
  std::vector<std::string> keys(object_names_.size() - 1);
  for (const auto& [key, id] : object_ids_) keys[id - 1] = key;
  return keys;
}

ObjectId Scheduler::object_of_key(const std::string& key) {
  const auto [it, added] = object_ids_.try_emplace(key, static_cast<ObjectId>(object_names_.size()));
  if (added) {
    const auto separator = key.find('\x1f');
    object_names_.push_back(key.substr(0, separator));
    object_made_in_.push_back(0);
    object_first_of_name_.push_back(separator == std::string::npos);
    written_at_.resize(object_names_.size());
  }
  return it->second;
}

void Scheduler::restore_objects(const std::vector<std::string>& keys) {
  LOCKSTEP_INVARIANT(object_names_.size() == 1, "scheduler: objects are restored before any is made");
  for (const std::string& key : keys) {
    const auto separator = key.find('\x1f');
    if (!object_ids_.try_emplace(key, static_cast<ObjectId>(object_names_.size())).second) {
      throw std::invalid_argument("an object named twice: " + key);
    }
    object_names_.push_back(key.substr(0, separator));
    object_made_in_.push_back(0);
    object_first_of_name_.push_back(separator == std::string::npos);
  }
  written_at_.resize(object_names_.size());
}

void Scheduler::begin(const RunLimits& limits, Strategy& strategy) {
  limits_ = limits;
  strategy_ = &strategy;
  instance_ = nullptr;
  actor_count_ = 0;
  current_ = -1;
  now_ = Time{0};
  actor_now_.fill(Time{0});
  crash_armed_.fill(std::nullopt);
  doomed_.fill(false);
  crashing_ = -1;
  steps_ = 0;
  rng_ = Random(limits.seed);
  aborting_ = false;
  failed_ = false;
  result_verdict_ = ExecutionResult{};
  divergence_ = nullptr;
  decisions_.clear();
  events_.clear();
  obligations_.clear();
  last_mismatch_ = 0;
  mismatch_seen_ = false;
  watch_.stop();
  fair_round_robin_ = false;
  last_ran_.fill(0);
  ++execution_;  // object ids stay: see new_object
  made_count_ = 0;
  actor_names_.clear();
  symmetry_ = Symmetry();
  started_ = 0;
}

ExecutionResult Scheduler::run(const System& system, SimEnv& env, Strategy& strategy,
                               const RunLimits& limits) {
  begin(limits, strategy);
  env_ = &env;
  env.begin_execution(*this);
  std::unique_ptr<Instance> instance;
  // Unwinds unfinished actors before the instance they use is destroyed, on every path.
  struct Cleanup {
    Scheduler* s;
    ~Cleanup() {
      s->abort_unfinished();
      s->instance_ = nullptr;
    }
  };
  try {
    instance = system.instantiate(env);
  } catch (const std::exception& e) {
    fail(Verdict::model_error, "", fmt::format("building the system failed: {}", e.what()));
    return result_verdict_;
  }
  Cleanup cleanup{this};
  instance_ = instance.get();
  const int n = instance->actor_count();
  if (n > kMaxActors) {
    fail(Verdict::model_error, "", fmt::format("{} actors; at most {} are supported", n, kMaxActors));
    return result_verdict_;
  }
  start_actors(n);
  if (!failed_) setup_symmetry();
  while (!failed_ && next_step()) {
  }
  result_verdict_.steps = steps_;
  if (events_.size() > kMaxLoggedEvents) {
    events_.erase(events_.begin(), events_.end() - static_cast<std::ptrdiff_t>(kMaxLoggedEvents));
  }
  return result_verdict_;
}

// Makes the execution's n actors (reusing fibers) and runs each up to its first visible
// operation; that code touches nothing shared.
void Scheduler::start_actors(int n) {
  while (static_cast<int>(actors_.size()) < n) {
    actors_.push_back(std::make_unique<Actor>());
    actors_.back()->scheduler = this;
    actors_.back()->id = static_cast<ActorId>(actors_.size() - 1);
  }
  actor_count_ = n;
  unfinished_ = n == kMaxActors ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1;
  for (ActorId i = 0; i < n; ++i) {
    actor_names_.emplace_back(instance_->actor_name(i));
    Actor& a = *actors_[i];
    a.finished = false;
    a.guard = nullptr;
    a.has_deadline = false;
    a.op = OpDesc{"start", {}, 0, false};
    a.fiber.start(&Scheduler::actor_entry, &a);
  }
  for (ActorId i = 0; i < n && !failed_; ++i) {
    current_ = i;
    actors_[i]->fiber.resume();
    current_ = -1;
    if (divergence_) std::rethrow_exception(divergence_);
  }
}

// Symmetry (sim/explore/symmetry.h), once the actors stand at their first operations: the classes
// the instance declares, each member's object and the member before it (skipping members
// that finished without a step: by symmetry all of their class did); the strategy is told.
// Throws InputError for a declaration that is malformed or plainly not symmetric: it is
// the model's mistake, not a verdict on its code, and a trace could not show it.
void Scheduler::setup_symmetry() {
  if (limits_.symmetry) {
    std::vector<std::vector<ActorId>> classes;
    try {
      classes = instance_->symmetric_actors();
    } catch (const std::exception& e) {
      throw InputError(fmt::format("symmetry: symmetric_actors threw: {}", e.what()));
    }
    if (auto error = symmetry_declaration_error(classes, actor_count_); !error.empty()) {
      throw InputError("symmetry: " + error);
    }
    for (std::size_t k = 0; k < classes.size(); ++k) {
      auto members = classes[k];
      std::sort(members.begin(), members.end());
      const ObjectId object = new_object(fmt::format("symmetry:{}", k));
      int previous = -1;
      std::uint64_t permutations = 1;
      for (std::size_t i = 0; i < members.size(); ++i) {
        const ActorId a = members[i];
        symmetry_.object[a] = object;
        ++symmetry_.actors;
        permutations = permutations > UINT64_MAX / (i + 1) ? UINT64_MAX : permutations * (i + 1);
        if (actors_[a]->finished) continue;
        first_op_[a] = actors_[a]->op;
        if (!add_symmetry_object(first_op_[a].footprint, object)) {
          throw InputError(fmt::format("symmetry: the first operation of {} ({}) names too many objects",
                                       actor_names_[a], op_text(actors_[a]->op)));
        }
        if (previous >= 0) {
          const OpDesc& mine = actors_[a]->op;
          const OpDesc& theirs = actors_[previous]->op;
          if (mine.verb != theirs.verb || mine.footprint.access != theirs.footprint.access) {
            throw InputError(fmt::format("symmetry: {} and {} are declared interchangeable, but their first operations "
                                         "differ ({} and {})",
                                         actor_names_[previous], actor_names_[a], op_text(theirs), op_text(mine)));
          }
        }
        symmetry_.previous[a] = static_cast<std::int8_t>(previous);
        previous = a;
      }
      symmetry_.permutations =
          symmetry_.permutations > UINT64_MAX / permutations ? UINT64_MAX : symmetry_.permutations * permutations;
    }
  }
  strategy_->symmetric(symmetry_);
}

// Drops the transitions of members whose previous member has not started, and shows the
// strategy each unstarted member's first operation with its class's object. Throws
// InputError when a member could run while the one before it, at the same point of the same
// code, could not: the declaration is wrong.
void Scheduler::filter_symmetric() {
  const std::uint64_t started = started_ | ~unfinished_;
  std::uint64_t runs = 0, timers = 0;
  for (std::size_t i = 0; i < enabled_count_; ++i) {
    (enabled_[i].timer ? timers : runs) |= std::uint64_t{1} << enabled_[i].actor;
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < enabled_count_; ++i) {
    Transition t = enabled_[i];
    const ActorId a = t.actor;
    if (symmetry_.in_class(a) && !((started >> a) & 1)) {
      const int p = symmetry_.previous[a];
      if (p >= 0 && !((started >> p) & 1)) {
        if (!(((t.timer ? timers : runs) >> p) & 1)) {
          throw InputError(fmt::format("symmetry: {} and {} are declared interchangeable, but {}'s first operation "
                                       "({}) can run where {}'s cannot",
                                       actor_names_[p], actor_names_[a], actor_names_[a], op_text(actors_[a]->op),
                                       actor_names_[p]));
        }
        continue;  // a representative starts p first
      }
      t.op = &first_op_[a];
    }
    enabled_[kept++] = t;
  }
  enabled_count_ = kept;
  for (std::size_t i = 0; i < parked_count_; ++i) {
    const ActorId a = parked_[i].actor;
    if (symmetry_.in_class(a) && !((started >> a) & 1)) parked_[i].op = &first_op_[a];
  }
}

// One turn of the run loop: who can run, then one step. False when the execution ends.
// Inlined into run()'s loop: it is the per-step path (bench: BM_SchedulerStepPingPong).
[[gnu::always_inline]] inline bool Scheduler::next_step() {
  collect_enabled();
  if (symmetry_.any()) filter_symmetric();
  strategy_->parked(parked());
  if (enabled_count_ == 0) return nothing_enabled();
  if (steps_ >= limits_.max_steps) {
    finish_at_bound();
    return false;
  }
  if (steps_ % kStopCheckSteps == 0 && steps_ > 0 && limits_.stop && limits_.stop()) {
    result_verdict_.interrupted = true;
    return false;
  }
  if (steps_ % kFairCheckSteps == 0 && watching_tail() && check_tail()) return false;
  // The tail's signatures: always in fair mode and for a lasso, else only near the bound.
  // Who could run is taken before fairness filters it: that is what fairness judges.
  const bool remember = watching_tail() || limits_.lasso_period > 0 || steps_ + kTailSteps >= limits_.max_steps;
  std::uint64_t enabled_mask = 0;
  if (remember) {
    for (std::size_t i = 0; i < enabled_count_; ++i) enabled_mask |= std::uint64_t{1} << enabled_[i].actor;
  }
  if (fair_round_robin_) filter_fairly();
  const std::size_t pick = strategy_->pick(enabled(), steps_);
  if (pick == Strategy::kPrune || pick == Strategy::kSkip) {
    (pick == Strategy::kPrune ? result_verdict_.pruned : result_verdict_.skipped) = true;
    return false;
  }
  if (pick >= enabled_count_) {
    throw std::logic_error(fmt::format("strategy {} picked transition {} of {}",
                                       strategy_->name(), pick, enabled_count_));
  }
  const Transition t = enabled_[pick];
  decisions_.push_back({t.timer ? Decision::Kind::timer : Decision::Kind::run,
                        static_cast<std::uint32_t>(t.actor)});
  last_ran_[t.actor] = steps_ + 1;
  if (t.timer) ++result_verdict_.timer_steps;
  execute(t);
  if (divergence_) std::rethrow_exception(divergence_);
  if (remember) record_sig(t, enabled_mask);
  return true;
}

// Nothing can run: the clock moves on (timed mode; false if an obligation's deadline then
// fails), or the execution ends: a deadlock while some actor is unfinished, else its end.
bool Scheduler::nothing_enabled() {
  if (limits_.time == TimeMode::timed && advance_clock()) {
    strategy_->clock_advanced();
    return !check_obligation_deadlines();
  }
  if (unfinished_ != 0) {
    finish_with_deadlock();
  } else {
    judge_end();
  }
  return false;
}

// Every actor finished: the system's end-of-execution invariants, hot obligations, marks.
void Scheduler::judge_end() {
  try {
    if (limits_.record_final_state) result_verdict_.final_state = instance_->final_state();
    if (auto v = instance_->at_end()) fail(Verdict::violation, v->invariant, v->message);
    if (!obligations_.hot().empty()) {
      const auto& h = obligations_.hot().front();
      fail(Verdict::liveness, h.name,
           fmt::format("every actor finished with \"{}\" still hot (since {} ms, made hot by {})", h.name,
                       h.since.count() / 1'000'000, h.actor >= 0 ? actor_names_[h.actor] : std::string("-")));
    }
    result_verdict_.marks = instance_->marks();
    result_verdict_.lock_order_edges = instance_->lock_order_edges();
    for (auto& fault : env_->injected_faults()) result_verdict_.marks.push_back(std::move(fault));
    std::sort(result_verdict_.marks.begin(), result_verdict_.marks.end());
    result_verdict_.marks.erase(std::unique(result_verdict_.marks.begin(), result_verdict_.marks.end()),
                                result_verdict_.marks.end());
  } catch (const std::exception& e) {
    fail(Verdict::model_error, "", fmt::format("final check threw: {}", e.what()));
  }
}

void Scheduler::collect_enabled() {
  enabled_count_ = 0;
  parked_count_ = 0;
  const bool timed = limits_.time == TimeMode::timed;
  for (std::uint64_t rest = unfinished_; rest != 0; rest &= rest - 1) {
    const auto i = static_cast<ActorId>(std::countr_zero(rest));
    const Actor& a = *actors_[i];
    const bool ready = a.guard == nullptr || doomed_[i] || a.guard->ready(i);
    const bool waits = a.guard != nullptr;
    if (ready) {
      enabled_[enabled_count_++] = {i, false, &a.op, waits};
    } else {
      parked_[parked_count_++] = {i, false, &a.op, waits};
    }
    // Untimed: a timer may fire at any moment of its wait, even once the wait could end.
    if (a.has_deadline && (!timed || a.deadline <= now_)) enabled_[enabled_count_++] = {i, true, &a.op};
  }
}

bool Scheduler::advance_clock() {
  bool found = false;
  Time earliest = Time::max();
  for (ActorId i = 0; i < actor_count_; ++i) {
    const Actor& a = *actors_[i];
    if (!a.finished && a.has_deadline && a.deadline > now_ && a.deadline < earliest) {
      earliest = a.deadline;
      found = true;
    }
  }
  if (found) now_ = earliest;
  return found;
}

void Scheduler::execute(const Transition& t) {
  Actor& a = *actors_[t.actor];
  a.wake = t.timer ? Wake::timer : Wake::run;
  const Footprint declared = a.op.footprint;
  effective_access_ = declared.access;
  effects_ = 0;
  touched_count_ = 0;
  touched_overflow_ = false;
  if (limits_.time == TimeMode::untimed) {
    if (t.timer) actor_now_[t.actor] = std::max(actor_now_[t.actor], a.deadline);  // the actor's own clock
    take_clocks(t.actor, declared);
  }
  result_ = StepResult{};
  crash_domain_ = kNoObject;
  crash_text_.clear();
  std::size_t log_index = 0;
  if (limits_.log_events) {
    detail_.clear();  // note_detail and note_released are called only when logging
    released_.clear();
    if (events_.size() >= 2 * kMaxLoggedEvents) {  // keep the latest: amortized O(1) per step
      events_.erase(events_.begin(), events_.end() - static_cast<std::ptrdiff_t>(kMaxLoggedEvents));
    }
    log_index = events_.size();
    events_.push_back({steps_, (limits_.time == TimeMode::timed ? now_ : actor_now_[t.actor]).count(), t.actor,
                       op_text(a.op), ""});
  }
  current_ = t.actor;
  a.fiber.resume();
  current_ = -1;
  ++steps_;
  Footprint effective = declared;  // object and domain as declared
  effective.access = effective_access_;
  effective.effects = effects_;
  effective.scope = (effects_ & kObserves) ? scope_ : kGlobalObservations;
  if (crash_domain_ != kNoObject) {  // a crash whose releases touched a domain writes it
    LOCKSTEP_INVARIANT(effective.domain == kNoObject || effective.domain == crash_domain_,
                       "a crash step touches one domain (footprints name one)");
    effective.domain = crash_domain_;
    effective.domain_write = true;
  }
  for (std::size_t i = 0; i < touched_count_; ++i) add_object(effective, touched_[i]);
  if (touched_overflow_) effective.domain_write = true;
  if (limits_.time == TimeMode::untimed) pass_clock(t.actor, effective);
  const std::uint64_t actor_bit = std::uint64_t{1} << t.actor;
  if (symmetry_.in_class(t.actor) && !(started_ & actor_bit)) {
    add_symmetry_object(effective, symmetry_.object[t.actor]);  // room checked by setup_symmetry
  }
  started_ |= actor_bit;
  strategy_->executed(t, effective);
  if (limits_.log_events) {
    std::string text = crash_text_.empty() ? result_text(result_, t.timer) : crash_text_;
    if (!detail_.empty()) text = text.empty() ? std::move(detail_) : text + " " + detail_;
    events_[log_index].result = std::move(text);
  }
}

void Scheduler::take_clocks(ActorId actor, const Footprint& declared) {
  Time& clock = actor_now_[actor];
  const auto take = [&](ObjectId obj) {
    LOCKSTEP_INVARIANT(obj < written_at_.size(), "a footprint names objects made by new_object");
    clock = std::max(clock, written_at_[obj]);
  };
  // Every access but none is dependent with a write of the same object (sim/sched/op.h), and a
  // step in a domain with a step that writes the domain.
  if (declared.object != kNoObject && declared.access != Access::none) take(declared.object);
  for (std::size_t i = 0; i < declared.extra_count; ++i) take(declared.extra[i]);
  if (declared.domain != kNoObject) take(declared.domain);
}

void Scheduler::pass_clock(ActorId actor, const Footprint& effective) {
  const Time clock = actor_now_[actor];
  for_each_object(effective, [&](ObjectId obj, Access access) {
    if (access != Access::none && !is_read(access)) written_at_[obj] = std::max(written_at_[obj], clock);
  });
  if (effective.domain != kNoObject && effective.domain_write) {
    written_at_[effective.domain] = std::max(written_at_[effective.domain], clock);
  }
}

void Scheduler::refine_access(Access access) {
  // Not checked while an actor unwinds (its operations then take no step of their own).
  LOCKSTEP_INVARIANT(current_ < 0 || aborting_ || crashing_ == current_ || actors_[current_]->op.narrows ||
                         actors_[current_]->wake == Wake::timer,
                     "a step narrows its access only when its operation says it may (OpDesc::narrows)");
  effective_access_ = access;
}

Wake Scheduler::yield(const OpDesc& op, const WaitCondition* guard, Duration timeout) {
  // An actor being unwound: releases and observations still happen (destructors of lock
  // guards and scope guards call them), anything else unwinds further.
  // The count of exceptions in flight is the thread's, shared with the scheduler's own stack:
  // an execution ended by an exception (a divergence) unwinds its actors with one in flight.
  auto abort_point = [&] {
    LOCKSTEP_INVARIANT(++unwind_steps_ <= kMaxUnwindSteps,
                       "an actor unwinding at the end of an execution goes on taking steps: model code that "
                       "catches everything must rethrow (ExecutionAborted)");
    if (std::uncaught_exceptions() > unwinding_base_ || op.footprint.access == Access::release ||
        (op.footprint.effects & kObserves)) {
      return Wake::run;
    }
    throw ExecutionAborted{};
  };
  if (current_ < 0) {
    if (guard != nullptr && !guard->ready(-1)) {
      throw ModelError(fmt::format("\"{}\" would block outside any actor", op_text(op)));
    }
    return Wake::run;
  }
  if (aborting_) return abort_point();
  if (crashing_ == current_) {
    if (std::uncaught_exceptions() > 0) {  // still unwinding: a release of the dead process, now
      for_each_object(op.footprint, [&](ObjectId obj, Access) { also_touch(obj); });
      if (op.footprint.domain != kNoObject) {
        LOCKSTEP_INVARIANT(crash_domain_ == kNoObject || crash_domain_ == op.footprint.domain,
                           "a crash step releases objects of one domain (footprints name one)");
        crash_domain_ = op.footprint.domain;
      }
      return Wake::run;
    }
    crashing_ = -1;  // caught: the restarted process runs its own steps
  }
  Actor& a = *actors_[current_];
  a.op = op;
  a.guard = guard;
  const Time start = now();
  a.has_deadline = timeout != kForever && timeout <= Time::max() - start;
  if (a.has_deadline) a.deadline = start + std::max(timeout, Duration{0});
  a.fiber.suspend();
  if (aborting_) return abort_point();
  if (doomed_[current_] && std::uncaught_exceptions() == 0 && crash_point(op)) {
    doomed_[current_] = false;
    crash_armed_[current_] = std::nullopt;
    crashing_ = current_;
    crash_text_ = "died with its machine instead";
    throw Crashed{CrashKind::machine};
  }
  if (crash_armed_[current_]) maybe_crash(op);
  return a.wake;
}

void Scheduler::arm_crash(std::optional<CrashKind> kind) {
  if (current_ < 0) throw ModelError("crash_points: called outside any actor");
  crash_armed_[current_] = kind;
}

void Scheduler::maybe_crash(const OpDesc& op) {
  // Not while unwinding (the dead process's releases are the kernel's), not at a plain
  // release (it may run in a destructor, and a death lets go of the same), not at an
  // observation (a fact for the invariants, not something the process does).
  if (std::uncaught_exceptions() > 0 || !crash_point(op)) return;
  const CrashKind kind = *crash_armed_[current_];
  if (choose(2, kind == CrashKind::machine ? "crash the machine here" : "crash the process here") == 0) return;
  crash_armed_[current_] = std::nullopt;
  crashing_ = current_;
  crash_text_ = fmt::format("crashed ({}) instead", crash_kind_name(kind));
  if (kind == CrashKind::machine) {
    effects_ |= kMachineCrash;
    for (ActorId i = 0; i < actor_count_; ++i) {
      Actor& other = *actors_[i];
      if (i == current_ || other.finished) continue;
      doomed_[i] = true;
      if (other.op.footprint.object != kNoObject) also_touch(other.op.footprint.object);  // it will not run
    }
  }
  env_->crash(kind);
  throw Crashed{kind};
}

std::uint32_t Scheduler::choose(std::uint32_t n, std::string_view label) {
  if (n == 0) throw ModelError(fmt::format("choose(0, \"{}\"): needs at least one option", label));
  if (aborting_) return 0;
  std::uint32_t v = 0;
  try {
    v = strategy_->choose(n, label, steps_);
  } catch (const Divergence&) {
    if (current_ < 0) throw;
    divergence_ = std::current_exception();  // rethrown by run() on the scheduler's stack
    aborting_ = true;
    throw ExecutionAborted{};
  }
  if (v >= n) throw std::logic_error(fmt::format("strategy chose {} of {}", v, n));
  decisions_.push_back({Decision::Kind::choice, v});
  if (limits_.log_events) {
    events_.push_back({steps_, now().count(), current_, fmt::format("choose {}", label), std::to_string(v)});
  }
  return v;
}

void Scheduler::observe(const Event& event) {
  if (aborting_ || instance_ == nullptr) return;
  // An ordered observation is a visible operation of its own (DESIGN: every Env call is),
  // on its scope: its footprint is then known before it runs, as partial-order reduction
  // needs. Carried by the step before it, its presence would depend on what that step read.
  if (current_ >= 0 && event.ordered) {
    OpDesc op{"observe", {}};
    op.footprint.effects = kObserves;
    op.footprint.scope = event.scope;
    yield(op);
    if (aborting_) return;  // the execution ended while it waited for its turn
  }
  if (limits_.log_events) {
    events_.push_back({steps_, now().count(), current_, fmt::format("observe {}", event.name),
                       fmt::format("{} {}", event.subject, event.value)});
  }
  if (current_ >= 0 && event.ordered) {
    effects_ |= kObserves;
    scope_ = event.scope;
  }
  if (auto v = instance_->on_event(event)) fail(Verdict::violation, v->invariant, v->message);
}

namespace {

// An obligation's steps are ordered against the other steps on its name only.
ScopeId obligation_scope(std::string_view name) {
  return static_cast<ScopeId>(std::hash<std::string_view>{}(name) | (std::uint64_t{1} << 62));
}

}  // namespace

bool Scheduler::obligation_step(std::string_view verb, std::string_view name) {
  if (aborting_ || instance_ == nullptr) return false;
  if (current_ < 0) return true;  // outside any actor (a model's set-up): no step
  OpDesc op{verb, {}};
  op.footprint.effects = kObserves;
  op.footprint.scope = obligation_scope(name);
  yield(op);
  if (aborting_) return false;
  effects_ |= kObserves;
  scope_ = op.footprint.scope;
  if (limits_.log_events) note_detail(std::string(name));
  return true;
}

void Scheduler::hot(std::string_view obligation, Duration within) {
  if (!obligation_step("hot", obligation)) return;
  obligations_.make_hot(obligation, now(), within, current_);
}

void Scheduler::cold(std::string_view obligation) {
  if (!obligation_step("cold", obligation)) return;
  const auto h = obligations_.make_cold(obligation);
  if (h && limits_.time == TimeMode::timed && h->within != Duration::max() && now() - h->since > h->within) {
    fail(Verdict::liveness, h->name,
         fmt::format("\"{}\" was met at {} ms, {} ms after it went hot: more than its {} ms", h->name,
                     now().count() / 1'000'000, (now() - h->since).count() / 1'000'000, h->within.count() / 1'000'000));
  }
}

void Scheduler::fail(Verdict verdict, std::string invariant, std::string message) {
  if (failed_ || aborting_) return;
  failed_ = true;
  result_verdict_.verdict = verdict;
  result_verdict_.invariant = std::move(invariant);
  result_verdict_.message = std::move(message);
}

void Scheduler::record_sig(const Transition& t, std::uint64_t enabled) {
  const std::uint64_t step = steps_ - 1;
  StepSig& sig = ring_.at(step);
  sig.verb = t.op->verb;
  sig.object = t.op->footprint.object;
  sig.arg = t.op->arg;
  sig.result = result_;
  sig.actor = t.actor;
  sig.timer = t.timer;
  sig.enabled = enabled;
  watch_.step(ring_, step);
  const std::uint32_t p = limits_.lasso_period;
  if (p > 0 && step >= p) {
    LOCKSTEP_INVARIANT(p < kTailSteps, "a lasso's period fits in the ring");
    if (!sig.same_as(ring_.at(step - p))) {
      last_mismatch_ = step;
      mismatch_seen_ = true;
    }
  }
}

void Scheduler::filter_fairly() {
  // Round robin: the actor that has waited longest since it last ran (the lowest on a tie)
  // is the only one offered; its run and its timer, when both can go.
  ActorId chosen = -1;
  for (std::size_t i = 0; i < enabled_count_; ++i) {
    const ActorId a = enabled_[i].actor;
    if (chosen < 0 || last_ran_[a] < last_ran_[chosen]) chosen = a;
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < enabled_count_; ++i) {
    if (enabled_[i].actor == chosen) enabled_[kept++] = enabled_[i];
  }
  enabled_count_ = kept;
}

bool Scheduler::check_tail() {
  if (watch_.active()) {
    const Cycle c = watch_.cycle(steps_);
    if (c.starved == 0 && steps_ - c.start >= limits_.livelock_steps) {
      judge_cycle(c, /*at_bound=*/false);
      return true;
    }
    return false;
  }
  if (steps_ < kFairFirstStep + kMinCycleSteps) return false;
  const std::uint64_t seen = steps_ - kFairFirstStep;  // the steps recorded since watching began
  auto cycle = find_cycle(ring_, steps_, std::min<std::uint64_t>(seen, kFairWindow),
                          static_cast<std::uint32_t>(kFairWindow / kFairRepeats), kFairRepeats);
  if (!cycle && steps_ % kLongCycleCheckSteps == 0) {  // now and then, the longer cycles too
    cycle = find_cycle(ring_, steps_, std::min<std::uint64_t>(seen, kTailSteps), kMaxCyclePeriod, kCycleRepeats);
  }
  if (!cycle) return false;
  if (cycle->starved != 0 && limits_.fair) {
    fair_round_robin_ = true;  // a fair scheduler from here on (filter_fairly)
    return false;
  }
  watch_.start(*cycle, ring_);
  return false;
}

bool Scheduler::check_obligation_deadlines() {
  const ObligationSet::Hot* late = obligations_.overdue(now_);
  if (late == nullptr) return false;
  fail(Verdict::liveness, late->name,
       fmt::format("\"{}\" is still hot at {} ms: it went hot at {} ms and had to be met within {} ms", late->name,
                   now_.count() / 1'000'000, late->since.count() / 1'000'000, late->within.count() / 1'000'000));
  return true;
}

void Scheduler::finish_at_bound() {
  const std::uint64_t window = std::min<std::uint64_t>(steps_, kTailSteps);
  std::optional<Cycle> cycle = find_cycle(ring_, steps_, window, kMaxCyclePeriod, kCycleRepeats);
  if (!cycle) {
    if (!obligations_.hot().empty()) {
      const auto& h = obligations_.hot().front();
      fail(Verdict::liveness, h.name,
           fmt::format("\"{}\" is still hot at the bound of {} steps (since {} ms)", h.name, limits_.max_steps,
                       h.since.count() / 1'000'000));
      return;
    }
    fail(Verdict::step_bound, "",
         fmt::format("the execution ran past its bound of {} steps, and its last {} steps repeat no cycle of at "
                     "most {} steps (a long run, or a loop that changes something each time round)",
                     limits_.max_steps, window, kMaxCyclePeriod));
    return;
  }
  judge_cycle(*cycle, /*at_bound=*/true);
}

void Scheduler::judge_cycle(Cycle cycle, bool at_bound) {
  if (limits_.lasso_period == cycle.period) {
    // Every step was compared with the one a period before it: the suffix may begin before the ring.
    cycle.start = mismatch_seen_ ? last_mismatch_ + 1 - cycle.period : 0;
  }
  result_verdict_.cycle = cycle;
  const bool unfair = cycle.starved != 0;
  if (unfair && limits_.fair) {
    result_verdict_.unfair = true;
    return;
  }
  const std::string cycle_text = describe_cycle(cycle, ring_, actor_names_, object_names_);
  const std::string where = at_bound ? std::string("up to the step bound")
                                     : fmt::format("in a row ({} steps: the livelock bound)", steps_ - cycle.start);
  const std::string others = parked_text(cycle.looping);
  if (!unfair && !obligations_.hot().empty()) {
    const auto& h = obligations_.hot().front();
    fail(Verdict::liveness, h.name,
         fmt::format("\"{}\" is still hot (since {} ms) while {}: a fair {}-step cycle, repeated {} times {}{}", h.name,
                     h.since.count() / 1'000'000, cycle_text, cycle.period, cycle.repeats(), where, others));
    return;
  }
  if (unfair) {
    fail(Verdict::step_bound, "",
         fmt::format("the execution ran past its bound of {} steps: {}, while {} could run at every step and never "
                     "did (an unfair schedule: fair mode cuts it){}",
                     limits_.max_steps, cycle_text, actor_list(cycle.starved, actor_names_), others));
    return;
  }
  fail(Verdict::livelock, "",
       fmt::format("{}: a fair {}-step cycle, repeated {} times {}{}", cycle_text, cycle.period, cycle.repeats(), where,
                   others));
}

std::string Scheduler::parked_text(std::uint64_t except) const {
  std::string text;
  for (ActorId i = 0; i < actor_count_; ++i) {
    const Actor& a = *actors_[i];
    if (a.finished || (except >> i & 1) || a.guard == nullptr || a.guard->ready(i)) continue;
    text += fmt::format("; {} waits at \"{}\" for {}", actor_names_[i], op_text(a.op), a.guard->describe(i));
  }
  return text;
}

void Scheduler::finish_with_deadlock() {
  std::string message = "no actor can run and no timer is pending:";
  for (ActorId i = 0; i < actor_count_; ++i) {
    const Actor& a = *actors_[i];
    if (a.finished) continue;
    message += fmt::format(" {} waits at \"{}\" for {};", actor_names_[i], op_text(a.op),
                           a.guard ? a.guard->describe(i) : std::string("nothing"));
  }
  message.pop_back();
  fail(Verdict::deadlock, "", std::move(message));
}

void Scheduler::abort_unfinished() {
  aborting_ = true;
  unwinding_base_ = std::uncaught_exceptions();
  unwind_steps_ = 0;
  for (ActorId i = 0; i < actor_count_; ++i) {
    Actor& a = *actors_[i];
    if (a.finished) continue;
    current_ = i;
    a.fiber.resume();  // yield() throws ExecutionAborted; the actor unwinds and finishes
    current_ = -1;
  }
}

void Scheduler::actor_entry(void* arg) {
  auto* a = static_cast<Actor*>(arg);
  Scheduler* s = a->scheduler;
  try {
    s->instance_->run_actor(a->id);
  } catch (const ExecutionAborted&) {
    // The execution ended early; the actor's stack is now unwound.
  } catch (const Crashed&) {
    // Its process crashed and nothing restarted it: a dead process, finished.
  } catch (const std::exception& e) {
    s->fail(Verdict::model_error, "", fmt::format("actor {} threw: {}", s->actor_names_[a->id], e.what()));
  } catch (...) {
    s->fail(Verdict::model_error, "", fmt::format("actor {} threw a non-standard exception", s->actor_names_[a->id]));
  }
  a->finished = true;
  s->unfinished_ &= ~(std::uint64_t{1} << a->id);
}

std::string Scheduler::op_text(const OpDesc& op) const {
  std::string text(op.verb);
  if (op.footprint.object != kNoObject) {
    text += ' ';
    text += object_names_[op.footprint.object];
  }
  if (op.has_arg) text += fmt::format(" {}", op.arg);
  return text;
}

}  // namespace lockstep::sim
