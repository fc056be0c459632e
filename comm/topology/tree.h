#pragma once
// Tree-shaped all-reduces: reduce up a rooted spanning tree, then broadcast back down it. Three
// topologies are such trees and differ only in the tree (KungFu-style graph generators):
//
//   tree              binary tree over ranks: parent(r) = (r - 1) / 2, root 0.
//                     5 ranks: parent(1) = parent(2) = 0, parent(3) = parent(4) = 1 (depth 2).
//   star              every rank's parent is rank 0 (the hub): parameter-server traffic.
//   binary-tree-star  star inside each host (members -> host leader, its lowest rank), binary tree
//                     across the host leaders (leader of host h -> leader of host (h - 1) / 2).
//
// Schedule (treeSchedule): reduce, deepest level first: in step k every rank at depth D-k sends
// its whole tensor (already holding its subtree's sum) to its parent, which adds it; then
// broadcast, in the opposite order: every parent sends the total to its children, which overwrite.
// One chunk in the Schedule; the executor pipelines it across levels in segments (1 MiB by default,
// Note [Pipelined schedules] in comm/schedule_executor.h), so a level forwards a segment while the
// next one arrives.
//
// Cost for S bytes: 2·depth steps. Binary tree: every non-root rank sends S up and receives S down;
// an inner rank receives up to 2S from children and sends up to 2S to them: depth = floor(log2 N).
// Star: the hub receives (N-1)·S and sends (N-1)·S, others send S and receive S, in 2 steps.
// Invariants tested: the reduce graph reaches the root from every rank exactly once (parents
// form a tree: no cycles, one root); a star has exactly one hub touching every edge;
// verifySchedule holds.

#include <string>
#include <vector>

#include "comm/topology/hosts.h"
#include "comm/topology/schedule.h"

namespace dtbench::comm {

struct Tree {
  int root = 0;
  std::vector<int> parent;  // parent[root] == -1
};

Tree binaryTree(int worldSize);
Tree starTree(int worldSize);
Tree binaryTreeStar(const HostLayout& hosts);

// "" when `tree` is a tree over all its ranks (one root, each rank reaches it exactly once),
// else the first violation.
std::string verifyTree(const Tree& tree);

// Depth of each rank (root 0). Throws std::invalid_argument when `tree` is not a tree.
std::vector<int> treeDepths(const Tree& tree);

Schedule treeSchedule(const Tree& tree, const std::string& topology);

}  // namespace dtbench::comm
