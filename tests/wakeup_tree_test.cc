// The wakeup tree and its forest (sim/wakeup_tree.h): insertion by weak initials, subtrees
// handed on, and compaction, which must keep every tree it is given exactly as it was.
#include "lockstep/sim/wakeup_tree.h"

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
  WakeupForest forest;
  WakeupTree tree(forest);
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
  WakeupForest forest;
  WakeupTree tree(forest);
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
  WakeupTree moved = std::move(sub);
  EXPECT_TRUE(sub.empty());  // NOLINT(bugprone-use-after-move): a moved-from tree is empty
  EXPECT_EQ(moved.branches(), (Branches{{1, 2}, {3, 1}}));
}

TEST(WakeupTree, CompactionKeepsTheTreesItIsGivenAndDropsTheRest) {
  WakeupForest forest(/*first_compaction=*/8);
  WakeupTree kept(forest), dropped(forest);
  for (int round = 0; round < 6; ++round) {
    insert(kept, {step(round % 3, 1), step(3, 2), step(4, static_cast<ObjectId>(10 + round))});
    insert(dropped, {step(5, 1), step(6, 1), step(7, 1)});
  }
  WakeupTree sub = kept.take_subtree(0, false);
  const Branches kept_before = kept.branches();
  const Branches sub_before = sub.branches();
  ASSERT_TRUE(forest.wants_compaction());
  const std::size_t before = forest.size();
  WakeupTree* trees[] = {&kept, &sub};
  forest.compact(trees);
  EXPECT_EQ(kept.branches(), kept_before);
  EXPECT_EQ(sub.branches(), sub_before);
  EXPECT_LT(forest.size(), before);
  std::size_t live = 0;
  for (const auto* t : {&kept, &sub}) {
    // Nodes shared by branches (a common prefix) count once: count distinct paths' nodes.
    Branches b = t->branches();
    for (std::size_t i = 0; i < b.size(); ++i) {
      std::size_t shared = 0;
      if (i > 0) {
        while (shared < b[i].size() && shared < b[i - 1].size() && b[i][shared] == b[i - 1][shared]) ++shared;
      }
      live += b[i].size() - shared;
    }
  }
  EXPECT_EQ(forest.size(), live);  // nothing but the kept trees' nodes
  // The kept trees go on working in the compacted forest.
  insert(kept, {step(8, 1)});
  EXPECT_EQ(kept.branches().back(), (std::vector<int>{8}));
  insert(sub, {step(3, 2), step(9, 9)});
  EXPECT_EQ(sub.branches(), sub_before);  // a prefix of a branch: covered
}

}  // namespace
}  // namespace lockstep::sim
