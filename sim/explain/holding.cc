#include "lockstep/sim/explain/holding.h"

#include <algorithm>
#include <map>
#include <stdexcept>

namespace lockstep::sim {
namespace {

bool acquires(Access a) { return a == Access::acquire || a == Access::acquire_shared; }

// The acquire got the object: ok, a non-zero value (true, a connection's pid), or a lock
// timeout that was granted all the same (Bug #17686's phantom grant).
bool got_it(const StepResult& r) {
  switch (r.kind) {
    case StepResult::Kind::ok: return true;
    case StepResult::Kind::value: return r.value != 0;
    case StepResult::Kind::timeout: return r.value != 0;
    default: return false;
  }
}

struct Open {
  std::size_t span;  // index into the output
  int count = 0;     // holds: how often taken (re-entrant advisory locks, pooled connections)
};

// Builds the spans of one execution, step by step.
class SpanBuilder {
 public:
  explicit SpanBuilder(const ExecutionFacts& facts) : facts_(facts), n_(facts.steps.size()) {}

  std::vector<Span> build() {
    for (std::size_t s = 0; s < n_; ++s) {
      const StepFact& f = facts_.steps[s];
      if (waits_.count(f.actor) != 0) {
        if (!end_wait(s, f)) continue;
      } else if (f.footprint.object != kNoObject && acquires(f.footprint.access) && !f.timer) {
        acquire(s, f);
      }
      if (f.footprint.object != kNoObject && f.footprint.access != Access::read && f.footprint.access != Access::release) {
        first_touch_.try_emplace({f.actor, f.footprint.object}, s);
      }
      release(s, f);
    }
    close_at_end();
    return std::move(out_);
  }

 private:
  void end_hold(ActorId a, ObjectId obj, std::uint64_t step, bool all) {
    auto it = holds_.find({a, obj});
    const auto touched = first_touch_.find({a, obj});
    if (it == holds_.end()) {
      if (touched == first_touch_.end() || !all) return;
      // A lock the step lets go without a grant drawn: a row lock an UPDATE took at once
      // (its step notes no result). It was held from the actor's first write of the object.
      begin_hold(a, obj, touched->second);
      it = holds_.find({a, obj});
    }
    if (touched != first_touch_.end()) first_touch_.erase(touched);
    if (!all && --it->second.count > 0) return;
    out_[it->second.span].to = step;
    holds_.erase(it);
  }

  void begin_hold(ActorId a, ObjectId obj, std::uint64_t step) {
    auto [it, fresh] = holds_.try_emplace({a, obj}, Open{out_.size(), 0});
    if (fresh) {
      Span s;
      s.kind = Span::Kind::hold;
      s.actor = a;
      s.object = obj;
      s.from = s.to = step;
      out_.push_back(std::move(s));
    }
    ++it->second.count;
  }

  std::vector<ActorId> holders_of(ObjectId obj, ActorId except) const {
    std::vector<ActorId> who;
    for (const auto& [key, open] : holds_) {
      if (key.second == obj && key.first != except) who.push_back(key.first);
    }
    return who;
  }

  // A wait the actor is in ends at its next step, unless that step is a wake-up on the
  // same object that still waits (the deadlock check): then false, and the step is done.
  bool end_wait(std::size_t s, const StepFact& f) {
    auto w = waits_.find(f.actor);
    Span& span = out_[w->second];
    const bool same = f.footprint.object == span.object;
    if (same && f.result.kind == StepResult::Kind::woke) return false;
    span.to = s;
    const bool phantom = f.result.kind == StepResult::Kind::timeout && got_it(f.result);
    span.ended = phantom                     ? "timed out, yet granted (phantom grant)"
                 : got_it(f.result) && same ? "granted"
                 : f.timer || f.result.kind == StepResult::Kind::timeout ? "timed out"
                 : f.result.kind == StepResult::Kind::failed             ? "failed"
                                                                          : "ended";
    waits_.erase(w);
    if (same && got_it(f.result)) begin_hold(f.actor, f.footprint.object, s);
    return true;
  }

  // An acquisition: a hold when it got the lock; a wait when it queued, or failed and its
  // actor's next step waits on the same object.
  void acquire(std::size_t s, const StepFact& f) {
    const ActorId a = f.actor;
    const ObjectId obj = f.footprint.object;
    if (got_it(f.result)) {
      begin_hold(a, obj, s);
      return;
    }
    bool waits_next = f.result.kind == StepResult::Kind::queued;
    if (f.result.kind == StepResult::Kind::failed) {
      for (std::size_t k = s + 1; k < n_; ++k) {
        if (facts_.steps[k].actor != a) continue;
        waits_next = facts_.steps[k].footprint.object == obj && acquires(facts_.steps[k].footprint.access);
        break;
      }
    }
    if (!waits_next) return;
    Span w;
    w.kind = Span::Kind::wait;
    w.actor = a;
    w.object = obj;
    w.from = w.to = s;
    w.holders = holders_of(obj, a);
    waits_[a] = out_.size();
    out_.push_back(std::move(w));
  }

  // Releases: the main object (unless the unlock found nothing to let go), the objects
  // let go with it at once, and what the step said it let go besides.
  void release(std::size_t s, const StepFact& f) {
    const Footprint& fp = f.footprint;
    if (fp.object != kNoObject && fp.access == Access::release &&
        !(f.result.kind == StepResult::Kind::value && f.result.value == 0)) {
      end_hold(f.actor, fp.object, s, false);
    }
    if (fp.access == Access::release) {
      for (std::size_t k = 0; k < fp.extra_count; ++k) end_hold(f.actor, fp.extra[k], s, true);
    }
    for (const ObjectId obj : f.released) end_hold(f.actor, obj, s, true);
  }

  // What is still held or waited for at the end, then the spans in order of their start.
  void close_at_end() {
    const std::uint64_t last = n_ == 0 ? 0 : n_ - 1;
    for (const auto& [key, open] : holds_) {
      out_[open.span].to = last;
      out_[open.span].open_at_end = true;
    }
    for (const auto& [actor, index] : waits_) {
      out_[index].to = last;
      out_[index].open_at_end = true;
      out_[index].ended = "still waiting";
    }
    for (const Span& s : out_) {
      if (s.from > s.to || s.to >= std::max<std::uint64_t>(n_, 1)) throw std::logic_error("holding_spans: a span ends before it begins");
    }
    std::stable_sort(out_.begin(), out_.end(), [](const Span& x, const Span& y) { return x.from < y.from; });
  }

  const ExecutionFacts& facts_;
  const std::size_t n_;
  std::vector<Span> out_;
  std::map<std::pair<ActorId, ObjectId>, Open> holds_;
  std::map<ActorId, std::size_t> waits_;  // an actor waits for one object at a time
  // The first step since its last release at which an actor wrote or took an object.
  std::map<std::pair<ActorId, ObjectId>, std::uint64_t> first_touch_;
};

}  // namespace

std::vector<Span> holding_spans(const ExecutionFacts& facts) { return SpanBuilder(facts).build(); }

}  // namespace lockstep::sim
