#pragma once
// Flow owners: which rank sent and which received each captured flow, and what kind of connection it
// is, from the sockets every rank listed under --message-log (docs/wire.md, "Reconciliation").
//
// Contract
//   labelFlows(flows, files)  sets every flow's srcRank, dstRank and cls:
//     - a socket of rank a whose local end is the flow's source and remote end its destination makes
//       a the sender; the socket with the two ends swapped names the receiver (sockets listed at
//       start or at the end of the run both count);
//     - `store`: either end is the store's port on rank 0's address. The store's port is the one port
//       of which rank 0's own process holds both ends of a connection (c10d's TCPStore: rank 0 serves
//       and is also a client of itself; the backends never connect a process to itself);
//     - `backend`: both ends are sockets of two different ranks, and not the store;
//     - `slurm`: one end is the cluster's controller (its host is "controller");
//     - `launcher`: both ends are on captured nodes (Slurm's step daemons, PMIx, Open MPI's
//       out-of-band channel, and connections of ranks to anything but a rank);
//     - `other`: everything else (every non-TCP flow, unknown hosts).
//   storePort(files)  the store's port as above; 0 when there is none (a one-rank run, MPI without a
//                     store).

#include <vector>

#include "experiments/capture/message_files.h"
#include "experiments/capture/tcp_streams.h"

namespace dtbench::capture {

int storePort(const MessageFiles& files);
void labelFlows(std::vector<Flow>& flows, const MessageFiles& files);

}  // namespace dtbench::capture
