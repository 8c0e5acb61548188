#include "lockstep/sim/dpor/wakeup_tree.h"

#include <algorithm>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim {
WakeupTree WakeupTree::take_subtree(ActorId actor, bool timer, const ChoicePath& path) {
  WakeupTree sub;
  const auto it = std::find_if(roots_.begin(), roots_.end(), [&](const Node& c) {
    return c.step.actor == actor && c.step.timer == timer && c.step.path == path;
  });
  if (it == roots_.end()) return sub;
  sub.roots_ = std::move(it->children);
  roots_.erase(it);
  return sub;
}

WakeupTree WakeupTree::copy_subtree(ActorId actor, bool timer, const ChoicePath& path) const {
  WakeupTree sub;
  for (const Node& c : roots_) {
    if (c.step.actor == actor && c.step.timer == timer && c.step.path == path) {
      sub.roots_ = c.children;
      break;
    }
  }
  return sub;
}

void append_step_fingerprint(std::string& out, const WakeStep& s) {
  auto put = [&out](const auto& field) { out.append(reinterpret_cast<const char*>(&field), sizeof field); };
  put(s.actor);
  put(s.timer);
  put(s.known);
  put(s.fp.object);
  put(s.fp.access);
  put(s.fp.effects);
  put(s.fp.domain);
  put(s.fp.domain_write);
  put(s.fp.reads_every_object);
  put(s.fp.scope);
  put(s.fp.extra_count);
  for (std::size_t i = 0; i < s.fp.extra_count; ++i) put(s.fp.extra[i]);
  put(s.fp.symmetry_extra);
  const auto values = static_cast<std::uint32_t>(s.path.size());
  put(values);
  for (const std::uint32_t v : s.path) put(v);
}

void WakeupTree::erase_transition(ActorId actor, bool timer, const ChoicePath& path) {
  std::erase_if(roots_, [&](const Node& c) { return c.step.actor == actor && c.step.timer == timer && c.step.path == path; });
}

std::vector<std::vector<int>> WakeupTree::branches() const {
  std::vector<std::vector<int>> out;
  std::vector<int> path;
  auto walk = [&](auto& self, const std::vector<Node>& level) -> void {
    for (const Node& node : level) {
      path.push_back(node.step.timer ? -1 - node.step.actor : node.step.actor);
      if (node.children.empty()) out.push_back(path);
      self(self, node.children);
      path.pop_back();
    }
  };
  walk(walk, roots_);
  return out;
}

int WakeupTree::insert(StepSequence sequence) {
  LOCKSTEP_INVARIANT(!sequence.empty(), "a wakeup sequence has a step");
  thread_local std::vector<const WakeStep*> left;  // what is left of the sequence: no allocation per insert
  left.assign(sequence.begin(), sequence.end());
  std::size_t start = 0;  // left[start..) is what is left: a step taken from the front only moves start
  std::vector<Node>* level = &roots_;
  int under = -1;  // the child of the root level the walk went into
  for (;;) {
    const StepSequence v(left.data() + start, left.size() - start);
    Node* next = nullptr;
    bool front = false;  // next's step is v's first one
    for (Node& child : *level) {
      // The common case, a branch that begins as v does: its step is v's first one's
      // transition, with no step before it in v.
      if (child.step.actor == v.front()->actor) {
        if (child.step.timer != v.front()->timer || child.step.path != v.front()->path) continue;
        next = &child;
        front = true;
        break;
      }
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
      return under;
    }
    if (level == &roots_) under = static_cast<int>(next - roots_.data());
    if (next->children.empty()) return -1;  // a leaf: v is covered
    if (front) {
      ++start;
    } else {
      const ActorId actor = next->step.actor;
      if (auto it = std::find_if(left.begin() + static_cast<std::ptrdiff_t>(start), left.end(),
                                 [&](const WakeStep* s) { return s->actor == actor; });
          it != left.end()) {
        left.erase(it);
      }
    }
    if (start == left.size()) return -1;  // v is a prefix of a branch
    level = &next->children;
  }
}

}  // namespace lockstep::sim
