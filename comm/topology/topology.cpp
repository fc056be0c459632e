#include "comm/topology/topology.h"

#include <stdexcept>

#include "comm/topology/clique.h"
#include "comm/topology/hierarchical.h"
#include "comm/topology/ring.h"
#include "comm/topology/tree.h"

namespace dtbench::comm {

const std::vector<std::string>& topologyNames() {
  static const std::vector<std::string> names{"native", "ring",   "tree",        "binary-tree-star",
                                              "star",   "clique", "hierarchical"};
  return names;
}

void checkTopologyName(const std::string& name) {
  for (const std::string& valid : topologyNames())
    if (valid == name) return;
  std::string list;
  for (const std::string& valid : topologyNames()) list += (list.empty() ? "" : ", ") + valid;
  throw std::invalid_argument("unknown topology '" + name + "' (--topology); valid topologies: " + list);
}

Schedule makeSchedule(const std::string& topology, const HostLayout& hosts) {
  checkTopologyName(topology);
  const int n = hosts.worldSize();
  if (n < 1) throw std::invalid_argument("a topology needs at least one rank");
  if (topology == "ring") return ringSchedule(n);
  if (topology == "tree") return treeSchedule(binaryTree(n), topology);
  if (topology == "star") return treeSchedule(starTree(n), topology);
  if (topology == "binary-tree-star") return treeSchedule(binaryTreeStar(hosts), topology);
  if (topology == "clique") return cliqueSchedule(n);
  if (topology == "hierarchical") return hierarchicalSchedule(hosts);
  throw std::invalid_argument("topology 'native' is the backend's own all-reduce and has no schedule");
}

int64_t defaultSegmentBytes(const std::string& topology) {
  checkTopologyName(topology);
  if (topology == "native" || topology == "ring" || topology == "clique") return 0;
  return int64_t{1} << 20;
}

}  // namespace dtbench::comm
