// The wakeup tree (sim/wakeup_tree.h): insertion by weak initials, and subtrees handed on
// that leave the rest of the tree as it was.
#include "lockstep/sim/dpor/wakeup_tree.h"

#include <gtest/gtest.h>

#include <vector>

namespace lockstep::sim {
namespace {

using Branches = std::vector<std::vector<int>>;

// A step of `actor` that writes (or reads) object `object`.
WakeStep step(ActorId actor, ObjectId object, Access access = Access::write) {
  WakeStep s;
  s.actor = actor;
  s.fp.object = object;
  s.fp.access = access;
  return s;
}

void insert(WakeupTree& tree, const std::vector<WakeStep>& steps) {
  std::vector<const WakeStep*> v;
  for (const auto& s : steps) v.push_back(&s);
  tree.insert(v);
}

TEST(WakeupTree, ASequenceWhoseWeakInitialIsABranchIsCovered) {
  WakeupTree tree;
  insert(tree, {step(0, 1), step(1, 2)});
  // 2 then 0, 2's step on an object of its own: 0's step is a weak initial (nothing before it
  // in the sequence is dependent with it), and then 1's (independent of 2's), a leaf: the
  // branch's execution covers the sequence, which adds nothing.
  insert(tree, {step(2, 3), step(0, 1)});
  EXPECT_EQ(tree.branches(), (Branches{{0, 1}}));
  // The same sequence again changes nothing; neither does one that is a prefix of a branch.
  insert(tree, {step(0, 1), step(1, 2)});
  insert(tree, {step(0, 1)});
  EXPECT_EQ(tree.branches(), (Branches{{0, 1}}));
  // 0 then 2 writing 1's object: below 0, 1's step is no weak initial of [2]: a new branch.
  insert(tree, {step(0, 1), step(2, 2)});
  EXPECT_EQ(tree.branches(), (Branches{{0, 1}, {0, 2}}));
  // A first step dependent with 0's: a branch of its own, rightmost.
  insert(tree, {step(3, 1), step(0, 1)});
  EXPECT_EQ(tree.branches(), (Branches{{0, 1}, {0, 2}, {3, 0}}));
  EXPECT_EQ(tree.first().actor, 0);
}

TEST(WakeupTree, SubtreesAndErasedBranchesLeaveTheRestAsItWas) {
  WakeupTree tree;
  insert(tree, {step(0, 1), step(1, 2), step(2, 2)});
  insert(tree, {step(0, 1), step(3, 2), step(1, 2)});
  insert(tree, {step(4, 1), step(0, 1)});
  insert(tree, {step(5, 1), step(4, 1)});
  EXPECT_EQ(tree.branches(), (Branches{{0, 1, 2}, {0, 3, 1}, {4, 0}, {5, 4}}));
  WakeupTree sub = tree.take_subtree(0, false);
  EXPECT_EQ(sub.branches(), (Branches{{1, 2}, {3, 1}}));
  EXPECT_EQ(tree.branches(), (Branches{{4, 0}, {5, 4}}));
  tree.erase_transition(4, false);
  EXPECT_EQ(tree.branches(), (Branches{{5, 4}}));
  EXPECT_TRUE(tree.take_subtree(7, false).empty());
}

}  // namespace
}  // namespace lockstep::sim
