#include "lockstep/sim/holding.h"

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

}  // namespace

std::vector<Span> holding_spans(const ExecutionFacts& facts) {
  std::vector<Span> out;
  std::map<std::pair<ActorId, ObjectId>, Open> holds;
  std::map<ActorId, std::size_t> waits;  // an actor waits for one object at a time
  const std::size_t n = facts.steps.size();

  auto end_hold = [&](ActorId a, ObjectId obj, std::uint64_t step, bool all) {
    auto it = holds.find({a, obj});
    if (it == holds.end()) return;
    if (!all && --it->second.count > 0) return;
    out[it->second.span].to = step;
    holds.erase(it);
  };
  auto begin_hold = [&](ActorId a, ObjectId obj, std::uint64_t step) {
    auto [it, fresh] = holds.try_emplace({a, obj}, Open{out.size(), 0});
    if (fresh) {
      Span s;
      s.kind = Span::Kind::hold;
      s.actor = a;
      s.object = obj;
      s.from = s.to = step;
      out.push_back(std::move(s));
    }
    ++it->second.count;
  };
  auto holders_of = [&](ObjectId obj, ActorId except) {
    std::vector<ActorId> who;
    for (const auto& [key, open] : holds) {
      if (key.second == obj && key.first != except) who.push_back(key.first);
    }
    return who;
  };

  for (std::size_t s = 0; s < n; ++s) {
    const StepFact& f = facts.steps[s];
    const ActorId a = f.actor;
    const Footprint& fp = f.footprint;
    // A wait the actor is in ends at its next step, unless that step is a wake-up on the
    // same object that still waits (the deadlock check).
    if (auto w = waits.find(a); w != waits.end()) {
      Span& span = out[w->second];
      const bool same = fp.object == span.object;
      if (same && f.result.kind == StepResult::Kind::woke) continue;
      span.to = s;
      const bool phantom = f.result.kind == StepResult::Kind::timeout && got_it(f.result);
      span.ended = phantom                     ? "timed out, yet granted (phantom grant)"
                   : got_it(f.result) && same ? "granted"
                   : f.timer || f.result.kind == StepResult::Kind::timeout ? "timed out"
                   : f.result.kind == StepResult::Kind::failed             ? "failed"
                                                                            : "ended";
      waits.erase(w);
      if (same && got_it(f.result)) begin_hold(a, fp.object, s);
    } else if (fp.object != kNoObject && acquires(fp.access) && !f.timer) {
      if (got_it(f.result)) {
        begin_hold(a, fp.object, s);
      } else {
        // Queued, or an arrival that failed and is followed by the actor's wait on it.
        bool waits_next = f.result.kind == StepResult::Kind::queued;
        if (f.result.kind == StepResult::Kind::failed) {
          for (std::size_t k = s + 1; k < n; ++k) {
            if (facts.steps[k].actor != a) continue;
            waits_next = facts.steps[k].footprint.object == fp.object && acquires(facts.steps[k].footprint.access);
            break;
          }
        }
        if (waits_next) {
          Span w;
          w.kind = Span::Kind::wait;
          w.actor = a;
          w.object = fp.object;
          w.from = w.to = s;
          w.holders = holders_of(fp.object, a);
          waits[a] = out.size();
          out.push_back(std::move(w));
        }
      }
    }
    // Releases: the main object (unless the unlock found nothing to let go), the objects
    // let go with it at once, and what the step said it let go besides.
    if (fp.object != kNoObject && fp.access == Access::release &&
        !(f.result.kind == StepResult::Kind::value && f.result.value == 0)) {
      end_hold(a, fp.object, s, false);
    }
    if (fp.access == Access::release) {
      for (std::size_t k = 0; k < fp.extra_count; ++k) end_hold(a, fp.extra[k], s, true);
    }
    for (const ObjectId obj : f.released) end_hold(a, obj, s, true);
  }
  const std::uint64_t last = n == 0 ? 0 : n - 1;
  for (const auto& [key, open] : holds) {
    out[open.span].to = last;
    out[open.span].open_at_end = true;
  }
  for (const auto& [actor, index] : waits) {
    out[index].to = last;
    out[index].open_at_end = true;
    out[index].ended = "still waiting";
  }
  for (const Span& s : out) {
    if (s.from > s.to || s.to >= std::max<std::uint64_t>(n, 1)) throw std::logic_error("holding_spans: a span ends before it begins");
  }
  std::stable_sort(out.begin(), out.end(), [](const Span& x, const Span& y) { return x.from < y.from; });
  return out;
}

}  // namespace lockstep::sim
