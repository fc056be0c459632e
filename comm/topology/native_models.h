#pragma once
// What each backend's own all-reduce (--topology native) is modelled as: the Schedule of dtbench's
// that moves its bytes across hosts the way the backend's algorithm does, and the efficiency its
// simulated time is divided by (a hardware file may set its own: docs/predict.md). Each backend's
// row holds its model (comm/backends/backend.h: BackendRow::native); the functions here turn it into
// Schedules, read alike by the link bound (link_bound.h: Table 3 and `dtbench allreduce`'s bound),
// the step model and the calibration of `dtbench predict`.
//
//   gloo   ring over the ranks: c10d's Gloo all-reduce is Gloo's ring, which knows no hosts, so with
//          K ranks per host a host's link carries a ring edge's 2(N−1)/N × size.
//   mpi    hierarchical (a ring over the hosts) when the world is a power of two, else the ring:
//          dtbench asks Open MPI's libnbc for reduce-scatter + all-gather (algorithm 3), which moved
//          1.22x the ring's bound over 2 nodes × 2 ranks (docs/benchmarks-history.md, "The link bound"), and
//          for the ring (algorithm 1) when the world is not a power of two
//          (comm/backends/mpi_communicator.cpp, Note [Open MPI's non-blocking all-reduce]).
//   nccl   ring over the ranks: NCCL's ring algorithm, its default for large messages. Its messages
//          never wait for the receiver: every connection keeps NCCL_STEPS (8) receive slots posted
//          ahead and returns each as soon as it is consumed, so a step's data leaves when it is ready
//          and a ring step costs one link latency, as NCCL's own cost model counts it
//          (src/graph/tuning.cc: per step, the hop's hardware latency once). Gloo's and Open MPI's
//          larger messages wait for the receiver's notice (a rendezvous), which the network model
//          replays from the executor's walk.

#include <string>

#include "comm/backends/backend.h"
#include "comm/topology/hosts.h"
#include "comm/topology/registry.h"
#include "comm/topology/schedule.h"

namespace dtbench::comm {

// The row's model (comm/backends/backend.h's BackendRow::native).
const NativeModel& nativeModel(Backend backend);

// The topology `backend`'s own all-reduce over `worldSize` ranks is modelled as (ring or hierarchical).
Topology nativeTopology(Backend backend, int worldSize);

// The Schedule that models `backend`'s own all-reduce over `hosts`.
Schedule nativeSchedule(Backend backend, const HostLayout& hosts);

// Its slice of ranks [0, period) (Topology::slice of the ring or hierarchical it is modelled as).
Schedule nativeSlice(Backend backend, const HostLayout& hosts, int period);

}  // namespace dtbench::comm
