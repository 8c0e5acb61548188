// sim/sched/op.h: what an actor tells the scheduler before each visible operation.
//
// An OpDesc names the operation (a static verb), the object it touches and how (the
// footprint; a step that changes several objects at one moment, a COMMIT, names them all),
// and an optional argument, for traces. Footprints are what partial-order
// reduction reasons about: two steps on different objects always commute; on one object,
// two reads commute and anything else does not. A step may narrow its access once it has
// run (a failed compare-and-swap is only a read) through Scheduler::refine_access.
//
// A footprint may also name a domain: a coarser object holding many (a whole simulated
// server). A step that sees or changes the whole domain at once (a view of every lock,
// ending another session) writes it; steps on its single objects read it. Those commute
// with each other as their objects say, and never with a step that writes the domain. A
// step may also read every object of its domain (a deadlock check reads the waits-for
// graph): it commutes with the domain's reads, not with a step that writes any object in it.
//
// OpDesc holds only string_views: verbs are literals and object names live in the
// scheduler's object table for the whole execution, so building one allocates nothing.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace lockstep::sim {

// Object 0 is "nothing shared": a step with it commutes with every other step.
using ObjectId = std::uint32_t;
inline constexpr ObjectId kNoObject = 0;

enum class Access : std::uint8_t {
  none,            // touches no shared state (sleep, a timeout): commutes with everything
  read,            // observes the object
  write,           // overwrites it
  read_write,      // read-modify-write (a compare-and-swap that succeeds)
  acquire,         // takes a lock (exclusive)
  acquire_shared,  // takes a lock in shared mode
  release,         // lets a lock go
};

std::string_view access_name(Access access);

// Effects a step can have besides its object, which partial-order reduction must see: the
// invariants' ordered observations. Two observing steps are dependent when their scopes
// meet (Event::scope in model/env.h): one scope, or either one global. Each ordered
// observation is a step of its own (Scheduler::observe), declared with its scope. The
// clock is no such effect: in timed mode it moves only between steps, when none can run,
// and in untimed mode each actor has its own.
enum EffectFlag : std::uint8_t {
  kObserves = 1,
  // A machine crash (Scheduler's crash fault): every other actor dies at its next step, so
  // whether any other actor's step runs at all depends on its order with the crash. The
  // crash step is dependent with every step of every other actor.
  kMachineCrash = 2,
};

// The scope of a step's observations (Event::scope); the same values as model/env.h.
using ScopeId = std::int64_t;
inline constexpr ScopeId kGlobalObservations = INT64_MIN;

inline bool scopes_meet(ScopeId a, ScopeId b) {
  return a == b || a == kGlobalObservations || b == kGlobalObservations;
}

// The most objects one footprint names besides its main one. A step that touches more
// (a COMMIT of a large transaction) writes its whole domain instead: coarser, still sound.
inline constexpr std::size_t kMaxExtraObjects = 6;

struct Footprint {
  ObjectId object = kNoObject;
  Access access = Access::none;
  std::uint8_t effects = 0;     // EffectFlag bits: declared by an observation step, and effective
  ObjectId domain = kNoObject;  // the coarser object `object` belongs to, if any
  bool domain_write = false;    // the step sees or changes the whole domain at once
  bool reads_every_object = false;  // the step reads every object of its domain (see the top)
  ScopeId scope = kGlobalObservations;  // with kObserves: the scope of the observations
  // More objects the step changes at the same moment (the locks and rows a COMMIT lets go,
  // all at once as the server does): each is written (never only read) by the step.
  std::array<ObjectId, kMaxExtraObjects> extra{};
  std::uint8_t extra_count = 0;
  // The last extra object is a symmetry class's (sim/explore/symmetry.h): the step is a class
  // member's start. Lock reasoning looks past it: it orders only the class's starts.
  bool symmetry_extra = false;

  // Equal when they name the same things: the extra objects past extra_count are not compared.
  friend bool operator==(const Footprint& a, const Footprint& b) {
    return a.object == b.object && a.access == b.access && a.effects == b.effects && a.domain == b.domain &&
           a.domain_write == b.domain_write && a.reads_every_object == b.reads_every_object && a.scope == b.scope && a.extra_count == b.extra_count &&
           a.symmetry_extra == b.symmetry_extra && std::equal(a.extra.begin(), a.extra.begin() + a.extra_count, b.extra.begin());
  }
};

inline bool is_read(Access a) { return a == Access::read; }

// The extra objects that are the step's own (not a symmetry class's: Footprint::symmetry_extra).
inline std::size_t own_extra_count(const Footprint& f) { return f.extra_count - (f.symmetry_extra ? 1U : 0U); }

// The footprint without its symmetry class's object.
inline Footprint without_symmetry(Footprint f) {
  if (f.symmetry_extra) {
    --f.extra_count;
    f.symmetry_extra = false;
  }
  return f;
}

// Calls f(object, access) for every object the footprint names (the main one, then the
// extra ones, each as a write).
template <typename F>
void for_each_object(const Footprint& fp, F&& f) {
  if (fp.object != kNoObject) f(fp.object, fp.access);
  for (std::size_t i = 0; i < fp.extra_count; ++i) f(fp.extra[i], Access::write);
}

// Adds obj to the footprint's objects, written (nothing when it is there already); past
// kMaxExtraObjects the step writes its whole domain. REQUIRES: fp.domain != kNoObject when
// more objects than fit may come.
inline void add_object(Footprint& fp, ObjectId obj) {
  if (obj == fp.object) return;
  for (std::size_t i = 0; i < fp.extra_count; ++i) {
    if (fp.extra[i] == obj) return;
  }
  if (fp.object == kNoObject) {
    fp.object = obj;
    // Written, by a step that declared no object (a sleep or a clock read that arms a timer or
    // chooses a stall under jitter: sim/sched/scheduler.h touch_pending_timers), not untouched.
    if (fp.access == Access::none) fp.access = Access::write;
  } else if (fp.extra_count < kMaxExtraObjects) {
    fp.extra[fp.extra_count++] = obj;
  } else {
    fp.domain_write = true;
  }
}

// Whether the step writes an object (its main one, or any extra one, always written).
inline bool writes_an_object(const Footprint& f) {
  return (f.object != kNoObject && f.access != Access::none && !is_read(f.access)) || f.extra_count > 0;
}

// Whether two steps of different actors may not commute: on one object unless both only
// read it (or one does not touch it: access none); in one domain when either writes it, or
// one reads every object of it and the other writes one;
// through observations whose scopes meet; always when either is a machine crash. This is the one dependence relation: sleep sets
// and race analysis (sim/dpor/races.cc) both follow it.
inline bool dependent(const Footprint& a, const Footprint& b) {
  if ((a.effects | b.effects) & kMachineCrash) return true;
  auto on_one_object = [](ObjectId x, Access ax, ObjectId y, Access ay) {
    return x == y && ax != Access::none && ay != Access::none && !(is_read(ax) && is_read(ay));
  };
  if (a.object != kNoObject && b.object != kNoObject && on_one_object(a.object, a.access, b.object, b.access)) return true;
  if (a.extra_count + b.extra_count > 0) {
    bool found = false;
    for_each_object(a, [&](ObjectId x, Access ax) {
      for_each_object(b, [&](ObjectId y, Access ay) { found = found || on_one_object(x, ax, y, ay); });
    });
    if (found) return true;
  }
  if (a.domain != kNoObject && a.domain == b.domain) {
    if (a.domain_write || b.domain_write) return true;
    if ((a.reads_every_object && writes_an_object(b)) || (b.reads_every_object && writes_an_object(a))) return true;
  }
  return (a.effects & kObserves) && (b.effects & kObserves) && scopes_meet(a.scope, b.scope);
}

struct OpDesc {
  std::string_view verb;         // "read", "lock", ...: a string literal
  Footprint footprint;
  std::int64_t arg = 0;          // shown in traces when has_arg
  bool has_arg = false;
  // A release that also makes writes durable (COMMIT). The crash fault (Scheduler) skips
  // plain releases, which may run in destructors and let go only what a dead process lets go
  // anyway, but not these: a crash just before a COMMIT loses what it would have committed.
  bool commits = false;
  // A wait that another step ends by handing the actor what it waits for (a queued lock
  // request, granted by the release of the lock ahead of it): the waiting step itself takes
  // nothing. Its request was a step of its own, which races as any other step does.
  bool handed_over = false;
  // With handed_over: its timer, when it fires, also reads every object of its footprint's
  // domain (the deadlock check walks the waits-for graph), or writes the whole domain (an
  // idle timeout ends sessions): a footprint that does not depend on where the timer fires
  // (Scheduler::execute), so optimal DPOR can move the timer as any other step
  // (timer_footprint). A deadlock check that finds a soft deadlock reorders queues: it
  // writes the domain, beyond that footprint (optimal DPOR then ends: DporStrategy).
  bool timer_reads_every_object = false;
  bool timer_writes_domain = false;
  // The operation may narrow its access to a read once it has run (Scheduler::refine_access:
  // a try that fails, a CAS, a conditional update). Moved by a race, it may then do either:
  // partial-order reduction must not take the footprint it had for the one it will have.
  bool narrows = false;
  // With narrows: whether it narrows depends on a value (a compare-and-swap fails unless the
  // variable holds what it expects), not only on who holds what.
  bool compares = false;
  // With narrows: a lock's try (pg_try_advisory_lock), whose step is the try alone; what its
  // statement does after it, as its outcome decides, is a step of its own (DporStrategy
  // ends optimal mode at a try's step that did more: a moved try is worked out as its lock's).
  bool tries = false;
  // With narrows or handed_over: an object the step writes in some of its outcomes only (an
  // UPDATE's new tuple in its table's heap, unless its WHERE fails again): optimal DPOR counts
  // it in every outcome (optimal_dpor_footprint), so where a race moves the step its footprint
  // is the same whatever it then does.
  ObjectId may_write = kNoObject;
};

// The footprint of op's timer when it fires: op's own, also reading every object of its
// domain or writing the whole domain (OpDesc::timer_reads_every_object, timer_writes_domain).
inline Footprint timer_footprint(const OpDesc& op) {
  Footprint f = op.footprint;
  if (op.timer_reads_every_object) f.reads_every_object = true;
  if (op.timer_writes_domain) f.domain_write = true;
  return f;
}

// `op`, marked as an operation that may narrow its access (OpDesc::narrows).
inline OpDesc narrowing(OpDesc op) {
  op.narrows = true;
  return op;
}

// `op`, marked as a compare-and-swap (OpDesc::narrows and OpDesc::compares).
inline OpDesc comparing(OpDesc op) {
  op.narrows = true;
  op.compares = true;
  return op;
}

// `op`, marked as a wait that another step ends by a grant (OpDesc::handed_over).
inline OpDesc granted_wait(OpDesc op) {
  op.handed_over = true;
  return op;
}

// Whether a crash may happen instead of this operation (Scheduler's crash points): anything
// but a plain release and an observation.
inline bool crash_point(const OpDesc& op) {
  return (op.footprint.access != Access::release || op.commits) && !(op.footprint.effects & kObserves);
}

// A step on a shared variable: the value it found there and the one it left, and a CAS's
// expected value. DPOR works out from these what a CAS does where a race moves it.
struct VarStep {
  std::int64_t found = 0;
  std::int64_t left = 0;
  std::int64_t expected = 0;  // a CAS's; 0 for any other step
};

// The outcome of a step, kept for the event log only.
struct StepResult {
  enum class Kind : std::uint8_t { none, value, ok, failed, timeout, woke, queued };
  Kind kind = Kind::none;
  std::int64_t value = 0;  // for value; for timeout, 1 when the lock was granted all the same
};

}  // namespace lockstep::sim
