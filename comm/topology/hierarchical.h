#pragma once
// Hierarchical all-reduce: reduce inside each host, all-reduce across the host leaders, broadcast
// inside each host (Horovod's hierarchical all-reduce; the leader is the host's lowest rank).
//
// Schedule, with L hosts and the tensor cut into L chunks:
//   step 0: every non-leader sends its whole tensor to its host's leader, which adds it;
//   then the ring (ring.h) across the L leaders, 2(L-1) steps;
//   last step: every leader sends the whole total to each rank of its host, which overwrites.
// Worked example, 4 ranks, --ranks-per-host 2 (hosts {0,1} {2,3}, leaders 0 and 2, chunks a b):
//   step 0: 1->0, 3->2 (all of it); ring: 0->2 a, 2->0 b (reduce); 2->0 a, 0->2 b (copy);
//   last: 0->1, 2->3 (all of it).
//
// Cost for S bytes and k ranks on a host: a non-leader sends S and receives S (intra-host); a
// leader receives (k-1)·S and sends (k-1)·S inside its host, plus 2(L-1)/L · S each way across
// hosts. Only L leaders touch the network. Invariants tested: cross-host edges are exactly the
// leaders' ring; every intra-host edge touches the host's leader; verifySchedule holds.

#include "comm/topology/hosts.h"
#include "comm/topology/schedule.h"

namespace dtbench::comm {

Schedule hierarchicalSchedule(const HostLayout& hosts);

// The slice that ranks [0, period) send (Schedule::slicePeriod), for hosts of equal size holding
// consecutive ranks (rank r on host r / K), where the Schedule repeats every host; `period` a
// multiple of K that divides the world. Throws std::invalid_argument for other hosts or periods.
Schedule hierarchicalSlice(const HostLayout& hosts, int period);

}  // namespace dtbench::comm
