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

// The executor's pipeline segment for a topology when the user chose none (Note [Pipelined
// schedules] in executor.h): 1 MiB for the trees (tree, star, binary-tree-star) and hierarchical,
// whose levels forward a segment while the next one arrives; whole chunks (0) for ring and clique,
// whose steps already move a different chunk each and where, measured over Open MPI's shared
// memory at 2 ranks, segments only added messages (docs/benchmarks.md, "Pipelined point-to-point
// schedules"). 0 for native.
int64_t defaultSegmentBytes(const std::string& topology);

}  // namespace dtbench::comm
