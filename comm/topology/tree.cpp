#include "comm/topology/tree.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <utility>

namespace dtbench::comm {

Tree binaryTree(int worldSize) {
  Tree tree;
  for (int r = 0; r < worldSize; ++r) tree.parent.push_back(r == 0 ? -1 : (r - 1) / 2);
  return tree;
}

Tree starTree(int worldSize) {
  Tree tree;
  for (int r = 0; r < worldSize; ++r) tree.parent.push_back(r == 0 ? -1 : 0);
  return tree;
}

Tree binaryTreeStar(const HostLayout& hosts) {
  Tree tree;
  tree.parent.assign(hosts.worldSize(), -1);
  for (int h = 0; h < static_cast<int>(hosts.hosts.size()); ++h) {
    const int leader = hosts.leaderOf(h);
    for (int member : hosts.hosts[h])
      if (member != leader) tree.parent[member] = leader;
    if (h > 0) tree.parent[leader] = hosts.leaderOf((h - 1) / 2);
  }
  tree.root = hosts.worldSize() > 0 ? hosts.leaderOf(0) : 0;
  return tree;
}

std::string verifyTree(const Tree& tree) {
  const int n = static_cast<int>(tree.parent.size());
  if (n == 0) return "empty tree";
  if (tree.root < 0 || tree.root >= n || tree.parent[tree.root] != -1) return "the root has a parent";
  for (int r = 0; r < n; ++r) {
    if (r != tree.root && (tree.parent[r] < 0 || tree.parent[r] >= n))
      return "rank " + std::to_string(r) + " has no parent but is not the root";
    int hops = 0;
    for (int at = r; at != tree.root; at = tree.parent[at])
      if (++hops > n) return "rank " + std::to_string(r) + " never reaches the root (a cycle)";
  }
  return "";
}

std::vector<int> treeDepths(const Tree& tree) {
  const std::string problem = verifyTree(tree);
  if (!problem.empty()) throw std::invalid_argument("not a tree: " + problem);
  std::vector<int> depth(tree.parent.size(), 0);
  for (size_t r = 0; r < depth.size(); ++r)
    for (int at = static_cast<int>(r); at != tree.root; at = tree.parent[at]) ++depth[r];
  return depth;
}

Schedule treeSchedule(const Tree& tree, const std::string& topology) {
  const std::vector<int> depth = treeDepths(tree);
  const int n = static_cast<int>(depth.size());
  const int maxDepth = *std::max_element(depth.begin(), depth.end());
  Schedule schedule{topology, n, 1, {}};
  for (int d = maxDepth; d >= 1; --d) {
    Step step;
    for (int r = 0; r < n; ++r)
      if (depth[r] == d) step.transfers.push_back(Transfer{r, tree.parent[r], 0, 1, true});
    schedule.steps.push_back(std::move(step));
  }
  for (int d = 1; d <= maxDepth; ++d) {
    Step step;
    for (int r = 0; r < n; ++r)
      if (depth[r] == d) step.transfers.push_back(Transfer{tree.parent[r], r, 0, 1, false});
    schedule.steps.push_back(std::move(step));
  }
  return schedule;
}

}  // namespace dtbench::comm
