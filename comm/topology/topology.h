#pragma once
// The --topology names and the Schedule generator behind each point-to-point one.
//   native            the backend's own all-reduce (no Schedule; the backend picks its algorithm)
//   ring              ring.h            tree, star, binary-tree-star   tree.h
//   clique            clique.h          hierarchical                   hierarchical.h

#include <string>
#include <vector>

#include "comm/topology/hosts.h"
#include "comm/topology/schedule.h"

namespace dtbench::comm {

const std::vector<std::string>& topologyNames();  // native first

// Throws std::invalid_argument naming the valid topologies for an unknown name.
void checkTopologyName(const std::string& name);

// The Schedule of a point-to-point topology. Throws std::invalid_argument for "native" or an
// unknown name. `hosts` must cover the world (only binary-tree-star and hierarchical read it).
Schedule makeSchedule(const std::string& topology, const HostLayout& hosts);

}  // namespace dtbench::comm
