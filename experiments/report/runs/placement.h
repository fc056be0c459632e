#pragma once
// Placement: the nodes a run's ranks ran on (docs/report.md, "Which runs": nodes), from config.json.
//
//  - nodes = the number of distinct names in `hosts` (every rank's real hostname, which a run of
//    several ranks always lists); 1 for a run of one rank, which lists none; 0 (unknown) when a run
//    of several ranks has no readable hosts list (such a run is left out as damaged anyway).
//  - Ranks grouped with --ranks-per-host K (`hosts_emulated` true) ran on the machines `hosts`
//    names all the same: they count as those nodes (usually one), never as K-rank nodes. The
//    emulated hosts, ⌈N/K⌉ of them, are marked separately, since the topology saw them.
//  - text(): "" on one node with no emulated hosts beyond one (the common case: nothing to say);
//    else "2 nodes × 2 ranks" (uneven: "2 nodes × 1–3 ranks"), "2 emulated hosts × 2 ranks", or
//    both, joined by ", ".
// Worked example: hosts [node1, node1, node2, node2], not emulated: 2 nodes, ranks per node {2, 2},
// "2 nodes × 2 ranks"; hosts [vm, vm, vm, vm] with ranks_per_host 2: 1 node, 2 emulated hosts,
// "2 emulated hosts × 2 ranks".

#include <string>
#include <vector>

#include "experiments/report/runs/run_data.h"

namespace dtbench::report {

struct Placement {
  int nodes = 0;                 // distinct real hosts; 1 for one rank; 0 unknown
  std::vector<int> ranksPerNode;  // per node, nodes in the order of their lowest rank
  int emulatedHosts = 0;         // ⌈N/K⌉ with --ranks-per-host K (hosts_emulated); 0 when not emulated
  int ranksPerEmulatedHost = 0;  // K

  std::string text() const;
};

Placement placementOf(const RunData& run);

// The host names config.json lists, one per rank; empty when it lists none or one is not a string.
std::vector<std::string> hostNames(const RunData& run);

}  // namespace dtbench::report
