#include "lockstep/sim/wakeup_tree.h"

#include <algorithm>

#include "lockstep/sim/invariant.h"

namespace lockstep::sim {

std::uint32_t WakeupForest::copy_siblings(const std::vector<Node>& old, std::uint32_t from) {
  if (from == kNone) return kNone;
  // Depth first, leftmost first: a copy's link slot is filled when the copy is appended.
  struct Pending {
    std::uint32_t original;  // the node of `old` to copy
    std::uint32_t parent;    // its copy's parent (kNone: one of the first level)
    std::uint32_t after;     // its copy's previous sibling (kNone: a first child)
  };
  thread_local std::vector<Pending> stack;
  stack.assign(1, {from, kNone, kNone});
  const auto first = static_cast<std::uint32_t>(nodes_.size());
  while (!stack.empty()) {
    const Pending p = stack.back();
    stack.pop_back();
    const Node& original = old[p.original];
    const auto copy = static_cast<std::uint32_t>(nodes_.size());
    nodes_.push_back(Node{original.step, kNone, kNone});
    if (p.after != kNone) {
      nodes_[p.after].next_sibling = copy;
    } else if (p.parent != kNone) {
      nodes_[p.parent].first_child = copy;
    }
    // The sibling after it waits until its first child's line is copied.
    if (original.next_sibling != kNone) stack.push_back({original.next_sibling, p.parent, copy});
    if (original.first_child != kNone) stack.push_back({original.first_child, copy, kNone});
  }
  return first;
}

void WakeupForest::compact(std::span<WakeupTree* const> trees) {
  std::vector<Node> old = std::move(nodes_);
  nodes_ = std::move(spare_);
  nodes_.clear();
  for (WakeupTree* tree : trees) {
    LOCKSTEP_INVARIANT(tree->empty() || tree->forest_ == this, "a compacted wakeup tree is one of the forest's");
    tree->first_root_ = copy_siblings(old, tree->first_root_);
  }
  spare_ = std::move(old);
  next_compaction_ = std::max(first_compaction_, 2 * nodes_.size());
}

std::uint32_t WakeupTree::unlink_root(ActorId actor, bool timer) {
  for (std::uint32_t* link = &first_root_; *link != WakeupForest::kNone; link = &forest_->nodes_[*link].next_sibling) {
    const Node& root = forest_->nodes_[*link];
    if (root.step.actor == actor && root.step.timer == timer) {
      const std::uint32_t found = *link;
      *link = root.next_sibling;
      return found;
    }
  }
  return WakeupForest::kNone;
}

WakeupTree WakeupTree::take_subtree(ActorId actor, bool timer) {
  WakeupTree sub;
  sub.forest_ = forest_;
  if (empty()) return sub;
  const std::uint32_t root = unlink_root(actor, timer);
  if (root != WakeupForest::kNone) sub.first_root_ = forest_->nodes_[root].first_child;
  return sub;
}

void WakeupTree::erase_transition(ActorId actor, bool timer) {
  if (empty()) return;
  while (unlink_root(actor, timer) != WakeupForest::kNone) {
  }
}

std::vector<std::vector<int>> WakeupTree::branches() const {
  std::vector<std::vector<int>> out;
  std::vector<int> path;
  auto walk = [&](auto& self, std::uint32_t first) -> void {
    for (std::uint32_t c = first; c != WakeupForest::kNone; c = forest_->nodes_[c].next_sibling) {
      const WakeStep& step = forest_->nodes_[c].step;
      path.push_back(step.timer ? -1 - step.actor : step.actor);
      if (forest_->nodes_[c].first_child == WakeupForest::kNone) out.push_back(path);
      self(self, forest_->nodes_[c].first_child);
      path.pop_back();
    }
  };
  if (!empty()) walk(walk, first_root_);
  return out;
}

void WakeupTree::insert(StepSequence sequence) {
  LOCKSTEP_INVARIANT(!sequence.empty(), "a wakeup sequence has a step");
  LOCKSTEP_INVARIANT(forest_ != nullptr, "a wakeup tree that is inserted into has a forest");
  constexpr std::uint32_t kNone = WakeupForest::kNone;
  std::vector<Node>& nodes = forest_->nodes_;
  thread_local std::vector<const WakeStep*> left;  // what is left of the sequence: no allocation per insert
  left.assign(sequence.begin(), sequence.end());
  std::size_t start = 0;         // left[start..) is what is left: a step taken from the front only moves start
  std::uint32_t parent = kNone;  // the node whose children are looked at (kNone: the roots)
  for (;;) {
    const StepSequence v(left.data() + start, left.size() - start);
    std::uint32_t next = kNone;
    std::uint32_t last = kNone;  // the rightmost child, to append after
    bool front = false;          // next's step is v's first one
    for (std::uint32_t c = parent == kNone ? first_root_ : nodes[parent].first_child; c != kNone; c = nodes[c].next_sibling) {
      last = c;
      const WakeStep& step = nodes[c].step;
      // The common case, a branch that begins as v does: its step is v's first one's
      // transition, with no step before it in v.
      if (step.actor == v.front()->actor) {
        if (step.timer != v.front()->timer) continue;
        next = c;
        front = true;
        break;
      }
      if (weak_initial(step, v)) {
        next = c;
        break;
      }
    }
    if (next == kNone) {  // no branch covers v: a new rightmost one under this prefix, its steps in a row
      LOCKSTEP_INVARIANT(nodes.size() + v.size() < kNone, "a wakeup forest's node indices fit in 32 bits");
      const auto at = static_cast<std::uint32_t>(nodes.size());
      (last != kNone ? nodes[last].next_sibling : parent != kNone ? nodes[parent].first_child : first_root_) = at;
      for (std::size_t k = 0; k < v.size(); ++k) {
        const auto index = static_cast<std::uint32_t>(nodes.size());
        nodes.push_back(Node{*v[k], k + 1 < v.size() ? index + 1 : kNone, kNone});
      }
      return;
    }
    if (nodes[next].first_child == kNone) return;  // a leaf: v is covered
    if (front) {
      ++start;
    } else {
      const ActorId actor = nodes[next].step.actor;
      if (auto it = std::find_if(left.begin() + static_cast<std::ptrdiff_t>(start), left.end(),
                                 [&](const WakeStep* s) { return s->actor == actor; });
          it != left.end()) {
        left.erase(it);
      }
    }
    if (start == left.size()) return;  // v is a prefix of a branch
    parent = next;
  }
}

}  // namespace lockstep::sim
