// model/supervisor/lockdep.h: lock-order checking in the spirit of the Linux kernel's
// lockdep, for model code that takes RWMutexes through TrackedRWMutex.
//
// Every acquisition names a lock class ("Supervisor[0].mu", "WorkerContext.mu"). When an
// actor asks for class B while holding class A, the edge A -> B joins the graph of the
// execution, with the path that made it ("tickWorker(w1) on actor a: A then B"). An edge
// that closes a cycle is a `lock_order` violation naming both paths, reported at the
// request, whether or not this interleaving deadlocks. Edges from a class to itself are not
// recorded: that is one lock taken twice, which deadlocks and the scheduler reports.
// With declared ranks (seed 004's Option 2), asking for a class of rank lower than or equal
// to one held is a `lock_rank` violation at once.
//
// The graph here is per execution: it reports a cycle the moment one execution closes it.
// Orders that only different executions take (an actor that takes A then B or B then A as
// its input decides) meet in the explorer's graph across executions (sim/explain/lock_order.h),
// which edges() feeds.
// Violations are delivered through Env::observe (event "lockdep") and take().
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lockstep/model/env.h"
#include "lockstep/model/system.h"

namespace lockstep::supervisor {

// Reported when lockdep has a violation to hand to the checker (it takes it then).
inline constexpr EventName kLockdepEvent{"lockdep", 1};

class LockDep {
 public:
  LockDep(Env& env, std::map<std::string, int> ranks) : env_(env), ranks_(std::move(ranks)), held_(env) {}

  // Before asking for `cls`, from operation `where`.
  void acquiring(const std::string& cls, const std::string& where);
  void acquired(const std::string& cls) { held_.get().push_back(cls); }
  void released(const std::string& cls);
  // Rule 3 of the seed, when a scenario declares it: before calling a method of `callee` (a
  // child supervisor), the caller holds no Supervisor's mu. A `child_call_under_lock`
  // violation otherwise, whether or not this interleaving deadlocks.
  void calling(const std::string& callee, const std::string& where);
  // The first violation found, once.
  std::optional<Violation> take() { return std::exchange(pending_, std::nullopt); }
  // The edges this execution took, each with how it was first taken (for lockdep across
  // executions: Instance::lock_order_edges).
  std::vector<LockOrderEdge> edges() const {
    std::vector<LockOrderEdge> out;
    for (const auto& [edge, how] : edges_) out.push_back({edge.first, edge.second, how});
    return out;
  }

 private:
  // A path of edges from `from` to `to`, if any.
  std::optional<std::vector<std::pair<std::string, std::string>>> path(const std::string& from, const std::string& to) const;
  void report(Violation v);

  Env& env_;
  std::map<std::string, int> ranks_;
  ActorLocal<std::vector<std::string>> held_;
  std::map<std::pair<std::string, std::string>, std::string> edges_;  // (from, to) -> how it was first taken
  std::optional<Violation> pending_;
  bool reported_ = false;
};

// An RWMutex whose acquisitions go through a LockDep.
class TrackedRWMutex {
 public:
  TrackedRWMutex(Env& env, LockDep& dep, std::string cls) : m_(env.new_rwmutex(cls)), dep_(dep), cls_(std::move(cls)) {}
  void lock(const std::string& where) {
    dep_.acquiring(cls_, where);
    m_->lock();
    dep_.acquired(cls_);
  }
  void rlock(const std::string& where) {
    dep_.acquiring(cls_, where);
    m_->rlock();
    dep_.acquired(cls_);
  }
  void unlock() {
    m_->unlock();
    dep_.released(cls_);
  }
  void runlock() {
    m_->runlock();
    dep_.released(cls_);
  }
  const std::string& name() const { return cls_; }

 private:
  std::unique_ptr<RWMutex> m_;
  LockDep& dep_;
  std::string cls_;
};

}  // namespace lockstep::supervisor
