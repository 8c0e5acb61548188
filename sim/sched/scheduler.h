// sim/sched/scheduler.h: the deterministic scheduler that runs one execution.
//
// Actors run on fibers. Before every visible operation an actor calls yield() with an
// OpDesc (verb, footprint, argument) and optionally a wait condition and a timeout; the
// scheduler then asks the Strategy which enabled transition runs next and resumes that
// actor. Code between two yields runs atomically. Nothing else is a scheduling point.
//
// Time: in timed mode one virtual clock that moves only when no transition is enabled. In
// untimed mode each actor has its own clock, moved by its own sleeps and timeouts, and
// carried along the order the search already keeps: a step that touches an object first
// takes the latest clock of a step that wrote it (or wrote its domain), so an actor that
// takes a lock after another let it go at 10 ms reads 10 ms, not its own 0. Only steps
// that are dependent (sim/sched/op.h) pass a clock on, so executions equal up to commuting
// steps have the same clocks: time adds no dependence and untimed timers stay always
// enabled.
//
// Transitions:
//  - run actor a: a's pending operation has no wait condition, or the condition is ready;
//  - fire a's timer: a waits with a deadline, and
//      untimed mode: always (any pending timeout may fire at any moment of the wait, also
//                    after the condition became ready and before the waiter ran);
//      timed mode:   the virtual clock has reached the deadline.
//    "run" and "timer" of one actor may both be enabled: same-instant events interleave.
//    Timed waits therefore start with an arrival step that takes the object when it is free
//    and otherwise starts the wait: a timeout can only fire in a wait that really began.
//    In timed mode the clock moves only when no transition is enabled, to the earliest
//    deadline.
//
// Crashes (Env::crash_points): an armed actor's visible operation may become its process's
// crash, an explored choice taken inside that step; the actor then unwinds with Crashed. A
// machine crash takes every other process with it: each unwinds with Crashed at its next
// step (enabled whatever it waited for; the crash step is dependent with it). What a dying
// actor's destructors release while it unwinds (a pooled connection's ROLLBACK) is part of
// its crash step, as the kernel and the server clean up after a dead process at once: the
// actor does not suspend until it caught Crashed. Model code should restart (recover) after
// its catch block, not inside it.
//
// Verdicts of an execution: pass, violation (from the instance's on_event / at_end),
// deadlock (nothing enabled, some actor unfinished, no timer pending), model_error (an
// actor threw), and at the step bound (sim/progress/progress.h): liveness (a progress obligation
// still hot), livelock (the tail repeats a fair cycle) or step_bound (anything else). An
// obligation still hot at the end, or cold later than its `within`, is liveness too.
// Fair mode cuts an execution that repeats an unfair cycle (ExecutionResult::unfair), and
// RunLimits::stop cuts one that must stop now (ExecutionResult::interrupted): neither has
// a verdict. When an execution ends early, unfinished actors are unwound by an
// ExecutionAborted exception thrown from yield(), so their destructors run.
//
// Guarantees: the same decisions give the same execution; one step allocates nothing
// (decision and transition buffers are reused across executions; event logging, which
// allocates, is on only when a trace is being recorded). Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "lockstep/model/scenario.h"
#include "lockstep/model/system.h"
#include "lockstep/model/verdict.h"
#include "lockstep/sim/sched/fiber.h"
#include "lockstep/sim/explore/symmetric_starts.h"
#include "lockstep/sim/sched/object_registry.h"
#include "lockstep/sim/sched/op.h"
#include "lockstep/sim/sched/run_limits.h"
#include "lockstep/sim/progress/progress_judge.h"
#include "lockstep/sim/random.h"
#include "lockstep/sim/strategies/strategy.h"

namespace lockstep::sim {

class SimEnv;

inline constexpr Duration kForever = Duration::max();

// Something an actor waits on: a mutex to be free, a lock to be granted.
class WaitCondition {
 public:
  virtual bool ready(ActorId waiter) const = 0;
  // For deadlock reports: "mutex m held by b". Called only when reporting.
  virtual std::string describe(ActorId waiter) const = 0;

 protected:
  ~WaitCondition() = default;
};

// Never ready: an actor waiting on it wakes only by its timer (a sleep, pg_sleep).
class TimerOnly final : public WaitCondition {
 public:
  explicit constexpr TimerOnly(const char* what) : what_(what) {}
  bool ready(ActorId) const override { return false; }
  std::string describe(ActorId) const override { return what_; }

 private:
  const char* what_;  // "its sleep to end"
};

// Thrown from yield() to unwind an actor whose execution has ended. Deliberately not a
// std::exception: model code that catches std::exception does not swallow it, and model
// code that catches (...) must rethrow.
struct ExecutionAborted {};

enum class Wake : std::uint8_t { run, timer };

// The most events an execution's log keeps (the latest): a long run's trace stays small.
inline constexpr std::size_t kMaxLoggedEvents = 20'000;

// The most operations the actors of one execution call while being unwound (releases in
// destructors): more means a model swallows ExecutionAborted and loops.
inline constexpr std::uint64_t kMaxUnwindSteps = 1'000'000;

// How often RunLimits::stop is asked, in steps: well under a second of work.
inline constexpr std::uint64_t kStopCheckSteps = 1u << 14;

// One line of a trace's readable event log.
struct LogEvent {
  std::uint64_t step = 0;
  std::int64_t time_ns = 0;
  ActorId actor = 0;
  std::string op;
  std::string result;

  friend bool operator==(const LogEvent&, const LogEvent&) = default;
};

struct ExecutionResult {
  Verdict verdict = Verdict::pass;
  std::string invariant;  // for violation
  std::string message;
  std::uint64_t steps = 0;
  std::uint64_t timer_steps = 0;  // of those, timers firing (a sleep's end, a timeout)
  std::uint64_t unjudged_deadlines = 0;  // untimed: obligations made hot with a `within`, which untimed mode does not judge
  bool pruned = false;      // the strategy ended it as redundant: no verdict of its own
  bool skipped = false;     // the strategy ended it as another shard's
  bool unfair = false;      // fair mode cut it: it repeated an unfair cycle (no verdict)
  bool interrupted = false;  // RunLimits::stop cut it (no verdict)
  std::optional<Cycle> cycle;  // at the step bound: the cycle the tail repeats, if any
  std::string final_state;  // with RunLimits::record_final_state, once all actors finished
  std::vector<std::string> marks;  // Instance::marks() and SimEnv::injected_faults(), once all actors finished
  std::vector<LockOrderEdge> lock_order_edges;  // Instance::lock_order_edges(), once all actors finished
};

class Scheduler {
 public:
  Scheduler();
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Runs one execution of a fresh instance of `system`. Throws Divergence when the
  // strategy cannot follow the execution.
  ExecutionResult run(const System& system, SimEnv& env, Strategy& strategy, const RunLimits& limits);

  // After run(): the decisions taken, and (with log_events) the event log.
  const std::vector<Decision>& decisions() const { return decisions_; }
  const std::vector<LogEvent>& events() const { return events_; }
  const std::vector<std::string>& actor_names() const { return actor_names_; }
  const std::vector<std::string>& object_names() const { return objects_.names(); }
  // Inside Strategy::executed: what the step just taken returned (note_result).
  const StepResult& last_result() const { return result_; }

  // ---- For simulated objects. --------------------------------------------------------
  // Called by an actor before a visible operation. Returns how the actor was resumed.
  // Outside any actor it returns Wake::run at once (the guard must then be ready).
  Wake yield(const OpDesc& op, const WaitCondition* guard = nullptr, Duration timeout = kForever);
  // The same, for a timer the timing model's jitter leaves as it is: the model's own (a
  // stall, a round trip) or the simulated server's (the deadlock check).
  // yield reads the flag before it suspends, or returns without suspending: cleared here.
  Wake yield_exact(const OpDesc& op, const WaitCondition* guard, Duration timeout) {
    if (!jitter_timers_) return yield(op, guard, timeout);
    exact_timer_ = true;
    struct Clear {
      bool& flag;
      ~Clear() { flag = false; }
    } clear{exact_timer_};
    return yield(op, guard, timeout);
  }
  // Timed mode with a timing model's stalls or statement latency: a simulated statement
  // first takes its stall or round trip (SimConnection::statement_timing).
  bool times_statements() const { return timed_statements_; }
  // The timing model's stalls (model/timing.h), counted per execution: whether the current
  // actor may still stall, and taking one (the caller then sleeps stall_ms in a step).
  // The stall choice (model/timing.h), where the execution has stalls left: whether the current
  // actor stalls here (`where` names the place in the trace), counted when it does.
  bool choose_stall(std::string_view where);
  // Under jitter, a jittered timer's durations depend on the deadlines pending when it is armed
  // (duration_choices): a step that arms a timer, ends one before its deadline, or chooses
  // whether to (a stall: its footprint the same for either value) writes one object of them
  // all, so two such steps are ordered both ways (the dfs oracle's timing properties).
  void touch_pending_timers() {
    if (!jitter_timers_) return;
    if (timers_object_ == kNoObject) timers_object_ = object_of_key("pending timers");
    also_touch(timers_object_);
  }
  // Adds what the choice just made means to its event ("3 (lasts 60 ms, written 100 ms)"):
  // for a reader of the trace and for the timing causes (sim/explain/cause.h).
  void describe_choice(std::string_view text);
  bool in_actor() const { return current_ >= 0; }
  // Steps taken so far in this execution: inside a step, that step's number.
  std::uint64_t step_count() const { return steps_; }
  ActorId current() const;  // REQUIRES: in_actor()
  // Timed mode: the one virtual clock. Untimed mode: the calling actor's own clock, moved
  // only by its own sleeps and timeouts (outside any actor: the latest of them).
  Time now() const;
  TimeMode time_mode() const { return limits_.time; }
  // An explored choice in [0, n); keeps_footprint: its value leaves the footprint of the
  // step making it as it is (Strategy::choose_keeping_footprint).
  std::uint32_t choose(std::uint32_t n, std::string_view label, bool keeps_footprint = false);
  std::uint64_t random(std::uint64_t bound) { return rng_.uniform(bound); }
  void observe(const Event& event);
  // Progress obligations (Env::hot, Env::cold): ordered steps on the obligation's own scope.
  void hot(std::string_view obligation, Duration within);
  void cold(std::string_view obligation);
  // The crash fault (Env::crash_points): arms the current actor, or (nullopt) disarms it.
  // An armed actor's next visible operations each start with a choice: crash instead. Then
  // SimEnv::crash applies it (a machine crash reverts the filesystem, more choices) and the
  // actor unwinds with Crashed, disarmed.
  void arm_crash(std::optional<CrashKind> kind);
  // Narrows the current step's access once it has run (a failed CAS is a read). REQUIRES:
  // the step's operation said it may (OpDesc::narrows), or the step is a timeout.
  void refine_access(Access access);
  // Widens the current step once it has run: it also read (or changed) obj (a deadlock
  // check that walked the waits-for graph). Counted as a write; past kMaxExtraObjects more
  // objects, the step writes its whole domain.
  void also_touch(ObjectId obj) {
    if (touched_count_ < touched_.size()) {
      touched_[touched_count_++] = obj;
    } else {
      touched_overflow_ = true;
    }
  }
  // Widens the current step to its whole domain (it read every object there: a SQL statement
  // reading pg_locks); counted as a write of the domain.
  void also_touch_domain() { touched_overflow_ = true; }
  // The current step's access on its main object so far (declared, or as refined).
  Access current_access() const { return effective_access_; }
  void note_result(StepResult result) { result_ = result; }
  // The current step is on a shared variable: what it found and left (told to the strategy;
  // not outside a step, nor in a crash's unwinding, which folds several operations into one).
  void note_var_step(const VarStep& step) {
    if (current_ >= 0 && crashing_ != current_ && !aborting_) strategy_->var_step(step);
  }
  // Whether this run keeps an event log (a trace, a replay): a detail is worth making.
  bool logging() const { return limits_.log_events; }
  const RunLimits& limits() const { return limits_; }
  // What the current step returned beyond its StepResult (the row a read_row saw), for
  // the event log: appended to the result text. Call only when logging().
  void note_detail(std::string detail) { detail_ = std::move(detail); }
  // Adds to the current step's detail ("granted; set {status=ended}").
  void add_detail(const std::string& more) { detail_ += (detail_.empty() ? "" : "; ") + more; }
  // Puts `text` first in the result of the current actor's first step after step `after`
  // (an SQL statement's text on its first step). Only when logging().
  void detail_first_step_after(std::uint64_t after, const std::string& text);
  // For reports: the current step also let obj go, though its footprint does not say so (the
  // end of an xact-lock statement releases within the lock's own step). Only when logging().
  void note_released(ObjectId obj) { released_.push_back(obj); }
  // Inside Strategy::executed: what note_released said about the step just taken.
  const std::vector<ObjectId>& last_released() const { return released_; }
  // A shared object's id, for footprints. Stable across the executions of one Scheduler: the
  // object named `name` has the same id in every execution, however late it is made (a row
  // first touched by one actor or another), so footprints recorded in one execution (sleep
  // sets, wakeup trees) name the same objects in the next. The k-th object of one name in
  // an execution is the k-th of that name in every execution.
  ObjectId new_object(std::string name);
  // Declares `object` actor's own for this execution: no other actor's step names it (the
  // caller refuses one that would). Symmetry reduction runs an unstarted member's steps on
  // its own objects before its class's order applies (sim/explore/symmetric_starts.h).
  void own(ObjectId object, ActorId actor) {
    if (owners_.size() <= object) owners_.resize(object + 1, -1);
    owners_[object] = static_cast<std::int8_t>(actor);
  }
  ActorId owner(ObjectId object) const { return object < owners_.size() ? owners_[object] : -1; }
  const std::string& object_name(ObjectId id) const { return objects_.name(id); }
  // The objects made so far, by id from 1 (a checkpoint keeps them), and making them again in
  // a new scheduler before any execution: ids are then those of the scheduler they came from.
  std::vector<std::string> object_keys() const { return objects_.keys(); }
  void restore_objects(const std::vector<std::string>& keys);
  // The id of the object with this key (object_keys), made now if there is none yet.
  ObjectId object_of_key(const std::string& key);
  std::string_view actor_name(ActorId actor) const { return actor_names_[actor]; }
  // After run() with RunLimits::symmetry: the classes of interchangeable actors it used.
  const Symmetry& symmetry() const { return starts_.symmetry(); }

 private:
  struct Actor;
  static void actor_entry(void* arg);

  void begin(const RunLimits& limits, Strategy& strategy);
  void start_actors(int n);
  bool next_step();
  bool nothing_enabled();
  void judge_end();
  void collect_enabled();
  bool advance_clock();
  void execute(const Transition& t);
  // Untimed mode: the actor's clock takes the clocks of the writes its declared footprint
  // is ordered after; the step's effective writes pass its clock on.
  void take_clocks(ActorId actor, const Footprint& declared);
  void pass_clock(ActorId actor, const Footprint& effective);
  void resize_clocks();  // the untimed clocks' tables, to the object table's size
  void fail(Verdict verdict, std::string invariant, std::string message);
  void finish_with_deadlock();
  // Ends the execution as the progress judge says (a verdict, or a cut without one).
  void conclude(ProgressOutcome outcome);
  ProgressNames progress_names() const;
  std::string parked_text(std::uint64_t except) const;
  bool obligation_step(std::string_view verb, std::string_view name);
  void maybe_crash(const OpDesc& op);
  Duration jittered(Duration written, const OpDesc& op);  // sim/sched/scheduler_timing.cc
  // From now to each other unfinished actor's timer deadline still ahead.
  std::vector<Duration> pending_deadlines() const;
  void abort_unfinished();
  std::string op_text(const OpDesc& op) const;

  RunLimits limits_;
  bool jitter_timers_ = false;  // timed mode with a timing model's jitter: timers are choices
  bool timed_statements_ = false;  // timed mode with stalls or statement latency (times_statements)
  bool exact_timer_ = false;    // the next yield's timer is exact (yield_exact)
  int stalls_used_ = 0;         // the timing model's stalls taken in this execution
  ObjectId timers_object_ = kNoObject;  // touch_pending_timers's, made at its first use
  Strategy* strategy_ = nullptr;
  StepObserver* observer_ = nullptr;  // the strategy's, when it has one (partial-order reduction)
  Instance* instance_ = nullptr;
  SimEnv* env_ = nullptr;
  std::vector<std::unique_ptr<Actor>> actors_;  // grows to the most actors seen; reused
  int actor_count_ = 0;
  std::uint64_t unfinished_ = 0;  // bit per actor of this execution that has not finished
  ActorId current_ = -1;
  Time now_{0};                              // timed mode
  std::array<Time, kMaxActors> actor_now_{};  // untimed mode, per actor
  std::vector<Time> written_at_ = std::vector<Time>(1);  // untimed mode, per object made this execution: its latest write's clock
  // Untimed mode, per domain: the latest clock of a step that wrote an object in it, and of
  // one that read every object of it (Footprint::reads_every_object).
  std::vector<Time> objects_written_at_ = std::vector<Time>(1);
  std::vector<Time> every_object_read_at_ = std::vector<Time>(1);
  std::array<std::optional<CrashKind>, kMaxActors> crash_armed_{};
  std::array<bool, kMaxActors> doomed_{};  // on a crashed machine: dies at its next step
  ActorId crashing_ = -1;      // unwinding from its crash in this step: its releases fold into it
  ObjectId crash_domain_ = 0;  // a domain those releases touched: the crash step writes it
  std::string crash_text_;     // for the event log
  std::uint64_t steps_ = 0;
  Random rng_;
  bool aborting_ = false;
  bool building_ = false;  // inside System::instantiate (a model State's constructor)
  int unwinding_base_ = 0;          // exceptions in flight when abort_unfinished began
  std::uint64_t unwind_steps_ = 0;  // operations actors called while being unwound
  bool failed_ = false;
  bool round_robin_told_ = false;  // the strategy's observer was told fair mode's tail began
  ExecutionResult result_verdict_;
  std::exception_ptr divergence_;  // raised inside an actor, rethrown from run()

  // The transitions collect_enabled found: filled in place each step (no push_back per actor).
  std::array<Transition, 2 * kMaxActors> enabled_{};
  std::size_t enabled_count_ = 0;
  std::array<Transition, kMaxActors> parked_{};
  std::size_t parked_count_ = 0;
  std::span<const Transition> enabled() const { return {enabled_.data(), enabled_count_}; }
  std::span<const Transition> parked() const { return {parked_.data(), parked_count_}; }
  std::vector<Decision> decisions_;
  ObjectRegistry objects_;  // ids of shared objects, stable across executions
  std::vector<std::string> actor_names_;
  std::vector<LogEvent> events_;
  ProgressJudge judge_;  // cycles, fairness, obligations (sim/progress/progress_judge.h)

  // Symmetry (sim/explore/symmetric_starts.h): the classes declared, who started, first operations.
  const OpDesc& pending_op(ActorId a) const;
  bool finished(ActorId a) const;
  void setup_symmetry();
  void filter_symmetric();
  SymmetricStarts starts_;
  std::vector<std::int8_t> owners_;  // by object: the actor that owns it (own), or -1

  Access effective_access_ = Access::none;
  std::uint8_t effects_ = 0;
  std::array<ObjectId, kMaxExtraObjects> touched_{};  // also_touch() in this step
  std::size_t touched_count_ = 0;
  bool touched_overflow_ = false;
  ScopeId scope_ = kGlobalObservations;  // of this step's observations, with kObserves
  StepResult result_;
  std::string detail_;  // note_detail, for the current step
  std::vector<ObjectId> released_;  // note_released, for the current step
};

}  // namespace lockstep::sim
