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
  const ObjectId id = objects_.make(name);
  if (written_at_.size() < objects_.size()) resize_clocks();
  written_at_[id] = objects_written_at_[id] = every_object_read_at_[id] = Time{0};
  return id;
}

ObjectId Scheduler::object_of_key(const std::string& key) {
  const ObjectId id = objects_.of_key(key);
  resize_clocks();
  return id;
}

void Scheduler::restore_objects(const std::vector<std::string>& keys) {
  objects_.restore(keys);
  resize_clocks();
}

void Scheduler::resize_clocks() {
  written_at_.resize(objects_.size());
  objects_written_at_.resize(objects_.size());
  every_object_read_at_.resize(objects_.size());
}

void Scheduler::begin(const RunLimits& limits, Strategy& strategy) {
  limits_ = limits;
  jitter_timers_ = limits.timing.jitter > 0 && limits.time == TimeMode::timed;
  timed_statements_ = limits.time == TimeMode::timed && (limits.timing.stalls > 0 || limits.timing.statement_high > Duration{0});
  exact_timer_ = false;
  stalls_used_ = 0;
  strategy_ = &strategy;
  observer_ = strategy.abilities().observer;
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
  aborting_ = failed_ = round_robin_told_ = false;
  result_verdict_ = ExecutionResult{};
  divergence_ = nullptr;
  decisions_.clear();
  events_.clear();
  judge_.begin(limits_);
  objects_.begin_execution();  // object ids stay: sim/sched/object_registry.h
  actor_names_.clear();
  starts_.clear();
  std::fill(owners_.begin(), owners_.end(), std::int8_t{-1});
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
  building_ = true;
  try {
    instance = system.instantiate(env);
  } catch (const std::exception& e) {
    building_ = false;
    fail(Verdict::model_error, "", fmt::format("building the system failed: {}", e.what()));
    return result_verdict_;
  }
  building_ = false;
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

const OpDesc& Scheduler::pending_op(ActorId a) const { return actors_[a]->op; }
bool Scheduler::finished(ActorId a) const { return actors_[a]->finished; }

// One turn of the run loop: who can run, then one step. False when the execution ends.
// Inlined into run()'s loop: it is the per-step path (bench: BM_SchedulerStepPingPong).
[[gnu::always_inline]] inline bool Scheduler::next_step() {
  collect_enabled();
  if (starts_.any()) filter_symmetric();
  if (observer_ != nullptr) observer_->parked(parked());
  if (enabled_count_ == 0) return nothing_enabled();
  if (steps_ >= limits_.max_steps) {
    conclude(judge_.at_bound(steps_, progress_names()));
    return false;
  }
  if (steps_ % kStopCheckSteps == 0 && steps_ > 0 && limits_.stop && limits_.stop()) {
    result_verdict_.interrupted = true;
    return false;
  }
  if (steps_ % kFairCheckSteps == 0 && judge_.watching_tail(steps_)) {
    if (auto outcome = judge_.check_tail(steps_, progress_names())) {
      conclude(std::move(*outcome));
      return false;
    }
  }
  // The tail's signatures: always in fair mode and for a lasso, else only near the bound.
  // Who could run is taken before fairness filters it: that is what fairness judges.
  const bool remember = judge_.remembers(steps_);
  std::uint64_t enabled_mask = 0;
  if (remember) {
    for (std::size_t i = 0; i < enabled_count_; ++i) enabled_mask |= std::uint64_t{1} << enabled_[i].actor;
  }
  if (judge_.round_robin() && observer_ != nullptr && !std::exchange(round_robin_told_, true)) observer_->round_robin_began();
  if (judge_.round_robin()) enabled_count_ = judge_.filter_fairly({enabled_.data(), enabled_count_});
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
  judge_.ran(t.actor, steps_);
  if (t.timer) ++result_verdict_.timer_steps;
  execute(t);
  if (divergence_) std::rethrow_exception(divergence_);
  if (remember) judge_.record(steps_ - 1, t, result_, enabled_mask);
  return true;
}

// Nothing can run: the clock moves on (timed mode; false if an obligation's deadline then
// fails), or the execution ends: a deadlock while some actor is unfinished, else its end.
bool Scheduler::nothing_enabled() {
  if (limits_.time == TimeMode::timed && advance_clock()) {
    if (observer_ != nullptr) observer_->clock_advanced();
    if (auto late = judge_.overdue(now_)) {
      conclude(std::move(*late));
      return false;
    }
    return true;
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
    if (auto hot = judge_.at_end(actor_names_)) conclude(std::move(*hot));
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
  const bool timer_reads_every_object = t.timer && a.op.timer_reads_every_object;  // a.op moves on as the step runs
  const bool timer_writes_domain = t.timer && a.op.timer_writes_domain;
  effective_access_ = declared.access;
  effects_ = 0;
  touched_count_ = 0;
  touched_overflow_ = false;
  if (limits_.time == TimeMode::untimed) {
    if (t.timer) actor_now_[t.actor] = std::max(actor_now_[t.actor], a.deadline);  // the actor's own clock
    take_clocks(t.actor, t.timer ? timer_footprint(a.op) : declared);
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
  if (timer_reads_every_object || timer_writes_domain) {
    LOCKSTEP_INVARIANT(declared.domain != kNoObject, "a timer that reads or writes its domain has one");
    effective.reads_every_object = timer_reads_every_object;
    effective.domain_write = effective.domain_write || timer_writes_domain;
  }
  if (limits_.time == TimeMode::untimed) pass_clock(t.actor, effective);
  starts_.started(t.actor, t.timer, effective);
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
  // A step that reads every object of its domain, and one that writes an object of it.
  if (declared.domain != kNoObject && declared.reads_every_object) clock = std::max(clock, objects_written_at_[declared.domain]);
  if (declared.domain != kNoObject && writes_an_object(declared)) clock = std::max(clock, every_object_read_at_[declared.domain]);
}

void Scheduler::pass_clock(ActorId actor, const Footprint& effective) {
  const Time clock = actor_now_[actor];
  for_each_object(effective, [&](ObjectId obj, Access access) {
    if (access != Access::none && !is_read(access)) written_at_[obj] = std::max(written_at_[obj], clock);
  });
  if (effective.domain != kNoObject && effective.domain_write) {
    written_at_[effective.domain] = std::max(written_at_[effective.domain], clock);
  }
  if (effective.domain != kNoObject && writes_an_object(effective)) {
    objects_written_at_[effective.domain] = std::max(objects_written_at_[effective.domain], clock);
  }
  if (effective.domain != kNoObject && effective.reads_every_object) {
    every_object_read_at_[effective.domain] = std::max(every_object_read_at_[effective.domain], clock);
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
  if (jitter_timers_) [[unlikely]] {
    if (!std::exchange(exact_timer_, false) && timeout != kForever && timeout > Duration{0}) {
      timeout = jittered(timeout, op);
      if (aborting_) return abort_point();
    }
  }
  Actor& a = *actors_[current_];
  a.op = op;
  a.guard = guard;
  const Time start = now();
  // Under jitter, a timer that starts here, or ends here before its deadline, changes the
  // deadlines pending (read only then: the flag first).
  const bool was_pending = jitter_timers_ && a.has_deadline && a.deadline > now_;
  a.has_deadline = timeout != kForever && timeout <= Time::max() - start;
  if (a.has_deadline) a.deadline = start + std::max(timeout, Duration{0});
  if (jitter_timers_ && (was_pending || (a.has_deadline && a.deadline > now_))) [[unlikely]] touch_pending_timers();
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

std::vector<Duration> Scheduler::pending_deadlines() const {
  std::vector<Duration> pending;
  for (ActorId i = 0; i < actor_count_; ++i) {
    const Actor& other = *actors_[i];
    if (i != current_ && !other.finished && other.has_deadline && other.deadline > now_) pending.push_back(other.deadline - now_);
  }
  return pending;
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

std::uint32_t Scheduler::choose(std::uint32_t n, std::string_view label, bool keeps_footprint) {
  if (n == 0) throw ModelError(fmt::format("choose(0, \"{}\"): needs at least one option", label));
  if (aborting_) return 0;
  std::uint32_t v = 0;
  try {
    v = keeps_footprint ? strategy_->choose_keeping_footprint(n, label, steps_) : strategy_->choose(n, label, steps_);
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

void Scheduler::detail_first_step_after(std::uint64_t after, const std::string& text) {
  std::size_t first = events_.size();
  for (std::size_t i = events_.size(); i-- > 0 && events_[i].step > after;) {
    if (events_[i].actor == current_) first = i;
  }
  if (first == events_.size()) return;
  if (events_[first].step == steps_) {  // the current step: its result is written when it ends
    detail_ = detail_.empty() ? text : text + " " + detail_;
  } else {
    std::string& result = events_[first].result;
    result = result.empty() ? text : text + " " + result;
  }
}

void Scheduler::observe(const Event& event) {
  if (building_) {  // in the State's constructor no invariant exists yet to judge it: refused, not dropped
    throw ModelError(fmt::format("observe(\"{}\") in the State's constructor: no invariant judges it there; "
                                 "report it from an actor", event.name));
  }
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
    // The observation's own step (an actor unwinding from a crash takes none): one row, the
    // step's, not a bare "observe" beside it.
    const bool own_step = current_ >= 0 && event.ordered && !events_.empty() && events_.back().step == steps_ &&
                          events_.back().actor == current_ && events_.back().op == "observe";
    if (own_step) {
      events_.back().op = fmt::format("observe {}", event.name);
      add_detail(event_values_text(event));
    } else {
      events_.push_back({steps_, now().count(), current_, fmt::format("observe {}", event.name), event_values_text(event)});
    }
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
  // The State's constructor (the system being built): the obligation counts from time 0,
  // with no step (nothing runs yet). Once the execution is over (a destructor), none counts.
  if (building_) return true;
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
  if (within != Duration::max() && limits_.time == TimeMode::untimed) ++result_verdict_.unjudged_deadlines;  // said in a note
  judge_.hot(obligation, now(), within, current_);
}

void Scheduler::cold(std::string_view obligation) {
  if (!obligation_step("cold", obligation)) return;
  if (auto late = judge_.cold(obligation, now(), limits_.time == TimeMode::timed)) conclude(std::move(*late));
}

void Scheduler::fail(Verdict verdict, std::string invariant, std::string message) {
  if (failed_ || aborting_) return;
  failed_ = true;
  result_verdict_.verdict = verdict;
  result_verdict_.invariant = std::move(invariant);
  result_verdict_.message = std::move(message);
}

void Scheduler::conclude(ProgressOutcome outcome) {
  if (outcome.cycle) result_verdict_.cycle = outcome.cycle;
  if (outcome.unfair) {
    LOCKSTEP_INVARIANT(outcome.cycle && outcome.cycle->starved != 0, "only an unfair cycle is cut");
    result_verdict_.unfair = true;
    return;
  }
  fail(outcome.verdict, std::move(outcome.invariant), std::move(outcome.message));
}

ProgressNames Scheduler::progress_names() const {
  return {actor_names_, objects_.names(), [this](std::uint64_t except) { return parked_text(except); }};
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
  if (s->jitter_timers_ && a->has_deadline && a->deadline > s->now_) s->touch_pending_timers();  // its timer leaves the pending ones
  a->finished = true;
  s->unfinished_ &= ~(std::uint64_t{1} << a->id);
}

std::string Scheduler::op_text(const OpDesc& op) const {
  std::string text(op.verb);
  if (op.footprint.object != kNoObject) {
    text += ' ';
    text += objects_.name(op.footprint.object);
  }
  if (op.has_arg) text += fmt::format(" {}", op.arg);
  return text;
}

}  // namespace lockstep::sim
