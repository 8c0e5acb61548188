// model/env.h: the world that model code lives in.
//
// Every system under test is written against this interface only: time, sleep, the current
// actor, actor-local storage, in-memory locks, flock file locks, shared variables, seeded
// randomness, explored choices, observations for the invariants, a filesystem that a crash
// can tear, and the crash fault (model/filesystem.h). Two implementations
// exist: the simulated one in sim/ (deterministic fibers, virtual time, every call a
// scheduling point) and a real one in real/ (threads, steady_clock, real flock).
//
// Contract for model code:
//  - Never touch a wall clock, an OS thread, a random device or libpq directly.
//  - Every call on an Env object below is a visible operation: in the simulation the actor
//    yields to the scheduler before it, so the code between two calls runs atomically.
//  - Outside any actor (an instance's constructor, its at_end check) operations take effect
//    at once, without scheduling; operations that would block there throw ModelError.
//  - Objects are created by the Env's factories, typically in a system instance's
//    constructor, and must not outlive that instance.
//  - Destructors may release (Mutex::unlock, Lock::release, File::close, ...) but must not
//    acquire, read or write: when an execution ends early the simulation unwinds unfinished
//    actors with an exception, and during that unwinding only releases take effect.
//  - Misuse (unlocking a mutex one does not hold, releasing an unlocked Lock) throws
//    ModelError; in the simulation that ends the execution with verdict model_error.
//
// Example:
//   auto m = env.new_mutex("m");
//   auto x = env.new_shared_var("x", 0);
//   // in an actor:
//   std::lock_guard guard(*m);
//   x->store(x->load() + 1);
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <initializer_list>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "lockstep/model/filesystem.h"

namespace lockstep {

namespace pg {
class Pool;
struct PoolConfig;
}  // namespace pg

// Durations and instants. Instants count from the start of the run (virtual in the
// simulation). Only durations and instants are used here, never a clock.
using Duration = std::chrono::nanoseconds;
using Time = std::chrono::nanoseconds;

// Actors are numbered 0..n-1 in the order their system declares them.
using ActorId = int;

// The most actors one execution may have: the scheduler's and DPOR's wait and sleep sets
// are 64-bit masks. The one definition; a system's own, smaller limit has its own name.
inline constexpr int kMaxActors = 64;

// Thrown when model code misuses an Env object. Not an invariant violation: a bug in the
// model itself (verdict model_error).
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Observation scopes: see Event::scope.
using ObservationScope = std::int64_t;
inline constexpr ObservationScope kGlobalScope = INT64_MIN;

// Event kinds: see Event::kind. A model numbers its own from 1; lockstep's own events use
// the numbers from 0xFF00.
using EventKind = std::uint16_t;
inline constexpr EventKind kNoEventKind = 0;
inline constexpr EventKind kPhantomGrantEvent = 0xFF00;    // "phantom_grant": the simulated server, Bug #17686
inline constexpr EventKind kPhantomCleanedEvent = 0xFF01;  // "phantom_cleaned": the advisory lock service
inline constexpr EventKind kLockWindowEvent = 0xFF02;      // "lock_window": the advisory lock service

// A fact reported by model code for the invariants: "entered critical section 3",
// "command completed". name is expected to be a string literal (it is not copied).
//
// ordered: the invariants judge this event by its order relative to other actors' ordered
// events (entering and leaving a critical section), so exploration must try every order of
// the steps that report them. An unordered event is one whose verdict does not depend on
// that order (a count, a maximum, a fact about the reporting actor alone): leaving it
// unordered spares the explorer those orders. When in doubt, leave it ordered.
//
// scope (ordered events only): which other ordered events this one is ordered against.
// kGlobalScope, the default, orders it against every ordered event. Any other value orders
// it against the ordered events of the same scope and the global ones only, so actors that
// report on different scopes (different agents, different keys) need not be interleaved.
// The contract a checker keeps when its events name scopes: its verdicts, during the run and
// at the end, may depend on the order of ordered events within one scope (global events
// count as in every scope), never on the order of two events of different scopes. The usual
// scope is the event's subject (Event::scoped); a checker that needs a global order leaves
// the default. When in doubt, leave it global.
// One named value of an event (Env::observe(name, {fields})): a number or a text. Its name
// and text are not copied: they must outlive the observe call.
struct EventField {
  std::string_view name;
  std::variant<std::int64_t, std::string_view> value;

  constexpr EventField(std::string_view n, std::int64_t v) : name(n), value(v) {}
  constexpr EventField(std::string_view n, int v) : name(n), value(std::int64_t{v}) {}
  constexpr EventField(std::string_view n, std::string_view v) : name(n), value(v) {}
  constexpr EventField(std::string_view n, const char* v) : name(n), value(std::string_view(v)) {}
  constexpr EventField(std::string_view n, const std::string& v) : name(n), value(std::string_view(v)) {}
};

struct Event {
  std::string_view name;
  std::int64_t subject = 0;
  std::int64_t value = 0;
  bool ordered = true;
  ObservationScope scope = kGlobalScope;
  // The model's own number for `name` (0: none), so that its checker dispatches with a
  // switch rather than by comparing names on every observation. Traces show the name.
  EventKind kind = kNoEventKind;

  // Named values (Env::observe(name, {fields})), shown in traces as `job=1 worker=b`; empty
  // for the two-integer form. Valid during the observe call only.
  std::span<const EventField> fields{};

  // An ordered event whose scope is its subject: judged only against events on that subject.
  static constexpr Event scoped(std::string_view name, std::int64_t subject, std::int64_t value) {
    return {name, subject, value, true, subject};
  }
  // The field named `name`: its number, or its text; nullopt when there is no such field or
  // it holds the other kind.
  std::optional<std::int64_t> number(std::string_view field) const;
  std::optional<std::string_view> text(std::string_view field) const;
};

// What an event carries, as traces show it: its fields (`job=1 worker=b`; a text with a
// space, `=` or a quote, or an empty one, quoted as JSON), or `subject value`.
std::string event_values_text(const Event& event);

// An event's name and kind, declared once per event a model reports, so that reporting
// one gives both and its checker can `switch (e.kind)` with `case kX.kind:` labels.
struct EventName {
  std::string_view name;
  EventKind kind;
  // Ordered against the ordered events of its subject (Event::scoped).
  constexpr Event scoped(std::int64_t subject, std::int64_t value) const { return {name, subject, value, true, subject, kind}; }
  // Ordered against every ordered event.
  constexpr Event global(std::int64_t subject, std::int64_t value) const {
    return {name, subject, value, true, kGlobalScope, kind};
  }
  // Unordered: a count, a maximum, a fact about the reporting actor.
  constexpr Event fact(std::int64_t subject, std::int64_t value) const { return {name, subject, value, false, kGlobalScope, kind}; }
};

// Exclusive, non-reentrant mutex (std::mutex semantics; BasicLockable).
class Mutex {
 public:
  virtual ~Mutex() = default;
  virtual void lock() = 0;
  virtual bool try_lock() = 0;
  // Waits at most `timeout`; true when acquired.
  virtual bool try_lock_for(Duration timeout) = 0;
  // REQUIRES: held by the calling actor.
  virtual void unlock() = 0;
};

// Reader/writer mutex with Go's sync.RWMutex semantics: a writer that is waiting holds off
// new readers, so readers cannot starve a writer. Not reentrant for either side.
class RWMutex {
 public:
  virtual ~RWMutex() = default;
  virtual void lock() = 0;
  virtual bool try_lock() = 0;
  virtual void unlock() = 0;
  virtual void rlock() = 0;
  virtual bool try_rlock() = 0;
  virtual void runlock() = 0;
};

// asyncio.Lock: not reentrant (the holder acquiring again waits forever), not owned
// (any actor may release it).
class Lock {
 public:
  virtual ~Lock() = default;
  virtual void acquire() = 0;
  // asyncio.wait_for(lock.acquire(), timeout): true when acquired.
  virtual bool acquire_for(Duration timeout) = 0;
  virtual bool try_acquire() = 0;
  // REQUIRES: locked (else ModelError, as asyncio raises RuntimeError).
  virtual void release() = 0;
  virtual bool locked() = 0;
};

enum class FlockMode { shared, exclusive };

// One open file description with flock(2) semantics: locks belong to the open file, not to
// the actor; two opens of one path conflict with each other even in one actor; changing
// the mode of a held lock is not atomic (the old lock is dropped first, as on Linux).
// Closing the file releases its lock.
class File {
 public:
  virtual ~File() = default;
  virtual void flock(FlockMode mode) = 0;
  virtual bool try_flock(FlockMode mode) = 0;  // LOCK_NB: false when it would block
  virtual void unlock() = 0;
  virtual void close() = 0;
};

// A sequentially consistent shared 64-bit variable.
class SharedVar {
 public:
  virtual ~SharedVar() = default;
  virtual std::int64_t load() = 0;
  virtual void store(std::int64_t value) = 0;
  // Stores `desired` when the value equals `expected`; a failed exchange is only a read.
  virtual bool compare_exchange(std::int64_t expected, std::int64_t desired) = 0;
  // Adds `delta` and returns the value before, as one atomic step (a counter needs no CAS
  // loop). The default is that loop, for a SharedVar of your own; lockstep's are one step.
  virtual std::int64_t fetch_add(std::int64_t delta) {
    for (std::int64_t seen = load();; seen = load()) {
      if (compare_exchange(seen, seen + delta)) return seen;
    }
  }
};

class Env {
 public:
  virtual ~Env() = default;

  virtual Time now() = 0;
  virtual void sleep_for(Duration duration) = 0;

  // The calling actor. REQUIRES: called from an actor.
  virtual ActorId current_actor() = 0;

  // Seeded, reproducible randomness in [0, bound). REQUIRES: bound > 0.
  virtual std::uint64_t random(std::uint64_t bound) = 0;

  // Nondeterminism that the explorer must cover (a timeout firing, a fault, a duration):
  // returns a value in [0, n). The simulation explores every value and records the choice;
  // the real backend picks one at random. REQUIRES: n > 0. `label` names it in traces.
  virtual int choose(int n, std::string_view label) = 0;

  // Reports a fact to the invariants. An ordered event (Event::ordered) is a scheduling
  // point, a visible operation on its scope; an unordered one is not.
  virtual void observe(const Event& event) = 0;
  // An ordered event with named fields: env.observe("effect", {{"job", 1}, {"worker", "b"}})
  // shows in traces as `observe effect job=1 worker=b`; its checkers read e.number("job"),
  // e.text("worker"). Ordered against every ordered event, or those of `scope`; subject and
  // value are 0.
  void observe(std::string_view name, std::initializer_list<EventField> fields, ObservationScope scope = kGlobalScope,
               EventKind kind = kNoEventKind) {
    Event e{name, 0, 0, true, scope, kind};
    e.fields = std::span<const EventField>(fields.begin(), fields.size());
    observe(e);
  }

  // Progress obligations (liveness), as Coyote's hot and cold monitor states: hot(name) says
  // something must eventually happen ("job 3 is due", "hook 2 waits for the agent lock");
  // cold(name) says it did. An execution that ends, or reaches its step bound under fair
  // scheduling, with an obligation still hot gets the verdict `liveness` naming it. With
  // `within`, it must also turn cold within that much virtual time of turning hot (timed
  // mode only; untimed runs promise nothing about time between actors). A hot obligation
  // made hot again keeps its first time. Each call is an ordered step on the obligation's
  // name. The real Env ignores both: progress is judged in the simulation.
  virtual void hot(std::string_view obligation, Duration within = Duration::max());
  virtual void cold(std::string_view obligation);

  virtual std::unique_ptr<Mutex> new_mutex(std::string name) = 0;
  virtual std::unique_ptr<RWMutex> new_rwmutex(std::string name) = 0;
  virtual std::unique_ptr<Lock> new_lock(std::string name) = 0;
  virtual std::unique_ptr<SharedVar> new_shared_var(std::string name, std::int64_t initial) = 0;
  // Opens `path` (a name; nothing touches the disk in the simulation).
  virtual std::unique_ptr<File> open_file(std::string path) = 0;

  // A connection pool to PostgreSQL (model/pg.h). The simulation has one simulated server
  // per execution; an Env without a PostgreSQL backend throws ModelError.
  virtual std::unique_ptr<pg::Pool> new_pg_pool(const pg::PoolConfig& config);

  // The machine's files and directories (model/filesystem.h), one tree for every actor. The
  // simulation starts each execution with an empty root; the real Env roots it in a private
  // directory. An Env without one throws ModelError.
  virtual Filesystem& filesystem();

  // The crash fault (model/filesystem.h): from now on each visible operation of the calling
  // actor may crash its process (or the machine) instead of running; the explorer tries
  // both. The actor then unwinds with Crashed, and is disarmed. no_crash_points() disarms.
  // The real Env under `lockstep confirm` does the same in the actor's thread: the first
  // iteration counts the crash points, each later one crashes at one of them, drawn.
  // Elsewhere the real Env ignores both.
  virtual void crash_points(CrashKind kind);
  virtual void no_crash_points();
};

// Actor-local storage: what the seeds call thread-local. One T per actor, created on
// first use by that actor. Per actor in the simulation, per thread for real: safe for
// concurrent actors (a reference stays valid while other actors add theirs).
template <typename T>
class ActorLocal {
 public:
  explicit ActorLocal(Env& env) : env_(env) {}

  T& get() {
    const auto actor = static_cast<std::size_t>(env_.current_actor());
    const std::lock_guard guard(m_);
    if (actor >= values_.size()) values_.resize(actor + 1);
    return values_[actor];
  }

 private:
  Env& env_;
  std::mutex m_;
  std::deque<T> values_;  // growing at the end keeps references to the others valid
};

}  // namespace lockstep
