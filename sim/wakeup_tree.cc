#include "lockstep/sim/wakeup_tree.h"

#include <algorithm>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim {
WakeupTree WakeupTree::take_subtree(ActorId actor, bool timer) {
  WakeupTree sub;
  const auto it = std::find_if(roots_.begin(), roots_.end(), [&](const Node& c) { return c.step.actor == actor && c.step.timer == timer; });
  if (it == roots_.end()) return sub;
  sub.roots_ = std::move(it->children);
  roots_.erase(it);
  return sub;
}

void WakeupTree::erase_transition(ActorId actor, bool timer) {
  std::erase_if(roots_, [&](const Node& c) { return c.step.actor == actor && c.step.timer == timer; });
}

void WakeupTree::insert(StepSequence sequence) {
  LOCKSTEP_INVARIANT(!sequence.empty(), "a wakeup sequence has a step");
  thread_local std::vector<const WakeStep*> v;  // what is left of the sequence: no allocation per insert
  v.assign(sequence.begin(), sequence.end());
  std::vector<Node>* level = &roots_;
  for (;;) {
    Node* next = nullptr;
    for (Node& child : *level) {
      if (weak_initial(child.step, v)) {
        next = &child;
        break;
      }
    }
    if (next == nullptr) {  // no branch covers v: a new rightmost one under this prefix
      std::vector<Node>* at = level;
      for (const WakeStep* step : v) {
        at->push_back(Node{*step, {}});
        at = &at->back().children;
      }
      return;
    }
    if (next->children.empty()) return;  // a leaf: v is covered
    const ActorId actor = next->step.actor;
    if (auto it = std::find_if(v.begin(), v.end(), [&](const WakeStep* s) { return s->actor == actor; }); it != v.end()) {
      v.erase(it);
    }
    if (v.empty()) return;  // v is a prefix of a branch
    level = &next->children;
  }
}

}  // namespace lockstep::sim
